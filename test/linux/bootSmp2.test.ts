/**
 * Debian's own 6.1 kernel (test/linux/fetch-kernel.sh) boots on the
 * full-system PC with ACPI (the MADT names two CPUs and the IO-APIC) and 2
 * CPUs through `kprobe-run boot` to the busybox prompt: the second CPU
 * starts at its SIPI, the IO-APIC routes the timer, the kernel moves to the
 * TSC clocksource; a command typed at the prompt runs on it, and Linux's
 * samples/kprobes/kretprobe_example.ko (Kbuild-built) reports kernel_clone's
 * returns on two CPUs and unloads. The lines
 * checked are the kernel's own, in qemu's order (test/linux/golden/
 * qemu-smp2.txt's command line).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';

const SESSION = ['echo hello; grep -c ^processor /proc/cpuinfo', 'insmod /root/kretprobe_example.ko', 'true', 'rmmod kretprobe_example'];

test('kprobe-run boot: Debian 6.1 with ACPI and 2 CPUs reaches the busybox prompt, runs `echo hello`, and kretprobe_example reports kernel_clone', async (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  const c = captureIo();
  const code = await runCli(['boot', '--kernel', kernel.path, '--initrd', initrd.path, '--append', 'console=ttyS0 nokaslr panic=-1',
    '--cpus', '2', '--memory', '256', '--max-instructions', '4000000000', '--input', SESSION.join('\n')], c.io);
  const out = c.stdout();
  assert.equal(code, 0, c.stderr().split('\n').filter(l => l.includes('boot:')).join('\n') + out.slice(-2000));
  const order = [
    /Linux version 6\.1\.\S+-cloud-amd64/,
    /ACPI: APIC 0x/,
    /IOAPIC\[0\]: apic_id 2, version 32, address 0xfec00000, GSI 0-23/,
    /smpboot: Allowing 2 CPUs, 0 hotplug CPUs/,
    /APIC: Switch to symmetric I\/O mode setup/,
    /smp: Bringing up secondary CPUs/,
    /smp: Brought up 1 node, 2 CPUs/,
    /smpboot: Total of 2 processors activated/,
    /clocksource: Switched to clocksource tsc\r?\n/,
    /Freeing unused kernel image \(initmem\) memory/,
    /init: Linux 6\.1\.\S+ on 2 cpu\(s\)/,
    /\/ # /,
    /\nhello\r?\n2\r?\n/,
    /Planted return probe at kernel_clone/,
    /kernel_clone returned \d+ and took \d+ ns to execute/,
    /kretprobe at \S+ unregistered/,
  ];
  let at = 0;
  for (const re of order) {
    const m = re.exec(out.slice(at));
    assert.ok(m, `console line ${re} after offset ${at}; console tail:\n${out.slice(Math.max(at, out.length - 1500))}`);
    at += m.index + m[0].length;
  }
});
