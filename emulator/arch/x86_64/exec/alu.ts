/**
 * Integer ALU: add or adc sbb and sub xor cmp test, inc dec neg not.
 * Sub-operation numbers follow the x86 encoding (opcode bits 5:3 / ModRM.reg
 * of group 1); ALU_TEST = 8.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { F_ADD, F_ADC, F_SUB, F_SBB, F_LOGIC, F_INC, F_DEC } from '../flags';

export const ALU_ADD = 0, ALU_OR = 1, ALU_ADC = 2, ALU_SBB = 3, ALU_AND = 4, ALU_SUB = 5, ALU_XOR = 6, ALU_CMP = 7, ALU_TEST = 8;
const FKIND = [F_ADD, F_LOGIC, F_ADC, F_SBB, F_LOGIC, F_SUB, F_LOGIC, F_SUB, F_LOGIC];

/** Mask a value to an operand size (8/16: non-negative, 32/64: int32 low half). */
export function mask(size: number, v: number): number {
  return size === 1 ? v & 0xff : size === 2 ? v & 0xffff : v | 0;
}

/**
 * Compute d op s at size; returns the low half, cpu.th = high half (0 below 64 bits).
 * Records the flags. Callers must have done every memory write that can fault first
 * — so this is called after reading operands, and the write-back happens
 * via `commitFlags` ordering below (see aluMem).
 */
function compute(cpu: X86Cpu, op: number, size: number, dl: number, dh: number, sl: number, sh: number, cin: number): number {
  let rl: number, rh = 0;
  if (size === 8) {
    let t: number;
    switch (op) {
      case ALU_ADD: case ALU_ADC:
        t = (dl >>> 0) + (sl >>> 0) + cin; rl = t | 0; rh = (dh + sh + (t > 0xffffffff ? 1 : 0)) | 0; break;
      case ALU_SUB: case ALU_CMP: case ALU_SBB:
        t = (dl >>> 0) - (sl >>> 0) - cin; rl = t | 0; rh = (dh - sh - (t < 0 ? 1 : 0)) | 0; break;
      case ALU_OR: rl = dl | sl; rh = dh | sh; break;
      case ALU_XOR: rl = dl ^ sl; rh = dh ^ sh; break;
      default: rl = dl & sl; rh = dh & sh; break; // and, test
    }
  } else {
    switch (op) {
      case ALU_ADD: case ALU_ADC: rl = dl + sl + cin; break;
      case ALU_SUB: case ALU_CMP: case ALU_SBB: rl = dl - sl - cin; break;
      case ALU_OR: rl = dl | sl; break;
      case ALU_XOR: rl = dl ^ sl; break;
      default: rl = dl & sl; break;
    }
    rl = size === 1 ? rl & 0xff : size === 2 ? rl & 0xffff : rl | 0;
  }
  cpu.th = rh;
  return rl;
}

function record(cpu: X86Cpu, op: number, size: number, dl: number, dh: number, sl: number, sh: number, rl: number, rh: number, cin: number): void {
  cpu.fOp = FKIND[op]; cpu.fSz = size;
  cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = cin;
}

function carryIn(cpu: X86Cpu, op: number): number {
  return (op === ALU_ADC || op === ALU_SBB) && cpu.cf() ? 1 : 0;
}

/** Shared body: dst (register rm / memory) op= (sl, sh). */
function aluDst(cpu: X86Cpu, i: Insn, sl: number, sh: number): void {
  const size = i.size, op = i.cc;
  const cin = carryIn(cpu, op);
  if (i.rm >= 0) {
    const dl = cpu.getR(size, i.rm), dh = size === 8 ? cpu.th : 0;
    const rl = compute(cpu, op, size, dl, dh, sl, sh, cin), rh = cpu.th;
    if (op < ALU_CMP) cpu.setR(size, i.rm, rl, rh);
    record(cpu, op, size, dl, dh, sl, sh, rl, rh, cin);
  } else {
    const a = cpu.ea(i);
    const dl = cpu.readM(size, a), dh = size === 8 ? cpu.th : 0;
    const rl = compute(cpu, op, size, dl, dh, sl, sh, cin), rh = cpu.th;
    if (op < ALU_CMP) cpu.writeM(size, a, rl, rh);
    record(cpu, op, size, dl, dh, sl, sh, rl, rh, cin);
  }
}

/** E op= G */
export function aluEG(cpu: X86Cpu, i: Insn): void {
  const sl = cpu.getR(i.size, i.reg);
  aluDst(cpu, i, sl, i.size === 8 ? cpu.th : 0);
}

/** E op= imm (also AL/eAX, imm with rm = 0) */
export function aluEI(cpu: X86Cpu, i: Insn): void {
  aluDst(cpu, i, i.imm, i.immHi);
}

/** G op= E */
export function aluGE(cpu: X86Cpu, i: Insn): void {
  const size = i.size, op = i.cc;
  const sl = cpu.readE(i, size), sh = size === 8 ? cpu.th : 0;
  const cin = carryIn(cpu, op);
  const dl = cpu.getR(size, i.reg), dh = size === 8 ? cpu.th : 0;
  const rl = compute(cpu, op, size, dl, dh, sl, sh, cin), rh = cpu.th;
  if (op < ALU_CMP) cpu.setR(size, i.reg, rl, rh);
  record(cpu, op, size, dl, dh, sl, sh, rl, rh, cin);
}

/** Fast paths for the commonest 32/64-bit register forms. */
export function add64RR(cpu: X86Cpu, i: Insn): void {
  const lo = cpu.lo, hi = cpu.hi, d = i.rm, s = i.reg;
  const dl = lo[d], dh = hi[d], sl = lo[s], sh = hi[s];
  const t = (dl >>> 0) + (sl >>> 0);
  const rl = t | 0, rh = (dh + sh + (t > 0xffffffff ? 1 : 0)) | 0;
  lo[d] = rl; hi[d] = rh;
  cpu.fOp = F_ADD; cpu.fSz = 8; cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}
export function cmp32RI(cpu: X86Cpu, i: Insn): void {
  const dl = cpu.lo[i.rm], sl = i.imm;
  cpu.fOp = F_SUB; cpu.fSz = 4; cpu.fDl = dl; cpu.fDh = 0; cpu.fSl = sl; cpu.fSh = 0; cpu.fRl = (dl - sl) | 0; cpu.fRh = 0; cpu.fCin = 0;
}
export function cmp32RR(cpu: X86Cpu, i: Insn): void {
  const dl = cpu.lo[i.rm], sl = cpu.lo[i.reg];
  cpu.fOp = F_SUB; cpu.fSz = 4; cpu.fDl = dl; cpu.fDh = 0; cpu.fSl = sl; cpu.fSh = 0; cpu.fRl = (dl - sl) | 0; cpu.fRh = 0; cpu.fCin = 0;
}
export function add32RI(cpu: X86Cpu, i: Insn): void {
  const d = i.rm, dl = cpu.lo[d], sl = i.imm, rl = (dl + sl) | 0;
  cpu.lo[d] = rl; cpu.hi[d] = 0;
  cpu.fOp = F_ADD; cpu.fSz = 4; cpu.fDl = dl; cpu.fDh = 0; cpu.fSl = sl; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = 0; cpu.fCin = 0;
}
export function add32RR(cpu: X86Cpu, i: Insn): void {
  const d = i.rm, dl = cpu.lo[d], sl = cpu.lo[i.reg], rl = (dl + sl) | 0;
  cpu.lo[d] = rl; cpu.hi[d] = 0;
  cpu.fOp = F_ADD; cpu.fSz = 4; cpu.fDl = dl; cpu.fDh = 0; cpu.fSl = sl; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = 0; cpu.fCin = 0;
}

function incdec(cpu: X86Cpu, i: Insn, dec: boolean): void {
  const size = i.size;
  const cfIn = cpu.cf() ? 1 : 0;
  let a = 0;
  let dl: number, dh = 0;
  if (i.rm >= 0) { dl = cpu.getR(size, i.rm); if (size === 8) dh = cpu.th; }
  else { a = cpu.ea(i); dl = cpu.readM(size, a); if (size === 8) dh = cpu.th; }
  const rl = compute(cpu, dec ? ALU_SUB : ALU_ADD, size, dl, dh, 1, 0, 0), rh = cpu.th;
  if (i.rm >= 0) cpu.setR(size, i.rm, rl, rh); else cpu.writeM(size, a, rl, rh);
  cpu.fOp = dec ? F_DEC : F_INC; cpu.fSz = size;
  cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = 1; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = cfIn;
}
export function incE(cpu: X86Cpu, i: Insn): void { incdec(cpu, i, false); }
export function decE(cpu: X86Cpu, i: Insn): void { incdec(cpu, i, true); }

export function negE(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  let a = 0;
  let sl: number, sh = 0;
  if (i.rm >= 0) { sl = cpu.getR(size, i.rm); if (size === 8) sh = cpu.th; }
  else { a = cpu.ea(i); sl = cpu.readM(size, a); if (size === 8) sh = cpu.th; }
  const rl = compute(cpu, ALU_SUB, size, 0, 0, sl, sh, 0), rh = cpu.th;
  if (i.rm >= 0) cpu.setR(size, i.rm, rl, rh); else cpu.writeM(size, a, rl, rh);
  record(cpu, ALU_SUB, size, 0, 0, sl, sh, rl, rh, 0);
}

export function notE(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  if (i.rm >= 0) { const l = cpu.getR(size, i.rm); cpu.setR(size, i.rm, ~l, ~cpu.th); return; }
  const a = cpu.ea(i);
  const l = cpu.readM(size, a);
  cpu.writeM(size, a, ~l, ~cpu.th);
}
