/**
 * The PC's ISA interrupt wiring: each ISA IRQ line goes to the 8259 PICs
 * and to an IO-APIC pin — the same pin number, except IRQ0 (the PIT), which
 * the PC routes to IO-APIC pin 2 (the MADT's interrupt source override
 * says so to Linux, as on real boards and QEMU).
 */
import type { PicPair } from './pic8259';
import type { IoApic } from './ioApic';
import type { IrqLine } from './timed';

export const ISA_TO_GSI = (irq: number): number => (irq === 0 ? 2 : irq);

export class IsaIrqRouter {
  constructor(private readonly pics: PicPair, private readonly ioApic: IoApic | null) {}
  set(irq: number, level: boolean): void {
    this.pics.setIrq(irq, level);
    this.ioApic?.setIrq(ISA_TO_GSI(irq), level);
  }
  /** the line a device driving ISA IRQ `irq` holds */
  line(irq: number): IrqLine { return level => this.set(irq, level); }
}
