/**
 * The arch half of uprobes (Linux arch/<arch>/kernel/uprobes.c and
 * probes/uprobes.c): one table of hooks per architecture, named after the
 * kernel's functions in camelCase. The core (core.ts, traps.ts) never
 * switches on the architecture.
 *
 *   arch_uprobe_analyze_insn     classify the probed instruction (from the
 *                                file's bytes): XOL, simulate, or refuse
 *   arch_uprobe_copy_ixol        the bytes of the execute-out-of-line slot
 *   arch_uprobe_pre_xol          point the task at the slot (x86: TF)
 *   arch_uprobe_xol_was_trapped  the trap that ends the out-of-line step
 *   arch_uprobe_post_xol         fix ip (and what moved) after the step
 *   arch_uprobe_abort_xol        the step faulted: back to the probe address
 *   arch_uprobe_skip_sstep       simulate instead of stepping
 *   arch_uretprobe_hijack_return_addr  swap the return address for the trampoline
 *   arch_uretprobe_is_alive      is a return instance still on the stack
 */
import type { ArchOps, Trap } from '../arch/types';
import type { PtRegs } from '../kprobes/ptRegs';

/** struct arch_uprobe: what analysis found out about the probed instruction. */
export interface ArchUprobe {
  /** length of the original instruction */
  readonly length: number;
  /** the original instruction's bytes */
  readonly insn: Uint8Array;
  /** 'xol' = step a copy in the XOL slot; 'simulate' = arch_uprobe_skip_sstep does it from pt_regs */
  readonly mode: 'xol' | 'simulate';
  /** arch-private analysis (flow, fix-ups) */
  readonly arch: Readonly<Record<string, unknown>>;
}

/** struct arch_uprobe_task: per-task state saved across the out-of-line step. */
export interface ArchUprobeTask {
  /** the XOL slot in use */
  slot: bigint;
  /** the probe address */
  vaddr: bigint;
  /** arch-private saved state (x86: the task's TF, the scratch register of a RIP-relative fix-up) */
  saved: Record<string, bigint>;
}

export interface UprobesArchHooks {
  /** ArchOps.name this table belongs to */
  readonly arch: string;
  /** UPROBE_SWBP_INSN: the breakpoint written at a probed address */
  readonly swbpInsn: Uint8Array;
  /** bytes per XOL slot (UPROBE_XOL_SLOT_BYTES) */
  readonly xolSlotBytes: number;
  /** instructions must start at a multiple of this (arm64 4, riscv 2, x86 1) */
  readonly insnAlign: number;
  /** the longest instruction (bytes read from the file for analysis) */
  readonly maxInsnLength: number;
  /**
   * arch_uprobe_analyze_insn: `bytes` are the file's bytes at the probed
   * offset (as many as the file has, up to maxInsnLength), `vaddr` where a
   * process maps them (RIP-relative analysis does not depend on it). The
   * reason text when the instruction cannot be probed.
   */
  analyzeInsn(arch: ArchOps, bytes: Uint8Array, vaddr: bigint): ArchUprobe | string;
  /** arch_uprobe_copy_ixol: the bytes written to the slot at `slot` for a probe at `vaddr` */
  copyIxol(au: ArchUprobe, slot: bigint, vaddr: bigint): Uint8Array;
  /** arch_uprobe_pre_xol: regs.ip = the slot; what must be saved goes into `t.saved` */
  preXol(au: ArchUprobe, regs: PtRegs, t: ArchUprobeTask): void;
  /**
   * arch_uprobe_xol_was_trapped's counterpart: whether this trap is the end
   * of the out-of-line step (x86: the TF trap; arm64 / riscv: the step
   * breakpoint after the slot's instruction). `addr`: the breakpoint's own
   * address for 'breakpoint', else the trap's pc.
   */
  xolDone(au: ArchUprobe, t: ArchUprobeTask, kind: Trap['kind'], addr: bigint): boolean;
  /** arch_uprobe_post_xol: ip back to the original code, what moved fixed up */
  postXol(au: ArchUprobe, regs: PtRegs, t: ArchUprobeTask): void;
  /** arch_uprobe_abort_xol: the step faulted; regs look as if the original instruction faulted */
  abortXol(au: ArchUprobe, regs: PtRegs, t: ArchUprobeTask): void;
  /** arch_uprobe_skip_sstep: execute a 'simulate' instruction on pt_regs (ip = vaddr on entry) */
  skipSstep(au: ArchUprobe, regs: PtRegs, vaddr: bigint): void;
  /**
   * arch_uretprobe_hijack_return_addr: at function entry, replace the
   * return address with `trampoline`; the original one, and the stack
   * pointer the function returns with (for arch_uretprobe_is_alive).
   */
  hijackReturnAddr(regs: PtRegs, trampoline: bigint): { orig: bigint; stack: bigint };
}
