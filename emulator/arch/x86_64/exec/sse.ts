/**
 * SSE and SSE2 (issue 15): the 128-bit xmm registers as compilers and
 * C libraries use them at x86-64's baseline — moves, integer SIMD (add /
 * sub / compare / min / max / shifts / shuffles / unpacks / packs /
 * pmovmskb / psadbw ...), packed and scalar single / double arithmetic,
 * compares (all eight cmpps predicates, comis / ucomis setting EFLAGS),
 * logic, conversions between integers, singles and doubles, and MXCSR.
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
 *
 * Registers: cpu.xd (dwords), .xb (bytes), .xw (words), .xf (floats),
 * .xq (doubles) are views of one buffer; register 16 is the scratch slot a
 * memory source is loaded into, so every executor reads `src` by index.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { GuestFault } from '../../../cpu/faults';
import { CF, PF, ZF } from '../flags';
import { RoundingMode, f64Bits, fconvert, intToF } from '../../../cpu/softfloat';

const TMP = 16;
const MX_IE = 0x1, MX_ZE = 0x4;

// ---------------------------------------------------------------- operand access

/** Load the W operand (xmm register or `bytes` of memory, the rest zero) into the scratch slot; its register index. */
function src(cpu: X86Cpu, i: Insn, bytes: number): number {
  if (i.rm >= 0) return i.rm;
  const a = cpu.ea(i);
  const d = cpu.xd, o = TMP * 4;
  if (bytes === 16) {
    for (let k = 0; k < 4; k++) d[o + k] = cpu.mem.read32(a + 4 * k) | 0;
  } else if (bytes === 8) {
    d[o] = cpu.mem.read32(a) | 0; d[o + 1] = cpu.mem.read32(a + 4) | 0; d[o + 2] = 0; d[o + 3] = 0;
  } else if (bytes === 4) {
    d[o] = cpu.mem.read32(a) | 0; d[o + 1] = 0; d[o + 2] = 0; d[o + 3] = 0;
  } else {
    d[o] = cpu.mem.read16(a); d[o + 1] = 0; d[o + 2] = 0; d[o + 3] = 0;
  }
  return TMP;
}

function aligned16(cpu: X86Cpu, i: Insn): void {
  if (i.rm < 0 && cpu.ea(i) % 16 !== 0) throw new GuestFault('generalProtection', `${i.def.mnem}: unaligned 16-byte memory operand`);
}

/** Store `bytes` of xmm register r to the W operand. */
function store(cpu: X86Cpu, i: Insn, r: number, bytes: number): void {
  const d = cpu.xd;
  if (i.rm >= 0) {
    const o = i.rm * 4, s = r * 4;
    for (let k = 0; k < bytes / 4; k++) d[o + k] = d[s + k];
    return;
  }
  const a = cpu.ea(i);
  // last dword first: a fault at a region's end leaves memory unchanged
  for (let k = bytes / 4 - 1; k >= 0; k--) cpu.mem.write32(a + 4 * k, d[r * 4 + k]);
}

function copyReg(cpu: X86Cpu, to: number, from: number): void {
  const d = cpu.xd;
  d[to * 4] = d[from * 4]; d[to * 4 + 1] = d[from * 4 + 1]; d[to * 4 + 2] = d[from * 4 + 2]; d[to * 4 + 3] = d[from * 4 + 3];
}

// ---------------------------------------------------------------- moves

/** movups/movupd/movdqu/movaps/movapd/movdqa load (sub 1: aligned) */
export function movLoad(cpu: X86Cpu, i: Insn): void {
  if (i.cc) aligned16(cpu, i);
  copyReg(cpu, i.reg, src(cpu, i, 16));
}
/** the store forms (Wx, Vx) */
export function movStore(cpu: X86Cpu, i: Insn): void {
  if (i.cc) aligned16(cpu, i);
  store(cpu, i, i.reg, 16);
}
/** movss load: from memory the upper lanes clear, from a register only lane 0 moves */
export function movssLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  if (i.rm >= 0) { d[o] = d[i.rm * 4]; return; }
  const s = src(cpu, i, 4) * 4;
  d[o] = d[s]; d[o + 1] = 0; d[o + 2] = 0; d[o + 3] = 0;
}
export function movssStore(cpu: X86Cpu, i: Insn): void {
  if (i.rm >= 0) { cpu.xd[i.rm * 4] = cpu.xd[i.reg * 4]; return; }
  store(cpu, i, i.reg, 4);
}
/** movsd load (sse2 scalar double) */
export function movsdLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  if (i.rm >= 0) { d[o] = d[i.rm * 4]; d[o + 1] = d[i.rm * 4 + 1]; return; }
  const s = src(cpu, i, 8) * 4;
  d[o] = d[s]; d[o + 1] = d[s + 1]; d[o + 2] = 0; d[o + 3] = 0;
}
export function movsdStore(cpu: X86Cpu, i: Insn): void {
  if (i.rm >= 0) { const d = cpu.xd; d[i.rm * 4] = d[i.reg * 4]; d[i.rm * 4 + 1] = d[i.reg * 4 + 1]; return; }
  store(cpu, i, i.reg, 8);
}
/** movq xmm, xmm/m64 (f3 0f 7e): the upper half cleared */
export function movqLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4, s = src(cpu, i, 8) * 4;
  d[o] = d[s]; d[o + 1] = d[s + 1]; d[o + 2] = 0; d[o + 3] = 0;
}
/** movq xmm/m64, xmm (66 0f d6): to a register the upper half cleared */
export function movqStore(cpu: X86Cpu, i: Insn): void {
  if (i.rm >= 0) { const d = cpu.xd; d[i.rm * 4] = d[i.reg * 4]; d[i.rm * 4 + 1] = d[i.reg * 4 + 1]; d[i.rm * 4 + 2] = 0; d[i.rm * 4 + 3] = 0; return; }
  store(cpu, i, i.reg, 8);
}
/** movd / movq xmm, r/m32|64 (66 0f 6e) */
export function movdToX(cpu: X86Cpu, i: Insn): void {
  const v = cpu.readE(i, i.size);
  const d = cpu.xd, o = i.reg * 4;
  d[o] = v; d[o + 1] = i.size === 8 ? cpu.th : 0; d[o + 2] = 0; d[o + 3] = 0;
}
/** movd / movq r/m32|64, xmm (66 0f 7e) */
export function movdFromX(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4;
  cpu.writeE(i, i.size, d[o], d[o + 1]);
}
/** movlps/movlpd load (sub 0) and movhps/movhpd (sub 1): 64 bits into the low/high half; reg forms movhlps (0) / movlhps (1) */
export function movHalfLoad(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, o = i.reg * 4 + (i.cc ? 2 : 0);
  if (i.rm >= 0) {
    // movhlps: high half of src to low; movlhps: low half of src to high
    const s = i.rm * 4 + (i.cc ? 0 : 2);
    d[o] = d[s]; d[o + 1] = d[s + 1];
    return;
  }
  const a = cpu.ea(i);
  d[o] = cpu.mem.read32(a) | 0; d[o + 1] = cpu.mem.read32(a + 4) | 0;
}
export function movHalfStore(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  const d = cpu.xd, o = i.reg * 4 + (i.cc ? 2 : 0);
  cpu.mem.write32(a + 4, d[o + 1]); cpu.mem.write32(a, d[o]);
}
/** movnti m32/64, r */
export function movnti(cpu: X86Cpu, i: Insn): void {
  const v = cpu.getR(i.size, i.reg);
  cpu.writeM(i.size, cpu.ea(i), v, cpu.th);
}
/** movmskps (sub 4) / movmskpd (sub 8) / pmovmskb (sub 1): sign bits into a GPR */
export function movmsk(cpu: X86Cpu, i: Insn): void {
  const s = i.rm * 16;
  const b = cpu.xb;
  let m = 0;
  const step = i.cc;
  for (let k = 0, bit = 0; k < 16; k += step, bit++) if (b[s + k + step - 1] & 0x80) m |= 1 << bit;
  cpu.setR(4, i.reg, m, 0);
}

// ---------------------------------------------------------------- integer SIMD

/** lane op over two registers into the destination (element-wise); f gets (a, b) unsigned lane values */
function lanes8(cpu: X86Cpu, i: Insn, f: (a: number, b: number) => number): void {
  const b = cpu.xb, s = src(cpu, i, 16) * 16, o = i.reg * 16;
  for (let k = 0; k < 16; k++) b[o + k] = f(b[o + k], b[s + k]);
}
function lanes16(cpu: X86Cpu, i: Insn, f: (a: number, b: number) => number): void {
  const w = cpu.xw, s = src(cpu, i, 16) * 8, o = i.reg * 8;
  for (let k = 0; k < 8; k++) w[o + k] = f(w[o + k], w[s + k]);
}
function lanes32(cpu: X86Cpu, i: Insn, f: (a: number, b: number) => number): void {
  const d = cpu.xd, s = src(cpu, i, 16) * 4, o = i.reg * 4;
  for (let k = 0; k < 4; k++) d[o + k] = f(d[o + k], d[s + k]);
}
const sb = (v: number): number => (v << 24) >> 24;
const sw = (v: number): number => (v << 16) >> 16;
const satSb = (v: number): number => (v > 127 ? 127 : v < -128 ? -128 : v) & 0xff;
const satUb = (v: number): number => (v > 255 ? 255 : v < 0 ? 0 : v);
const satSw = (v: number): number => (v > 32767 ? 32767 : v < -32768 ? -32768 : v) & 0xffff;
const satUw = (v: number): number => (v > 65535 ? 65535 : v < 0 ? 0 : v);

/** the integer SIMD binary ops, by sub-operation */
export const PADDB = 0, PADDW = 1, PADDD = 2, PADDQ = 3, PSUBB = 4, PSUBW = 5, PSUBD = 6, PSUBQ = 7,
  PADDSB = 8, PADDSW = 9, PADDUSB = 10, PADDUSW = 11, PSUBSB = 12, PSUBSW = 13, PSUBUSB = 14, PSUBUSW = 15,
  PCMPEQB = 16, PCMPEQW = 17, PCMPEQD = 18, PCMPGTB = 19, PCMPGTW = 20, PCMPGTD = 21,
  PMINUB = 22, PMAXUB = 23, PMINSW = 24, PMAXSW = 25, PAVGB = 26, PAVGW = 27,
  PMULLW = 28, PMULHW = 29, PMULHUW = 30, PAND = 31, PANDN = 32, POR = 33, PXOR = 34;

export function pint(cpu: X86Cpu, i: Insn): void {
  switch (i.cc) {
    case PADDB: return lanes8(cpu, i, (a, b) => (a + b) & 0xff);
    case PADDW: return lanes16(cpu, i, (a, b) => (a + b) & 0xffff);
    case PADDD: return lanes32(cpu, i, (a, b) => (a + b) | 0);
    case PSUBB: return lanes8(cpu, i, (a, b) => (a - b) & 0xff);
    case PSUBW: return lanes16(cpu, i, (a, b) => (a - b) & 0xffff);
    case PSUBD: return lanes32(cpu, i, (a, b) => (a - b) | 0);
    case PADDQ: case PSUBQ: {
      const d = cpu.xd, s = src(cpu, i, 16) * 4, o = i.reg * 4;
      for (let k = 0; k < 4; k += 2) {
        const a = (BigInt(d[o + k + 1]) << 32n) | BigInt(d[o + k] >>> 0);
        const b = (BigInt(d[s + k + 1]) << 32n) | BigInt(d[s + k] >>> 0);
        const r = BigInt.asUintN(64, i.cc === PADDQ ? a + b : a - b);
        d[o + k] = Number(r & 0xffffffffn) | 0; d[o + k + 1] = Number(r >> 32n) | 0;
      }
      return;
    }
    case PADDSB: return lanes8(cpu, i, (a, b) => satSb(sb(a) + sb(b)));
    case PADDSW: return lanes16(cpu, i, (a, b) => satSw(sw(a) + sw(b)));
    case PADDUSB: return lanes8(cpu, i, (a, b) => satUb(a + b));
    case PADDUSW: return lanes16(cpu, i, (a, b) => satUw(a + b));
    case PSUBSB: return lanes8(cpu, i, (a, b) => satSb(sb(a) - sb(b)));
    case PSUBSW: return lanes16(cpu, i, (a, b) => satSw(sw(a) - sw(b)));
    case PSUBUSB: return lanes8(cpu, i, (a, b) => satUb(a - b));
    case PSUBUSW: return lanes16(cpu, i, (a, b) => satUw(a - b));
    case PCMPEQB: return lanes8(cpu, i, (a, b) => (a === b ? 0xff : 0));
    case PCMPEQW: return lanes16(cpu, i, (a, b) => (a === b ? 0xffff : 0));
    case PCMPEQD: return lanes32(cpu, i, (a, b) => (a === b ? -1 : 0));
    case PCMPGTB: return lanes8(cpu, i, (a, b) => (sb(a) > sb(b) ? 0xff : 0));
    case PCMPGTW: return lanes16(cpu, i, (a, b) => (sw(a) > sw(b) ? 0xffff : 0));
    case PCMPGTD: return lanes32(cpu, i, (a, b) => (a > b ? -1 : 0));
    case PMINUB: return lanes8(cpu, i, (a, b) => (a < b ? a : b));
    case PMAXUB: return lanes8(cpu, i, (a, b) => (a > b ? a : b));
    case PMINSW: return lanes16(cpu, i, (a, b) => (sw(a) < sw(b) ? a : b));
    case PMAXSW: return lanes16(cpu, i, (a, b) => (sw(a) > sw(b) ? a : b));
    case PAVGB: return lanes8(cpu, i, (a, b) => (a + b + 1) >> 1);
    case PAVGW: return lanes16(cpu, i, (a, b) => (a + b + 1) >> 1);
    case PMULLW: return lanes16(cpu, i, (a, b) => Math.imul(sw(a), sw(b)) & 0xffff);
    case PMULHW: return lanes16(cpu, i, (a, b) => (Math.imul(sw(a), sw(b)) >> 16) & 0xffff);
    case PMULHUW: return lanes16(cpu, i, (a, b) => ((a * b) >>> 16) & 0xffff);
    case PAND: return lanes32(cpu, i, (a, b) => a & b);
    case PANDN: return lanes32(cpu, i, (a, b) => ~a & b);
    case POR: return lanes32(cpu, i, (a, b) => a | b);
    case PXOR:
      if (i.rm === i.reg) { const o = i.reg * 4, d = cpu.xd; d[o] = d[o + 1] = d[o + 2] = d[o + 3] = 0; return; }
      return lanes32(cpu, i, (a, b) => a ^ b);
    default: cpu.stop(new GuestFault('undefined', `sse op ${i.cc}`));
  }
}

/** pmuludq: the even dwords multiplied into two quadwords */
export function pmuludq(cpu: X86Cpu, i: Insn): void {
  const d = cpu.xd, s = src(cpu, i, 16) * 4, o = i.reg * 4;
  for (let k = 0; k < 4; k += 2) {
    const r = BigInt(d[o + k] >>> 0) * BigInt(d[s + k] >>> 0);
    d[o + k] = Number(r & 0xffffffffn) | 0; d[o + k + 1] = Number(r >> 32n) | 0;
  }
}
/** pmaddwd */
export function pmaddwd(cpu: X86Cpu, i: Insn): void {
  const w = cpu.xw, d = cpu.xd, s = src(cpu, i, 16) * 8, o = i.reg * 8;
  const r = [0, 0, 0, 0];
  for (let k = 0; k < 4; k++) r[k] = (sw(w[o + 2 * k]) * sw(w[s + 2 * k]) + sw(w[o + 2 * k + 1]) * sw(w[s + 2 * k + 1])) | 0;
  for (let k = 0; k < 4; k++) d[i.reg * 4 + k] = r[k];
}
/** psadbw: sums of absolute byte differences per 64-bit half */
export function psadbw(cpu: X86Cpu, i: Insn): void {
  const b = cpu.xb, d = cpu.xd, s = src(cpu, i, 16) * 16, o = i.reg * 16;
  const sums = [0, 0];
  for (let k = 0; k < 16; k++) sums[k >> 3] += Math.abs(b[o + k] - b[s + k]);
  d[i.reg * 4] = sums[0]; d[i.reg * 4 + 1] = 0; d[i.reg * 4 + 2] = sums[1]; d[i.reg * 4 + 3] = 0;
}

/** shifts by an xmm/m128 count (sub: lane size 2/4/8, + 16 right logical, + 32 right arithmetic) or an immediate (shiftImm) */
function shiftLanes(cpu: X86Cpu, reg: number, lane: number, kind: 'l' | 'r' | 'a', count: bigint): void {
  const d = cpu.xd, w = cpu.xw, o = reg;
  const bits = BigInt(lane * 8);
  if (lane === 2) {
    for (let k = 0; k < 8; k++) {
      const v = w[o * 8 + k];
      w[o * 8 + k] = count >= bits ? (kind === 'a' ? ((v & 0x8000) ? 0xffff : 0) : 0)
        : kind === 'l' ? (v << Number(count)) & 0xffff : kind === 'r' ? v >>> Number(count) : (sw(v) >> Number(count)) & 0xffff;
    }
  } else if (lane === 4) {
    for (let k = 0; k < 4; k++) {
      const v = d[o * 4 + k];
      d[o * 4 + k] = count >= bits ? (kind === 'a' ? v >> 31 : 0)
        : kind === 'l' ? v << Number(count) : kind === 'r' ? (v >>> Number(count)) | 0 : v >> Number(count);
    }
  } else {
    for (let k = 0; k < 4; k += 2) {
      const v = (BigInt(d[o * 4 + k + 1] >>> 0) << 32n) | BigInt(d[o * 4 + k] >>> 0);
      const r = count >= 64n ? 0n : kind === 'l' ? BigInt.asUintN(64, v << count) : v >> count;
      d[o * 4 + k] = Number(r & 0xffffffffn) | 0; d[o * 4 + k + 1] = Number(r >> 32n) | 0;
    }
  }
}
const SHIFT_KIND: ('l' | 'r' | 'a')[] = ['l', 'r', 'a'];
/** psll/psrl/psra w/d/q xmm, xmm/m128: sub = lane bytes + 16 * kind (0 l, 1 r, 2 a) */
export function shiftX(cpu: X86Cpu, i: Insn): void {
  const s = src(cpu, i, 16) * 4, d = cpu.xd;
  const count = (BigInt(d[s + 1] >>> 0) << 32n) | BigInt(d[s] >>> 0);
  shiftLanes(cpu, i.reg, i.cc & 15, SHIFT_KIND[i.cc >> 4], count);
}
/** the immediate forms (66 0f 71/72/73 /2 /4 /6): register in rm */
export function shiftI(cpu: X86Cpu, i: Insn): void {
  shiftLanes(cpu, i.rm, i.cc & 15, SHIFT_KIND[i.cc >> 4], BigInt(i.imm & 0xff));
}
/** psrldq (sub 0) / pslldq (sub 1): whole-register byte shifts */
export function shiftBytes(cpu: X86Cpu, i: Insn): void {
  const b = cpu.xb, o = i.rm * 16, n = i.imm & 0xff;
  const t = b.slice(o, o + 16);
  for (let k = 0; k < 16; k++) {
    const from = i.cc ? k - n : k + n;
    b[o + k] = from >= 0 && from < 16 ? t[from] : 0;
  }
}

/** punpckl/h bw/wd/dq/qdq and unpcklps/hps/pd: sub = lane bytes + 16 for the high halves */
export function unpack(cpu: X86Cpu, i: Insn): void {
  const b = cpu.xb, s = src(cpu, i, 16) * 16, o = i.reg * 16;
  const lane = i.cc & 15, half = i.cc & 16 ? 8 : 0;
  const a = b.slice(o, o + 16), c = b.slice(s, s + 16);
  for (let k = 0, at = 0; k < 8; k += lane) {
    for (let j = 0; j < lane; j++) b[o + at++] = a[half + k + j];
    for (let j = 0; j < lane; j++) b[o + at++] = c[half + k + j];
  }
}
/** packsswb (0) packuswb (1) packssdw (2) */
export function pack(cpu: X86Cpu, i: Insn): void {
  const s = src(cpu, i, 16);
  const d = cpu.xd, w = cpu.xw, b = cpu.xb;
  if (i.cc === 2) {
    const v = [...d.slice(i.reg * 4, i.reg * 4 + 4), ...d.slice(s * 4, s * 4 + 4)];
    for (let k = 0; k < 8; k++) w[i.reg * 8 + k] = satSw(v[k]);
  } else {
    const v = [...w.slice(i.reg * 8, i.reg * 8 + 8), ...w.slice(s * 8, s * 8 + 8)].map(sw);
    for (let k = 0; k < 16; k++) b[i.reg * 16 + k] = i.cc === 0 ? satSb(v[k]) : satUb(v[k]);
  }
}
/** pshufd (0), pshuflw (1), pshufhw (2) */
export function pshuf(cpu: X86Cpu, i: Insn): void {
  const s = src(cpu, i, 16), imm = i.imm & 0xff;
  if (i.cc === 0) {
    const d = cpu.xd, t = d.slice(s * 4, s * 4 + 4);
    for (let k = 0; k < 4; k++) d[i.reg * 4 + k] = t[(imm >> (2 * k)) & 3];
    return;
  }
  const w = cpu.xw, t = w.slice(s * 8, s * 8 + 8), base = i.cc === 1 ? 0 : 4;
  for (let k = 0; k < 8; k++) w[i.reg * 8 + k] = k >= base && k < base + 4 ? t[base + ((imm >> (2 * (k - base))) & 3)] : t[k];
}
/** shufps (0) / shufpd (1) */
export function shufp(cpu: X86Cpu, i: Insn): void {
  const s = src(cpu, i, 16), imm = i.imm & 0xff, d = cpu.xd;
  const a = d.slice(i.reg * 4, i.reg * 4 + 4), c = d.slice(s * 4, s * 4 + 4);
  if (i.cc === 0) {
    d[i.reg * 4] = a[imm & 3]; d[i.reg * 4 + 1] = a[(imm >> 2) & 3];
    d[i.reg * 4 + 2] = c[(imm >> 4) & 3]; d[i.reg * 4 + 3] = c[(imm >> 6) & 3];
  } else {
    const lo = imm & 1, hi = (imm >> 1) & 1;
    d[i.reg * 4] = a[lo * 2]; d[i.reg * 4 + 1] = a[lo * 2 + 1];
    d[i.reg * 4 + 2] = c[hi * 2]; d[i.reg * 4 + 3] = c[hi * 2 + 1];
  }
}
/** pextrw r32, xmm, imm8 */
export function pextrw(cpu: X86Cpu, i: Insn): void {
  cpu.setR(4, i.reg, cpu.xw[i.rm * 8 + (i.imm & 7)], 0);
}
/** pinsrw xmm, r32/m16, imm8 */
export function pinsrw(cpu: X86Cpu, i: Insn): void {
  const v = i.rm >= 0 ? cpu.getR(4, i.rm) : cpu.mem.read16(cpu.ea(i));
  cpu.xw[i.reg * 8 + (i.imm & 7)] = v & 0xffff;
}

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

// ---------------------------------------------------------------- state

export function ldmxcsr(cpu: X86Cpu, i: Insn): void {
  const v = cpu.mem.read32(cpu.ea(i)) >>> 0;
  if (v & 0xffff0000) throw new GuestFault('generalProtection', `ldmxcsr: reserved bits set in 0x${v.toString(16)}`);
  cpu.mxcsr = v;
}
export function stmxcsr(cpu: X86Cpu, i: Insn): void {
  cpu.mem.write32(cpu.ea(i), cpu.mxcsr);
}
/** fxsave: the legacy x87 control word (reset values), MXCSR and the xmm registers (512-byte area, 16-aligned) */
export function fxsave(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  if (a % 16 !== 0) throw new GuestFault('generalProtection', 'fxsave: unaligned area');
  const m = cpu.mem;
  m.write32(a + 508, 0);
  m.write16(a, cpu.fpuCw);
  m.write16(a + 2, 0); m.write16(a + 4, 0);
  m.write32(a + 24, cpu.mxcsr); m.write32(a + 28, 0xffff);
  for (let k = 0; k < 64; k++) m.write32(a + 160 + 4 * k, cpu.xd[k]);
}
export function fxrstor(cpu: X86Cpu, i: Insn): void {
  const a = cpu.ea(i);
  if (a % 16 !== 0) throw new GuestFault('generalProtection', 'fxrstor: unaligned area');
  const mx = cpu.mem.read32(a + 24) >>> 0;
  if (mx & 0xffff0000) throw new GuestFault('generalProtection', 'fxrstor: reserved MXCSR bits');
  for (let k = 0; k < 64; k++) cpu.xd[k] = cpu.mem.read32(a + 160 + 4 * k) | 0;
  cpu.mxcsr = mx;
}
