/**
 * A task of the emulated kernel (task_struct): a kernel thread or a user
 * process, bound to one CPU. Its register file is saved here while it is
 * not running on its CPU.
 */
import { CpuContext } from '../arch/types';
import { Memory, Region } from '../memory/memory';
import { Task, TaskState } from './types';

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
