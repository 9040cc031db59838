/**
 * F and D executors (single and double precision): loads and stores, the
 * arithmetic through emulator/cpu/softfloat.ts (every rounding mode, the
 * fflags exceptions, the canonical NaN as RISC-V produces it), sign
 * injection, min/max, compares, classification, conversions and moves.
 *
 * The f registers hold raw 64-bit patterns (RvCpu.f). A single-precision
 * value is NaN-boxed (upper 32 bits all ones); a single-precision operand
 * that is not properly boxed reads as the canonical NaN, as the ISA says.
 * Rounding mode: the instruction's rm field, or frm for DYN (7); a
 * reserved mode (5, 6, or a reserved frm under DYN) is an illegal
 * instruction.
 */
import type { RvCpu } from '../cpu';
import type { RvInsn } from '../insn';
import {
  FpFormat, FpResult, RoundingMode, fadd, fclass, fcompare, fconvert, fdiv, ffma, fminmax, fmul, fsgnj, fsqrt, ftoint, intToF,
} from '../../../cpu/softfloat';
import { illegal } from './system';

const BOX = 0xffffffff00000000n;
const CANONICAL_NAN32 = 0x7fc00000n;
const RM: readonly (RoundingMode | null)[] = ['rne', 'rtz', 'rdn', 'rup', 'rmm', null, null, null];

/** raw register fields (rd is not remapped for f registers: f0 is a register) */
const frd = (i: RvInsn): number => (i.word >>> 7) & 31;
const frs3 = (i: RvInsn): number => (i.word >>> 27) & 31;
/** the fmt field (bits 26:25): 0 = S, 1 = D */
const fmtOf = (i: RvInsn): FpFormat => (((i.word >>> 25) & 3) === 1 ? 64 : 32);

/** the rounding mode of an instruction, or null after raising an illegal instruction */
function rmOf(c: RvCpu, i: RvInsn): RoundingMode | null {
  let rm = (i.word >>> 12) & 7;
  if (rm === 7) rm = c.frm;
  const m = RM[rm] ?? null;
  if (m === null) illegal(c, i);
  return m;
}

/** operand bits of a format (a badly boxed single reads as the canonical NaN) */
function get(c: RvCpu, r: number, f: FpFormat): bigint {
  const v = c.f[r];
  if (f === 64) return v;
  return (v & BOX) === BOX ? v & 0xffffffffn : CANONICAL_NAN32;
}
function put(c: RvCpu, r: number, f: FpFormat, bits: bigint): void {
  c.f[r] = f === 64 ? bits : BOX | bits;
}
function result(c: RvCpu, i: RvInsn, f: FpFormat, r: FpResult): void {
  c.fflags |= r.flags;
  put(c, frd(i), f, r.bits);
}

// ---------------------------------------------------------------- loads / stores
export function flw(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  c.f[frd(i)] = BOX | BigInt(c.mem.read32(a) >>> 0);
}
export function fld(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'read');
  const lo = c.mem.read32(a) >>> 0, hi = c.mem.read32(a + 4) >>> 0;
  c.f[frd(i)] = (BigInt(hi) << 32n) | BigInt(lo);
}
export function fsw(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'write');
  c.mem.write32(a, Number(c.f[i.rs2] & 0xffffffffn) | 0); c.stored(a, 4);
}
export function fsd(c: RvCpu, i: RvInsn): void {
  const a = c.ea(i.rs1, i.imm, 'write');
  const v = c.f[i.rs2];
  c.mem.write64Halves(a, Number(v & 0xffffffffn) | 0, Number(v >> 32n) | 0); c.stored(a, 8);
}

// ---------------------------------------------------------------- arithmetic
function binary(op: (f: FpFormat, a: bigint, b: bigint, rm: RoundingMode) => FpResult) {
  return (c: RvCpu, i: RvInsn): void => {
    const rm = rmOf(c, i);
    if (rm === null) return;
    const f = fmtOf(i);
    result(c, i, f, op(f, get(c, i.rs1, f), get(c, i.rs2, f), rm));
  };
}
export const faddOp = binary((f, a, b, rm) => fadd(f, a, b, rm));
export const fsubOp = binary((f, a, b, rm) => fadd(f, a, b, rm, true));
export const fmulOp = binary(fmul);
export const fdivOp = binary(fdiv);
export function fsqrtOp(c: RvCpu, i: RvInsn): void {
  const rm = rmOf(c, i);
  if (rm === null) return;
  const f = fmtOf(i);
  result(c, i, f, fsqrt(f, get(c, i.rs1, f), rm));
}
function fused(negProduct: boolean, negAddend: boolean) {
  return (c: RvCpu, i: RvInsn): void => {
    const rm = rmOf(c, i);
    if (rm === null) return;
    const f = fmtOf(i);
    result(c, i, f, ffma(f, get(c, i.rs1, f), get(c, i.rs2, f), get(c, frs3(i), f), rm, negProduct, negAddend));
  };
}
export const fmaddOp = fused(false, false);
export const fmsubOp = fused(false, true);
export const fnmsubOp = fused(true, false);
export const fnmaddOp = fused(true, true);

// ---------------------------------------------------------------- sign injection, min/max
function sgnj(kind: 'j' | 'jn' | 'jx') {
  return (c: RvCpu, i: RvInsn): void => {
    const f = fmtOf(i);
    put(c, frd(i), f, fsgnj(f, get(c, i.rs1, f), get(c, i.rs2, f), kind));
  };
}
export const fsgnjOp = sgnj('j');
export const fsgnjnOp = sgnj('jn');
export const fsgnjxOp = sgnj('jx');
function minmax(max: boolean) {
  return (c: RvCpu, i: RvInsn): void => {
    const f = fmtOf(i);
    result(c, i, f, fminmax(f, get(c, i.rs1, f), get(c, i.rs2, f), max));
  };
}
export const fminOp = minmax(false);
export const fmaxOp = minmax(true);

// ---------------------------------------------------------------- compares, class (integer results)
function compare(op: 'eq' | 'lt' | 'le') {
  return (c: RvCpu, i: RvInsn): void => {
    const f = fmtOf(i);
    const r = fcompare(f, get(c, i.rs1, f), get(c, i.rs2, f), op);
    c.fflags |= r.flags;
    c.lo[i.rd] = r.result ? 1 : 0; c.hi[i.rd] = 0;
  };
}
export const feqOp = compare('eq');
export const fltOp = compare('lt');
export const fleOp = compare('le');
export function fclassOp(c: RvCpu, i: RvInsn): void {
  const f = fmtOf(i);
  c.lo[i.rd] = fclass(f, get(c, i.rs1, f)); c.hi[i.rd] = 0;
}

// ---------------------------------------------------------------- conversions
/** fcvt.{w,wu,l,lu}.{s,d}: rs2 selects the integer type */
export function fcvtToInt(c: RvCpu, i: RvInsn): void {
  const rm = rmOf(c, i);
  if (rm === null) return;
  const f = fmtOf(i);
  const kind = i.rs2; // 0 w, 1 wu, 2 l, 3 lu
  const width = kind < 2 ? 32 : 64;
  const r = ftoint(f, get(c, i.rs1, f), width, (kind & 1) === 0, rm);
  c.fflags |= r.flags;
  // 32-bit results are sign-extended, unsigned ones included
  c.setX(i.rd === 32 ? 0 : i.rd, width === 32 ? BigInt.asIntN(32, r.value) : r.value);
}
/** fcvt.{s,d}.{w,wu,l,lu} */
export function fcvtFromInt(c: RvCpu, i: RvInsn): void {
  const rm = rmOf(c, i);
  if (rm === null) return;
  const f = fmtOf(i);
  const x = c.x(i.rs1);
  let v: bigint;
  switch (i.rs2) {
    case 0: v = BigInt.asIntN(32, x); break;
    case 1: v = BigInt.asUintN(32, x); break;
    case 2: v = BigInt.asIntN(64, x); break;
    default: v = x;
  }
  result(c, i, f, intToF(f, v, rm));
}
/** fcvt.s.d and fcvt.d.s (fmt = destination, rs2 = source format) */
export function fcvtFloat(c: RvCpu, i: RvInsn): void {
  const rm = rmOf(c, i);
  if (rm === null) return;
  const to = fmtOf(i), from: FpFormat = i.rs2 === 1 ? 64 : 32;
  result(c, i, to, fconvert(from, to, get(c, i.rs1, from), rm));
}

// ---------------------------------------------------------------- moves
/** fmv.x.w (sign-extended) / fmv.x.d */
export function fmvToInt(c: RvCpu, i: RvInsn): void {
  const v = c.f[i.rs1];
  c.setX(i.rd === 32 ? 0 : i.rd, fmtOf(i) === 64 ? v : BigInt.asIntN(32, v & 0xffffffffn));
}
/** fmv.w.x (boxed) / fmv.d.x */
export function fmvFromInt(c: RvCpu, i: RvInsn): void {
  const x = c.x(i.rs1);
  c.f[frd(i)] = fmtOf(i) === 64 ? x : BOX | (x & 0xffffffffn);
}
