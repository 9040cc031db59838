/**
 * SSE2 integer SIMD: add / sub (wrapping and saturating) / compare / min /
 * max / average / logic, multiplies (pmullw, pmulhw, pmuludq, pmaddwd),
 * psadbw, shifts (by xmm, by immediate, by bytes), unpacks, packs,
 * shuffles, pextrw / pinsrw. Operand access is sse.ts's.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { GuestFault } from '../../../cpu/faults';
import { lanes8, lanes16, lanes32, src } from './sse';

// ---------------------------------------------------------------- integer SIMD

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
