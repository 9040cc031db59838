#!/usr/bin/env bash
# Build the module ftracetest's kprobe_module.tc probes: Linux's
# samples/trace_printk/trace-printk.c from Debian's linux-source-6.1
# (fetched by test/modules/linux/fetch-test-kprobes.sh), unmodified, with
# Kbuild from Debian's headers (test/linux/kbuild/fetch-headers.sh) and the
# kernel's own compiler, as test/linux/kbuild/build-samples.sh builds the
# kprobes samples. Debian's kernel is built without CONFIG_SAMPLES, so its
# package has no trace-printk.ko and the case is UNRESOLVED without this;
# the symbol the sample's Makefile asks for is given on the command line:
#   make -C <headers>/build M=<copy of samples/trace_printk> CC=gcc-12 CONFIG_SAMPLE_TRACE_PRINTK=m modules
# Output: test/linux/ftrace/cache/trace-printk.ko (make-initramfs.sh puts it
# in /lib/modules/<release>/ with a modules.dep, so `modprobe trace-printk`
# finds it), its vermagic checked against a module Debian built for the kernel.
# Missing inputs or tools: says so and exits 0; a failed build or a vermagic
# mismatch: exit 1.
set -uo pipefail
cd "$(dirname "$0")"
me=ftrace/build-trace-printk.sh
h=../kbuild/cache/headers
[ -f $h/BUILD ] || { echo "$me: no headers (run test/linux/kbuild/fetch-headers.sh)"; exit 0; }
release=$(cat $h/RELEASE)
build=$(cat $h/BUILD)
case "$build" in /*) ;; *) build="../kbuild/$build" ;; esac
src=../../modules/linux/cache/linux-source-6.1/samples/trace_printk
[ -f "$src/trace-printk.c" ] || { echo "$me: no test/modules/linux/cache/linux-source-6.1 (run test/modules/linux/fetch-test-kprobes.sh 6.1)"; exit 0; }
cctext=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$build/.config")
cc=${cctext%% *}
command -v make >/dev/null || { echo "$me: no make"; exit 0; }
command -v "$cc" >/dev/null || { echo "$me: no $cc, the kernel's compiler ($cctext): apt-get install $cc"; exit 0; }
start=$(date +%s.%N)
rm -rf cache/build && mkdir -p cache/build
work=cache/build/trace_printk
cp -r "$src" "$work"
abswork=$(realpath "$work")
abshdr=$(realpath $h)
if ! make -C "$build" M="$abswork" CC="$cc" \
     KCFLAGS="-ffile-prefix-map=$abswork=/kbuild/samples/trace_printk -ffile-prefix-map=$abshdr/=/" \
     CONFIG_SAMPLE_TRACE_PRINTK=m modules > cache/build/build.log 2>&1; then
  echo "$me: Kbuild failed (test/linux/ftrace/cache/build/build.log):"; tail -n 20 cache/build/build.log; exit 1
fi
vermagic() { objcopy -O binary --only-section=.modinfo "$1" /dev/stdout 2>/dev/null | tr '\0' '\n' | sed -n 's/^vermagic=//p'; }
got=$(vermagic "$work/trace-printk.ko")
ref=$(find "../cache/kernel/lib/modules/$release/kernel" -name '*.ko' 2>/dev/null | LC_ALL=C sort | head -n 1)
if [ -n "$ref" ] && [ "$got" != "$(vermagic "$ref")" ]; then
  echo "$me: trace-printk.ko vermagic '$got' is not the kernel's '$(vermagic "$ref")'"; exit 1
fi
cp "$work/trace-printk.ko" cache/trace-printk.ko
echo "$release" > cache/RELEASE
echo "$me: trace-printk.ko ($cc, vermagic '$got') -> test/linux/ftrace/cache ($(echo "$(date +%s.%N) - $start" | bc) s)"
