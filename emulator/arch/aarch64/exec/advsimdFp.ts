/**
 * AdvSIMD floating point (vector): three-same FP (fadd .. fmla, the
 * compares) with a plain-number fast path, and two-register misc FP
 * (conversions, fneg / fabs / fsqrt, frint*, compares with zero). The
 * integer forms are in advsimd.ts. See fpsimd.ts.
 */
import type { A64Cpu } from '../cpu';
import type { A64Insn, Row } from '../insn';
import { f } from '../fmt';
import { intToF } from '../../../cpu/softfloat';
import { IOC, zeroFrom, lane, setLane, lane64, setLane64, vname } from './fpsimdRegs';
import { isNaNb, isSNaNb, defaultNaN, toNum, fromNum, processNaNs, invalid, FMUL, FADD, FSUB, FDIV, FMAX, FMIN, FMAXNM, FMINNM, farith, rmOf, fused, roundInt } from './fpScalar';

// ---------------------------------------------------------------- AdvSIMD floating point (vector)

/** an FP lane (4 or 8 bytes) as bits */
export const fLane = (c: A64Cpu, r: number, d: boolean, k: number): bigint => (d ? lane64(c, r, k) : BigInt(lane(c, r, 4, k)));
export const setFLane = (c: A64Cpu, r: number, d: boolean, k: number, v: bigint): void => { if (d) setLane64(c, r, k, v); else setLane(c, r, 4, k, Number(v)); };

/** fcmeq / fcmge / fcmgt on bits: all-ones when true */
export function fcmpVec(c: A64Cpu, kind: number, a: bigint, b: bigint, d: boolean): bigint {
  const ones = d ? 0xffffffffffffffffn : 0xffffffffn;
  if (isNaNb(a, d) || isNaNb(b, d)) { if (kind !== 0 || isSNaNb(a, d) || isSNaNb(b, d)) c.fpsr |= IOC; return 0n; }
  const x = toNum(a, d), y = toNum(b, d);
  return (kind === 0 ? x === y : kind === 1 ? x >= y : x > y) ? ones : 0n;
}
/** three-same FP: key U:a:opcode -> name and lane op (a, b, acc) */
export const FP3: Record<string, [string, (c: A64Cpu, a: bigint, b: bigint, acc: bigint, d: boolean) => bigint]> = {
  '0:0:26': ['fadd', (c, a, b, _, d) => farith(c, FADD, a, b, d)],
  '0:1:26': ['fsub', (c, a, b, _, d) => farith(c, FSUB, a, b, d)],
  '1:0:27': ['fmul', (c, a, b, _, d) => farith(c, FMUL, a, b, d)],
  '1:0:31': ['fdiv', (c, a, b, _, d) => farith(c, FDIV, a, b, d)],
  '0:0:30': ['fmax', (c, a, b, _, d) => farith(c, FMAX, a, b, d)],
  '0:1:30': ['fmin', (c, a, b, _, d) => farith(c, FMIN, a, b, d)],
  '0:0:24': ['fmaxnm', (c, a, b, _, d) => farith(c, FMAXNM, a, b, d)],
  '0:1:24': ['fminnm', (c, a, b, _, d) => farith(c, FMINNM, a, b, d)],
  '0:0:28': ['fcmeq', (c, a, b, _, d) => fcmpVec(c, 0, a, b, d)],
  '1:0:28': ['fcmge', (c, a, b, _, d) => fcmpVec(c, 1, a, b, d)],
  '1:1:28': ['fcmgt', (c, a, b, _, d) => fcmpVec(c, 2, a, b, d)],
  '0:0:25': ['fmla', (c, a, b, acc, d) => fusedLane(c, acc, a, b, d, false)],
  '0:1:25': ['fmls', (c, a, b, acc, d) => fusedLane(c, acc, a, b, d, true)],
};
export function fusedLane(c: A64Cpu, acc: bigint, a: bigint, b: bigint, d: boolean, neg: boolean): bigint {
  if (neg) a ^= d ? 0x8000000000000000n : 0x80000000n;
  return processNaNs(c, d, acc, a, b) ?? fused(c, d, acc, a, b);
}
/** three-same FP ops with a plain-number fast path: key opcode | a << 5 | U << 6 -> 0 add, 1 sub, 2 mul, 3 div */
export const FAST_FP3: Record<number, number> = { 26: 0, [26 | 32]: 1, [27 | 64]: 2, [31 | 64]: 3 };
export const FAST_TMP = new Float64Array(4);
export const fpThreeSame: Row = {
  name: 'AdvSIMD three same (FP)', mask: 0x9f20c400, match: 0x0e20c400,
  decode(w, i) {
    const q = f(w, 30, 1), u = f(w, 29, 1), a = f(w, 23, 1), sz = f(w, 22, 1), opc = f(w, 11, 5);
    const key = `${u}:${a}:${opc}`;
    if (!FP3[key] || (sz && !q)) return false;
    i.size = q ? 16 : 8; i.imm3 = sz ? 8 : 4; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.imm = (u << 6) | (a << 5) | opc;
    const op = FP3[key][1];
    const fast = FAST_FP3[opc | (a << 5) | (u << 6)];
    i.exec = (c, x) => {
      // fast path: round to nearest, no NaN in or out, no division by zero (the rest goes the exact way)
      if (fast !== undefined && ((c.fpcr >> 22) & 3) === 0) {
        const d = x.imm3 === 8, n = x.size / x.imm3;
        const arr = d ? c.vd : c.vs, bn = x.rn * (d ? 2 : 4), bm = x.rm * (d ? 2 : 4), bd = x.rd * (d ? 2 : 4);
        const out = FAST_TMP;
        let ok = true;
        for (let k = 0; k < n && ok; k++) {
          const p = arr[bn + k], q = arr[bm + k];
          let r: number;
          switch (fast) {
            case 0: r = p + q; break;
            case 1: r = p - q; break;
            case 2: r = p * q; break;
            default: r = q === 0 ? NaN : p / q;
          }
          if (r !== r || p !== p || q !== q || r === 0) ok = false;
          out[k] = d ? r : Math.fround(r);
        }
        if (ok) {
          for (let k = 0; k < n; k++) arr[bd + k] = out[k];
          zeroFrom(c, x.rd, x.size);
          return;
        }
      }
      const d = x.imm3 === 8, n = x.size / x.imm3, out: bigint[] = [];
      for (let k = 0; k < n; k++) out.push(op(c, fLane(c, x.rn, d, k), fLane(c, x.rm, d, k), fLane(c, x.rd, d, k), d));
      for (let k = 0; k < n; k++) setFLane(c, x.rd, d, k, out[k]);
      zeroFrom(c, x.rd, x.size);
    };
    return true;
  },
  fmt: i => {
    const q = i.size === 16 ? 1 : 0;
    return [FP3[`${i.imm >> 6}:${(i.imm >> 5) & 1}:${i.imm & 31}`][0], `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, q, i.imm3)}, ${vname(i.rm, q, i.imm3)}`];
  },
};
/** two-register misc FP: scvtf ucvtf fcvtzs fcvtzu fneg fabs fsqrt fcvtl fcvtn frint* */
export const FP_MISC: Record<string, string> = {
  '0:0:29': 'scvtf', '1:0:29': 'ucvtf', '0:1:27': 'fcvtzs', '1:1:27': 'fcvtzu', '1:1:15': 'fneg', '0:1:15': 'fabs', '1:1:31': 'fsqrt',
  '0:0:23': 'fcvtl', '0:0:22': 'fcvtn', '0:0:24': 'frintn', '0:1:24': 'frintp', '0:0:25': 'frintm', '0:1:25': 'frintz', '1:0:24': 'frinta',
  '0:1:12': 'fcmgt', '1:1:12': 'fcmge', '0:1:13': 'fcmeq', '1:1:13': 'fcmle', '0:1:14': 'fcmlt',
};
export function fpMiscExec(c: A64Cpu, i: A64Insn): void {
  const name = FP_MISC[`${i.op2}:${i.imm2}:${i.op}`];
  const d = i.imm3 === 8;
  if (name === 'fcvtl' || name === 'fcvtn') {
    // fcvtl: single lanes (low or high half) to doubles; fcvtn: doubles to singles in the low or high half
    if (name === 'fcvtl') {
      const off = i.size === 16 ? 2 : 0, vals = [0, 1].map(k => BigInt(lane(c, i.rn, 4, off + k)));
      for (let k = 0; k < 2; k++) {
        const a = vals[k];
        if (isSNaNb(a, false)) c.fpsr |= IOC;
        setLane64(c, i.rd, k, isNaNb(a, false) ? (c.fpcr & (1 << 25) ? defaultNaN(true) : ((a & 0x80000000n) << 32n) | 0x7ff8000000000000n | ((a & 0x3fffffn) << 29n)) : fromNum(toNum(a, false), true));
      }
    } else {
      for (let k = 0; k < 2; k++) if (isSNaNb(lane64(c, i.rn, k), true)) c.fpsr |= IOC;
      const vals = [0, 1].map(k => lane64(c, i.rn, k)).map(a => (isNaNb(a, true)
        ? (c.fpcr & (1 << 25) ? defaultNaN(false) : ((a >> 32n) & 0x80000000n) | 0x7fc00000n | ((a >> 29n) & 0x3fffffn))
        : fromNum(toNum(a, true), false)));
      const off = i.size === 16 ? 2 : 0;
      for (let k = 0; k < 2; k++) setLane(c, i.rd, 4, off + k, Number(vals[k]));
      if (i.size !== 16) zeroFrom(c, i.rd, 8);
    }
    return;
  }
  const n = i.size / i.imm3, out: bigint[] = [];
  const sign = d ? 0x8000000000000000n : 0x80000000n;
  for (let k = 0; k < n; k++) {
    const a = fLane(c, i.rn, d, k);
    let r: bigint;
    switch (name) {
      case 'scvtf': case 'ucvtf': {
        const v = name === 'scvtf' ? BigInt.asIntN(d ? 64 : 32, a) : a;
        r = intToF(d ? 64 : 32, v, rmOf(c)).bits;
        break;
      }
      case 'fcvtzs': case 'fcvtzu': {
        const bits = d ? 64 : 32, signedConv = name === 'fcvtzs';
        if (isNaNb(a, d)) { c.fpsr |= IOC; r = 0n; break; }
        const v = Math.trunc(toNum(a, d));
        const min = signedConv ? -(1n << BigInt(bits - 1)) : 0n, max = signedConv ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
        let b: bigint;
        if (!Number.isFinite(v)) { c.fpsr |= IOC; b = v > 0 ? max : min; }
        else { b = BigInt(v); if (b > max) { c.fpsr |= IOC; b = max; } else if (b < min) { c.fpsr |= IOC; b = min; } }
        r = BigInt.asUintN(bits, b);
        break;
      }
      case 'fneg': r = a ^ sign; break;
      case 'fabs': r = a & ~sign; break;
      case 'fsqrt': {
        const nan = processNaNs(c, d, a);
        r = nan ?? (toNum(a, d) < 0 ? invalid(c, d) : fromNum(Math.sqrt(toNum(a, d)), d));
        break;
      }
      case 'fcmgt': case 'fcmge': case 'fcmeq': case 'fcmle': case 'fcmlt': {
        const z = 0n;
        r = name === 'fcmle' ? fcmpVec(c, 1, z, a, d) : name === 'fcmlt' ? fcmpVec(c, 2, z, a, d) : fcmpVec(c, name === 'fcmeq' ? 0 : name === 'fcmge' ? 1 : 2, a, z, d);
        break;
      }
      default: {
        const nan = processNaNs(c, d, a);
        const mode = { frintn: 0, frintp: 1, frintm: 2, frintz: 3, frinta: 4 }[name as 'frintn'] ?? 0;
        r = nan ?? fromNum(roundInt(toNum(a, d), mode), d);
      }
    }
    out.push(r);
  }
  for (let k = 0; k < n; k++) setFLane(c, i.rd, d, k, out[k]);
  zeroFrom(c, i.rd, i.size);
}
