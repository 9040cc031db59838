/**
 * Per-CPU run queues, round-robin. Every task is bound to its CPU. A switch
 * saves the outgoing task's register file (Cpu.saveContext) and restores the
 * incoming one's, with its address space and privilege mode. Nothing here
 * depends on the architecture.
 */
import { Cpu } from '../arch/types';
import { KTask } from './task';

export interface RunQueue {
  /** task on the CPU (undefined = idle, Linux's swapper/N) */
  current: KTask | undefined;
  /** runnable tasks waiting for the CPU, in round-robin order */
  readonly queue: KTask[];
  /** the CPU was stopped by an oops: it runs nothing any more */
  dead: boolean;
  /** hlt: the CPU sleeps until this virtual time (ns) unless woken */
  haltedUntil: number;
}

/** A pending return value for a task that blocked in a call (register index, value). */
export interface PendingResult { reg: number; value: bigint }

export class Scheduler {
  readonly rq: RunQueue[];
  private readonly pending = new Map<KTask, PendingResult>();
  /** tasks switched in/out (diagnostics) */
  switches = 0;
  /** called when a task is given a CPU, its registers restored (user processes take their pending signals) */
  onSwitchIn: ((cpu: Cpu, t: KTask) => void) | null = null;

  constructor(private readonly cpus: readonly Cpu[]) {
    this.rq = cpus.map(() => ({ current: undefined, queue: [], dead: false, haltedUntil: 0 }));
  }

  enqueue(t: KTask): void {
    t.state = 'runnable';
    this.rq[t.cpu].queue.push(t);
    this.rq[t.cpu].haltedUntil = 0;
  }

  /** Make a blocked task runnable; `result` goes into its return register when it next runs. */
  wake(t: KTask, result?: PendingResult): void {
    if (t.state !== 'blocked') return;
    if (result) this.pending.set(t, result);
    this.enqueue(t);
  }

  /**
   * Wake a task that others wait on (the thread serving user space's system calls) ahead of the
   * round-robin queue: it runs at its CPU's next switch, as a woken task that slept is picked
   * first by Linux's scheduler.
   */
  wakeFirst(t: KTask, result?: PendingResult): void {
    if (t.state !== 'blocked') return;
    if (result) this.pending.set(t, result);
    t.state = 'runnable';
    this.rq[t.cpu].queue.unshift(t);
    this.rq[t.cpu].haltedUntil = 0;
  }

  /** True when the CPU has a task to run now (current or queued). */
  hasWork(cpu: number): boolean {
    const q = this.rq[cpu];
    return !q.dead && (q.current !== undefined || q.queue.length > 0);
  }

  /** Give the CPU to the next runnable task; the current one (if still runnable) goes to the tail. */
  schedule(cpu: number): KTask | undefined {
    const q = this.rq[cpu];
    const prev = q.current;
    if (prev && prev.state === 'runnable' && q.queue.length === 0) return prev;
    if (prev && prev.state === 'runnable') q.queue.push(prev);
    const next = q.queue.shift();
    this.switchTo(cpu, prev, next);
    return next;
  }

  /** Take the CPU away from a task that stopped being runnable (blocked/exited) and run the next. */
  deschedule(cpu: number): KTask | undefined {
    const q = this.rq[cpu];
    const prev = q.current;
    const next = q.queue.shift();
    this.switchTo(cpu, prev, next);
    return next;
  }

  private switchTo(cpuId: number, prev: KTask | undefined, next: KTask | undefined): void {
    const q = this.rq[cpuId];
    const cpu = this.cpus[cpuId];
    if (prev === next) return;
    if (prev && prev.state !== 'exited') {
      prev.ctx = cpu.saveContext();
      prev.userMode = cpu.userMode;
    }
    q.current = next;
    if (!next) return;
    this.switches++;
    cpu.mem = next.mm;
    cpu.userMode = next.userMode;
    if (next.ctx) cpu.restoreContext(next.ctx);
    const p = this.pending.get(next);
    if (p) {
      this.pending.delete(next);
      cpu.setReg(p.reg, p.value);
    }
    if (next.user && this.onSwitchIn) this.onSwitchIn(cpu, next);
  }
}
