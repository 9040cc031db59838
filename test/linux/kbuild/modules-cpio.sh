#!/usr/bin/env bash
# A second initramfs segment holding the kprobes sample modules built by
# test/linux/kbuild/build-samples.sh, to be given to the kernel after the
# busybox initramfs (test/linux/make-initramfs.sh): Linux unpacks every cpio
# archive of a concatenated initrd into the same rootfs, compressed or not,
# so the modules are added without rebuilding the first archive:
#   cat test/linux/cache/initramfs.cpio.gz test/linux/kbuild/cache/samples.cpio.gz > initrd
# Contents (newc, gzip -n -9):
#   lib/ lib/modules/ lib/modules/samples/     directories (0755; mkdir of an existing one is a no-op)
#   lib/modules/samples/kprobe_example.ko      0644
#   lib/modules/samples/kretprobe_example.ko   0644
# Written by this script (no cpio program), entries in C-locale order, owner
# 0:0, mtime 0, fixed inode numbers, nlink 1: the same .ko files give the same bytes.
#   test/linux/kbuild/modules-cpio.sh          -> test/linux/kbuild/cache/samples.cpio.gz
#   test/linux/kbuild/modules-cpio.sh OUT      -> OUT
# Without the modules: says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")"
me=kbuild/modules-cpio.sh
mods=cache/modules
out=${1:-cache/samples.cpio.gz}
if [ ! -f $mods/kprobe_example.ko ] || [ ! -f $mods/kretprobe_example.ko ]; then
  echo "$me: no $mods/*.ko (run test/linux/kbuild/build-samples.sh): skipping"; exit 0
fi
mkdir -p "$(dirname "$out")"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
# inode numbers far from the first archive's small ones (not required by Linux: nlink 1 entries
# are never linked to each other; only keeps the two archives' numbers apart for a reader)
cpio_out=$raw cpio_ino=$((0x10000))
. ../cpio-entry.sh
for d in lib lib/modules lib/modules/samples; do cpio_entry "$d" $((0040755)); done
while IFS= read -r ko; do
  cpio_entry "lib/modules/samples/$ko" $((0100644)) "$mods/$ko"
done < <(cd $mods && ls -1 -- *.ko | LC_ALL=C sort)
cpio_entry 'TRAILER!!!' 0
gzip -n -9 < "$raw" > "$out"
echo "$me: $(cd $mods && ls -1 -- *.ko | LC_ALL=C sort | tr '\n' ' ')-> $out ($(stat -c %s "$out") bytes, $(stat -c %s "$raw") uncompressed)"
