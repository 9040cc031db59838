#!/usr/bin/env bash
# The oracle the full-system PC machine is compared with: qemu-system-x86_64
# (Debian's qemu-system-x86, TCG, no KVM) boots the same Debian kernel and
# initramfs (test/linux/fetch-kernel.sh, make-initramfs.sh) to the busybox
# prompt, a scripted session runs (what the machine is; Linux's own kprobes:
# the sample modules' handler lines, a kprobe event in tracefs, the debugfs
# list), and `reboot -f` ends it (-no-reboot
# turns the reset into qemu's exit). Writes
#   test/linux/golden/qemu-<variant>.log   the console, as the guest wrote it
#   test/linux/golden/qemu-<variant>.txt   the exact qemu command, the host
#                                          seconds from start to the prompt
#                                          (wall, and qemu's CPU time)
# Variants (the kernel command line is the same for our machine):
#   acpi-off   1 vCPU: console=ttyS0 nokaslr acpi=off panic=-1
#              Debian's cloud kernel has no MP-table parser (X86_MPPARSE is
#              off), so without ACPI it finds no local APIC and keeps the
#              8259 PICs + PIT: the smallest platform that reaches a shell.
#   smp2       2 vCPUs: console=ttyS0 nokaslr panic=-1 with the firmware's
#              ACPI tables (MADT: the local APICs and the IO-APIC), no HPET
#              (the machine has none: its clocks are the TSC, the local APIC
#              timer, the PIT and the ACPI PM timer).
#   ftracetest 2 vCPUs as smp2; the session runs Linux's own ftrace selftests
#              (/ftrace in the initramfs) on test.d/kprobe and test.d/dynevent:
#              the PASS / FAIL / UNSUPPORTED counts our machine is compared with.
#   test/linux/qemu-golden.sh [acpi-off|smp2|ftracetest]   (default: acpi-off smp2)
# qemu's timestamps in the log are its own (host-speed) times: compare lines
# without the [    t.tttttt] prefix.
set -uo pipefail
cd "$(dirname "$0")"
me=qemu-golden.sh
kernel=cache/vmlinuz initrd=cache/initramfs.cpio.gz
for f in "$kernel" "$initrd"; do
  [ -e "$f" ] || { echo "$me: no test/linux/$f (run fetch-kernel.sh and make-initramfs.sh)"; exit 1; }
done
command -v qemu-system-x86_64 >/dev/null || { echo "$me: no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 1; }
variants=("$@")
[ ${#variants[@]} -eq 0 ] && variants=(acpi-off smp2)
mkdir -p golden
# the session after the prompt: what the machine is, Linux's kprobes, then a reset.
# do_sys_openat2+0x11 is an instruction boundary in 6.1.0-57's do_sys_openat2
# ("mov %rdx,%rbx; sub $0x20,%rsp": seven bytes Linux can replace with a jump,
# found with objdump on the decompressed vmlinux): the probe Linux optimizes,
# [OPTIMIZED] in the debugfs list; the one on the entry is [FTRACE]
session='uname -r
cat /proc/cmdline
grep -c ^processor /proc/cpuinfo
cat /sys/kernel/debug/kprobes/enabled
insmod /root/kprobe_example.ko
true
cat /sys/kernel/debug/kprobes/list
rmmod kprobe_example
insmod /root/kretprobe_example.ko
true
rmmod kretprobe_example
cd /sys/kernel/tracing
echo "p:myopen do_sys_openat2 dfd=%di:s32" > kprobe_events
echo "p:myopt do_sys_openat2+0x11" >> kprobe_events
echo 1 > events/kprobes/enable
cat /proc/version > /dev/null
sleep 1
grep do_sys_openat2 /sys/kernel/debug/kprobes/list
echo 0 > events/kprobes/enable
grep -m 1 myopen: trace
grep -m 1 myopt: trace
echo > kprobe_events
cd /
reboot -f
'
for v in "${variants[@]}"; do
  case $v in
    acpi-off) smp=1 machine=pc append="console=ttyS0 nokaslr acpi=off panic=-1" ;;
    smp2|ftracetest) smp=2 machine=pc,hpet=off append="console=ttyS0 nokaslr panic=-1" ;;
    *) echo "$me: unknown variant $v (acpi-off, smp2, ftracetest)"; exit 1 ;;
  esac
  script=$session wait=600
  if [ "$v" = ftracetest ]; then
    script='cd /ftrace
./ftracetest test.d/kprobe test.d/dynevent
cd /
reboot -f
'
    wait=9000
  fi
  cmd=(qemu-system-x86_64 -accel tcg -M "$machine" -m 512 -smp "$smp" -nodefaults -display none -serial stdio
    -no-reboot -kernel "$kernel" -initrd "$initrd" -append "$append")
  log=golden/qemu-$v.log
  dir=$(mktemp -d)
  mkfifo "$dir/in"
  start=$(date +%s.%N)
  "${cmd[@]}" < "$dir/in" > "$log" 2>&1 &
  pid=$!
  exec 3> "$dir/in"
  prompt=
  for _ in $(seq 1 1800); do
    if grep -q '^/ # ' "$log"; then
      prompt=$(date +%s.%N)
      # qemu's own CPU time (user + system) to the prompt: less sensitive to a loaded host than the wall time
      cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$pid/stat" 2>/dev/null)
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$prompt" ]; then
    echo "$me: $v: no shell prompt (see test/linux/$log)"; kill "$pid" 2>/dev/null; exec 3>&-; rm -rf "$dir"; exit 1
  fi
  printf '%s' "$script" >&3
  for _ in $(seq 1 "$wait"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill "$pid" 2>/dev/null
  exec 3>&-
  rm -rf "$dir"
  secs=$(echo "$prompt - $start" | bc)
  {
    echo "command: ${cmd[*]:0:$((${#cmd[@]} - 1))} \"$append\""
    echo "kernel: $(cat cache/kernel/PACKAGE) $(cat cache/kernel/VERSION)"
    echo "initramfs: test/linux/make-initramfs.sh ($(md5sum < "$initrd" | cut -d' ' -f1))"
    echo "host seconds to the prompt: $secs (wall), ${cpu:-?} (qemu's CPU time; host load average $(cut -d' ' -f1 /proc/loadavg))"
    echo "qemu: $(qemu-system-x86_64 --version | head -n 1)"
  } > "golden/qemu-$v.txt"
  echo "$me: $v: prompt after $secs s -> test/linux/$log"
done
