#!/usr/bin/env bash
# Build the uprobes test program (test/userspace/programs/uprobed.c) for
# x86_64, aarch64 and riscv64 with gcc -O2 and -O0, freestanding and
# static, and record what qemu-user prints for each (stdout, exit code).
# Needs gcc, aarch64-linux-gnu-gcc, riscv64-linux-gnu-gcc, qemu-user.
# (qemu-user cannot execve a foreign-arch binary on this host without
# binfmt: the aarch64 / riscv64 goldens are compared with the x86_64 one.)
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin golden
SRC=../userspace/programs
COMMON="-static -nostdlib -ffreestanding -fno-pic -no-pie -fno-stack-protector -fno-asynchronous-unwind-tables -g -Wall -Werror -Wl,--build-id=none"
for opt in O0 O2; do
  gcc $COMMON -mno-sse -mno-mmx -$opt -I$SRC $SRC/uprobed.c -o bin/uprobed-x86_64-gcc-$opt.elf
  aarch64-linux-gnu-gcc $COMMON -mgeneral-regs-only -mno-outline-atomics -$opt -I$SRC $SRC/uprobed.c -o bin/uprobed-aarch64-gcc-$opt.elf
  riscv64-linux-gnu-gcc $COMMON -march=rv64gc -mabi=lp64d -$opt -I$SRC $SRC/uprobed.c -o bin/uprobed-riscv64-gcc-$opt.elf
done
for f in bin/*.elf; do
  name=$(basename "$f" .elf)
  case $name in *-aarch64-*) q=qemu-aarch64 ;; *-riscv64-*) q=qemu-riscv64 ;; *) q=qemu-x86_64 ;; esac
  code=0
  timeout 60 $q "$f" > golden/$name.out || code=$?
  echo $code > golden/$name.code
done
ls -l bin golden
