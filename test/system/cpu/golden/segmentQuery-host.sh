#!/usr/bin/env bash
# Regenerate segmentQuery-host.txt: segmentQuery-host.c built with the host's
# gcc and run on the host's x86_64 CPU pinned to CPU 1 (the per-CPU GDT
# entry's limit is (node << 12) | cpu: 1 on node 0). Needs an x86_64 host
# running Linux; the CPU model is recorded in the file's first line.
set -euo pipefail
cd "$(dirname "$0")"
[ "$(uname -m)" = x86_64 ] || { echo "segmentQuery-host.sh: needs an x86_64 host"; exit 1; }
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
gcc -O1 -static -o "$bin" segmentQuery-host.c
{
  echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), taskset -c 1"
  taskset -c 1 "$bin"
} > segmentQuery-host.txt
cat segmentQuery-host.txt
