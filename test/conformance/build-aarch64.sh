#!/usr/bin/env bash
# Build the conformance programs for aarch64 with clang (--target=aarch64-linux-gnu)
# and aarch64-linux-gnu-gcc at -O0/-O2/-Os (integer only: -mgeneral-regs-only,
# inline LSE atomics: -mno-outline-atomics), check that no FP/SIMD register
# appears, and record qemu-aarch64's stdout and exit status as goldens.
#   test/conformance/build-aarch64.sh            build bin/aarch64/*.elf, write golden/aarch64/*.out|code
#   test/conformance/build-aarch64.sh --verify   no build: rerun the committed ELFs under qemu-aarch64
#                                                and compare them with the goldens
# gcc links libgcc (-lgcc: __paritydi2 for __builtin_parity). bitops-bmi is x86-only; loopbench is built at -O2 by both compilers (golden: loopbench-clang-O2).
# The programs must print what their x86_64 builds print (checked against golden/<prog>-clang-O0).
set -euo pipefail
cd "$(dirname "$0")"
BIN=bin/aarch64
GOLD=golden/aarch64
QEMU="qemu-aarch64 -cpu max" ARCH=aarch64
. ./goldens.sh
if [ "${1:-}" = "--verify" ]; then verify_goldens; fi
PROGS="intops flags control recursion strings bitops exitcode"
COMMON="-static -nostdlib -ffreestanding -fno-pic -no-pie -mgeneral-regs-only -mno-outline-atomics \
  -march=armv8.1-a -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables \
  -Wall -Wextra -Werror -Wno-unused-parameter -Wl,--build-id=none"
mkdir -p $BIN $GOLD
fail() { echo "conformance/build-aarch64.sh: $*" >&2; exit 1; }

build_one() { # prog cc opt out
  local prog=$1 cc=$2 opt=$3 out=$4
  if [ "$cc" = clang ]; then
    clang --target=aarch64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $COMMON -$opt \
      -Iprograms programs/rt.c programs/$prog.c -o "$out"
  else
    aarch64-linux-gnu-gcc $COMMON -$opt -Iprograms programs/rt.c programs/$prog.c -lgcc -o "$out"
  fi
  if llvm-objdump -d --no-show-raw-insn "$out" | grep -Eq '\s(v|q|d|s)[0-9]+(\.|,|$)'; then
    fail "$out uses FP/SIMD registers"
  fi
}

for prog in $PROGS; do
  for cc in clang gcc; do
    for opt in O0 O2 Os; do
      name=$prog-$cc-$opt
      build_one $prog $cc $opt $BIN/$name.elf
      run_one $BIN/$name.elf $GOLD/$name
    done
  done
done
for cc in clang gcc; do build_one loopbench $cc O2 $BIN/loopbench-$cc-O2.elf; done
run_one $BIN/loopbench-clang-O2.elf $GOLD/loopbench-clang-O2
cmp -s $GOLD/loopbench-clang-O2.out <(qemu-aarch64 -cpu max $BIN/loopbench-gcc-O2.elf) \
  || fail "loopbench: gcc and clang builds print different output"

# same source -> same output as the x86_64 build, whatever the compiler or optimisation level
for prog in $PROGS; do
  ref=golden/$prog-clang-O0
  for f in $GOLD/$prog-*.out; do
    cmp -s "$ref.out" "$f" || fail "$f differs from $ref.out"
    cmp -s "$ref.code" "${f%.out}.code" || fail "${f%.out}.code differs from $ref.code"
  done
done
cmp -s golden/loopbench-clang-O2.out $GOLD/loopbench-clang-O2.out || fail "loopbench differs from the x86_64 golden"
du -sh $BIN $GOLD
