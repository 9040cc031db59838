/**
 * Scalar floating point: fmov forms, arithmetic, fused multiply-add,
 * compares into NZCV, fcsel, fcvt, frint*, conversions to and from
 * integers; the ARM NaN processing the vector forms share. See fpsimd.ts.
 */
import type { A64Cpu } from '../cpu';
import type { A64Insn, Row } from '../insn';
import { f, sf, rZ, wZ, gz, COND } from '../fmt';
import { FLAG_NV, RoundingMode, ffma, intToF } from '../../../cpu/softfloat';
import { IOC, DZC, vget64, vset64, sreg } from './fpsimdRegs';

// ---------------------------------------------------------------- scalar floating point

export const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
export const f64 = new Float64Array(1), u64 = new Uint32Array(f64.buffer);
export const toF32 = (b: number): number => { u32[0] = b; return f32[0]; };
export const fromF32 = (v: number): number => { f32[0] = v; return u32[0] | 0; };
export const toF64 = (b: bigint): number => { u64[0] = Number(b & 0xffffffffn); u64[1] = Number(b >> 32n); return f64[0]; };
export const fromF64 = (v: number): bigint => { f64[0] = v; return (BigInt(u64[1]) << 32n) | BigInt(u64[0]); };

export const isNaNb = (b: bigint, d: boolean): boolean => d ? (b & 0x7ff0000000000000n) === 0x7ff0000000000000n && (b & 0xfffffffffffffn) !== 0n
  : (b & 0x7f800000n) === 0x7f800000n && (b & 0x7fffffn) !== 0n;
export const isSNaNb = (b: bigint, d: boolean): boolean => isNaNb(b, d) && (b & (d ? 0x8000000000000n : 0x400000n)) === 0n;
export const quiet = (b: bigint, d: boolean): bigint => b | (d ? 0x8000000000000n : 0x400000n);
export const defaultNaN = (d: boolean): bigint => (d ? 0x7ff8000000000000n : 0x7fc00000n);
export const toNum = (b: bigint, d: boolean): number => (d ? toF64(b) : toF32(Number(b)));
export const fromNum = (v: number, d: boolean): bigint => (d ? fromF64(v) : BigInt(fromF32(Math.fround(v)) >>> 0));

/** FPProcessNaNs: the NaN result of an operation with NaN operands, or undefined */
export function processNaNs(c: A64Cpu, d: boolean, ...ops: bigint[]): bigint | undefined {
  let pick: bigint | undefined;
  for (const o of ops) if (isSNaNb(o, d)) { pick = o; break; }
  if (pick === undefined) for (const o of ops) if (isNaNb(o, d)) { pick = o; break; }
  if (pick === undefined) return undefined;
  if (ops.some(o => isSNaNb(o, d))) c.fpsr |= IOC;
  return c.fpcr & (1 << 25) ? defaultNaN(d) : quiet(pick, d);
}
export function invalid(c: A64Cpu, d: boolean): bigint { c.fpsr |= IOC; return defaultNaN(d); }

export function fpread(c: A64Cpu, r: number, d: boolean): bigint { return d ? vget64(c, r) : BigInt(c.vw[r * 4] >>> 0); }
export function fpwrite(c: A64Cpu, r: number, v: bigint, d: boolean): void {
  if (d) vset64(c, r, v); else { c.vw[r * 4] = Number(v) | 0; c.vw[r * 4 + 1] = 0; }
  c.vw[r * 4 + 2] = 0; c.vw[r * 4 + 3] = 0;
}

export const FMUL = 0, FDIV = 1, FADD = 2, FSUB = 3, FMAX = 4, FMIN = 5, FMAXNM = 6, FMINNM = 7, FNMUL = 8;
export function farith(c: A64Cpu, op: number, a: bigint, b: bigint, d: boolean): bigint {
  if (op === FMAXNM || op === FMINNM) {
    // a quiet NaN against a number gives the number
    const an = isNaNb(a, d) && !isSNaNb(a, d), bn = isNaNb(b, d) && !isSNaNb(b, d);
    if (an && !bn && !isNaNb(b, d)) a = b; else if (bn && !an && !isNaNb(a, d)) b = a;
  }
  const nan = processNaNs(c, d, a, b);
  if (nan !== undefined) return op === FNMUL ? nan ^ (d ? 0x8000000000000000n : 0x80000000n) : nan;
  const x = toNum(a, d), y = toNum(b, d);
  let r: number;
  switch (op) {
    case FMUL: case FNMUL: r = x * y; break;
    case FDIV: if (y === 0 && Number.isFinite(x) && x !== 0) c.fpsr |= DZC; r = x / y; break;
    case FADD: r = zeroSign(c, x + y, x, y); break;
    case FSUB: r = zeroSign(c, x - y, x, -y); break;
    case FMAX: case FMAXNM: r = x > y ? x : y > x ? y : (Object.is(x, -0) && Object.is(y, -0) ? -0 : x === 0 ? 0 : x); break;
    default: r = x < y ? x : y < x ? y : (Object.is(x, -0) || Object.is(y, -0) ? -0 : x);
  }
  if (r !== r) { const n = invalid(c, d); return op === FNMUL ? n ^ (d ? 0x8000000000000000n : 0x80000000n) : n; }
  if (op === FNMUL) r = -r;
  return fromNum(r, d);
}
/** an exact zero sum is -0 when rounding toward minus infinity (and when both addends are -0) */
export function zeroSign(c: A64Cpu, r: number, x: number, y: number): number {
  if (r !== 0) return r;
  if (Object.is(x, -0) && Object.is(y, -0)) return -0;
  if (x === 0 && y === 0 && !Object.is(x, -0) && !Object.is(y, -0)) return 0;
  return ((c.fpcr >> 22) & 3) === 2 ? -0 : 0;
}
export const F2_OPS: Record<number, [number, string]> = { 0: [FMUL, 'fmul'], 1: [FDIV, 'fdiv'], 2: [FADD, 'fadd'], 3: [FSUB, 'fsub'], 4: [FMAX, 'fmax'], 5: [FMIN, 'fmin'], 6: [FMAXNM, 'fmaxnm'], 7: [FMINNM, 'fminnm'], 8: [FNMUL, 'fnmul'] };
export const fp2: Row = {
  name: 'FP data-processing (2 source)', mask: 0xff200c00, match: 0x1e200800,
  decode(w, i) {
    const t = f(w, 22, 2), o = F2_OPS[f(w, 12, 4)];
    if (t > 1 || !o) return false;
    i.size = t ? 8 : 4; i.op = o[0]; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = (c, x) => { const d = x.size === 8; fpwrite(c, x.rd, farith(c, x.op, fpread(c, x.rn, d), fpread(c, x.rm, d), d), d); };
    return true;
  },
  fmt: i => [F2_OPS[f(i.word, 12, 4)][1], `${sreg(i.rd, i.size)}, ${sreg(i.rn, i.size)}, ${sreg(i.rm, i.size)}`],
};
export function fmaExec(c: A64Cpu, i: A64Insn): void {
  const d = i.size === 8;
  // fmsub / fnmadd negate the first factor, fnmadd / fnmsub the addend, before anything (a NaN's sign too)
  const sign = d ? 0x8000000000000000n : 0x80000000n;
  const a = fpread(c, i.ra, d) ^ (i.op & 2 ? sign : 0n), n = fpread(c, i.rn, d) ^ (i.op & 1 ? sign : 0n), m = fpread(c, i.rm, d);
  const nan = processNaNs(c, d, a, n, m);
  if (nan !== undefined) { fpwrite(c, i.rd, nan, d); return; }
  fpwrite(c, i.rd, fused(c, d, a, n, m), d);
}
/** FPCR.RMode (0 nearest, 1 plus infinity, 2 minus infinity, 3 zero) as softfloat names it */
export const FPCR_RM: readonly RoundingMode[] = ['rne', 'rup', 'rdn', 'rtz'];
export const rmOf = (c: A64Cpu): RoundingMode => FPCR_RM[(c.fpcr >> 22) & 3];
/** n * m + a rounded once (no NaN operand: the caller processed them), IOC on an invalid operation */
export function fused(c: A64Cpu, d: boolean, a: bigint, n: bigint, m: bigint): bigint {
  const r = ffma(d ? 64 : 32, n, m, a, rmOf(c));
  if (r.flags & FLAG_NV) c.fpsr |= IOC;
  return r.bits;
}
export const fp3: Row = {
  name: 'FP data-processing (3 source)', mask: 0xff000000, match: 0x1f000000,
  decode(w, i) {
    const t = f(w, 22, 2);
    if (t > 1) return false;
    i.size = t ? 8 : 4; i.op = (f(w, 21, 1) << 1) | f(w, 15, 1);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.ra = f(w, 10, 5); i.exec = fmaExec;
    return true;
  },
  fmt: i => [['fmadd', 'fmsub', 'fnmadd', 'fnmsub'][i.op], `${sreg(i.rd, i.size)}, ${sreg(i.rn, i.size)}, ${sreg(i.rm, i.size)}, ${sreg(i.ra, i.size)}`],
};
/** FP 1-source: fmov (0) fabs (1) fneg (2) fsqrt (3) fcvt (4 5 7: to s d h) frintn/p/m/z/a/x/i (8..15) */
export function fp1Exec(c: A64Cpu, i: A64Insn): void {
  const d = i.size === 8, a = fpread(c, i.rn, d);
  const sign = d ? 0x8000000000000000n : 0x80000000n;
  switch (i.op) {
    case 0: fpwrite(c, i.rd, a, d); return;
    case 1: fpwrite(c, i.rd, a & ~sign, d); return;
    case 2: fpwrite(c, i.rd, a ^ sign, d); return;
    case 3: {
      const nan = processNaNs(c, d, a);
      if (nan !== undefined) { fpwrite(c, i.rd, nan, d); return; }
      const x = toNum(a, d);
      fpwrite(c, i.rd, x < 0 ? invalid(c, d) : fromNum(Math.sqrt(x), d), d);
      return;
    }
    case 4: case 5: {
      // fcvt between single and double
      const toD = i.op === 5;
      if (isNaNb(a, d)) {
        if (isSNaNb(a, d)) c.fpsr |= IOC;
        let r: bigint;
        if (c.fpcr & (1 << 25)) r = defaultNaN(toD);
        else if (toD) r = ((a & 0x80000000n) << 32n) | 0x7ff8000000000000n | ((a & 0x3fffffn) << 29n);
        else r = ((a >> 32n) & 0x80000000n) | 0x7fc00000n | ((a >> 29n) & 0x3fffffn);
        fpwrite(c, i.rd, r, toD);
        return;
      }
      fpwrite(c, i.rd, fromNum(toNum(a, d), toD), toD);
      return;
    }
    default: {
      const nan = processNaNs(c, d, a);
      if (nan !== undefined) { fpwrite(c, i.rd, nan, d); return; }
      const x = toNum(a, d);
      const mode = i.op === 8 ? 0 : i.op === 9 ? 1 : i.op === 10 ? 2 : i.op === 11 ? 3 : i.op === 12 ? 4 : (c.fpcr >> 22) & 3;
      fpwrite(c, i.rd, fromNum(roundInt(x, mode), d), d);
    }
  }
}
/** round to an integral value: 0 nearest even, 1 +inf, 2 -inf, 3 zero, 4 nearest away (keeps -0) */
export function roundInt(x: number, mode: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  let r: number;
  switch (mode) {
    case 0: { const fl = Math.floor(x), diff = x - fl; r = diff > 0.5 ? fl + 1 : diff < 0.5 ? fl : (fl % 2 === 0 ? fl : fl + 1); break; }
    case 1: r = Math.ceil(x); break;
    case 2: r = Math.floor(x); break;
    case 3: r = Math.trunc(x); break;
    default: r = x < 0 ? -Math.round(-x) : Math.round(x);
  }
  return r === 0 && x < 0 ? -0 : r;
}
export const FP1_NAMES: Record<number, string> = { 0: 'fmov', 1: 'fabs', 2: 'fneg', 3: 'fsqrt', 4: 'fcvt', 5: 'fcvt', 8: 'frintn', 9: 'frintp', 10: 'frintm', 11: 'frintz', 12: 'frinta', 14: 'frintx', 15: 'frinti' };
export const fp1: Row = {
  name: 'FP data-processing (1 source)', mask: 0xff207c00, match: 0x1e204000,
  decode(w, i) {
    const t = f(w, 22, 2), opc = f(w, 15, 6);
    if (t > 1 || FP1_NAMES[opc] === undefined) return false;
    if ((opc === 4 && t === 0) || (opc === 5 && t === 1)) return false; // fcvt to the same precision
    i.size = t ? 8 : 4; i.op = opc; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.exec = fp1Exec;
    return true;
  },
  fmt: i => [FP1_NAMES[i.op], `${sreg(i.rd, i.op === 4 ? 4 : i.op === 5 ? 8 : i.size)}, ${sreg(i.rn, i.size)}`],
};
/** fcmp / fcmpe (with zero: op2 bit 3) into NZCV */
export function fcmpExec(c: A64Cpu, i: A64Insn): void {
  const d = i.size === 8, a = fpread(c, i.rn, d), b = i.imm2 ? 0n : fpread(c, i.rm, d);
  if (isNaNb(a, d) || isNaNb(b, d)) {
    if (i.op || isSNaNb(a, d) || isSNaNb(b, d)) c.fpsr |= IOC;
    c.setNzcv(0b0011);
    return;
  }
  const x = toNum(a, d), y = toNum(b, d);
  c.setNzcv(x === y ? 0b0110 : x < y ? 0b1000 : 0b0010);
}
export const fcmpRow: Row = {
  name: 'FP compare', mask: 0xff20fc07, match: 0x1e202000,
  decode(w, i) {
    const t = f(w, 22, 2);
    if (t > 1) return false;
    i.size = t ? 8 : 4; i.op = f(w, 4, 1); i.imm2 = f(w, 3, 1); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.exec = fcmpExec;
    return true;
  },
  fmt: i => [i.op ? 'fcmpe' : 'fcmp', `${sreg(i.rn, i.size)}, ${i.imm2 ? '#0.0' : sreg(i.rm, i.size)}`],
};
export const fccmpRow: Row = {
  name: 'FP conditional compare', mask: 0xff200c00, match: 0x1e200400,
  decode(w, i) {
    const t = f(w, 22, 2);
    if (t > 1) return false;
    i.size = t ? 8 : 4; i.op = f(w, 4, 1); i.imm2 = 0; i.cond = f(w, 12, 4); i.imm = f(w, 0, 4); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = (c, x) => { if (c.cond(x.cond)) fcmpExec(c, x); else c.setNzcv(x.imm); };
    return true;
  },
  fmt: i => [i.op ? 'fccmpe' : 'fccmp', `${sreg(i.rn, i.size)}, ${sreg(i.rm, i.size)}, #${i.imm}, ${COND[i.cond]}`],
};
export const fcselRow: Row = {
  name: 'FP conditional select', mask: 0xff200c00, match: 0x1e200c00,
  decode(w, i) {
    const t = f(w, 22, 2);
    if (t > 1) return false;
    i.size = t ? 8 : 4; i.cond = f(w, 12, 4); i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = (c, x) => { const d = x.size === 8; fpwrite(c, x.rd, fpread(c, c.cond(x.cond) ? x.rn : x.rm, d), d); };
    return true;
  },
  fmt: i => ['fcsel', `${sreg(i.rd, i.size)}, ${sreg(i.rn, i.size)}, ${sreg(i.rm, i.size)}, ${COND[i.cond]}`],
};
/** VFPExpandImm */
export function fpImm(imm8: number, d: boolean): bigint {
  const sign = BigInt(imm8 >> 7), b6 = (imm8 >> 6) & 1, frac = BigInt(imm8 & 0x3f);
  if (d) {
    const exp = BigInt((b6 ? 0 : 0x400) | (b6 ? 0x3fc : 0) | ((imm8 >> 4) & 3));
    return (sign << 63n) | (exp << 52n) | ((frac & 0xfn) << 48n);
  }
  const exp = BigInt((b6 ? 0 : 0x80) | (b6 ? 0x7c : 0) | ((imm8 >> 4) & 3));
  return (sign << 31n) | (exp << 23n) | ((frac & 0xfn) << 19n);
}
export const fmovImm: Row = {
  name: 'FP move immediate', mask: 0xff201fe0, match: 0x1e201000,
  decode(w, i) {
    const t = f(w, 22, 2);
    if (t > 1) return false;
    i.size = t ? 8 : 4; i.rd = f(w, 0, 5); i.imm = f(w, 13, 8); i.big = fpImm(i.imm, t === 1);
    i.exec = (c, x) => fpwrite(c, x.rd, x.big, x.size === 8);
    return true;
  },
  fmt: i => ['fmov', `${sreg(i.rd, i.size)}, #${fmtFloat(toNum(i.big, i.size === 8))}`],
};
export function fmtFloat(v: number): string {
  const s = v.toExponential(8).replace(/\.?0+e/, 'e');
  const [m, e] = s.split('e');
  return `${Number(m).toFixed(8)}e${e.startsWith('-') ? '-' : '+'}${e.replace(/^[-+]/, '').padStart(2, '0')}`;
}

/** FP <-> integer conversions and moves: sf, type, rmode, opcode */
export function convExec(c: A64Cpu, i: A64Insn): void {
  const d = i.size === 8, x64 = i.sf === 1;
  switch (i.op) {
    case 6: { // fmov general <- fp (rmode 0) / top half (rmode 1)
      if (i.op2 === 1) { c.setX64(i.d, vget64(c, i.rn, 1)); return; }
      const v = d ? vget64(c, i.rn) : BigInt(c.vw[i.rn * 4] >>> 0);
      c.setX64(i.d, x64 ? v : v & 0xffffffffn);
      return;
    }
    case 7: { // fmov fp <- general
      const v = c.x64(i.n);
      if (i.op2 === 1) { vset64(c, i.rd, v, 1); return; }
      fpwrite(c, i.rd, x64 ? v : v & 0xffffffffn, d);
      return;
    }
    case 2: case 3: { // scvtf / ucvtf
      let v = c.x64(i.n);
      if (!x64) v = i.op === 2 ? BigInt.asIntN(32, v) : BigInt.asUintN(32, v);
      else if (i.op === 2) v = BigInt.asIntN(64, v);
      fpwrite(c, i.rd, intToF(d ? 64 : 32, v, rmOf(c)).bits, d);
      return;
    }
    default: { // fcvt[nmpza][su]: saturating
      const a = fpread(c, i.rn, d);
      const bits = x64 ? 64 : 32, signed = (i.op & 1) === 0;
      let r: bigint;
      if (isNaNb(a, d)) { c.fpsr |= IOC; r = 0n; }
      else {
        const v = roundInt(toNum(a, d), i.imm2);
        const min = signed ? -(1n << BigInt(bits - 1)) : 0n, max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
        if (!Number.isFinite(v)) { c.fpsr |= IOC; r = v > 0 ? max : min; }
        else {
          const b = BigInt(v);
          if (b > max) { c.fpsr |= IOC; r = max; } else if (b < min) { c.fpsr |= IOC; r = min; } else r = b;
        }
      }
      c.setX64(i.d, BigInt.asUintN(bits, r));
    }
  }
}
export const CONV_NAMES: Record<string, string> = {
  '0:0': 'fcvtns', '0:1': 'fcvtnu', '0:2': 'scvtf', '0:3': 'ucvtf', '0:4': 'fcvtas', '0:5': 'fcvtau', '0:6': 'fmov', '0:7': 'fmov',
  '1:0': 'fcvtps', '1:1': 'fcvtpu', '1:6': 'fmov', '1:7': 'fmov', '2:0': 'fcvtms', '2:1': 'fcvtmu', '3:0': 'fcvtzs', '3:1': 'fcvtzu',
};
export const convRow: Row = {
  name: 'FP <-> integer conversions', mask: 0x7f20fc00, match: 0x1e200000,
  decode(w, i) {
    const t = f(w, 22, 2), rmode = f(w, 19, 2), opc = f(w, 16, 3), s = f(w, 31, 1);
    const name = CONV_NAMES[`${rmode}:${opc}`];
    if (!name) return false;
    if (rmode === 1 && (opc === 6 || opc === 7)) { if (t !== 2 || !s) return false; i.size = 8; }
    else { if (t > 1) return false; i.size = t ? 8 : 4; }
    if ((opc === 6 || opc === 7) && rmode === 0 && (s ? 8 : 4) !== i.size) return false;
    i.sf = s; i.op = opc; i.op2 = rmode; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    // rounding of the fcvt* forms: n 0 (nearest even), p 1, m 2, z 3, a 4
    i.imm2 = opc === 4 || opc === 5 ? 4 : rmode;
    if (opc === 6) { i.d = wZ(i.rd); } else if (opc === 7 || opc === 2 || opc === 3) { i.n = rZ(i.rn); } else { i.d = wZ(i.rd); }
    i.exec = convExec;
    return true;
  },
  fmt: i => {
    const name = CONV_NAMES[`${i.op2}:${i.op}`];
    const fp = i.op2 === 1 ? `v${i.op === 6 ? i.rn : i.rd}.d[1]` : sreg(i.op === 6 ? i.rn : i.op === 7 ? i.rd : i.op === 2 || i.op === 3 ? i.rd : i.rn, i.size);
    const g = gz(i.op === 6 || (i.op !== 7 && i.op !== 2 && i.op !== 3) ? i.rd : i.rn, i.sf);
    return [name, i.op === 6 || (i.op !== 7 && i.op !== 2 && i.op !== 3) ? `${g}, ${fp}` : `${fp}, ${g}`];
  },
};
