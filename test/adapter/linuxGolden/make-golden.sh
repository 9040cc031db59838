#!/usr/bin/env bash
# The oracle of test/adapter/linuxBoot.test.ts: gdb attached to qemu's
# gdbstub (qemu-system-x86_64 -S, TCG; Debian's qemu-system-x86 and
# gdb-multiarch) on the same kernel, initramfs and command line
# (test/linux/fetch-kernel.sh, make-initramfs.sh) with the -dbg vmlinux
# (test/linux/dbg/fetch-vmlinux-dbg.sh): at the first call of
# do_sys_openat2 (a hardware breakpoint: nothing written into the guest),
# gdb's `info args`, the path, *how and the backtrace. Writes
# do_sys_openat2-gdb.txt next to this script. Pointers into user space
# differ between runs (the user stack is randomized): the test compares the
# values gdb prints, not those addresses.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
kernel=$repo/test/linux/cache/vmlinuz initrd=$repo/test/linux/cache/initramfs.cpio.gz vmlinux=$repo/test/linux/dbg/cache/vmlinux
for f in "$kernel" "$initrd" "$vmlinux"; do [ -e "$f" ] || { echo "make-golden.sh: no $f (fetch it first)"; exit 1; }; done
for t in qemu-system-x86_64 gdb-multiarch; do command -v $t >/dev/null || { echo "make-golden.sh: no $t (apt-get install qemu-system-x86 gdb-multiarch)"; exit 1; }; done
port=$((20000 + RANDOM % 20000))
append="console=ttyS0 nokaslr panic=-1 acpi=off"
qemu-system-x86_64 -accel tcg -M pc,hpet=off -m 256 -smp 1 -nodefaults -display none -serial null -no-reboot \
  -kernel "$kernel" -initrd "$initrd" -append "$append" -gdb tcp:127.0.0.1:$port -S &
qemu=$!
trap 'kill $qemu 2>/dev/null || true' EXIT
out=$(timeout 300 gdb-multiarch -q -batch -nx "$vmlinux" \
  -ex "target remote 127.0.0.1:$port" -ex 'hbreak do_sys_openat2' -ex continue \
  -ex 'info args' -ex 'printf "path %s\n", filename' -ex 'p/x how->flags' -ex 'p how->mode' -ex 'p how->resolve' \
  -ex 'bt 4' -ex 'kill' 2>&1)
{
  echo "# gdb-multiarch on qemu-system-x86_64 -s -S: $append; first stop at do_sys_openat2 (make-golden.sh)"
  echo "# $(qemu-system-x86_64 --version | head -1); $(gdb-multiarch --version | head -1)"
  echo "$out" | grep -E '^(dfd|filename|how) = |^path |^\$[0-9]+ = |^#[0-9]+ '
} > "$here/do_sys_openat2-gdb.txt"
cat "$here/do_sys_openat2-gdb.txt"
