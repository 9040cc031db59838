/**
 * RISC-V half of kprobes (Linux arch/riscv/kernel/probes: kprobes.c,
 * decode-insn.c, simulate-insn.c): the probe is `ebreak` over a 4-byte
 * instruction and `c.ebreak` over a 2-byte one (the original bytes of
 * exactly that length are kept and put back); the probed instruction is
 *   - rejected when it is a system instruction (ecall, ebreak, sret, wfi,
 *     csr*) or a fence, or when the address is not 2-byte aligned;
 *   - simulated from pt_regs when it is pc-relative or a jump: jal, jalr,
 *     auipc, beq..bgeu and the compressed c.j, c.jr, c.jalr, c.beqz,
 *     c.bnez (examined in their 32-bit expansion; rv64 has no c.jal, its
 *     encoding is c.addiw, stepped in a slot);
 *   - otherwise copied to an instruction slot followed by an `ebreak` that
 *     ends the out-of-line step (the core's default singlestepDone).
 * kretprobes hijack `ra`. No jump optimization and no boosters.
 */
import type { DecodedInsn } from '../../types';
import { Errno } from '../../../kernel/abi';
import { mustVAddr } from '../../../memory/address';
import { textPoke } from '../../../memory/textPoke';
import type {
  InlineBreakpointCpu, InlineBreakpointHandler, KprobesArchContext, KprobesArchHooks, ProbeInsnDecision,
} from '../../../kprobes/archHooks';
import { linkRegisterPrepareKretprobe } from '../../../kprobes/archHooks';
import type { Cpu } from '../../types';
import { RvCpu } from '../cpu';
import type { Kprobe } from '../../../kprobes/kprobe';
import type { PtRegs } from '../../../kprobes/ptRegs';
import { expandRvc } from '../rvc';
import { riscv64Info } from '../info';

const EBREAK = riscv64Info.breakpointInsn;
const C_EBREAK = (riscv64Info.shortBreakpoint as NonNullable<typeof riscv64Info.shortBreakpoint>).bytes;
const NOP = Uint8Array.of(0x13, 0x00, 0x00, 0x00);
/** an instruction (up to 4 bytes) and the step ebreak */
const SLOT_SIZE = 8;

const sext = (v: number, bits: number): bigint => BigInt.asIntN(bits, BigInt(v));

/** The 32-bit form of the instruction at the start of `b` (a compressed one expanded), and its length. */
export function expanded(b: Uint8Array): { w: number; len: 2 | 4 } | undefined {
  if (b.length < 2) return undefined;
  const lo = b[0] | (b[1] << 8);
  if ((lo & 3) !== 3) {
    const w = expandRvc(lo);
    return w === null ? undefined : { w: w >>> 0, len: 2 };
  }
  if (b.length < 4) return undefined;
  return { w: (lo | (b[2] << 16) | (b[3] << 24)) >>> 0, len: 4 };
}

type Sim = 'jal' | 'jalr' | 'auipc' | 'branch';

function simClass(w: number): Sim | undefined {
  switch (w & 0x7f) {
    case 0x6f: return 'jal';
    case 0x67: return (w >>> 12) & 7 ? undefined : 'jalr';
    case 0x17: return 'auipc';
    case 0x63: return ((w >>> 12) & 7) === 2 || ((w >>> 12) & 7) === 3 ? undefined : 'branch';
    default: return undefined;
  }
}

/** system (ecall, ebreak, sret, wfi, csr*) and fences: not stepped out of line */
const rejected = (w: number): boolean => (w & 0x7f) === 0x73 || (w & 0x7f) === 0x0f;

/** decode-insn.c's verdict on an instruction's 32-bit form (kprobes and uprobes) */
export function probeDecision(w: number): ProbeInsnDecision {
  if (rejected(w)) return 'reject';
  return simClass(w) ? 'simulate' : 'slot';
}

function decodeProbeInsn(_ctx: KprobesArchContext, _addr: bigint, insn: DecodedInsn | null): ProbeInsnDecision {
  const e = insn ? expanded(insn.bytes) : undefined;
  if (!e) return 'reject';
  return probeDecision(e.w);
}

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
  let a = addr - r.offset;
  try {
    while (a < addr) a += (ctx.readOriginal(a, 2)[0] & 3) === 3 ? 4n : 2n;
  } catch {
    return true;
  }
  return a === addr;
}

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
  const slot = ctx.slots.get();
  const code = new Uint8Array(SLOT_SIZE);
  code.set(orig.subarray(0, e.len), 0);
  code.set(EBREAK, e.len);
  ctx.slots.write(slot, code.subarray(0, e.len + 4));
  p.ainsn = { insn: slot, length: e.len, mode: 'slot', arch: {}, boostable: -1, insnV: mustVAddr(slot), nextV: mustVAddr(addr + BigInt(e.len)) };
  return 0;
}

/** arch_arm_kprobe: ebreak over a 4-byte instruction, c.ebreak over a 2-byte one */
function armKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  textPoke(ctx.kernel.mem, mustVAddr(p.addr ?? 0n), p.opcode?.length === 2 ? C_EBREAK : EBREAK);
}

function removeKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  if (p.ainsn && p.ainsn.mode === 'slot' && p.ainsn.insn !== 0n) ctx.slots.put(p.ainsn.insn);
}


const ABI = ['zero', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7',
  's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10', 's11', 't3', 't4', 't5', 't6'];
const xget = (regs: PtRegs, n: number): bigint => (n === 0 ? 0n : regs.get(ABI[n]));
const xset = (regs: PtRegs, n: number, v: bigint): void => { if (n !== 0) regs.set(ABI[n], BigInt.asUintN(64, v)); };

/** simulate-insn.c for kprobes */
function simulate(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn as NonNullable<Kprobe['ainsn']>;
  simulateInsn((a.arch as { word: number }).word, p.addr as bigint, a.length, regs);
}

/**
 * simulate-insn.c: execute a pc-relative instruction or jump (its 32-bit
 * form `w`, `len` bytes long at `pc`) on pt_regs (kprobes and uprobes).
 */
export function simulateInsn(w: number, pc: bigint, len: number, regs: PtRegs): void {
  const next = pc + BigInt(len);
  const rd = (w >>> 7) & 31, rs1 = (w >>> 15) & 31, rs2 = (w >>> 20) & 31;
  const to = (v: bigint): void => { regs.ip = BigInt.asUintN(64, v); };
  switch (simClass(w)) {
    case 'jal': {
      const imm = ((w >>> 31) << 20) | (((w >>> 12) & 0xff) << 12) | (((w >>> 20) & 1) << 11) | (((w >>> 21) & 0x3ff) << 1);
      xset(regs, rd, next);
      to(pc + sext(imm, 21));
      return;
    }
    case 'jalr': {
      const target = (xget(regs, rs1) + sext(w >>> 20, 12)) & ~1n;
      xset(regs, rd, next);
      to(target);
      return;
    }
    case 'auipc':
      xset(regs, rd, pc + sext(w & 0xfffff000, 32));
      to(next);
      return;
    case 'branch': {
      const x = xget(regs, rs1), y = xget(regs, rs2);
      const sx = BigInt.asIntN(64, x), sy = BigInt.asIntN(64, y);
      const f3 = (w >>> 12) & 7;
      const taken = f3 === 0 ? x === y : f3 === 1 ? x !== y : f3 === 4 ? sx < sy : f3 === 5 ? sx >= sy : f3 === 6 ? x < y : x >= y;
      const imm = ((w >>> 31) << 12) | (((w >>> 7) & 1) << 11) | (((w >>> 25) & 0x3f) << 5) | (((w >>> 8) & 0xf) << 1);
      to(taken ? pc + sext(imm, 13) : next);
      return;
    }
    default:
      throw new Error(`riscv probes: no simulation for 0x${w.toString(16)} at 0x${pc.toString(16)}`);
  }
}

function setupSinglestep(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn as NonNullable<Kprobe['ainsn']>;
  if (a.insnV !== undefined) regs.setIpV(a.insnV);
  else regs.ip = a.insn;
}

/** after the slot's step ebreak: go on after the probed instruction (a simulation already set epc) */
function resumeExecution(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn;
  if (a?.mode !== 'slot') return;
  if (a.nextV !== undefined) regs.setIpV(a.nextV);
  else regs.ip = (p.addr as bigint) + BigInt(a.length);
}

function singlestepFault(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  regs.ip = p.addr as bigint;
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
  removeKprobe,
  prepareKretprobe: linkRegisterPrepareKretprobe,
  setupSinglestep,
  resumeExecution,
  singlestepFault,
  simulate,
  installInlineBreakpoint,
  // __kretprobe_trampoline: the core's ebreak goes over the first instruction
  kretprobeTrampolineCode: Uint8Array.from([...NOP, ...NOP]),
};
