/**
 * LR/SC reservations of the harts sharing memory (the A extension's
 * reservation set): one reserved 8-byte granule per hart. An SC succeeds
 * only while its hart's reservation is still held; a store by another hart
 * to the granule, a trap, or a context switch drops it.
 *
 * While a hart holds a reservation its address space has a (no-op) write
 * observer: translated code (emulator/jit) then leaves its stores to the
 * interpreter, whose stores drop the reservations they hit (RvCpu.stored).
 */
import type { VAddr } from '../../memory/address';
import type { Memory } from '../../memory/memory';

/** What a reservation holder looks like (an RvCpu). */
export interface ReservationHolder { resAddr: number; readonly mem: Memory }

const NO_OBSERVER = (): void => undefined;

export class Reservations {
  /** the set every hart uses unless a test makes its own */
  static readonly shared = new Reservations();
  /** holders, each with the function that removes its address space's observer */
  private readonly holders = new Map<ReservationHolder, () => void>();
  /** number of holders (the store fast path tests it) */
  active = 0;

  reserve(h: ReservationHolder, a: VAddr): void {
    h.resAddr = a - (((a % 8) + 8) % 8);
    if (!this.holders.has(h)) { this.holders.set(h, h.mem.addWriteObserver(NO_OBSERVER)); this.active = this.holders.size; }
  }
  /** true when h holds a reservation covering a */
  holds(h: ReservationHolder, a: VAddr): boolean {
    return h.resAddr === a - (((a % 8) + 8) % 8);
  }
  clear(h: ReservationHolder): void {
    h.resAddr = NaN;
    const unobserve = this.holders.get(h);
    if (unobserve === undefined) return;
    this.holders.delete(h);
    this.active = this.holders.size;
    unobserve();
  }
  /** h stored [a, a+size): every other holder of those granules loses its reservation */
  storeBy(h: ReservationHolder, a: VAddr, size: number): void {
    const lo = a - (((a % 8) + 8) % 8);
    for (const o of this.holders.keys()) {
      if (o !== h && o.resAddr >= lo && o.resAddr < a + size) this.clear(o);
    }
  }
}
