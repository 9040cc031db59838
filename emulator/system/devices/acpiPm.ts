/**
 * The ACPI fixed hardware the FADT describes (at the PIIX4's usual ports):
 * the PM1a event block at 0x600 (PM1_STS, write 1 to clear; PM1_EN), the
 * PM1a control block at 0x604 (SCI_EN reads set: always in ACPI mode;
 * SLP_TYP with SLP_EN enters a sleep state: S5 is soft-off), and the ACPI
 * power-management timer at 0x608: a free-running 24-bit counter at
 * 3.579545 MHz on the virtual clock (TMR_STS / the SCI on its overflow are
 * not raised: Linux uses the timer only as a clocksource and a calibration
 * reference).
 */
import type { VirtualClock } from '../types';
import type { PortDevice } from './ioBus';
import { ticksIn } from './timed';

export const PM1A_EVT = 0x600;
export const PM1A_CNT = 0x604;
export const PM_TMR = 0x608;
export const SCI_IRQ = 9;
export const PM_TIMER_HZ = 3_579_545n;
/** the sleep type \_S5 names (DSDT) */
export const SLP_TYP_S5 = 5;
export const PM1_SCI_EN = 1 << 0, PM1_SLP_EN = 1 << 13;

export class AcpiPm implements PortDevice {
  readonly name = 'ACPI PM (PM1a, PM timer)';
  readonly byteWide = false;
  private sts = 0;
  private en = 0;
  private cnt = PM1_SCI_EN;

  constructor(private readonly clock: VirtualClock, private readonly sleep: (slpTyp: number) => void) {}

  /** the PM timer's count now (24 bits) */
  timer(): number { return Number(ticksIn(this.clock.nowNs(), PM_TIMER_HZ) & 0xffffffn); }

  in(port: number, size: 1 | 2 | 4): number {
    let v: number;
    if (port >= PM_TMR && port < PM_TMR + 4) v = this.timer() / 2 ** (8 * (port - PM_TMR));
    else if (port >= PM1A_CNT && port < PM1A_CNT + 2) v = this.cnt >> (8 * (port - PM1A_CNT));
    else if (port >= PM1A_EVT && port < PM1A_EVT + 4) v = (this.sts | (this.en << 16)) / 2 ** (8 * (port - PM1A_EVT));
    else v = 0xffffffff;
    return Math.floor(v) % 2 ** (8 * size);
  }

  out(port: number, size: 1 | 2 | 4, value: number): void {
    if (port === PM1A_EVT) {
      this.sts &= ~(value & 0xffff);
      if (size === 4) this.en = (value >>> 16) & 0xffff;
    } else if (port === PM1A_EVT + 2) {
      this.en = value & 0xffff;
    } else if (port === PM1A_CNT) {
      this.cnt = (value & ~PM1_SLP_EN & 0xffff) | PM1_SCI_EN;
      if (value & PM1_SLP_EN) this.sleep((value >> 10) & 7);
    }
  }
}
