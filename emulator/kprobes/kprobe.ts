/**
 * kprobes data structures (include/linux/kprobes.h), field names as in Linux
 * so that anyone who knows the kernel API finds them. Handlers are plain
 * TypeScript functions with the kernel's signatures; `regs` is a live
 * pt_regs view of the CPU that hit the probe (writes go to the CPU).
 */
import type { Task } from '../kernel/types';
import { fromVAddr, toVAddr, u64, vaddrFromHalves, VAddr } from '../memory/address';
import type { PtRegs } from './ptRegs';

/** kprobe.flags bits (Linux values). */
export const KPROBE_FLAG_GONE = 1;
export const KPROBE_FLAG_DISABLED = 2;
export const KPROBE_FLAG_OPTIMIZED = 4;
export const KPROBE_FLAG_FTRACE = 8;

/** kprobe_ctlblk.kprobe_status values. */
export const enum KprobeStatus {
  NONE = 0,
  HIT_ACTIVE = 1,
  HIT_SS = 2,
  REENTER = 3,
  HIT_SSDONE = 4,
}

export type KprobePreHandler = (p: Kprobe, regs: PtRegs) => number;
export type KprobePostHandler = (p: Kprobe, regs: PtRegs, flags: number) => void;
export type KprobeFaultHandler = (p: Kprobe, regs: PtRegs, trapnr: number) => number;

/** Arch-specific copy of the probed instruction (struct arch_specific_insn). */
export interface ArchSpecificInsn {
  /** address of the instruction slot holding the (fixed-up) copy; 0n when simulated */
  insn: bigint;
  /** length of the original instruction in bytes */
  length: number;
  /** 'slot' = single-step the copy, 'simulate' = arch simulates it */
  mode: 'slot' | 'simulate';
  /** arch-private data (decoded flow, opcode...) */
  readonly arch: Readonly<Record<string, unknown>>;
  /**
   * The kprobe booster's tristate flag (2006 paper, Linux ainsn.boostable):
   * -1 = cannot be boosted, 0 = boostable but the jump back is not yet
   * appended (set by prepare), 1 = ready: later hits of a probe without a
   * post_handler jump straight into the slot, skipping the single-step
   * trap. Absent = -1.
   */
  boostable?: -1 | 0 | 1;
  /**
   * The same addresses as VAddr numbers, for the hit path (no BigInt per
   * hit), set by prepare with `insn` when the arch fills them: the slot
   * (insn) and the address after the probed instruction (probe address +
   * length: where a stepped slot resumes on arm64 / riscv).
   */
  insnV?: VAddr;
  nextV?: VAddr;
}

/** struct kprobe */
export interface Kprobe {
  /** probe address; set by registration when symbol_name is used */
  addr?: bigint;
  symbol_name?: string;
  offset?: bigint;
  pre_handler?: KprobePreHandler;
  post_handler?: KprobePostHandler;
  /** called when the single-step or one of this probe's handlers faults; 1 = handled */
  fault_handler?: KprobeFaultHandler;
  flags?: number;
  /** hits that ran no handler (reentry, kretprobe out of instances for rp.nmissed) */
  nmissed?: number;
  /** times this probe's handlers ran (an emulator addition: per-probe hit count) */
  hits?: number;
  /** engine-assigned id, stable while registered (events, debugger) */
  id?: number;
  /** saved original bytes at addr (kprobe_opcode_t), set by prepare */
  opcode?: Uint8Array;
  ainsn?: ArchSpecificInsn;
}

/** struct kretprobe_instance */
export interface KretprobeInstance {
  rp: Kretprobe;
  /** real return address, replaced by the trampoline */
  ret_addr: bigint;
  task: Task | undefined;
  /** address (in emulated kernel memory) of this instance's data_size bytes */
  data: bigint;
  /** address of the stack slot that held the return address (arch may use 0n) */
  stack: bigint;
  /** CPU that took the entry (for tasks-less kernels) */
  cpu: number;
}

/**
 * The engine's struct kretprobe_instance. ret_addr and stack are held as
 * VAddr numbers, a BigInt made only when someone reads them (or kept when
 * the value is not canonical), so that a call's entry and return through
 * the hot path allocate none. The arch hooks' fast paths set them with
 * setRetHalves / stackV.
 */
export class KretprobeInstanceRec implements KretprobeInstance {
  task: Task | undefined = undefined;
  cpu = -1;
  /** ret_addr as a VAddr; NaN: not canonical (retB holds it) */
  retV: VAddr = 0;
  private retB = 0n;
  /** stack as a VAddr; NaN: not canonical (stackB holds it) */
  stackV: VAddr = 0;
  private stackB = 0n;

  constructor(public rp: Kretprobe, public data: bigint) {}

  get ret_addr(): bigint { const v = this.retV; return v === v ? fromVAddr(v) : this.retB; }
  set ret_addr(a: bigint) {
    const v = toVAddr(a);
    this.retV = v === null ? NaN : v;
    if (v === null) this.retB = BigInt.asUintN(64, a);
  }

  /** ret_addr = the 64-bit value of 32-bit halves lo, hi */
  setRetHalves(lo: number, hi: number): void {
    const v = vaddrFromHalves(lo, hi);
    this.retV = v === null ? NaN : v;
    if (v === null) this.retB = u64(lo, hi);
  }

  get stack(): bigint { const v = this.stackV; return v === v ? fromVAddr(v) : this.stackB; }
  set stack(a: bigint) {
    const v = toVAddr(a);
    this.stackV = v === null ? NaN : v;
    if (v === null) this.stackB = BigInt.asUintN(64, a);
  }
}

export type KretprobeHandler = (ri: KretprobeInstance, regs: PtRegs) => number;

/** struct kretprobe */
export interface Kretprobe {
  kp: Kprobe;
  handler?: KretprobeHandler;
  /** runs at function entry; non-zero = no return handler for this instance */
  entry_handler?: KretprobeHandler;
  /** instances preallocated; <= 0 -> max(10, 2 * NR_CPUS) */
  maxactive?: number;
  /** entries that found no free instance */
  nmissed?: number;
  /** bytes of private data per instance (in emulated memory) */
  data_size?: number;
}

/**
 * struct jprobe. `entry` receives the probed function's integer arguments
 * (per ArchOps.abi.argRegs) and the registers; returning from it is
 * jprobe_return() (calling engine.jprobeReturn() returns early).
 */
export interface Jprobe {
  kp: Kprobe;
  entry: (args: readonly bigint[], regs: PtRegs) => void;
}

/** What kind of user probe a kprobe is (debugfs column 2). */
export type ProbeKind = 'k' | 'r' | 'j';

/** Saved state of the kprobe being processed when another one is hit (struct prev_kprobe). */
export interface PrevKprobe {
  kp: Kprobe | null;
  status: KprobeStatus;
  oldFlags: bigint;
  savedFlags: bigint;
}

/** Per-CPU control block (struct kprobe_ctlblk + current_kprobe + kprobe_instance). */
export interface KprobeCtlblk {
  /** current_kprobe */
  current: Kprobe | null;
  status: KprobeStatus;
  /** arch flag bits of the interrupted context (x86: TF|IF) */
  oldFlags: bigint;
  savedFlags: bigint;
  prev: PrevKprobe;
  /** the aggregate member whose handler is running (kprobe_instance) */
  instance: Kprobe | null;
}

export function newCtlblk(): KprobeCtlblk {
  return {
    current: null, status: KprobeStatus.NONE, oldFlags: 0n, savedFlags: 0n, instance: null,
    prev: { kp: null, status: KprobeStatus.NONE, oldFlags: 0n, savedFlags: 0n },
  };
}

export function kprobeDisabled(p: Kprobe): boolean {
  return ((p.flags ?? 0) & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE)) !== 0;
}
export function kprobeGone(p: Kprobe): boolean {
  return ((p.flags ?? 0) & KPROBE_FLAG_GONE) !== 0;
}
