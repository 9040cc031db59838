/**
 * A local APIC in xAPIC mode (Intel SDM vol. 3 ch. 10 / "APIC" chapter):
 * the register page (ID, version, TPR, APR, PPR, EOI, LDR, DFR, SVR, ISR,
 * TMR, IRR, ESR, ICR, the LVT entries, the timer's initial / current count
 * and divide configuration), interrupt acceptance and priority (a vector
 * is offered to the CPU when its priority class is above the processor
 * priority, PPR = max(TPR, the highest in-service class)), EOI with the
 * level-triggered broadcast, IPIs through the ICR (fixed, lowest priority,
 * NMI, INIT, SIPI; shorthands), and the timer in one-shot, periodic and
 * TSC-deadline modes counting virtual time. It is the CPU's InterruptLine.
 *
 * The state at hand-off is a PC BIOS's (MP spec "virtual wire" mode): the
 * APIC globally enabled at 0xfee00000, software-disabled (SVR 0xff), and
 * on the bootstrap processor LINT0 = ExtINT unmasked, LINT1 = NMI, so the
 * 8259 PICs' requests reach the CPU through LINT0 until Linux programs the
 * APIC; with the APIC globally disabled (IA32_APIC_BASE.EN = 0) the PIC's
 * INTR reaches the CPU directly.
 */
import type { Device } from '../../memory/memory';
import type { InterruptLine, VirtualClock } from '../types';
import { ApicBus, DeliveryMode, Shorthand, type ApicMessage } from './apicBus';
import { nsForTicks, ticksIn, type TimedDevice } from './timed';

export const APIC_DEFAULT_BASE = 0xfee00000;
export const APIC_BASE_BSP = 1n << 8n, APIC_BASE_EXTD = 1n << 10n, APIC_BASE_EN = 1n << 11n;
/** register offsets */
export const R = {
  id: 0x20, version: 0x30, tpr: 0x80, apr: 0x90, ppr: 0xa0, eoi: 0xb0, rrd: 0xc0, ldr: 0xd0, dfr: 0xe0, svr: 0xf0,
  isr: 0x100, tmr: 0x180, irr: 0x200, esr: 0x280, cmci: 0x2f0, icrLo: 0x300, icrHi: 0x310,
  lvtTimer: 0x320, lvtThermal: 0x330, lvtPerf: 0x340, lvtLint0: 0x350, lvtLint1: 0x360, lvtError: 0x370,
  timerInitial: 0x380, timerCurrent: 0x390, timerDivide: 0x3e0,
} as const;
/** version register: version 0x14 (an integrated xAPIC), 6 LVT entries (max LVT index 5) */
export const APIC_VERSION = 0x00050014;
export const LVT_MASKED = 1 << 16;
export const SVR_ENABLE = 1 << 8;
export const TIMER_ONESHOT = 0, TIMER_PERIODIC = 1, TIMER_TSC_DEADLINE = 2;
/** ESR bits */
export const ESR_SEND_ILLEGAL_VECTOR = 1 << 5, ESR_RECEIVE_ILLEGAL_VECTOR = 1 << 6, ESR_ILLEGAL_REGISTER = 1 << 7;

/** What LINT0 in ExtINT mode asks: the 8259 PICs' INTA interface. */
export interface ExtIntSource {
  intr(): boolean;
  peekVector(): number;
  intAck(): number;
}

const LVT_OFFSETS = [R.lvtTimer, R.lvtThermal, R.lvtPerf, R.lvtLint0, R.lvtLint1, R.lvtError, R.cmci];
const highestBit = (words: Uint32Array): number => {
  for (let w = 7; w >= 0; w--) if (words[w]) return w * 32 + 31 - Math.clz32(words[w]);
  return -1;
};
const setBit = (w: Uint32Array, v: number, on: boolean): void => {
  if (on) w[v >> 5] |= 1 << (v & 31); else w[v >> 5] &= ~(1 << (v & 31));
};
const testBit = (w: Uint32Array, v: number): boolean => ((w[v >> 5] >>> (v & 31)) & 1) === 1;

export class LocalApic implements Device, InterruptLine, TimedDevice {
  apicBase: bigint;
  private tpr = 0;
  private ldr = 0;
  private dfr = 0xffffffff;
  private svr = 0xff;
  private readonly isr = new Uint32Array(8);
  private readonly tmr = new Uint32Array(8);
  private readonly irr = new Uint32Array(8);
  private esr = 0;
  private esrPending = 0;
  private icrLo = 0;
  private icrHi = 0;
  private readonly lvt = new Map<number, number>();
  private timerInitial = 0;
  private divideConfig = 0;
  /** the timer counts from periodCount at periodStart, then reloads timerInitial; nextExpiry is in ticks since periodStart */
  private periodCount = 0n;
  private periodStart = 0n;
  private nextExpiry = 0n;
  private timerArmed = false;
  private tscDeadline = 0n;
  private nmi = false;
  /** INIT and SIPI reach the CPU's system half through these */
  onInit: (() => void) | null = null;
  onStartup: ((vector: number) => void) | null = null;

  constructor(
    readonly id: number,
    private readonly bus: ApicBus,
    private readonly clock: VirtualClock,
    /** the timer's input clock (Hz) before the divider: the CPU's crystal / core-crystal clock it reports (CPUID 0x15) */
    readonly timerHz: bigint,
    /** the bootstrap processor: it alone has LINT0 wired to the PICs */
    readonly bsp: boolean,
    private readonly extInt: ExtIntSource | null,
  ) {
    this.apicBase = BigInt(APIC_DEFAULT_BASE) | APIC_BASE_EN | (bsp ? APIC_BASE_BSP : 0n);
    this.reset();
    bus.attach(this);
  }

  /** power-on / INIT state of the registers (the ID and IA32_APIC_BASE are kept) */
  reset(): void {
    this.tpr = 0; this.ldr = 0; this.dfr = 0xffffffff; this.svr = 0xff;
    this.isr.fill(0); this.tmr.fill(0); this.irr.fill(0);
    this.esr = 0; this.esrPending = 0; this.icrLo = 0; this.icrHi = 0;
    for (const o of LVT_OFFSETS) this.lvt.set(o, LVT_MASKED);
    if (this.bsp) { this.lvt.set(R.lvtLint0, DeliveryMode.ExtInt << 8); this.lvt.set(R.lvtLint1, DeliveryMode.Nmi << 8); }
    this.timerInitial = 0; this.divideConfig = 0; this.timerArmed = false; this.tscDeadline = 0n;
  }

  get hardwareEnabled(): boolean { return (this.apicBase & APIC_BASE_EN) !== 0n; }
  get softwareEnabled(): boolean { return (this.svr & SVR_ENABLE) !== 0; }

  // ---- InterruptLine ----

  pendingVector(): number {
    if (this.hardwareEnabled) {
      const v = highestBit(this.irr);
      if (v >= 0 && (v & 0xf0) > (this.ppr() & 0xf0)) return v;
    }
    return this.extIntActive() ? this.extInt!.peekVector() : -1;
  }

  acknowledge(vector: number): void {
    if (vector === 2 && this.nmi) { this.nmi = false; return; }
    if (this.hardwareEnabled && testBit(this.irr, vector) && (vector & 0xf0) > (this.ppr() & 0xf0)) {
      setBit(this.irr, vector, false);
      setBit(this.isr, vector, true);
      return;
    }
    if (this.extIntActive()) this.extInt!.intAck();
  }

  nmiPending(): boolean { return this.nmi; }

  /** LINT1 (the NMI pin), or an NMI message */
  raiseNmi(): void { this.nmi = true; }

  private extIntActive(): boolean {
    if (!this.extInt || !this.extInt.intr()) return false;
    if (!this.hardwareEnabled) return true;
    const lint0 = this.lvt.get(R.lvtLint0)!;
    return !(lint0 & LVT_MASKED) && ((lint0 >> 8) & 7) === DeliveryMode.ExtInt;
  }

  // ---- the bus side ----

  /** a message from the bus (IO-APIC, another APIC's ICR, our own timer / LVT) */
  receive(m: ApicMessage): void {
    switch (m.mode) {
      case DeliveryMode.Nmi: this.nmi = true; return;
      case DeliveryMode.Init:
        if (!m.assert && m.levelTriggered) return; // INIT level de-assert: no effect on an xAPIC
        this.reset();
        this.onInit?.();
        return;
      case DeliveryMode.StartUp: this.onStartup?.(m.vector); return;
      case DeliveryMode.ExtInt: return; // ExtINT comes through LINT0, not as a message
      default: this.accept(m.vector, m.levelTriggered);
    }
  }

  /** a fixed interrupt accepted into IRR (vectors 0-15 are illegal: ESR) */
  accept(vector: number, level: boolean): void {
    if (vector < 16) { this.error(ESR_RECEIVE_ILLEGAL_VECTOR); return; }
    if (!this.softwareEnabled) return;
    setBit(this.irr, vector, true);
    setBit(this.tmr, vector, level);
  }

  matchesLogical(dest: number): boolean {
    const ldr = this.ldr >>> 24;
    if ((this.dfr >>> 28) === 0xf) return (ldr & dest) !== 0; // flat model
    return (ldr >>> 4) === (dest >>> 4) && (ldr & dest & 0xf) !== 0; // cluster model
  }

  /** priority class used by lowest-priority arbitration */
  arbitrationClass(): number { return this.tpr >> 4; }

  // ---- registers ----

  private ppr(): number {
    const isrv = Math.max(highestBit(this.isr), 0);
    return (this.tpr >> 4) >= (isrv >> 4) ? this.tpr : isrv & 0xf0;
  }

  private apr(): number {
    const top = Math.max(highestBit(this.isr), highestBit(this.irr), 0);
    return (this.tpr >> 4) >= (top >> 4) ? this.tpr : top & 0xf0;
  }

  read(offset: number, size: 1 | 2 | 4 | 8): bigint {
    const reg = offset & 0xff0;
    const v = this.readReg(reg) >>> 0;
    const shift = (offset & 3) * 8;
    const mask = size >= 4 ? 0xffffffff : (1 << (size * 8)) - 1;
    return BigInt((v >>> shift) & mask);
  }

  write(offset: number, _size: 1 | 2 | 4 | 8, value: bigint): void {
    this.writeReg(offset & 0xff0, Number(value & 0xffffffffn));
  }

  private readReg(reg: number): number {
    switch (reg) {
      case R.id: return this.id << 24;
      case R.version: return APIC_VERSION;
      case R.tpr: return this.tpr;
      case R.apr: return this.apr();
      case R.ppr: return this.ppr();
      case R.ldr: return this.ldr;
      case R.dfr: return this.dfr;
      case R.svr: return this.svr;
      case R.esr: return this.esr;
      case R.icrLo: return this.icrLo & ~(1 << 12); // delivery status: always idle, messages go at once
      case R.icrHi: return this.icrHi;
      case R.timerInitial: return this.timerInitial;
      case R.timerCurrent: return Number(this.currentCount(this.clock.nowNs()));
      case R.timerDivide: return this.divideConfig;
      case R.eoi: case R.rrd: return 0;
      default: break;
    }
    if (reg >= R.isr && reg < R.isr + 0x80) return this.isr[(reg - R.isr) >> 4];
    if (reg >= R.tmr && reg < R.tmr + 0x80) return this.tmr[(reg - R.tmr) >> 4];
    if (reg >= R.irr && reg < R.irr + 0x80) return this.irr[(reg - R.irr) >> 4];
    const l = this.lvt.get(reg);
    if (l !== undefined) return l;
    this.error(ESR_ILLEGAL_REGISTER);
    return 0;
  }

  private writeReg(reg: number, v: number): void {
    switch (reg) {
      case R.tpr: this.tpr = v & 0xff; return;
      case R.eoi: this.eoi(); return;
      case R.ldr: this.ldr = v & 0xff000000; return;
      case R.dfr: this.dfr = (v | 0x0fffffff) >>> 0; return;
      case R.svr: {
        this.svr = v & 0x13ff;
        if (!this.softwareEnabled) for (const o of LVT_OFFSETS) this.lvt.set(o, this.lvt.get(o)! | LVT_MASKED);
        return;
      }
      case R.esr: this.esr = this.esrPending; this.esrPending = 0; return;
      case R.icrHi: this.icrHi = v & 0xff000000; return;
      case R.icrLo: this.icrLo = v & 0x000cdfff; this.sendIpi(); return;
      case R.timerInitial: this.startTimer(v >>> 0); return;
      case R.timerDivide: {
        const now = this.clock.nowNs(), current = this.currentCount(now);
        this.divideConfig = v & 0xb;
        if (this.timerArmed && this.timerMode() !== TIMER_TSC_DEADLINE) {
          this.periodCount = current; this.periodStart = now; this.nextExpiry = current;
        }
        return;
      }
      case R.id: case R.version: case R.apr: case R.ppr: case R.rrd: case R.timerCurrent: return; // read-only
      default: break;
    }
    if (this.lvt.has(reg)) {
      const wasDeadline = this.timerMode() === TIMER_TSC_DEADLINE;
      let val = v & (reg === R.lvtTimer ? 0x700ff : reg === R.lvtLint0 || reg === R.lvtLint1 ? 0x1a7ff : 0x107ff);
      if (!this.softwareEnabled) val |= LVT_MASKED;
      this.lvt.set(reg, val);
      if (reg === R.lvtTimer && wasDeadline !== (this.timerMode() === TIMER_TSC_DEADLINE)) {
        // switching into or out of TSC-deadline mode disarms the timer
        this.timerArmed = false; this.timerInitial = 0; this.tscDeadline = 0n;
      }
      return;
    }
    if (!(reg >= R.isr && reg < R.irr + 0x80)) this.error(ESR_ILLEGAL_REGISTER);
  }

  private eoi(): void {
    const v = highestBit(this.isr);
    if (v < 0) return;
    setBit(this.isr, v, false);
    if (testBit(this.tmr, v)) this.bus.eoi(v);
  }

  private error(bit: number): void {
    this.esrPending |= bit;
    const l = this.lvt.get(R.lvtError)!;
    if (!(l & LVT_MASKED) && (l & 0xff) >= 16) this.accept(l & 0xff, false);
  }

  private sendIpi(): void {
    const lo = this.icrLo;
    const mode = ((lo >> 8) & 7) as DeliveryMode;
    const vector = lo & 0xff;
    if ((mode === DeliveryMode.Fixed || mode === DeliveryMode.LowestPriority) && vector < 16) {
      this.error(ESR_SEND_ILLEGAL_VECTOR);
      return;
    }
    this.bus.send({
      vector, mode,
      dest: this.icrHi >>> 24,
      logical: (lo & (1 << 11)) !== 0,
      assert: (lo & (1 << 14)) !== 0,
      levelTriggered: (lo & (1 << 15)) !== 0,
      shorthand: ((lo >> 18) & 3) as Shorthand,
    }, this);
  }

  // ---- timer ----

  private timerMode(): number { return (this.lvt.get(R.lvtTimer)! >> 17) & 3; }
  /** divide configuration bits 0, 1, 3: 2, 4, 8, 16, 32, 64, 128, 1 */
  get timerDivisor(): bigint {
    const code = (this.divideConfig & 3) | ((this.divideConfig >> 1) & 4);
    return code === 7 ? 1n : 2n << BigInt(code);
  }

  private startTimer(count: number): void {
    if (this.timerMode() === TIMER_TSC_DEADLINE) return; // the initial count is ignored in TSC-deadline mode
    this.timerInitial = count;
    this.periodCount = BigInt(count);
    this.periodStart = this.clock.nowNs();
    this.nextExpiry = this.periodCount;
    this.timerArmed = count !== 0;
  }

  private ticksSince(start: bigint, now: bigint): bigint { return ticksIn(now - start, this.timerHz) / this.timerDivisor; }
  private nsOfTicks(ticks: bigint): bigint { return nsForTicks(ticks * this.timerDivisor, this.timerHz); }

  private currentCount(now: bigint): bigint {
    if (this.timerMode() === TIMER_TSC_DEADLINE || !this.timerArmed) return 0n;
    const t = this.ticksSince(this.periodStart, now);
    if (t < this.periodCount) return this.periodCount - t;
    if (this.timerMode() !== TIMER_PERIODIC) return 0n;
    const init = BigInt(this.timerInitial);
    return init - ((t - this.periodCount) % init);
  }

  /** IA32_TSC_DEADLINE (MSR 0x6e0) */
  readTscDeadline(): bigint { return this.timerMode() === TIMER_TSC_DEADLINE ? this.tscDeadline : 0n; }
  writeTscDeadline(v: bigint): void {
    if (this.timerMode() !== TIMER_TSC_DEADLINE) return; // ignored outside TSC-deadline mode
    this.tscDeadline = BigInt.asUintN(64, v);
    this.timerArmed = this.tscDeadline !== 0n;
  }

  nextEventNs(): bigint | null {
    if (!this.timerArmed) return null;
    if (this.timerMode() === TIMER_TSC_DEADLINE) return nsForTicks(this.tscDeadline, this.clock.tscHz);
    return this.periodStart + this.nsOfTicks(this.nextExpiry);
  }

  advance(nowNs: bigint): void {
    if (!this.timerArmed) return;
    const due = this.nextEventNs()!;
    if (nowNs < due) return;
    if (this.timerMode() === TIMER_TSC_DEADLINE) {
      this.tscDeadline = 0n;
      this.timerArmed = false;
    } else if (this.timerMode() === TIMER_PERIODIC) {
      // expiries passed over at once are one interrupt (IRR is one bit); the next is the next period's end
      const init = BigInt(this.timerInitial);
      const t = this.ticksSince(this.periodStart, nowNs);
      this.nextExpiry = this.periodCount + ((t - this.periodCount) / init + 1n) * init;
    } else {
      this.timerArmed = false;
    }
    const l = this.lvt.get(R.lvtTimer)!;
    if (!(l & LVT_MASKED)) this.accept(l & 0xff, false);
  }
}
