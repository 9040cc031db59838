/**
 * RISC-V half of kprobes (Linux arch/riscv/kernel/probes/kprobes.c): the
 * probe is `ebreak` over a 4-byte instruction and `c.ebreak` over a 2-byte
 * one (the original bytes of exactly that length are kept and put back);
 * the probed instruction is decoded by decodeInsn.ts (rejected, simulated
 * or stepped; a probe not 2-byte aligned or not on an instruction boundary
 * is refused here), simulated from pt_regs by simulateInsn.ts, or copied
 * to an instruction slot followed by an `ebreak` that ends the out-of-line
 * step (emulator/kprobes/singlestep.ts; the core's default
 * singlestepDone). kretprobes hijack `ra`. No jump optimization and no
 * boosters.
 */
import { Errno } from '../../../kernel/abi';
import { mustVAddr } from '../../../memory/address';
import { textPoke } from '../../../memory/textPoke';
import type {
  InlineBreakpointCpu, InlineBreakpointHandler, KprobesArchContext, KprobesArchHooks,
} from '../../../kprobes/archHooks';
import { linkRegisterPrepareKretprobe } from '../../../kprobes/archHooks';
import { prepareSlot, removeSlot, resumeAfterSlot, setupSlotSinglestep, slotSinglestepFault } from '../../../kprobes/singlestep';
import type { Cpu } from '../../types';
import { RvCpu } from '../cpu';
import type { Kprobe } from '../../../kprobes/kprobe';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { riscv64Info } from '../info';
import { decodeProbeInsn, expanded } from './decodeInsn';
import { simulateInsn } from './simulateInsn';

const EBREAK = riscv64Info.breakpointInsn;
const C_EBREAK = (riscv64Info.shortBreakpoint as NonNullable<typeof riscv64Info.shortBreakpoint>).bytes;
const NOP = Uint8Array.of(0x13, 0x00, 0x00, 0x00);
/** an instruction (up to 4 bytes) and the step ebreak */
const SLOT_SIZE = 8;

/**
 * arch_check_kprobe(): walk the function holding addr from its first byte
 * (Linux walks from symbol+offset's symbol only; here from the enclosing
 * symbol whichever way the probe was given),
 * instruction by instruction (original bytes); addr must be where one
 * starts, else its ebreak / c.ebreak would overwrite the second half of one
 * instruction and the first of the next.
 */
function onInsnBoundary(ctx: KprobesArchContext, addr: bigint): boolean {
  const r = ctx.kernel.image.symbols.resolve(addr);
  if (!r) return true; // no symbol to walk from
  if (r.offset === 0n) return true;
  // the function's original bytes up to addr in one read (a read per instruction makes a file that probes
  // every instruction of a function quadratic in reads); an instruction's length is in its first byte
  let code: Uint8Array;
  try {
    code = ctx.readOriginal(addr - r.offset, Number(r.offset));
  } catch {
    return true;
  }
  let off = 0;
  while (off < code.length) off += (code[off] & 3) === 3 ? 4 : 2;
  return off === code.length;
}

/** arch_prepare_kprobe: checks, decode, then a simulation or a slot with the step ebreak */
function prepareKprobe(ctx: KprobesArchContext, p: Kprobe): number {
  const addr = p.addr as bigint;
  if ((addr & 1n) !== 0n) return -Errno.EINVAL; // instructions are 2-byte aligned
  if (!onInsnBoundary(ctx, addr)) return -Errno.EILSEQ;
  let orig: Uint8Array;
  try {
    orig = ctx.readOriginal(addr, 2);
    if ((orig[0] & 3) === 3) orig = ctx.readOriginal(addr, 4);
  } catch {
    return -Errno.EINVAL;
  }
  const insn = ctx.arch.decodeBytes(orig, addr);
  const decision = decodeProbeInsn(ctx, addr, insn);
  if (decision === 'reject') return -Errno.EINVAL;
  const e = expanded(orig) as { w: number; len: 2 | 4 };
  // the breakpoint covers exactly the probed instruction: ebreak or c.ebreak
  p.opcode = orig.slice(0, e.len);
  if (decision === 'simulate') {
    p.ainsn = { insn: 0n, length: e.len, mode: 'simulate', arch: { word: e.w }, boostable: -1 };
    return 0;
  }
  prepareSlot(ctx, p, orig.subarray(0, e.len), EBREAK);
  return 0;
}

/** arch_arm_kprobe: ebreak over a 4-byte instruction, c.ebreak over a 2-byte one */
function armKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  textPoke(ctx.kernel.mem, mustVAddr(p.addr ?? 0n), p.opcode?.length === 2 ? C_EBREAK : EBREAK);
}

/** simulate-insn.c for kprobes */
function simulate(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn as NonNullable<Kprobe['ainsn']>;
  simulateInsn((a.arch as { word: number }).word, p.addr as bigint, a.length, regs);
}

/**
 * RvCpu.inlineBreakpoint: ebreak calls the engine's handler before it would
 * trap; the handlers see the trap's pc (sepc = the ebreak itself).
 */
function installInlineBreakpoint(cpu: Cpu, handler: InlineBreakpointHandler | null): InlineBreakpointCpu | null {
  if (!(cpu instanceof RvCpu)) return null;
  if (handler === null) { cpu.inlineBreakpoint = null; return null; }
  if (cpu.inlineBreakpoint !== null) return null;
  cpu.inlineBreakpoint = (c, at) => {
    c.pc = at;
    return handler(c, at);
  };
  return cpu;
}

export const riscv64KprobesHooks: KprobesArchHooks = {
  arch: 'riscv64',
  slotSize: SLOT_SIZE,
  decodeProbeInsn,
  prepareKprobe,
  armKprobe,
  removeKprobe: removeSlot,
  prepareKretprobe: linkRegisterPrepareKretprobe,
  setupSinglestep: setupSlotSinglestep,
  resumeExecution: resumeAfterSlot,
  singlestepFault: slotSinglestepFault,
  simulate,
  installInlineBreakpoint,
  // __kretprobe_trampoline: the core's ebreak goes over the first instruction
  kretprobeTrampolineCode: Uint8Array.from([...NOP, ...NOP]),
};
