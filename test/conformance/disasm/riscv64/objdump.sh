#!/usr/bin/env bash
# Regenerate the llvm-objdump goldens the riscv64 disassembler is compared
# with (test/unit/arch/riscv64-disasm.test.ts): the sample kernel and the
# differential programs, `llvm-objdump -d` default output, and the F/D
# instruction listing fp-insns.s.
set -euo pipefail
cd "$(dirname "$0")"
root=../../../..
llvm-objdump -d "$root/examples/kernel/build/kernel-riscv64.elf" | sed 1,2d > kernel-riscv64.objdump
for p in ../../bin/riscv64/*-O2.elf ../../bin/riscv64/*-Os.elf; do
  llvm-objdump -d "$p" | sed 1,2d > "$(basename "$p" .elf).objdump"
done
# every F/D instruction form and the compressed D loads/stores (fp-insns.s, assembled by llvm-mc)
obj=$(mktemp --suffix=.o)
llvm-mc --triple=riscv64 -mattr=+d,+c -filetype=obj fp-insns.s -o "$obj"
llvm-objdump -d --mattr=+d,+c "$obj" | sed 1,2d > fp-insns.objdump
rm -f "$obj"
du -sh .
