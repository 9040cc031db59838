#!/usr/bin/env bash
# Fetch the DWARF of Debian's own x86_64 kernel: from
# linux-image-<release>-dbg (the same ABI and version test/linux/fetch-kernel.sh
# chose, read from test/linux/cache/kernel/RELEASE and VERSION) keep ONLY
# usr/lib/debug/boot/vmlinux-<release>, streamed out of the .deb with
# dpkg-deb --fsys-tarfile | tar -x, into test/linux/dbg/cache/ (git-ignored):
#   cache/vmlinux-<release>   the unstripped vmlinux with its DWARF
#   cache/vmlinux             a link to it
#   cache/PACKAGE, VERSION    what was fetched
# The .deb itself (~280 MB) is deleted once the file is out. Fetched again
# only when the package or version changes. Offline, without apt, or before
# fetch-kernel.sh ran: says so and exits 0 (the tests then say what is missing).
set -uo pipefail
cd "$(dirname "$0")"
me=fetch-vmlinux-dbg.sh
kdir=../cache/kernel
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "$me: no apt-get/dpkg-deb here: cannot fetch Debian's vmlinux debug info"
  exit 0
fi
if [ ! -f "$kdir/RELEASE" ] || [ ! -f "$kdir/VERSION" ]; then
  echo "$me: test/linux/cache/kernel/RELEASE missing: run test/linux/fetch-kernel.sh first"
  exit 0
fi
release=$(cat "$kdir/RELEASE")
want=$(cat "$kdir/VERSION")
pkg="linux-image-$release-dbg"
mkdir -p cache
if [ -f cache/PACKAGE ] && [ "$(cat cache/PACKAGE)" = "$pkg" ] &&
   [ "$(cat cache/VERSION 2>/dev/null)" = "$want" ] && [ -s "cache/vmlinux-$release" ]; then
  echo "$me: $pkg $want already in test/linux/dbg/cache"
  exit 0
fi
start=$(date +%s)
tmp=cache/tmp-dbg
rm -rf "$tmp" cache/vmlinux cache/vmlinux-* cache/PACKAGE cache/VERSION && mkdir -p "$tmp"
if ! (cd "$tmp" && apt-get download -q "$pkg=$want" >/dev/null 2>&1); then
  echo "$me: cannot download $pkg $want (offline, or no longer in the archive?): skipping"
  rm -rf "$tmp"
  exit 0
fi
deb=$(ls "$tmp"/*.deb)
debsize=$(stat -c %s "$deb")
if ! dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/lib/debug/boot/vmlinux-$release"; then
  echo "$me: $deb has no usr/lib/debug/boot/vmlinux-$release"
  rm -rf "$tmp"
  exit 1
fi
mv "$tmp/usr/lib/debug/boot/vmlinux-$release" "cache/vmlinux-$release"
rm -rf "$tmp"
ln -s "vmlinux-$release" cache/vmlinux
echo "$pkg" > cache/PACKAGE
echo "$want" > cache/VERSION
echo "$me: $pkg $want ($debsize bytes downloaded) -> test/linux/dbg/cache/vmlinux ($(stat -L -c %s cache/vmlinux) bytes) in $(( $(date +%s) - start )) s"
