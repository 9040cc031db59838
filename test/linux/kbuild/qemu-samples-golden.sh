#!/usr/bin/env bash
# The oracle for Linux's kprobes samples on the full-system PC machine:
# qemu-system-x86_64 (Debian's qemu-system-x86, TCG, no KVM) boots Debian's
# kernel (test/linux/fetch-kernel.sh) with the busybox initramfs
# (test/linux/make-initramfs.sh) followed by the samples' cpio
# (test/linux/kbuild/modules-cpio.sh) as one concatenated initrd, and a
# scripted console session loads each sample, runs a command that forks (so
# kernel_clone runs while the probe is in), and unloads it:
#   insmod /lib/modules/samples/kprobe_example.ko symbol=kernel_clone
#   ls /lib/modules/samples
#   rmmod kprobe_example
#   insmod /lib/modules/samples/kretprobe_example.ko func=kernel_clone
#   ls /lib/modules/samples
#   rmmod kretprobe_example
# then `reboot -f` (-no-reboot turns the reset into qemu's exit). Each command
# is sent after the previous one's prompt, so the log never interleaves
# typed input with output, and the host seconds of each step are measured.
# Writes, per variant,
#   test/linux/kbuild/golden/qemu-samples-<variant>.log  the console as the guest wrote it
#       (CR LF line ends and ash's cursor query ESC[6n kept; kernel timestamps kept: they are
#       qemu's host-speed times, compare lines without [    t.tttttt])
#   test/linux/kbuild/golden/qemu-samples-<variant>.txt  the qemu command, the inputs'
#       versions and checksums, host seconds to the prompt and per step
# Variants, with test/linux/qemu-golden.sh's command lines:
#   acpi-off  1 vCPU: console=ttyS0 nokaslr acpi=off panic=-1 (the 8259 PICs + PIT)
#   smp2      2 vCPUs: console=ttyS0 nokaslr panic=-1, the firmware's ACPI tables, no HPET
#   test/linux/kbuild/qemu-samples-golden.sh [acpi-off|smp2]   (default: both)
# qemu calibrates the TSC against the PIT in host time: on a loaded host the calibration
# can fail and the kernel runs on refined-jiffies, so kretprobe_example's "took N ns"
# (and whether it is 0) depends on the host, as do the timestamps.
# LINUX_CACHE=DIR reads the kernel and initramfs from another test/linux/cache.
set -uo pipefail
cd "$(dirname "$0")"
me=kbuild/qemu-samples-golden.sh
linux=${LINUX_CACHE:-../cache}
kernel=$linux/vmlinuz base=$linux/initramfs.cpio.gz samples=cache/samples.cpio.gz
for f in "$kernel" "$base"; do
  [ -e "$f" ] || { echo "$me: no $f (run test/linux/fetch-kernel.sh and make-initramfs.sh)"; exit 1; }
done
[ -e "$samples" ] || { echo "$me: no $samples (run fetch-headers.sh, build-samples.sh, modules-cpio.sh here)"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || { echo "$me: no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 1; }
initrd=cache/initrd-samples.cpio
cat "$base" "$samples" > "$initrd"
steps=('uname -r'
  'ls /lib/modules/samples'
  'insmod /lib/modules/samples/kprobe_example.ko symbol=kernel_clone'
  'ls /lib/modules/samples'
  'rmmod kprobe_example'
  'insmod /lib/modules/samples/kretprobe_example.ko func=kernel_clone'
  'ls /lib/modules/samples'
  'rmmod kretprobe_example')
mkdir -p golden
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
now() { date +%s.%N; }
prompts() { grep -o '/ # ' "$log" | wc -l; }
# wait_prompts N SECONDS: until the log holds N prompts (or qemu exits / time runs out)
wait_prompts() {
  local i
  for i in $(seq 1 $(( $2 * 20 ))); do
    [ "$(prompts)" -ge "$1" ] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
# run VARIANT: boot, the steps one prompt at a time, reboot; the log and the timings
run() {
  local v=$1 smp machine append log start t boot n s t0 total timing=()
  case $v in
    acpi-off) smp=1 machine=pc append="console=ttyS0 nokaslr acpi=off panic=-1" ;;
    smp2) smp=2 machine=pc,hpet=off append="console=ttyS0 nokaslr panic=-1" ;;
    *) echo "$me: unknown variant $v (acpi-off, smp2)"; exit 1 ;;
  esac
  local cmd=(qemu-system-x86_64 -accel tcg -M "$machine" -m 512 -smp "$smp" -nodefaults -display none
    -serial stdio -no-reboot -kernel "$kernel" -initrd "$initrd" -append "$append")
  log=golden/qemu-samples-$v.log
  rm -f "$dir/in" && mkfifo "$dir/in"
  start=$(now)
  "${cmd[@]}" < "$dir/in" > "$log" 2>&1 &
  pid=$!
  exec 3> "$dir/in"
  if ! wait_prompts 1 300; then
    echo "$me: $v: no shell prompt (see test/linux/kbuild/$log)"; kill "$pid" 2>/dev/null; exit 1
  fi
  t=$(now)
  boot=$(echo "$t - $start" | bc)
  n=1
  for s in "${steps[@]}"; do
    t0=$(now)
    printf '%s\n' "$s" >&3
    n=$((n + 1))
    if ! wait_prompts "$n" 120; then
      echo "$me: $v: no prompt after '$s' (see test/linux/kbuild/$log)"; kill "$pid" 2>/dev/null; exit 1
    fi
    timing+=("$(printf '%6.2f s  %s' "$(echo "$(now) - $t0" | bc)" "$s")")
  done
  printf 'reboot -f\n' >&3
  for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill "$pid" 2>/dev/null
  exec 3>&-
  total=$(echo "$(now) - $start" | bc)
  {
    echo "command: ${cmd[*]:0:$((${#cmd[@]} - 1))} \"$append\""
    echo "kernel: $(cat "$linux/kernel/PACKAGE") $(cat "$linux/kernel/VERSION")"
    echo "initrd: test/linux/make-initramfs.sh ($(md5sum < "$base" | cut -d' ' -f1)) + test/linux/kbuild/modules-cpio.sh ($(md5sum < "$samples" | cut -d' ' -f1))"
    echo "modules: vermagic '$(cat cache/modules/VERMAGIC 2>/dev/null)', $(cd cache/modules && md5sum -- *.ko | awk '{printf "%s %s  ", $2, $1}')"
    echo "host seconds (wall; host load average $(cut -d' ' -f1 /proc/loadavg)):"
    printf '%6.2f s  start to the shell prompt\n' "$boot"
    printf '%s\n' "${timing[@]}"
    printf '%6.2f s  in all, to qemu exit\n' "$total"
    echo "qemu: $(qemu-system-x86_64 --version | head -n 1)"
  } > golden/qemu-samples-$v.txt
  echo "$me: $v: prompt after $boot s, session done after $total s -> test/linux/kbuild/$log"
}
variants=("$@")
[ ${#variants[@]} -eq 0 ] && variants=(acpi-off smp2)
for v in "${variants[@]}"; do run "$v"; done
