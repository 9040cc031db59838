/**
 * Shifts and rotates: group 2 (rol ror rcl rcr shl shr sal sar) by 1, cl
 * or imm8, and shld/shrd. Flags per the SDM; where the SDM leaves a flag
 * undefined we produce what current Intel cores produce for the common
 * cases (OF for counts > 1 computed as for count 1, AF cleared for shifts,
 * kept by rotates).
 *
 * shl/shr/sar and rol/ror by a non-zero count record their flags lazily
 * (flags.ts F_SHL F_SHR F_SAR, F_ROL F_ROR): a shift whose flags nobody
 * reads costs no flag work. A count of 0 (after masking) changes no flag.
 */
import type { X86Cpu } from '../cpu';
import type { Insn, ExecFn } from '../insn';
import { CF, OF, szp, F_SHL, F_SHR, F_SAR, F_ROL, F_ROR, F_SHLD, F_SHRD } from '../flags';

export const SH_ROL = 0, SH_ROR = 1, SH_RCL = 2, SH_RCR = 3, SH_SHL = 4, SH_SHR = 5, SH_SAL = 6, SH_SAR = 7;
/** shift-count source, in Insn.imm2 */
export const COUNT_1 = 0, COUNT_CL = 1, COUNT_IMM = 2;

function msb(size: number, l: number, h: number): number {
  switch (size) {
    case 1: return (l >> 7) & 1;
    case 2: return (l >> 15) & 1;
    case 4: return (l >>> 31);
    default: return (h >>> 31);
  }
}

const MASKS = [0, 0xff, 0xffff, 0, 0xffffffff];

/** Record a shl/shr/sar (kind) of (dl, dh) by n (non-zero) giving (rl, rh). */
function recordShift(cpu: X86Cpu, kind: number, size: number, dl: number, dh: number, n: number, rl: number, rh: number): void {
  cpu.fOp = kind; cpu.fSz = size;
  cpu.fDl = dl; cpu.fDh = dh; cpu.fSl = n; cpu.fSh = 0; cpu.fRl = rl; cpu.fRh = rh; cpu.fCin = 0;
}

export function shiftGroup(cpu: X86Cpu, i: Insn): void {
  const size = i.size, bits = size * 8;
  const raw = i.imm2 === COUNT_1 ? 1 : i.imm2 === COUNT_CL ? cpu.lo[1] & 0xff : i.imm & 0xff;
  const count = raw & (size === 8 ? 0x3f : 0x1f);
  const a = i.rm >= 0 ? 0 : cpu.ea(i);
  let l = i.rm >= 0 ? cpu.getR(size, i.rm) : cpu.readM(size, a);
  let h = size === 8 ? cpu.th : 0;
  if (count === 0) {
    // no flags change; a 32-bit register destination is still zero-extended
    if (i.rm >= 0 && size === 4) cpu.hi[i.rm] = 0;
    return;
  }
  const op = i.cc;
  let dl = l;
  const dh = h;
  let kind: number;
  switch (op) {
    case SH_SHL: case SH_SAL: {
      if (size === 8) {
        if (count < 32) { h = (h << count) | (l >>> (32 - count)); l = l << count; }
        else { h = l << (count - 32); l = 0; }
      } else {
        l = count >= 32 ? 0 : (l << count);
        l = size === 4 ? l | 0 : l & MASKS[size];
      }
      kind = F_SHL;
      break;
    }
    case SH_SHR: {
      if (size === 8) {
        if (count < 32) { l = (l >>> count) | (h << (32 - count)); h = h >>> count; }
        else { l = h >>> (count - 32); h = 0; }
        l |= 0; h |= 0;
      } else {
        l = ((size === 4 ? l >>> 0 : l) >>> count) | 0;
      }
      kind = F_SHR;
      break;
    }
    case SH_SAR: {
      if (size === 8) {
        if (count < 32) { l = (l >>> count) | (h << (32 - count)); h = h >> count; }
        else { l = h >> (count - 32); h = h >> 31; }
        l |= 0;
      } else {
        // the lazy CF reads bit count - 1 of the operand sign-extended to 32 bits
        dl = size === 1 ? (l << 24) >> 24 : size === 2 ? (l << 16) >> 16 : l | 0;
        l = dl >> count;
        l = size === 4 ? l | 0 : l & MASKS[size];
      }
      kind = F_SAR;
      break;
    }
    case SH_ROL: case SH_ROR: {
      const n = count % bits;
      if (n !== 0) {
        if (size === 8) {
          let k = op === SH_ROL ? n : 64 - n;
          if (k >= 32) { const t = l; l = h; h = t; k -= 32; }
          if (k !== 0) { const nl = (l << k) | (h >>> (32 - k)); h = (h << k) | (l >>> (32 - k)); l = nl; }
        } else {
          const u = size === 4 ? l >>> 0 : l;
          const k = op === SH_ROL ? n : bits - n;
          l = (u << k) | (u >>> (bits - k));
          l = size === 4 ? l | 0 : l & MASKS[size];
        }
      }
      // CF OF from the result, SF ZF AF PF unchanged (also when count is a multiple of the width)
      if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
      cpu.setRotate(op === SH_ROL ? F_ROL : F_ROR, size, l, h);
      return;
    }
    default: { // rcl / rcr via bigint: rare
      const width = BigInt(bits);
      const n = BigInt(count % (bits + 1));
      const cin = cpu.cf() ? 1n : 0n;
      const m = (1n << width) - 1n;
      let v = size === 8 ? ((BigInt(h >>> 0) << 32n) | BigInt(l >>> 0)) : BigInt(size === 4 ? l >>> 0 : l);
      let x = (cin << width) | v; // width+1 bits, carry on top
      const W = width + 1n, M = (1n << W) - 1n;
      if (n !== 0n) {
        x = op === SH_RCL ? ((x << n) | (x >> (W - n))) & M : ((x >> n) | (x << (W - n))) & M;
      }
      v = x & m;
      const cf = Number(x >> width);
      l = Number(BigInt.asIntN(32, v)); h = Number(BigInt.asIntN(32, v >> 32n));
      if (size < 4) l &= MASKS[size];
      if (size === 4) h = 0;
      const top = msb(size, l, h);
      const of = op === SH_RCL ? top ^ cf : top ^ (size === 8 ? (h >>> 30) & 1 : (l >>> (bits - 2)) & 1);
      const flags = (cpu.arithFlags() & ~(CF | OF)) | (cf ? CF : 0) | (of ? OF : 0);
      if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
      cpu.setEager(flags); // SF ZF AF PF unchanged
      return;
    }
  }
  if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
  recordShift(cpu, kind, size, dl, dh, count, l, h);
}

// ---- specialised register forms with a constant count (c1 /n ib, d1 /n), chosen at decode time

/** the non-zero constant count of a c1/d1 shift (0 when masked to zero) */
function constCount(i: Insn): number {
  return (i.imm2 === COUNT_1 ? 1 : i.imm & 0xff) & (i.size === 8 ? 0x3f : 0x1f);
}
export const shl64RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], h = cpu.hi[r];
  let rl: number, rh: number;
  if (n < 32) { rh = (h << n) | (l >>> (32 - n)); rl = l << n; } else { rh = l << (n - 32); rl = 0; }
  cpu.lo[r] = rl; cpu.hi[r] = rh;
  recordShift(cpu, F_SHL, 8, l, h, n, rl, rh);
};
export const shr64RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], h = cpu.hi[r];
  let rl: number, rh: number;
  if (n < 32) { rl = (l >>> n) | (h << (32 - n)); rh = (h >>> n) | 0; } else { rl = (h >>> (n - 32)) | 0; rh = 0; }
  cpu.lo[r] = rl; cpu.hi[r] = rh;
  recordShift(cpu, F_SHR, 8, l, h, n, rl, rh);
};
export const sar64RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], h = cpu.hi[r];
  let rl: number, rh: number;
  if (n < 32) { rl = (l >>> n) | (h << (32 - n)); rh = h >> n; } else { rl = h >> (n - 32); rh = h >> 31; }
  cpu.lo[r] = rl; cpu.hi[r] = rh;
  recordShift(cpu, F_SAR, 8, l, h, n, rl, rh);
};
function rot64(cpu: X86Cpu, r: number, k: number, kind: number): void {
  let l = cpu.lo[r], h = cpu.hi[r];
  if (k >= 32) { const t = l; l = h; h = t; k -= 32; }
  if (k !== 0) { const nl = (l << k) | (h >>> (32 - k)); h = (h << k) | (l >>> (32 - k)); l = nl; }
  cpu.lo[r] = l; cpu.hi[r] = h;
  cpu.setRotate(kind, 8, l, h);
}
export const rol64RI: ExecFn = (cpu, i) => rot64(cpu, i.rm, constCount(i), F_ROL);
export const ror64RI: ExecFn = (cpu, i) => rot64(cpu, i.rm, 64 - constCount(i), F_ROR);
export const shl32RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], rl = l << n;
  cpu.lo[r] = rl; cpu.hi[r] = 0;
  recordShift(cpu, F_SHL, 4, l, 0, n, rl, 0);
};
export const shr32RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], rl = (l >>> n) | 0;
  cpu.lo[r] = rl; cpu.hi[r] = 0;
  recordShift(cpu, F_SHR, 4, l, 0, n, rl, 0);
};
export const sar32RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], rl = l >> n;
  cpu.lo[r] = rl; cpu.hi[r] = 0;
  recordShift(cpu, F_SAR, 4, l, 0, n, rl, 0);
};
export const rol32RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], rl = (l << n) | (l >>> (32 - n));
  cpu.lo[r] = rl; cpu.hi[r] = 0;
  cpu.setRotate(F_ROL, 4, rl, 0);
};
export const ror32RI: ExecFn = (cpu, i) => {
  const r = i.rm, n = constCount(i), l = cpu.lo[r], rl = (l >>> n) | (l << (32 - n));
  cpu.lo[r] = rl; cpu.hi[r] = 0;
  cpu.setRotate(F_ROR, 4, rl, 0);
};
const FAST64: (ExecFn | undefined)[] = [rol64RI, ror64RI, undefined, undefined, shl64RI, shr64RI, shl64RI, sar64RI];
const FAST32: (ExecFn | undefined)[] = [rol32RI, ror32RI, undefined, undefined, shl32RI, shr32RI, shl32RI, sar32RI];
/** Fast variant of a group-2 shift/rotate of a 32/64-bit register by a constant non-zero count, or undefined. */
export function fastShift(i: Insn): ExecFn | undefined {
  if (i.rm < 0 || i.rm >= 16 || i.imm2 === COUNT_CL || constCount(i) === 0) return undefined;
  return i.size === 8 ? FAST64[i.cc] : i.size === 4 ? FAST32[i.cc] : undefined;
}

let RL = 0, RH = 0;
/** (l, h) << n, n in 0..63, into RL/RH */
function shl64(l: number, h: number, n: number): void {
  if (n === 0) { RL = l; RH = h; } else if (n < 32) { RH = (h << n) | (l >>> (32 - n)); RL = l << n; } else { RH = l << (n - 32); RL = 0; }
}
/** (l, h) >>> n, n in 0..63, into RL/RH */
function shr64(l: number, h: number, n: number): void {
  if (n === 0) { RL = l; RH = h; } else if (n < 32) { RL = (l >>> n) | (h << (32 - n)); RH = h >>> n; } else { RL = h >>> (n - 32); RH = 0; }
}

/** shld / shrd E, G, imm8|cl (left: i.cc = 0, right: i.cc = 1; count source in imm2); AF cleared as Intel cores do */
export function shxd(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const raw = i.imm2 === COUNT_CL ? cpu.lo[1] & 0xff : i.imm & 0xff;
  const count = raw & (size === 8 ? 0x3f : 0x1f);
  const a = i.rm >= 0 ? 0 : cpu.ea(i);
  const dl = i.rm >= 0 ? cpu.getR(size, i.rm) : cpu.readM(size, a), dh = size === 8 ? cpu.th : 0;
  if (count === 0) { if (i.rm >= 0 && size === 4) cpu.hi[i.rm] = 0; return; }
  const sl = cpu.getR(size, i.reg), sh = size === 8 ? cpu.th : 0;
  let l: number, h = 0, cf = 0;
  if (size === 8) {
    if (i.cc === 0) {
      shl64(dl, dh, count); const al = RL, ah = RH;
      shr64(sl, sh, 64 - count);
      l = al | RL; h = ah | RH;
    } else {
      shr64(dl, dh, count); const al = RL, ah = RH;
      shl64(sl, sh, 64 - count);
      l = al | RL; h = ah | RH;
    }
    l |= 0; h |= 0;
  } else if (size === 4) {
    l = i.cc === 0 ? (dl << count) | (sl >>> (32 - count)) : (dl >>> count) | (sl << (32 - count));
  } else {
    // 16-bit: the 48-bit pattern dst:src:dst (counts > 16 are undefined; this is what Intel cores do)
    const d = BigInt(dl & 0xffff), sv = BigInt(sl & 0xffff), n = BigInt(count);
    let r: bigint;
    if (i.cc === 0) {
      const cat = (d << 32n) | (sv << 16n) | d;
      r = (cat << n >> 32n) & 0xffffn;
      cf = Number((cat >> (48n - n)) & 1n);
    } else {
      const cat = (d << 32n) | (sv << 16n) | d;
      r = (cat >> n) & 0xffffn;
      cf = Number((cat >> (n - 1n)) & 1n);
    }
    l = Number(r);
  }
  // 32/64: flags lazily (CF: the last bit shifted out of the destination; OF: its top bit changed)
  if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
  if (size === 2) cpu.setEager(szp(size, l, h) | (cf ? CF : 0) | (msb(size, l, h) ^ msb(size, dl, dh) ? OF : 0));
  else recordShift(cpu, i.cc === 0 ? F_SHLD : F_SHRD, size, dl, dh, count, l, h);
}

/** the non-zero constant count of an shld/shrd imm8 (0 when masked to zero) */
function shxdCount(i: Insn): number {
  return i.imm & (i.size === 8 ? 0x3f : 0x1f);
}
/** shld r64, r64, imm8 (also the rotate idiom shld r, r, n) */
export const shld64RRI: ExecFn = (cpu, i) => {
  const d = i.rm, n = shxdCount(i), lo = cpu.lo, hi = cpu.hi;
  const dl = lo[d], dh = hi[d], sl = lo[i.reg], sh = hi[i.reg];
  let l: number, h: number;
  if (n < 32) { h = (dh << n) | (dl >>> (32 - n)); l = (dl << n) | (sh >>> (32 - n)); }
  else if (n === 32) { h = dl; l = sh; }
  else { h = (dl << (n - 32)) | (sh >>> (64 - n)); l = (sh << (n - 32)) | (sl >>> (64 - n)); }
  lo[d] = l; hi[d] = h;
  recordShift(cpu, F_SHLD, 8, dl, dh, n, l, h);
};
/** shrd r64, r64, imm8 */
export const shrd64RRI: ExecFn = (cpu, i) => {
  const d = i.rm, n = shxdCount(i), lo = cpu.lo, hi = cpu.hi;
  const dl = lo[d], dh = hi[d], sl = lo[i.reg], sh = hi[i.reg];
  let l: number, h: number;
  if (n < 32) { l = (dl >>> n) | (dh << (32 - n)); h = (dh >>> n) | (sl << (32 - n)); }
  else if (n === 32) { l = dh; h = sl; }
  else { l = (dh >>> (n - 32)) | (sl << (64 - n)); h = (sl >>> (n - 32)) | (sh << (64 - n)); }
  lo[d] = l; hi[d] = h;
  recordShift(cpu, F_SHRD, 8, dl, dh, n, l, h);
};
/** shld r32, r32, imm8 */
export const shld32RRI: ExecFn = (cpu, i) => {
  const d = i.rm, n = shxdCount(i), dl = cpu.lo[d], l = (dl << n) | (cpu.lo[i.reg] >>> (32 - n));
  cpu.lo[d] = l; cpu.hi[d] = 0;
  recordShift(cpu, F_SHLD, 4, dl, 0, n, l, 0);
};
/** shrd r32, r32, imm8 */
export const shrd32RRI: ExecFn = (cpu, i) => {
  const d = i.rm, n = shxdCount(i), dl = cpu.lo[d], l = (dl >>> n) | (cpu.lo[i.reg] << (32 - n));
  cpu.lo[d] = l; cpu.hi[d] = 0;
  recordShift(cpu, F_SHRD, 4, dl, 0, n, l, 0);
};
/** Fast variant of shld/shrd r32/r64, r, imm8 with a non-zero count, or undefined. */
export function fastShxd(i: Insn): ExecFn | undefined {
  if (i.rm < 0 || i.imm2 === COUNT_CL || shxdCount(i) === 0) return undefined;
  if (i.size === 8) return i.cc === 0 ? shld64RRI : shrd64RRI;
  if (i.size === 4) return i.cc === 0 ? shld32RRI : shrd32RRI;
  return undefined;
}
