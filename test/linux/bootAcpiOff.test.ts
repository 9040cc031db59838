/**
 * Debian's own 6.1 kernel (test/linux/fetch-kernel.sh) boots on the
 * full-system PC with `acpi=off` and one CPU (the 8259s, the PIT, the TSC
 * at its CPUID-advertised frequency) through `kprobe-run boot` to the
 * busybox initramfs's shell prompt; a command typed there runs and prints;
 * then Linux's own kprobes on the emulated CPU: the Kbuild-built
 * samples/kprobes/kprobe_example.ko (test/linux/kbuild) prints its handler
 * lines and unloads, the debugfs list shows a kprobe on ftrace ([FTRACE])
 * and one Linux jump-optimized ([OPTIMIZED]), a tracefs kprobe event hits.
 * The console lines checked are the kernel's own, in qemu's order
 * (test/linux/golden/qemu-acpi-off.txt's command line).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';

const SESSION = [
  'echo hello; cat /proc/version',
  'insmod /root/kprobe_example.ko',
  'true',
  'cat /sys/kernel/debug/kprobes/list',
  'rmmod kprobe_example',
  'cd /sys/kernel/tracing',
  'echo "p:myopen do_sys_openat2 dfd=%di:s32" > kprobe_events',
  'echo "p:myopt do_sys_openat2+0x11" >> kprobe_events',
  'echo 1 > events/kprobes/enable',
  'cat /proc/version > /dev/null',
  'grep -m 1 myopen: trace',
  'grep do_sys_openat2 /sys/kernel/debug/kprobes/list',
];

test('kprobe-run boot: Debian 6.1 with acpi=off on one CPU reaches the busybox prompt, runs `echo hello; cat /proc/version`, and Linux\'s kprobes work in it', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  const c = captureIo();
  const code = await runCli(['boot', '--kernel', kernel.path, '--initrd', initrd.path, '--append', 'console=ttyS0 nokaslr panic=-1 acpi=off',
    '--cpus', '1', '--memory', '256', '--max-instructions', '6000000000', '--input', SESSION.join('\n')], c.io);
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
    /kprobe_init: Planted kprobe at/,
    /handler_pre: <kernel_clone> p->addr = 0x\S+, ip = ffffffff[0-9a-f]+, flags = 0x/,
    /handler_post: <kernel_clone> p->addr = 0x\S+, flags = 0x/,
    /ffffffff[0-9a-f]+ {2}k {2}kernel_clone\+0x0 {4}\[FTRACE\]/,
    /kprobe_exit: kprobe at \S+ unregistered/,
    /sh-\d+ +\[000\] \S+ +\d+\.\d+: myopen: \(do_sys_openat2\+0x0\/0x[0-9a-f]+\) dfd=-100/,
  ];
  let at = 0;
  for (const re of order) {
    const m = re.exec(out.slice(at));
    assert.ok(m, `console line ${re} after offset ${at}; console tail:\n${out.slice(Math.max(at, out.length - 1500))}`);
    at += m.index + m[0].length;
  }
  const list = out.slice(out.lastIndexOf('grep do_sys_openat2'));
  assert.match(list, /do_sys_openat2\+0x11 {4}\[OPTIMIZED\]/);
  assert.match(list, /do_sys_openat2\+0x0 {4}\[FTRACE\]/);
  assert.match(c.stderr(), new RegExp(`boot: reached the prompt after ${SESSION.length} input lines \\(\\d+ instructions`));
});
