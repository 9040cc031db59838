/**
 * Specialised executors for the commonest register/immediate/memory forms
 * (chosen at decode time through OpDef.fast). Each must behave exactly like
 * the generic executor it replaces (alu.ts, mov.ts) — the hardware flag
 * goldens and the program tests run through them.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import type { ExecFn } from '../insn';
import { F_ADD, F_SUB, F_LOGIC, F_INC, F_DEC } from '../flags';
import { ALU_ADD, ALU_SUB, ALU_CMP, ALU_AND, ALU_OR, ALU_XOR, ALU_TEST } from './alu';

function sub64(cpu: X86Cpu, d: number, sl: number, sh: number, write: boolean): void {
  const lo = cpu.lo, hi = cpu.hi;
  const dl = lo[d], dh = hi[d];
  const t = (dl >>> 0) - (sl >>> 0);
  const rl = t | 0, rh = (dh - sh - (t < 0 ? 1 : 0)) | 0;
  if (write) { lo[d] = rl; hi[d] = rh; }
  cpu.fOp = F_SUB; cpu.fSz = 8; cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}
function add64(cpu: X86Cpu, d: number, sl: number, sh: number): void {
  const lo = cpu.lo, hi = cpu.hi;
  const dl = lo[d], dh = hi[d];
  const t = (dl >>> 0) + (sl >>> 0);
  const rl = t | 0, rh = (dh + sh + (t > 0xffffffff ? 1 : 0)) | 0;
  lo[d] = rl; hi[d] = rh;
  cpu.fOp = F_ADD; cpu.fSz = 8; cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}
function sub32(cpu: X86Cpu, d: number, sl: number, write: boolean): void {
  const dl = cpu.lo[d], rl = (dl - sl) | 0;
  if (write) { cpu.lo[d] = rl; cpu.hi[d] = 0; }
  cpu.fOp = F_SUB; cpu.fSz = 4; cpu.fDl = dl; cpu.fDh = 0; cpu.fSl = sl; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = 0; cpu.fCin = 0;
}
function logic(cpu: X86Cpu, size: number, rl: number, rh: number): void {
  cpu.fOp = F_LOGIC; cpu.fSz = size; cpu.fDl = 0; cpu.fDh = 0; cpu.fSl = 0; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}

export const sub64RR: ExecFn = (cpu, i) => sub64(cpu, i.rm, cpu.lo[i.reg], cpu.hi[i.reg], true);
export const cmp64RR: ExecFn = (cpu, i) => sub64(cpu, i.rm, cpu.lo[i.reg], cpu.hi[i.reg], false);
export const sub64RI: ExecFn = (cpu, i) => sub64(cpu, i.rm, i.imm, i.immHi, true);
export const cmp64RI: ExecFn = (cpu, i) => sub64(cpu, i.rm, i.imm, i.immHi, false);
export const add64RI: ExecFn = (cpu, i) => add64(cpu, i.rm, i.imm, i.immHi);
export const sub32RR: ExecFn = (cpu, i) => sub32(cpu, i.rm, cpu.lo[i.reg], true);
export const sub32RI: ExecFn = (cpu, i) => sub32(cpu, i.rm, i.imm, true);

export const and32RR: ExecFn = (cpu, i) => { const r = cpu.lo[i.rm] & cpu.lo[i.reg]; cpu.lo[i.rm] = r; cpu.hi[i.rm] = 0; logic(cpu, 4, r, 0); };
export const or32RR: ExecFn = (cpu, i) => { const r = cpu.lo[i.rm] | cpu.lo[i.reg]; cpu.lo[i.rm] = r; cpu.hi[i.rm] = 0; logic(cpu, 4, r, 0); };
export const xor32RR: ExecFn = (cpu, i) => { const r = cpu.lo[i.rm] ^ cpu.lo[i.reg]; cpu.lo[i.rm] = r; cpu.hi[i.rm] = 0; logic(cpu, 4, r, 0); };
export const test32RR: ExecFn = (cpu, i) => { logic(cpu, 4, cpu.lo[i.rm] & cpu.lo[i.reg], 0); };
export const and32RI: ExecFn = (cpu, i) => { const r = cpu.lo[i.rm] & i.imm; cpu.lo[i.rm] = r; cpu.hi[i.rm] = 0; logic(cpu, 4, r, 0); };
export const and64RR: ExecFn = (cpu, i) => {
  const l = cpu.lo[i.rm] & cpu.lo[i.reg], h = cpu.hi[i.rm] & cpu.hi[i.reg];
  cpu.lo[i.rm] = l; cpu.hi[i.rm] = h; logic(cpu, 8, l, h);
};
export const or64RR: ExecFn = (cpu, i) => {
  const l = cpu.lo[i.rm] | cpu.lo[i.reg], h = cpu.hi[i.rm] | cpu.hi[i.reg];
  cpu.lo[i.rm] = l; cpu.hi[i.rm] = h; logic(cpu, 8, l, h);
};
export const xor64RR: ExecFn = (cpu, i) => {
  const l = cpu.lo[i.rm] ^ cpu.lo[i.reg], h = cpu.hi[i.rm] ^ cpu.hi[i.reg];
  cpu.lo[i.rm] = l; cpu.hi[i.rm] = h; logic(cpu, 8, l, h);
};
export const test64RR: ExecFn = (cpu, i) => { logic(cpu, 8, cpu.lo[i.rm] & cpu.lo[i.reg], cpu.hi[i.rm] & cpu.hi[i.reg]); };

/** Fast variant for group-1 / 00-3f reg-reg forms, or undefined. */
export function fastAluRR(i: Insn): ExecFn | undefined {
  if (i.rm < 0) return undefined;
  if (i.size === 8) {
    switch (i.cc) {
      case ALU_SUB: return sub64RR;
      case ALU_CMP: return cmp64RR;
      case ALU_AND: return and64RR;
      case ALU_OR: return or64RR;
      case ALU_XOR: return xor64RR;
      case ALU_TEST: return test64RR;
      default: return undefined;
    }
  }
  if (i.size === 4) {
    switch (i.cc) {
      case ALU_SUB: return sub32RR;
      case ALU_AND: return and32RR;
      case ALU_OR: return or32RR;
      case ALU_XOR: return xor32RR;
      case ALU_TEST: return test32RR;
      default: return undefined;
    }
  }
  return undefined;
}
/** Fast variant for reg-imm forms, or undefined. */
export function fastAluRI(i: Insn): ExecFn | undefined {
  if (i.rm < 0) return undefined;
  if (i.size === 8) {
    switch (i.cc) {
      case ALU_ADD: return add64RI;
      case ALU_SUB: return sub64RI;
      case ALU_CMP: return cmp64RI;
      default: return undefined;
    }
  }
  if (i.size === 4) {
    switch (i.cc) {
      case ALU_SUB: return sub32RI;
      case ALU_AND: return and32RI;
      default: return undefined;
    }
  }
  return undefined;
}

// ---- add / sub / cmp with a memory destination (E = memory), 32 and 64 bits -------------
// Same order as aluDst: read, compute, write (a faulting write leaves flags and memory alone), record.
function mem32(cpu: X86Cpu, i: Insn, sl: number, op: number): void {
  const a = cpu.ea(i), dl = cpu.mem.read32(a) | 0;
  const rl = op === ALU_ADD ? (dl + sl) | 0 : (dl - sl) | 0;
  if (op !== ALU_CMP) cpu.mem.write32(a, rl);
  cpu.fOp = op === ALU_ADD ? F_ADD : F_SUB; cpu.fSz = 4;
  cpu.fDl = dl; cpu.fDh = 0; cpu.fSl = sl; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = 0; cpu.fCin = 0;
}
function mem64(cpu: X86Cpu, i: Insn, sl: number, sh: number, op: number): void {
  const a = cpu.ea(i), mem = cpu.mem;
  const dl = mem.read32(a) | 0, dh = mem.read32(a + 4) | 0;
  let rl: number, rh: number;
  if (op === ALU_ADD) {
    const t = (dl >>> 0) + (sl >>> 0); rl = t | 0; rh = (dh + sh + (t > 0xffffffff ? 1 : 0)) | 0;
  } else {
    const t = (dl >>> 0) - (sl >>> 0); rl = t | 0; rh = (dh - sh - (t < 0 ? 1 : 0)) | 0;
  }
  if (op !== ALU_CMP) mem.write64Halves(a, rl, rh);
  cpu.fOp = op === ALU_ADD ? F_ADD : F_SUB; cpu.fSz = 8;
  cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = sl; cpu.fSh = sh; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}
export const add32MR: ExecFn = (cpu, i) => mem32(cpu, i, cpu.lo[i.reg], ALU_ADD);
export const sub32MR: ExecFn = (cpu, i) => mem32(cpu, i, cpu.lo[i.reg], ALU_SUB);
export const cmp32MR: ExecFn = (cpu, i) => mem32(cpu, i, cpu.lo[i.reg], ALU_CMP);
export const add64MR: ExecFn = (cpu, i) => mem64(cpu, i, cpu.lo[i.reg], cpu.hi[i.reg], ALU_ADD);
export const sub64MR: ExecFn = (cpu, i) => mem64(cpu, i, cpu.lo[i.reg], cpu.hi[i.reg], ALU_SUB);
export const cmp64MR: ExecFn = (cpu, i) => mem64(cpu, i, cpu.lo[i.reg], cpu.hi[i.reg], ALU_CMP);
export const add32MI: ExecFn = (cpu, i) => mem32(cpu, i, i.imm, ALU_ADD);
export const sub32MI: ExecFn = (cpu, i) => mem32(cpu, i, i.imm, ALU_SUB);
export const cmp32MI: ExecFn = (cpu, i) => mem32(cpu, i, i.imm, ALU_CMP);
export const add64MI: ExecFn = (cpu, i) => mem64(cpu, i, i.imm, i.immHi, ALU_ADD);
export const sub64MI: ExecFn = (cpu, i) => mem64(cpu, i, i.imm, i.immHi, ALU_SUB);
export const cmp64MI: ExecFn = (cpu, i) => mem64(cpu, i, i.imm, i.immHi, ALU_CMP);
/** Fast variant for add/sub/cmp m32/m64, r (E = memory), or undefined. */
export function fastAluMR(i: Insn): ExecFn | undefined {
  if (i.rm >= 0 || i.reg >= 16) return undefined;
  switch (i.cc) {
    case ALU_ADD: return i.size === 8 ? add64MR : i.size === 4 ? add32MR : undefined;
    case ALU_SUB: return i.size === 8 ? sub64MR : i.size === 4 ? sub32MR : undefined;
    case ALU_CMP: return i.size === 8 ? cmp64MR : i.size === 4 ? cmp32MR : undefined;
    default: return undefined;
  }
}
/** Fast variant for add/sub/cmp m32/m64, imm, or undefined. */
export function fastAluMI(i: Insn): ExecFn | undefined {
  if (i.rm >= 0) return undefined;
  switch (i.cc) {
    case ALU_ADD: return i.size === 8 ? add64MI : i.size === 4 ? add32MI : undefined;
    case ALU_SUB: return i.size === 8 ? sub64MI : i.size === 4 ? sub32MI : undefined;
    case ALU_CMP: return i.size === 8 ? cmp64MI : i.size === 4 ? cmp32MI : undefined;
    default: return undefined;
  }
}

// ---- inc / dec on registers (CF preserved: computed from the previous record) ----
function incdecReg(cpu: X86Cpu, r: number, size: number, dec: boolean): void {
  const cfIn = cpu.cf() ? 1 : 0;
  const lo = cpu.lo, hi = cpu.hi;
  const dl = lo[r];
  let rl: number, dh = 0, rh = 0;
  if (size === 8) {
    dh = hi[r];
    rl = dec ? (dl - 1) | 0 : (dl + 1) | 0;
    rh = dec ? (dl === 0 ? (dh - 1) | 0 : dh) : (rl === 0 ? (dh + 1) | 0 : dh);
    lo[r] = rl; hi[r] = rh;
  } else {
    rl = dec ? (dl - 1) | 0 : (dl + 1) | 0;
    lo[r] = rl; hi[r] = 0;
  }
  cpu.fOp = dec ? F_DEC : F_INC; cpu.fSz = size;
  cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = 1; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = cfIn;
}
export const inc32R: ExecFn = (cpu, i) => incdecReg(cpu, i.rm, 4, false);
export const dec32R: ExecFn = (cpu, i) => incdecReg(cpu, i.rm, 4, true);
export const inc64R: ExecFn = (cpu, i) => incdecReg(cpu, i.rm, 8, false);
export const dec64R: ExecFn = (cpu, i) => incdecReg(cpu, i.rm, 8, true);
export function fastIncDec(dec: boolean): (i: Insn) => ExecFn | undefined {
  return i => i.rm < 0 || i.rm >= 16 ? undefined : i.size === 8 ? (dec ? dec64R : inc64R) : i.size === 4 ? (dec ? dec32R : inc32R) : undefined;
}

// ---- moves ----------------------------------------------------------------------------
export const mov32RM: ExecFn = (cpu, i) => { const v = cpu.mem.read32(cpu.ea(i)) | 0; cpu.lo[i.reg] = v; cpu.hi[i.reg] = 0; };
export const mov32MR: ExecFn = (cpu, i) => { cpu.mem.write32(cpu.ea(i), cpu.lo[i.reg]); };
export const mov64MR: ExecFn = (cpu, i) => {
  cpu.mem.write64Halves(cpu.ea(i), cpu.lo[i.reg], cpu.hi[i.reg]);
};
export const mov32RI: ExecFn = (cpu, i) => { cpu.lo[i.rm] = i.imm; cpu.hi[i.rm] = 0; };
export const mov64RI: ExecFn = (cpu, i) => { cpu.lo[i.rm] = i.imm; cpu.hi[i.rm] = i.immHi; };
export const movzx8RM: ExecFn = (cpu, i) => { cpu.lo[i.reg] = cpu.mem.read8(cpu.ea(i)); cpu.hi[i.reg] = 0; };
