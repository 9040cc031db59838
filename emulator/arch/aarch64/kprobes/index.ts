/**
 * arm64 half of kprobes (Linux arch/arm64/kernel/probes/kprobes.c): the
 * probe is `brk #0x004` (KPROBES_BRK_IMM, ArchInfo.breakpointInsn); the
 * probed instruction is decoded by decodeInsn.ts (rejected, simulated or
 * stepped), simulated from pt_regs by simulateInsn.ts, or copied to an
 * instruction slot followed by `brk #0x006` (KPROBES_BRK_SS_IMM) and
 * stepped there (emulator/kprobes/singlestep.ts): the single-step ends on
 * that breakpoint (the core's default singlestepDone) and the pc goes on
 * after the probe. kretprobes hijack the link register (x30). arm64 has
 * neither jump optimization nor boosters: no optprobes/canBoost hooks.
 */
import { Errno } from '../../../kernel/abi';
import type {
  InlineBreakpointCpu, InlineBreakpointHandler, KprobesArchContext, KprobesArchHooks,
} from '../../../kprobes/archHooks';
import { linkRegisterPrepareKretprobe } from '../../../kprobes/archHooks';
import { prepareSlot, removeSlot, resumeAfterSlot, setupSlotSinglestep, slotSinglestepFault } from '../../../kprobes/singlestep';
import type { Cpu } from '../../types';
import { A64Cpu } from '../cpu';
import type { Kprobe } from '../../../kprobes/kprobe';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { BRK_SS, decodeProbeInsn, readWord, word } from './decodeInsn';
import { simulateInsn } from './simulateInsn';

const NOP = 0xd503201f;
/** one instruction and the step breakpoint */
const SLOT_SIZE = 8;

/** arch_prepare_kprobe: decode, then a simulation or a slot with the step breakpoint */
function prepareKprobe(ctx: KprobesArchContext, p: Kprobe): number {
  const addr = p.addr as bigint;
  if ((addr & 3n) !== 0n) return -Errno.EINVAL; // arm64 instructions are 4-byte aligned
  let orig: Uint8Array;
  try {
    orig = ctx.readOriginal(addr, 4);
  } catch {
    return -Errno.EINVAL;
  }
  const insn = ctx.arch.decodeBytes(orig, addr);
  const decision = decodeProbeInsn(ctx, addr, insn);
  if (decision === 'reject') return -Errno.EINVAL;
  p.opcode = orig.slice();
  if (decision === 'simulate') {
    p.ainsn = { insn: 0n, length: 4, mode: 'simulate', arch: { word: readWord(orig) }, boostable: -1 };
    return 0;
  }
  prepareSlot(ctx, p, orig, word(BRK_SS));
  return 0;
}

/** simulate-insn.c for kprobes */
function simulate(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  simulateInsn((p.ainsn?.arch as { word: number }).word, p.addr as bigint, regs);
}

/** A64Cpu.inlineBreakpoint: brk calls the engine's handler before it would trap (the pc is the brk's own, as the trap's) */
function installInlineBreakpoint(cpu: Cpu, handler: InlineBreakpointHandler | null): InlineBreakpointCpu | null {
  if (!(cpu instanceof A64Cpu)) return null;
  if (handler === null) { cpu.inlineBreakpoint = null; return null; }
  if (cpu.inlineBreakpoint !== null) return null;
  cpu.inlineBreakpoint = handler;
  return cpu;
}

export const aarch64KprobesHooks: KprobesArchHooks = {
  arch: 'aarch64',
  slotSize: SLOT_SIZE,
  decodeProbeInsn,
  prepareKprobe,
  removeKprobe: removeSlot,
  prepareKretprobe: linkRegisterPrepareKretprobe,
  setupSinglestep: setupSlotSinglestep,
  resumeExecution: resumeAfterSlot,
  singlestepFault: slotSinglestepFault,
  simulate,
  installInlineBreakpoint,
  // __kretprobe_trampoline: the core's breakpoint goes over the first instruction
  kretprobeTrampolineCode: Uint8Array.from([...word(NOP), ...word(NOP)]),
};
