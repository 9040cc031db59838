/**
 * The full-system PC's virtual clock: virtual nanoseconds since reset,
 * moved forward only by the machine (as its CPUs retire instructions, or
 * when every CPU halts and time skips to the next device event), and the
 * TSC derived from it. The CPU's rdtsc and the local APIC's TSC-deadline
 * timer must agree: both use tscAt().
 */
import type { VirtualClock } from './types';

export class SystemClock implements VirtualClock {
  private ns = 0n;
  constructor(readonly tscHz: bigint) {
    if (tscHz <= 0n) throw new RangeError('the TSC frequency must be positive');
  }
  nowNs(): bigint { return this.ns; }
  /** move virtual time forward to `ns` (never back) */
  advanceTo(ns: bigint): void {
    if (ns < this.ns) throw new RangeError(`virtual time runs forward only: ${ns} < ${this.ns}`);
    this.ns = ns;
  }
  /** the TSC now: floor(ns * tscHz / 1e9) */
  tsc(): bigint { return tscAt(this.ns, this.tscHz); }
}

export const tscAt = (ns: bigint, tscHz: bigint): bigint => (ns * tscHz) / 1_000_000_000n;
