/**
 * Runs a Machine in time slices on the adapter's event loop: each slice runs
 * a budget of instructions, then yields with setImmediate so DAP requests
 * (pause, threads, evaluate...) are answered while the kernel runs. The
 * budget adapts to keep a slice near SLICE_MS of wall time; the machine's
 * own determinism makes the guest's behaviour independent of the budget.
 */
import { Machine, SliceResult } from '../emulator/machine';
import { StopRequest } from '../emulator/kernel/types';

export const SLICE_MS = 15;
const MIN_BUDGET = 1_000;
const MAX_BUDGET = 2_000_000;

export type RunnerStop =
  | { kind: 'stopped'; cpu: number; request: StopRequest }
  | { kind: 'paused' }
  | { kind: 'exited'; code: number; detail: string }
  | { kind: 'limit'; instructions: number };

export class MachineRunner {
  private budget = 20_000;
  private timer: NodeJS.Immediate | undefined;
  private pauseRequested = false;
  private disposed = false;

  constructor(private readonly machine: Machine, private readonly onStop: (s: RunnerStop) => void) {}

  get running(): boolean { return this.timer !== undefined; }
  get ended(): boolean { return this.machine.exit !== null; }

  /** Start (or keep) running until a stop, a pause, the end or dispose(). */
  resume(): void {
    if (this.disposed || this.timer || this.ended) return;
    this.pauseRequested = false;
    this.timer = setImmediate(() => this.slice());
  }

  /** Stop at the next slice boundary; onStop({kind:'paused'}) follows (unless something else stops first). */
  pause(): void {
    if (this.timer) this.pauseRequested = true;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
  }

  private slice(): void {
    this.timer = undefined;
    if (this.disposed) return;
    if (this.pauseRequested) {
      this.pauseRequested = false;
      this.onStop({ kind: 'paused' });
      return;
    }
    const t0 = performance.now();
    let r: SliceResult;
    try {
      r = this.machine.runSlice(this.budget);
    } catch (e) {
      this.onStop({ kind: 'exited', code: 1, detail: `internal emulator error: ${e instanceof Error ? e.message : String(e)}` });
      return;
    }
    const ms = performance.now() - t0;
    if (ms > 0) this.budget = Math.max(MIN_BUDGET, Math.min(MAX_BUDGET, Math.round(this.budget * Math.min(4, SLICE_MS / ms))));
    if (r.kind === 'running') {
      this.timer = setImmediate(() => this.slice());
      return;
    }
    if (r.kind === 'stopped') this.pauseRequested = false;
    this.onStop(r);
  }
}
