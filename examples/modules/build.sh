#!/usr/bin/env bash
# Build the example modules for the sample kernel: relocatable objects
# (.ko) compiled freestanding against examples/include (x86_64 for now).
# Needs clang.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
for m in kprobe_example kretprobe_example jprobe_example; do
  clang --target=x86_64-linux-gnu -c -O2 -ffreestanding -fno-pic -fno-stack-protector -mcmodel=kernel -mno-red-zone \
    -fno-common -fno-asynchronous-unwind-tables -g -I../include $m.c -o build/$m-x86_64.ko
done
ls -l build
