/**
 * The 8254 PIT on the virtual clock: mode 2 and 3 periods on IRQ0, the
 * access modes and the latch / read-back commands, mode 0's one-shot
 * terminal count, and channel 2 gated through port 0x61 as Linux's PIT
 * calibration loops use it.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Pit8254, PortB, PIT_HZ } from '../../../emulator/system/devices/pit8254';
import { nsForTicks } from '../../../emulator/system/devices/timed';
import { TestClock, TestLine } from './fakeClock';

function pit() {
  const clock = new TestClock(), line = new TestLine();
  const p = new Pit8254(clock, line.fn);
  const o = (port: number, v: number): void => p.out(port, 1, v);
  return { p, clock, line, o, at: (ticks: bigint): bigint => nsForTicks(ticks, PIT_HZ) };
}

describe('8254 PIT', () => {
  test('mode 2, lobyte/hibyte: IRQ0 every N ticks, the first N+1 ticks after the write (the load pulse)', () => {
    const { p, clock, line, o, at } = pit();
    o(0x43, 0x34); // channel 0, lo/hi, mode 2, binary: Linux's PIT clockevent periodic
    o(0x40, 0x9c); o(0x40, 0x2e); // 11932 = 100 Hz
    const first = p.nextEventNs()!;
    assert.equal(first, at(11933n));
    clock.ns = first - 1n; p.advance(clock.ns);
    assert.equal(line.rises, 0);
    clock.ns = first; p.advance(clock.ns);
    assert.equal(line.rises, 1);
    assert.equal(p.nextEventNs(), at(11933n + 11932n));
    clock.ns = at(11933n + 11932n * 5n); p.advance(clock.ns);
    assert.equal(line.rises, 2, 'five periods passed over at once are one latched request');
    assert.equal(p.nextEventNs(), at(11933n + 11932n * 6n));
  });

  test('the count reads down from N; the latch command freezes the value until both bytes are read', () => {
    const { p, clock, o, at } = pit();
    o(0x43, 0x34);
    o(0x40, 0x00); o(0x40, 0x10); // 4096
    clock.ns = at(1n + 100n);
    const rd = (): number => p.in(0x40) | (p.in(0x40) << 8);
    assert.equal(rd(), 4096 - 100);
    o(0x43, 0x00); // latch channel 0
    clock.ns = at(1n + 300n);
    assert.equal(rd(), 4096 - 100, 'latched');
    assert.equal(rd(), 4096 - 300, 'live again');
  });

  test('mode 3 square wave: period N, counting down by 2, IRQ0 on each rising edge', () => {
    const { p, clock, line, o, at } = pit();
    o(0x43, 0x36);
    o(0x40, 100); o(0x40, 0);
    clock.ns = at(1n + 10n);
    assert.equal(p.in(0x40) | (p.in(0x40) << 8), 80);
    assert.equal(p.nextEventNs(), at(101n));
    clock.ns = at(101n); p.advance(clock.ns);
    assert.equal(line.rises, 1);
  });

  test('mode 0: OUT rises once at terminal count; the counter wraps on; lobyte-only access', () => {
    const { p, clock, line, o, at } = pit();
    o(0x43, 0x10); // channel 0, lobyte, mode 0
    o(0x40, 50);
    assert.equal(p.nextEventNs(), at(51n));
    clock.ns = at(51n); p.advance(clock.ns);
    assert.equal(line.rises, 1);
    assert.equal(p.nextEventNs(), null);
    clock.ns = at(1n + 60n);
    assert.equal(p.in(0x40), (0x10000 - 10) & 0xff);
  });

  test('read-back: status (OUT, null count, access, mode) then count', () => {
    const { p, clock, o, at } = pit();
    o(0x43, 0x34);
    o(0x43, 0xc2 ^ 0x20 ^ 0x20); // read-back status and count of channel 0
    assert.equal(p.in(0x40), 0x80 | 0x40 | 0x30 | 0x04, 'OUT high, null count (no count written), lo/hi, mode 2');
    assert.equal(p.in(0x40) | (p.in(0x40) << 8), 0, 'then the latched count');
    o(0x40, 0x00); o(0x40, 0x01);
    clock.ns = at(1n + 16n);
    o(0x43, 0xd2); // count only (status bit set = not latched)
    assert.equal(p.in(0x40) | (p.in(0x40) << 8), 256 - 16);
  });

  test('channel 2 through port 0x61: the gate starts mode 0 counting, OUT (bit 5) rises at terminal count', () => {
    const { p, clock, o, at } = pit();
    const b = new PortB(p, clock);
    b.out(0x61, 1, 0x00);
    o(0x43, 0xb0); // channel 2, lo/hi, mode 0
    o(0x42, 0xff); o(0x42, 0xff);
    clock.ns = at(1000n);
    assert.equal(p.in(0x42) | (p.in(0x42) << 8), 0xffff, 'the gate is low: not counting');
    b.out(0x61, 1, 0x01);
    const t0 = clock.ns;
    clock.ns = t0 + nsForTicks(1n + 0x100n, PIT_HZ);
    assert.equal(p.in(0x42) | (p.in(0x42) << 8), 0xffff - 0x100);
    assert.equal(b.in() & 0x20, 0);
    clock.ns = t0 + nsForTicks(1n + 0xffffn, PIT_HZ);
    assert.equal(b.in() & 0x20, 0x20);
    assert.equal(b.in() & 0x01, 0x01, 'the gate bit reads back');
  });

  test('a new count in mode 2 takes effect at the end of the current period', () => {
    const { p, clock, o, at } = pit();
    o(0x43, 0x34);
    o(0x40, 100); o(0x40, 0);
    clock.ns = at(1n + 30n);
    o(0x40, 200); o(0x40, 0);
    assert.equal(p.nextEventNs(), at(101n));
    clock.ns = at(101n); p.advance(clock.ns);
    assert.equal(p.nextEventNs(), at(301n));
  });
});
