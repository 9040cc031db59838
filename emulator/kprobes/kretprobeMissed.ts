/**
 * A kretprobe's calls that found no free instance (counted in nmissed):
 * each runs without one until its task is seen back at its stack level.
 * They count toward the most instances wanted at once (maxConcurrent, the
 * maxactive that would have sufficed: the nmissed warning's suggestion).
 */
import type { Task } from '../kernel/types';
import type { KprobesShared } from './parts';
import type { Kretprobe } from './kprobe';
import type { TaskKey } from './kretprobes';
import { entrySpOf, type TimedInstance } from './kretprobeInstance';

/** The part of a kretprobe's state the missed calls use. */
export interface MissedState {
  rp: Kretprobe;
  /** free instances */
  free: readonly unknown[];
  /** the most instances wanted at once: instances in use plus the missed calls still running then */
  maxConcurrent: number;
  /**
   * Per task, the entry stack pointers of calls that found no instance and
   * may still be running, outermost first. A call with entry sp S has
   * returned once the same task is seen at an entry or a return with a
   * stack pointer >= S (a running call's callees are all below S).
   */
  missedOut: Map<TaskKey, bigint[]>;
  /** the calls in missedOut */
  missedCount: number;
}

export class MissedCalls {
  /** kretprobes with missed calls that may still be running */
  private readonly missing = new Set<MissedState>();

  constructor(private readonly shared: Pick<KprobesShared, 'kernel' | 'percpu'>) {}

  /**
   * An entry took the instance `ri` (its call entered at its entry stack
   * pointer): the calls running at once now. The stack pointer is read
   * only when there are missed calls (a bigint made per hit otherwise).
   */
  entered(st: MissedState, key: TaskKey, ri: Pick<TimedInstance, 'entrySpV' | 'entrySp'>): void {
    if (st.missedCount > 0) {
      this.returnedTo(st, key, entrySpOf(ri));
      this.pruneOtherTasks(st, key);
    }
    this.count(st);
  }

  /** an entry of task `key` found no instance: the call is running without one until its task is seen back at `sp` */
  missed(st: MissedState, key: TaskKey, sp: bigint): void {
    this.returnedTo(st, key, sp);
    this.pruneOtherTasks(st, key);
    let list = st.missedOut.get(key);
    if (!list) { list = []; st.missedOut.set(key, list); }
    list.push(sp);
    st.missedCount++;
    if (st.missedCount === 1) this.missing.add(st);
    this.count(st);
  }

  /** the task is at stack level `sp`: its missed calls that entered at or below it have returned */
  returnedTo(st: MissedState, key: TaskKey, sp: bigint): void {
    const list = st.missedOut.get(key);
    if (!list) return;
    while (list.length > 0 && list[list.length - 1] <= sp) { list.pop(); st.missedCount--; }
    if (list.length === 0) st.missedOut.delete(key);
    if (st.missedCount === 0) this.missing.delete(st);
  }

  /** a task exited: its missed calls are over */
  flushTask(t: Task): void {
    for (const st of this.missing) {
      const calls = st.missedOut.get(t);
      if (!calls) continue;
      st.missedCount -= calls.length;
      st.missedOut.delete(t);
      if (st.missedCount === 0) this.missing.delete(st);
    }
  }

  private count(st: MissedState): void {
    const n = (st.rp.maxactive ?? 0) - st.free.length + st.missedCount;
    if (n > st.maxConcurrent) st.maxConcurrent = n;
  }

  /**
   * The other tasks with missed calls: those that have returned, by where
   * their stacks are now (a task on a CPU: its stack pointer; one off
   * the CPUs: the saved one, and none in flight when it is in user mode
   * or gone).
   */
  private pruneOtherTasks(st: MissedState, key: TaskKey): void {
    const kernel = this.shared.kernel;
    for (const other of [...st.missedOut.keys()]) {
      if (other === key) continue;
      if (typeof other === 'string') {
        const c = kernel.cpus[Number(other.slice(3))];
        if (c && kernel.current(c.id) === undefined) this.returnedTo(st, other, this.shared.percpu.regsOf(c).sp);
        continue;
      }
      const c = kernel.cpus[other.cpu];
      let sp: bigint | null | undefined;
      if (c && kernel.current(c.id) === other) sp = this.shared.percpu.regsOf(c).sp;
      else sp = kernel.savedKernelSp?.(other);
      if (sp === undefined) continue;
      this.returnedTo(st, other, sp === null ? 1n << 64n : sp); // null: every call of it has returned
    }
  }
}
