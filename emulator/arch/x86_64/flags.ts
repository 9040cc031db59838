/**
 * Lazy arithmetic flags (CF PF AF ZF SF OF).
 *
 * Arithmetic instructions record what they did (kind, operand size, the two
 * operands and the result, all as lo/hi int32 halves masked to the operand
 * size); a flag is computed only when something reads it (jcc, setcc, cmov,
 * adc/sbb, pushf...). Instructions whose flags are awkward to describe
 * lazily (one-operand mul, bit ops, rcl/rcr...) store the six flags eagerly
 * (F_EAGER).
 *
 * Shifts (shl/sal/shr/sar by a non-zero count) record the operand before
 * the shift in fD, the masked count in fSl and the result in fR. Rotates
 * (rol/ror) write only CF and OF: they record their result and keep the
 * record they replace in the p* fields, which supplies SF ZF AF PF when one
 * of those is read (the pair is then folded into eager bits). shld/shrd at
 * 32/64 bits record like shl/shr (CF: the last bit shifted out of the
 * destination; OF: its top bit changed). Two-/three-operand imul records
 * its operands and the truncated product; CF = OF (the product did not fit
 * the destination) is worked out only when read.
 */
import { InterpCpu } from '../../cpu/interp';
import type { X86Cpu } from './cpu';
import type { Insn } from './insn';
import { MUL_OUT, muls64 } from './exec/mul64';

export const F_EAGER = 0;
/** rol / ror: CF OF from fR, SF ZF AF PF from the saved record (p*) */
export const F_ROL = 1;
export const F_ROR = 2;
export const F_ADD = 3;
export const F_ADC = 4;
export const F_SUB = 5;
export const F_SBB = 6;
export const F_LOGIC = 7;
export const F_INC = 8;
export const F_DEC = 9;
/** shl/sal, shr, sar by fSl (1..63): fD the value shifted, fR the result */
export const F_SHL = 10;
export const F_SHR = 11;
export const F_SAR = 12;
/** shld / shrd (32/64-bit) by fSl: fD the destination before, fR the result */
export const F_SHLD = 13;
export const F_SHRD = 14;
/** imul G, E[, imm]: fD * fS truncated to fSz is fR; CF = OF = the signed product did not fit */
export const F_IMUL = 15;

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
  /** the record a rotate replaced (never itself a rotate): SF ZF AF PF after rol/ror */
  pOp = F_EAGER; pSz = 4;
  pRl = 0; pRh = 0; pDl = 0; pDh = 0; pSl = 0; pSh = 0; pCin = 0; pBits = 0;

  /** Record an op whose 6 flags are already known. */
  setEager(bits: number): void { this.fOp = F_EAGER; this.fBits = bits & ARITH_MASK; }

  /**
   * Record a rotate (F_ROL / F_ROR) with result (l, h) at size: CF and OF
   * come from the result, the other four flags stay what they were.
   */
  setRotate(op: number, size: number, l: number, h: number): void {
    if (this.fOp !== F_ROL && this.fOp !== F_ROR) {
      this.pOp = this.fOp; this.pSz = this.fSz; this.pRl = this.fRl; this.pRh = this.fRh;
      this.pDl = this.fDl; this.pDh = this.fDh; this.pSl = this.fSl; this.pSh = this.fSh;
      this.pCin = this.fCin; this.pBits = this.fBits;
    }
    this.fOp = op; this.fSz = size; this.fRl = l; this.fRh = h;
  }
  /** The eager bits, folding a rotate record and the one it replaced into them first. */
  private eagerBits(): number {
    if (this.fOp !== F_EAGER) {
      const rot = (this.cf() ? CF : 0) | (this.of() ? OF : 0);
      this.fOp = this.pOp; this.fSz = this.pSz; this.fRl = this.pRl; this.fRh = this.pRh;
      this.fDl = this.pDl; this.fDh = this.pDh; this.fSl = this.pSl; this.fSh = this.pSh;
      this.fCin = this.pCin; this.fBits = this.pBits;
      this.setEager((this.arithFlags() & ~(CF | OF)) | rot);
    }
    return this.fBits;
  }

  cf(): boolean {
    switch (this.fOp) {
      case F_EAGER: return (this.fBits & CF) !== 0;
      case F_ADD: return ltu(this.fRl, this.fRh, this.fDl, this.fDh);
      case F_ADC: return this.fCin ? !ltu(this.fDl, this.fDh, this.fRl, this.fRh) : ltu(this.fRl, this.fRh, this.fDl, this.fDh);
      case F_SUB: return ltu(this.fDl, this.fDh, this.fSl, this.fSh);
      case F_SBB: return this.fCin ? !ltu(this.fSl, this.fSh, this.fDl, this.fDh) : ltu(this.fDl, this.fDh, this.fSl, this.fSh);
      case F_LOGIC: return false;
      case F_INC: case F_DEC: return this.fCin !== 0;
      case F_SHL: case F_SHLD: return shlCf(this.fSz, this.fDl, this.fDh, this.fSl) !== 0;
      case F_SHR: case F_SAR: case F_SHRD: return shrCf(this.fSz, this.fDl, this.fDh, this.fSl) !== 0;
      case F_ROL: return (this.fRl & 1) !== 0;
      case F_ROR: return signOf(this.fSz, this.fRl, this.fRh) !== 0;
      default: return this.mulOverflow(); // F_IMUL
    }
  }
  zf(): boolean {
    if (this.fOp < F_ADD) return (this.eagerBits() & ZF) !== 0;
    return (this.fRl | this.fRh) === 0;
  }
  sf(): boolean {
    if (this.fOp < F_ADD) return (this.eagerBits() & SF) !== 0;
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
      case F_LOGIC: case F_SAR: return false;
      // shl: (for counts > 1 as for count 1, what Intel cores do) top bit of the result xor CF
      case F_SHL: return (signOf(this.fSz, this.fRl, this.fRh) !== 0) !== (shlCf(this.fSz, this.fDl, this.fDh, this.fSl) !== 0);
      // shr: the top bit of the operand
      case F_SHR: return signOf(this.fSz, this.fDl, this.fDh) !== 0;
      // shld / shrd: the top bit changed (for counts > 1 as for count 1)
      case F_SHLD: case F_SHRD: return (signOf(this.fSz, this.fRl, this.fRh) !== 0) !== (signOf(this.fSz, this.fDl, this.fDh) !== 0);
      // rol: top bit of the result xor CF (its low bit); ror: the top two bits of the result differ
      case F_ROL: return (signOf(this.fSz, this.fRl, this.fRh) !== 0) !== ((this.fRl & 1) !== 0);
      case F_ROR: return (signOf(this.fSz, this.fRl, this.fRh) !== 0) !== (signOf(this.fSz, this.fRl << 1, this.fRh << 1 | this.fRl >>> 31) !== 0);
      default: return this.mulOverflow(); // F_IMUL
    }
  }
  pf(): boolean {
    if (this.fOp < F_ADD) return (this.eagerBits() & PF) !== 0;
    return PARITY[this.fRl & 0xff] !== 0;
  }
  af(): boolean {
    const op = this.fOp;
    if (op < F_ADD) return (this.eagerBits() & AF) !== 0;
    // logic ops clear AF; so do the shifts and shld/shrd (as Intel cores do: undefined per the SDM) and imul (undefined)
    if (op === F_LOGIC || op >= F_SHL) return false;
    return ((this.fDl ^ this.fSl ^ this.fRl) & 0x10) !== 0;
  }
  /** imul G, E[, imm]: the signed product of fD and fS does not fit in fSz bytes. */
  private mulOverflow(): boolean {
    switch (this.fSz) {
      case 8: return imulOverflow64(this.fDl, this.fDh, this.fSl, this.fSh);
      case 4: {
        // the double product may round above 2^53, but never across +-2^31, so the range test is exact
        const p = (this.fDl | 0) * (this.fSl | 0);
        return p < -2147483648 || p >= 2147483648;
      }
      default: {
        const p = ((this.fDl << 16) >> 16) * ((this.fSl << 16) >> 16);
        return p !== (p << 16) >> 16;
      }
    }
  }
  /** The six arithmetic flags as rflags bits. */
  arithFlags(): number {
    const op = this.fOp;
    if (op < F_ADD) return this.eagerBits();
    // PF ZF SF from the result (zf / sf / pf of every non-rotate record); logic ops clear CF OF AF
    const rl = this.fRl, rh = this.fRh;
    const szp = PARITY[rl & 0xff] | ((rl | rh) === 0 ? ZF : 0) | (signOf(this.fSz, rl, rh) !== 0 ? SF : 0);
    if (op === F_LOGIC) return szp;
    return szp | (this.cf() ? CF : 0) | (this.af() ? AF : 0) | (this.of() ? OF : 0);
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

/** CF of shl by n (1..31 below 64 bits, 1..63 at 64) of the size-masked (l, h): the last bit shifted out */
export function shlCf(size: number, l: number, h: number, n: number): number {
  if (size === 8) return n <= 32 ? (h >>> (32 - n)) & 1 : (l >>> (64 - n)) & 1;
  const bits = size * 8;
  return n <= bits ? (l >>> (bits - n)) & 1 : 0;
}
/**
 * CF of shr / sar by n of (l, h): bit n - 1. Below 64 bits, shr sees the
 * zero-extended value (8/16: masked, non-negative; 32: l >>> 0), sar the
 * sign-extended one (an 8/16-bit sar passes l sign-extended to 32 bits).
 */
export function shrCf(size: number, l: number, h: number, n: number): number {
  if (size === 8) return n <= 32 ? (l >>> (n - 1)) & 1 : (h >>> (n - 33)) & 1;
  return n <= 32 ? (l >>> (n - 1)) & 1 : 0;
}

/**
 * The signed product of the 64-bit (al, ah) and (bl, bh) does not fit in
 * 64 bits (imul's CF = OF). Int32 operands never overflow; otherwise a double
 * estimate decides when it is far from 2^63, and the exact 128-bit product
 * decides the rest.
 */
export function imulOverflow64(al: number, ah: number, bl: number, bh: number): boolean {
  if (ah === (al >> 31) && bh === (bl >> 31)) return false;
  const p = Math.abs((ah * 4294967296 + (al >>> 0)) * (bh * 4294967296 + (bl >>> 0)));
  if (p < 4611686018427387904) return false; // 2^62: the relative error is far below 1/2
  if (p >= 36893488147419103232) return true; // 2^65
  muls64(al, ah, bl, bh);
  const ext = MUL_OUT[1] >> 31;
  return MUL_OUT[2] !== ext || MUL_OUT[3] !== ext;
}
