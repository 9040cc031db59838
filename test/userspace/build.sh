#!/usr/bin/env bash
# Build the user-space conformance programs (the emulator must run them as
# Linux does) for x86_64 and aarch64 with gcc and clang at -O0/-O2, and
# record what qemu-user prints for them (stdout and exit code) as goldens,
# each run in an empty scratch directory (the programs work in ./t).
#   test/userspace/build.sh           build bin/*.elf, write golden/*.out|code
# Needs gcc, clang, lld, aarch64-linux-gnu-gcc (with its glibc), musl-tools, qemu-user.
# qemu-aarch64 on an x86_64 host cannot execve an aarch64 binary (no binfmt
# handler): its golden shows exit 99 where the program re-executes itself;
# the test compares the aarch64 runs with the x86_64 golden, which a Linux
# kernel gives on both arches.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin golden
PROGS="procs"
X86="-static -nostdlib -ffreestanding -fno-pic -no-pie -mno-sse -mno-mmx -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror -Wl,--build-id=none"
A64="-static -nostdlib -ffreestanding -fno-pic -no-pie -mgeneral-regs-only -mno-outline-atomics -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror -Wl,--build-id=none"
# fpstr: floating point and string loops at the compilers' default flags (SSE2 / FP+AdvSIMD, vectorised at -O2/-O3)
X86FP="-static -nostdlib -ffreestanding -fno-pic -no-pie -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror -Wl,--build-id=none"
A64FP="-static -nostdlib -ffreestanding -fno-pic -no-pie -mno-outline-atomics -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror -Wl,--build-id=none"
for opt in O2 O3; do
  gcc $X86FP -$opt -Iprograms programs/fpstr.c -o bin/fpstr-x86_64-gcc-$opt.elf
  clang --target=x86_64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $X86FP -$opt -Iprograms programs/fpstr.c -o bin/fpstr-x86_64-clang-$opt.elf
  aarch64-linux-gnu-gcc $A64FP -$opt -Iprograms programs/fpstr.c -o bin/fpstr-aarch64-gcc-$opt.elf
  clang --target=aarch64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $A64FP -$opt -Iprograms programs/fpstr.c -o bin/fpstr-aarch64-clang-$opt.elf
done
# libc: an ordinary program against the distribution's C library, linked statically at default flags
# (glibc: gcc and clang for x86_64, the cross gcc for aarch64)
gcc -static -O2 -w programs/libc.c -lm -Wl,--build-id=none -o bin/libc-x86_64-gcc-glibc.elf
clang -static -O2 -w programs/libc.c -lm -Wl,--build-id=none -o bin/libc-x86_64-clang-glibc.elf
aarch64-linux-gnu-gcc -static -O2 -w programs/libc.c -lm -Wl,--build-id=none -o bin/libc-aarch64-gcc-glibc.elf
# musl (apt-get install musl-tools): its printf formats floating point with x87 long double
musl-gcc -static -O2 -w programs/libc.c -lm -Wl,--build-id=none -o bin/libc-x86_64-gcc-musl.elf
for prog in $PROGS; do
  for opt in O0 O2; do
    gcc $X86 -$opt -Iprograms programs/$prog.c -o bin/$prog-x86_64-gcc-$opt.elf
    clang --target=x86_64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $X86 -$opt -Iprograms programs/$prog.c -o bin/$prog-x86_64-clang-$opt.elf
    aarch64-linux-gnu-gcc $A64 -$opt -Iprograms programs/$prog.c -o bin/$prog-aarch64-gcc-$opt.elf
    clang --target=aarch64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $A64 -$opt -Iprograms programs/$prog.c -o bin/$prog-aarch64-clang-$opt.elf
  done
done
# edge/limits: memory and signal-mask requests at the edges (no qemu golden: the expected figures are the
# machine's own, its RAM and limits; see test/userspace/limits.test.ts)
mkdir -p bin/edge
gcc $X86 -O2 -Iprograms programs/limits.c -o bin/edge/limits-x86_64.elf
clang --target=aarch64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $A64 -O2 -Iprograms programs/limits.c -o bin/edge/limits-aarch64.elf
clang --target=riscv64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument -static -nostdlib -ffreestanding -fno-pic -no-pie \
  -march=rv64imac -mabi=lp64 -mno-relax -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror -Wl,--build-id=none \
  -O2 -Iprograms programs/limits.c -o bin/edge/limits-riscv64.elf
# edge/userptr: openat/symlinkat with good and bad user pointers (test/userspace/imageSyscalls.test.ts; the expected
# results are Linux's: -EFAULT for an unmapped or a kernel address)
gcc $X86 -O2 -Iprograms programs/userptr.c -o bin/edge/userptr-x86_64.elf
clang --target=aarch64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $A64 -O2 -Iprograms programs/userptr.c -o bin/edge/userptr-aarch64.elf
clang --target=riscv64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument -static -nostdlib -ffreestanding -fno-pic -no-pie \
  -march=rv64imac -mabi=lp64 -mno-relax -fno-stack-protector -fno-asynchronous-unwind-tables -Wall -Werror -Wl,--build-id=none \
  -O2 -Iprograms programs/userptr.c -o bin/edge/userptr-riscv64.elf
# edge/rootfs: a program reading what a fuzzed rootfs and initramfs left (test/userspace/rootfsEdges.test.ts)
gcc $X86 -O2 -Iprograms programs/rootfs.c -o bin/edge/rootfs-x86_64.elf
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for f in bin/*.elf; do
  name=$(basename "$f" .elf)
  case $name in *-aarch64-*) q=qemu-aarch64 ;; *) q=qemu-x86_64 ;; esac
  rm -rf "$scratch"/*
  code=0
  (cd "$scratch" && timeout 60 $q "$OLDPWD/$f") > golden/$name.out || code=$?
  echo $code > golden/$name.code
done
ls -l bin golden
