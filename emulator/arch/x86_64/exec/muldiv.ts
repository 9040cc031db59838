/**
 * mul / imul (one-, two- and three-operand forms) / div / idiv.
 * CF = OF = "upper half significant"; SF ZF PF AF are architecturally
 * undefined after multiplication: we set SF/ZF/PF from the low result and
 * clear AF (two-/three-operand imul: lazily, flags.ts F_IMUL). Division
 * leaves the flags unchanged (undefined per the SDM).
 */
import type { X86Cpu } from '../cpu';
import type { Insn, ExecFn } from '../insn';
import { CF, OF, F_IMUL, szp } from '../flags';
import { FAULT_DE } from '../../../cpu/faults';
import { MUL_OUT, mulu64, muls64, mulLo64, umulhi32 } from './mul64';

function u64(l: number, h: number): bigint { return (BigInt(h >>> 0) << 32n) | BigInt(l >>> 0); }
function s64(l: number, h: number): bigint { return (BigInt(h | 0) << 32n) | BigInt(l >>> 0); }
function sext(size: number, v: number): number {
  return size === 1 ? (v << 24) >> 24 : size === 2 ? (v << 16) >> 16 : v | 0;
}

function mulFlags(cpu: X86Cpu, size: number, l: number, h: number, overflow: boolean): void {
  cpu.setEager(szp(size, l, h) | (overflow ? CF | OF : 0));
}

/** group 3 /4 mul, /5 imul: rdx:rax = rax * E */
export function mul1(cpu: X86Cpu, i: Insn): void {
  const size = i.size, signed = i.cc === 5;
  const src = cpu.readE(i, size), srcH = cpu.th;
  const lo = cpu.lo, hi = cpu.hi;
  if (size === 8) {
    if (signed) muls64(lo[0], hi[0], src, srcH); else mulu64(lo[0], hi[0], src, srcH);
    const l0 = MUL_OUT[0], l1 = MUL_OUT[1], h0 = MUL_OUT[2], h1 = MUL_OUT[3];
    const ext = signed ? l1 >> 31 : 0; // what the high half is when it is not significant
    const ovf = h0 !== ext || h1 !== ext;
    lo[0] = l0; hi[0] = l1; lo[2] = h0; hi[2] = h1;
    mulFlags(cpu, 8, l0, l1, ovf);
    return;
  }
  if (size === 4) {
    const a = signed ? BigInt(lo[0] | 0) : BigInt(lo[0] >>> 0);
    const b = signed ? BigInt(src | 0) : BigInt(src >>> 0);
    const p = a * b;
    const l = Number(BigInt.asIntN(32, p)), hh = Number(BigInt.asIntN(32, p >> 32n));
    const ovf = signed ? p !== BigInt(l) : hh !== 0;
    lo[0] = l; hi[0] = 0; lo[2] = hh; hi[2] = 0;
    mulFlags(cpu, 4, l, 0, ovf);
    return;
  }
  const a = signed ? sext(size, cpu.getR(size, 0)) : cpu.getR(size, 0);
  const b = signed ? sext(size, src) : src;
  const p = a * b; // exact: < 2^32
  if (size === 1) {
    const r = p & 0xffff;
    lo[0] = (lo[0] & ~0xffff) | r;
    const ovf = signed ? p !== ((p << 24) >> 24) : (r >> 8) !== 0;
    mulFlags(cpu, 1, r & 0xff, 0, ovf);
  } else {
    const r = p & 0xffff, hh = (p >>> 16) & 0xffff;
    lo[0] = (lo[0] & ~0xffff) | r;
    lo[2] = (lo[2] & ~0xffff) | hh;
    const ovf = signed ? p !== ((p << 16) >> 16) : hh !== 0;
    mulFlags(cpu, 2, r, 0, ovf);
  }
}

/**
 * imul G, E (0f af) and imul G, E, imm (69 / 6b) — i.cc = 1 for the immediate forms.
 * Only the truncated product is computed here; CF = OF (it did not fit) is
 * left to the lazy flags (F_IMUL), which work it out when something reads it.
 */
export function imul2(cpu: X86Cpu, i: Insn): void {
  const size = i.size;
  const el = cpu.readE(i, size), eh = size === 8 ? cpu.th : 0;
  let bl: number, bh: number;
  if (i.cc === 1) { bl = i.imm; bh = i.immHi; } else { bl = cpu.getR(size, i.reg); bh = size === 8 ? cpu.th : 0; }
  let l: number, h = 0;
  if (size === 8) {
    mulLo64(el, eh, bl, bh);
    l = MUL_OUT[0]; h = MUL_OUT[1];
  } else if (size === 4) {
    l = Math.imul(el, bl);
  } else {
    l = Math.imul(el, bl) & 0xffff;
  }
  cpu.setR(size, i.reg, l, h);
  cpu.fOp = F_IMUL; cpu.fSz = size;
  cpu.fDl = el; cpu.fDh = eh; cpu.fSl = bl; cpu.fSh = bh; cpu.fRl = l; cpu.fRh = h; cpu.fCin = 0;
}

/** imul r64, r64 (0f af, register source): imul2 without the operand dispatch */
export function imul64RR(cpu: X86Cpu, i: Insn): void {
  const lo = cpu.lo, hi = cpu.hi, d = i.reg, s = i.rm;
  const al = lo[d], ah = hi[d], bl = lo[s], bh = hi[s];
  const l = Math.imul(al, bl);
  const h = (umulhi32(al, bl) + Math.imul(al, bh) + Math.imul(ah, bl)) | 0;
  lo[d] = l; hi[d] = h;
  cpu.fOp = F_IMUL; cpu.fSz = 8;
  cpu.fDl = bl; cpu.fDh = bh; cpu.fSl = al; cpu.fSh = ah; cpu.fRl = l; cpu.fRh = h; cpu.fCin = 0;
}
/** imul r32, r32 (0f af, register source) */
export function imul32RR(cpu: X86Cpu, i: Insn): void {
  const d = i.reg, al = cpu.lo[d], bl = cpu.lo[i.rm];
  const l = Math.imul(al, bl);
  cpu.lo[d] = l; cpu.hi[d] = 0;
  cpu.fOp = F_IMUL; cpu.fSz = 4;
  cpu.fDl = bl; cpu.fDh = 0; cpu.fSl = al; cpu.fSh = 0; cpu.fRl = l; cpu.fRh = 0; cpu.fCin = 0;
}
/** Fast variant of imul G, E for register operands at 32/64 bits, or undefined. */
export function fastImul2(i: Insn): ExecFn | undefined {
  if (i.rm < 0 || i.cc !== 0) return undefined;
  return i.size === 8 ? imul64RR : i.size === 4 ? imul32RR : undefined;
}

/** group 3 /6 div, /7 idiv */
export function div1(cpu: X86Cpu, i: Insn): void {
  const size = i.size, signed = i.cc === 7;
  const src = cpu.readE(i, size), srcH = cpu.th;
  const lo = cpu.lo, hi = cpu.hi;
  if (size === 8 || size === 4) {
    let dividend: bigint, divisor: bigint;
    if (size === 8) {
      const u = (u64(lo[2], hi[2]) << 64n) | u64(lo[0], hi[0]);
      dividend = signed ? BigInt.asIntN(128, u) : u;
      divisor = signed ? s64(src, srcH) : u64(src, srcH);
    } else {
      const u = (BigInt(lo[2] >>> 0) << 32n) | BigInt(lo[0] >>> 0);
      dividend = signed ? BigInt.asIntN(64, u) : u;
      divisor = signed ? BigInt(src | 0) : BigInt(src >>> 0);
    }
    if (divisor === 0n) throw FAULT_DE;
    const q = dividend / divisor, r = dividend % divisor;
    const bits = BigInt(size * 8);
    if (signed ? q !== BigInt.asIntN(Number(bits), q) : q >> bits !== 0n) throw FAULT_DE;
    if (size === 8) {
      const qu = BigInt.asUintN(64, q), ru = BigInt.asUintN(64, r);
      lo[0] = Number(qu & 0xffffffffn) | 0; hi[0] = Number(qu >> 32n) | 0;
      lo[2] = Number(ru & 0xffffffffn) | 0; hi[2] = Number(ru >> 32n) | 0;
    } else {
      lo[0] = Number(BigInt.asIntN(32, q)); hi[0] = 0;
      lo[2] = Number(BigInt.asIntN(32, r)); hi[2] = 0;
    }
    return;
  }
  if (size === 2) {
    const u = ((lo[2] & 0xffff) << 16 | (lo[0] & 0xffff)) >>> 0;
    const dividend = signed ? u | 0 : u;
    const divisor = signed ? sext(2, src) : src;
    if (divisor === 0) throw FAULT_DE;
    const q = Math.trunc(dividend / divisor), r = dividend - q * divisor;
    if (signed ? q !== sext(2, q & 0xffff) : q > 0xffff) throw FAULT_DE;
    lo[0] = (lo[0] & ~0xffff) | (q & 0xffff);
    lo[2] = (lo[2] & ~0xffff) | (r & 0xffff);
    return;
  }
  const ax = lo[0] & 0xffff;
  const dividend = signed ? sext(2, ax) : ax;
  const divisor = signed ? sext(1, src) : src;
  if (divisor === 0) throw FAULT_DE;
  const q = Math.trunc(dividend / divisor), r = dividend - q * divisor;
  if (signed ? q !== sext(1, q & 0xff) : q > 0xff) throw FAULT_DE;
  lo[0] = (lo[0] & ~0xffff) | ((r & 0xff) << 8) | (q & 0xff);
}
