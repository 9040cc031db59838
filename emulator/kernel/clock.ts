/**
 * Virtual time. The rule (documented in docs and relied on by tests):
 *
 *  - The machine runs in rounds. In a round every CPU, in CPU-number order,
 *    gets `quantum` instruction slots; an idle or halted CPU spends its slots
 *    doing nothing.
 *  - One instruction slot = 1 ns. The round starting at time T spans
 *    [T, T + quantum) on every CPU; a CPU that has retired k instructions of
 *    its current turn reads the time T + k.
 *  - HZ = 1000: jiffies = floor(time / 1 ms). The timer tick (preemption,
 *    waking halted CPUs) is handled at the first round boundary at or after
 *    each 1 ms boundary.
 *  - When every CPU is idle and at least one sleeps in hlt, time jumps to the
 *    round containing the earliest wake-up instead of spinning.
 *
 * Time is a JS number of ns (exact up to 2^53 ns, 104 days of virtual time).
 */
import { MACHINE_LIMITS, machineOption } from '../machineOptions';
export const HZ = 1000;
export const TICK_NS = 1_000_000_000 / HZ;
/** default instruction slots per CPU per round */
export const DEFAULT_QUANTUM = MACHINE_LIMITS.quantum.default;

export class VirtualClock {
  /** start of the current round (ns) */
  roundStart = 0;
  /** instruction slots used by each CPU in the current round */
  readonly used: number[];
  /** CPU whose code is running right now (-1 outside a CPU turn) */
  activeCpu = -1;

  constructor(nCpus: number, readonly quantum: number) {
    machineOption('quantum', quantum);
    this.used = new Array<number>(nCpus).fill(0);
  }

  /** ns since boot as seen from `cpu` (default: the running CPU; outside any CPU's turn, the latest time a CPU reached) */
  nowNs(cpu = this.activeCpu): number {
    if (cpu >= 0) return this.roundStart + this.used[cpu];
    let m = 0;
    for (const u of this.used) if (u > m) m = u;
    return this.roundStart + m;
  }

  now(cpu = this.activeCpu): bigint { return BigInt(this.nowNs(cpu)); }

  jiffies(cpu = this.activeCpu): bigint { return BigInt(Math.floor(this.nowNs(cpu) / TICK_NS)); }

  /** Start the next round (or the round containing `atLeast`, for idle skipping). */
  nextRound(atLeast = 0): void {
    let next = this.roundStart + this.quantum;
    if (atLeast > next) next = Math.ceil(atLeast / this.quantum) * this.quantum;
    this.roundStart = next;
    this.used.fill(0);
  }
}
