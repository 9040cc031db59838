/**
 * Debian's own 6.1 kernel (test/linux/fetch-kernel.sh) boots on the
 * full-system PC with `acpi=off` and one CPU (the 8259s, the PIT, the TSC
 * at its CPUID-advertised frequency) through `kprobe-run boot` to the
 * busybox initramfs's shell prompt; a command typed there runs and prints.
 * The console lines checked are the kernel's own, in qemu's order
 * (test/linux/golden/qemu-acpi-off.txt's command line).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';

test('kprobe-run boot: Debian 6.1 with acpi=off on one CPU reaches the busybox prompt and runs `echo hello; cat /proc/version`', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  const c = captureIo();
  const code = await runCli(['boot', '--kernel', kernel.path, '--initrd', initrd.path, '--append', 'console=ttyS0 nokaslr panic=-1 acpi=off',
    '--cpus', '1', '--memory', '256', '--max-instructions', '4000000000', '--input', 'echo hello; cat /proc/version'], c.io);
  const out = c.stdout();
  assert.equal(code, 0, c.stderr().split('\n').filter(l => l.startsWith('boot:') || l.includes('boot:')).join('\n') + out.slice(-2000));
  const order = [
    /Linux version 6\.1\.\S+-cloud-amd64/,
    /Command line: console=ttyS0 nokaslr panic=-1 acpi=off/,
    /tsc: Detected 1000\.000 MHz processor/,
    /Calibrating delay loop \(skipped\)/,
    /smpboot: Total of 1 processors activated/,
    /serial8250: ttyS0 at I\/O 0x3f8 \(irq = 4, base_baud = 115200\) is a 16550A/,
    /Freeing unused kernel image \(initmem\) memory/,
    /Run \/init as init process/,
    /\/ # /,
    /\nhello\r?\n/,
    /Linux version 6\.1\.\S+-cloud-amd64 \(debian-kernel@lists\.debian\.org\)/,
  ];
  let at = 0;
  for (const re of order) {
    const m = re.exec(out.slice(at));
    assert.ok(m, `console line ${re} after offset ${at}; console tail:\n${out.slice(Math.max(at, out.length - 1500))}`);
    at += m.index + m[0].length;
  }
  assert.match(c.stderr(), /boot: reached the prompt after 1 input line \(\d+ instructions/);
});
