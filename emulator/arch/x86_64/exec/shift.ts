/**
 * Shifts and rotates: group 2 (rol ror rcl rcr shl shr sal sar) by 1, cl
 * or imm8, and shld/shrd. Flags per the SDM; where the SDM leaves a flag
 * undefined we produce what current Intel cores produce for the common
 * cases (OF for counts > 1 computed as for count 1, AF cleared for shifts).
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { CF, OF, AF, szp } from '../flags';

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
/** bit n (0..63) of (l, h) */
function bit(l: number, h: number, n: number): number {
  return n < 32 ? (l >>> n) & 1 : (h >>> (n - 32)) & 1;
}

const MASKS = [0, 0xff, 0xffff, 0, 0xffffffff];

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
  let flags = 0;
  let cf = 0, of = 0;
  switch (op) {
    case SH_SHL: case SH_SAL: {
      if (size === 8) {
        cf = bit(l, h, 64 - count);
        if (count < 32) { h = (h << count) | (l >>> (32 - count)); l = l << count; }
        else { h = l << (count - 32); l = 0; }
      } else {
        cf = count <= bits ? (l >>> (bits - count)) & 1 : 0;
        l = count >= 32 ? 0 : (l << count);
        l = size === 4 ? l | 0 : l & MASKS[size];
      }
      of = msb(size, l, h) ^ cf;
      flags = szp(size, l, h) | (cf ? CF : 0) | (of ? OF : 0);
      break;
    }
    case SH_SHR: {
      of = msb(size, l, h);
      if (size === 8) {
        cf = bit(l, h, count - 1);
        if (count < 32) { l = (l >>> count) | (h << (32 - count)); h = h >>> count; }
        else { l = h >>> (count - 32); h = 0; }
        l |= 0; h |= 0;
      } else {
        const u = size === 4 ? l >>> 0 : l;
        cf = count <= 32 ? (u >>> (count - 1)) & 1 : 0;
        l = count >= 32 ? 0 : (u >>> count) | 0;
      }
      flags = szp(size, l, h) | (cf ? CF : 0) | (of ? OF : 0);
      break;
    }
    case SH_SAR: {
      if (size === 8) {
        cf = bit(l, h, count - 1);
        if (count < 32) { l = (l >>> count) | (h << (32 - count)); h = h >> count; }
        else { l = h >> (count - 32); h = h >> 31; }
        l |= 0;
      } else {
        const s = size === 1 ? (l << 24) >> 24 : size === 2 ? (l << 16) >> 16 : l | 0;
        const c = count > 31 ? 31 : count;
        cf = count > 31 ? (s >>> 31) & 1 : (s >> (c - 1)) & 1;
        l = s >> c;
        l = size === 4 ? l | 0 : l & MASKS[size];
      }
      flags = szp(size, l, h) | (cf ? CF : 0);
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
          l = k === 0 ? u : ((u << k) | (u >>> (bits - k)));
          l = size === 4 ? l | 0 : l & MASKS[size];
        }
      }
      const old = cpu.arithFlags() & ~(CF | OF);
      if (op === SH_ROL) { cf = l & 1; of = msb(size, l, h) ^ cf; }
      else {
        cf = msb(size, l, h);
        const second = size === 8 ? (h >>> 30) & 1 : (l >>> (bits - 2)) & 1;
        of = cf ^ second;
      }
      flags = old | (cf ? CF : 0) | (of ? OF : 0);
      break;
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
      cf = Number(x >> width);
      l = Number(BigInt.asIntN(32, v)); h = Number(BigInt.asIntN(32, v >> 32n));
      if (size < 4) l &= MASKS[size];
      if (size === 4) h = 0;
      const top = msb(size, l, h);
      if (op === SH_RCL) of = top ^ cf;
      else of = top ^ (size === 8 ? (h >>> 30) & 1 : (l >>> (bits - 2)) & 1);
      flags = (cpu.arithFlags() & ~(CF | OF)) | (cf ? CF : 0) | (of ? OF : 0);
      break;
    }
  }
  if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
  cpu.setEager(flags & ~AF);
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

/** shld / shrd E, G, imm8|cl (left: i.cc = 0, right: i.cc = 1; count source in imm2) */
export function shxd(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const raw = i.imm2 === COUNT_CL ? cpu.lo[1] & 0xff : i.imm & 0xff;
  const count = raw & (size === 8 ? 0x3f : 0x1f);
  const a = i.rm >= 0 ? 0 : cpu.ea(i);
  const dl = i.rm >= 0 ? cpu.getR(size, i.rm) : cpu.readM(size, a), dh = size === 8 ? cpu.th : 0;
  if (count === 0) { if (i.rm >= 0 && size === 4) cpu.hi[i.rm] = 0; return; }
  const sl = cpu.getR(size, i.reg), sh = size === 8 ? cpu.th : 0;
  let l: number, h = 0, cf: number;
  if (size === 8) {
    if (i.cc === 0) {
      shl64(dl, dh, count); const al = RL, ah = RH;
      shr64(sl, sh, 64 - count);
      l = al | RL; h = ah | RH;
      cf = bit(dl, dh, 64 - count);
    } else {
      shr64(dl, dh, count); const al = RL, ah = RH;
      shl64(sl, sh, 64 - count);
      l = al | RL; h = ah | RH;
      cf = bit(dl, dh, count - 1);
    }
    l |= 0; h |= 0;
  } else if (size === 4) {
    if (i.cc === 0) { l = (dl << count) | (sl >>> (32 - count)); cf = (dl >>> (32 - count)) & 1; }
    else { l = (dl >>> count) | (sl << (32 - count)); cf = (dl >>> (count - 1)) & 1; }
    l |= 0;
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
  const of = msb(size, l, h) ^ msb(size, dl, dh);
  if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
  cpu.setEager(szp(size, l, h) | (cf ? CF : 0) | (of ? OF : 0));
}
