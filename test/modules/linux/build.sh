#!/usr/bin/env bash
# Build Linux's lib/test_kprobes.c (fetched by fetch-test-kprobes.sh into
# cache/linux-source-<series>/) as a module of the sample kernel for x86_64,
# aarch64 and riscv64, against examples/include (<kunit/test.h> is the
# project's minimal KUnit), and, where the series has them (6.1),
# samples/kprobes/kprobe_example.c and kretprobe_example.c, unmodified,
# with the headers' Kbuild-like Makefile:
#   make -C examples/include M=<samples/kprobes> MO=<out> ARCH=<arch> CONFIG_SAMPLE_KPROBES=m CONFIG_SAMPLE_KRETPROBES=m
# The objects derive from Linux's source and from this checkout's headers,
# so they stay beside this script, git-ignored (not in the cache, which
# only holds what was fetched):
#   build/linux-source-<series>/lib/test_kprobes.c     the source as compiled (see PATCH)
#   build/linux-source-<series>/<arch>/test_kprobes.ko the module
#   build/linux-source-<series>/samples/<arch>/{kprobe,kretprobe}_example.ko
#
#   test/modules/linux/build.sh           every fetched series (fetches the default ones when none is)
#   test/modules/linux/build.sh 6.12      one series
#
# The flags are examples/modules/build.sh's, plus what Linux's kbuild gives
# a module: -DKBUILD_MODNAME; -fno-delete-null-pointer-checks and
# -fno-strict-aliasing (Linux's top Makefile: without the first, clang sees
# that the file's function pointers, e.g. `target`, are only ever set to
# one function, calls that function directly, finds it has no side effects
# and deletes the calls: kprobe_target would never run); and the
# configuration's choices
# CONFIG_KPROBES_SANITY_TEST=m (-DCONFIG_KPROBES_SANITY_TEST_MODULE=1: the
# file's IS_MODULE() checks) and CONFIG_FRAME_POINTER=y
# (-fno-omit-frame-pointer, as arm64 and riscv kernels always build and x86
# builds with the frame-pointer unwinder: stack_trace_save() follows the
# frame records through module code, which has no unwind tables here).
# It compiles from the source root as lib/test_kprobes.c, so __FILE__ in
# KUnit's failure lines reads as in Linux.
#
# PATCH, the one change made to the file: its kprobes name their targets
# "test_kprobes:<symbol>" (the module:symbol form Linux's
# kallsyms_lookup_name() resolves in that module only) instead of
# "<symbol>", because the sample kernel has global functions of the same
# names (examples/kernel/test_kprobes.c, the targets of the engine's own
# port of these tests) and a plain name resolves to the kernel's first, as
# in Linux. The build stops if the patch does not apply to every
# symbol_name of the file.
# Needs clang, and ld.lld for the samples (Debian: apt-get install clang lld).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
include="$root/examples/include"
series=("$@")
if [ ${#series[@]} -eq 0 ]; then
  for d in "$here"/cache/linux-source-*/; do [ -f "$d/lib/test_kprobes.c" ] && series+=("${d%/}"); done
  if [ ${#series[@]} -eq 0 ]; then
    bash "$here/fetch-test-kprobes.sh"
    for d in "$here"/cache/linux-source-*/; do [ -f "$d/lib/test_kprobes.c" ] && series+=("${d%/}"); done
  fi
  series=("${series[@]##*/linux-source-}")
fi
if [ ${#series[@]} -eq 0 ]; then
  echo "build.sh: no lib/test_kprobes.c fetched: run test/modules/linux/fetch-test-kprobes.sh (Debian's linux-source) first" >&2
  exit 1
fi
command -v clang >/dev/null || { echo "build.sh: clang is needed (apt-get install clang)" >&2; exit 1; }
for s in "${series[@]}"; do
  src="$here/cache/linux-source-$s"
  if [ ! -f "$src/lib/test_kprobes.c" ]; then
    echo "build.sh: $src/lib/test_kprobes.c is missing: run test/modules/linux/fetch-test-kprobes.sh $s" >&2
    exit 1
  fi
  out="$here/build/linux-source-$s"
  rm -rf "$out" && mkdir -p "$out/lib"
  sed -E 's/(symbol_name[[:space:]]*=[[:space:]]*")/\1test_kprobes:/' "$src/lib/test_kprobes.c" > "$out/lib/test_kprobes.c"
  names=$(grep -c 'symbol_name[[:space:]]*=' "$src/lib/test_kprobes.c" || true)
  patched=$(grep -c 'symbol_name[[:space:]]*=[[:space:]]*"test_kprobes:' "$out/lib/test_kprobes.c" || true)
  if [ "$names" -eq 0 ] || [ "$names" != "$patched" ]; then
    echo "build.sh: linux-source-$s: $patched of $names symbol_name initializers patched: the file changed shape" >&2
    exit 1
  fi
  common=(-c -O2 -ffreestanding -fno-pic -fno-stack-protector -fno-common -fno-asynchronous-unwind-tables -g
    -fno-omit-frame-pointer -fno-delete-null-pointer-checks -fno-strict-aliasing -fdebug-prefix-map="$out"=. -I"$include"
    -DKBUILD_MODNAME='"test_kprobes"' -DCONFIG_KPROBES_SANITY_TEST_MODULE=1)
  for arch in x86_64 aarch64 riscv64; do
    mkdir -p "$out/$arch"
    case $arch in
      x86_64) flags=(--target=x86_64-linux-gnu -mcmodel=kernel -mno-red-zone) ;;
      aarch64) flags=(--target=aarch64-linux-gnu -mgeneral-regs-only) ;;
      riscv64) flags=(--target=riscv64-linux-gnu -march=rv64gc -mabi=lp64d -mcmodel=medany -mno-relax) ;;
    esac
    (cd "$out" && clang "${flags[@]}" "${common[@]}" lib/test_kprobes.c -o "$arch/test_kprobes.ko")
  done
  if [ -d "$src/samples/kprobes" ] && ! command -v ld.lld >/dev/null; then
    echo "build.sh: linux-source-$s: samples/kprobes not built: ld.lld is needed (apt-get install lld)" >&2
  elif [ -d "$src/samples/kprobes" ]; then
    for arch in x86_64 aarch64 riscv64; do
      make -s -C "$include" M="$src/samples/kprobes" MO="$out/samples/$arch" ARCH=$arch \
        CONFIG_SAMPLE_KPROBES=m CONFIG_SAMPLE_KRETPROBES=m
      # samples/trace_printk: the module ftracetest's kprobe_module.tc modprobes
      if [ -d "$src/samples/trace_printk" ]; then
        make -s -C "$include" M="$src/samples/trace_printk" MO="$out/samples/$arch" ARCH=$arch CONFIG_SAMPLE_TRACE_PRINTK=m
      fi
    done
  fi
  echo "build.sh: linux-source-$s ($(cat "$src/VERSION" 2>/dev/null || echo '?')): $(cd "$out" && ls */test_kprobes.ko samples/*/*.ko 2>/dev/null | tr '\n' ' ')"
done
