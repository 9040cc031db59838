#!/usr/bin/env bash
# Build the conformance programs for riscv64 (RV64IMAC, LP64) with clang and
# riscv64-linux-gnu-gcc at -O0/-O2/-Os and record qemu-riscv64's stdout and
# exit status as goldens.
#   test/conformance/build-riscv64.sh            build bin/riscv64/*.elf, write golden/riscv64/*.out|code
#   test/conformance/build-riscv64.sh --verify   no build: run the committed ELFs under qemu-riscv64
#                                                and compare with the goldens
# bitops-bmi is an x86 ISA variant and is not built here. loopbench is built at -O2 by both compilers
# (golden: loopbench-clang-O2), for the speed figure.
# -mno-relax: _start does not set up gp, so no gp-relative relaxation. rt.c's
# riscv block has the libgcc helpers gcc calls (libgcc here is lp64d).
set -euo pipefail
cd "$(dirname "$0")"
BIN=bin/riscv64 GOLD=golden/riscv64
QEMU="qemu-riscv64" ARCH=riscv64
. ./goldens.sh
if [ "${1:-}" = "--verify" ]; then verify_goldens; fi
PROGS="intops flags control recursion strings bitops exitcode"
COMMON="-static -nostdlib -ffreestanding -fno-pic -no-pie -march=rv64imac -mabi=lp64 -mno-relax \
  -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables -Wall -Wextra -Werror \
  -Wno-unused-parameter -Wl,--build-id=none"
mkdir -p $BIN $GOLD
fail() { echo "conformance/build-riscv64.sh: $*" >&2; exit 1; }

build_one() { # prog cc opt out
  local prog=$1 cc=$2 opt=$3 out=$4
  if [ "$cc" = clang ]; then
    clang --target=riscv64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $COMMON -$opt -Iprograms programs/rt.c programs/$prog.c -o "$out"
  else
    riscv64-linux-gnu-gcc $COMMON -$opt -Iprograms programs/rt.c programs/$prog.c -o "$out"
  fi
  # RV64IMAC only: no floating-point register may appear
  if llvm-objdump -d --no-show-raw-insn "$out" | grep -Eq '\bf(s|t|a)[0-9]+\b|\bfcsr\b'; then
    fail "$out uses floating-point registers"
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
# fpops: the F/D unit (rv64gc, lp64d) against qemu-riscv64, bit for bit, every rounding mode and flag
FPFLAGS="-static -nostdlib -ffreestanding -fno-pic -no-pie -march=rv64gc -mabi=lp64d -mno-relax \
  -fno-stack-protector -fno-asynchronous-unwind-tables -fno-unwind-tables -Wall -Wextra -Werror \
  -Wno-unused-parameter -Wl,--build-id=none"
for cc in clang gcc; do
  for opt in O0 O2; do
    out=$BIN/fpops-$cc-$opt.elf
    if [ "$cc" = clang ]; then
      clang --target=riscv64-linux-gnu -fuse-ld=lld -Wno-unused-command-line-argument $FPFLAGS -$opt -Iprograms programs/rt.c programs/fpops.c -o "$out"
    else
      riscv64-linux-gnu-gcc $FPFLAGS -$opt -Iprograms programs/rt.c programs/fpops.c -o "$out"
    fi
    run_one "$out" $GOLD/fpops-$cc-$opt
  done
done
# the instruction tables are the same whatever the compiler; the C section may differ (fused multiply-add contraction at -O2)
for f in $GOLD/fpops-*.out; do
  cmp -s <(grep -v '^c-code' $GOLD/fpops-clang-O0.out) <(grep -v '^c-code' "$f") || fail "$f differs from fpops-clang-O0.out"
done

for cc in clang gcc; do build_one loopbench $cc O2 $BIN/loopbench-$cc-O2.elf; done
run_one $BIN/loopbench-clang-O2.elf $GOLD/loopbench-clang-O2
cmp -s $GOLD/loopbench-clang-O2.out <(qemu-riscv64 $BIN/loopbench-gcc-O2.elf) \
  || fail "loopbench: gcc and clang builds print different output"

# same source -> same output, whatever the compiler or optimisation level, and the same as x86_64's goldens
for prog in $PROGS; do
  ref=$GOLD/$prog-clang-O0
  for f in $GOLD/$prog-*.out; do
    cmp -s "$ref.out" "$f" || fail "$f differs from $ref.out"
    cmp -s "$ref.code" "${f%.out}.code" || fail "${f%.out}.code differs from $ref.code"
  done
  cmp -s "$ref.out" golden/$prog-clang-O0.out || echo "note: $prog prints differently on riscv64 than on x86_64"
done
du -sh $BIN $GOLD
