/**
 * Debian's 6.1 kernel (test/linux/fetch-kernel.sh) on the full-system PC
 * with `acpi=off`, a bounded window of its boot: the translator on, then,
 * from just before "Linux version" (the decompressed kernel's own code,
 * through its own page tables), in lockstep: every translated entry is
 * replayed by the interpreter and compared (registers, count, every byte
 * stored). The same window with the interpreter alone gives the same
 * console bytes, instruction count and registers: the translator changes
 * nothing the guest can see, interrupts and device events included (the
 * run loop's slices and event cut points fall at the same counts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PcRun } from '../../../emulator/system/pcRun';
import { translatorFor, type FrontEnd } from '../../../emulator/jit';
import { x86FrontEnd } from '../../../emulator/arch/x86_64/jit';
import type { X86Cpu } from '../../../emulator/arch/x86_64/cpu';
import { debianKernel, busyboxInitramfs } from '../linuxFiles';

const CMDLINE = 'console=ttyS0 nokaslr panic=-1 acpi=off';
/** the translator alone up to here (the kernel decompresses itself: "Linux version" comes at about 175 M) */
const ON_UNTIL = 170_000_000;
/** then lockstep up to here */
const WINDOW_END = 215_000_000;

interface Seen { console: string; instructions: number; regs: bigint[]; pc: bigint; stop: string }

function boot(kernel: Uint8Array, initrd: Uint8Array, lockstepFrom: number | null): Seen {
  const run = new PcRun({
    kernel: { name: 'vmlinuz', data: kernel }, initrd: { name: 'initramfs', data: initrd },
    cmdline: CMDLINE, cpus: 1, memoryMiB: 256, acpi: false, translate: lockstepFrom === null ? 'off' : 'on',
  });
  let con = '';
  run.machine.onConsole(b => { con += String.fromCharCode(b); });
  if (lockstepFrom !== null) {
    run.run(lockstepFrom);
    assert.equal(run.stop?.kind, 'limit', run.stop?.detail);
    const cpu = (run.cpus[0] as unknown as { cpu: X86Cpu }).cpu;
    cpu.jit = translatorFor('x86_64', x86FrontEnd as unknown as FrontEnd<unknown, never>, 'lockstep') as unknown as X86Cpu['jit'];
    run.stop = null;
  }
  const stop = run.run(WINDOW_END);
  const c = run.cpus[0]!;
  return { console: con, instructions: run.instructions, regs: Array.from({ length: 16 }, (_, r) => c.reg(r)), pc: c.pc(), stop: stop.kind };
}

test('Debian 6.1 boot window (acpi=off): translator on then lockstep from the kernel\'s own start gives the interpreter\'s console, count and registers', (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  const lockstep = translatorFor('x86_64', x86FrontEnd as unknown as FrontEnd<unknown, never>, 'lockstep')!;
  const checked0 = lockstep.stats.lockstepChecked;
  const jit = boot(kernel.data, initrd.data, ON_UNTIL);
  const checked = lockstep.stats.lockstepChecked - checked0;
  assert.ok(checked > 10_000, `lockstep compared ${checked} translated entries`);
  assert.match(jit.console, /Linux version 6\.1\.\S+-cloud-amd64/);
  const interp = boot(kernel.data, initrd.data, null);
  assert.equal(jit.stop, 'limit');
  assert.equal(jit.instructions, interp.instructions);
  assert.equal(jit.console, interp.console, 'console bytes');
  assert.deepEqual([jit.pc, jit.regs], [interp.pc, interp.regs], 'cpu0 pc and registers at the window\'s end');
});
