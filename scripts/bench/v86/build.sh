#!/usr/bin/env bash
# Build the v86 peer image of the bench's loopbench: the same C
# (test/conformance/programs/loopbench.c) as the x86_64 conformance build,
# for 32-bit x86 (v86 has no long mode) as a multiboot kernel that prints to
# the serial port (rt.c here). Its output must equal the x86_64 golden
# (test/conformance/golden/loopbench-clang-O2.out): the same work. Needs
# clang and lld (Debian packages clang, lld); the image is committed.
set -euo pipefail
cd "$(dirname "$0")"
PROGS=../../../test/conformance/programs
# the conformance runtime's header (its i386 branch), this directory's rt.c
FLAGS="--target=i386-unknown-none-elf -ffreestanding -fno-pic -fno-stack-protector -mno-sse -mno-mmx -O2 -Wall -Wextra -Werror -I$PROGS"
clang $FLAGS -c rt.c -o /tmp/v86-rt.o
clang $FLAGS -c $PROGS/loopbench.c -o /tmp/v86-loopbench.o
ld.lld -m elf_i386 -T link.ld --build-id=none -o loopbench-i386.elf /tmp/v86-rt.o /tmp/v86-loopbench.o
rm -f /tmp/v86-rt.o /tmp/v86-loopbench.o
echo "built $(pwd)/loopbench-i386.elf"
