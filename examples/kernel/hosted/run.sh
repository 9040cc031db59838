#!/usr/bin/env bash
# Build the sample kernel's C sources as hosted programs for x86_64, aarch64 and
# riscv64, run them under qemu-user and check that all three print the same
# lines (the banner names the arch). Prints the x86_64 output.
#   examples/kernel/hosted/run.sh
set -euo pipefail
cd "$(dirname "$0")"
K=..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for a in "x86_64:-mno-sse" "aarch64:-mgeneral-regs-only -mno-outline-atomics" \
         "riscv64:-march=rv64imac -mabi=lp64 -mno-relax"; do
  arch=${a%%:*}
  flags=${a#*:}
  # shellcheck disable=SC2086
  clang --target=$arch-linux-gnu $flags -O2 -ffreestanding -nostdlib -static -fno-pic -fno-pie \
    -fno-builtin -fno-stack-protector -fuse-ld=lld -Wno-unused-command-line-argument \
    -I$K/../include -DKP_HYPERCALL_HOOK=host_hc host.c \
    $K/main.c $K/lib.c $K/fork.c $K/fs.c $K/net.c $K/test_kprobes.c $K/misc.c $K/usersvc.c $K/open.c $K/trace.c -o "$tmp/$arch.elf"
  timeout 60 "qemu-$arch" "$tmp/$arch.elf" > "$tmp/$arch.out"
done
for arch in aarch64 riscv64; do
  diff <(sed 1d "$tmp/x86_64.out") <(sed 1d "$tmp/$arch.out") >&2 || { echo "run.sh: $arch output differs" >&2; exit 1; }
done
cat "$tmp/x86_64.out"
