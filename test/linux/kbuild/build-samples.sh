#!/usr/bin/env bash
# Build Linux's own kprobes samples, samples/kprobes/kprobe_example.c and
# kretprobe_example.c from Debian's linux-source-6.1 (fetched by
# test/modules/linux/fetch-test-kprobes.sh), as modules Debian's kernel accepts:
# Kbuild from Debian's headers (test/linux/kbuild/fetch-headers.sh) and the
# compiler the kernel was built with (the headers' CONFIG_CC_VERSION_TEXT:
# Debian's gcc-12). The samples directory is copied unmodified (its Makefile
# too) and built with the two CONFIG_SAMPLE_* symbols Debian's config leaves
# unset given on the command line:
#   make -C cache/headers/lib/modules/<release>/build M=cache/build/kprobes \
#        CC=gcc-12 CONFIG_SAMPLE_KPROBES=m CONFIG_SAMPLE_KRETPROBES=m modules
# In the debug info the build directory is /kbuild/samples/kprobes and the
# headers are /usr/src/... (where Debian installs them), so the .ko bytes do
# not depend on where the clone is.
# Output: test/linux/kbuild/cache/modules/{kprobe_example,kretprobe_example}.ko
# and their vermagic in cache/modules/VERMAGIC, checked against the vermagic of
# a module Debian built for the same kernel when test/linux/fetch-kernel.sh
# fetched it (LINUX_CACHE=DIR for another test/linux/cache).
# Missing inputs or tools: says so and exits 0; a vermagic mismatch or a
# failed build: exit 1.
set -uo pipefail
cd "$(dirname "$0")"
me=kbuild/build-samples.sh
linux=${LINUX_CACHE:-../cache}
h=cache/headers
[ -f $h/BUILD ] || { echo "$me: no headers (run test/linux/kbuild/fetch-headers.sh)"; exit 0; }
release=$(cat $h/RELEASE) version=$(cat $h/VERSION)
build=$(cat $h/BUILD)
samples=../../modules/linux/cache/linux-source-6.1/samples/kprobes
[ -f "$samples/kprobe_example.c" ] || { echo "$me: no test/modules/linux/cache/linux-source-6.1 (run test/modules/linux/fetch-test-kprobes.sh 6.1)"; exit 0; }
src=$(cat ../../modules/linux/cache/linux-source-6.1/VERSION 2>/dev/null || echo '?')
[ "$src" = "$version" ] || echo "$me: note: the samples are from linux-source-6.1 $src, the headers are $version"
# the kernel's compiler: CONFIG_CC_VERSION_TEXT="gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0"
cctext=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$build/.config")
cc=${cctext%% *}
command -v make >/dev/null || { echo "$me: no make"; exit 0; }
command -v "$cc" >/dev/null || { echo "$me: no $cc, the kernel's compiler ($cctext): apt-get install $cc"; exit 0; }
have=$("$cc" --version | head -n 1)
[ "$have" = "$cctext" ] || echo "$me: note: the kernel was built with '$cctext', this is '$have'"
start=$(date +%s.%N)
work=cache/build/kprobes
rm -rf cache/build cache/modules && mkdir -p cache/build cache/modules
cp -r "$samples" "$work"
abswork=$(realpath "$work")
abshdr=$(realpath $h)
if ! make -C "$build" M="$abswork" CC="$cc" \
     KCFLAGS="-ffile-prefix-map=$abswork=/kbuild/samples/kprobes -ffile-prefix-map=$abshdr/=/" \
     CONFIG_SAMPLE_KPROBES=m CONFIG_SAMPLE_KRETPROBES=m modules > cache/build/build.log 2>&1; then
  echo "$me: Kbuild failed (test/linux/kbuild/cache/build/build.log):"; tail -n 20 cache/build/build.log; exit 1
fi
secs=$(echo "$(date +%s.%N) - $start" | bc)
# vermagic=... from a module's .modinfo (NUL-separated key=value strings)
vermagic() { objcopy -O binary --only-section=.modinfo "$1" /dev/stdout 2>/dev/null | tr '\0' '\n' | sed -n 's/^vermagic=//p'; }
want=
ref=$(find "$linux/kernel/lib/modules/$release/kernel" -name '*.ko' 2>/dev/null | LC_ALL=C sort | head -n 1)
[ -n "$ref" ] && want=$(vermagic "$ref")
for m in kprobe_example kretprobe_example; do
  cp "$work/$m.ko" cache/modules/
  got=$(vermagic "cache/modules/$m.ko")
  if [ -n "$want" ] && [ "$got" != "$want" ]; then
    echo "$me: $m.ko vermagic '$got' is not the kernel's '$want' (${ref#"$linux/"})"; exit 1
  fi
done
echo "$got" > cache/modules/VERMAGIC
echo "$me: kprobe_example.ko, kretprobe_example.ko ($cc, vermagic '$got'$([ -n "$want" ] && echo ", the kernel's")) -> test/linux/kbuild/cache/modules ($secs s)"
