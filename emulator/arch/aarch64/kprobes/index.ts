/**
 * arm64 half of kprobes (Linux arch/arm64/kernel/probes: kprobes.c,
 * decode-insn.c, simulate-insn.c): the probe is `brk #0x004`
 * (KPROBES_BRK_IMM, ArchInfo.breakpointInsn); the probed instruction is
 *   - rejected when stepping it out of line would not come back or would
 *     break an atomic sequence (exception generation, eret, exclusive
 *     loads/stores, writes to DAIF);
 *   - simulated from pt_regs when it is pc-relative (b, bl, b.cond,
 *     cbz/cbnz, tbz/tbnz, br, blr, ret, adr, adrp, ldr/ldrsw literal);
 *   - otherwise copied to an instruction slot followed by `brk #0x006`
 *     (KPROBES_BRK_SS_IMM): the single-step ends on that breakpoint (the
 *     core's default singlestepDone) and the pc goes on after the probe.
 * kretprobes hijack the link register (x30). arm64 has neither jump
 * optimization nor boosters: no optprobes/canBoost hooks.
 */
import type { DecodedInsn } from '../../types';
import { Errno } from '../../../kernel/abi';
import { mustVAddr } from '../../../memory/address';
import type {
  InlineBreakpointCpu, InlineBreakpointHandler, KprobesArchContext, KprobesArchHooks, ProbeInsnDecision,
} from '../../../kprobes/archHooks';
import { linkRegisterPrepareKretprobe } from '../../../kprobes/archHooks';
import type { Cpu } from '../../types';
import { A64Cpu } from '../cpu';
import type { Kprobe } from '../../../kprobes/kprobe';
import type { PtRegs } from '../../../kprobes/ptRegs';

/** brk #0x006: the step breakpoint after a slot's instruction (KPROBES_BRK_SS_IMM) */
export const BRK_SS = 0xd42000c0;
const NOP = 0xd503201f;
/** one instruction and the step breakpoint */
const SLOT_SIZE = 8;

const word = (w: number): Uint8Array => Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);
const readWord = (b: Uint8Array): number => (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;
const sext = (v: number, bits: number): bigint => BigInt.asIntN(bits, BigInt(v));

/** The instruction classes the simulator knows, by encoding (ARM ARM C4.1). */
type Sim = 'b' | 'bl' | 'bcond' | 'cbz' | 'tbz' | 'br' | 'adr' | 'ldrLit';

function simClass(w: number): Sim | undefined {
  if (((w & 0x7c000000) >>> 0) === 0x14000000) return (w & 0x80000000) !== 0 ? 'bl' : 'b';
  if (((w & 0xff000010) >>> 0) === 0x54000000) return 'bcond';
  if (((w & 0x7e000000) >>> 0) === 0x34000000) return 'cbz';
  if (((w & 0x7e000000) >>> 0) === 0x36000000) return 'tbz';
  // br, blr, ret (and their pointer-authenticating forms are not emitted here)
  if (((w & 0xff9ffc1f) >>> 0) === 0xd61f0000 || ((w & 0xfffffc1f) >>> 0) === 0xd65f0000) return 'br';
  if (((w & 0x1f000000) >>> 0) === 0x10000000) return 'adr';
  if (((w & 0x3f000000) >>> 0) === 0x18000000) return 'ldrLit';
  return undefined;
}

/** exclusive load/store (ldxr, stxr, ldaxr, stlxr, ldxp, stxp...): stepping one breaks the monitor */
const isExclusive = (w: number): boolean => ((w & 0x3f000000) >>> 0) === 0x08000000 && (w & 0x00800000) === 0;
/** exception generation (svc, hvc, smc, brk, hlt, dcps) */
const isException = (w: number): boolean => ((w & 0xff000000) >>> 0) === 0xd4000000;
/** eret, drps */
const isEret = (w: number): boolean => w === 0xd69f03e0 || w === 0xd6bf03e0;
/** msr to DAIF (daifset/daifclr immediates, and msr daif, xN) */
const isDaifWrite = (w: number): boolean => ((w & 0xfffff0df) >>> 0) === 0xd50340df || ((w & 0xffffffe0) >>> 0) === 0xd51b4220;

/** arm_probe_decode_insn: the verdict on an instruction word (kprobes and uprobes) */
export function probeDecision(w: number): ProbeInsnDecision {
  if (isException(w) || isEret(w) || isExclusive(w) || isDaifWrite(w)) return 'reject';
  return simClass(w) ? 'simulate' : 'slot';
}

function decodeProbeInsn(_ctx: KprobesArchContext, _addr: bigint, insn: DecodedInsn | null): ProbeInsnDecision {
  if (!insn || insn.length !== 4) return 'reject';
  return probeDecision(readWord(insn.bytes));
}

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
  const slot = ctx.slots.get();
  const code = new Uint8Array(SLOT_SIZE);
  code.set(orig, 0);
  code.set(word(BRK_SS), 4);
  ctx.slots.write(slot, code);
  p.ainsn = { insn: slot, length: 4, mode: 'slot', arch: {}, boostable: -1, insnV: mustVAddr(slot), nextV: mustVAddr(addr + 4n) };
  return 0;
}

function removeKprobe(ctx: KprobesArchContext, p: Kprobe): void {
  if (p.ainsn && p.ainsn.mode === 'slot' && p.ainsn.insn !== 0n) ctx.slots.put(p.ainsn.insn);
}


/** Register n of an instruction field: 31 is the zero register here (never sp). */
function xreg(regs: PtRegs, n: number): bigint {
  return n === 31 ? 0n : regs.get(`x${n}`);
}
function setX(regs: PtRegs, n: number, v: bigint): void {
  if (n !== 31) regs.set(`x${n}`, BigInt.asUintN(64, v));
}

/** ConditionHolds(cond) on pstate's NZCV */
function conditionHolds(cond: number, pstate: bigint): boolean {
  const n = (pstate >> 31n) & 1n, z = (pstate >> 30n) & 1n, c = (pstate >> 29n) & 1n, v = (pstate >> 28n) & 1n;
  let r: boolean;
  switch (cond >> 1) {
    case 0: r = z === 1n; break;
    case 1: r = c === 1n; break;
    case 2: r = n === 1n; break;
    case 3: r = v === 1n; break;
    case 4: r = c === 1n && z === 0n; break;
    case 5: r = n === v; break;
    case 6: r = n === v && z === 0n; break;
    default: return true; // AL, NV
  }
  return (cond & 1) !== 0 ? !r : r;
}

/** simulate-insn.c for kprobes */
function simulate(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  simulateInsn((p.ainsn?.arch as { word: number }).word, p.addr as bigint, regs);
}

/** simulate-insn.c: execute the pc-relative instruction `w` at `pc` on pt_regs (kprobes and uprobes). */
export function simulateInsn(w: number, pc: bigint, regs: PtRegs): void {
  const next = pc + 4n;
  const to = (v: bigint): void => { regs.ip = BigInt.asUintN(64, v); };
  switch (simClass(w)) {
    case 'b': to(pc + sext(w & 0x3ffffff, 26) * 4n); return;
    case 'bl': setX(regs, 30, next); to(pc + sext(w & 0x3ffffff, 26) * 4n); return;
    case 'bcond': to(conditionHolds(w & 0xf, regs.flags) ? pc + sext((w >>> 5) & 0x7ffff, 19) * 4n : next); return;
    case 'cbz': {
      const sf = (w >>> 31) !== 0;
      const v = sf ? xreg(regs, w & 31) : xreg(regs, w & 31) & 0xffffffffn;
      const taken = ((w >>> 24) & 1) === 0 ? v === 0n : v !== 0n;
      to(taken ? pc + sext((w >>> 5) & 0x7ffff, 19) * 4n : next);
      return;
    }
    case 'tbz': {
      const bit = BigInt(((w >>> 31) << 5) | ((w >>> 19) & 31));
      const set = ((xreg(regs, w & 31) >> bit) & 1n) === 1n;
      const taken = ((w >>> 24) & 1) === 0 ? !set : set;
      to(taken ? pc + sext((w >>> 5) & 0x3fff, 14) * 4n : next);
      return;
    }
    case 'br': {
      const target = xreg(regs, (w >>> 5) & 31);
      if (((w >>> 21) & 3) === 1) setX(regs, 30, next); // blr
      to(target);
      return;
    }
    case 'adr': {
      const imm = sext((((w >>> 5) & 0x7ffff) << 2) | ((w >>> 29) & 3), 21);
      const v = (w >>> 31) !== 0 ? (pc & ~0xfffn) + (imm << 12n) : pc + imm;
      setX(regs, w & 31, v);
      to(next);
      return;
    }
    case 'ldrLit': {
      const at = mustVAddr(BigInt.asUintN(64, pc + sext((w >>> 5) & 0x7ffff, 19) * 4n));
      const mem = regs.cpu.mem;
      const opc = w >>> 30;
      if (opc === 0) setX(regs, w & 31, BigInt(mem.read32(at) >>> 0));
      else if (opc === 1) setX(regs, w & 31, mem.read64(at));
      else if (opc === 2) setX(regs, w & 31, BigInt(mem.read32(at) | 0));
      // opc 3: prfm literal, a hint
      to(next);
      return;
    }
    default:
      throw new Error(`arm64 probes: no simulation for 0x${w.toString(16)} at 0x${pc.toString(16)}`);
  }
}

/** setup_singlestep: run the slot (its step breakpoint ends the step) */
function setupSinglestep(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn as NonNullable<Kprobe['ainsn']>;
  if (a.insnV !== undefined) regs.setIpV(a.insnV);
  else regs.ip = a.insn;
}

/** post_kprobe_handler's arch half: a stepped slot goes on after the probe; a simulation already set the pc */
function resumeExecution(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  const a = p.ainsn;
  if (a?.mode !== 'slot') return;
  if (a.nextV !== undefined) regs.setIpV(a.nextV);
  else regs.ip = (p.addr as bigint) + 4n;
}

/** the stepped copy faulted: the fault is the original instruction's */
function singlestepFault(_ctx: KprobesArchContext, p: Kprobe, regs: PtRegs): void {
  regs.ip = p.addr as bigint;
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
  removeKprobe,
  prepareKretprobe: linkRegisterPrepareKretprobe,
  setupSinglestep,
  resumeExecution,
  singlestepFault,
  simulate,
  installInlineBreakpoint,
  // __kretprobe_trampoline: the core's breakpoint goes over the first instruction
  kretprobeTrampolineCode: Uint8Array.from([...word(NOP), ...word(NOP)]),
};
