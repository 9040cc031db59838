/**
 * A task of the emulated kernel (task_struct): a kernel thread or a user
 * process, bound to one CPU. Its register file is saved here while it is
 * not running on its CPU.
 */
import { CpuContext } from '../arch/types';
import { Memory, PERM_R, PERM_W, Region } from '../memory/memory';
import { mustVAddr } from '../memory/address';
import { PAGE_SIZE } from '../memory/backing';
import { Task, TaskState } from './types';

/**
 * A task's struct task_struct lives at a stable address per pid in the
 * direct-map range: `current` / `ri->task` give it. Its page is mapped the
 * first time the address is handed to C code, and the fields the kernel
 * keeps (TASK_STRUCT) are written each time (publishTaskStruct); the rest
 * of the stride is not mapped (reading past the struct is a memory fault).
 */
export const TASK_STRUCT_BASE = 0xffff888000000000n;
export const TASK_STRUCT_STRIDE = 0x2000n;
/** Same idea for a user process's mm (kernel threads have mm == 0). */
export const MM_STRUCT_BASE = 0xffff888100000000n;

/** The pseudo task_struct address of a task (`current`, `ri->task`); 0 for none (an idle CPU). */
export function taskAddress(t: Task | undefined): bigint {
  return t ? TASK_STRUCT_BASE + BigInt(t.pid) * TASK_STRUCT_STRIDE : 0n;
}

/** The pseudo mm_struct address of a task: 0 for a kernel thread (the used one's while it has called kthread_use_mm). */
export function mmAddress(t: Task): bigint {
  if (!t.user) return t.usedMm ? mmAddressOfPid(t.usedMm.pid) : 0n;
  return mmAddressOfPid(t.pid);
}

/** the pseudo mm_struct address of user process `pid`'s address space */
export function mmAddressOfPid(pid: number): bigint {
  return MM_STRUCT_BASE + BigInt(pid) * TASK_STRUCT_STRIDE;
}

/** the pid whose address space a pseudo mm_struct address names, or null for one that is no such address */
export function pidOfMmAddress(a: bigint): number | null {
  const off = a - MM_STRUCT_BASE;
  if (off <= 0n || off % TASK_STRUCT_STRIDE !== 0n || off / TASK_STRUCT_STRIDE > 0x7fffffffn) return null;
  return Number(off / TASK_STRUCT_STRIDE);
}

/**
 * The user memory a task's user accesses reach (copy_from_user, a probe's
 * +u / ustring fetch): a user task's own address space, a kernel thread's
 * while it uses a process's (kthread_use_mm), else none (Linux's kernel
 * threads have no user half: such an access faults).
 */
export function userMemoryOf(t: Task | undefined): Memory | null {
  if (!t) return null;
  if (t.user) return t.mm;
  return t.usedMm?.mm ?? null;
}

/**
 * The fields of struct task_struct a module sees (examples/include/linux/
 * sched.h, which must match): flags u32 (PF_KTHREAD), pid, tgid (pid_t),
 * mm, active_mm (struct mm_struct *: NULL for a kernel thread), comm
 * (TASK_COMM_LEN bytes).
 */
export const TASK_STRUCT = { flags: 0, pid: 4, tgid: 8, mm: 16, active_mm: 24, comm: 32, size: 48 } as const;
/** Linux's PF_KTHREAD */
export const PF_KTHREAD = 0x00200000;
const TASK_COMM_LEN = 16;

/**
 * The task's struct task_struct written at taskAddress(t) in the kernel's
 * memory as it is now (mm set for a user process, NULL and PF_KTHREAD for
 * a kernel thread); its address (0 for none).
 */
export function publishTaskStruct(mem: Memory, t: Task | undefined): bigint {
  if (!t) return 0n;
  const a = taskAddress(t);
  const v = mustVAddr(a);
  if (!mem.isMapped(v, TASK_STRUCT.size)) mem.map(v, PAGE_SIZE, PERM_R | PERM_W, `task_struct of pid ${t.pid}`);
  const b = new Uint8Array(TASK_STRUCT.size);
  const dv = new DataView(b.buffer);
  const mm = mmAddress(t);
  dv.setUint32(TASK_STRUCT.flags, t.user ? 0 : PF_KTHREAD, true);
  dv.setInt32(TASK_STRUCT.pid, t.pid, true);
  dv.setInt32(TASK_STRUCT.tgid, (t as { tgid?: number }).tgid ?? t.pid, true);
  dv.setBigUint64(TASK_STRUCT.mm, mm, true);
  dv.setBigUint64(TASK_STRUCT.active_mm, mm, true);
  b.set(new TextEncoder().encode(t.comm).subarray(0, TASK_COMM_LEN - 1), TASK_STRUCT.comm);
  mem.writeBytes(v, b);
  return a;
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
  /** a kernel thread's borrowed address space (kthread_use_mm): whose, and its memory */
  usedMm: { pid: number; mm: Memory } | null = null;

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
