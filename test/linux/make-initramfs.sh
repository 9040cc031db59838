#!/usr/bin/env bash
# Build the initramfs the full-system PC machine (and qemu, for the golden)
# boots Debian's kernel with: a newc cpio, gzip-compressed, holding Debian's
# busybox-static (amd64, fetched by test/userspace/debian/fetch.sh) as
# /bin/busybox, an /init that mounts proc, sysfs, devtmpfs, tracefs and
# debugfs and starts a shell on the console, and the /dev/console node the
# kernel opens for init's stdio before any devtmpfs is mounted; and, when
# test/linux/kbuild/build-samples.sh has built them (Kbuild against Debian's headers), Linux's kprobes sample modules
# (kprobe_example.ko, kretprobe_example.ko) in /root, and the debugger's agent
# module (test/linux/agent/build-agent.sh) as /root/kprobe_agent.ko; and Linux's ftrace
# selftests (tools/testing/selftests/ftrace from Debian's linux-source-6.1,
# fetched by test/modules/linux/fetch-test-kprobes.sh) in /ftrace, with the
# trace-printk.ko sample their kprobe_module.tc modprobes
# (test/linux/ftrace/build-trace-printk.sh) in /lib/modules/<release>, when there.
#   test/linux/make-initramfs.sh            -> test/linux/cache/initramfs.cpio.gz
#   test/linux/make-initramfs.sh OUT        -> OUT
# The archive is written by this script itself (no cpio program, no root: the
# device node is only a header), in a fixed order with fixed inode numbers and
# mtime 0, and gzip -n: the same busybox gives the same bytes.
# Without busybox: says so and exits 0 (the tests then say what is missing).
set -euo pipefail
cd "$(dirname "$0")"
me=make-initramfs.sh
busybox=../userspace/debian/cache/amd64/bin/busybox
out=${1:-cache/initramfs.cpio.gz}
if [ ! -x "$busybox" ]; then
  echo "$me: no $busybox (run test/userspace/debian/fetch.sh): skipping"
  exit 0
fi
mkdir -p "$(dirname "$out")"

read -r -d '' init <<'INIT' || true
#!/bin/sh
# /init of the kprobe-debug initramfs: the file systems a kprobes session
# needs, then a shell on the console (PID 1 stays the shell's parent: the
# shell exiting powers the machine off).
/bin/busybox mkdir -p /proc /sys /dev /tmp /root /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
echo "init: $(uname -sr) on $(cat /proc/cpuinfo | grep -c ^processor) cpu(s), proc sysfs devtmpfs tracefs debugfs mounted"
export HOME=/root PS1='/ # ' PATH=/sbin:/usr/sbin:/bin:/usr/bin
setsid cttyhack sh
echo "init: the shell exited: powering off"
poweroff -f
INIT

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
. ./cpio-entry.sh
cpio_out=$tmp cpio_ino=1
initfile=$(mktemp) linkfile=$(mktemp)
trap 'rm -f "$tmp" "$initfile" "$linkfile"' EXIT
printf '%s\n' "$init" > "$initfile"
printf busybox > "$linkfile"
cpio_entry . $((0040755))
for d in bin dev proc sys tmp root sbin usr usr/bin usr/sbin; do cpio_entry "$d" $((0040755)); done
cpio_entry dev/console $((0020600)) "" 5 1
cpio_entry bin/busybox $((0100755)) "$busybox"
cpio_entry bin/sh $((0120777)) "$linkfile"
cpio_entry init $((0100755)) "$initfile"
selftests=../modules/linux/cache/linux-source-6.1/tools/testing/selftests/ftrace
if [ -f "$selftests/ftracetest" ]; then
  cpio_entry ftrace $((0040755))
  while IFS= read -r rel; do
    f="$selftests/$rel"
    if [ -d "$f" ]; then cpio_entry "ftrace/$rel" $((0040755))
    elif [ -x "$f" ]; then cpio_entry "ftrace/$rel" $((0100755)) "$f"
    else cpio_entry "ftrace/$rel" $((0100644)) "$f"
    fi
  done < <(cd "$selftests" && find . -mindepth 1 \( -type d -o -type f \) | sed 's|^\./||' | LC_ALL=C sort)
fi
for ko in kprobe_example.ko kretprobe_example.ko; do
  [ -f "kbuild/cache/modules/$ko" ] && cpio_entry "root/$ko" $((0100644)) "kbuild/cache/modules/$ko"
done
# the module ftracetest's kprobe_module.tc modprobes (test/linux/ftrace/build-trace-printk.sh), when built,
# where busybox's modprobe looks: /lib/modules/<release>/ with a modules.dep naming it
if [ -f ftrace/cache/trace-printk.ko ]; then
  rel=$(cat ftrace/cache/RELEASE) dir=kernel/samples/trace_printk
  depfile=$(mktemp)
  trap 'rm -f "$tmp" "$initfile" "$linkfile" "$depfile"' EXIT
  printf '%s\n' "$dir/trace-printk.ko:" > "$depfile"
  m=lib/modules/$rel
  for d in lib lib/modules "$m" "$m/kernel" "$m/kernel/samples" "$m/$dir"; do cpio_entry "$d" $((0040755)); done
  cpio_entry "$m/$dir/trace-printk.ko" $((0100644)) ftrace/cache/trace-printk.ko
  cpio_entry "$m/modules.dep" $((0100644)) "$depfile"
fi
# the debugger's agent (test/linux/agent/build-agent.sh), when built
[ -f agent/cache/kprobe_agent.ko ] && cpio_entry root/kprobe_agent.ko $((0100644)) agent/cache/kprobe_agent.ko
cpio_entry TRAILER!!! 0
gzip -n -9 < "$tmp" > "$out"
mods=$(ls kbuild/cache/modules/*.ko 2>/dev/null | wc -l)
echo "$me: $(cat ../userspace/debian/cache/amd64/PACKAGE 2>/dev/null || echo busybox) + $mods sample module(s) -> $out ($(stat -c %s "$out") bytes)"
