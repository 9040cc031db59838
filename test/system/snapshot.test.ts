/**
 * Snapshots of the full-system PC, with determinism as the oracle: a small
 * kernel (snapshotGuest.S, assembled with GNU as; its bytes below) takes
 * the PIT's interrupts through the 8259s, reads the CMOS clock in its
 * handler, echoes what arrives on COM1 from its receive interrupt, prints
 * a letter every 1024 turns of a loop that scatters LCG values over 4 MiB
 * of RAM and sums the TSC. Running forward from a restored snapshot to
 * instruction count N must give exactly what the original run had at N:
 * every register, the whole RAM's hash, the console bytes, the clock.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { PcRun } from '../../emulator/system/pcRun';
import { capture, restore } from '../../emulator/timetravel/snapshot';
import { PcTimeTravel } from '../../emulator/timetravel/pcTimeTravel';
import { cpio } from '../userspace/cpio';
import { bzImage } from './boot/syntheticBzImage';

/** snapshotGuest.S's .text up to its IDT (the IDT and the stack after it are zeros) */
const GUEST = Buffer.from('SI0liRUAAEiNPYIBAABIiT1NAQAASI0FyAAAALkwAAAA6AIBAABIjQXWAAAAuTQAAADo8QAAAA8BHSIBAACwEeYgsDDmIbAE5iGwAeYhsBHmoLA45qGwAuahsAHmobDu5iGw/+ahsDTmQ7Bk5kAxwOZAZrr5A7AB7ma6/AOwCO5Jx8U5MAAA+0n/xEi4LX+VTC30UVhMD6/oSLhPgWf3fnsFFEkBxUyJ60jB6yiB4/j/PwBMiasAAAACDzFJAcZB98T/AwAAdcBmuv0D7KggdPtEieDB6AqD4A+DwGFmuvgD7uukUEj/BYQAAACwAOZw5HEPtsBIAQV8AAAAsCDmIFhIz1BSZrr9A+yoAXQSZrr4A+wPtsBIAQVjAAAA7uvlsCDmIFpYSM9IicpIweIESAH6ZokCZsdCAhAAZsdCBACOSInGSMHuEGaJcgZIweggiUIIx0IMAAAAAMMPH0QAAP8DAAAAAAAAAABmDx9EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAPH4QAAAAAAA==', 'base64');
/** label offsets in snapshotGuest.S (nm) */
const TIMER_ISR = 0xe4, PRINT_POINT = 0xc8, TICKS = 0x170, RX_SUM = 0x180;
const SETUP_SECTS = 4, KERNEL_BYTES = 0x2000;

function guestRun(): PcRun {
  const img = bzImage({ kernelBytes: KERNEL_BYTES, setupSects: SETUP_SECTS });
  const at = (SETUP_SECTS + 1) * 512 + 0x200;
  img.fill(0, at);
  img.set(GUEST, at);
  return new PcRun({
    kernel: { name: 'bz', data: img }, initrd: { name: 'initrd', data: cpio([{ name: 'init', mode: 0o100755, data: '' }]) },
    cmdline: 'console=ttyS0 acpi=off', memoryMiB: 64, cpus: 1, acpi: false,
  });
}

/** everything that tells two machines apart: registers, RAM, clock, what the console printed */
function state(r: PcRun, out: number[]): string {
  const h = r.cpus[0]!;
  const ram = createHash('sha1');
  ram.update(r.machine.memory.readBytes(0, 0xa0000));
  ram.update(r.machine.memory.readBytes(0x100000, 63 * 1024 * 1024));
  return JSON.stringify({
    g: r.instructions, instret: h.instret, regs: h.debug.registers(), clock: String(r.machine.clock.nowNs()),
    ram: ram.digest('hex'), out: Buffer.from(out).toString('latin1'),
  });
}
const load = (r: PcRun): number => r.machine.boot.loadAddress + 0x200;
const run = (r: PcRun, n: number): void => { r.stop = null; const s = r.run(n); assert.equal(s.kind, 'limit', s.detail); };

describe('full-system PC snapshots', () => {
  test('restore, then run to N: the same registers, RAM, clock and console output as the first run at N (timer interrupts, CMOS reads, queued UART input)', () => {
    const r = guestRun();
    const out: number[] = [];
    r.machine.onConsole(b => out.push(b));
    run(r, 300_000);
    r.machine.consoleInput(new TextEncoder().encode('echo me\n'));
    const snap = capture(r);
    const outAtSnap = out.length;
    run(r, 2_500_000);
    const first = state(r, out);
    const ticks = r.machine.memory.read64(load(r) + TICKS), rx = r.machine.memory.read64(load(r) + RX_SUM);
    assert.ok(ticks > 20n, `the PIT interrupted ${ticks} times`);
    assert.equal(rx, BigInt([...'echo me\n'].reduce((a, c) => a + c.charCodeAt(0), 0)), 'the queued input arrived through the receive interrupt');
    assert.ok(Buffer.from(out).toString('latin1').includes('echo me'), 'and was echoed');
    restore(snap);
    out.length = outAtSnap;
    assert.equal(r.instructions, 300_000);
    run(r, 2_500_000);
    assert.equal(state(r, out), first);
  });

  test('a run cut anywhere (instruction limits, debugger breakpoints, a CPU target) retires the same instructions as one uncut run', () => {
    const whole = guestRun(), cut = guestRun();
    const a: number[] = [], b: number[] = [];
    whole.machine.onConsole(x => a.push(x));
    cut.machine.onConsole(x => b.push(x));
    run(whole, 1_500_000);
    cut.cpus[0]!.debug.setBreakpoints([BigInt(load(cut) + TIMER_ISR)]);
    let stops = 0, n = 0;
    while (cut.instructions < 1_500_000) {
      cut.stop = null;
      const s = n % 3 === 2 ? cut.run(1_500_000, () => null, { cpu: 0, instret: cut.cpus[0]!.instret + 777 }) : cut.run(Math.min(1_500_000, cut.instructions + 12_345 + n * 101));
      n++;
      if (s.kind === 'debugBreak') { stops++; cut.cpus[0]!.debug.resume(true); continue; }
      assert.equal(s.kind, 'limit', s.detail);
    }
    assert.ok(stops > 10, `${stops} breakpoint stops in the timer handler`);
    assert.equal(state(cut, b), state(whole, a));
  });

  test('PcTimeTravel: back to an instruction count, one instruction of the CPU back, back to the previous breakpoint stop; forward again retraces the run quietly', () => {
    const r = guestRun();
    const out: number[] = [];
    r.machine.onConsole(x => out.push(x));
    const tt = new PcTimeTravel(r, { interval: 150_000, captureRatio: 0 });
    const bp = BigInt(load(r) + PRINT_POINT);
    const h = r.cpus[0]!;
    h.debug.setBreakpoints([bp]);
    tt.rearm = () => h.debug.setBreakpoints([bp]);
    // run as a front end does: in chunks (a snapshot is due at a chunk's start), stopping at each breakpoint hit
    const stopsAt: string[] = [];
    for (;;) {
      r.stop = null;
      const s = tt.runForward(r.instructions + 100_000);
      if (s.kind === 'debugBreak') stopsAt.push(state(r, out));
      else assert.equal(s.kind, 'limit', s.detail);
      if (r.instructions >= 500_000) break;
      if (s.kind === 'debugBreak') h.debug.resume(true);
    }
    assert.ok(tt.snapshotCount >= 3, `${tt.snapshotCount} snapshots`);
    assert.ok(stopsAt.length > 10, `${stopsAt.length} stops`);
    const end = state(r, out), endOut = out.length;

    // reverse continue twice: the last stop before now (the machine may stand on one: not that one), then the one before
    const before = stopsAt.filter(x => JSON.parse(x).g < JSON.parse(end).g);
    const shown = (x: string): string => state(r, out.slice(0, JSON.parse(x).out.length));
    assert.ok(tt.reverseToBreak(() => true));
    assert.equal(shown(before[before.length - 1]), before[before.length - 1]);
    assert.equal(out.length, endOut, 'a re-execution prints nothing the console already had');
    assert.ok(tt.reverseToBreak(b => b.pc === bp));
    assert.equal(h.pc(), bp);
    assert.equal(shown(before[before.length - 2]), before[before.length - 2]);

    // one instruction back: the instruction before print_point (the loop's jnz)
    const at = h.instret;
    assert.deepEqual(tt.seek({ kind: 'retired', cpu: 0, instret: at - 1 }), { ok: true });
    assert.equal(h.instret, at - 1);
    assert.equal(h.pc(), bp - 2n, 'jnz main_loop (2 bytes) is right before print_point');

    // forward to where the run had got: the same state, and quiet
    h.debug.setBreakpoints([]);
    tt.rearm = () => h.debug.setBreakpoints([]);
    r.stop = null;
    h.debug.resume(false);
    tt.runForward(JSON.parse(end).g);
    assert.equal(out.length, endOut);
    assert.equal(state(r, out), end);
  });

  test('a change in the past (typed input) discards the recorded future: the run goes on from the changed machine', () => {
    const r = guestRun();
    const tt = new PcTimeTravel(r, { interval: 200_000, captureRatio: 0 });
    const messages: string[] = [];
    tt.onMessage = m => messages.push(m);
    r.stop = null; tt.runForward(1_000_000);
    assert.deepEqual(tt.seek({ kind: 'instructions', g: 500_000 }), { ok: true });
    assert.equal(r.instructions, 500_000);
    tt.mutating('typed input');
    r.machine.consoleInput([0x41]);
    assert.match(messages[0], /typed input at 500000 instructions discards the recorded run after it \(up to 1000000 instructions\)/);
    r.stop = null; tt.runForward(900_000);
    assert.equal(r.machine.memory.read64(load(r) + RX_SUM), 0x41n, 'the input typed in the past arrived');
    assert.deepEqual(tt.seek({ kind: 'instructions', g: 600_000 }), { ok: true });
    r.stop = null; tt.runForward(900_000);
    assert.equal(r.machine.memory.read64(load(r) + RX_SUM), 0x41n, 'going back and forward again keeps the change (its snapshot)');
  });
});
