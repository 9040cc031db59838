/**
 * Bit operations: bt bts btr btc (register and imm8 offsets), bsf bsr,
 * tzcnt lzcnt popcnt. bt* with a register offset and a memory operand
 * address the bit string beyond the operand, as hardware does.
 * Undefined flags: bt* keep ZF and the others; bsf/bsr set ZF only;
 * tzcnt/lzcnt set CF and ZF; popcnt clears all but ZF.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { CF, ZF } from '../flags';

export const BT_BT = 0, BT_BTS = 1, BT_BTR = 2, BT_BTC = 3;

/** bt* E, G (i.cc = op) and bt* E, imm8 (imm2 = COUNT_IMM = 2) */
export function btOp(cpu: X86Cpu, i: Insn): void {
  const size = i.size, bits = size * 8, op = i.cc;
  let off: number;
  let a = 0;
  if (i.imm2 === 2) {
    off = i.imm & (bits - 1);
    if (i.rm < 0) a = cpu.ea(i);
  } else {
    const ol = cpu.getR(size, i.reg), oh = cpu.th;
    if (i.rm >= 0) off = ol & (bits - 1);
    else {
      // signed bit offset selects the operand-sized word
      const signed = size === 8 ? oh * 4294967296 + (ol >>> 0) : size === 4 ? ol | 0 : (ol << 16) >> 16;
      const word = Math.floor(signed / bits);
      off = signed - word * bits;
      a = cpu.eaPlus(i, word * size);
    }
  }
  let l: number, h = 0;
  if (i.rm >= 0) { l = cpu.getR(size, i.rm); h = cpu.th; } else { l = cpu.readM(size, a); h = cpu.th; }
  const inHi = size === 8 && off >= 32;
  const m = 1 << (inHi ? off - 32 : off);
  const was = ((inHi ? h : l) & m) !== 0;
  if (op !== BT_BT) {
    let w = inHi ? h : l;
    w = op === BT_BTS ? w | m : op === BT_BTR ? w & ~m : w ^ m;
    if (inHi) h = w; else l = w;
    if (size < 4) l &= size === 1 ? 0xff : 0xffff;
    if (i.rm >= 0) cpu.setR(size, i.rm, l, h); else cpu.writeM(size, a, l, h);
  }
  cpu.setEager((cpu.arithFlags() & ~CF) | (was ? CF : 0));
}

function ctz32(x: number): number { return x === 0 ? 32 : 31 - Math.clz32(x & -x); }

/** bsf (cc=0) / bsr (cc=1): destination unchanged when the source is zero */
export function bsfBsr(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const l = cpu.readE(i, size), h = size === 8 ? cpu.th : 0;
  const flags = cpu.arithFlags() & ~ZF;
  if ((l | h) === 0) { cpu.setEager(flags | ZF); return; }
  let r: number;
  if (i.cc === 0) r = l !== 0 ? ctz32(l) : 32 + ctz32(h);
  else r = h !== 0 ? 63 - Math.clz32(h) : 31 - Math.clz32(l);
  cpu.setR(size, i.reg, r, 0);
  cpu.setEager(flags);
}

/** tzcnt (cc=0) / lzcnt (cc=1) */
export function tzLzcnt(cpu: X86Cpu, i: Insn): void {
  const size = i.size, bits = size * 8;
  const l = cpu.readE(i, size), h = size === 8 ? cpu.th : 0;
  let r: number;
  if ((l | h) === 0) r = bits;
  else if (i.cc === 0) r = size === 8 ? (l !== 0 ? ctz32(l) : 32 + ctz32(h)) : ctz32(l);
  else if (size === 8) r = h !== 0 ? Math.clz32(h) : 32 + Math.clz32(l);
  else r = Math.clz32(l) - (32 - bits);
  cpu.setR(size, i.reg, r, 0);
  const flags = cpu.arithFlags() & ~(CF | ZF);
  cpu.setEager(flags | (r === bits ? CF : 0) | (r === 0 ? ZF : 0));
}

function pop32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
export function popcnt(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const l = cpu.readE(i, size), h = size === 8 ? cpu.th : 0;
  const r = pop32(size === 2 ? l & 0xffff : l) + pop32(h);
  cpu.setR(size, i.reg, r, 0);
  cpu.setEager(r === 0 ? ZF : 0);
}
