#!/usr/bin/env bash
# Build the pt_regs test module (ptregs_probe.c) for the sample kernel's three
# arches, as examples/modules/build.sh builds the example modules. Needs clang.
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=test/unit/g4-ptregs
COMMON="-c -O2 -ffreestanding -fno-pic -fno-stack-protector -fno-common -fno-asynchronous-unwind-tables -Iexamples/include"
clang --target=x86_64-linux-gnu $COMMON -mcmodel=kernel -mno-red-zone $D/ptregs_probe.c -o $D/ptregs_probe-x86_64.ko
clang --target=aarch64-linux-gnu $COMMON -mgeneral-regs-only $D/ptregs_probe.c -o $D/ptregs_probe-aarch64.ko
clang --target=riscv64-linux-gnu -march=rv64gc -mabi=lp64d -mcmodel=medany -mno-relax $COMMON $D/ptregs_probe.c -o $D/ptregs_probe-riscv64.ko
