/**
 * PcRun: the full-system PC's run loop. Virtual time is one ns per
 * instruction retired; a CPU waiting in HLT lets time skip to the next
 * device event; with nothing due the machine stops as stuck; the same
 * image gives the same instruction count and time.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PcRun, VIRTUAL_HZ } from '../../emulator/system/pcRun';
import { cpio } from '../userspace/cpio';
import { bzImage } from './boot/syntheticBzImage';

const SETUP_SECTS = 4;
function machineRunning(code: number[]): PcRun {
  const img = bzImage({ kernelBytes: 0x1000, setupSects: SETUP_SECTS });
  img.set(code, (SETUP_SECTS + 1) * 512 + 0x200);
  return new PcRun({
    kernel: { name: 'bz', data: img }, initrd: { name: 'initrd', data: cpio([{ name: 'init', mode: 0o100755, data: '' }]) },
    cmdline: 'console=ttyS0 acpi=off', memoryMiB: 64, cpus: 1, acpi: false,
  });
}
const out = (port: number, v: number): number[] => [0x66, 0xba, port & 0xff, port >> 8, 0xb0, v, 0xee];
/** the 8259s as Linux sets them (vectors 0x30 / 0x38, all masked but IRQ0), then PIT channel 0 at 100 Hz */
const PICS_AND_PIT = [[0x20, 0x11], [0x21, 0x30], [0x21, 4], [0x21, 1], [0xa0, 0x11], [0xa1, 0x38], [0xa1, 2], [0xa1, 1], [0x21, 0xfe], [0xa1, 0xff],
  [0x43, 0x34], [0x40, 0x9c], [0x40, 0x2e]].flatMap(([p, v]) => out(p, v));
const STI_HLT = [0xfb, 0xf4];

describe('PcRun', () => {
  test('the TSC runs at VIRTUAL_HZ: one tick per instruction retired', () => {
    // rdtsc; mov rbx, rax; nop x 10; rdtsc; sub rax, rbx; hlt
    const r = machineRunning([0x0f, 0x31, 0x48, 0x89, 0xc3, ...new Array(10).fill(0x90), 0x0f, 0x31, 0x48, 0x29, 0xd8, 0xf4]);
    assert.equal(VIRTUAL_HZ, 1_000_000_000n);
    const stop = r.run(1000);
    assert.equal(stop.kind, 'stuck');
    assert.equal(r.cpus[0]!.reg(0), 12n, 'mov + 10 nops + the second rdtsc itself');
  });

  test('HLT with interrupts off and no device event due: the machine stops as stuck', () => {
    const r = machineRunning([0xf4]);
    const stop = r.run(1_000_000);
    assert.equal(stop.kind, 'stuck');
    assert.equal(r.instructions, 1);
  });

  test('HLT skips virtual time to the PIT\'s interrupt (10 ms at 100 Hz), which is then taken (here: no IDT, so a triple fault)', () => {
    const r = machineRunning([...PICS_AND_PIT, ...STI_HLT]);
    const stop = r.run(1_000_000_000);
    assert.equal(stop.kind, 'tripleFault');
    assert.ok(r.instructions < 100, `${r.instructions} instructions`);
    const ns = r.machine.clock.nowNs();
    assert.ok(ns >= 10_000_000n && ns < 10_100_000n, `${ns} ns`);
  });

  test('deterministic: the same image twice gives the same instructions and virtual time', () => {
    const a = machineRunning([...PICS_AND_PIT, ...STI_HLT]), b = machineRunning([...PICS_AND_PIT, ...STI_HLT]);
    a.run(1_000_000_000); b.run(1_000_000_000);
    assert.equal(a.instructions, b.instructions);
    assert.equal(a.machine.clock.nowNs(), b.machine.clock.nowNs());
  });

  test('--max-instructions: a guest spinning forever stops at the limit', () => {
    const r = machineRunning([0xeb, 0xfe]);
    assert.equal(r.run(50_000).kind, 'limit');
    assert.equal(r.instructions, 50_000);
  });
});
