#!/usr/bin/env bash
# Fetch Debian bookworm's own x86_64 Linux kernel for the full-system PC
# machine (emulator/system/): the unsigned cloud image
# linux-image-6.1.0-<abi>-cloud-amd64-unsigned (a bzImage, its modules under
# lib/modules/, its System.map and config under boot/), from Debian only,
# with `apt-get download` + `dpkg-deb -x`, into test/linux/cache/ (git-ignored):
#   cache/kernel/boot/vmlinuz-<release>     the bzImage
#   cache/kernel/lib/modules/<release>/     its modules
#   cache/vmlinuz                           a link to the bzImage
#   cache/kernel/PACKAGE, VERSION, RELEASE  what was fetched
#
#   test/linux/fetch-kernel.sh              the newest 6.1 cloud ABI apt knows
#   KERNEL_PKG=linux-image-6.1.0-57-cloud-amd64-unsigned test/linux/fetch-kernel.sh
#
# The newest ABI is chosen (not the linux-image-cloud-amd64 meta package's,
# which may lag one security upload behind): it is the one built from the same
# upload as apt's linux-source-6.1 and linux-headers candidates, so modules
# built later against those headers load into this kernel. Fetched again only
# when the chosen package or its version changes. Offline, or without apt:
# says so and exits 0 (the tests then say what is missing).
set -uo pipefail
cd "$(dirname "$0")"
me=fetch-kernel.sh
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "$me: no apt-get/dpkg-deb here: cannot fetch Debian's kernel"
  exit 0
fi
pkg=${KERNEL_PKG:-$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
  grep -E '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' |
  sort -t- -k4,4n | tail -n 1)}
if [ -z "$pkg" ]; then
  echo "$me: apt knows no linux-image-6.1.0-*-cloud-amd64-unsigned (apt-get update?): skipping"
  exit 0
fi
want=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
mkdir -p cache
if [ -f cache/kernel/PACKAGE ] && [ "$(cat cache/kernel/PACKAGE)" = "$pkg" ] &&
   [ "$(cat cache/kernel/VERSION 2>/dev/null)" = "$want" ] && [ -e cache/vmlinuz ]; then
  echo "$me: $pkg $want already in test/linux/cache/kernel"
  exit 0
fi
start=$(date +%s)
tmp=cache/tmp-kernel
rm -rf "$tmp" cache/kernel cache/vmlinuz && mkdir -p "$tmp"
if ! (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1); then
  echo "$me: cannot download $pkg (offline?): skipping"
  rm -rf "$tmp"
  exit 0
fi
dpkg-deb -x "$tmp"/*.deb cache/kernel
rm -rf "$tmp"
release=${pkg#linux-image-}
release=${release%-unsigned}
echo "$pkg" > cache/kernel/PACKAGE
echo "$want" > cache/kernel/VERSION
echo "$release" > cache/kernel/RELEASE
ln -s "kernel/boot/vmlinuz-$release" cache/vmlinuz
echo "$me: $pkg $want -> test/linux/cache/vmlinuz ($(stat -L -c %s cache/vmlinuz) bytes), modules in cache/kernel/lib/modules/$release ($(( $(date +%s) - start )) s)"
