/**
 * uprobes data structures (include/linux/uprobes.h and the early
 * user-space probes interface, reference 004), field names as in Linux.
 *
 * One Uprobe per (inode, offset): the table both interfaces share. Today's
 * interface hangs consumers on it (handler + ret_handler + filter); the
 * early interface's struct kprobe with its `user` fields is one more owner
 * of the same entry. A breakpoint is inserted per address space
 * (Insertion): in a private copy of the file page (copy-on-write, as
 * Linux's uprobe_write_opcode does), so the page cache keeps the file's
 * bytes.
 */
import type { Memory, Region } from '../memory/memory';
import type { Inode } from '../kernel/fs/vfs';
import type { PtRegs } from '../kprobes/ptRegs';
import type { ArchUprobe } from './archHooks';

/**
 * handler return value: remove the breakpoint from this process when every
 * consumer's handler returned it and no consumer's filter wants the process
 * (a consumer without a filter wants every process), as Linux 6.12 does
 */
export const UPROBE_HANDLER_REMOVE = 1;
/** MAX_URETPROBE_DEPTH: nested uretprobe instances per task; deeper entries are not hijacked (counted as missed) */
export const MAX_URETPROBE_DEPTH = 64;

/** struct uprobe_consumer */
export interface UprobeConsumer {
  /** at the probed instruction, before it runs; UPROBE_HANDLER_REMOVE asks to drop the breakpoint from this process */
  handler?(uc: UprobeConsumer, regs: PtRegs): number;
  /** at the return of the function whose entry is probed; `func` is the entry address */
  ret_handler?(uc: UprobeConsumer, func: bigint, regs: PtRegs): number;
  /** whether the breakpoint is wanted in this process (absent: everywhere) */
  filter?(uc: UprobeConsumer, proc: UprobeProcess): boolean;
}

/** What a filter and the listing see of a process. */
export interface UprobeProcess {
  readonly pid: number;
  readonly comm: string;
  readonly mm: Memory;
}

/** The early interface's struct uprobe (kprobe->user). */
export interface UserProbeLocation {
  /** the executable's inode */
  inode: Inode;
  /** offset within the file */
  offset: bigint;
  /** insert / remove: the user virtual address in `vma` */
  addr?: bigint;
  /** insert / remove: the mapping (vma) holding addr */
  vma?: Region;
  /** insert / remove: the page holding addr (its first address); must be present */
  page?: bigint;
}

/** The early interface's struct kprobe for a user-space probe. */
export interface UserKprobe {
  pre_handler?(p: UserKprobe, regs: PtRegs): number;
  post_handler?(p: UserKprobe, regs: PtRegs, flags: number): void;
  fault_handler?(p: UserKprobe, regs: PtRegs, trapnr: number): number;
  user: UserProbeLocation;
  /** hits and missed hits (kept by the engine) */
  hits?: number;
  nmissed?: number;
}

/** One breakpoint inserted in one address space. */
export interface Insertion {
  readonly mm: Memory;
  /** where in that space */
  readonly vaddr: bigint;
  /** the process it belonged to when inserted */
  pid: number;
  comm: string;
  /** inserted by insert_kprobe_userspace (or at a page read in after register_kprobe_user) */
  early: boolean;
  /** inserted for today's consumers */
  modern: boolean;
  hits: number;
}

/** struct uprobe: one (inode, offset). */
export interface Uprobe {
  readonly inode: Inode;
  readonly offset: bigint;
  /** the file's path when registered (for listing) */
  readonly path: string;
  /** the file offset of its reference counter (an SDT semaphore: refCtr.ts); 0: none */
  readonly refCtrOffset: bigint;
  consumers: UprobeConsumer[];
  /** the early interface's probe on this pair (registered once) */
  early: UserKprobe | null;
  /** arch_uprobe_analyze_insn's result (from the file's bytes at offset) */
  readonly arch: ArchUprobe;
  /** breakpoints inserted, by address space then address */
  readonly insertions: Map<Memory, Map<bigint, Insertion>>;
  hits: number;
  nmissed: number;
  /** consumer handlers disabled (the uprobe_events enable knob): breakpoints stay, handlers do not run */
  disabled: boolean;
}

/** struct return_instance */
export interface ReturnInstance {
  readonly uprobe: Uprobe;
  /** the probed function's entry (func) */
  readonly func: bigint;
  /** where the function really returns to */
  readonly origRetVaddr: bigint;
  /** stack pointer the function returns with */
  readonly stack: bigint;
  /** the return address was already the trampoline (a probed function's tail call): returns with the one below */
  readonly chained: boolean;
}

/** struct uprobe_task: per-task uprobes state. */
export interface UprobeTask {
  /** UTASK_SSTEP while the copy in the XOL slot is being stepped */
  state: 'running' | 'sstep';
  active: Uprobe | null;
  vaddr: bigint;
  slot: bigint;
  saved: Record<string, bigint>;
  /** the early probe's handlers run for this hit (post_handler after the step) */
  earlyHit: boolean;
  /** pending returns, innermost last */
  readonly returns: ReturnInstance[];
}
