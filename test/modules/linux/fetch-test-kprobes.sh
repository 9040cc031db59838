#!/usr/bin/env bash
# Fetch the parts of Linux's source the tests compare with, from Debian's
# kernel source package, never from anywhere else, into
# test/modules/linux/cache/linux-source-<series>/ (git-ignored: the project
# does not commit Linux's source):
#   every series: lib/test_kprobes.c (the proof that the kprobes C API
#     behaves as Linux's: test/modules/linuxTestKprobes.test.ts)
#   6.1 also: tools/testing/selftests/ftrace/ (test.d/kprobe/*_syntax_errors.tc
#     are the oracle of the kprobe_events parser's error positions:
#     test/tracing/linuxSyntaxErrors.test.ts), samples/kprobes/,
#     samples/trace_printk (the module kprobe_module.tc modprobes), and the
#     probe-event parser's sources (kernel/trace/trace_probe.[ch],
#     trace_kprobe.c, trace_uprobe.c, trace_dynevent.c: the error_log
#     messages; trace.[ch]: the README text)
#
#   test/modules/linux/fetch-test-kprobes.sh            the default series (6.1 6.12)
#   test/modules/linux/fetch-test-kprobes.sh 6.12       one series
#
# For each series: `apt-get download linux-source-<series>` (the package
# apt's candidate is, ~140 MB) into a temporary directory, once, then only
# that series' parts are taken out of the .deb's
# /usr/src/linux-source-<series>.tar.xz, streamed (the inner tarball is never
# written to disk; for a single file, tar --occurrence stops reading once it
# has it). The cache is by version: cache/linux-source-<series>/PACKAGE names
# the .deb it came from, VERSION its version; the series is fetched again
# only when apt's candidate version changes or a part is missing. Prints the
# time each fetch took. Offline, or without apt: says so and exits 0 (the
# tests then say what is missing).
set -uo pipefail
cd "$(dirname "$0")"
mkdir -p cache
series=("$@")
[ ${#series[@]} -eq 0 ] && series=(6.1 6.12)
me=fetch-test-kprobes.sh
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "$me: no apt-get/dpkg-deb here: cannot fetch linux-source-{${series[*]}}"
  exit 0
fi
selftests=(tools/testing/selftests/ftrace samples/kprobes samples/trace_printk kernel/trace/trace.c kernel/trace/trace.h
  kernel/trace/trace_probe.h kernel/trace/trace_probe.c
  kernel/trace/trace_kprobe.c kernel/trace/trace_uprobe.c kernel/trace/trace_dynevent.c)
for s in "${series[@]}"; do
  pkg="linux-source-$s"
  dir="cache/$pkg"
  parts=(lib/test_kprobes.c)
  [ "$s" = 6.1 ] && parts+=("${selftests[@]}")
  want=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
  if [ -z "$want" ]; then
    echo "$me: apt knows no $pkg (apt-cache search linux-source; apt-get update?): skipping"
    continue
  fi
  have=yes
  for p in "${parts[@]}"; do [ -e "$dir/$p" ] || have=no; done
  if [ $have = yes ] && [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$want" ]; then
    echo "$me: $pkg $want: cached ($dir: ${parts[*]})"
    continue
  fi
  start=$(date +%s.%N)
  tmp="cache/tmp-$pkg"
  rm -rf "$tmp" && mkdir -p "$tmp"
  if ! (cd "$tmp" && apt-get download -q "$pkg=$want" >/dev/null 2>&1); then
    echo "$me: cannot download $pkg $want (offline?): skipping"
    rm -rf "$tmp"
    continue
  fi
  got=$(date +%s.%N)
  deb=$(ls "$tmp"/*.deb)
  mkdir -p "$tmp/src"
  # one file: tar stops at it (--occurrence), so the pipes upstream end early (their broken-pipe complaints are dropped)
  once=()
  [ ${#parts[@]} -eq 1 ] && once=(--occurrence=1)
  # the .deb's data tarball -> its one member usr/src/linux-source-<series>.tar.xz -> the parts
  dpkg-deb --fsys-tarfile "$deb" 2>/dev/null \
    | tar -xO "./usr/src/$pkg.tar.xz" 2>/dev/null \
    | tar -xJ -C "$tmp/src" "${once[@]}" "${parts[@]/#/$pkg/}"
  missing=
  for p in "${parts[@]}"; do [ -e "$tmp/src/$pkg/$p" ] || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    echo "$me: $(basename "$deb") has no$missing under $pkg/ in /usr/src/$pkg.tar.xz"
    rm -rf "$tmp"
    continue
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  for p in "${parts[@]}"; do
    mkdir -p "$dir/$(dirname "$p")"
    mv "$tmp/src/$pkg/$p" "$dir/$p"
  done
  basename "$deb" > "$dir/PACKAGE"
  echo "$want" > "$dir/VERSION"
  rm -rf "$tmp"
  end=$(date +%s.%N)
  awk -v me="$me" -v p="$(cat "$dir/PACKAGE")" -v d="$dir" -v n="${#parts[@]}" -v a="$start" -v b="$got" -v c="$end" \
    'BEGIN { printf "%s: %s -> %s (%d parts) in %.1f s (download %.1f s, extraction %.1f s)\n", me, p, d, n, c - a, b - a, c - b }'
done
