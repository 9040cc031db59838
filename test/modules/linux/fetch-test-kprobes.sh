#!/usr/bin/env bash
# Fetch Linux's own lib/test_kprobes.c (the proof that the kprobes C API
# behaves as Linux's: test/modules/linuxTestKprobes.test.ts) from Debian's
# kernel source package, never from anywhere else, into
# test/modules/linux/cache/linux-source-<series>/ (git-ignored: the project
# does not commit Linux's source).
#
#   test/modules/linux/fetch-test-kprobes.sh            the default series (6.1 6.12)
#   test/modules/linux/fetch-test-kprobes.sh 6.12       one series
#
# For each series: `apt-get download linux-source-<series>` (the package
# apt's candidate is, ~140 MB) into a temporary directory, then only
# lib/test_kprobes.c is taken out of the .deb's
# /usr/src/linux-source-<series>.tar.xz, streamed (the inner tarball is never
# written to disk; tar --occurrence stops reading once it has the file).
# The cache is by version: cache/linux-source-<series>/PACKAGE names the
# .deb it came from, and the series is fetched again only when apt's
# candidate version changes. Prints the time each fetch took.
# Offline, or without apt: says so and exits 0 (the test then says what is
# missing: see test/modules/linuxTestKprobes.test.ts).
set -uo pipefail
cd "$(dirname "$0")"
mkdir -p cache
series=("$@")
[ ${#series[@]} -eq 0 ] && series=(6.1 6.12)
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "fetch-test-kprobes.sh: no apt-get/dpkg-deb here: cannot fetch linux-source-{${series[*]}}"
  exit 0
fi
for s in "${series[@]}"; do
  pkg="linux-source-$s"
  dir="cache/$pkg"
  want=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
  if [ -z "$want" ]; then
    echo "fetch-test-kprobes.sh: apt knows no $pkg (apt-cache search linux-source; apt-get update?): skipping"
    continue
  fi
  if [ -f "$dir/lib/test_kprobes.c" ] && [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$want" ]; then
    echo "fetch-test-kprobes.sh: $pkg $want: cached ($dir/lib/test_kprobes.c)"
    continue
  fi
  start=$(date +%s.%N)
  tmp="cache/tmp-$pkg"
  rm -rf "$tmp" && mkdir -p "$tmp"
  if ! (cd "$tmp" && apt-get download -q "$pkg=$want" >/dev/null 2>&1); then
    echo "fetch-test-kprobes.sh: cannot download $pkg $want (offline?): skipping"
    rm -rf "$tmp"
    continue
  fi
  got=$(date +%s.%N)
  deb=$(ls "$tmp"/*.deb)
  mkdir -p "$tmp/src"
  # the .deb's data tarball -> its one member usr/src/linux-source-<series>.tar.xz -> lib/test_kprobes.c;
  # tar stops at the file (--occurrence), so the pipes upstream end early (their broken-pipe complaints are dropped)
  dpkg-deb --fsys-tarfile "$deb" 2>/dev/null \
    | tar -xO "./usr/src/$pkg.tar.xz" 2>/dev/null \
    | tar -xJ -C "$tmp/src" --occurrence=1 "$pkg/lib/test_kprobes.c"
  if [ ! -s "$tmp/src/$pkg/lib/test_kprobes.c" ]; then
    echo "fetch-test-kprobes.sh: $(basename "$deb") has no $pkg/lib/test_kprobes.c in /usr/src/$pkg.tar.xz"
    rm -rf "$tmp"
    continue
  fi
  rm -rf "$dir" && mkdir -p "$dir/lib"
  mv "$tmp/src/$pkg/lib/test_kprobes.c" "$dir/lib/test_kprobes.c"
  basename "$deb" > "$dir/PACKAGE"
  echo "$want" > "$dir/VERSION"
  rm -rf "$tmp"
  end=$(date +%s.%N)
  awk -v p="$(cat "$dir/PACKAGE")" -v d="$dir" -v a="$start" -v b="$got" -v c="$end" \
    'BEGIN { printf "fetch-test-kprobes.sh: %s -> %s/lib/test_kprobes.c in %.1f s (download %.1f s, extraction %.1f s)\n", p, d, c - a, b - a, c - b }'
done
