#!/usr/bin/env bash
# Build the x86_64 conformance programs with clang and gcc at -O0/-O2/-Os,
# check that no SSE/MMX register appears, and record qemu-x86_64's stdout and
# exit status as goldens.
#   test/conformance/build.sh            build bin/*.elf and write golden/*.out|code
#   test/conformance/build.sh --verify   no build: run the committed bin/*.elf under
#                                        qemu-x86_64 and compare with the goldens
# Outputs: bin/<prog>-<clang|gcc>-<O0|O2|Os>.elf, golden/<same>.out (stdout bytes)
# and golden/<same>.code (exit status). bitops-bmi is bitops.c built with
# -mpopcnt -mlzcnt -mbmi. loopbench (~211 million instructions at clang -O2) is
# built at -O2 by both compilers; its golden is loopbench-clang-O2.
set -euo pipefail
cd "$(dirname "$0")"
BIN=bin GOLD=golden QEMU="qemu-x86_64" ARCH=x86_64
. ./goldens.sh
if [ "${1:-}" = "--verify" ]; then verify_goldens; fi
PROGS="intops flags control recursion strings bitops bitops-bmi exitcode"
COMMON="-static -nostdlib -ffreestanding -fno-pic -no-pie -mno-sse -mno-sse2 -mno-mmx -mno-3dnow \
  -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables -Wall -Wextra -Werror \
  -Wno-unused-parameter -Wl,--build-id=none"
mkdir -p bin golden
fail() { echo "conformance/build.sh: $*" >&2; exit 1; }

build_one() { # prog cc opt out
  local prog=$1 cc=$2 opt=$3 out=$4 src=$1 extra=""
  case $prog in
    bitops-bmi) src=bitops; extra="-mpopcnt -mlzcnt -mbmi" ;;
  esac
  local ccbin=clang
  [ "$cc" = gcc ] && ccbin=gcc
  [ "$cc" = clang ] && extra="$extra --target=x86_64-linux-gnu -Wno-unused-command-line-argument"
  $ccbin $COMMON $extra -$opt -Iprograms programs/rt.c programs/$src.c -o "$out"
  if llvm-objdump -d --no-show-raw-insn "$out" | grep -Eq '%(x|y|z)mm[0-9]|%mm[0-9]'; then
    fail "$out uses SSE/MMX registers"
  fi
}

for prog in $PROGS; do
  for cc in clang gcc; do
    for opt in O0 O2 Os; do
      name=$prog-$cc-$opt
      build_one $prog $cc $opt bin/$name.elf
      run_one bin/$name.elf golden/$name
    done
  done
done
# the benchmark: one build per compiler at -O2, one golden
for cc in clang gcc; do build_one loopbench $cc O2 bin/loopbench-$cc-O2.elf; done
run_one bin/loopbench-clang-O2.elf golden/loopbench-clang-O2
cmp -s golden/loopbench-clang-O2.out <(qemu-x86_64 bin/loopbench-gcc-O2.elf) \
  || fail "loopbench: gcc and clang builds print different output"

# same source -> same output, whatever the compiler or optimisation level
for prog in $PROGS; do
  ref=golden/$prog-clang-O0
  for f in golden/$prog-*.out; do
    cmp -s "$ref.out" "$f" || fail "$f differs from $ref.out"
    cmp -s "$ref.code" "${f%.out}.code" || fail "${f%.out}.code differs from $ref.code"
  done
done
cmp -s golden/bitops-clang-O0.out golden/bitops-bmi-clang-O0.out || fail "bitops and bitops-bmi differ"
du -sh bin golden
