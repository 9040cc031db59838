#!/usr/bin/env bash
# Build the example modules for the sample kernel: relocatable objects
# (.ko) compiled freestanding against examples/include for x86_64, aarch64 and riscv64,
# from the repository root with its path mapped to "." so that the DWARF
# names examples/modules/*.c wherever the checkout is. Needs clang.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p examples/modules/build
for m in kprobe_example kretprobe_example jprobe_example test_kprobes kwatch_example fast_kprobe_example; do
  clang --target=x86_64-linux-gnu -c -O2 -ffreestanding -fno-pic -fno-stack-protector -mcmodel=kernel -mno-red-zone \
    -fno-common -fno-asynchronous-unwind-tables -g -fdebug-prefix-map="$PWD"=. -Iexamples/include \
    examples/modules/$m.c -o examples/modules/build/$m-x86_64.ko
  clang --target=aarch64-linux-gnu -c -O2 -ffreestanding -fno-pic -fno-stack-protector -mgeneral-regs-only \
    -fno-common -fno-asynchronous-unwind-tables -g -fdebug-prefix-map="$PWD"=. -Iexamples/include \
    examples/modules/$m.c -o examples/modules/build/$m-aarch64.ko
  clang --target=riscv64-linux-gnu -march=rv64gc -mabi=lp64d -mcmodel=medany -mno-relax -c -O2 -ffreestanding -fno-pic \
    -fno-stack-protector -fno-common -fno-asynchronous-unwind-tables -g -fdebug-prefix-map="$PWD"=. -Iexamples/include \
    examples/modules/$m.c -o examples/modules/build/$m-riscv64.ko
done
ls -l examples/modules/build
