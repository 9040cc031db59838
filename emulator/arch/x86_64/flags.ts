/**
 * Lazy arithmetic flags (CF PF AF ZF SF OF).
 *
 * Arithmetic instructions record what they did (kind, operand size, the two
 * operands and the result, all as lo/hi int32 halves masked to the operand
 * size); a flag is computed only when something reads it (jcc, setcc, cmov,
 * adc/sbb, pushf...). Instructions whose flags are awkward to describe
 * lazily (shifts, mul, bit ops...) store the six flags eagerly (F_EAGER).
 */
import { InterpCpu } from '../../cpu/interp';
import type { X86Cpu } from './cpu';
import type { Insn } from './insn';

export const F_EAGER = 0;
export const F_ADD = 1;
export const F_ADC = 2;
export const F_SUB = 3;
export const F_SBB = 4;
export const F_LOGIC = 5;
export const F_INC = 6;
export const F_DEC = 7;

export const CF = 0x1;
export const PF = 0x4;
export const AF = 0x10;
export const ZF = 0x40;
export const SF = 0x80;
export const TF = 0x100;
export const IF = 0x200;
export const DF = 0x400;
export const OF = 0x800;
export const ARITH_MASK = CF | PF | AF | ZF | SF | OF;

/** PARITY[b] = PF bit (0x4) when b has an even number of set bits. */
export const PARITY = new Uint8Array(256);
for (let i = 0; i < 256; i++) {
  let n = 0;
  for (let b = i; b; b >>= 1) n += b & 1;
  PARITY[i] = n & 1 ? 0 : PF;
}

/** The lazy-flags record, on top of the interpreter core; the CPU extends this. */
export abstract class LazyFlags extends InterpCpu<X86Cpu, Insn> {
  fOp = F_EAGER;
  /** operand size in bytes */
  fSz = 4;
  fRl = 0; fRh = 0;
  fDl = 0; fDh = 0;
  fSl = 0; fSh = 0;
  /** carry in (adc/sbb) or the preserved CF (inc/dec) */
  fCin = 0;
  /** eager flags (F_EAGER): ARITH_MASK bits */
  fBits = 0;

  /** Record an op whose 6 flags are already known. */
  setEager(bits: number): void { this.fOp = F_EAGER; this.fBits = bits & ARITH_MASK; }

  cf(): boolean {
    switch (this.fOp) {
      case F_EAGER: return (this.fBits & CF) !== 0;
      case F_ADD: return ltu(this.fRl, this.fRh, this.fDl, this.fDh);
      case F_ADC: return this.fCin ? !ltu(this.fDl, this.fDh, this.fRl, this.fRh) : ltu(this.fRl, this.fRh, this.fDl, this.fDh);
      case F_SUB: return ltu(this.fDl, this.fDh, this.fSl, this.fSh);
      case F_SBB: return this.fCin ? !ltu(this.fSl, this.fSh, this.fDl, this.fDh) : ltu(this.fDl, this.fDh, this.fSl, this.fSh);
      case F_LOGIC: return false;
      default: return this.fCin !== 0; // INC / DEC keep CF
    }
  }
  zf(): boolean {
    if (this.fOp === F_EAGER) return (this.fBits & ZF) !== 0;
    return (this.fRl | this.fRh) === 0;
  }
  sf(): boolean {
    if (this.fOp === F_EAGER) return (this.fBits & SF) !== 0;
    return signOf(this.fSz, this.fRl, this.fRh) !== 0;
  }
  of(): boolean {
    switch (this.fOp) {
      case F_EAGER: return (this.fBits & OF) !== 0;
      case F_ADD: case F_ADC: case F_INC:
        return this.fSz === 8 ? ((this.fDh ^ this.fRh) & (this.fSh ^ this.fRh)) < 0
          : signOf(this.fSz, (this.fDl ^ this.fRl) & (this.fSl ^ this.fRl), 0) !== 0;
      case F_SUB: case F_SBB: case F_DEC:
        return this.fSz === 8 ? ((this.fDh ^ this.fSh) & (this.fDh ^ this.fRh)) < 0
          : signOf(this.fSz, (this.fDl ^ this.fSl) & (this.fDl ^ this.fRl), 0) !== 0;
      default: return false;
    }
  }
  pf(): boolean {
    if (this.fOp === F_EAGER) return (this.fBits & PF) !== 0;
    return PARITY[this.fRl & 0xff] !== 0;
  }
  af(): boolean {
    if (this.fOp === F_EAGER) return (this.fBits & AF) !== 0;
    if (this.fOp === F_LOGIC) return false;
    return ((this.fDl ^ this.fSl ^ this.fRl) & 0x10) !== 0;
  }
  /** The six arithmetic flags as rflags bits. */
  arithFlags(): number {
    if (this.fOp === F_EAGER) return this.fBits;
    return (this.cf() ? CF : 0) | (this.pf() ? PF : 0) | (this.af() ? AF : 0) |
      (this.zf() ? ZF : 0) | (this.sf() ? SF : 0) | (this.of() ? OF : 0);
  }
  /** Evaluate condition code cc (0..15, the jcc/setcc/cmovcc encoding). */
  cond(cc: number): boolean {
    let r: boolean;
    switch (cc >> 1) {
      case 0: r = this.of(); break;
      case 1: r = this.cf(); break;
      case 2: r = this.zf(); break;
      case 3: r = this.cf() || this.zf(); break;
      case 4: r = this.sf(); break;
      case 5: r = this.pf(); break;
      case 6: r = this.lt(); break;
      default: r = this.zf() || this.lt(); break;
    }
    return (cc & 1) ? !r : r;
  }
  /** SF != OF, with a fast path for compares. */
  lt(): boolean {
    if (this.fOp === F_SUB) {
      switch (this.fSz) {
        case 4: return (this.fDl | 0) < (this.fSl | 0);
        case 8: return this.fDh < this.fSh || (this.fDh === this.fSh && (this.fDl >>> 0) < (this.fSl >>> 0));
        case 1: return ((this.fDl << 24) | 0) < ((this.fSl << 24) | 0);
        default: return ((this.fDl << 16) | 0) < ((this.fSl << 16) | 0);
      }
    }
    return this.sf() !== this.of();
  }
}

/** unsigned (al,ah) < (bl,bh) */
export function ltu(al: number, ah: number, bl: number, bh: number): boolean {
  const a = ah >>> 0, b = bh >>> 0;
  return a < b || (a === b && (al >>> 0) < (bl >>> 0));
}

/** Sign bit of a value of `size` bytes, nonzero when set. */
export function signOf(size: number, lo: number, hi: number): number {
  switch (size) {
    case 1: return lo & 0x80;
    case 2: return lo & 0x8000;
    case 4: return lo & 0x80000000;
    default: return hi & 0x80000000;
  }
}

/** SF | ZF | PF for a result masked to size. */
export function szp(size: number, lo: number, hi: number): number {
  return (signOf(size, lo, hi) ? SF : 0) | ((lo | hi) === 0 ? ZF : 0) | PARITY[lo & 0xff];
}
