/**
 * SIMD&FP (issue 15): the V registers as compilers and C libraries use them
 * at default flags — loads and stores of B/H/S/D/Q registers (every
 * addressing form, pairs, literals, LD1/ST1 of 1-4 registers), scalar FP
 * (fmov in all its forms, arithmetic, fused multiply-add, compares into
 * NZCV, fcsel, conversions between FP precisions and to/from integers),
 * and the AdvSIMD integer operations the string functions use (movi/mvni,
 * the three-same arithmetic / compare / logic / pairwise set, two-register
 * misc, across-lanes reductions, dup/ins/umov, ext, shifts by immediate,
 * narrowing / widening, permutes, tbl).
 *
 * Floating point follows the ARM ARM, not JavaScript: NaN operands are
 * processed as FPProcessNaNs does (the first signalling NaN, quieted, else
 * the first quiet NaN; FPCR.DN gives the default NaN 0x7fc00000 /
 * 0x7ff8...), an invalid operation gives the default NaN, conversions to
 * integers saturate (NaN -> 0) and set IOC; FPSR's IOC and DZC are kept.
 * + - * / sqrt round to nearest (single rounding through doubles is exact
 * for singles); fused multiply-add and integer-to-FP conversions go through
 * emulator/cpu/softfloat.ts with the FPCR rounding mode, the other
 * conversions take the mode they name (fcvtzs/zu truncate). Not modelled:
 * other rounding modes for + - * / sqrt, flush-to-zero, the IXC/UFC/OFC/IDC
 * flags, half precision arithmetic.
 */
import type { A64Cpu } from '../cpu';
import type { A64Insn, Row } from '../insn';
import { f, sf, rZ, wZ, rS, gz, base, target, COND, EXTEND } from '../fmt';
import { FLAG_NV, RoundingMode, ffma, intToF } from '../../../cpu/softfloat';

const SCRATCH = 32;
const IOC = 1, DZC = 2;
const TWO32 = 4294967296;

// ---------------------------------------------------------------- register helpers

function zeroFrom(c: A64Cpu, r: number, bytes: number): void { c.vb.fill(0, r * 16 + bytes, r * 16 + 16); }
function vget64(c: A64Cpu, r: number, half = 0): bigint {
  return (BigInt(c.vw[r * 4 + half * 2 + 1] >>> 0) << 32n) | BigInt(c.vw[r * 4 + half * 2] >>> 0);
}
function vset64(c: A64Cpu, r: number, v: bigint, half = 0): void {
  c.vw[r * 4 + half * 2] = Number(v & 0xffffffffn) | 0; c.vw[r * 4 + half * 2 + 1] = Number((v >> 32n) & 0xffffffffn) | 0;
}
/** lane k of an esize-byte element of register r, unsigned (as bigint for 8-byte lanes) */
function lane(c: A64Cpu, r: number, esize: number, k: number): number {
  const o = r * 16 + k * esize;
  switch (esize) {
    case 1: return c.vb[o];
    case 2: return c.vh[o >> 1];
    case 4: return c.vw[o >> 2] >>> 0;
    default: return Number(vget64(c, r, k));
  }
}
function setLane(c: A64Cpu, r: number, esize: number, k: number, v: number): void {
  const o = r * 16 + k * esize;
  switch (esize) {
    case 1: c.vb[o] = v; return;
    case 2: c.vh[o >> 1] = v; return;
    case 4: c.vw[o >> 2] = v | 0; return;
    default: vset64(c, r, BigInt.asUintN(64, BigInt(v)), k);
  }
}
const lane64 = (c: A64Cpu, r: number, k: number): bigint => vget64(c, r, k);
const setLane64 = (c: A64Cpu, r: number, k: number, v: bigint): void => vset64(c, r, BigInt.asUintN(64, v), k);

const vname = (n: number, q: number, esize: number): string => `v${n}.${esize === 8 ? (q ? '2d' : '1d') : `${(q ? 16 : 8) / esize}${['', 'b', 'h', '', 's'][esize]}`}`;
const SCALAR = ['b', 'h', 's', 'd', 'q'];
const sreg = (n: number, bytes: number): string => `${SCALAR[Math.log2(bytes)]}${n}`;

// ---------------------------------------------------------------- loads and stores

function ld(c: A64Cpu, t: number, a: number, bytes: number): void {
  const o = t * 4;
  if (bytes === 16) { for (let k = 0; k < 4; k++) c.vw[o + k] = c.mem.read32(a + 4 * k) | 0; return; }
  if (bytes === 8) { c.vw[o] = c.mem.read32(a) | 0; c.vw[o + 1] = c.mem.read32(a + 4) | 0; c.vw[o + 2] = 0; c.vw[o + 3] = 0; return; }
  c.vw[o] = bytes === 4 ? c.mem.read32(a) | 0 : bytes === 2 ? c.mem.read16(a) : c.mem.read8(a);
  c.vw[o + 1] = 0; c.vw[o + 2] = 0; c.vw[o + 3] = 0;
}
function st(c: A64Cpu, t: number, a: number, bytes: number): void {
  const o = t * 4;
  if (bytes >= 4) { for (let k = bytes / 4 - 1; k >= 0; k--) c.mem.write32(a + 4 * k, c.vw[o + k]); return; }
  if (bytes === 2) c.mem.write16(a, c.vh[t * 8]); else c.mem.write8(a, c.vb[t * 16]);
}
/** i.d = Rt, i.size = bytes, i.op = 1 load / 0 store, i.imm offset; i.op2: 0 offset, 1 post, 2 pre */
function xferOne(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, i.op ? 'read' : 'write');
  const a = i.op2 === 1 ? b : b + i.imm;
  if (i.op) ld(c, i.rd, a, i.size); else st(c, i.rd, a, i.size);
  if (i.op2) c.setAddr(i.n, b + i.imm);
}
function xferReg(c: A64Cpu, i: A64Insn): void {
  const l = c.extend(i.a, i.op2, i.imm2);
  const a = c.addrOf(i.n, i.op ? 'read' : 'write') + c.th * TWO32 + (l >>> 0);
  if (i.op) ld(c, i.rd, a, i.size); else st(c, i.rd, a, i.size);
}
function xferLiteral(c: A64Cpu, i: A64Insn): void { ld(c, i.rd, i.target, i.size); }
function xferPair(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, i.op ? 'read' : 'write');
  const a = i.op2 === 1 ? b : b + i.imm;
  if (i.op) { ld(c, i.rd, a, i.size); ld(c, i.ra, a + i.size, i.size); } else { st(c, i.rd, a, i.size); st(c, i.ra, a + i.size, i.size); }
  if (i.op2) c.setAddr(i.n, b + i.imm);
}
/** the V-register size of a load/store: size:opc -> bytes, or 0 when unallocated */
function vbytes(size: number, opc: number): number {
  if (opc >= 2) return size === 0 ? 16 : 0;
  return 1 << size;
}
const fmtAddr = (i: A64Insn): string => {
  const imm = i.imm ? `, #${i.imm}` : '';
  return i.op2 === 1 ? `[${base(i.rn)}], #${i.imm}` : i.op2 === 2 ? `[${base(i.rn)}${imm}]!` : `[${base(i.rn)}${imm}]`;
};

const ldstUnsigned: Row = {
  name: 'SIMD&FP load/store (unsigned offset)', mask: 0x3f000000, match: 0x3d000000,
  decode(w, i) {
    const bytes = vbytes(f(w, 30, 2), f(w, 22, 2));
    if (!bytes) return false;
    i.size = bytes; i.op = f(w, 22, 1); i.op2 = 0; i.imm = f(w, 10, 12) * bytes;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.exec = xferOne;
    return true;
  },
  fmt: i => [i.op ? 'ldr' : 'str', `${sreg(i.rd, i.size)}, ${fmtAddr(i)}`],
};
const ldstImm9: Row = {
  name: 'SIMD&FP load/store (unscaled, pre/post-index)', mask: 0x3f200000, match: 0x3c000000,
  decode(w, i) {
    const bytes = vbytes(f(w, 30, 2), f(w, 22, 2)), kind = f(w, 10, 2);
    if (!bytes || kind === 2) return false;
    i.size = bytes; i.op = f(w, 22, 1); i.op2 = kind === 0 ? 0 : kind === 1 ? 1 : 2; i.imm = sf(w, 12, 9);
    i.imm3 = kind === 0 ? 1 : 0;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.exec = xferOne;
    return true;
  },
  fmt: i => [(i.op ? 'ld' : 'st') + (i.imm3 ? 'ur' : 'r'), `${sreg(i.rd, i.size)}, ${fmtAddr(i)}`],
};
const ldstRegOff: Row = {
  name: 'SIMD&FP load/store (register offset)', mask: 0x3f200c00, match: 0x3c200800,
  decode(w, i) {
    const bytes = vbytes(f(w, 30, 2), f(w, 22, 2)), option = f(w, 13, 3);
    if (!bytes || !(option & 2)) return false;
    i.size = bytes; i.op = f(w, 22, 1); i.op2 = option; i.imm2 = f(w, 12, 1) ? Math.log2(bytes) : 0; i.imm3 = f(w, 12, 1);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.n = rS(i.rn); i.a = rZ(i.rm); i.exec = xferReg;
    return true;
  },
  fmt: i => {
    const x = i.op2 === 3 || i.op2 === 7 ? 1 : 0;
    const ext = i.op2 === 3 ? (i.imm3 ? `, lsl #${i.imm2}` : '') : `, ${EXTEND[i.op2]}${i.imm3 ? ` #${i.imm2}` : ''}`;
    return [i.op ? 'ldr' : 'str', `${sreg(i.rd, i.size)}, [${base(i.rn)}, ${gz(i.rm, x)}${ext}]`];
  },
};
const ldLiteral: Row = {
  name: 'SIMD&FP load register (literal)', mask: 0x3f000000, match: 0x1c000000, pcRel: true,
  decode(w, i) {
    const opc = f(w, 30, 2);
    if (opc === 3) return false;
    i.size = 4 << opc; i.rd = f(w, 0, 5); i.target = i.addr + sf(w, 5, 19) * 4; i.exec = xferLiteral;
    return true;
  },
  fmt: i => ['ldr', `${sreg(i.rd, i.size)}, ${target(i.target)}`],
};
const ldstPair: Row = {
  name: 'SIMD&FP load/store pair', mask: 0x3e000000, match: 0x2c000000,
  decode(w, i) {
    const opc = f(w, 30, 2), mode = f(w, 23, 2);
    if (opc === 3) return false;
    i.size = 4 << opc; i.op = f(w, 22, 1); i.op2 = mode === 1 ? 1 : mode === 3 ? 2 : 0; i.imm3 = mode === 0 ? 1 : 0;
    i.imm = sf(w, 15, 7) * i.size;
    i.rd = f(w, 0, 5); i.ra = f(w, 10, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.exec = xferPair;
    return true;
  },
  fmt: i => [(i.op ? 'ld' : 'st') + (i.imm3 ? 'np' : 'p'), `${sreg(i.rd, i.size)}, ${sreg(i.ra, i.size)}, ${fmtAddr(i)}`],
};
/** LD1/ST1 (multiple structures, 1-4 consecutive registers), no offset or post-index */
function ld1st1(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, i.op ? 'read' : 'write');
  const bytes = i.size; // 8 or 16 per register
  for (let k = 0; k < i.imm2; k++) {
    const t = (i.rd + k) % 32, a = b + k * bytes;
    if (i.op) ld(c, t, a, bytes); else st(c, t, a, bytes);
  }
  if (i.op2) c.setAddr(i.n, b + (i.a === 31 ? bytes * i.imm2 : Number(c.x64(i.a))));
}
const LD1_REGS: Record<number, number> = { 7: 1, 10: 2, 6: 3, 2: 4 };
const ldst1Multiple: Row = {
  name: 'AdvSIMD LD1/ST1 (multiple structures)', mask: 0xbf200000, match: 0x0c000000,
  decode(w, i) {
    const n = LD1_REGS[f(w, 12, 4)];
    if (!n) return false;
    const post = f(w, 23, 1);
    if (!post && f(w, 16, 5) !== 0) return false;
    i.size = f(w, 30, 1) ? 16 : 8; i.imm2 = n; i.op = f(w, 22, 1); i.op2 = post; i.op = f(w, 22, 1);
    i.imm3 = f(w, 10, 2); i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.rm = f(w, 16, 5); i.a = i.rm === 31 ? 31 : rZ(i.rm);
    i.exec = ld1st1;
    return true;
  },
  fmt: i => {
    const es = 1 << i.imm3, q = i.size === 16 ? 1 : 0;
    const regs = Array.from({ length: i.imm2 }, (_, k) => vname((i.rd + k) % 32, q, es)).join(', ');
    const post = i.op2 ? (i.rm === 31 ? `, #${i.size * i.imm2}` : `, ${gz(i.rm, 1)}`) : '';
    return [i.op ? 'ld1' : 'st1', `{ ${regs} }, [${base(i.rn)}]${post}`];
  },
};
/** LD1R: one element replicated to every lane */
function ld1r(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, 'read');
  const es = i.imm3, v = es === 8 ? Number(c.mem.read32(b) >>> 0) + (c.mem.read32(b + 4) >>> 0) * TWO32 : es === 4 ? c.mem.read32(b) >>> 0 : es === 2 ? c.mem.read16(b) : c.mem.read8(b);
  const lanes = (i.size / es);
  if (es === 8) { const big = (BigInt(c.mem.read32(b + 4) >>> 0) << 32n) | BigInt(c.mem.read32(b) >>> 0); for (let k = 0; k < lanes; k++) setLane64(c, i.rd, k, big); }
  else for (let k = 0; k < lanes; k++) setLane(c, i.rd, es, k, v);
  zeroFrom(c, i.rd, i.size);
  if (i.op2) c.setAddr(i.n, b + (i.a === 31 ? es : Number(c.x64(i.a))));
}
const ld1rRow: Row = {
  name: 'AdvSIMD LD1R', mask: 0xbf60e000, match: 0x0d40c000,
  decode(w, i) {
    const post = f(w, 23, 1);
    if (!post && f(w, 16, 5) !== 0) return false;
    if (f(w, 13, 1)) return false; // LD3R/LD4R
    i.size = f(w, 30, 1) ? 16 : 8; i.imm3 = 1 << f(w, 10, 2); i.op2 = post;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.rm = f(w, 16, 5); i.a = i.rm === 31 ? 31 : rZ(i.rm);
    i.exec = ld1r;
    return f(w, 21, 1) === 0; // LD2R
  },
  fmt: i => ['ld1r', `{ ${vname(i.rd, i.size === 16 ? 1 : 0, i.imm3)} }, [${base(i.rn)}]${i.op2 ? (i.rm === 31 ? `, #${i.imm3}` : `, ${gz(i.rm, 1)}`) : ''}`],
};

// ---------------------------------------------------------------- scalar floating point

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1), u64 = new Uint32Array(f64.buffer);
const toF32 = (b: number): number => { u32[0] = b; return f32[0]; };
const fromF32 = (v: number): number => { f32[0] = v; return u32[0] | 0; };
const toF64 = (b: bigint): number => { u64[0] = Number(b & 0xffffffffn); u64[1] = Number(b >> 32n); return f64[0]; };
const fromF64 = (v: number): bigint => { f64[0] = v; return (BigInt(u64[1]) << 32n) | BigInt(u64[0]); };

const isNaNb = (b: bigint, d: boolean): boolean => d ? (b & 0x7ff0000000000000n) === 0x7ff0000000000000n && (b & 0xfffffffffffffn) !== 0n
  : (b & 0x7f800000n) === 0x7f800000n && (b & 0x7fffffn) !== 0n;
const isSNaNb = (b: bigint, d: boolean): boolean => isNaNb(b, d) && (b & (d ? 0x8000000000000n : 0x400000n)) === 0n;
const quiet = (b: bigint, d: boolean): bigint => b | (d ? 0x8000000000000n : 0x400000n);
const defaultNaN = (d: boolean): bigint => (d ? 0x7ff8000000000000n : 0x7fc00000n);
const toNum = (b: bigint, d: boolean): number => (d ? toF64(b) : toF32(Number(b)));
const fromNum = (v: number, d: boolean): bigint => (d ? fromF64(v) : BigInt(fromF32(Math.fround(v)) >>> 0));

/** FPProcessNaNs: the NaN result of an operation with NaN operands, or undefined */
function processNaNs(c: A64Cpu, d: boolean, ...ops: bigint[]): bigint | undefined {
  let pick: bigint | undefined;
  for (const o of ops) if (isSNaNb(o, d)) { pick = o; break; }
  if (pick === undefined) for (const o of ops) if (isNaNb(o, d)) { pick = o; break; }
  if (pick === undefined) return undefined;
  if (ops.some(o => isSNaNb(o, d))) c.fpsr |= IOC;
  return c.fpcr & (1 << 25) ? defaultNaN(d) : quiet(pick, d);
}
function invalid(c: A64Cpu, d: boolean): bigint { c.fpsr |= IOC; return defaultNaN(d); }

function fpread(c: A64Cpu, r: number, d: boolean): bigint { return d ? vget64(c, r) : BigInt(c.vw[r * 4] >>> 0); }
function fpwrite(c: A64Cpu, r: number, v: bigint, d: boolean): void {
  if (d) vset64(c, r, v); else { c.vw[r * 4] = Number(v) | 0; c.vw[r * 4 + 1] = 0; }
  c.vw[r * 4 + 2] = 0; c.vw[r * 4 + 3] = 0;
}

const FMUL = 0, FDIV = 1, FADD = 2, FSUB = 3, FMAX = 4, FMIN = 5, FMAXNM = 6, FMINNM = 7, FNMUL = 8;
function farith(c: A64Cpu, op: number, a: bigint, b: bigint, d: boolean): bigint {
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
function zeroSign(c: A64Cpu, r: number, x: number, y: number): number {
  if (r !== 0) return r;
  if (Object.is(x, -0) && Object.is(y, -0)) return -0;
  if (x === 0 && y === 0 && !Object.is(x, -0) && !Object.is(y, -0)) return 0;
  return ((c.fpcr >> 22) & 3) === 2 ? -0 : 0;
}
const F2_OPS: Record<number, [number, string]> = { 0: [FMUL, 'fmul'], 1: [FDIV, 'fdiv'], 2: [FADD, 'fadd'], 3: [FSUB, 'fsub'], 4: [FMAX, 'fmax'], 5: [FMIN, 'fmin'], 6: [FMAXNM, 'fmaxnm'], 7: [FMINNM, 'fminnm'], 8: [FNMUL, 'fnmul'] };
const fp2: Row = {
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
function fmaExec(c: A64Cpu, i: A64Insn): void {
  const d = i.size === 8;
  // fmsub / fnmadd negate the first factor, fnmadd / fnmsub the addend, before anything (a NaN's sign too)
  const sign = d ? 0x8000000000000000n : 0x80000000n;
  const a = fpread(c, i.ra, d) ^ (i.op & 2 ? sign : 0n), n = fpread(c, i.rn, d) ^ (i.op & 1 ? sign : 0n), m = fpread(c, i.rm, d);
  const nan = processNaNs(c, d, a, n, m);
  if (nan !== undefined) { fpwrite(c, i.rd, nan, d); return; }
  fpwrite(c, i.rd, fused(c, d, a, n, m), d);
}
/** FPCR.RMode (0 nearest, 1 plus infinity, 2 minus infinity, 3 zero) as softfloat names it */
const FPCR_RM: readonly RoundingMode[] = ['rne', 'rup', 'rdn', 'rtz'];
const rmOf = (c: A64Cpu): RoundingMode => FPCR_RM[(c.fpcr >> 22) & 3];
/** n * m + a rounded once (no NaN operand: the caller processed them), IOC on an invalid operation */
function fused(c: A64Cpu, d: boolean, a: bigint, n: bigint, m: bigint): bigint {
  const r = ffma(d ? 64 : 32, n, m, a, rmOf(c));
  if (r.flags & FLAG_NV) c.fpsr |= IOC;
  return r.bits;
}
const fp3: Row = {
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
function fp1Exec(c: A64Cpu, i: A64Insn): void {
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
function roundInt(x: number, mode: number): number {
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
const FP1_NAMES: Record<number, string> = { 0: 'fmov', 1: 'fabs', 2: 'fneg', 3: 'fsqrt', 4: 'fcvt', 5: 'fcvt', 8: 'frintn', 9: 'frintp', 10: 'frintm', 11: 'frintz', 12: 'frinta', 14: 'frintx', 15: 'frinti' };
const fp1: Row = {
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
function fcmpExec(c: A64Cpu, i: A64Insn): void {
  const d = i.size === 8, a = fpread(c, i.rn, d), b = i.imm2 ? 0n : fpread(c, i.rm, d);
  if (isNaNb(a, d) || isNaNb(b, d)) {
    if (i.op || isSNaNb(a, d) || isSNaNb(b, d)) c.fpsr |= IOC;
    c.setNzcv(0b0011);
    return;
  }
  const x = toNum(a, d), y = toNum(b, d);
  c.setNzcv(x === y ? 0b0110 : x < y ? 0b1000 : 0b0010);
}
const fcmpRow: Row = {
  name: 'FP compare', mask: 0xff20fc07, match: 0x1e202000,
  decode(w, i) {
    const t = f(w, 22, 2);
    if (t > 1) return false;
    i.size = t ? 8 : 4; i.op = f(w, 4, 1); i.imm2 = f(w, 3, 1); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.exec = fcmpExec;
    return true;
  },
  fmt: i => [i.op ? 'fcmpe' : 'fcmp', `${sreg(i.rn, i.size)}, ${i.imm2 ? '#0.0' : sreg(i.rm, i.size)}`],
};
const fccmpRow: Row = {
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
const fcselRow: Row = {
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
function fpImm(imm8: number, d: boolean): bigint {
  const sign = BigInt(imm8 >> 7), b6 = (imm8 >> 6) & 1, frac = BigInt(imm8 & 0x3f);
  if (d) {
    const exp = BigInt((b6 ? 0 : 0x400) | (b6 ? 0x3fc : 0) | ((imm8 >> 4) & 3));
    return (sign << 63n) | (exp << 52n) | ((frac & 0xfn) << 48n);
  }
  const exp = BigInt((b6 ? 0 : 0x80) | (b6 ? 0x7c : 0) | ((imm8 >> 4) & 3));
  return (sign << 31n) | (exp << 23n) | ((frac & 0xfn) << 19n);
}
const fmovImm: Row = {
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
function fmtFloat(v: number): string {
  const s = v.toExponential(8).replace(/\.?0+e/, 'e');
  const [m, e] = s.split('e');
  return `${Number(m).toFixed(8)}e${e.startsWith('-') ? '-' : '+'}${e.replace(/^[-+]/, '').padStart(2, '0')}`;
}

/** FP <-> integer conversions and moves: sf, type, rmode, opcode */
function convExec(c: A64Cpu, i: A64Insn): void {
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
const CONV_NAMES: Record<string, string> = {
  '0:0': 'fcvtns', '0:1': 'fcvtnu', '0:2': 'scvtf', '0:3': 'ucvtf', '0:4': 'fcvtas', '0:5': 'fcvtau', '0:6': 'fmov', '0:7': 'fmov',
  '1:0': 'fcvtps', '1:1': 'fcvtpu', '1:6': 'fmov', '1:7': 'fmov', '2:0': 'fcvtms', '2:1': 'fcvtmu', '3:0': 'fcvtzs', '3:1': 'fcvtzu',
};
const convRow: Row = {
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

// ---------------------------------------------------------------- AdvSIMD

/** AdvSIMDExpandImm */
function simdImm(op: number, cmode: number, imm8: number): bigint {
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
function movImmExec(c: A64Cpu, i: A64Insn): void {
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
const simdModImm: Row = {
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
function map2(c: A64Cpu, i: A64Insn, fn: (a: number, b: number, es: number) => number): void {
  const es = i.imm3, n = i.size / es;
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push(fn(lane(c, i.rn, es, k), lane(c, i.rm, es, k), es));
  for (let k = 0; k < n; k++) setLane(c, i.rd, es, k, out[k]);
  zeroFrom(c, i.rd, i.size);
}
function map2big(c: A64Cpu, i: A64Insn, fn: (a: bigint, b: bigint) => bigint): void {
  const n = i.size / 8, out: bigint[] = [];
  for (let k = 0; k < n; k++) out.push(fn(lane64(c, i.rn, k), lane64(c, i.rm, k)));
  for (let k = 0; k < n; k++) setLane64(c, i.rd, k, out[k]);
  zeroFrom(c, i.rd, i.size);
}
const smask = (es: number): number => (es === 4 ? 0xffffffff : (1 << (8 * es)) - 1);
const signed = (v: number, es: number): number => (es === 4 ? v | 0 : (v << (32 - 8 * es)) >> (32 - 8 * es));
const ALL = (es: number): number => (es === 4 ? 0xffffffff : smask(es));

/** three-same: U:opcode -> executor (size-dependent ones look at es) */
const THREE_SAME: Record<string, [string, (c: A64Cpu, i: A64Insn) => void]> = {
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
function mulAcc(c: A64Cpu, i: A64Insn, sign: number): void {
  const es = i.imm3, n = i.size / es;
  for (let k = 0; k < n; k++) {
    const p = es === 4 ? Math.imul(lane(c, i.rn, es, k), lane(c, i.rm, es, k)) : lane(c, i.rn, es, k) * lane(c, i.rm, es, k);
    const r = es === 4 ? (lane(c, i.rd, es, k) + sign * p) | 0 : (lane(c, i.rd, es, k) + sign * p) & smask(es);
    setLane(c, i.rd, es, k, r);
  }
  zeroFrom(c, i.rd, i.size);
}
/** pairwise: the concatenation rn:rm, adjacent pairs */
function pairwise(fn: (a: number, b: number, es: number) => number): (c: A64Cpu, i: A64Insn) => void {
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
function logicExec(c: A64Cpu, i: A64Insn): void {
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
const LOGIC = ['and', 'bic', 'orr', 'orn', 'eor', 'bsl', 'bit', 'bif'];
const threeSame: Row = {
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
function misc(c: A64Cpu, i: A64Insn): void {
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
const MISC_NAMES: Record<string, string> = {
  '0:5': 'cnt', '1:5': 'not', '0:0': 'rev64', '1:0': 'rev32', '0:1': 'rev16', '0:9': 'cmeq', '1:9': 'cmle', '0:10': 'cmlt', '0:8': 'cmgt',
  '1:8': 'cmge', '0:11': 'abs', '1:11': 'neg', '0:18': 'xtn',
};
const twoMisc: Row = {
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
function acrossExec(c: A64Cpu, i: A64Insn): void {
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
const ACROSS: Record<string, string> = { '0:27': 'addv', '1:3': 'uaddlv', '1:10': 'umaxv', '1:26': 'uminv', '0:10': 'smaxv', '0:26': 'sminv' };
const acrossRow: Row = {
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
function copyExec(c: A64Cpu, i: A64Insn): void {
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
const copyRow: Row = {
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
const extRow: Row = {
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
function shiftImmExec(c: A64Cpu, i: A64Insn): void {
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
const shiftImmRow: Row = {
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
function threeDiffExec(c: A64Cpu, i: A64Insn): void {
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
const threeDiff: Row = {
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
const PERM = { 1: 'uzp1', 5: 'uzp2', 3: 'zip1', 7: 'zip2', 2: 'trn1', 6: 'trn2' } as Record<number, string>;
const permRow: Row = {
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
const tblRow: Row = {
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

// ---------------------------------------------------------------- AdvSIMD floating point (vector)

/** an FP lane (4 or 8 bytes) as bits */
const fLane = (c: A64Cpu, r: number, d: boolean, k: number): bigint => (d ? lane64(c, r, k) : BigInt(lane(c, r, 4, k)));
const setFLane = (c: A64Cpu, r: number, d: boolean, k: number, v: bigint): void => { if (d) setLane64(c, r, k, v); else setLane(c, r, 4, k, Number(v)); };

/** fcmeq / fcmge / fcmgt on bits: all-ones when true */
function fcmpVec(c: A64Cpu, kind: number, a: bigint, b: bigint, d: boolean): bigint {
  const ones = d ? 0xffffffffffffffffn : 0xffffffffn;
  if (isNaNb(a, d) || isNaNb(b, d)) { if (kind !== 0 || isSNaNb(a, d) || isSNaNb(b, d)) c.fpsr |= IOC; return 0n; }
  const x = toNum(a, d), y = toNum(b, d);
  return (kind === 0 ? x === y : kind === 1 ? x >= y : x > y) ? ones : 0n;
}
/** three-same FP: key U:a:opcode -> name and lane op (a, b, acc) */
const FP3: Record<string, [string, (c: A64Cpu, a: bigint, b: bigint, acc: bigint, d: boolean) => bigint]> = {
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
function fusedLane(c: A64Cpu, acc: bigint, a: bigint, b: bigint, d: boolean, neg: boolean): bigint {
  if (neg) a ^= d ? 0x8000000000000000n : 0x80000000n;
  return processNaNs(c, d, acc, a, b) ?? fused(c, d, acc, a, b);
}
/** three-same FP ops with a plain-number fast path: key opcode | a << 5 | U << 6 -> 0 add, 1 sub, 2 mul, 3 div */
const FAST_FP3: Record<number, number> = { 26: 0, [26 | 32]: 1, [27 | 64]: 2, [31 | 64]: 3 };
const FAST_TMP = new Float64Array(4);
const fpThreeSame: Row = {
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
const FP_MISC: Record<string, string> = {
  '0:0:29': 'scvtf', '1:0:29': 'ucvtf', '0:1:27': 'fcvtzs', '1:1:27': 'fcvtzu', '1:1:15': 'fneg', '0:1:15': 'fabs', '1:1:31': 'fsqrt',
  '0:0:23': 'fcvtl', '0:0:22': 'fcvtn', '0:0:24': 'frintn', '0:1:24': 'frintp', '0:0:25': 'frintm', '0:1:25': 'frintz', '1:0:24': 'frinta',
  '0:1:12': 'fcmgt', '1:1:12': 'fcmge', '0:1:13': 'fcmeq', '1:1:13': 'fcmle', '0:1:14': 'fcmlt',
};
function fpMiscExec(c: A64Cpu, i: A64Insn): void {
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

/** AdvSIMD scalar shift by immediate (64-bit): shl / ushr / sshr Dd, Dn, #n */
const scalarShiftImm: Row = {
  name: 'AdvSIMD scalar shift by immediate', mask: 0xdf800400, match: 0x5f000400,
  decode(w, i) {
    const u = f(w, 29, 1), immh = f(w, 19, 4), immb = f(w, 16, 3), opc = f(w, 11, 5);
    if (!(immh & 8)) return false;
    const raw = (immh << 3) | immb;
    i.size = 8; i.imm3 = 8; i.op2 = u; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    if (opc === 10 && !u) { i.op = 10; i.imm = raw - 64; }
    else if (opc === 0) { i.op = 0; i.imm = 128 - raw; }
    else return false;
    i.exec = shiftImmExec;
    return true;
  },
  fmt: i => [i.op === 10 ? 'shl' : i.op2 ? 'ushr' : 'sshr', `d${i.rd}, d${i.rn}, #${i.imm}`],
};

/** AdvSIMD scalar copy: dup (mov) Vd, Vn.T[i] into a scalar register */
const scalarCopy: Row = {
  name: 'AdvSIMD scalar copy', mask: 0xffe0fc00, match: 0x5e000400,
  decode(w, i) {
    const imm5 = f(w, 16, 5);
    const sz = imm5 & 1 ? 0 : imm5 & 2 ? 1 : imm5 & 4 ? 2 : imm5 & 8 ? 3 : -1;
    if (sz < 0) return false;
    i.imm3 = 1 << sz; i.imm2 = imm5 >> (sz + 1); i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.exec = (c, x) => {
      const v = x.imm3 === 8 ? lane64(c, x.rn, x.imm2) : BigInt(lane(c, x.rn, x.imm3, x.imm2));
      c.vb.fill(0, x.rd * 16, x.rd * 16 + 16);
      if (x.imm3 === 8) setLane64(c, x.rd, 0, v); else setLane(c, x.rd, x.imm3, 0, Number(v));
    };
    return true;
  },
  fmt: i => ['mov', `${SCALAR[Math.log2(i.imm3)]}${i.rd}, v${i.rn}.${['b', 'h', 's', 'd'][Math.log2(i.imm3)]}[${i.imm2}]`],
};

/** AdvSIMD scalar pairwise: addp Dd, Vn.2d; faddp Sd/Dd, Vn.2s/2d */
const scalarPairwise: Row = {
  name: 'AdvSIMD scalar pairwise', mask: 0xdf3e0c00, match: 0x5e300800,
  decode(w, i) {
    const u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 5);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    if (!u && size === 3 && opc === 27) {
      i.op = 0; i.exec = (c, x) => { const v = lane64(c, x.rn, 0) + lane64(c, x.rn, 1); c.vb.fill(0, x.rd * 16, x.rd * 16 + 16); setLane64(c, x.rd, 0, v); };
      return true;
    }
    if (u && size < 2 && opc === 13) {
      i.op = 1; i.imm3 = size ? 8 : 4;
      i.exec = (c, x) => {
        const d = x.imm3 === 8;
        const v = farith(c, FADD, fLane(c, x.rn, d, 0), fLane(c, x.rn, d, 1), d);
        fpwrite(c, x.rd, v, d);
      };
      return true;
    }
    return false;
  },
  fmt: i => (i.op === 0 ? ['addp', `d${i.rd}, v${i.rn}.2d`] : ['faddp', `${i.imm3 === 8 ? 'd' : 's'}${i.rd}, v${i.rn}.${i.imm3 === 8 ? '2d' : '2s'}`]),
};

/** AdvSIMD scalar two-register misc (FP): fcvtzs fcvtzu scvtf ucvtf fneg fabs ... on one S/D element */
const scalarMiscFp: Row = {
  name: 'AdvSIMD scalar two-register misc (FP)', mask: 0xdf3e0c00, match: 0x5e200800,
  decode(w, i) {
    const u = f(w, 29, 1), size = f(w, 22, 2), opc = f(w, 12, 5);
    const name = opc >= 12 ? FP_MISC[`${u}:${size >> 1}:${opc}`] : undefined;
    if (!name || name === 'fcvtl' || name === 'fcvtn') return false;
    i.imm3 = size & 1 ? 8 : 4; i.size = i.imm3; i.op = opc; i.op2 = u; i.imm2 = size >> 1; i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.exec = fpMiscExec;
    return true;
  },
  fmt: i => {
    const name = FP_MISC[`${i.op2}:${i.imm2}:${i.op}`], r = i.imm3 === 8 ? 'd' : 's';
    return [name, `${r}${i.rd}, ${r}${i.rn}${/^fcm/.test(name) ? ', #0.0' : ''}`];
  },
};

/** the SIMD&FP rows; before the integer load/store rows, whose masks do not look at the V bit */
export const FPSIMD_ROWS: readonly Row[] = [
  ldstUnsigned, ldstImm9, ldstRegOff, ldLiteral, ldstPair, ldst1Multiple, ld1rRow,
  fmovImm, fp1, fcmpRow, fp2, fccmpRow, fcselRow, fp3, convRow,
  simdModImm, shiftImmRow, scalarShiftImm, scalarCopy, scalarPairwise, scalarMiscFp, copyRow, tblRow, permRow, extRow, acrossRow, twoMisc, threeDiff, fpThreeSame, threeSame,
];
