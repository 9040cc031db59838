/**
 * LR/SC reservations of the harts sharing memory (the A extension's
 * reservation set): one reserved 8-byte granule per hart. An SC succeeds
 * only while its hart's reservation is still held; a store by another hart
 * to the granule, a trap, or a context switch drops it.
 */
import type { VAddr } from '../../memory/address';

/** What a reservation holder looks like (an RvCpu). */
export interface ReservationHolder { resAddr: number }

export class Reservations {
  /** the set every hart uses unless a test makes its own */
  static readonly shared = new Reservations();
  private readonly holders = new Set<ReservationHolder>();
  /** number of holders (the store fast path tests it) */
  active = 0;

  reserve(h: ReservationHolder, a: VAddr): void {
    h.resAddr = a - (((a % 8) + 8) % 8);
    if (!this.holders.has(h)) { this.holders.add(h); this.active = this.holders.size; }
  }
  /** true when h holds a reservation covering a */
  holds(h: ReservationHolder, a: VAddr): boolean {
    return h.resAddr === a - (((a % 8) + 8) % 8);
  }
  clear(h: ReservationHolder): void {
    h.resAddr = NaN;
    if (this.holders.delete(h)) this.active = this.holders.size;
  }
  /** h stored [a, a+size): every other holder of those granules loses its reservation */
  storeBy(h: ReservationHolder, a: VAddr, size: number): void {
    const lo = a - (((a % 8) + 8) % 8);
    for (const o of this.holders) {
      if (o !== h && o.resAddr >= lo && o.resAddr < a + size) this.clear(o);
    }
  }
}
