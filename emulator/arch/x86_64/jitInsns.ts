/**
 * The instructions the x86_64 front end (jit.ts) emits natively, by
 * executor: ALU forms, inc / dec / neg / not, shifts and rotates by
 * immediate, shld / shrd, imul, moves and extensions, push / pop / leave,
 * cbw / cwd families, xchg, nop, direct and indirect jumps, calls and
 * returns. A handler returns false for a form it leaves to the
 * interpreter's executor (a helper). Emission through jitEmitter.ts.
 */
import type { Temp } from '../../jit/ir';
import { Insn, NO_REG } from './insn';
import { F_ROL, F_ROR, F_ADD, F_ADC, F_SUB, F_SBB, F_LOGIC, F_INC, F_DEC, F_SHL, F_SHR, F_SAR, F_SHLD, F_SHRD, F_IMUL } from './flags';
import type { Size } from './jitEmitter';
import { BlockEmitter, RBP, RSP, immValue } from './jitEmitter';
import * as alu from './exec/alu';
import * as mov from './exec/mov';
import * as sh from './exec/shift';
import * as md from './exec/muldiv';
import * as ctl from './exec/control';
import * as sys from './exec/system';

// ---------------------------------------------------------------- instructions
type Handler = (e: BlockEmitter, i: Insn) => boolean;

/** the value of the E operand at size (loaded first: before any write) */
function readE(e: BlockEmitter, i: Insn, size: Size): Temp {
  return i.rm !== NO_REG ? e.rd(size, i.rm) : e.ld(e.ea(i), size);
}

/** d op s for the ALU operations (add or and sub xor cmp test), masked to size; adc/sbb are not here */
function aluOp(e: BlockEmitter, op: number, size: Size, d: Temp, s: Temp): Temp {
  switch (op) {
    case alu.ALU_ADD: return e.mask(size, e.bin('add', d, s));
    case alu.ALU_SUB: case alu.ALU_CMP: return e.mask(size, e.bin('sub', d, s));
    case alu.ALU_OR: return e.bin('or', d, s);
    case alu.ALU_XOR: return e.bin('xor', d, s);
    default: return e.bin('and', d, s);
  }
}
const ALU_KIND = [F_ADD, F_LOGIC, F_ADC, F_SBB, F_LOGIC, F_SUB, F_LOGIC, F_SUB, F_LOGIC];

/** E op= src (src: G or imm) or G op= E */
function aluForm(e: BlockEmitter, i: Insn, src: 'G' | 'I' | 'E'): boolean {
  const op = i.cc, size = i.size as Size;
  if (op === alu.ALU_ADC || op === alu.ALU_SBB) return false;
  const writes = op !== alu.ALU_CMP && op !== alu.ALU_TEST;
  let d: Temp, s: Temp;
  if (src === 'E') {
    s = readE(e, i, size);
    d = e.rd(size, i.reg);
    const r = aluOp(e, op, size, d, s);
    if (writes) e.wr(size, i.reg, r);
    e.record({ op: ALU_KIND[op], size, r, d, s, cin: null, count: 0 });
    return true;
  }
  s = src === 'G' ? e.rd(size, i.reg) : e.c(immValue(i));
  if (i.rm !== NO_REG) {
    d = e.rd(size, i.rm);
    const r = aluOp(e, op, size, d, s);
    if (writes) e.wr(size, i.rm, r);
    e.record({ op: ALU_KIND[op], size, r, d, s, cin: null, count: 0 });
    return true;
  }
  const a = e.ea(i);
  d = e.ld(a, size);
  const r = aluOp(e, op, size, d, s);
  if (writes) e.st(a, r, size);
  e.record({ op: ALU_KIND[op], size, r, d, s, cin: null, count: 0 });
  return true;
}

/** read-modify-write of E: f gives the new value from the old one (loads and stores before any register write) */
function modifyE(e: BlockEmitter, i: Insn, f: (old: Temp) => Temp): Temp {
  const size = i.size as Size;
  if (i.rm !== NO_REG) {
    const old = e.rd(size, i.rm);
    const v = f(old);
    e.wr(size, i.rm, v);
    return old;
  }
  const a = e.ea(i);
  const old = e.ld(a, size);
  e.st(a, f(old), size);
  return old;
}

function incDec(e: BlockEmitter, i: Insn, dec: boolean): boolean {
  const size = i.size as Size;
  // CF is kept: the current one (a guard may leave before the instruction when it is not cheap to know)
  const cin = e.cond(2);
  let r = 0;
  const d = modifyE(e, i, old => (r = e.mask(size, e.bin(dec ? 'sub' : 'add', old, e.c(1)))));
  e.record({ op: dec ? F_DEC : F_INC, size, r, d, s: e.c(1), cin, count: 0 });
  return true;
}

function shift(e: BlockEmitter, i: Insn): boolean {
  const op = i.cc, size = i.size as Size;
  if (op === sh.SH_RCL || op === sh.SH_RCR) return false;
  if (i.imm2 !== sh.COUNT_1 && i.imm2 !== sh.COUNT_IMM) return false;
  const count = (i.imm2 === sh.COUNT_1 ? 1 : i.imm & 0xff) & (size === 8 ? 0x3f : 0x1f);
  if (count === 0) {
    // no flag changes; the operand is still read, a 32-bit register destination still zero-extended
    const v = readE(e, i, size);
    if (i.rm !== NO_REG && size === 4) e.wr(4, i.rm, v);
    return true;
  }
  let r = 0;
  if (op === sh.SH_ROL || op === sh.SH_ROR) {
    // rotate left by k (ror by n: rol by bits - n); CF OF from the result, the other flags kept (the p* record)
    const bits = size * 8, k = op === sh.SH_ROL ? count % bits : (bits - count % bits) % bits;
    modifyE(e, i, old => (r = size === 8 ? e.bin('rotl', old, e.c(k)) : k === 0 ? old
      : e.bin('or', e.mask(size, e.bin('shl', old, e.c(k))), e.bin('shru', old, e.c(bits - k)))));
    e.record({ op: op === sh.SH_ROL ? F_ROL : F_ROR, size, r, d: r, s: r, cin: null, count });
    return true;
  }
  const n = e.c(count);
  const kind = op === sh.SH_SAR ? F_SAR : op === sh.SH_SHR ? F_SHR : F_SHL;
  let d = modifyE(e, i, old => (r = kind === F_SHL ? e.mask(size, e.bin('shl', old, n))
    : kind === F_SHR ? e.bin('shru', old, n) : e.mask(size, e.bin('shrs', e.sx(size, old), n))));
  // sar below 64 bits records the operand sign-extended to 32 bits (as the executor does)
  if (kind === F_SAR && size !== 8) d = e.un('zext32', e.sx(size, d));
  e.record({ op: kind, size, r, d, s: n, cin: null, count });
  return true;
}

/** shld / shrd E, G, imm8 at 32/64 bits */
function shiftDouble(e: BlockEmitter, i: Insn): boolean {
  const size = i.size as Size, left = i.cc === 0;
  if (size === 2 || i.imm2 === sh.COUNT_CL) return false;
  const bits = size * 8, count = i.imm & (bits - 1);
  if (count === 0) {
    const v = readE(e, i, size);
    if (i.rm !== NO_REG && size === 4) e.wr(4, i.rm, v);
    return true;
  }
  const g = e.rd(size, i.reg);
  let r = 0;
  const d = modifyE(e, i, old => (r = left
    ? e.bin('or', e.mask(size, e.bin('shl', old, e.c(count))), e.bin('shru', g, e.c(bits - count)))
    : e.bin('or', e.bin('shru', old, e.c(count)), e.mask(size, e.bin('shl', g, e.c(bits - count))))));
  e.record({ op: left ? F_SHLD : F_SHRD, size, r, d, s: e.c(count), cin: null, count });
  return true;
}

function imul(e: BlockEmitter, i: Insn): boolean {
  const size = i.size as Size;
  if (size === 1) return false;
  const d = readE(e, i, size);
  const s = i.cc === 1 ? e.c(immValue(i)) : e.rd(size, i.reg);
  const r = e.mask(size, e.bin('mul', d, s));
  e.wr(size, i.reg, r);
  e.record({ op: F_IMUL, size, r, d, s, cin: null, count: 0 });
  return true;
}

/**
 * push a 64-bit value: rsp not canonical is the interpreter's #GP (regAddr)
 * even where rsp - 8 is (rsp in 2^47 .. 2^47 + 7): leave before the store
 */
function push(e: BlockEmitter, v: Temp): void {
  const rsp = e.b.get(RSP);
  e.guard(e.nonCanonical(rsp));
  const sp = e.bin('sub', rsp, e.c(8));
  e.st(sp, v, 8);
  e.b.set(RSP, sp);
}

/**
 * ret / ret imm16 (ctl.ret: the operand size is always 64 bits, the imm
 * is 0 for c3): the target from [rsp], #GP (rsp unchanged) when it is not
 * canonical, then rsp += 8 + imm
 */
function ret(e: BlockEmitter, i: Insn): boolean {
  const sp = e.b.get(RSP);
  const t = e.ld(sp, 8);
  e.guard(e.nonCanonical(t));
  e.b.set(RSP, e.bin('add', sp, e.c(8 + (i.imm & 0xffff))));
  e.b.jind(t);
  return true;
}

/** jmp r/m64 / call r/m64 (ctl.jmpE / callE): the target read first, #GP when not canonical, then (call) the push */
function jmpCallE(e: BlockEmitter, i: Insn, call: boolean): boolean {
  const t = readE(e, i, 8);
  e.guard(e.nonCanonical(t));
  if (call) push(e, e.c(i.next));
  e.b.jind(t);
  return true;
}

export const HANDLERS = new Map<Function, Handler>([
  [alu.aluEG, (e, i) => aluForm(e, i, 'G')],
  [alu.aluGE, (e, i) => aluForm(e, i, 'E')],
  [alu.aluEI, (e, i) => aluForm(e, i, 'I')],
  [alu.notE, (e, i) => { modifyE(e, i, v => e.mask(i.size as Size, e.bin('xor', v, e.c(-1)))); return true; }],
  [alu.negE, (e, i) => {
    const size = i.size as Size;
    let r = 0;
    const s = modifyE(e, i, v => (r = e.mask(size, e.bin('sub', e.c(0), v))));
    e.record({ op: F_SUB, size, r, d: e.c(0), s, cin: null, count: 0 });
    return true;
  }],
  [alu.incE, (e, i) => incDec(e, i, false)],
  [alu.decE, (e, i) => incDec(e, i, true)],
  [sh.shiftGroup, shift],
  [sh.shxd, shiftDouble],
  [md.imul2, imul],
  [mov.movEG, (e, i) => {
    const size = i.size as Size;
    const v = e.rd(size, i.reg);
    if (i.rm !== NO_REG) e.wr(size, i.rm, v); else e.st(e.ea(i), v, size);
    return true;
  }],
  [mov.movGE, (e, i) => { const size = i.size as Size; e.wr(size, i.reg, readE(e, i, size)); return true; }],
  [mov.movEI, (e, i) => {
    const size = i.size as Size, v = e.c(immValue(i));
    if (i.rm !== NO_REG) e.wr(size, i.rm, v); else e.st(e.ea(i), v, size);
    return true;
  }],
  [mov.lea, (e, i) => { if (!i.hasMem) return false; e.wr(i.size as Size, i.reg, e.offset(i)); return true; }],
  [mov.movzx, (e, i) => { e.wr(i.size as Size, i.reg, readE(e, i, i.cc as Size)); return true; }],
  [mov.movsx, (e, i) => { e.wr(i.size as Size, i.reg, e.sx(i.cc as Size, readE(e, i, i.cc as Size))); return true; }],
  [mov.cmovcc, (e, i) => {
    const size = i.size as Size;
    const v = readE(e, i, size);
    const c = e.cond(i.cc);
    const r = e.b.sel(c, v, e.rd(size, i.reg));
    e.wr(size, i.reg, r); // 32-bit: zero-extended either way
    return true;
  }],
  [mov.setcc, (e, i) => {
    const c = e.cond(i.cc);
    if (i.rm !== NO_REG) e.wr(1, i.rm, c); else e.st(e.ea(i), c, 1);
    return true;
  }],
  [mov.pushR64, (e, i) => { push(e, e.b.get(i.rm)); return true; }],
  [mov.pushI, (e, i) => { if (i.size !== 8) return false; push(e, e.c(immValue(i))); return true; }],
  [mov.popR64, (e, i) => {
    const sp = e.b.get(RSP);
    const v = e.ld(sp, 8);
    e.b.set(RSP, e.bin('add', sp, e.c(8)));
    e.b.set(i.rm, v);
    return true;
  }],
  [mov.leave, (e) => {
    const bp = e.b.get(RBP);
    const v = e.ld(bp, 8);
    e.b.set(RSP, e.bin('add', bp, e.c(8)));
    e.b.set(RBP, v);
    return true;
  }],
  [mov.cbwFamily, (e, i) => {
    // cbw / cwde / cdqe: al / ax / eax sign-extended into ax / eax / rax
    const half = (i.size / 2) as Size;
    e.wr(i.size as Size, 0, e.sx(half, e.rd(half, 0)));
    return true;
  }],
  [mov.cwdFamily, (e, i) => {
    // cwd / cdq / cqo: the sign of ax / eax / rax into dx / edx / rdx
    const size = i.size as Size;
    e.wr(size, 2, e.bin('shrs', e.sx(size, e.rd(size, 0)), e.c(63)));
    return true;
  }],
  [mov.xchg, (e, i) => {
    if (i.rm === NO_REG) return false;
    const size = i.size as Size;
    const g = e.rd(size, i.reg), x = e.rd(size, i.rm);
    e.wr(size, i.rm, g);
    e.wr(size, i.reg, x);
    return true;
  }],
  [sys.nop, () => true],
  [ctl.jmpRel, (e, i) => { e.b.jmp(i.target); return true; }],
  [ctl.jcc, (e, i) => { e.b.br(e.cond(i.cc), i.target, i.next); return true; }],
  [ctl.callRel, (e, i) => { push(e, e.c(i.next)); e.b.jmp(i.target); return true; }],
  [ctl.ret, ret],
  [ctl.jmpE, (e, i) => jmpCallE(e, i, false)],
  [ctl.callE, (e, i) => jmpCallE(e, i, true)],
]);
