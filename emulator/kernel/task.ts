/**
 * A task of the emulated kernel (task_struct): a kernel thread or a user
 * process, bound to one CPU. Its register file is saved here while it is
 * not running on its CPU.
 */
import { CpuContext } from '../arch/types';
import { Memory, Region } from '../memory/memory';
import { Task, TaskState } from './types';

/**
 * Tasks have no task_struct in emulated memory: `current` / `ri->task` get
 * a stable pseudo address per pid in the direct-map range (not mapped:
 * dereferencing it is a memory fault).
 */
export const TASK_STRUCT_BASE = 0xffff888000000000n;
export const TASK_STRUCT_STRIDE = 0x2000n;
/** Same idea for a user process's mm (kernel threads have mm == 0). */
export const MM_STRUCT_BASE = 0xffff888100000000n;

/** The pseudo task_struct address of a task (`current`, `ri->task`); 0 for none (an idle CPU). */
export function taskAddress(t: Task | undefined): bigint {
  return t ? TASK_STRUCT_BASE + BigInt(t.pid) * TASK_STRUCT_STRIDE : 0n;
}

/** The pseudo mm_struct address of a task: 0 for a kernel thread. */
export function mmAddress(t: Task): bigint {
  return t.user ? MM_STRUCT_BASE + BigInt(t.pid) * TASK_STRUCT_STRIDE : 0n;
}

/** Linux TASK_COMM_LEN - 1: the longest comm kept */
export const TASK_COMM_MAX = 15;

export class KTask implements Task {
  state: TaskState = 'runnable';
  exitCode?: number;
  /** saved registers while the task is not on its CPU (null: never ran and no context yet) */
  ctx: CpuContext | null = null;
  /** privilege mode saved with ctx */
  userMode: boolean;
  /** value for the hypercall/syscall return register when the task next runs (blocking calls) */
  pendingResult?: bigint;
  /** tasks blocked in thread_join on this one */
  readonly joiners: KTask[] = [];
  /** a kernel thread's function returned this (its return register at the thread-return page) */
  returnValue?: bigint;
  /** instructions this task has retired (accounting for the debugger/bench) */
  instructions = 0;

  constructor(
    readonly pid: number,
    public comm: string,
    readonly cpu: number,
    readonly user: boolean,
    /** its address space (execve gives it a new one) */
    public mm: Memory,
    readonly stackBase: bigint,
    readonly stackTop: bigint,
    /** the kernel stack region (kernel threads), for bookkeeping */
    readonly stackRegion: Region | null,
  ) {
    this.userMode = user;
    this.comm = comm.slice(0, TASK_COMM_MAX);
  }
}
