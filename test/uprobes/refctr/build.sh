#!/usr/bin/env bash
# Build test/uprobes/refctr/refctr.c (a program reading its own uprobe reference
# counter) for x86_64, aarch64 and riscv64: freestanding, static, with clang
# and lld. Run from anywhere; writes test/uprobes/refctr/refctr-ARCH.elf.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=test/uprobes/refctr
SRC=test/userspace/programs
COMMON="-fdebug-prefix-map=$PWD=. -static -nostdlib -ffreestanding -fno-pic -fno-stack-protector -fno-asynchronous-unwind-tables -g -O2 -Wall -Werror -fuse-ld=lld -Wl,--build-id=none -I$SRC"
clang --target=x86_64-linux-gnu $COMMON -mno-sse -mno-mmx test/uprobes/refctr/refctr.c -o $OUT/refctr-x86_64.elf
clang --target=aarch64-linux-gnu $COMMON -mgeneral-regs-only test/uprobes/refctr/refctr.c -o $OUT/refctr-aarch64.elf
clang --target=riscv64-linux-gnu $COMMON -march=rv64gc -mabi=lp64d -mno-relax test/uprobes/refctr/refctr.c -o $OUT/refctr-riscv64.elf
