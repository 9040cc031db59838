/**
 * The PC's MC146818-compatible CMOS real-time clock at 0x70 (index; bit 7
 * masks NMI) / 0x71 (data), IRQ8. The time is a fixed, deterministic
 * start (constructor) plus the virtual seconds since reset: the same run
 * reads the same dates. Per the MC146818 datasheet: time and alarm
 * registers 0-9 in BCD or binary (register B's DM bit) and 24- or 12-hour
 * form, register A (UIP, the divider and rate select), B (SET, PIE, AIE,
 * UIE, DM, 24/12), C (IRQF, PF, AF, UF, cleared by reading), D (VRT); the
 * update cycle once a virtual second with UIP high in the 244 us before it;
 * periodic, alarm and update-ended interrupts. The other 114 bytes are
 * battery-backed RAM (0x32 holds the century, as ACPI's FADT says).
 */
import type { VirtualClock } from '../types';
import type { PortDevice } from './ioBus';
import type { IrqLine, TimedDevice } from './timed';

export const REG_A = 0x0a, REG_B = 0x0b, REG_C = 0x0c, REG_D = 0x0d, REG_CENTURY = 0x32;
export const A_UIP = 0x80;
export const B_SET = 0x80, B_PIE = 0x40, B_AIE = 0x20, B_UIE = 0x10, B_DM = 0x04, B_24H = 0x02;
export const C_IRQF = 0x80, C_PF = 0x40, C_AF = 0x20, C_UF = 0x10;
const SECOND = 1_000_000_000n;
/** UIP is set this long before each update */
const UIP_NS = 244_000n;

const toBcd = (v: number): number => ((v / 10) | 0) * 16 + (v % 10);
const fromBcd = (v: number): number => (v >> 4) * 10 + (v & 15);

export class CmosRtc implements PortDevice, TimedDevice {
  readonly name = 'CMOS RTC';
  readonly byteWide = true;
  private readonly ram = new Uint8Array(128);
  private index = 0;
  /** NMI masked (port 0x70 bit 7) */
  nmiMasked = false;
  /** seconds since the Unix epoch at virtual time 0 (changed when the guest sets the clock) */
  private epochAtZero: number;
  /** the virtual second whose update has been done (flags, alarm) */
  private doneSecond = 0n;
  /** periodic interrupt: the last period index whose PF has been set */
  private donePeriod = 0n;
  private periodStart = 0n;
  private irqLevel = false;

  constructor(private readonly clock: VirtualClock, private readonly irq8: IrqLine, start: Date) {
    this.epochAtZero = Math.floor(start.getTime() / 1000);
    this.ram[REG_A] = 0x26; // 32.768 kHz time base, 1024 Hz periodic rate
    this.ram[REG_B] = B_24H;
    this.ram[REG_D] = 0x80; // the battery is good
    this.showTime(this.epochAtZero);
  }

  in(port: number): number {
    if (port === 0x70) return 0xff; // the index register is write-only
    this.advance(this.clock.nowNs());
    const r = this.index;
    switch (r) {
      case REG_A: {
        const inSecond = this.clock.nowNs() % SECOND;
        return (this.ram[REG_A] & 0x7f) | (!(this.ram[REG_B] & B_SET) && inSecond >= SECOND - UIP_NS ? A_UIP : 0);
      }
      case REG_C: {
        const v = this.ram[REG_C];
        this.ram[REG_C] = 0;
        this.updateIrq();
        return v;
      }
      default:
        if (r <= 9 && !(this.ram[REG_B] & B_SET)) this.showTime(this.secondsNow());
        return this.ram[r];
    }
  }

  out(port: number, _size: 1 | 2 | 4, value: number): void {
    const v = value & 0xff;
    if (port === 0x70) {
      this.index = v & 0x7f;
      this.nmiMasked = (v & 0x80) !== 0;
      return;
    }
    const r = this.index;
    this.advance(this.clock.nowNs());
    switch (r) {
      case REG_A:
        this.ram[REG_A] = v & 0x7f;
        this.periodStart = this.clock.nowNs();
        this.donePeriod = 0n;
        return;
      case REG_B: {
        const wasSet = (this.ram[REG_B] & B_SET) !== 0;
        if (!wasSet && (v & B_SET)) this.showTime(this.secondsNow());
        this.ram[REG_B] = (v & B_SET) ? v & ~B_UIE : v;
        if (wasSet && !(v & B_SET)) this.takeTime();
        if ((v & B_PIE) && this.periodNs() !== null) { this.periodStart = this.clock.nowNs(); this.donePeriod = 0n; }
        this.updateIrq();
        return;
      }
      case REG_C: case REG_D: return; // read-only
      default:
        this.ram[r] = v;
        // a time register written outside SET takes effect at once
        if (r <= 9 && r !== 1 && r !== 3 && r !== 5 && !(this.ram[REG_B] & B_SET)) this.takeTime();
    }
  }

  nextEventNs(): bigint | null {
    const b = this.ram[REG_B];
    let next: bigint | null = null;
    if ((b & (B_UIE | B_AIE)) && !(b & B_SET)) next = (this.doneSecond + 1n) * SECOND;
    const p = this.periodNs();
    if ((b & B_PIE) && p !== null) {
      const t = this.periodStart + (this.donePeriod + 1n) * p;
      if (next === null || t < next) next = t;
    }
    return next;
  }

  advance(nowNs: bigint): void {
    const b = this.ram[REG_B];
    const second = nowNs / SECOND;
    if (second > this.doneSecond) {
      this.doneSecond = second;
      if (!(b & B_SET)) {
        this.ram[REG_C] |= C_UF;
        this.showTime(this.secondsNow());
        if (this.alarmMatches()) this.ram[REG_C] |= C_AF;
      }
    }
    const p = this.periodNs();
    if (p !== null) {
      const period = (nowNs - this.periodStart) / p;
      if (period > this.donePeriod) { this.donePeriod = period; this.ram[REG_C] |= C_PF; }
    }
    this.updateIrq();
  }

  /** the periodic interrupt's period from register A's rate select, or null when off */
  private periodNs(): bigint | null {
    const rs = this.ram[REG_A] & 15;
    if (rs === 0) return null;
    const hz = rs === 1 ? 256 : rs === 2 ? 128 : 32768 >> (rs - 1);
    return SECOND / BigInt(hz);
  }

  private secondsNow(): number { return this.epochAtZero + Number(this.clock.nowNs() / SECOND); }

  private enc(v: number): number { return this.ram[REG_B] & B_DM ? v : toBcd(v); }
  private dec(v: number): number { return this.ram[REG_B] & B_DM ? v : fromBcd(v); }

  private encHour(h: number): number {
    if (this.ram[REG_B] & B_24H) return this.enc(h);
    const pm = h >= 12, h12 = h % 12 === 0 ? 12 : h % 12;
    return this.enc(h12) | (pm ? 0x80 : 0);
  }
  private decHour(v: number): number {
    if (this.ram[REG_B] & B_24H) return this.dec(v);
    const h12 = this.dec(v & 0x7f) % 12;
    return (v & 0x80) ? h12 + 12 : h12;
  }

  private showTime(seconds: number): void {
    const d = new Date(seconds * 1000);
    this.ram[0] = this.enc(d.getUTCSeconds());
    this.ram[2] = this.enc(d.getUTCMinutes());
    this.ram[4] = this.encHour(d.getUTCHours());
    this.ram[6] = this.enc(d.getUTCDay() + 1);
    this.ram[7] = this.enc(d.getUTCDate());
    this.ram[8] = this.enc(d.getUTCMonth() + 1);
    this.ram[9] = this.enc(d.getUTCFullYear() % 100);
    this.ram[REG_CENTURY] = this.enc(Math.floor(d.getUTCFullYear() / 100));
  }

  /** the time registers as the guest set them become the clock */
  private takeTime(): void {
    const year = this.dec(this.ram[REG_CENTURY]) * 100 + this.dec(this.ram[9]);
    const t = Date.UTC(year, this.dec(this.ram[8]) - 1, this.dec(this.ram[7]), this.decHour(this.ram[4]), this.dec(this.ram[2]), this.dec(this.ram[0]));
    if (Number.isNaN(t)) return;
    this.epochAtZero = Math.floor(t / 1000) - Number(this.clock.nowNs() / SECOND);
  }

  private alarmMatches(): boolean {
    const dontCare = (v: number): boolean => (v & 0xc0) === 0xc0;
    const [s, m, h] = [this.ram[1], this.ram[3], this.ram[5]];
    return (dontCare(s) || s === this.ram[0]) && (dontCare(m) || m === this.ram[2]) && (dontCare(h) || h === this.ram[4]);
  }

  /** IRQF = (PF & PIE) | (AF & AIE) | (UF & UIE); the IRQ8 line follows it */
  private updateIrq(): void {
    const c = this.ram[REG_C], b = this.ram[REG_B];
    const irqf = (c & b & (C_PF | C_AF | C_UF)) !== 0;
    this.ram[REG_C] = irqf ? c | C_IRQF : c & ~C_IRQF;
    if (irqf !== this.irqLevel) {
      this.irqLevel = irqf;
      this.irq8(irqf);
    }
  }
}
