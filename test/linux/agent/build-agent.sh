#!/usr/bin/env bash
# Build kprobe-debug's agent module (kprobe_agent.c, the debugger's channel
# into the guest kernel's own kprobes) with Kbuild against Debian's headers
# (test/linux/kbuild/fetch-headers.sh) and the compiler the kernel was built
# with (the headers' CONFIG_CC_VERSION_TEXT), and pack it as a second
# initramfs segment (newc, gzip -n) holding /root/kprobe_agent.ko, given to
# the kernel after the busybox initramfs (Linux unpacks every archive of a
# concatenated initrd into the same rootfs):
#   cat test/linux/cache/initramfs.cpio.gz test/linux/agent/cache/agent.cpio.gz > initrd
# Output: test/linux/agent/cache/{kprobe_agent.ko,agent.cpio.gz}. The build
# directory is named /kbuild/agent in the debug info, so the bytes do not
# depend on where the clone is.
# Missing headers or compiler: says so and exits 0; a failed build: exit 1.
set -uo pipefail
cd "$(dirname "$0")"
me=agent/build-agent.sh
h=../kbuild/cache/headers
[ -f $h/BUILD ] || { echo "$me: no headers (run test/linux/kbuild/fetch-headers.sh)"; exit 0; }
build=../kbuild/$(cat $h/BUILD)
cctext=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$build/.config")
cc=${cctext%% *}
command -v make >/dev/null || { echo "$me: no make"; exit 0; }
command -v "$cc" >/dev/null || { echo "$me: no $cc, the kernel's compiler ($cctext): apt-get install $cc"; exit 0; }
work=cache/build
rm -rf cache && mkdir -p $work
cp kprobe_agent.c Kbuild $work/
abswork=$(realpath $work)
abshdr=$(realpath $h)
if ! make -C "$build" M="$abswork" CC="$cc" \
     KCFLAGS="-ffile-prefix-map=$abswork=/kbuild/agent -ffile-prefix-map=$abshdr/=/" modules > $work/build.log 2>&1; then
  echo "$me: Kbuild failed (test/linux/agent/$work/build.log):"; tail -n 30 $work/build.log; exit 1
fi
cp $work/kprobe_agent.ko cache/
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
cpio_out=$raw cpio_ino=$((0x20000))
. ../cpio-entry.sh
cpio_entry root $((0040755))
cpio_entry root/kprobe_agent.ko $((0100644)) cache/kprobe_agent.ko
cpio_entry TRAILER!!! 0
gzip -n -9 < "$raw" > cache/agent.cpio.gz
echo "$me: kprobe_agent.ko ($cc) -> test/linux/agent/cache/kprobe_agent.ko, agent.cpio.gz"
