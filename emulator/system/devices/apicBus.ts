/**
 * The APIC bus (the system bus in xAPIC terms) joining the local APICs and
 * the IO-APIC: interrupt messages routed by destination (physical APIC ID,
 * or logical: flat or cluster model of each APIC's LDR/DFR; 0xff
 * broadcasts), by shorthand (self, all, all but self) and by delivery mode
 * (fixed, lowest priority: the lowest task priority, then the lowest APIC
 * ID, deterministically; NMI, INIT, SIPI, ExtINT), and the EOI broadcast of
 * a level-triggered vector back to the IO-APICs. The xAPIC MMIO page
 * (0xfee00000) is one physical range that each CPU sees as its own local
 * APIC: ApicMmio dispatches by the CPU making the access.
 */
import type { Device } from '../../memory/memory';
import type { LocalApic } from './localApic';

export const enum DeliveryMode { Fixed = 0, LowestPriority = 1, Smi = 2, Nmi = 4, Init = 5, StartUp = 6, ExtInt = 7 }
export const enum Shorthand { None = 0, Self = 1, AllIncludingSelf = 2, AllExcludingSelf = 3 }

export interface ApicMessage {
  readonly vector: number;
  readonly mode: DeliveryMode;
  /** destination field: an APIC ID (physical) or a logical mask */
  readonly dest: number;
  readonly logical: boolean;
  /** level-triggered (the IO-APIC's level pins): the vector's TMR bit is set and its EOI is broadcast */
  readonly levelTriggered: boolean;
  /** the INIT level de-assert of the ICR (level 0) is a no-op on xAPICs */
  readonly assert: boolean;
  readonly shorthand: Shorthand;
}

export interface EoiListener { eoi(vector: number): void }

export class ApicBus {
  readonly apics: LocalApic[] = [];
  private readonly eoiListeners: EoiListener[] = [];
  /** SMIs have no handler on this platform: counted */
  smis = 0;

  attach(apic: LocalApic): void { this.apics.push(apic); }
  listenEoi(l: EoiListener): void { this.eoiListeners.push(l); }

  /** the local APICs a message reaches */
  targets(m: ApicMessage, from: LocalApic | null): LocalApic[] {
    switch (m.shorthand) {
      case Shorthand.Self: return from ? [from] : [];
      case Shorthand.AllIncludingSelf: return [...this.apics];
      case Shorthand.AllExcludingSelf: return this.apics.filter(a => a !== from);
      default: break;
    }
    if (m.dest === 0xff) return [...this.apics];
    return this.apics.filter(a => (m.logical ? a.matchesLogical(m.dest) : a.id === m.dest));
  }

  send(m: ApicMessage, from: LocalApic | null): void {
    let to = this.targets(m, from);
    if (m.mode === DeliveryMode.LowestPriority && to.length > 1) {
      const best = to.reduce((a, b) => (b.arbitrationClass() < a.arbitrationClass() || (b.arbitrationClass() === a.arbitrationClass() && b.id < a.id) ? b : a));
      to = [best];
    }
    if (m.mode === DeliveryMode.Smi) { this.smis++; return; }
    for (const a of to) a.receive(m);
  }

  eoi(vector: number): void { for (const l of this.eoiListeners) l.eoi(vector); }
}

/** The local APIC page: each CPU's access reaches its own local APIC. */
export class ApicMmio implements Device {
  constructor(private readonly bus: ApicBus, private readonly currentCpu: () => number) {}
  read(offset: number, size: 1 | 2 | 4 | 8): bigint { return this.bus.apics[this.currentCpu()].read(offset, size); }
  write(offset: number, size: 1 | 2 | 4 | 8, value: bigint): void { this.bus.apics[this.currentCpu()].write(offset, size, value); }
}
