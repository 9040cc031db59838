/**
 * The Intel 8254 programmable interval timer at 0x40-0x43, clocked at
 * 1.193182 MHz on the virtual clock: three counters (channel 0 drives IRQ0,
 * channel 2's gate and output are on port 0x61 as the PC wires them, for
 * the TSC calibration loops), modes 0-5 with the datasheet's OUT waveforms,
 * lobyte / hibyte / lobyte-then-hibyte access, the counter latch command
 * and the read-back command (count and status). A new count is loaded on
 * the clock pulse after it is written (so a mode 2 counter of N first
 * interrupts N + 1 ticks after the write). BCD counting is not modelled
 * (the BCD bit is kept and read back; Linux never sets it).
 *
 * IRQ0 is an edge on each rising edge of channel 0's OUT: nextEventNs()
 * says when the next one is, advance() delivers it. Several edges passed
 * over at once are one latched request, as the PIC's edge latch would see.
 */
import type { VirtualClock } from '../types';
import type { PortDevice } from './ioBus';
import { nsForTicks, pulse, ticksIn, type IrqLine, type TimedDevice } from './timed';

export const PIT_HZ = 1_193_182n;

class Counter {
  mode = 0;
  rw = 3;
  bcd = false;
  /** the count register (N; 0 means 0x10000) */
  count = 0x10000;
  /** virtual ns when the count was written (or the gate triggered); null: not counting */
  start: bigint | null = null;
  /** ticks counted before the gate went low (modes 0, 4 resume from here) */
  frozen = 0n;
  gate: boolean;
  gateSince = 0n;
  writeHi = false;
  pendingLo = 0;
  readHi = false;
  latched: number[] = [];
  status: number | null = null;
  nullCount = true;

  constructor(gate: boolean) { this.gate = gate; }

  /** clock pulses since the count was written, while the gate allowed counting */
  private pulses(now: bigint): bigint {
    if (this.start === null) return -1n;
    if (!this.gate) return this.frozen;
    const since = this.start > this.gateSince ? this.start : this.gateSince;
    return this.frozen + ticksIn(now - since, PIT_HZ);
  }

  /** counting ticks after the load pulse, or -1 before it */
  elapsed(now: bigint): bigint {
    const p = this.pulses(now);
    return p < 1n ? -1n : p - 1n;
  }

  /** modes 2 and 3: a count written while counting takes over at the end of the period (this tick) */
  prevCount: number | null = null;
  switchTick = 0n;

  /** the count and the tick its periods start from, at counting tick t */
  private segment(t: bigint): { n: bigint; t: bigint } {
    if (this.prevCount !== null && t < this.switchTick) return { n: BigInt(this.prevCount), t };
    return this.prevCount !== null ? { n: BigInt(this.count), t: t - this.switchTick } : { n: BigInt(this.count), t };
  }

  value(now: bigint): number {
    const e = this.elapsed(now);
    if (e < 0n) return this.count & 0xffff;
    const { n, t } = this.segment(e);
    switch (this.mode) {
      case 2: return Number(n - (t % n)) & 0xffff;
      case 3: {
        const phase = t % n, high = (n + 1n) / 2n;
        const v = phase < high ? n - 2n * phase : n - 2n * (phase - high);
        return Number(v > 0n ? v : n) & 0xffff & ~1;
      }
      default: return Number(((n - t) % 0x10000n + 0x10000n) % 0x10000n);
    }
  }

  out(now: bigint): boolean {
    const e = this.elapsed(now);
    const { n, t } = this.segment(e < 0n ? 0n : e);
    switch (this.mode) {
      case 0: return e >= n;
      case 1: return e < 0n || e >= n;
      case 2: return !(e >= 0n && t % n === n - 1n);
      case 3: return e < 0n || t % n < (n + 1n) / 2n;
      case 4: case 5: return !(e === n);
      default: return true;
    }
  }

  /** the counting tick of the first rising edge of OUT after tick `after` (-1 for none) */
  nextRise(after: bigint): bigint {
    const n = BigInt(this.count);
    switch (this.mode) {
      case 0: case 1: return after < n ? n : -1n;
      case 4: case 5: return after < n + 1n ? n + 1n : -1n;
      case 2: case 3: {
        if (this.prevCount !== null) {
          if (after < this.switchTick) { const p = BigInt(this.prevCount); return (after < 0n ? 1n : after / p + 1n) * p; }
          return this.switchTick + ((after - this.switchTick) / n + 1n) * n;
        }
        return (after < 0n ? 1n : after / n + 1n) * n;
      }
      default: return -1n;
    }
  }

  /** modes 2 and 3: the last rising edge at or before tick t (-1 for none) */
  lastRise(t: bigint): bigint {
    if (this.prevCount !== null && t >= this.switchTick) {
      return this.switchTick + ((t - this.switchTick) / BigInt(this.count)) * BigInt(this.count);
    }
    const p = BigInt(this.prevCount ?? this.count);
    return t >= p ? (t / p) * p : -1n;
  }

  /** virtual ns at which counting tick `t` is reached (from the load pulse) */
  timeOfTick(t: bigint): bigint | null {
    if (this.start === null || !this.gate) return null;
    const since = this.start > this.gateSince ? this.start : this.gateSince;
    const pulses = t + 1n - this.frozen;
    return since + nsForTicks(pulses < 0n ? 0n : pulses, PIT_HZ);
  }

  setGate(level: boolean, now: bigint): void {
    if (level === this.gate) return;
    if (!level) {
      this.frozen = this.start === null ? 0n : this.pulsesAt(now);
    } else if (this.mode === 1 || this.mode === 2 || this.mode === 3 || this.mode === 5) {
      // a rising gate (re)triggers: the count reloads
      if (this.start !== null || this.mode === 1 || this.mode === 5) { this.start = now; this.frozen = 0n; }
    }
    this.gate = level;
    this.gateSince = now;
  }
  private pulsesAt(now: bigint): bigint { const p = this.pulses(now); return p < 0n ? 0n : p; }
}

export class Pit8254 implements PortDevice, TimedDevice {
  readonly name = '8254 PIT';
  readonly byteWide = true;
  private readonly ch = [new Counter(true), new Counter(true), new Counter(false)];
  /** the counting tick of channel 0's last rising edge delivered as IRQ0 */
  private lastIrqTick = -1n;

  constructor(private readonly clock: VirtualClock, private readonly irq0: IrqLine) {}

  in(port: number): number {
    const c = this.ch[port - 0x40];
    if (!c) return 0xff; // the control word register is write-only
    if (c.status !== null) { const s = c.status; c.status = null; return s; }
    if (c.latched.length) return c.latched.shift()!;
    const v = c.value(this.clock.nowNs());
    switch (c.rw) {
      case 1: return v & 0xff;
      case 2: return v >> 8;
      default: { const hi = c.readHi; c.readHi = !hi; return hi ? v >> 8 : v & 0xff; }
    }
  }

  out(port: number, _size: 1 | 2 | 4, value: number): void {
    const v = value & 0xff, now = this.clock.nowNs();
    if (port === 0x43) { this.control(v, now); return; }
    const c = this.ch[port - 0x40];
    let count: number;
    switch (c.rw) {
      case 1: count = v; break;
      case 2: count = v << 8; break;
      default:
        if (!c.writeHi) { c.pendingLo = v; c.writeHi = true; if (c.mode === 0) c.start = null; return; }
        c.writeHi = false;
        count = c.pendingLo | (v << 8);
    }
    this.load(port - 0x40, count === 0 ? 0x10000 : count, now);
  }

  /** Port 0x61 bit 0: channel 2's gate. */
  setGate2(level: boolean): void { this.ch[2].setGate(level, this.clock.nowNs()); }
  /** Channel 2's OUT (port 0x61 bit 5). */
  out2(): boolean { return this.ch[2].out(this.clock.nowNs()); }

  nextEventNs(): bigint | null {
    const c = this.ch[0];
    if (c.start === null) return null;
    const t = c.nextRise(this.lastIrqTick);
    return t < 0n ? null : c.timeOfTick(t);
  }

  advance(nowNs: bigint): void {
    const c = this.ch[0];
    if (c.start === null) return;
    const now = c.elapsed(nowNs);
    let t = c.nextRise(this.lastIrqTick), last = -1n;
    while (t >= 0n && t <= now) {
      last = t;
      if (c.mode === 2 || c.mode === 3) { last = c.lastRise(now); break; }
      t = c.nextRise(t);
    }
    if (last >= 0n) {
      this.lastIrqTick = last;
      pulse(this.irq0);
    }
  }

  private control(v: number, now: bigint): void {
    const sel = v >> 6;
    if (sel === 3) { this.readBack(v, now); return; }
    const c = this.ch[sel];
    const rw = (v >> 4) & 3;
    if (rw === 0) { // counter latch command: the first one holds until read
      if (!c.latched.length) this.latch(c, now);
      return;
    }
    c.rw = rw;
    c.mode = ((v >> 1) & 7) > 5 ? (v >> 1) & 3 : (v >> 1) & 7;
    c.bcd = (v & 1) === 1;
    c.start = null;
    c.frozen = 0n;
    c.prevCount = null;
    c.writeHi = false;
    c.readHi = false;
    c.latched = [];
    c.nullCount = true;
    if (sel === 0) this.lastIrqTick = -1n;
  }

  private load(i: number, count: number, now: bigint): void {
    const c = this.ch[i];
    const running = c.start !== null && (c.mode === 2 || c.mode === 3);
    const t = c.elapsed(now);
    if (running && t >= 0n && c.prevCount === null) {
      // modes 2 and 3 take a new count at the end of the current period
      c.switchTick = c.nextRise(t);
      c.prevCount = c.count;
      c.count = count;
    } else if (running && t >= 0n) {
      c.count = count; // a second new count in the same period replaces the first
    } else {
      c.prevCount = null;
      c.count = count;
      c.frozen = 0n;
      c.start = (c.mode === 1 || c.mode === 5) ? null : now;
    }
    c.nullCount = false;
    if (i === 0) this.lastIrqTick = -1n;
  }

  private latch(c: Counter, now: bigint): void {
    const v = c.value(now);
    c.latched = c.rw === 1 ? [v & 0xff] : c.rw === 2 ? [v >> 8] : [v & 0xff, v >> 8];
  }

  private readBack(v: number, now: bigint): void {
    for (let i = 0; i < 3; i++) {
      if (!(v & (2 << i))) continue;
      const c = this.ch[i];
      if (!(v & 0x20) && !c.latched.length) this.latch(c, now);
      if (!(v & 0x10) && c.status === null) {
        c.status = (c.out(now) ? 0x80 : 0) | (c.nullCount ? 0x40 : 0) | (c.rw << 4) | (c.mode << 1) | (c.bcd ? 1 : 0);
      }
    }
  }
}

/**
 * Port 0x61, the PC's "port B": bit 0 gates PIT channel 2, bit 1 enables the
 * speaker, bits 2-3 enable the parity / I/O-check NMIs (kept); it reads
 * channel 2's OUT in bit 5 and the refresh toggle in bit 4 (a 15.085 us
 * square wave of virtual time).
 */
export class PortB implements PortDevice {
  readonly name = 'port B (0x61)';
  readonly byteWide = true;
  private value = 0;
  constructor(private readonly pit: Pit8254, private readonly clock: VirtualClock) {}
  in(): number {
    const refresh = (this.clock.nowNs() / 15085n) % 2n === 1n ? 0x10 : 0;
    return (this.value & 0x0f) | refresh | (this.pit.out2() ? 0x20 : 0);
  }
  out(_port: number, _size: 1 | 2 | 4, v: number): void {
    this.value = v & 0x0f;
    this.pit.setGate2((v & 1) === 1);
  }
}
