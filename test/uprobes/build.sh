#!/usr/bin/env bash
# Build the uprobes test program (test/userspace/programs/uprobed.c) for
# x86_64, aarch64 and riscv64 with gcc -O2 and -O0, freestanding and
# static, and record what qemu-user prints for each (stdout, exit code).
# Needs gcc, aarch64-linux-gnu-gcc, riscv64-linux-gnu-gcc, qemu-user.
# (qemu-user cannot execve a foreign-arch binary on this host without
# binfmt: the aarch64 / riscv64 goldens are compared with the x86_64 one.)
set -euo pipefail
# built from the repository root with the build directory mapped to ".": the DWARF
# names test/userspace/programs/uprobed.c relative to the checkout, wherever it is
cd "$(dirname "$0")/../.."
OUT=test/uprobes
mkdir -p $OUT/bin $OUT/golden
SRC=test/userspace/programs
COMMON="-fdebug-prefix-map=$PWD=. -static -nostdlib -ffreestanding -fno-pic -no-pie -fno-stack-protector -fno-asynchronous-unwind-tables -g -Wall -Werror -Wl,--build-id=none"
for opt in O0 O2; do
  gcc $COMMON -mno-sse -mno-mmx -$opt -I$SRC $SRC/uprobed.c -o $OUT/bin/uprobed-x86_64-gcc-$opt.elf
  aarch64-linux-gnu-gcc $COMMON -mgeneral-regs-only -mno-outline-atomics -$opt -I$SRC $SRC/uprobed.c -o $OUT/bin/uprobed-aarch64-gcc-$opt.elf
  riscv64-linux-gnu-gcc $COMMON -march=rv64gc -mabi=lp64d -$opt -I$SRC $SRC/uprobed.c -o $OUT/bin/uprobed-riscv64-gcc-$opt.elf
done
for f in $OUT/bin/*.elf; do
  name=$(basename "$f" .elf)
  case $name in *-aarch64-*) q=qemu-aarch64 ;; *-riscv64-*) q=qemu-riscv64 ;; *) q=qemu-x86_64 ;; esac
  code=0
  timeout 60 $q "$f" > $OUT/golden/$name.out || code=$?
  echo $code > $OUT/golden/$name.code
done
ls -l $OUT/bin $OUT/golden
