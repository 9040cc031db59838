#!/usr/bin/env bash
# Fetch Linux's own ftrace selftests (tools/testing/selftests/ftrace/, whose
# test.d/kprobe/*_syntax_errors.tc are the oracle of the kprobe_events
# parser's error positions), the probe-event parser's sources
# (kernel/trace/trace_probe.[ch], trace_kprobe.c, trace_uprobe.c,
# trace_dynevent.c: the error_log messages; trace.[ch]: the README text) and its kprobe samples (samples/kprobes/) from Debian's kernel source package, never from anywhere
# else, into test/modules/linux/cache/linux-source-<series>/ (git-ignored:
# the project does not commit Linux's source).
#
#   test/modules/linux/fetch-ftrace-selftests.sh          the default series (6.1)
#   test/modules/linux/fetch-ftrace-selftests.sh 6.12     one series
#
# For each series: `apt-get download linux-source-<series>` (the package
# apt's candidate is, ~140 MB) into a temporary directory, then only those
# directories and files are taken out of the .deb's /usr/src/linux-source-<series>.tar.xz,
# streamed (the inner tarball is never written to disk).
# The cache is by version: cache/linux-source-<series>/SELFTESTS_VERSION
# names the version the parts came from, and the series is fetched
# again only when apt's candidate version changes. Prints the time each
# fetch took. Offline, or without apt: says so and exits 0 (the tests then
# say what is missing: see test/tracing/linuxSyntaxErrors.test.ts).
set -uo pipefail
cd "$(dirname "$0")"
mkdir -p cache
series=("$@")
[ ${#series[@]} -eq 0 ] && series=(6.1)
me=fetch-ftrace-selftests.sh
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "$me: no apt-get/dpkg-deb here: cannot fetch linux-source-{${series[*]}}"
  exit 0
fi
# kernel/trace/trace_probe.h holds the ERRORS table: Linux's error_log messages the syntax-error test compares with
parts=(tools/testing/selftests/ftrace samples/kprobes kernel/trace/trace.c kernel/trace/trace.h
  kernel/trace/trace_probe.h kernel/trace/trace_probe.c
  kernel/trace/trace_kprobe.c kernel/trace/trace_uprobe.c kernel/trace/trace_dynevent.c)
for s in "${series[@]}"; do
  pkg="linux-source-$s"
  dir="cache/$pkg"
  want=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
  if [ -z "$want" ]; then
    echo "$me: apt knows no $pkg (apt-cache search linux-source; apt-get update?): skipping"
    continue
  fi
  have=yes
  for p in "${parts[@]}"; do [ -e "$dir/$p" ] || have=no; done
  if [ $have = yes ] && [ "$(cat "$dir/SELFTESTS_VERSION" 2>/dev/null)" = "$want" ]; then
    echo "$me: $pkg $want: cached ($dir/{${parts[*]}})"
    continue
  fi
  start=$(date +%s.%N)
  tmp="cache/tmp-selftests-$pkg"
  rm -rf "$tmp" && mkdir -p "$tmp"
  if ! (cd "$tmp" && apt-get download -q "$pkg=$want" >/dev/null 2>&1); then
    echo "$me: cannot download $pkg $want (offline?): skipping"
    rm -rf "$tmp"
    continue
  fi
  got=$(date +%s.%N)
  deb=$(ls "$tmp"/*.deb)
  mkdir -p "$tmp/src"
  # the .deb's data tarball -> its one member usr/src/linux-source-<series>.tar.xz -> the parts
  dpkg-deb --fsys-tarfile "$deb" 2>/dev/null \
    | tar -xO "./usr/src/$pkg.tar.xz" 2>/dev/null \
    | tar -xJ -C "$tmp/src" "${parts[@]/#/$pkg/}"
  missing=
  for p in "${parts[@]}"; do [ -e "$tmp/src/$pkg/$p" ] || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    echo "$me: $(basename "$deb") has no$missing under $pkg/ in /usr/src/$pkg.tar.xz"
    rm -rf "$tmp"
    continue
  fi
  mkdir -p "$dir"
  for p in "${parts[@]}"; do
    rm -rf "${dir:?}/$p" && mkdir -p "$dir/$(dirname "$p")"
    mv "$tmp/src/$pkg/$p" "$dir/$p"
  done
  echo "$want" > "$dir/SELFTESTS_VERSION"
  rm -rf "$tmp"
  end=$(date +%s.%N)
  awk -v p="$(basename "$deb")" -v d="$dir" -v a="$start" -v b="$got" -v c="$end" \
    'BEGIN { printf "fetch-ftrace-selftests.sh: %s -> %s/{tools/testing/selftests/ftrace,samples/kprobes,kernel/trace/...} in %.1f s (download %.1f s, extraction %.1f s)\n", p, d, c - a, b - a, c - b }'
done
