#!/usr/bin/env bash
# Fetch what Kbuild needs to build out-of-tree modules for Debian's own
# kernel (test/linux/fetch-kernel.sh): Debian bookworm's
#   linux-headers-<abi>-cloud-amd64   the flavour's .config, Module.symvers, generated headers
#   linux-headers-<abi>-common        the common tree (include/, arch/, the top Makefile)
#   linux-kbuild-6.1                  scripts/ (fixdep, modpost, ...) built for amd64
# all of the kernel's version, with `apt-get download` + `dpkg-deb -x`, into
# test/linux/kbuild/cache/headers/ (git-ignored), nothing installed into the host.
# The packages point at each other through their installed paths; the cache is
# made self-contained so `make -C <headers> M=<dir>` works from it wherever it is:
#   - the flavour's Makefile is one line, `include /usr/src/linux-headers-<abi>-common/Makefile`:
#     rewritten to the same file by a relative path (make -C runs it from the flavour's directory,
#     the common Makefile then finds itself with realpath, and its sub-makes use that path);
#   - lib/modules/<release>/build and source point to /usr/src/...: re-made as relative links,
#     so cache/headers/lib/modules/<release>/build is the usual `make -C` target;
#   - scripts/ and tools/ (-> ../../lib/linux-kbuild-6.1/...) are relative already.
# Writes cache/headers/{RELEASE,VERSION,BUILD} (BUILD: the directory for make -C, relative to
# this folder) and cache/downloads.txt (the .deb sizes).
#
# The kernel's ABI and version are the ones test/linux/fetch-kernel.sh fetched (its
# cache/kernel/RELEASE and VERSION; LINUX_CACHE=DIR to read another test/linux/cache), or, with
# no kernel fetched, the same choice it makes: the newest linux-image-6.1.0-<abi>-cloud-amd64-unsigned
# apt knows. Fetched again only when that changes. Offline, or without apt: says so and exits 0.
set -uo pipefail
cd "$(dirname "$0")"
me=kbuild/fetch-headers.sh
linux=${LINUX_CACHE:-../cache}
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "$me: no apt-get/dpkg-deb here: cannot fetch Debian's headers"; exit 0
fi
if [ -f "$linux/kernel/RELEASE" ] && [ -f "$linux/kernel/VERSION" ]; then
  release=$(cat "$linux/kernel/RELEASE") version=$(cat "$linux/kernel/VERSION")
else
  pkg=$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
    grep -E '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' | sort -t- -k4,4n | tail -n 1)
  [ -n "$pkg" ] || { echo "$me: apt knows no linux-image-6.1.0-*-cloud-amd64-unsigned (apt-get update?): skipping"; exit 0; }
  version=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
  release=${pkg#linux-image-}
  release=${release%-unsigned}
fi
abi=${release%-cloud-amd64}
h=cache/headers
flavour=usr/src/linux-headers-$release
if [ "$(cat $h/RELEASE 2>/dev/null)" = "$release" ] && [ "$(cat $h/VERSION 2>/dev/null)" = "$version" ] &&
   [ -f "$h/$flavour/Makefile" ]; then
  echo "$me: headers for $release ($version) already in test/linux/kbuild/$h"; exit 0
fi
start=$(date +%s)
rm -rf "$h" cache/tmp-headers && mkdir -p cache/tmp-headers
pkgs=("linux-headers-$release=$version" "linux-headers-$abi-common=$version" "linux-kbuild-6.1=$version")
if ! (cd cache/tmp-headers && apt-get download -q "${pkgs[@]}" >/dev/null 2>&1); then
  echo "$me: cannot download ${pkgs[*]} (offline?): skipping"; rm -rf cache/tmp-headers; exit 0
fi
(cd cache/tmp-headers && stat -c '%s %n' ./*.deb) > cache/downloads.txt
for d in cache/tmp-headers/*.deb; do dpkg-deb -x "$d" "$h"; done
rm -rf cache/tmp-headers
# the flavour's Makefile: the common tree by a relative path
mk=$h/$flavour/Makefile
grep -q "^include /usr/src/linux-headers-$abi-common/Makefile\$" "$mk" ||
  { echo "$me: $mk is not the one-line include this script knows:"; cat "$mk"; exit 1; }
printf 'include ../linux-headers-%s-common/Makefile\n' "$abi" > "$mk"
# absolute links -> the same targets inside the cache, relative
find "$h" -type l -lname '/*' | while read -r l; do
  t=$(readlink "$l")
  [ -e "$h$t" ] || { echo "$me: $l -> $t: not in the packages"; exit 1; }
  ln -sfn "$(realpath --relative-to="$(dirname "$l")" -m "$h$t")" "$l"
done || exit 1
left=$(find "$h" -type l -lname '/*')
[ -z "$left" ] || { echo "$me: links still absolute: $left"; exit 1; }
echo "$release" > "$h/RELEASE"
echo "$version" > "$h/VERSION"
echo "$h/lib/modules/$release/build" > "$h/BUILD"
echo "$me: ${pkgs[*]} ($(awk '{s+=$1} END {printf "%.1f MB", s/1e6}' cache/downloads.txt) downloaded, $(du -sm "$h" | cut -f1) MB unpacked) -> test/linux/kbuild/$h ($(( $(date +%s) - start )) s)"
