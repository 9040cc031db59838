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
 *  - Work done on a CPU outside its instruction stream (probe handler
 *    steps, Machine.charge) is owed time: it counts in that CPU's time at
 *    once, and is paid from the CPU's next rounds (their first slots are
 *    spent on it), so the CPU's time never goes backwards and the current
 *    turn is not cut short (a probe hit finishes its single-step).
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
  /** slots charged to each CPU and not yet paid from a round (see the rule above) */
  readonly owed: number[];

  constructor(nCpus: number, readonly quantum: number) {
    machineOption('quantum', quantum);
    this.used = new Array<number>(nCpus).fill(0);
    this.owed = new Array<number>(nCpus).fill(0);
  }

  /** ns since boot as seen from `cpu` (default: the running CPU; outside any CPU's turn, the latest time a CPU reached) */
  nowNs(cpu = this.activeCpu): number {
    if (cpu >= 0) return this.roundStart + this.used[cpu] + this.owed[cpu];
    return this.latestNs();
  }

  /**
   * nowNs outside any CPU's turn. A function of its own, with a plain loop:
   * a closure in nowNs capturing a local would make every call of that hot
   * function (each probe hit's record) allocate its context.
   */
  private latestNs(): number {
    let m = 0;
    for (let i = 0; i < this.used.length; i++) if (this.used[i] + this.owed[i] > m) m = this.used[i] + this.owed[i];
    return this.roundStart + m;
  }

  /** Work of `slots` instruction slots done on `cpu` outside its instruction stream: owed time. */
  charge(cpu: number, slots: number): void {
    this.owed[cpu] += slots;
  }

  now(cpu = this.activeCpu): bigint { return BigInt(this.nowNs(cpu)); }

  jiffies(cpu = this.activeCpu): bigint { return BigInt(Math.floor(this.nowNs(cpu) / TICK_NS)); }

  /** Start the next round (or the round containing `atLeast`, for idle skipping). */
  nextRound(atLeast = 0): void {
    let next = this.roundStart + this.quantum;
    if (atLeast > next) next = Math.ceil(atLeast / this.quantum) * this.quantum;
    const skipped = next - this.roundStart - this.quantum;
    this.roundStart = next;
    for (let i = 0; i < this.used.length; i++) {
      // owed time is paid first: those slots of the new round are already spent
      const owed = Math.max(0, this.owed[i] - skipped);
      this.used[i] = Math.min(owed, this.quantum);
      this.owed[i] = owed - this.used[i];
    }
  }
}
