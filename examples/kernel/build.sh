#!/usr/bin/env bash
# Build the sample kernel for x86_64, aarch64 and riscv64 with clang + ld.lld,
# check the images, and write build/MANIFEST.sha256 (hashes of every source
# input; test/unit/images-fresh.test.ts compares them with the sources).
#   examples/kernel/build.sh
set -euo pipefail
cd "$(dirname "$0")"
CC=${CC:-clang}
LD=${LD:-ld.lld}
OBJDUMP=${OBJDUMP:-llvm-objdump}
# DWARF paths are relative to the repository root (comp_dir "examples/kernel"),
# so the images do not depend on where the repository was checked out.
ROOT=$(cd ../.. && pwd)
SRCS="main.c lib.c fork.c fs.c net.c test_kprobes.c misc.c usersvc.c open.c trace.c lib/test_lib.c"
# Linux's lib/ helpers (lib/libk.h). On x86_64 these and fork.c (kernel_clone;
# the rest of fork.c is notrace) are built as Linux builds traced code,
# -pg -mfentry: each starts with the 5-byte `call __fentry__` that the
# function tracer and kprobes on ftrace use; the rest of the kernel is built
# without it, so what other code shows at function entry is unchanged.
LIBSRCS="lib/string.c lib/kstrtox.c lib/bitmap.c lib/sort.c lib/rbtree.c lib/math.c lib/crc.c lib/list.c lib/buf.c lib/hash.c lib/parser.c lib/extable.c"
COMMON="-g -O2 -std=gnu11 -ffreestanding -nostdlib -fno-pic -fno-pie -fno-stack-protector \
  -fno-omit-frame-pointer -fno-builtin -fno-asynchronous-unwind-tables -fno-unwind-tables \
  -fdebug-prefix-map=$ROOT/= -Wall -Wextra -Wno-unused-parameter -Werror -I../include"
mkdir -p build obj

for arch in x86_64 aarch64 riscv64; do
  case $arch in
    x86_64)  FLAGS="--target=x86_64-linux-gnu -mcmodel=kernel -mno-red-zone -mno-sse -mno-sse2 -mno-mmx -mno-3dnow -mno-avx" ;;
    aarch64) FLAGS="--target=aarch64-linux-gnu -mgeneral-regs-only -mno-outline-atomics" ;;
    riscv64) FLAGS="--target=riscv64-linux-gnu -march=rv64imac -mabi=lp64 -mcmodel=medany -mno-relax" ;;
  esac
  objs=()
  case $arch in
    x86_64) TRACED="-pg -mfentry" ;;
    *) TRACED="" ;;
  esac
  for s in $SRCS $LIBSRCS; do
    o=obj/$arch-$(tr / - <<<"${s%.c}").o
    case " fork.c $LIBSRCS " in
      *" $s "*) $CC $FLAGS $COMMON $TRACED -c "$s" -o "$o" ;;
      *) $CC $FLAGS $COMMON -c "$s" -o "$o" ;;
    esac
    objs+=("$o")
  done
  $LD -nostdlib -static --no-pie --build-id=none -T kernel-$arch.lds "${objs[@]}" -o build/kernel-$arch.elf
done
rm -rf obj

# --- checks --------------------------------------------------------------
fail() { echo "build.sh: $*" >&2; exit 1; }
dis=$($OBJDUMP -d --no-show-raw-insn build/kernel-x86_64.elf)
if grep -Eq '%(x|y|z)mm[0-9]|%mm[0-9]' <<<"$dis"; then fail "x86_64 image uses SSE/MMX registers"; fi
# syscall_dispatch must dispatch through a jump table: jmpq *ADDR(,%reg,8)
sed -n '/<syscall_dispatch>:/,/^$/p' <<<"$dis" | grep -Eq 'jmpq?[[:space:]]+\*-?(0x)?[0-9a-f]+\(,%r[a-z0-9]+,8\)' \
  || fail "syscall_dispatch has no indirect jump through a table"
# read_boot_counter starts with a RIP-relative access, traced_function with a call
sed -n '/<read_boot_counter>:/{n;p}' <<<"$dis" | grep -q '(%rip)' || fail "read_boot_counter does not start RIP-relative"
sed -n '/<traced_function>:/{n;p}' <<<"$dis" | grep -q 'call' || fail "traced_function does not start with a call"
# -pg -mfentry where build.sh asks for it, and only there
sed -n '/<kernel_clone>:/{n;p}' <<<"$dis" | grep -q 'call.*<__fentry__>' || fail "kernel_clone does not start with call __fentry__"
sed -n '/<kstrtoull>:/{n;p}' <<<"$dis" | grep -q 'call.*<__fentry__>' || fail "lib/kstrtox.c is not built -pg -mfentry"
if sed -n '/<do_fork>:/,/^$/p' <<<"$dis" | grep -q '__fentry__'; then fail "do_fork calls __fentry__ (it is notrace)"; fi
for arch in x86_64 aarch64 riscv64; do
  f=build/kernel-$arch.elf
  sects=$(llvm-readelf -S "$f")
  grep -q ' _kprobe_blacklist ' <<<"$sects" || fail "$f: no _kprobe_blacklist section"
  grep -q ' __ex_table ' <<<"$sects" || fail "$f: no __ex_table section"
  # every /* #BP name */ marker line must have an address in the line table
  lines=$(llvm-dwarfdump --debug-line "$f")
  for s in $SRCS $LIBSRCS; do
    while IFS=: read -r ln rest; do
      name=$(sed -E 's/.*#BP ([A-Za-z0-9_]+).*/\1/' <<<"$rest")
      awk -v l="$ln" -v want="$s" '
        /^debug_line\[/ { split("", names) }
        /^file_names\[/ { idx = $2; sub(/\]:?/, "", idx) }
        /^ *name: "/ { n = $2; gsub(/"/, "", n); names[idx] = n }
        $1 ~ /^0x[0-9a-f]+$/ && NF >= 6 { if ($2 == l && names[$4] == want) found = 1 }
        END { exit !found }' <<<"$lines" \
        || fail "$f: marker #BP $name ($s:$ln) has no code"
      echo "  $arch #BP $name -> $s:$ln"
    done < <(grep -n '#BP ' "$s" || true)
  done
done

# --- manifest: sha256 of every source input, sorted by path ---------------
# (paths relative to examples/; the three images are listed too)
( cd .. && sha256sum include/kprobe_image.h kernel/build.sh kernel/kernel.h kernel/lib/libk.h kernel/*.lds \
    $(for s in $SRCS $LIBSRCS; do echo kernel/$s; done) kernel/build/kernel-*.elf | LC_ALL=C sort -k2 ) > build/MANIFEST.sha256
ls -l build/
