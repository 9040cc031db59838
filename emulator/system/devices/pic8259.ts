/**
 * The PC's two Intel 8259A programmable interrupt controllers: the master
 * at 0x20/0x21 (IRQ 0-7), the slave at 0xa0/0xa1 (IRQ 8-15) cascaded on the
 * master's IR2, and the PIIX edge/level control registers (ELCR) at
 * 0x4d0/0x4d1. Per the 8259A datasheet: the ICW1-ICW4 initialization
 * sequence, OCW1 (mask), OCW2 (non-specific / specific EOI, rotation, set
 * priority), OCW3 (IRR/ISR read, poll, special mask mode), automatic EOI,
 * fully nested priority with rotation, and the spurious IR7 when a request
 * has gone by the INTA cycle. An edge-triggered request is latched on the
 * rising edge (the edge-sense latch); a level-triggered one (ELCR or
 * ICW1.LTIM) follows the line.
 *
 * In PIC mode (no local APIC, or its LINT0 programmed ExtINT) the CPU asks
 * the pair for its vector as it would run an INTA cycle: intr() /
 * peekVector() / intAck().
 */
import type { PortDevice } from './ioBus';

class Pic8259 {
  irr = 0;
  isr = 0;
  imr = 0;
  /** the line levels last seen (edge detection) */
  lines = 0;
  /** level-triggered inputs (ELCR) */
  elcr = 0;
  ltim = false;
  /** the IR with the lowest priority; the one after it has the highest */
  lowest = 7;
  vectorBase = 0;
  icw3 = 0;
  /** 0 = initialized; 2, 3, 4: the ICW expected next */
  initStep = 0;
  needIcw4 = false;
  single = false;
  autoEoi = false;
  rotateOnAutoEoi = false;
  readIsr = false;
  poll = false;
  specialMask = false;

  constructor(readonly elcrMask: number) {}

  setLine(ir: number, level: boolean): void {
    const bit = 1 << ir;
    if (this.isLevel(ir)) {
      if (level) this.irr |= bit; else this.irr &= ~bit;
    } else if (level && !(this.lines & bit)) {
      this.irr |= bit;
    }
    this.lines = level ? this.lines | bit : this.lines & ~bit;
  }

  isLevel(ir: number): boolean { return this.ltim || ((this.elcr >> ir) & 1) === 1; }

  /** the highest-priority IR set in `mask`, or -1 */
  private highest(mask: number): number {
    for (let i = 1; i <= 8; i++) {
      const ir = (this.lowest + i) & 7;
      if (mask & (1 << ir)) return ir;
    }
    return -1;
  }
  /** 0 = highest priority .. 7 = lowest */
  private rank(ir: number): number { return (ir - this.lowest - 1) & 7; }

  /** the IR this chip would interrupt the CPU (or the master) with now, or -1 */
  pending(): number {
    const req = this.highest(this.irr & ~this.imr);
    if (req < 0) return -1;
    const inService = this.highest(this.specialMask ? this.isr & ~this.imr : this.isr);
    if (inService >= 0 && this.rank(inService) <= this.rank(req)) return -1;
    return req;
  }

  /** INTA for this chip: the IR it answers with (7 when the request went away: spurious, nothing put in service) */
  ack(): { ir: number; spurious: boolean } {
    const ir = this.pending();
    if (ir < 0) return { ir: 7, spurious: true };
    const bit = 1 << ir;
    if (!this.isLevel(ir)) this.irr &= ~bit;
    if (this.autoEoi) {
      if (this.rotateOnAutoEoi) this.lowest = ir;
    } else {
      this.isr |= bit;
    }
    return { ir, spurious: false };
  }

  write(a0: number, v: number): void {
    if (a0 === 0 && (v & 0x10)) { // ICW1
      this.imr = 0; this.isr = 0; this.irr = 0; this.lines = 0;
      this.lowest = 7; this.specialMask = false; this.readIsr = false; this.poll = false;
      this.needIcw4 = (v & 1) !== 0;
      this.single = (v & 2) !== 0;
      this.ltim = (v & 8) !== 0;
      if (!this.needIcw4) { this.autoEoi = false; this.rotateOnAutoEoi = false; }
      this.initStep = 2;
      return;
    }
    if (a0 === 1 && this.initStep) {
      if (this.initStep === 2) {
        this.vectorBase = v & 0xf8;
        this.initStep = this.single ? (this.needIcw4 ? 4 : 0) : 3;
      } else if (this.initStep === 3) {
        this.icw3 = v;
        this.initStep = this.needIcw4 ? 4 : 0;
      } else {
        this.autoEoi = (v & 2) !== 0;
        this.initStep = 0;
      }
      return;
    }
    if (a0 === 1) { this.imr = v; return; } // OCW1
    if (v & 0x08) { // OCW3
      if (v & 0x40) this.specialMask = (v & 0x20) !== 0;
      if (v & 0x02) this.readIsr = (v & 0x01) !== 0;
      this.poll = (v & 0x04) !== 0;
      return;
    }
    // OCW2
    const level = v & 7;
    switch (v >> 5) {
      case 0b001: { const ir = this.highest(this.isr); if (ir >= 0) this.isr &= ~(1 << ir); break; }
      case 0b011: this.isr &= ~(1 << level); break;
      case 0b101: { const ir = this.highest(this.isr); if (ir >= 0) { this.isr &= ~(1 << ir); this.lowest = ir; } break; }
      case 0b100: this.rotateOnAutoEoi = true; break;
      case 0b000: this.rotateOnAutoEoi = false; break;
      case 0b111: this.isr &= ~(1 << level); this.lowest = level; break;
      case 0b110: this.lowest = level; break;
      default: break; // 010: no operation
    }
  }

  read(a0: number, pollAck: () => number): number {
    if (a0 === 1) return this.imr;
    if (this.poll) {
      this.poll = false;
      return this.pending() >= 0 ? 0x80 | pollAck() : 0;
    }
    return this.readIsr ? this.isr : this.irr;
  }
}

export class PicPair implements PortDevice {
  readonly name = '8259A PICs';
  readonly byteWide = true;
  private readonly master = new Pic8259(0xf8);
  private readonly slave = new Pic8259(0xde);

  /** An ISA IRQ line 0..15 changed level. */
  setIrq(irq: number, level: boolean): void {
    if (irq < 8) this.master.setLine(irq, level);
    else this.slave.setLine(irq - 8, level);
    this.cascade();
  }

  /** the master's INT output: the CPU would be interrupted (if RFLAGS.IF) */
  intr(): boolean { return this.master.pending() >= 0; }

  /** the vector an INTA cycle would give now, without running it; -1 when INT is low */
  peekVector(): number {
    const m = this.master.pending();
    if (m < 0) return -1;
    if (m === 2 && !this.master.single) {
      const s = this.slave.pending();
      return this.slave.vectorBase | (s < 0 ? 7 : s);
    }
    return this.master.vectorBase | m;
  }

  /** the INTA cycle: the vector, the request moved to in-service (a request that went away gives IR7's vector: spurious) */
  intAck(): number {
    const m = this.master.ack();
    let vector: number;
    if (!m.spurious && m.ir === 2 && !this.master.single) {
      const s = this.slave.ack();
      vector = this.slave.vectorBase | s.ir;
    } else {
      vector = this.master.vectorBase | m.ir;
    }
    this.cascade();
    return vector;
  }

  in(port: number): number {
    if (port === 0x4d0) return this.master.elcr;
    if (port === 0x4d1) return this.slave.elcr;
    const chip = port >= 0xa0 ? this.slave : this.master;
    const v = chip.read(port & 1, () => (chip === this.master ? this.master.ack().ir : this.slave.ack().ir));
    this.cascade();
    return v;
  }

  out(port: number, _size: 1 | 2 | 4, value: number): void {
    const v = value & 0xff;
    if (port === 0x4d0) { this.master.elcr = v & this.master.elcrMask; return; }
    if (port === 0x4d1) { this.slave.elcr = v & this.slave.elcrMask; return; }
    (port >= 0xa0 ? this.slave : this.master).write(port & 1, v);
    this.cascade();
  }

  /** for inspection and tests: IRR / ISR / IMR of the master (0) or slave (1) */
  registers(chip: 0 | 1): { irr: number; isr: number; imr: number; vectorBase: number } {
    const c = chip ? this.slave : this.master;
    return { irr: c.irr, isr: c.isr, imr: c.imr, vectorBase: c.vectorBase };
  }

  /** the slave's INT output drives the master's IR2 */
  private cascade(): void {
    this.master.setLine(2, this.slave.pending() >= 0);
  }
}
