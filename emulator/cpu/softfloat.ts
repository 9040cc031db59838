/**
 * IEEE 754 binary32 / binary64 arithmetic with every rounding mode and the
 * five exception flags, exact, for the CPUs' floating-point units (riscv64
 * F/D today). Arch-neutral: a CPU keeps its registers as raw bits, calls
 * these with the operands' bits and the rounding mode, gets the result's
 * bits and ORs the returned flags into its own status register (each arch
 * maps the flag bits: RISC-V fflags, x86 MXCSR, arm64 FPSR). NaN results are
 * the arch's default NaN (`defaultNaN`), as RISC-V and arm64 with FPCR.DN
 * produce; operands are never NaN-propagated here.
 *
 * How: a result is first computed exactly — as a sign, an integer
 * significand (bigint) and a power of two, with a sticky bit for the
 * infinite tails of division and square root — and rounded once by
 * `roundPack` (the reference path). Round-to-nearest-even results that are
 * normal numbers take a fast path on the host's own IEEE double arithmetic
 * (exact for + - * / sqrt in binary64; binary32 through double, whose double
 * rounding is innocuous for these operations), with the inexact flag found
 * by error-free transformations (TwoSum, Veltkamp/Dekker TwoProduct).
 * Tininess is detected after rounding (RISC-V, x86); `Env.tinyBeforeRounding`
 * selects the other IEEE option.
 */

/** rounding direction */
export type RoundingMode = 'rne' | 'rtz' | 'rdn' | 'rup' | 'rmm';

/** exception flags (RISC-V fflags bit order) */
export const FLAG_NV = 16, FLAG_DZ = 8, FLAG_OF = 4, FLAG_UF = 2, FLAG_NX = 1;

export type FpFormat = 32 | 64;

/** a result: raw bits (binary32 in the low 32 bits) and the flags raised */
export interface FpResult { bits: bigint; flags: number }

interface FormatInfo { p: number; emin: number; emax: number; expBits: number; bias: number; width: number }
const F32: FormatInfo = { p: 24, emin: -126, emax: 127, expBits: 8, bias: 127, width: 32 };
const F64: FormatInfo = { p: 53, emin: -1022, emax: 1023, expBits: 11, bias: 1023, width: 64 };
const info = (f: FpFormat): FormatInfo => (f === 32 ? F32 : F64);

/** the default (canonical) quiet NaN of a format */
export function defaultNaN(f: FpFormat): bigint { return f === 32 ? 0x7fc00000n : 0x7ff8000000000000n; }

// ---------------------------------------------------------------- bits <-> numbers
const buf = new DataView(new ArrayBuffer(8));

/** a binary64's bits as a number (NaN payloads may not survive: test NaN-ness on the bits) */
export function f64Value(bits: bigint): number { buf.setBigUint64(0, bits); return buf.getFloat64(0); }
export function f64Bits(v: number): bigint { buf.setFloat64(0, v); return buf.getBigUint64(0); }
export function f32Value(bits: bigint): number { buf.setUint32(0, Number(bits & 0xffffffffn)); return buf.getFloat32(0); }
export function f32Bits(v: number): bigint { buf.setFloat32(0, v); return BigInt(buf.getUint32(0)); }
const valueOf = (f: FpFormat, bits: bigint): number => (f === 32 ? f32Value(bits) : f64Value(bits));
const bitsOf = (f: FpFormat, v: number): bigint => (f === 32 ? f32Bits(v) : f64Bits(v));

export function isNaNBits(f: FpFormat, b: bigint): boolean {
  return f === 32 ? (b & 0x7f800000n) === 0x7f800000n && (b & 0x7fffffn) !== 0n
    : (b & 0x7ff0000000000000n) === 0x7ff0000000000000n && (b & 0xfffffffffffffn) !== 0n;
}
/** a signaling NaN (quiet bit clear) */
export function isSignalingBits(f: FpFormat, b: bigint): boolean {
  return isNaNBits(f, b) && (f === 32 ? (b & 0x400000n) === 0n : (b & 0x8000000000000n) === 0n);
}
const signBit = (f: FpFormat, b: bigint): number => Number((b >> BigInt(f - 1)) & 1n);

// ---------------------------------------------------------------- exact values
/** (-1)^sign * mant * 2^exp; `sticky`: the true value is a little larger in magnitude than that (an infinite tail) */
interface Exact { sign: number; mant: bigint; exp: number; sticky: boolean }

/** a finite value of a format as an exact significand and exponent */
function unpack(f: FpFormat, b: bigint): Exact {
  const fi = info(f);
  const fracBits = fi.p - 1;
  const sign = signBit(f, b);
  const e = Number((b >> BigInt(fracBits)) & BigInt((1 << fi.expBits) - 1));
  const frac = b & ((1n << BigInt(fracBits)) - 1n);
  if (e === 0) return { sign, mant: frac, exp: fi.emin - fracBits, sticky: false };
  return { sign, mant: frac | (1n << BigInt(fracBits)), exp: e - fi.bias - fracBits, sticky: false };
}

const HEX_TOP_BITS = [0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
/** number of bits of a non-negative bigint */
function bitLength(x: bigint): number {
  if (x === 0n) return 0;
  const h = x.toString(16);
  return (h.length - 1) * 4 + HEX_TOP_BITS[parseInt(h[0], 16)];
}

/** the largest finite value of a format, with a sign */
function maxFinite(f: FpFormat, sign: number): bigint {
  const m = f === 32 ? 0x7f7fffffn : 0x7fefffffffffffffn;
  return sign ? m | (1n << BigInt(f - 1)) : m;
}
function infinity(f: FpFormat, sign: number): bigint {
  const m = f === 32 ? 0x7f800000n : 0x7ff0000000000000n;
  return sign ? m | (1n << BigInt(f - 1)) : m;
}
function zero(f: FpFormat, sign: number): bigint { return sign ? 1n << BigInt(f - 1) : 0n; }

export interface Env { tinyBeforeRounding?: boolean }

/**
 * Round an exact value to the format: the IEEE result under rm, with
 * inexact / overflow / underflow flags. mant may be 0 only with sticky set
 * (a tiny non-zero value).
 */
export function roundPack(f: FpFormat, x: Exact, rm: RoundingMode, env: Env = {}): FpResult {
  const fi = info(f);
  const { sign, exp, mant } = x;
  if (mant === 0n) return { bits: zero(f, sign), flags: 0 }; // callers give a non-zero significand with any sticky tail
  const n = bitLength(mant);
  const lead = exp + n - 1;
  const roundAt = (lsbExp: number): { q: bigint; inexact: boolean; lsbExp: number } => {
    const shift = lsbExp - exp;
    if (shift <= 0) return { q: mant << BigInt(-shift), inexact: x.sticky, lsbExp };
    let q: bigint, rem: bigint, half: bigint;
    if (shift > n + 2) { q = 0n; rem = mant; half = 1n << BigInt(shift - 1); }
    else { q = mant >> BigInt(shift); rem = mant & ((1n << BigInt(shift)) - 1n); half = 1n << BigInt(shift - 1); }
    const sticky = x.sticky;
    const exact = rem === 0n && !sticky;
    let up = false;
    if (!exact) {
      const above = rem > half || (rem === half && sticky);
      const tie = rem === half && !sticky;
      switch (rm) {
        case 'rne': up = above || (tie && (q & 1n) === 1n); break;
        case 'rmm': up = above || tie; break;
        case 'rtz': up = false; break;
        case 'rup': up = sign === 0; break;
        case 'rdn': up = sign === 1; break;
      }
    }
    if (up) q += 1n;
    return { q, inexact: !exact, lsbExp };
  };
  const normalLsb = lead - (fi.p - 1);
  const subLsb = fi.emin - (fi.p - 1);
  // tininess: the result rounded as if the exponent range were unbounded is below 2^emin (after), or the exact value is (before)
  let tiny: boolean;
  if (env.tinyBeforeRounding) tiny = lead < fi.emin;
  else if (lead >= fi.emin) tiny = false;
  else {
    const r = roundAt(normalLsb);
    tiny = bitLength(r.q) + r.lsbExp - 1 < fi.emin;
  }
  let r = roundAt(Math.max(normalLsb, subLsb));
  // a carry out of the significand: one more bit
  if (bitLength(r.q) > fi.p) r = { q: r.q >> 1n, inexact: r.inexact, lsbExp: r.lsbExp + 1 };
  let flags = r.inexact ? FLAG_NX : 0;
  if (tiny && r.inexact) flags |= FLAG_UF;
  if (r.q === 0n) return { bits: zero(f, sign), flags };
  const topExp = r.lsbExp + bitLength(r.q) - 1;
  if (topExp > fi.emax) {
    flags |= FLAG_OF | FLAG_NX;
    const toInf = rm === 'rne' || rm === 'rmm' || (rm === 'rup' && sign === 0) || (rm === 'rdn' && sign === 1);
    return { bits: toInf ? infinity(f, sign) : maxFinite(f, sign), flags };
  }
  // pack: a normal number has its leading bit at p-1; a subnormal has lsbExp = subLsb and biased exponent 0
  const fracBits = BigInt(fi.p - 1);
  let bits: bigint;
  if (bitLength(r.q) < fi.p) bits = r.q; // subnormal (lsbExp = subLsb)
  else bits = (BigInt(topExp + fi.bias) << fracBits) | (r.q & ((1n << fracBits) - 1n));
  if (sign) bits |= 1n << BigInt(f - 1);
  return { bits, flags };
}

// ---------------------------------------------------------------- error-free transformations (fast path)
const SPLIT = 134217729; // 2^27 + 1
/** a*b = p + e exactly when no intermediate over/underflows */
function twoProductErr(a: number, b: number, p: number): number {
  let t = SPLIT * a;
  const ah = t - (t - a), al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b), bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
/** a+b = s + e exactly */
function twoSumErr(a: number, b: number, s: number): number {
  const bv = s - a, av = s - bv;
  return (a - av) + (b - bv);
}
/** normal, finite and far from the ends of the double range (the fast path's transformations are exact there) */
const SAFE_HI = 2 ** 995, SAFE_LO = 2 ** -969;
const safe = (v: number): boolean => { const a = Math.abs(v); return a === 0 || (a < SAFE_HI && a > SAFE_LO); };
const MIN_NORMAL32 = 2 ** -126, MAX32 = 3.4028234663852886e38;

/** NaN inputs: invalid for a signaling one (or always, for signaling operations), default NaN out */
function nanResult(f: FpFormat, ops: readonly bigint[], alwaysInvalid = false): FpResult {
  const nv = alwaysInvalid || ops.some(b => isSignalingBits(f, b));
  return { bits: defaultNaN(f), flags: nv ? FLAG_NV : 0 };
}
const invalid = (f: FpFormat): FpResult => ({ bits: defaultNaN(f), flags: FLAG_NV });

let fastPaths = true;
/** Tests: turn the host-arithmetic fast paths off (every result through roundPack) or on. */
export function setFastPaths(on: boolean): void { fastPaths = on; }

/** a binary64 fast-path result, or null to take the exact path */
function fast64(r: number, errIsZero: () => boolean): FpResult | null {
  if (!fastPaths) return null;
  if (!safe(r) || r === 0) return null;
  return { bits: f64Bits(r), flags: errIsZero() ? 0 : FLAG_NX };
}
/** a binary32 fast-path result from a double computed from binary32 operands */
function fast32(r: number, exactInDouble: () => boolean, exact32: (r32: number) => boolean): FpResult | null {
  if (!fastPaths) return null;
  const r32 = Math.fround(r);
  // normal before and after rounding: no underflow under either tininess rule, no overflow
  if (!(Math.abs(r) >= MIN_NORMAL32 && Math.abs(r32) <= MAX32)) return null;
  const inexact = r32 !== r || !exactInDouble() || !exact32(r32);
  return { bits: f32Bits(r32), flags: inexact ? FLAG_NX : 0 };
}

// ---------------------------------------------------------------- operations
function isInfBits(f: FpFormat, b: bigint): boolean {
  return (b & ~(1n << BigInt(f - 1))) === (f === 32 ? 0x7f800000n : 0x7ff0000000000000n);
}
function isZeroBits(f: FpFormat, b: bigint): boolean { return (b & ~(1n << BigInt(f - 1))) === 0n; }

/** a + b (sub: a - b) */
export function fadd(f: FpFormat, a: bigint, b: bigint, rm: RoundingMode, sub = false, env: Env = {}): FpResult {
  if (isNaNBits(f, a) || isNaNBits(f, b)) return nanResult(f, [a, b]);
  if (sub) b ^= 1n << BigInt(f - 1);
  const ia = isInfBits(f, a), ib = isInfBits(f, b);
  if (ia || ib) {
    if (ia && ib && signBit(f, a) !== signBit(f, b)) return invalid(f);
    return { bits: ia ? a : b, flags: 0 };
  }
  if (rm === 'rne') {
    const x = valueOf(f, a), y = valueOf(f, b), s = x + y;
    const r = f === 64 ? fast64(s, () => twoSumErr(x, y, s) === 0)
      : fast32(s, () => twoSumErr(x, y, s) === 0, () => true);
    if (r) return r;
  }
  const ea = unpack(f, a), eb = unpack(f, b);
  const e = Math.min(ea.exp, eb.exp);
  const va = (ea.sign ? -1n : 1n) * (ea.mant << BigInt(ea.exp - e));
  const vb = (eb.sign ? -1n : 1n) * (eb.mant << BigInt(eb.exp - e));
  const sum = va + vb;
  if (sum === 0n) {
    // exact zero: +0 except in round-down; two zeros of the same sign keep it
    const sameSign = ea.sign === eb.sign;
    return { bits: zero(f, sameSign ? ea.sign : rm === 'rdn' ? 1 : 0), flags: 0 };
  }
  return roundPack(f, { sign: sum < 0n ? 1 : 0, mant: sum < 0n ? -sum : sum, exp: e, sticky: false }, rm, env);
}

export function fmul(f: FpFormat, a: bigint, b: bigint, rm: RoundingMode, env: Env = {}): FpResult {
  if (isNaNBits(f, a) || isNaNBits(f, b)) return nanResult(f, [a, b]);
  const sign = signBit(f, a) ^ signBit(f, b);
  const ia = isInfBits(f, a), ib = isInfBits(f, b);
  if (ia || ib) {
    if (isZeroBits(f, a) || isZeroBits(f, b)) return invalid(f);
    return { bits: infinity(f, sign), flags: 0 };
  }
  if (rm === 'rne') {
    const x = valueOf(f, a), y = valueOf(f, b), p = x * y;
    const r = f === 64 ? (safe(x) && safe(y) ? fast64(p, () => twoProductErr(x, y, p) === 0) : null)
      : fast32(p, () => true, () => true);
    if (r) return r;
  }
  const ea = unpack(f, a), eb = unpack(f, b);
  return roundPack(f, { sign, mant: ea.mant * eb.mant, exp: ea.exp + eb.exp, sticky: false }, rm, env);
}

export function fdiv(f: FpFormat, a: bigint, b: bigint, rm: RoundingMode, env: Env = {}): FpResult {
  if (isNaNBits(f, a) || isNaNBits(f, b)) return nanResult(f, [a, b]);
  const sign = signBit(f, a) ^ signBit(f, b);
  const ia = isInfBits(f, a), ib = isInfBits(f, b), za = isZeroBits(f, a), zb = isZeroBits(f, b);
  if ((ia && ib) || (za && zb)) return invalid(f);
  if (ia) return { bits: infinity(f, sign), flags: 0 };
  if (ib) return { bits: zero(f, sign), flags: 0 };
  if (zb) return { bits: infinity(f, sign), flags: FLAG_DZ };
  if (za) return { bits: zero(f, sign), flags: 0 };
  if (rm === 'rne') {
    const x = valueOf(f, a), y = valueOf(f, b), q = x / y;
    const r = f === 64 ? (safe(x) && safe(y) ? fast64(q, () => q * y === x && twoProductErr(q, y, q * y) === 0) : null)
      : fast32(q, () => true, r32 => r32 * y === x);
    if (r) return r;
  }
  const ea = unpack(f, a), eb = unpack(f, b);
  // enough quotient bits: p + 2 beyond the leading one, the remainder as sticky
  const fi = info(f);
  const shift = fi.p + 3 + bitLength(eb.mant) - bitLength(ea.mant) + 1;
  const num = ea.mant << BigInt(Math.max(0, shift));
  const q = num / eb.mant, rem = num % eb.mant;
  return roundPack(f, { sign, mant: q, exp: ea.exp - eb.exp - Math.max(0, shift), sticky: rem !== 0n }, rm, env);
}

/** integer square root (floor) of a non-negative bigint */
function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  if (x === 0n) x = 1n;
  // Newton from a close start
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) break;
    x = y;
  }
  while (x * x > n) x -= 1n;
  while ((x + 1n) * (x + 1n) <= n) x += 1n;
  return x;
}

export function fsqrt(f: FpFormat, a: bigint, rm: RoundingMode, env: Env = {}): FpResult {
  if (isNaNBits(f, a)) return nanResult(f, [a]);
  if (isZeroBits(f, a)) return { bits: a, flags: 0 };
  if (signBit(f, a)) return invalid(f);
  if (isInfBits(f, a)) return { bits: a, flags: 0 };
  if (rm === 'rne') {
    const x = valueOf(f, a), s = Math.sqrt(x);
    const r = f === 64 ? (safe(x) ? fast64(s, () => s * s === x && twoProductErr(s, s, s * s) === 0) : null)
      : fast32(s, () => true, r32 => r32 * r32 === x);
    if (r) return r;
  }
  const ea = unpack(f, a);
  const fi = info(f);
  // scale to an even exponent with 2p+4 bits of root
  let shift = 2 * (fi.p + 3) - bitLength(ea.mant);
  if (shift < 0) shift = 0;
  if ((ea.exp - shift) % 2 !== 0) shift += 1;
  const n = ea.mant << BigInt(shift);
  const root = isqrt(n);
  return roundPack(f, { sign: 0, mant: root, exp: (ea.exp - shift) / 2, sticky: root * root !== n }, rm, env);
}

/**
 * Fused multiply-add: (a * b) + c rounded once; negProduct / negAddend give
 * fmsub / fnmsub / fnmadd. Invalid for inf * 0 (even with a quiet NaN
 * addend, as RISC-V requires) and for inf - inf.
 */
export function ffma(f: FpFormat, a: bigint, b: bigint, c: bigint, rm: RoundingMode, negProduct = false, negAddend = false, env: Env = {}): FpResult {
  const infTimesZero = (isInfBits(f, a) && isZeroBits(f, b)) || (isZeroBits(f, a) && isInfBits(f, b));
  if (isNaNBits(f, a) || isNaNBits(f, b) || isNaNBits(f, c)) return nanResult(f, [a, b, c], infTimesZero);
  if (infTimesZero) return invalid(f);
  const sb = 1n << BigInt(f - 1);
  if (negAddend) c ^= sb;
  const psign = signBit(f, a) ^ signBit(f, b) ^ (negProduct ? 1 : 0);
  const pInf = isInfBits(f, a) || isInfBits(f, b);
  if (pInf) {
    if (isInfBits(f, c) && signBit(f, c) !== psign) return invalid(f);
    return { bits: infinity(f, psign), flags: 0 };
  }
  if (isInfBits(f, c)) return { bits: c, flags: 0 };
  const ea = unpack(f, a), eb = unpack(f, b), ec = unpack(f, c);
  const pm = ea.mant * eb.mant, pe = ea.exp + eb.exp;
  if (pm === 0n) {
    // the product is an exact zero: c, except that two zeros add as zeros do
    if (ec.mant === 0n) {
      const s = psign === ec.sign ? psign : rm === 'rdn' ? 1 : 0;
      return { bits: zero(f, s), flags: 0 };
    }
    return { bits: c, flags: 0 };
  }
  const e = Math.min(pe, ec.exp);
  const vp = (psign ? -1n : 1n) * (pm << BigInt(pe - e));
  const vc = (ec.sign ? -1n : 1n) * (ec.mant << BigInt(ec.exp - e));
  const sum = vp + vc;
  if (sum === 0n) return { bits: zero(f, psign === ec.sign ? psign : rm === 'rdn' ? 1 : 0), flags: 0 };
  return roundPack(f, { sign: sum < 0n ? 1 : 0, mant: sum < 0n ? -sum : sum, exp: e, sticky: false }, rm, env);
}

/** binary32 <-> binary64 */
export function fconvert(from: FpFormat, to: FpFormat, a: bigint, rm: RoundingMode, env: Env = {}): FpResult {
  if (isNaNBits(from, a)) return nanResult(to, [], isSignalingBits(from, a));
  const sign = signBit(from, a);
  if (isInfBits(from, a)) return { bits: infinity(to, sign), flags: 0 };
  if (isZeroBits(from, a)) return { bits: zero(to, sign), flags: 0 };
  if (from === 32 && to === 64) return { bits: f64Bits(f32Value(a)), flags: 0 };
  if (rm === 'rne') {
    const r = fast32(f64Value(a), () => true, () => true);
    if (r) return r;
  }
  return roundPack(to, unpack(from, a), rm, env);
}

/** comparisons: eq is quiet (invalid only for signaling NaNs), lt/le signal on any NaN */
export function fcompare(f: FpFormat, a: bigint, b: bigint, op: 'eq' | 'lt' | 'le'): { result: boolean; flags: number } {
  if (isNaNBits(f, a) || isNaNBits(f, b)) {
    const nv = op !== 'eq' || isSignalingBits(f, a) || isSignalingBits(f, b);
    return { result: false, flags: nv ? FLAG_NV : 0 };
  }
  const x = valueOf(f, a), y = valueOf(f, b);
  return { result: op === 'eq' ? x === y : op === 'lt' ? x < y : x <= y, flags: 0 };
}

/**
 * minimumNumber / maximumNumber as RISC-V F 2.2 defines fmin/fmax: a NaN
 * operand yields the other one, both NaN the default NaN, -0 < +0;
 * invalid for a signaling NaN.
 */
export function fminmax(f: FpFormat, a: bigint, b: bigint, max: boolean): FpResult {
  const na = isNaNBits(f, a), nb = isNaNBits(f, b);
  const flags = isSignalingBits(f, a) || isSignalingBits(f, b) ? FLAG_NV : 0;
  if (na && nb) return { bits: defaultNaN(f), flags };
  if (na) return { bits: b, flags };
  if (nb) return { bits: a, flags };
  const x = valueOf(f, a), y = valueOf(f, b);
  if (x === y) {
    // equal (zeros of either sign): min takes the negative one, max the positive
    const sa = signBit(f, a);
    return { bits: (max ? sa === 0 : sa === 1) ? a : b, flags };
  }
  return { bits: (max ? x > y : x < y) ? a : b, flags };
}

/** fclass: one-hot class of a value (RISC-V order) */
export function fclass(f: FpFormat, a: bigint): number {
  const s = signBit(f, a);
  if (isNaNBits(f, a)) return isSignalingBits(f, a) ? 1 << 8 : 1 << 9;
  if (isInfBits(f, a)) return s ? 1 << 0 : 1 << 7;
  if (isZeroBits(f, a)) return s ? 1 << 3 : 1 << 4;
  const expMask = f === 32 ? 0x7f800000n : 0x7ff0000000000000n;
  const sub = (a & expMask) === 0n;
  if (s) return sub ? 1 << 2 : 1 << 1;
  return sub ? 1 << 5 : 1 << 6;
}

/**
 * Float to integer: rounded by rm, saturated on overflow with invalid (NaN
 * gives the largest value, as RISC-V does), inexact when rounding changed
 * the value. width 32 or 64; the result is the integer value (sign-extended
 * interpretation left to the caller).
 */
export function ftoint(f: FpFormat, a: bigint, width: 32 | 64, signed: boolean, rm: RoundingMode): { value: bigint; flags: number } {
  const maxV = signed ? (1n << BigInt(width - 1)) - 1n : (1n << BigInt(width)) - 1n;
  const minV = signed ? -(1n << BigInt(width - 1)) : 0n;
  if (isNaNBits(f, a)) return { value: maxV, flags: FLAG_NV };
  const sign = signBit(f, a);
  if (isInfBits(f, a)) return { value: sign ? minV : maxV, flags: FLAG_NV };
  const e = unpack(f, a);
  let q: bigint, inexact: boolean;
  if (e.exp >= 0) { q = e.mant << BigInt(e.exp); inexact = false; }
  else {
    const sh = BigInt(-e.exp);
    q = e.mant >> sh;
    const rem = e.mant & ((1n << sh) - 1n), half = 1n << (sh - 1n);
    inexact = rem !== 0n;
    if (inexact) {
      let up = false;
      switch (rm) {
        case 'rne': up = rem > half || (rem === half && (q & 1n) === 1n); break;
        case 'rmm': up = rem >= half; break;
        case 'rtz': up = false; break;
        case 'rup': up = sign === 0; break;
        case 'rdn': up = sign === 1; break;
      }
      if (up) q += 1n;
    }
  }
  const v = sign ? -q : q;
  if (v > maxV) return { value: maxV, flags: FLAG_NV };
  if (v < minV) return { value: minV, flags: FLAG_NV };
  return { value: v, flags: inexact ? FLAG_NX : 0 };
}

/** Integer (exact bigint) to float, rounded by rm. */
export function intToF(f: FpFormat, v: bigint, rm: RoundingMode): FpResult {
  if (v === 0n) return { bits: 0n, flags: 0 };
  const a = v < 0n ? -v : v;
  if (fastPaths && a < (f === 32 ? 1n << 24n : 1n << 53n)) return { bits: bitsOf(f, Number(v)), flags: 0 };
  return roundPack(f, { sign: v < 0n ? 1 : 0, mant: a, exp: 0, sticky: false }, rm);
}

/** sign injection (fsgnj / fsgnjn / fsgnjx): bit operations, no flags, NaNs kept */
export function fsgnj(f: FpFormat, a: bigint, b: bigint, kind: 'j' | 'jn' | 'jx'): bigint {
  const sb = 1n << BigInt(f - 1);
  const bs = b & sb;
  const s = kind === 'j' ? bs : kind === 'jn' ? bs ^ sb : (a & sb) ^ bs;
  return (a & ~sb) | s;
}
