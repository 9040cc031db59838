/**
 * Out-of-line single-stepping through an instruction slot that ends in a
 * step breakpoint, as Linux's arm64 and riscv kprobes do it (arm64
 * arch_prepare_ss_slot / setup_singlestep / post_kprobe_handler: the slot
 * holds a copy of the probed instruction followed by `brk
 * #KPROBES_BRK_SS_IMM`; riscv the copy followed by `ebreak`). The step ends
 * when that breakpoint traps (the core's default singlestepDone) and the pc
 * goes on after the probed instruction. Arch-neutral: the port gives the
 * original instruction's bytes and its step breakpoint. x86's step is
 * different (TF over a slot that may be boosted with a jump back:
 * arch/x86_64/kprobes).
 */
import { mustVAddr } from '../memory/address';
import type { KprobesArchContext } from './archHooks';
import type { Kprobe } from './kprobe';
import type { PtRegs } from './ptRegs';

/**
 * arch_prepare_ss_slot: an instruction slot with a copy of the probed
 * instruction (`insn`, its original bytes) and `stepBreakpoint` after it;
 * the probe's ainsn steps it. The slot must be large enough for both
 * (KprobesArchHooks.slotSize).
 */
export function prepareSlot(ctx: KprobesArchContext, p: Kprobe, insn: Uint8Array, stepBreakpoint: Uint8Array): void {
  const addr = p.addr as bigint;
  const slot = ctx.slots.get();
  const code = new Uint8Array(insn.length + stepBreakpoint.length);
  code.set(insn, 0);
  code.set(stepBreakpoint, insn.length);
  ctx.slots.write(slot, code);
  p.ainsn = {
    insn: slot, length: insn.length, mode: 'slot', arch: {}, boostable: -1,
    insnV: mustVAddr(slot), nextV: mustVAddr(addr + BigInt(insn.length)),
  };
}

/** arch_remove_kprobe: the slot back to the free list (a simulated probe has none) */
export function removeSlot(ctx: KprobesArchContext, p: Kprobe): void {
  if (p.ainsn && p.ainsn.mode === 'slot' && p.ainsn.insn !== 0n) ctx.slots.put(p.ainsn.insn);
}

/** setup_singlestep: run the slot (its step breakpoint ends the step) */
export function setupSlotSinglestep(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn as NonNullable<Kprobe['ainsn']>;
  if (a.insnV !== undefined) regs.setIpV(a.insnV);
  else regs.ip = a.insn;
}

/** post_kprobe_handler's arch half: a stepped slot goes on after the probed instruction; a simulation already set the pc */
export function resumeAfterSlot(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn;
  if (a?.mode !== 'slot') return;
  if (a.nextV !== undefined) regs.setIpV(a.nextV);
  else regs.ip = (p.addr as bigint) + BigInt(a.length);
}

/** the stepped copy faulted: the fault is the original instruction's (the pc back on the probe) */
export function slotSinglestepFault(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  regs.ip = p.addr as bigint;
}
