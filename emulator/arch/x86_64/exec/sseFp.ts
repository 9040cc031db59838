/**
 * SSE / SSE2 floating point: packed and scalar single / double
 * arithmetic, compares (all eight cmpps predicates, comis / ucomis setting
 * EFLAGS), logic, and conversions between integers, singles and doubles.
 *
 * Floating point follows the SDM's rules, not JavaScript's: a NaN operand
 * propagates quieted (the first source's when both are NaNs), an invalid
 * operation gives the default NaN (sign set: 0xffc00000 / 0xfff8...),
 * integer conversions that overflow give the "integer indefinite"
 * (0x80000000...), min / max return the second operand for NaNs and for
 * signed zeros; the invalid (IE) and divide-by-zero (ZE) flags are sticky
 * in MXCSR. Arithmetic rounds to nearest (JavaScript's doubles and fround
 * round singly and correctly there); conversions honour the MXCSR rounding
 * mode (to single and from integers through emulator/cpu/softfloat.ts).
 * Not modelled: the other rounding modes for
 * arithmetic, the precision / underflow / overflow / denormal flags,
 * DAZ / FTZ, unmasked exceptions (#XM).
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { CF, PF, ZF } from '../flags';
import { RoundingMode, f64Bits, fconvert, intToF } from '../../../cpu/softfloat';
import { lanes32, src } from './sse';

/** MXCSR's sticky invalid-operation and divide-by-zero flags */
const MX_IE = 0x1, MX_ZE = 0x4;

// ---------------------------------------------------------------- floating point

const f32buf = new Float32Array(1), u32buf = new Uint32Array(f32buf.buffer);
const f64buf = new Float64Array(1), u64lo = new Uint32Array(f64buf.buffer);

function isNaN32(bits: number): boolean { return (bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0; }
function isSNaN32(bits: number): boolean { return isNaN32(bits) && (bits & 0x400000) === 0; }
function isNaN64(lo: number, hi: number): boolean { return (hi & 0x7ff00000) === 0x7ff00000 && ((hi & 0xfffff) !== 0 || lo !== 0); }
function isSNaN64(lo: number, hi: number): boolean { return isNaN64(lo, hi) && (hi & 0x80000) === 0; }

function bitsToF32(bits: number): number { u32buf[0] = bits; return f32buf[0]; }
function f32ToBits(v: number): number { f32buf[0] = v; return u32buf[0] | 0; }
function f64ToBits(v: number): [number, number] { f64buf[0] = v; return [u64lo[0] | 0, u64lo[1] | 0]; }
function bitsToF64(lo: number, hi: number): number { u64lo[0] = lo; u64lo[1] = hi; return f64buf[0]; }

const DEFAULT_NAN32 = 0xffc00000 | 0;
const DEFAULT_NAN_HI = 0xfff80000 | 0;

export const F_ADD = 0, F_MUL = 1, F_SUB = 4, F_MIN = 5, F_DIV = 6, F_MAX = 7, F_SQRT = 8;

/** one single-precision operation on bits (SDM NaN rules); sets MXCSR flags */
function op32(cpu: X86Cpu, op: number, a: number, b: number): number {
  if (op === F_MIN || op === F_MAX) {
    if (isNaN32(a) || isNaN32(b)) { if (isSNaN32(a) || isSNaN32(b)) cpu.mxcsr |= MX_IE; else cpu.mxcsr |= MX_IE; return b; }
    const x = bitsToF32(a), y = bitsToF32(b);
    return op === F_MIN ? (x < y ? a : b) : (x > y ? a : b);
  }
  if (op === F_SQRT) {
    if (isNaN32(b)) { if (isSNaN32(b)) cpu.mxcsr |= MX_IE; return b | 0x400000; }
    const y = bitsToF32(b);
    if (y < 0) { cpu.mxcsr |= MX_IE; return DEFAULT_NAN32; }
    return f32ToBits(Math.fround(Math.sqrt(y)));
  }
  const an = isNaN32(a), bn = isNaN32(b);
  if (an || bn) {
    if (isSNaN32(a) || isSNaN32(b)) cpu.mxcsr |= MX_IE;
    return (an ? a : b) | 0x400000;
  }
  const x = bitsToF32(a), y = bitsToF32(b);
  let r: number;
  switch (op) {
    case F_ADD: r = x + y; break;
    case F_SUB: r = x - y; break;
    case F_MUL: r = x * y; break;
    default:
      if (y === 0 && x === x && x !== 0 && Number.isFinite(x)) cpu.mxcsr |= MX_ZE;
      r = x / y;
  }
  if (r !== r) { cpu.mxcsr |= MX_IE; return DEFAULT_NAN32; }
  return f32ToBits(Math.fround(r));
}

/** one double-precision operation; returns [lo, hi] */
function op64(cpu: X86Cpu, op: number, alo: number, ahi: number, blo: number, bhi: number): [number, number] {
  if (op === F_MIN || op === F_MAX) {
    if (isNaN64(alo, ahi) || isNaN64(blo, bhi)) { cpu.mxcsr |= MX_IE; return [blo, bhi]; }
    const x = bitsToF64(alo, ahi), y = bitsToF64(blo, bhi);
    return (op === F_MIN ? x < y : x > y) ? [alo, ahi] : [blo, bhi];
  }
  if (op === F_SQRT) {
    if (isNaN64(blo, bhi)) { if (isSNaN64(blo, bhi)) cpu.mxcsr |= MX_IE; return [blo, bhi | 0x80000]; }
    const y = bitsToF64(blo, bhi);
    if (y < 0) { cpu.mxcsr |= MX_IE; return [0, DEFAULT_NAN_HI]; }
    return f64ToBits(Math.sqrt(y));
  }
  const an = isNaN64(alo, ahi), bn = isNaN64(blo, bhi);
  if (an || bn) {
    if (isSNaN64(alo, ahi) || isSNaN64(blo, bhi)) cpu.mxcsr |= MX_IE;
    return an ? [alo, ahi | 0x80000] : [blo, bhi | 0x80000];
  }
  const x = bitsToF64(alo, ahi), y = bitsToF64(blo, bhi);
  let r: number;
  switch (op) {
    case F_ADD: r = x + y; break;
    case F_SUB: r = x - y; break;
    case F_MUL: r = x * y; break;
    default:
      if (y === 0 && x !== 0 && Number.isFinite(x)) cpu.mxcsr |= MX_ZE;
      r = x / y;
  }
  if (r !== r) { cpu.mxcsr |= MX_IE; return [0, DEFAULT_NAN_HI]; }
  return f64ToBits(r);
}

/** arithmetic: sub = op + 16 * form (0 ps, 1 pd, 2 ss, 3 sd) */
export function farith(cpu: X86Cpu, i: Insn): void {
  const op = i.cc & 15, form = i.cc >> 4;
  const d = cpu.xd, o = i.reg * 4;
  const s = src(cpu, i, form === 2 ? 4 : form === 3 ? 8 : 16) * 4;
  switch (form) {
    case 0: for (let k = 0; k < 4; k++) d[o + k] = op32(cpu, op, d[o + k], d[s + k]); return;
    case 2: d[o] = op32(cpu, op, d[o], d[s]); return;
    case 1: for (let k = 0; k < 4; k += 2) { const [l, h] = op64(cpu, op, d[o + k], d[o + k + 1], d[s + k], d[s + k + 1]); d[o + k] = l; d[o + k + 1] = h; } return;
    default: { const [l, h] = op64(cpu, op, d[o], d[o + 1], d[s], d[s + 1]); d[o] = l; d[o + 1] = h; }
  }
}
/** andps/andnps/orps/xorps (and the pd forms): sub 0 and, 1 andn, 2 or, 3 xor */
export function flogic(cpu: X86Cpu, i: Insn): void {
  switch (i.cc) {
    case 0: return lanes32(cpu, i, (a, b) => a & b);
    case 1: return lanes32(cpu, i, (a, b) => ~a & b);
    case 2: return lanes32(cpu, i, (a, b) => a | b);
    default:
      if (i.rm === i.reg) { const o = i.reg * 4, d = cpu.xd; d[o] = d[o + 1] = d[o + 2] = d[o + 3] = 0; return; }
      return lanes32(cpu, i, (a, b) => a ^ b);
  }
}

/** the eight compare predicates (eq lt le unord neq nlt nle ord) on numbers; NaN-aware */
function cmpPred(p: number, x: number, y: number): boolean {
  const unord = x !== x || y !== y;
  switch (p & 7) {
    case 0: return !unord && x === y;
    case 1: return !unord && x < y;
    case 2: return !unord && x <= y;
    case 3: return unord;
    case 4: return unord || x !== y;
    case 5: return unord || !(x < y);
    case 6: return unord || !(x <= y);
    default: return !unord;
  }
}
/** cmpps/cmppd/cmpss/cmpsd: sub = form (0 ps 1 pd 2 ss 3 sd) */
export function fcmp(cpu: X86Cpu, i: Insn): void {
  const form = i.cc, p = i.imm & 7;
  const d = cpu.xd, o = i.reg * 4;
  const s = src(cpu, i, form === 2 ? 4 : form === 3 ? 8 : 16) * 4;
  // signalling predicates (lt le nlt nle) raise IE on any NaN, the others on SNaNs
  const signal = p === 1 || p === 2 || p === 5 || p === 6;
  if (form === 0 || form === 2) {
    for (let k = 0; k < (form === 0 ? 4 : 1); k++) {
      const a = d[o + k], b = d[s + k];
      if ((signal && (isNaN32(a) || isNaN32(b))) || isSNaN32(a) || isSNaN32(b)) cpu.mxcsr |= MX_IE;
      d[o + k] = cmpPred(p, bitsToF32(a), bitsToF32(b)) ? -1 : 0;
    }
  } else {
    for (let k = 0; k < (form === 1 ? 4 : 2); k += 2) {
      const al = d[o + k], ah = d[o + k + 1], bl = d[s + k], bh = d[s + k + 1];
      if ((signal && (isNaN64(al, ah) || isNaN64(bl, bh))) || isSNaN64(al, ah) || isSNaN64(bl, bh)) cpu.mxcsr |= MX_IE;
      const r = cmpPred(p, bitsToF64(al, ah), bitsToF64(bl, bh)) ? -1 : 0;
      d[o + k] = r; d[o + k + 1] = r;
    }
  }
}
/** ucomiss (0) comiss (1) ucomisd (2) comisd (3): ZF PF CF, the rest of the arithmetic flags clear */
export function fcomi(cpu: X86Cpu, i: Insn): void {
  const dbl = i.cc >= 2, ordered = (i.cc & 1) === 1;
  const d = cpu.xd, o = i.reg * 4, s = src(cpu, i, dbl ? 8 : 4) * 4;
  let x: number, y: number, snan: boolean, nan: boolean;
  if (dbl) {
    x = bitsToF64(d[o], d[o + 1]); y = bitsToF64(d[s], d[s + 1]);
    nan = isNaN64(d[o], d[o + 1]) || isNaN64(d[s], d[s + 1]); snan = isSNaN64(d[o], d[o + 1]) || isSNaN64(d[s], d[s + 1]);
  } else {
    x = bitsToF32(d[o]); y = bitsToF32(d[s]);
    nan = isNaN32(d[o]) || isNaN32(d[s]); snan = isSNaN32(d[o]) || isSNaN32(d[s]);
  }
  if (snan || (ordered && nan)) cpu.mxcsr |= MX_IE;
  cpu.setEager(nan ? ZF | PF | CF : x < y ? CF : x === y ? ZF : 0);
}

// ---------------------------------------------------------------- conversions

/** round a double to an integer by the MXCSR mode (truncate: cvtt*) */
function roundMode(cpu: X86Cpu, v: number, truncate: boolean): number {
  if (truncate) return Math.trunc(v);
  switch ((cpu.mxcsr >> 13) & 3) {
    case 0: { // nearest, ties to even
      const f = Math.floor(v), diff = v - f;
      if (diff > 0.5) return f + 1;
      if (diff < 0.5) return f;
      return f % 2 === 0 ? f : f + 1;
    }
    case 1: return Math.floor(v);
    case 2: return Math.ceil(v);
    default: return Math.trunc(v);
  }
}
/** double -> int32/int64 (size 4/8) with the integer indefinite for NaN and out of range */
function toInt(cpu: X86Cpu, v: number, size: number, truncate: boolean): [number, number] {
  if (v !== v) { cpu.mxcsr |= MX_IE; return size === 8 ? [0, 0x80000000 | 0] : [0x80000000 | 0, 0]; }
  const r = roundMode(cpu, v, truncate);
  if (size === 4) {
    if (r >= 2147483648 || r < -2147483648) { cpu.mxcsr |= MX_IE; return [0x80000000 | 0, 0]; }
    return [r | 0, 0];
  }
  if (r >= 9223372036854775808 || r < -9223372036854775808) { cpu.mxcsr |= MX_IE; return [0, 0x80000000 | 0]; }
  const b = BigInt.asUintN(64, BigInt(r));
  return [Number(b & 0xffffffffn) | 0, Number(b >> 32n) | 0];
}
/** the MXCSR rounding mode (0 nearest, 1 down, 2 up, 3 toward zero) as softfloat names it */
const MXCSR_RM: readonly RoundingMode[] = ['rne', 'rdn', 'rup', 'rtz'];
const rmOf = (cpu: X86Cpu): RoundingMode => MXCSR_RM[(cpu.mxcsr >> 13) & 3];
/** a double (not a NaN) to single bits under the MXCSR rounding */
function toF32Bits(cpu: X86Cpu, x: number): number {
  return Number(fconvert(64, 32, f64Bits(x), rmOf(cpu)).bits) | 0;
}

/** cvt(t)ss2si / cvt(t)sd2si r, xmm/m: sub 0 ss, 1 sd; +2 truncating */
export function cvtToSi(cpu: X86Cpu, i: Insn): void {
  const dbl = (i.cc & 1) === 1, trunc = (i.cc & 2) !== 0;
  const d = cpu.xd, s = src(cpu, i, dbl ? 8 : 4) * 4;
  const v = dbl ? bitsToF64(d[s], d[s + 1]) : bitsToF32(d[s]);
  const [lo, hi] = toInt(cpu, v, i.size, trunc);
  cpu.setR(i.size, i.reg, lo, hi);
}
/** cvtsi2ss (sub 0) / cvtsi2sd (sub 1) xmm, r/m32|64 */
export function cvtSiTo(cpu: X86Cpu, i: Insn): void {
  const lo = cpu.readE(i, i.size), hi = i.size === 8 ? cpu.th : lo >> 31;
  const v = (BigInt(hi) << 32n) | BigInt(lo >>> 0);
  const d = cpu.xd, o = i.reg * 4;
  const sv = i.size === 8 ? BigInt.asIntN(64, v) : BigInt(lo);
  if (i.cc === 0) d[o] = Number(intToF(32, sv, rmOf(cpu)).bits) | 0;
  else { const b = intToF(64, sv, rmOf(cpu)).bits; d[o] = Number(b & 0xffffffffn) | 0; d[o + 1] = Number(b >> 32n) | 0; }
}
function f32ToF64Bits(b: number): [number, number] {
  if (isNaN32(b)) {
    // quieted, payload moved to the top of the double's fraction
    const frac = b & 0x7fffff;
    return [(frac << 29) | 0, (b & 0x80000000) | 0x7ff80000 | (frac >>> 3)];
  }
  return f64ToBits(bitsToF32(b));
}
function f64ToF32Bits(cpu: X86Cpu, lo: number, hi: number): number {
  if (isNaN64(lo, hi)) {
    if (isSNaN64(lo, hi)) cpu.mxcsr |= MX_IE;
    return (hi & 0x80000000) | 0x7fc00000 | ((hi & 0x7ffff) << 3) | (lo >>> 29);
  }
  return toF32Bits(cpu, bitsToF64(lo, hi));
}
/** cvtss2sd (0) cvtsd2ss (1) cvtps2pd (2) cvtpd2ps (3) */
export function cvtFF(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  switch (i.cc) {
    case 0: { const s = src(cpu, i, 4) * 4; if (isSNaN32(d[s])) cpu.mxcsr |= MX_IE; const [l, h] = f32ToF64Bits(d[s]); d[o] = l; d[o + 1] = h; return; }
    case 1: { const s = src(cpu, i, 8) * 4; d[o] = f64ToF32Bits(cpu, d[s], d[s + 1]); return; }
    case 2: {
      const s = src(cpu, i, 8) * 4;
      if (isSNaN32(d[s]) || isSNaN32(d[s + 1])) cpu.mxcsr |= MX_IE;
      const a = f32ToF64Bits(d[s]), b = f32ToF64Bits(d[s + 1]);
      d[o] = a[0]; d[o + 1] = a[1]; d[o + 2] = b[0]; d[o + 3] = b[1];
      return;
    }
    default: {
      const s = src(cpu, i, 16) * 4;
      const a = f64ToF32Bits(cpu, d[s], d[s + 1]), b = f64ToF32Bits(cpu, d[s + 2], d[s + 3]);
      d[o] = a; d[o + 1] = b; d[o + 2] = 0; d[o + 3] = 0;
    }
  }
}
/** cvtdq2ps (0) cvtps2dq (1) cvttps2dq (2) cvtdq2pd (3) cvtpd2dq (4) cvttpd2dq (5) */
export function cvtPacked(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  switch (i.cc) {
    case 0: { const s = src(cpu, i, 16) * 4; for (let k = 0; k < 4; k++) d[o + k] = Number(intToF(32, BigInt(d[s + k]), rmOf(cpu)).bits) | 0; return; }
    case 1: case 2: {
      const s = src(cpu, i, 16) * 4;
      for (let k = 0; k < 4; k++) d[o + k] = toInt(cpu, bitsToF32(d[s + k]), 4, i.cc === 2)[0];
      return;
    }
    case 3: {
      const s = src(cpu, i, 8) * 4;
      const a = f64ToBits(d[s]), b = f64ToBits(d[s + 1]);
      d[o] = a[0]; d[o + 1] = a[1]; d[o + 2] = b[0]; d[o + 3] = b[1];
      return;
    }
    default: {
      const s = src(cpu, i, 16) * 4;
      const a = toInt(cpu, bitsToF64(d[s], d[s + 1]), 4, i.cc === 5)[0], b = toInt(cpu, bitsToF64(d[s + 2], d[s + 3]), 4, i.cc === 5)[0];
      d[o] = a; d[o + 1] = b; d[o + 2] = 0; d[o + 3] = 0;
    }
  }
}
