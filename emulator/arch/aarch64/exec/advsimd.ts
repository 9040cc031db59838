/**
 * AdvSIMD integer and data movement (vector): modified immediates,
 * three-same, two-register misc, across lanes, copy, ext, shifts by
 * immediate, widening and narrowing, permutes, table lookup. The
 * floating-point vector forms are in advsimdFp.ts, the scalar forms in
 * advsimdScalar.ts. See fpsimd.ts.
 */
import type { A64Cpu } from '../cpu';
import type { A64Insn, Row } from '../insn';
import { f, rZ, wZ, gz } from '../fmt';
import { zeroFrom, vget64, vset64, lane, setLane, lane64, setLane64, vname, SCALAR } from './fpsimdRegs';
import { toNum, fpImm, fmtFloat } from './fpScalar';
import { FP_MISC, fpMiscExec } from './advsimdFp';

// ---------------------------------------------------------------- AdvSIMD

/** AdvSIMDExpandImm */
export function simdImm(op: number, cmode: number, imm8: number): bigint {
  const b = BigInt(imm8);
  const rep = (v: bigint, bits: number): bigint => { let r = 0n; for (let k = 0; k < 64; k += bits) r |= v << BigInt(k); return r; };
  switch (cmode >> 1) {
    case 0: return rep(b, 32);
    case 1: return rep(b << 8n, 32);
    case 2: return rep(b << 16n, 32);
    case 3: return rep(b << 24n, 32);
    case 4: return rep(b, 16);
    case 5: return rep(b << 8n, 16);
    case 6: return rep(cmode & 1 ? (b << 16n) | 0xffffn : (b << 8n) | 0xffn, 32);
    default:
      if (!(cmode & 1) && !op) return rep(b, 8);
      if (!(cmode & 1) && op) { let r = 0n; for (let k = 0; k < 8; k++) if (imm8 & (1 << k)) r |= 0xffn << BigInt(8 * k); return r; }
      if (!op) return rep(fpImm(imm8, false), 32);
      return fpImm(imm8, true);
  }
}
export function movImmExec(c: A64Cpu, i: A64Insn): void {
  const q = i.size === 16;
  for (let h = 0; h < (q ? 2 : 1); h++) {
    const cur = vget64(c, i.rd, h);
    let v: bigint;
    switch (i.op) {
      case 0: v = i.big; break; // movi
      case 1: v = ~i.big & 0xffffffffffffffffn; break; // mvni
      case 2: v = cur | i.big; break; // orr
      default: v = cur & ~i.big; // bic
    }
    vset64(c, i.rd, v, h);
  }
  if (!q) zeroFrom(c, i.rd, 8);
}
export const simdModImm: Row = {
  name: 'AdvSIMD modified immediate', mask: 0x9ff80400, match: 0x0f000400,
  decode(w, i) {
    const q = f(w, 30, 1), op = f(w, 29, 1), cmode = f(w, 12, 4), imm8 = (f(w, 16, 3) << 5) | f(w, 5, 5);
    if (f(w, 11, 1)) return false; // fmov half
    i.size = q ? 16 : 8; i.rd = f(w, 0, 5); i.imm = imm8; i.imm2 = cmode; i.imm3 = op;
    if (cmode === 15 && op && !q) return false;
    i.big = simdImm(op, cmode, imm8);
    const orrBic = (cmode < 12 && (cmode & 1) === 1);
    i.op = orrBic ? (op ? 3 : 2) : (op && cmode !== 14 && cmode !== 15 ? 1 : 0);
    i.exec = movImmExec;
    return true;
  },
  fmt: i => {
    const cm = i.imm2, q = i.size === 16 ? 1 : 0;
    const name = ['movi', 'mvni', 'orr', 'bic'][i.op];
    if (cm === 14 && i.imm3) return ['movi', q ? `v${i.rd}.2d, #0x${i.big.toString(16).padStart(16, '0').replace(/^0+(?=.)/, '')}` : `d${i.rd}, #0x${i.big.toString(16)}`];
    if (cm === 15) return ['fmov', `${vname(i.rd, q, i.imm3 ? 8 : 4)}, #${fmtFloat(toNum(fpImm(i.imm, !!i.imm3), !!i.imm3))}`];
    if (cm === 14) return [name, `${vname(i.rd, q, 1)}, #0x${i.imm.toString(16)}`];
    if (cm >= 12) return [name, `${vname(i.rd, q, 4)}, #0x${i.imm.toString(16)}, msl #${cm & 1 ? 16 : 8}`];
    const es = cm < 8 ? 4 : 2, shift = cm < 8 ? (cm >> 1) * 8 : ((cm >> 1) & 1) * 8;
    return [name, `${vname(i.rd, q, es)}, #0x${i.imm.toString(16)}${shift ? `, lsl #${shift}` : ''}`];
  },
};

/** element-wise over lanes: f(a, b) of unsigned lane values of esize bytes */
export function map2(c: A64Cpu, i: A64Insn, fn: (a: number, b: number, es: number) => number): void {
  const es = i.imm3, n = i.size / es;
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push(fn(lane(c, i.rn, es, k), lane(c, i.rm, es, k), es));
  for (let k = 0; k < n; k++) setLane(c, i.rd, es, k, out[k]);
  zeroFrom(c, i.rd, i.size);
}
export function map2big(c: A64Cpu, i: A64Insn, fn: (a: bigint, b: bigint) => bigint): void {
  const n = i.size / 8, out: bigint[] = [];
  for (let k = 0; k < n; k++) out.push(fn(lane64(c, i.rn, k), lane64(c, i.rm, k)));
  for (let k = 0; k < n; k++) setLane64(c, i.rd, k, out[k]);
  zeroFrom(c, i.rd, i.size);
}
export const smask = (es: number): number => (es === 4 ? 0xffffffff : (1 << (8 * es)) - 1);
export const signed = (v: number, es: number): number => (es === 4 ? v | 0 : (v << (32 - 8 * es)) >> (32 - 8 * es));
export const ALL = (es: number): number => (es === 4 ? 0xffffffff : smask(es));

/** three-same: U:opcode -> executor (size-dependent ones look at es) */
export const THREE_SAME: Record<string, [string, (c: A64Cpu, i: A64Insn) => void]> = {
  '0:16': ['add', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => a + b) : map2(c, i, (a, b, es) => (a + b) & smask(es)))],
  '1:16': ['sub', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => a - b) : map2(c, i, (a, b, es) => (a - b) & smask(es)))],
  '1:17': ['cmeq', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => (a === b ? -1n : 0n)) : map2(c, i, (a, b, es) => (a === b ? ALL(es) : 0)))],
  '0:17': ['cmtst', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => ((a & b) !== 0n ? -1n : 0n)) : map2(c, i, (a, b, es) => ((a & b) !== 0 ? ALL(es) : 0)))],
  '1:6': ['cmhi', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => (a > b ? -1n : 0n)) : map2(c, i, (a, b, es) => (a > b ? ALL(es) : 0)))],
  '1:7': ['cmhs', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => (a >= b ? -1n : 0n)) : map2(c, i, (a, b, es) => (a >= b ? ALL(es) : 0)))],
  '0:6': ['cmgt', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => (BigInt.asIntN(64, a) > BigInt.asIntN(64, b) ? -1n : 0n)) : map2(c, i, (a, b, es) => (signed(a, es) > signed(b, es) ? ALL(es) : 0)))],
  '0:7': ['cmge', (c, i) => (i.imm3 === 8 ? map2big(c, i, (a, b) => (BigInt.asIntN(64, a) >= BigInt.asIntN(64, b) ? -1n : 0n)) : map2(c, i, (a, b, es) => (signed(a, es) >= signed(b, es) ? ALL(es) : 0)))],
  '1:12': ['umax', (c, i) => map2(c, i, (a, b) => Math.max(a, b))],
  '1:13': ['umin', (c, i) => map2(c, i, (a, b) => Math.min(a, b))],
  '0:12': ['smax', (c, i) => map2(c, i, (a, b, es) => (signed(a, es) >= signed(b, es) ? a : b))],
  '0:13': ['smin', (c, i) => map2(c, i, (a, b, es) => (signed(a, es) <= signed(b, es) ? a : b))],
  '0:19': ['mul', (c, i) => map2(c, i, (a, b, es) => (es === 4 ? Math.imul(a, b) >>> 0 : (a * b) & smask(es)))],
  '0:18': ['mla', (c, i) => mulAcc(c, i, 1)],
  '1:18': ['mls', (c, i) => mulAcc(c, i, -1)],
  '1:1': ['uqadd', (c, i) => map2(c, i, (a, b, es) => Math.min(a + b, smask(es) >>> 0))],
  '1:5': ['uqsub', (c, i) => map2(c, i, (a, b) => Math.max(a - b, 0))],
  '1:14': ['uabd', (c, i) => map2(c, i, (a, b) => Math.abs(a - b))],
  '0:23': ['addp', pairwise((a, b, es) => (a + b) & smask(es))],
  '1:20': ['umaxp', pairwise((a, b) => Math.max(a, b))],
  '1:21': ['uminp', pairwise((a, b) => Math.min(a, b))],
  '0:20': ['smaxp', pairwise((a, b, es) => (signed(a, es) >= signed(b, es) ? a : b))],
  '0:21': ['sminp', pairwise((a, b, es) => (signed(a, es) <= signed(b, es) ? a : b))],
};
/** mla / mls: rd += / -= rn * rm per lane */
export function mulAcc(c: A64Cpu, i: A64Insn, sign: number): void {
  const es = i.imm3, n = i.size / es;
  for (let k = 0; k < n; k++) {
    const p = es === 4 ? Math.imul(lane(c, i.rn, es, k), lane(c, i.rm, es, k)) : lane(c, i.rn, es, k) * lane(c, i.rm, es, k);
    const r = es === 4 ? (lane(c, i.rd, es, k) + sign * p) | 0 : (lane(c, i.rd, es, k) + sign * p) & smask(es);
    setLane(c, i.rd, es, k, r);
  }
  zeroFrom(c, i.rd, i.size);
}
/** pairwise: the concatenation rn:rm, adjacent pairs */
export function pairwise(fn: (a: number, b: number, es: number) => number): (c: A64Cpu, i: A64Insn) => void {
  return (c, i) => {
    const es = i.imm3, n = i.size / es, all: number[] = [];
    for (let k = 0; k < n; k++) all.push(lane(c, i.rn, es, k));
    for (let k = 0; k < n; k++) all.push(lane(c, i.rm, es, k));
    if (es === 8) {
      const a = [lane64(c, i.rn, 0), lane64(c, i.rn, 1), lane64(c, i.rm, 0), lane64(c, i.rm, 1)];
      setLane64(c, i.rd, 0, a[0] + a[1]); setLane64(c, i.rd, 1, a[2] + a[3]);
      return;
    }
    const out: number[] = [];
    for (let k = 0; k < n; k++) out.push(fn(all[2 * k], all[2 * k + 1], es));
    for (let k = 0; k < n; k++) setLane(c, i.rd, es, k, out[k]);
    zeroFrom(c, i.rd, i.size);
  };
}
/** the logic ops of three-same opcode 3 (size selects): and bic orr orn eor bsl bit bif */
export function logicExec(c: A64Cpu, i: A64Insn): void {
  const q = i.size === 16 ? 2 : 1;
  for (let h = 0; h < q; h++) {
    const n = vget64(c, i.rn, h), m = vget64(c, i.rm, h), d = vget64(c, i.rd, h);
    const M = 0xffffffffffffffffn;
    let r: bigint;
    switch (i.op) {
      case 0: r = n & m; break;
      case 1: r = n & ~m & M; break;
      case 2: r = n | m; break;
      case 3: r = (n | ~m) & M; break;
      case 4: r = n ^ m; break;
      case 5: r = (d & n) | (~d & M & m); break; // bsl
      case 6: r = (n & m) | (d & ~m & M); break; // bit
      default: r = (n & ~m & M) | (d & m); // bif
    }
    vset64(c, i.rd, r, h);
  }
  if (q === 1) zeroFrom(c, i.rd, 8);
}
export const LOGIC = ['and', 'bic', 'orr', 'orn', 'eor', 'bsl', 'bit', 'bif'];
export const threeSame: Row = {
  name: 'AdvSIMD three same', mask: 0x9f200400, match: 0x0e200400,
  decode(w, i) {
    const q = f(w, 30, 1), u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 11, 5);
    i.size = q ? 16 : 8; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    if (opc === 3) { i.op = (u << 2) | size; i.exec = logicExec; return true; }
    const e = THREE_SAME[`${u}:${opc}`];
    if (!e) return false;
    i.imm3 = 1 << size;
    if (i.imm3 === 8 && !q) return false;
    if (i.imm3 === 8 && !['add', 'sub', 'cmeq', 'cmtst', 'cmhi', 'cmhs', 'cmgt', 'cmge', 'addp'].includes(e[0])) return false;
    if (i.imm3 === 8 && (e[0] === 'mla' || e[0] === 'mls' || e[0] === 'mul')) return false;
    i.op = -1; i.exec = e[1];
    return true;
  },
  fmt: i => {
    const q = i.size === 16 ? 1 : 0;
    if (i.op >= 0) {
      const name = LOGIC[i.op];
      if (name === 'orr' && i.rn === i.rm) return ['mov', `${vname(i.rd, q, 1)}, ${vname(i.rn, q, 1)}`];
      return [name, `${vname(i.rd, q, 1)}, ${vname(i.rn, q, 1)}, ${vname(i.rm, q, 1)}`];
    }
    const e = THREE_SAME[`${f(i.word, 29, 1)}:${f(i.word, 11, 5)}`];
    return [e[0], `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, q, i.imm3)}, ${vname(i.rm, q, i.imm3)}`];
  },
};

/** two-register misc */
export function misc(c: A64Cpu, i: A64Insn): void {
  const es = i.imm3, n = i.size / es;
  const src: number[] = [];
  for (let k = 0; k < (es === 8 ? 0 : n); k++) src.push(lane(c, i.rn, es, k));
  switch (i.op) {
    case 0x05: { // cnt (8b/16b) / not (U=1)
      if (i.op2) { for (let k = 0; k < i.size; k++) c.vb[i.rd * 16 + k] = ~c.vb[i.rn * 16 + k] & 0xff; }
      else for (let k = 0; k < i.size; k++) { let v = c.vb[i.rn * 16 + k], b = 0; while (v) { b += v & 1; v >>= 1; } c.vb[i.rd * 16 + k] = b; }
      zeroFrom(c, i.rd, i.size);
      return;
    }
    case 0x00: case 0x01: { // rev64 (U=0, op 0) / rev32 (U=1, op 0) / rev16 (U=0 op 1)
      const group = i.op === 1 ? 2 : i.op2 ? 4 : 8;
      const b = c.vb.slice(i.rn * 16, i.rn * 16 + 16), out = new Uint8Array(16);
      for (let g = 0; g < i.size; g += group) {
        for (let k = 0; k < group; k += es) for (let j = 0; j < es; j++) out[g + (group - es - k) + j] = b[g + k + j];
      }
      c.vb.set(out.subarray(0, i.size), i.rd * 16);
      zeroFrom(c, i.rd, i.size);
      return;
    }
    case 0x09: case 0x0a: case 0x08: { // cmeq #0 (0x09), cmlt #0 (0x0a, U=0) / cmge #0 (0x08, U=1), cmgt #0 (0x08,U=0), cmle (0x09, U=1)
      if (es === 8) {
        for (let k = 0; k < n; k++) {
          const v = BigInt.asIntN(64, lane64(c, i.rn, k));
          const r = i.op === 9 ? (i.op2 ? v <= 0n : v === 0n) : i.op === 10 ? v < 0n : (i.op2 ? v >= 0n : v > 0n);
          setLane64(c, i.rd, k, r ? -1n : 0n);
        }
      } else {
        for (let k = 0; k < n; k++) {
          const v = signed(src[k], es);
          const r = i.op === 9 ? (i.op2 ? v <= 0 : v === 0) : i.op === 10 ? v < 0 : (i.op2 ? v >= 0 : v > 0);
          setLane(c, i.rd, es, k, r ? ALL(es) : 0);
        }
      }
      zeroFrom(c, i.rd, i.size);
      return;
    }
    case 0x0b: { // abs (U=0) / neg (U=1)
      if (es === 8) { for (let k = 0; k < n; k++) { const v = BigInt.asIntN(64, lane64(c, i.rn, k)); setLane64(c, i.rd, k, i.op2 ? -v : v < 0n ? -v : v); } }
      else for (let k = 0; k < n; k++) { const v = signed(src[k], es); setLane(c, i.rd, es, k, (i.op2 ? -v : Math.abs(v)) & smask(es)); }
      zeroFrom(c, i.rd, i.size);
      return;
    }
    default: { // xtn / xtn2 (0x12): narrow to half-width lanes into the low (Q=0) or high (Q=1) half
      const nes = es, wide = nes * 2, count = 8 / nes;
      const vals: number[] = [];
      for (let k = 0; k < count; k++) vals.push(wide === 8 ? Number(lane64(c, i.rn, k) & 0xffffffffn) : lane(c, i.rn, wide, k) & smask(nes));
      const off = i.size === 16 ? count : 0;
      for (let k = 0; k < count; k++) setLane(c, i.rd, nes, off + k, vals[k]);
      if (i.size !== 16) zeroFrom(c, i.rd, 8);
    }
  }
}
export const MISC_NAMES: Record<string, string> = {
  '0:5': 'cnt', '1:5': 'not', '0:0': 'rev64', '1:0': 'rev32', '0:1': 'rev16', '0:9': 'cmeq', '1:9': 'cmle', '0:10': 'cmlt', '0:8': 'cmgt',
  '1:8': 'cmge', '0:11': 'abs', '1:11': 'neg', '0:18': 'xtn',
};
export const twoMisc: Row = {
  name: 'AdvSIMD two-register misc', mask: 0x9f3e0c00, match: 0x0e200800,
  decode(w, i) {
    const q = f(w, 30, 1), u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 5);
    const fpName = opc >= 12 ? FP_MISC[`${u}:${size >> 1}:${opc}`] : undefined;
    if (fpName) {
      const sz = size & 1;
      if (sz && !q && fpName !== 'fcvtl' && fpName !== 'fcvtn') return false;
      if ((fpName === 'fcvtl' || fpName === 'fcvtn') && sz !== 1) return false; // half precision forms
      i.size = q ? 16 : 8; i.op = opc; i.op2 = u; i.imm2 = size >> 1; i.imm3 = sz ? 8 : 4; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
      i.imm = -1; i.exec = fpMiscExec;
      return true;
    }
    const name = MISC_NAMES[`${u}:${opc}`];
    if (!name) return false;
    i.size = q ? 16 : 8; i.op = opc; i.op2 = u; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.imm3 = 1 << size;
    if (opc === 5 && size !== 0) return false;
    if (opc === 18) { if (size === 3) return false; }
    else if (i.imm3 === 8 && !q) return false;
    i.exec = misc;
    return true;
  },
  fmt: i => {
    const q = i.size === 16 ? 1 : 0;
    if (i.imm === -1) {
      const fpName = FP_MISC[`${i.op2}:${i.imm2}:${i.op}`];
      if (fpName === 'fcvtl') return [q ? 'fcvtl2' : 'fcvtl', `v${i.rd}.2d, ${vname(i.rn, q, 4)}`];
      if (fpName === 'fcvtn') return [q ? 'fcvtn2' : 'fcvtn', `${vname(i.rd, q, 4)}, v${i.rn}.2d`];
      const zero = /^fcm/.test(fpName) ? ', #0.0' : '';
      return [fpName, `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, q, i.imm3)}${zero}`];
    }
    const name = MISC_NAMES[`${i.op2}:${i.op}`];
    if (i.op === 18) return [q ? 'xtn2' : 'xtn', `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, 1, i.imm3 * 2)}`];
    const zero = i.op >= 8 && i.op <= 10 ? ', #0' : '';
    return [name === 'not' ? 'mvn' : name, `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, q, i.imm3)}${zero}`];
  },
};
/** across lanes: addv (0:27) uaddlv (1:3) umaxv (1:10) uminv (1:26) smaxv (0:10) sminv (0:26) */
export function acrossExec(c: A64Cpu, i: A64Insn): void {
  const es = i.imm3, n = i.size / es;
  let r = i.op === 3 || i.op === 27 ? 0 : lane(c, i.rn, es, 0);
  for (let k = i.op === 3 || i.op === 27 ? 0 : 1; k < n; k++) {
    const v = lane(c, i.rn, es, k);
    switch (i.op) {
      case 27: r = (r + v) & smask(es); break;
      case 3: r += v; break;
      case 10: r = i.op2 ? Math.max(r, v) : (signed(v, es) > signed(r, es) ? v : r); break;
      default: r = i.op2 ? Math.min(r, v) : (signed(v, es) < signed(r, es) ? v : r);
    }
  }
  c.vb.fill(0, i.rd * 16, i.rd * 16 + 16);
  setLane(c, i.rd, i.op === 3 ? es * 2 : es, 0, r);
}
export const ACROSS: Record<string, string> = { '0:27': 'addv', '1:3': 'uaddlv', '1:10': 'umaxv', '1:26': 'uminv', '0:10': 'smaxv', '0:26': 'sminv' };
export const acrossRow: Row = {
  name: 'AdvSIMD across lanes', mask: 0x9f3e0c00, match: 0x0e300800,
  decode(w, i) {
    const q = f(w, 30, 1), u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 5);
    if (!ACROSS[`${u}:${opc}`] || size === 3 || (size === 2 && !q)) return false;
    i.size = q ? 16 : 8; i.op = opc; i.op2 = u; i.imm3 = 1 << size; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.exec = acrossExec;
    return true;
  },
  fmt: i => [ACROSS[`${i.op2}:${i.op}`], `${SCALAR[Math.log2(i.op === 3 ? i.imm3 * 2 : i.imm3)]}${i.rd}, ${vname(i.rn, i.size === 16 ? 1 : 0, i.imm3)}`],
};
/** copy: dup (element / general), ins (general / element), umov / smov */
export function copyExec(c: A64Cpu, i: A64Insn): void {
  const es = i.imm3, idx = i.imm2;
  switch (i.op) {
    case 0: { // dup element
      if (es === 8) { const v = lane64(c, i.rn, idx); for (let k = 0; k < i.size / 8; k++) setLane64(c, i.rd, k, v); }
      else { const v = lane(c, i.rn, es, idx); for (let k = 0; k < i.size / es; k++) setLane(c, i.rd, es, k, v); }
      zeroFrom(c, i.rd, i.size);
      return;
    }
    case 1: { // dup general
      const v = c.x64(i.n);
      if (es === 8) for (let k = 0; k < i.size / 8; k++) setLane64(c, i.rd, k, v);
      else { const x = Number(v & BigInt(smask(es) >>> 0)); for (let k = 0; k < i.size / es; k++) setLane(c, i.rd, es, k, x); }
      zeroFrom(c, i.rd, i.size);
      return;
    }
    case 3: { // ins general
      const v = c.x64(i.n);
      if (es === 8) setLane64(c, i.rd, idx, v); else setLane(c, i.rd, es, idx, Number(v & BigInt(smask(es) >>> 0)));
      return;
    }
    case 5: case 7: { // smov / umov
      if (es === 8) { c.setX64(i.d, lane64(c, i.rn, idx)); return; }
      const v = lane(c, i.rn, es, idx);
      if (i.op === 7) c.setX64(i.d, BigInt(v >>> 0));
      else { const s = BigInt(signed(v, es)); c.setX64(i.d, i.sf ? BigInt.asUintN(64, s) : BigInt.asUintN(32, s)); }
      return;
    }
    default: { // ins element
      if (es === 8) setLane64(c, i.rd, idx, lane64(c, i.rn, i.imm)); else setLane(c, i.rd, es, idx, lane(c, i.rn, es, i.imm));
    }
  }
}
export const copyRow: Row = {
  name: 'AdvSIMD copy', mask: 0x9fe08400, match: 0x0e000400,
  decode(w, i) {
    const q = f(w, 30, 1), op = f(w, 29, 1), imm5 = f(w, 16, 5), imm4 = f(w, 11, 4);
    const sz = imm5 & 1 ? 0 : imm5 & 2 ? 1 : imm5 & 4 ? 2 : imm5 & 8 ? 3 : -1;
    if (sz < 0) return false;
    i.imm3 = 1 << sz; i.imm2 = imm5 >> (sz + 1); i.size = q ? 16 : 8; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    if (op) { if (!q) return false; i.op = 8; i.imm = imm4 >> sz; i.exec = copyExec; return true; }
    switch (imm4) {
      case 0: i.op = 0; break;
      case 1: i.op = 1; i.n = rZ(i.rn); break;
      case 3: if (!q) return false; i.op = 3; i.n = rZ(i.rn); break;
      case 5: i.op = 5; i.sf = q; i.d = wZ(i.rd); break;
      case 7: i.op = 7; i.sf = q; i.d = wZ(i.rd); if ((sz === 3) !== (q === 1)) return false; break;
      default: return false;
    }
    if ((i.op === 0 || i.op === 1) && sz === 3 && !q) return false;
    i.exec = copyExec;
    return true;
  },
  fmt: i => {
    const es = i.imm3, t = ['b', 'h', 's', 'd'][Math.log2(es)], q = i.size === 16 ? 1 : 0;
    switch (i.op) {
      case 0: return ['dup', `${vname(i.rd, q, es)}, v${i.rn}.${t}[${i.imm2}]`];
      case 1: return ['dup', `${vname(i.rd, q, es)}, ${gz(i.rn, es === 8 ? 1 : 0)}`];
      case 3: return ['mov', `v${i.rd}.${t}[${i.imm2}], ${gz(i.rn, es === 8 ? 1 : 0)}`];
      case 5: return ['smov', `${gz(i.rd, i.sf)}, v${i.rn}.${t}[${i.imm2}]`];
      case 7: return [es >= 4 ? 'mov' : 'umov', `${gz(i.rd, es === 8 ? 1 : 0)}, v${i.rn}.${t}[${i.imm2}]`];
      default: return ['mov', `v${i.rd}.${t}[${i.imm2}], v${i.rn}.${t}[${i.imm}]`];
    }
  },
};
export const extRow: Row = {
  name: 'AdvSIMD ext', mask: 0xbfe08400, match: 0x2e000000,
  decode(w, i) {
    const q = f(w, 30, 1), imm4 = f(w, 11, 4);
    if (!q && imm4 >= 8) return false;
    i.size = q ? 16 : 8; i.imm = imm4; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = (c, x) => {
      const all = [...c.vb.slice(x.rn * 16, x.rn * 16 + x.size), ...c.vb.slice(x.rm * 16, x.rm * 16 + x.size)];
      for (let k = 0; k < x.size; k++) c.vb[x.rd * 16 + k] = all[x.imm + k];
      zeroFrom(c, x.rd, x.size);
    };
    return true;
  },
  fmt: i => ['ext', `${vname(i.rd, i.size === 16 ? 1 : 0, 1)}, ${vname(i.rn, i.size === 16 ? 1 : 0, 1)}, ${vname(i.rm, i.size === 16 ? 1 : 0, 1)}, #${i.imm}`],
};
/** shift by immediate: shl sshr ushr shrn ushll sshll (the element size from immh) */
export function shiftImmExec(c: A64Cpu, i: A64Insn): void {
  const es = i.imm3, sh = i.imm;
  switch (i.op) {
    case 10: case 0: { // shl / sshr / ushr
      const n = i.size / es;
      if (es === 8) for (let k = 0; k < n; k++) {
        const v = lane64(c, i.rn, k);
        setLane64(c, i.rd, k, i.op === 10 ? v << BigInt(sh) : i.op2 ? v >> BigInt(sh) : BigInt.asIntN(64, v) >> BigInt(sh));
      } else for (let k = 0; k < n; k++) {
        const v = lane(c, i.rn, es, k);
        const r = i.op === 10 ? (es === 4 ? (v << sh) >>> 0 : (v << sh) & smask(es)) : i.op2 ? (sh >= 32 ? 0 : v >>> sh) : (signed(v, es) >> Math.min(sh, 31)) & smask(es);
        setLane(c, i.rd, es, k, r);
      }
      zeroFrom(c, i.rd, i.size);
      return;
    }
    case 16: { // shrn / shrn2: narrow (es = the narrow size)
      const wide = es * 2, count = 8 / es, vals: number[] = [];
      for (let k = 0; k < count; k++) vals.push(wide === 8 ? Number((lane64(c, i.rn, k) >> BigInt(sh)) & 0xffffffffn) : (lane(c, i.rn, wide, k) >>> sh) & smask(es));
      const off = i.size === 16 ? count : 0;
      for (let k = 0; k < count; k++) setLane(c, i.rd, es, off + k, vals[k]);
      if (i.size !== 16) zeroFrom(c, i.rd, 8);
      return;
    }
    default: { // ushll / sshll (2): widen the low (Q=0) or high half
      const count = 8 / es, off = i.size === 16 ? count : 0, vals: bigint[] = [];
      for (let k = 0; k < count; k++) {
        const v = lane(c, i.rn, es, off + k);
        vals.push(BigInt(i.op2 ? v : signed(v, es)) << BigInt(sh));
      }
      for (let k = 0; k < count; k++) {
        if (es * 2 === 8) setLane64(c, i.rd, k, vals[k]); else setLane(c, i.rd, es * 2, k, Number(BigInt.asUintN(es * 16, vals[k])));
      }
    }
  }
}
export const shiftImmRow: Row = {
  name: 'AdvSIMD shift by immediate', mask: 0x9f800400, match: 0x0f000400,
  decode(w, i) {
    const q = f(w, 30, 1), u = f(w, 29, 1), immh = f(w, 19, 4), immb = f(w, 16, 3), opc = f(w, 11, 5);
    if (!immh) return false;
    const hb = 31 - Math.clz32(immh), es = 1 << hb;
    i.size = q ? 16 : 8; i.op2 = u; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.imm3 = es;
    const raw = (immh << 3) | immb;
    if (opc === 10 && !u) { i.op = 10; i.imm = raw - es * 8; }
    else if (opc === 0) { i.op = 0; i.imm = es * 16 - raw; }
    else if (opc === 16 && !u) { if (es === 8) return false; i.op = 16; i.imm = es * 16 - raw; }
    else if (opc === 20) { if (es === 8) return false; i.op = 20; i.imm = raw - es * 8; }
    else return false;
    if (es === 8 && !q && i.op !== 16 && i.op !== 20) return false;
    i.exec = shiftImmExec;
    return true;
  },
  fmt: i => {
    const q = i.size === 16 ? 1 : 0;
    switch (i.op) {
      case 10: return ['shl', `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, q, i.imm3)}, #${i.imm}`];
      case 0: return [i.op2 ? 'ushr' : 'sshr', `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, q, i.imm3)}, #${i.imm}`];
      case 16: return [q ? 'shrn2' : 'shrn', `${vname(i.rd, q, i.imm3)}, ${vname(i.rn, 1, i.imm3 * 2)}, #${i.imm}`];
      default: {
        const name = (i.op2 ? 'ushll' : 'sshll') + (q ? '2' : '');
        if (i.imm === 0) return [(i.op2 ? 'uxtl' : 'sxtl') + (q ? '2' : ''), `${vname(i.rd, 1, i.imm3 * 2)}, ${vname(i.rn, q, i.imm3)}`];
        return [name, `${vname(i.rd, 1, i.imm3 * 2)}, ${vname(i.rn, q, i.imm3)}, #${i.imm}`];
      }
    }
  },
};
/** three different: uaddw/saddw (opc 1), addhn (opc 4), uaddl (opc 0) */
export function threeDiffExec(c: A64Cpu, i: A64Insn): void {
  const es = i.imm3, count = 8 / es, hi = i.size === 16 ? count : 0;
  switch (i.op) {
    case 0: case 1: case 2: case 3: case 8: case 10: case 12: { // [us]addl/w, [us]subl/w, [us]mlal, [us]mlsl, [us]mull: wide lanes
      const vals: bigint[] = [];
      const wide = i.op === 1 || i.op === 3;
      for (let k = 0; k < count; k++) {
        const a = wide ? (es * 2 === 8 ? lane64(c, i.rn, k) : BigInt(lane(c, i.rn, es * 2, k))) : BigInt(i.op2 ? lane(c, i.rn, es, hi + k) : signed(lane(c, i.rn, es, hi + k), es));
        const mv = lane(c, i.rm, es, hi + k);
        const m = BigInt(i.op2 ? mv : signed(mv, es));
        const acc = es * 2 === 8 ? lane64(c, i.rd, k) : BigInt(lane(c, i.rd, es * 2, k));
        switch (i.op) {
          case 0: case 1: vals.push(a + m); break;
          case 2: case 3: vals.push(a - m); break;
          case 8: vals.push(acc + a * m); break;
          case 10: vals.push(acc - a * m); break;
          default: vals.push(a * m);
        }
      }
      for (let k = 0; k < count; k++) { if (es * 2 === 8) setLane64(c, i.rd, k, vals[k]); else setLane(c, i.rd, es * 2, k, Number(BigInt.asUintN(es * 16, vals[k]))); }
      return;
    }
    default: { // addhn: high halves of wide sums
      const vals: number[] = [];
      for (let k = 0; k < count; k++) {
        const s = es * 2 === 8 ? lane64(c, i.rn, k) + lane64(c, i.rm, k) : BigInt(lane(c, i.rn, es * 2, k) + lane(c, i.rm, es * 2, k));
        vals.push(Number((BigInt.asUintN(es * 16, s) >> BigInt(es * 8)) & BigInt(smask(es) >>> 0)));
      }
      for (let k = 0; k < count; k++) setLane(c, i.rd, es, hi + k, vals[k]);
      if (i.size !== 16) zeroFrom(c, i.rd, 8);
    }
  }
}
export const threeDiff: Row = {
  name: 'AdvSIMD three different', mask: 0x9f200c00, match: 0x0e200000,
  decode(w, i) {
    const q = f(w, 30, 1), u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 4);
    if (size === 3 || !([0, 1, 2, 3, 8, 10, 12].includes(opc) || (opc === 4 && !u))) return false;
    i.size = q ? 16 : 8; i.op = opc; i.op2 = u; i.imm3 = 1 << size; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = threeDiffExec;
    return true;
  },
  fmt: i => {
    const q = i.size === 16 ? 1 : 0, es = i.imm3, s = q ? '2' : '';
    if (i.op === 4) return [`addhn${s}`, `${vname(i.rd, q, es)}, ${vname(i.rn, 1, es * 2)}, ${vname(i.rm, 1, es * 2)}`];
    const stem = ({ 0: 'addl', 1: 'addw', 2: 'subl', 3: 'subw', 8: 'mlal', 10: 'mlsl', 12: 'mull' } as Record<number, string>)[i.op];
    const w = i.op === 1 || i.op === 3;
    return [`${i.op2 ? 'u' : 's'}${stem}${s}`, `${vname(i.rd, 1, es * 2)}, ${vname(i.rn, w ? 1 : q, w ? es * 2 : es)}, ${vname(i.rm, q, es)}`];
  },
};
/** permutes: uzp1 uzp2 zip1 zip2 trn1 trn2 */
export const PERM = { 1: 'uzp1', 5: 'uzp2', 3: 'zip1', 7: 'zip2', 2: 'trn1', 6: 'trn2' } as Record<number, string>;
export const permRow: Row = {
  name: 'AdvSIMD permute', mask: 0xbf208c00, match: 0x0e000800,
  decode(w, i) {
    const q = f(w, 30, 1), size = f(w, 22, 2), opc = f(w, 12, 3);
    if (!PERM[opc] || (size === 3 && !q)) return false;
    i.size = q ? 16 : 8; i.op = opc; i.imm3 = 1 << size; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = (c, x) => {
      const es = x.imm3, n = x.size / es;
      const A = Array.from({ length: n }, (_, k) => (es === 8 ? lane64(c, x.rn, k) : BigInt(lane(c, x.rn, es, k))));
      const B = Array.from({ length: n }, (_, k) => (es === 8 ? lane64(c, x.rm, k) : BigInt(lane(c, x.rm, es, k))));
      const out: bigint[] = [];
      const part = (x.op >> 2) & 1;
      for (let k = 0; k < n; k++) {
        switch (x.op & 3) {
          case 1: out.push(k < n / 2 ? A[2 * k + part] : B[2 * (k - n / 2) + part]); break; // uzp
          case 3: { const base2 = part * n / 2; out.push(k % 2 ? B[base2 + (k >> 1)] : A[base2 + (k >> 1)]); break; } // zip
          default: out.push(k % 2 ? B[(k & ~1) + part] : A[(k & ~1) + part]); // trn
        }
      }
      for (let k = 0; k < n; k++) { if (es === 8) setLane64(c, x.rd, k, out[k]); else setLane(c, x.rd, es, k, Number(out[k])); }
      zeroFrom(c, x.rd, x.size);
    };
    return true;
  },
  fmt: i => [PERM[i.op], `${vname(i.rd, i.size === 16 ? 1 : 0, i.imm3)}, ${vname(i.rn, i.size === 16 ? 1 : 0, i.imm3)}, ${vname(i.rm, i.size === 16 ? 1 : 0, i.imm3)}`],
};
/** tbl / tbx with 1-4 table registers */
export const tblRow: Row = {
  name: 'AdvSIMD table lookup', mask: 0xbfe09c00, match: 0x0e000000,
  decode(w, i) {
    i.size = f(w, 30, 1) ? 16 : 8; i.imm2 = f(w, 13, 2) + 1; i.op = f(w, 12, 1); i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.exec = (c, x) => {
      const table: number[] = [];
      for (let k = 0; k < x.imm2; k++) table.push(...c.vb.slice(((x.rn + k) % 32) * 16, ((x.rn + k) % 32) * 16 + 16));
      const idx = c.vb.slice(x.rm * 16, x.rm * 16 + x.size);
      for (let k = 0; k < x.size; k++) {
        const j = idx[k];
        if (j < table.length) c.vb[x.rd * 16 + k] = table[j]; else if (!x.op) c.vb[x.rd * 16 + k] = 0;
      }
      zeroFrom(c, x.rd, x.size);
    };
    return true;
  },
  fmt: i => [i.op ? 'tbx' : 'tbl', `${vname(i.rd, i.size === 16 ? 1 : 0, 1)}, { ${Array.from({ length: i.imm2 }, (_, k) => vname((i.rn + k) % 32, 1, 1)).join(', ')} }, ${vname(i.rm, i.size === 16 ? 1 : 0, 1)}`],
};
