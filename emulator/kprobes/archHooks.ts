/**
 * The arch half of kprobes (Linux arch/<arch>/kernel/kprobes*): one table of
 * hooks per architecture, named after the kernel's functions in camelCase.
 * The core (core.ts) never switches on the architecture; it asks the table
 * found by name in archRegistry.ts. Optional hooks get core defaults (the
 * kernel's __weak functions), see the `default*` functions below.
 */
import type { ArchOps, DecodedInsn } from '../arch/types';
import type { KernelApi } from '../kernel/types';
import { textPoke } from '../memory/textPoke';
import { mustVAddr } from '../memory/address';
import type { InsnSlots } from './insnSlots';
import type { Kprobe, KprobeCtlblk, KretprobeInstance } from './kprobe';
import type { PtRegs } from './ptRegs';

/** What the core offers the arch hooks. */
export interface KprobesArchContext {
  readonly kernel: KernelApi;
  readonly arch: ArchOps;
  /** executable instruction slots (get_insn_slot / free_insn_slot) */
  readonly slots: InsnSlots;
  /** bytes of [addr, addr+len) as they are without any armed probe (recover_probed_instruction) */
  readOriginal(addr: bigint, len: number): Uint8Array;
}

/** decode-insn verdict (arm64/riscv decode-insn.c style) */
export type ProbeInsnDecision = 'reject' | 'simulate' | 'slot';

export interface KprobesArchHooks {
  /** ArchOps.name this table belongs to */
  readonly arch: string;
  /** bytes per instruction slot */
  readonly slotSize: number;

  /** Classify the instruction that will be probed (insn is null when it does not decode). */
  decodeProbeInsn(ctx: KprobesArchContext, addr: bigint, insn: DecodedInsn | null): ProbeInsnDecision;
  /** arch_prepare_kprobe: save p.opcode, copy the instruction to a slot (p.ainsn). 0 or -errno. */
  prepareKprobe(ctx: KprobesArchContext, p: Kprobe): number;
  /** arch_arm_kprobe: write the breakpoint (default: ArchOps.breakpointInsn via textPoke) */
  armKprobe?(ctx: KprobesArchContext, p: Kprobe): void;
  /** arch_disarm_kprobe: put p.opcode back (default: textPoke) */
  disarmKprobe?(ctx: KprobesArchContext, p: Kprobe): void;
  /** arch_remove_kprobe: release the slot */
  removeKprobe(ctx: KprobesArchContext, p: Kprobe): void;
  /** arch_prepare_kretprobe: save the return address in ri.ret_addr, replace it with trampoline */
  prepareKretprobe(ctx: KprobesArchContext, ri: KretprobeInstance, regs: PtRegs, trampoline: bigint): void;
  /** setup_singlestep: point regs at the slot and arm single-stepping; saves flag bits in kcb */
  setupSinglestep(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void;
  /** resume_execution: after the single-step of the slot, fix ip/stack, stop single-stepping */
  resumeExecution(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void;
  /** the single-stepped copy faulted: make regs look like the original instruction faulted */
  singlestepFault(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void;
  /** whether the task's own single-step flag is set after resumeExecution (the trap is then also the task's) */
  taskSinglestepping?(regs: PtRegs): boolean;
  /** simulate the instruction instead of single-stepping (decision 'simulate') */
  simulate?(ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void;
  /** arch_within_kprobe_blacklist (default: false; the core also checks the image blacklist) */
  withinKprobeBlacklist?(ctx: KprobesArchContext, addr: bigint): boolean;
  /** can_boost: jump back from the slot without a single-step trap (not used by the x86 port yet) */
  canBoost?(insn: DecodedInsn): boolean;
  /** code placed at the kretprobe trampoline; the core puts a kprobe on its first byte */
  readonly kretprobeTrampolineCode: Uint8Array;
  /** whether a kretprobe may be placed at symbol+offset (arch_kprobe_on_func_entry) */
  kprobeOnFuncEntry?(offset: bigint): boolean;
}

/** __weak arch_arm_kprobe */
export function defaultArmKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  textPoke(ctx.kernel.mem, mustVAddr(p.addr ?? 0n), ctx.arch.breakpointInsn);
}

/** __weak arch_disarm_kprobe */
export function defaultDisarmKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  if (!p.opcode) return;
  textPoke(ctx.kernel.mem, mustVAddr(p.addr ?? 0n), p.opcode);
}

/** __weak arch_kprobe_on_func_entry */
export function defaultKprobeOnFuncEntry(offset: bigint): boolean {
  return offset === 0n;
}
