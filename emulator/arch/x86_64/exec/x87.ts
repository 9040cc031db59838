/**
 * The x87 unit as C libraries use it for `long double` (musl's printf of
 * floating point, strtold, fmodl): the register stack of eight 80-bit
 * extended values, loads and stores of 32/64/80-bit reals and 16/32/64-bit
 * integers, add / sub / mul / div (and their reversed and popping forms),
 * fprem, fchs, fabs, fld1 / fldz, fxch, compares into EFLAGS (fcomi,
 * fucomi and the popping forms) and into the status word, frndint.
 *
 * Values are exact: a finite value is m * 2^e with a BigInt m, rounded to
 * the 64-bit significand of the extended format after each operation
 * (nearest-even, or the control word's rounding mode), stores round to
 * 24 / 53 bits or to an integer the same way. The precision-control field
 * is ignored (extended precision, as Linux sets it); exceptions are
 * masked: invalid operations give the indefinite NaN (0xffff c000...) and
 * set IE in the status word, stack underflow reads the indefinite.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { CF, PF, ZF } from '../flags';

/** an extended value: finite (m * 2^e, m >= 0 BigInt), or inf / nan */
export interface Ext { neg: boolean; kind: 'fin' | 'inf' | 'nan'; m: bigint; e: number; payload?: bigint }

const ZERO: Ext = { neg: false, kind: 'fin', m: 0n, e: 0 };
const INDEFINITE: Ext = { neg: true, kind: 'nan', m: 0n, e: 0, payload: 0xc000000000000000n };
const IE = 0x1, ZE = 0x4, C1 = 0x200, C0 = 0x100, C2 = 0x400, C3 = 0x4000;

/** the unit's state, kept on the CPU */
export interface X87State { st: Ext[]; top: number; empty: number }
export function newX87(): X87State { return { st: Array.from({ length: 8 }, () => ZERO), top: 0, empty: 0xff }; }

function state(cpu: X86Cpu): X87State { return cpu.x87; }
function get(cpu: X86Cpu, i: number): Ext {
  const s = state(cpu), r = (s.top + i) & 7;
  if (s.empty & (1 << r)) { cpu.fpuSw |= IE | 0x40; return INDEFINITE; } // stack underflow
  return s.st[r];
}
function set(cpu: X86Cpu, i: number, v: Ext): void {
  const s = state(cpu), r = (s.top + i) & 7;
  s.st[r] = v; s.empty &= ~(1 << r);
}
function push(cpu: X86Cpu, v: Ext): void {
  const s = state(cpu);
  s.top = (s.top - 1) & 7;
  if (!(s.empty & (1 << s.top))) cpu.fpuSw |= IE | 0x40 | C1; // overflow
  s.st[s.top] = v; s.empty &= ~(1 << s.top);
  syncTop(cpu);
}
function pop(cpu: X86Cpu): void {
  const s = state(cpu);
  s.empty |= 1 << s.top;
  s.top = (s.top + 1) & 7;
  syncTop(cpu);
}
function syncTop(cpu: X86Cpu): void { cpu.fpuSw = (cpu.fpuSw & ~0x3800) | (state(cpu).top << 11); }
const stIndex = (i: Insn): number => i.bytes[i.layout.modrmOff] & 7;

// ---------------------------------------------------------------- rounding

const bitlen = (v: bigint): number => v.toString(2).length;
/** round |S| * 2^e to `bits` significant bits (least exponent minExp), by the rounding control (0 nearest, 1 down, 2 up, 3 zero) */
function roundTo(neg: boolean, S: bigint, e: number, bits: number, minExp: number, rc: number): { m: bigint; e: number; inexact: boolean } {
  if (S === 0n) return { m: 0n, e: 0, inexact: false };
  const n = bitlen(S);
  const lsb = Math.max(e + n - bits, minExp);
  if (lsb <= e) return { m: S, e, inexact: false };
  const sh = BigInt(lsb - e), rest = S & ((1n << sh) - 1n), half = 1n << (sh - 1n);
  let m = S >> sh;
  if (rest !== 0n) {
    const up = rc === 0 ? (rest > half || (rest === half && (m & 1n) === 1n)) : rc === 1 ? neg : rc === 2 ? !neg : false;
    if (up) m += 1n;
  }
  return { m, e: lsb, inexact: rest !== 0n };
}
const rcOf = (cpu: X86Cpu): number => (cpu.fpuCw >> 10) & 3;
/** round an exact value to the extended format (64-bit significand) */
function toExt(cpu: X86Cpu, neg: boolean, S: bigint, e: number): Ext {
  if (S === 0n) return { neg, kind: 'fin', m: 0n, e: 0 };
  const r = roundTo(neg, S, e, 64, -16445, rcOf(cpu));
  if (r.e + bitlen(r.m) - 1 > 16383) return { neg, kind: 'inf', m: 0n, e: 0 };
  return { neg, kind: 'fin', m: r.m, e: r.e };
}

// ---------------------------------------------------------------- formats

const f32b = new Uint32Array(1);

function fromBinary(bits: bigint, fracBits: number, expBits: number): Ext {
  const neg = (bits >> BigInt(fracBits + expBits)) & 1n ? true : false;
  const exp = Number((bits >> BigInt(fracBits)) & ((1n << BigInt(expBits)) - 1n));
  const frac = bits & ((1n << BigInt(fracBits)) - 1n);
  const bias = (1 << (expBits - 1)) - 1, maxExp = (1 << expBits) - 1;
  if (exp === maxExp) {
    if (frac === 0n) return { neg, kind: 'inf', m: 0n, e: 0 };
    return { neg, kind: 'nan', m: 0n, e: 0, payload: (1n << 63n) | (frac << BigInt(63 - fracBits)) | (1n << 62n) };
  }
  if (exp === 0) return { neg, kind: 'fin', m: frac, e: 1 - bias - fracBits };
  return { neg, kind: 'fin', m: frac | (1n << BigInt(fracBits)), e: exp - bias - fracBits };
}
function toBinary(cpu: X86Cpu, v: Ext, fracBits: number, expBits: number): bigint {
  const signBit = (v.neg ? 1n : 0n) << BigInt(fracBits + expBits);
  const maxExp = (1 << expBits) - 1, bias = (1 << (expBits - 1)) - 1;
  if (v.kind === 'nan') return signBit | (BigInt(maxExp) << BigInt(fracBits)) | ((v.payload ?? 0xc000000000000000n) >> BigInt(63 - fracBits) & ((1n << BigInt(fracBits)) - 1n)) | (1n << BigInt(fracBits - 1));
  if (v.kind === 'inf') return signBit | (BigInt(maxExp) << BigInt(fracBits));
  if (v.m === 0n) return signBit;
  const r = roundTo(v.neg, v.m, v.e, fracBits + 1, 1 - bias - fracBits, rcOf(cpu));
  if (r.m === 0n) return signBit;
  const top = r.e + bitlen(r.m) - 1; // exponent of the leading bit
  if (top > bias) {
    const rc = rcOf(cpu);
    const toInf = rc === 0 || (rc === 1 && v.neg) || (rc === 2 && !v.neg);
    return toInf ? signBit | (BigInt(maxExp) << BigInt(fracBits)) : signBit | (BigInt(maxExp - 1) << BigInt(fracBits)) | ((1n << BigInt(fracBits)) - 1n);
  }
  if (bitlen(r.m) <= fracBits) return signBit | r.m; // subnormal
  return signBit | (BigInt(top + bias) << BigInt(fracBits)) | (r.m & ((1n << BigInt(fracBits)) - 1n));
}
function load80(cpu: X86Cpu, a: number): Ext {
  const lo = BigInt(cpu.mem.read32(a) >>> 0) | (BigInt(cpu.mem.read32(a + 4) >>> 0) << 32n);
  const se = cpu.mem.read16(a + 8);
  const neg = (se & 0x8000) !== 0, exp = se & 0x7fff;
  if (exp === 0x7fff) {
    if ((lo & 0x7fffffffffffffffn) === 0n) return { neg, kind: 'inf', m: 0n, e: 0 };
    return { neg, kind: 'nan', m: 0n, e: 0, payload: lo | (1n << 63n) };
  }
  return { neg, kind: 'fin', m: lo, e: (exp === 0 ? 1 : exp) - 16383 - 63 };
}
function store80(cpu: X86Cpu, a: number, v: Ext): void {
  let lo = 0n, se = v.neg ? 0x8000 : 0;
  if (v.kind === 'nan') { lo = v.payload ?? 0xc000000000000000n; se |= 0x7fff; }
  else if (v.kind === 'inf') { lo = 1n << 63n; se |= 0x7fff; }
  else if (v.m !== 0n) {
    const n = bitlen(v.m);
    let exp = v.e + n - 1 + 16383;
    let m = v.m;
    if (exp >= 1) m = n > 64 ? m >> BigInt(n - 64) : m << BigInt(64 - n);
    else { m = v.e + 16382 + 63 >= 0 ? m << BigInt(v.e + 16382 + 63) : m >> BigInt(-(v.e + 16382 + 63)); exp = 0; }
    lo = m & 0xffffffffffffffffn;
    se |= exp;
  }
  cpu.mem.write16(a + 8, se);
  cpu.mem.write32(a + 4, Number(lo >> 32n) | 0);
  cpu.mem.write32(a, Number(lo & 0xffffffffn) | 0);
}

// ---------------------------------------------------------------- arithmetic

const isSNaN = (v: Ext): boolean => v.kind === 'nan' && ((v.payload ?? 0n) & (1n << 62n)) === 0n;
/** the NaN result of an operation with a NaN operand (the larger payload when both, quieted) */
function nanOf(cpu: X86Cpu, a: Ext, b: Ext): Ext {
  if (isSNaN(a) || isSNaN(b)) cpu.fpuSw |= IE;
  const q = (v: Ext): Ext => ({ ...v, payload: (v.payload ?? 0n) | (1n << 62n) });
  if (a.kind === 'nan' && b.kind === 'nan') return (a.payload ?? 0n) >= (b.payload ?? 0n) ? q(a) : q(b);
  return a.kind === 'nan' ? q(a) : q(b);
}
function invalid(cpu: X86Cpu): Ext { cpu.fpuSw |= IE; return INDEFINITE; }

function addExt(cpu: X86Cpu, a: Ext, b: Ext, sub: boolean): Ext {
  const bn = sub ? !b.neg : b.neg;
  if (a.kind === 'nan' || b.kind === 'nan') return nanOf(cpu, a, b);
  if (a.kind === 'inf' || b.kind === 'inf') {
    if (a.kind === 'inf' && b.kind === 'inf' && a.neg !== bn) return invalid(cpu);
    return a.kind === 'inf' ? a : { ...b, neg: bn };
  }
  const e = Math.min(a.e, b.e);
  const A = (a.neg ? -a.m : a.m) << BigInt(a.e - e), B = (bn ? -b.m : b.m) << BigInt(b.e - e);
  const S = A + B;
  if (S === 0n) {
    const neg = a.m === 0n && b.m === 0n && a.neg && bn ? true : rcOf(cpu) === 1 && !(a.m === 0n && b.m === 0n && !a.neg && !bn);
    return { neg, kind: 'fin', m: 0n, e: 0 };
  }
  return toExt(cpu, S < 0n, S < 0n ? -S : S, e);
}
function mulExt(cpu: X86Cpu, a: Ext, b: Ext): Ext {
  const neg = a.neg !== b.neg;
  if (a.kind === 'nan' || b.kind === 'nan') return nanOf(cpu, a, b);
  if (a.kind === 'inf' || b.kind === 'inf') {
    if ((a.kind === 'fin' && a.m === 0n) || (b.kind === 'fin' && b.m === 0n)) return invalid(cpu);
    return { neg, kind: 'inf', m: 0n, e: 0 };
  }
  return toExt(cpu, neg, a.m * b.m, a.e + b.e);
}
function divExt(cpu: X86Cpu, a: Ext, b: Ext): Ext {
  const neg = a.neg !== b.neg;
  if (a.kind === 'nan' || b.kind === 'nan') return nanOf(cpu, a, b);
  if (a.kind === 'inf') return b.kind === 'inf' ? invalid(cpu) : { neg, kind: 'inf', m: 0n, e: 0 };
  if (b.kind === 'inf') return { neg, kind: 'fin', m: 0n, e: 0 };
  if (b.m === 0n) {
    if (a.m === 0n) return invalid(cpu);
    cpu.fpuSw |= ZE;
    return { neg, kind: 'inf', m: 0n, e: 0 };
  }
  if (a.m === 0n) return { neg, kind: 'fin', m: 0n, e: 0 };
  // enough quotient bits for the rounding, the remainder as a sticky bit
  const shift = 130 + Math.max(0, bitlen(b.m) - bitlen(a.m));
  const num = a.m << BigInt(shift);
  let q = num / b.m;
  const r = num % b.m;
  q = (q << 1n) | (r !== 0n ? 1n : 0n);
  return toExt(cpu, neg, q, a.e - b.e - shift - 1);
}
/** fprem: the remainder of st0 / st1 with the quotient truncated (computed whole: C2 clear) */
function premExt(cpu: X86Cpu, a: Ext, b: Ext): Ext {
  if (a.kind === 'nan' || b.kind === 'nan') return nanOf(cpu, a, b);
  if (a.kind === 'inf' || (b.kind === 'fin' && b.m === 0n)) return invalid(cpu);
  if (b.kind === 'inf' || a.m === 0n) return a;
  const e = Math.min(a.e, b.e);
  const A = a.m << BigInt(a.e - e), B = b.m << BigInt(b.e - e);
  const q = A / B, r = A % B;
  cpu.fpuSw = (cpu.fpuSw & ~(C0 | C1 | C2 | C3)) | ((q & 1n) ? C1 : 0) | ((q & 2n) ? C3 : 0) | ((q & 4n) ? C0 : 0);
  return r === 0n ? { neg: a.neg, kind: 'fin', m: 0n, e: 0 } : toExt(cpu, a.neg, r, e);
}
/** compare: -1, 0, 1, or undefined (unordered) */
function cmpExt(a: Ext, b: Ext): number | undefined {
  if (a.kind === 'nan' || b.kind === 'nan') return undefined;
  const val = (v: Ext): [number, bigint, number] => (v.kind === 'inf' ? [v.neg ? -2 : 2, 0n, 0] : v.m === 0n ? [0, 0n, 0] : [v.neg ? -1 : 1, v.m, v.e]);
  const [sa, ma, ea] = val(a), [sb, mb, eb] = val(b);
  if (sa !== sb || Math.abs(sa) === 2 || sa === 0) return Math.sign(sa - sb);
  const e = Math.min(ea, eb);
  const A = ma << BigInt(ea - e), B = mb << BigInt(eb - e);
  const c = A === B ? 0 : A > B ? 1 : -1;
  return sa < 0 ? -c : c;
}
function toInt(cpu: X86Cpu, v: Ext, bits: number): bigint {
  const min = -(1n << BigInt(bits - 1)), max = (1n << BigInt(bits - 1)) - 1n;
  if (v.kind !== 'fin') { cpu.fpuSw |= IE; return min; }
  if (v.m === 0n) return 0n;
  let q: bigint;
  if (v.e >= 0) q = v.m << BigInt(v.e);
  else {
    const sh = BigInt(-v.e), rest = v.m & ((1n << sh) - 1n), half = sh > 0n ? 1n << (sh - 1n) : 0n;
    q = v.m >> sh;
    if (rest !== 0n) {
      const rc = rcOf(cpu);
      const up = rc === 0 ? (rest > half || (rest === half && (q & 1n) === 1n)) : rc === 1 ? v.neg : rc === 2 ? !v.neg : false;
      if (up) q += 1n;
    }
  }
  const s = v.neg ? -q : q;
  if (s < min || s > max) { cpu.fpuSw |= IE; return min; }
  return s;
}
const fromInt = (v: bigint): Ext => ({ neg: v < 0n, kind: 'fin', m: v < 0n ? -v : v, e: 0 });

// ---------------------------------------------------------------- executors

function memOperand(cpu: X86Cpu, i: Insn, kind: number): Ext {
  const a = cpu.ea(i);
  switch (kind) {
    case 4: { f32b[0] = cpu.mem.read32(a) >>> 0; return fromBinary(BigInt(f32b[0]), 23, 8); }
    case 8: return fromBinary(BigInt(cpu.mem.read32(a) >>> 0) | (BigInt(cpu.mem.read32(a + 4) >>> 0) << 32n), 52, 11);
    case 2: return fromInt(BigInt((cpu.mem.read16(a) << 16) >> 16));
    case -4: return fromInt(BigInt(cpu.mem.read32(a) | 0));
    case -8: return fromInt(BigInt.asIntN(64, BigInt(cpu.mem.read32(a) >>> 0) | (BigInt(cpu.mem.read32(a + 4) >>> 0) << 32n)));
    default: return load80(cpu, a);
  }
}
/** the eight arithmetic ops of D8/DC (reg field): add mul com comp sub subr div divr */
function arith(cpu: X86Cpu, op: number, a: Ext, b: Ext): Ext | undefined {
  switch (op) {
    case 0: return addExt(cpu, a, b, false);
    case 1: return mulExt(cpu, a, b);
    case 4: return addExt(cpu, a, b, true);
    case 5: return addExt(cpu, b, a, true);
    case 6: return divExt(cpu, a, b);
    case 7: return divExt(cpu, b, a);
    default: {
      const c = cmpExt(a, b);
      if (c === undefined) cpu.fpuSw |= IE;
      cpu.fpuSw = (cpu.fpuSw & ~(C0 | C2 | C3)) | (c === undefined ? C0 | C2 | C3 : c < 0 ? C0 : c === 0 ? C3 : 0);
      return undefined;
    }
  }
}
/** D8/DC/DA/DE memory forms: st0 op mem (sub: operand kind 4, 8, -4, 2) */
export function arithMem(cpu: X86Cpu, i: Insn): void {
  const op = (i.bytes[i.layout.modrmOff] >> 3) & 7;
  const r = arith(cpu, op, get(cpu, 0), memOperand(cpu, i, i.cc));
  if (r) set(cpu, 0, r);
  else if (op === 3) pop(cpu);
}
/** register forms: sub 0 = st0 op st(i) (D8), 1 = st(i) op st0 (DC), 2 = the same and pop (DE) */
export function arithReg(cpu: X86Cpu, i: Insn): void {
  const modrm = i.bytes[i.layout.modrmOff];
  let op = (modrm >> 3) & 7;
  const k = modrm & 7;
  if (i.cc === 0) {
    const r = arith(cpu, op, get(cpu, 0), get(cpu, k));
    if (r) set(cpu, 0, r); else if (op === 3) pop(cpu);
    return;
  }
  // DC / DE: st(i) = st(i) op st0, with the SDM's swapped sub / div encodings (e0: subr, e8: sub, f0: divr, f8: div)
  if (op === 4) op = 5; else if (op === 5) op = 4; else if (op === 6) op = 7; else if (op === 7) op = 6;
  const r = arith(cpu, op, get(cpu, k), get(cpu, 0));
  if (r) set(cpu, k, r);
  if (i.cc === 2) pop(cpu);
}
/** fld m32/m64/m80, fild m16/m32/m64 (sub: kind) */
export function fldMem(cpu: X86Cpu, i: Insn): void { push(cpu, memOperand(cpu, i, i.cc)); }
export function fldReg(cpu: X86Cpu, i: Insn): void { push(cpu, get(cpu, stIndex(i))); }
export function fldConst(cpu: X86Cpu, i: Insn): void { push(cpu, i.cc ? fromInt(1n) : ZERO); }
/** fst / fstp to memory (sub: kind; +16: pop) */
export function fstMem(cpu: X86Cpu, i: Insn): void {
  const v = get(cpu, 0), a = cpu.ea(i), kind = i.cc & 15;
  switch (kind) {
    case 4: cpu.mem.write32(a, Number(toBinary(cpu, v, 23, 8)) | 0); break;
    case 8: { const b = toBinary(cpu, v, 52, 11); cpu.mem.write32(a + 4, Number(b >> 32n) | 0); cpu.mem.write32(a, Number(b & 0xffffffffn) | 0); break; }
    case 10: store80(cpu, a, v); break;
    case 2: cpu.mem.write16(a, Number(BigInt.asUintN(16, toInt(cpu, v, 16)))); break;
    case 12: cpu.mem.write32(a, Number(BigInt.asIntN(32, toInt(cpu, v, 32)))); break;
    default: { const b = BigInt.asUintN(64, toInt(cpu, v, 64)); cpu.mem.write32(a + 4, Number(b >> 32n) | 0); cpu.mem.write32(a, Number(b & 0xffffffffn) | 0); }
  }
  if (i.cc & 16) pop(cpu);
}
/** fst / fstp st(i) (sub 1: pop) */
export function fstReg(cpu: X86Cpu, i: Insn): void { set(cpu, stIndex(i), get(cpu, 0)); if (i.cc) pop(cpu); }
export function fxch(cpu: X86Cpu, i: Insn): void {
  const k = stIndex(i), a = get(cpu, 0), b = get(cpu, k);
  set(cpu, 0, b); set(cpu, k, a);
}
/** fchs (0) fabs (1) frndint (2) fprem (3) ftst (4) */
export function unary(cpu: X86Cpu, i: Insn): void {
  const v = get(cpu, 0);
  switch (i.cc) {
    case 0: set(cpu, 0, { ...v, neg: !v.neg }); return;
    case 1: set(cpu, 0, { ...v, neg: false }); return;
    case 2: set(cpu, 0, v.kind === 'fin' ? (() => { const n = toInt(cpu, v, 128); return n === 0n ? { ...ZERO, neg: v.neg } : fromInt(n); })() : v); return;
    case 3: set(cpu, 0, premExt(cpu, v, get(cpu, 1))); return;
    default: {
      const c = cmpExt(v, ZERO);
      cpu.fpuSw = (cpu.fpuSw & ~(C0 | C2 | C3)) | (c === undefined ? C0 | C2 | C3 : c < 0 ? C0 : c === 0 ? C3 : 0);
    }
  }
}
/** fcomi / fucomi (sub 0) and the popping forms (sub 1): ZF PF CF */
export function fcomi(cpu: X86Cpu, i: Insn): void {
  const a = get(cpu, 0), b = get(cpu, stIndex(i));
  const c = cmpExt(a, b);
  const ordered = (i.bytes[i.layout.modrmOff] & 0xf8) === 0xf0;
  if (c === undefined && (ordered || isSNaN(a) || isSNaN(b))) cpu.fpuSw |= IE;
  cpu.setEager(c === undefined ? ZF | PF | CF : c < 0 ? CF : c === 0 ? ZF : 0);
  if (i.cc) pop(cpu);
}
/** fcompp / fucompp: compare st0 with st1 into the status word, pop twice */
export function fcompp(cpu: X86Cpu, _i: Insn): void {
  const c = cmpExt(get(cpu, 0), get(cpu, 1));
  cpu.fpuSw = (cpu.fpuSw & ~(C0 | C2 | C3)) | (c === undefined ? C0 | C2 | C3 : c < 0 ? C0 : c === 0 ? C3 : 0);
  pop(cpu); pop(cpu);
}
/** fxam: the class of st0 in C3 C2 C0 (and its sign in C1) */
export function fxam(cpu: X86Cpu, _i: Insn): void {
  const s = state(cpu), v = s.st[s.top];
  let cls: number;
  if (s.empty & (1 << s.top)) cls = C3 | C0;
  else if (v.kind === 'nan') cls = C0;
  else if (v.kind === 'inf') cls = C2 | C0;
  else if (v.m === 0n) cls = C3;
  else cls = bitlen(v.m) + v.e - 1 < -16382 ? C3 | C2 : C2;
  cpu.fpuSw = (cpu.fpuSw & ~(C0 | C1 | C2 | C3)) | cls | (v.neg ? C1 : 0);
}
/** fnstcw / fldcw: the control word (fegetround / fesetround read and write its rounding bits) */
export function fnstcw(cpu: X86Cpu, i: Insn): void { cpu.mem.write16(cpu.ea(i), cpu.fpuCw); }
export function fldcw(cpu: X86Cpu, i: Insn): void { cpu.fpuCw = cpu.mem.read16(cpu.ea(i)); }
/** fnstsw m16 (sub 0) / fnstsw ax (sub 1) */
export function fnstsw(cpu: X86Cpu, i: Insn): void {
  if (i.cc) cpu.lo[0] = (cpu.lo[0] & ~0xffff) | cpu.fpuSw;
  else cpu.mem.write16(cpu.ea(i), cpu.fpuSw);
}

/** fninit: the unit's reset */
export function finit(cpu: X86Cpu, _i: Insn): void {
  cpu.x87 = newX87();
  cpu.fpuCw = 0x37f; cpu.fpuSw = 0;
}
