#!/usr/bin/env bash
# The gdb oracle of test/adapter/linuxSource.test.ts: gdb-multiarch attached
# to qemu-system-x86_64's gdbstub (TCG, -S; Debian's qemu-system-x86 and
# gdb-multiarch) on the same kernel, initramfs and command line as the test
# (test/linux/fetch-kernel.sh, make-initramfs.sh) with the -dbg vmlinux
# (fetch-vmlinux-dbg.sh). Hardware breakpoints only (nothing written into
# the guest):
#   - the first update_process_times: the timer interrupt's backtrace (gdb
#     shows the inlined calls as frames and stops where the interrupt
#     switched to the IRQ stack);
#   - the first do_sys_openat2: the whole backtrace with its inlined calls.
# Writes golden/gdb-bt.txt: `== NAME` before each stop's `bt` lines.
#   test/linux/dbg/make-gdb-golden.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
kernel=$repo/test/linux/cache/vmlinuz initrd=$repo/test/linux/cache/initramfs.cpio.gz vmlinux=$here/cache/vmlinux
for f in "$kernel" "$initrd" "$vmlinux"; do [ -e "$f" ] || { echo "make-gdb-golden.sh: no $f (fetch it first)" >&2; exit 1; }; done
for t in qemu-system-x86_64 gdb-multiarch; do command -v $t >/dev/null || { echo "make-gdb-golden.sh: no $t (apt-get install qemu-system-x86 gdb-multiarch)" >&2; exit 1; }; done
port=$((20000 + RANDOM % 20000))
append="console=ttyS0 nokaslr panic=-1 acpi=off"
qemu-system-x86_64 -accel tcg -M pc,hpet=off -m 256 -smp 1 -nodefaults -display none -serial null -no-reboot \
  -kernel "$kernel" -initrd "$initrd" -append "$append" -gdb tcp:127.0.0.1:$port -S &
qemu=$!
trap 'kill $qemu 2>/dev/null || true' EXIT
out=$(timeout 300 gdb-multiarch -q -batch -nx "$vmlinux" -ex 'set pagination off' \
  -ex "target remote 127.0.0.1:$port" \
  -ex 'hbreak update_process_times' -ex continue -ex 'echo == update_process_times\n' -ex 'bt' -ex 'delete' \
  -ex 'hbreak do_sys_openat2' -ex continue -ex 'echo == do_sys_openat2\n' -ex 'bt' -ex 'kill' 2>&1)
{
  echo "# gdb-multiarch on qemu-system-x86_64 -s -S: $append (test/linux/dbg/make-gdb-golden.sh)"
  echo "# $(qemu-system-x86_64 --version | head -1); $(gdb-multiarch --version | head -1)"
  echo "$out" | grep -E '^== |^#[0-9]+ |^Backtrace stopped'
} > "$here/golden/gdb-bt.txt"
cat "$here/golden/gdb-bt.txt"
