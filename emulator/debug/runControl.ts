/**
 * Run control: the one driver of the machine loop for a debugger. A job —
 * continue (time slices of Machine.runSlice with an adaptive budget) or a
 * step of one CPU (a Stepper, stepper.ts) — runs in chunks; between chunks
 * the controller yields (setImmediate by default) so requests such as pause
 * are answered while the kernel runs. The machine's own determinism makes
 * the guest's behaviour independent of the chunk sizes.
 *
 * Each job ends exactly once, through onEnd: a stop request (breakpoint,
 * oops...), the end of the machine, the instruction limit, a pause, or a
 * finished step. cancel() drops a job silently (continue after a step,
 * restart, disconnect).
 */
import type { Machine, SliceResult } from '../machine';
import type { StopRequest } from '../kernel/types';
import type { StepKind, Stepper } from './stepper';

/** Wall time one continue slice aims at. */
export const SLICE_MS = 15;
const MIN_BUDGET = 1_000;
const MAX_BUDGET = 2_000_000;

export type RunEnd =
  /** a stop request of the machine (breakpoint probe, oops, ...) on cpu */
  | { kind: 'stopped'; cpu: number; request: StopRequest }
  /** the machine ended (power off, nothing left to run, internal error) */
  | { kind: 'exited'; code: number; detail: string }
  /** the instruction limit */
  | { kind: 'limit'; instructions: number }
  /** pause() was honoured; cpu: the stepping CPU for a step job */
  | { kind: 'paused'; cpu?: number; description: string }
  /** a step finished (budget: it ran out of its instruction budget first) */
  | { kind: 'stepped'; cpu: number; step: StepKind; description: string; budget: boolean };

/** Turn `fn` into a callback on the next event-loop turn; returns a cancel function. */
export type Defer = (fn: () => void) => () => void;

const defaultDefer: Defer = fn => {
  const t = setImmediate(fn);
  return () => clearImmediate(t);
};

interface Job {
  /** Run one chunk: the end, or undefined to be called again. Never throws (errors end the job). */
  chunk(): RunEnd | undefined;
  /** the end a pause gives this job */
  paused(): RunEnd;
}

function internalError(e: unknown): RunEnd {
  return { kind: 'exited', code: 1, detail: `internal emulator error: ${e instanceof Error ? e.message : String(e)}` };
}

/** A SliceResult that is not 'running' as a RunEnd. */
function sliceEnd(r: Exclude<SliceResult, { kind: 'running' }>): RunEnd {
  switch (r.kind) {
    case 'stopped': return r;
    case 'exited': return { kind: 'exited', code: r.code, detail: r.detail };
    case 'limit': return r;
  }
}

export class RunController {
  private budget = 20_000;
  private job: Job | undefined;
  private cancelTimer: (() => void) | undefined;
  private pauseRequested = false;
  private disposed = false;

  constructor(private readonly machine: Machine, private readonly onEnd: (end: RunEnd) => void, private readonly defer: Defer = defaultDefer) {}

  /** a job (continue or step) is in progress */
  get running(): boolean { return this.job !== undefined; }
  get ended(): boolean { return this.machine.exit !== null; }

  /** Continue: run until a stop, a pause, the end, or cancel()/dispose(). No-op while a job runs. */
  resume(): void {
    if (this.disposed || this.job || this.ended) return;
    const m = this.machine;
    this.start({
      chunk: () => {
        const t0 = performance.now();
        let r: SliceResult;
        try {
          r = m.runSlice(this.budget);
        } catch (e) {
          return internalError(e);
        }
        const ms = performance.now() - t0;
        if (ms > 0) this.budget = Math.max(MIN_BUDGET, Math.min(MAX_BUDGET, Math.round(this.budget * Math.min(4, SLICE_MS / ms))));
        return r.kind === 'running' ? undefined : sliceEnd(r);
      },
      paused: () => ({ kind: 'paused', description: 'Paused' }),
    }, false);
  }

  /** Step one CPU with a stepper; its first chunk runs now (a one-instruction step ends here). */
  step(stepper: Stepper): void {
    if (this.disposed || this.job) return;
    this.start({
      chunk: () => {
        let out;
        try {
          out = stepper.runChunk();
        } catch (e) {
          return internalError(e);
        }
        if (!out) return undefined;
        if (out.kind === 'slice') return sliceEnd(out.result);
        return { kind: 'stepped', cpu: stepper.cpu, step: stepper.effectiveKind, description: out.description, budget: out.kind === 'budget' };
      },
      paused: () => ({ kind: 'paused', cpu: stepper.cpu, description: `Paused during the step after ${stepper.instructions} instructions` }),
    }, true);
  }

  /** End the job in progress at the next chunk boundary with a 'paused' end. */
  pause(): void {
    if (this.job) this.pauseRequested = true;
  }

  /** Drop the job in progress without an end. */
  cancel(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.job = undefined;
    this.pauseRequested = false;
  }

  dispose(): void {
    this.disposed = true;
    this.cancel();
  }

  private start(job: Job, now: boolean): void {
    this.job = job;
    this.pauseRequested = false;
    if (now) this.drive(job);
    else this.cancelTimer = this.defer(() => this.drive(job));
  }

  private drive(job: Job): void {
    this.cancelTimer = undefined;
    if (this.job !== job || this.disposed) return;
    let end: RunEnd | undefined;
    if (this.pauseRequested) end = job.paused();
    else end = job.chunk();
    if (this.job !== job) return; // cancelled from inside the chunk (a listener)
    if (end === undefined) {
      this.cancelTimer = this.defer(() => this.drive(job));
      return;
    }
    this.job = undefined;
    this.pauseRequested = false;
    this.onEnd(end);
  }
}
