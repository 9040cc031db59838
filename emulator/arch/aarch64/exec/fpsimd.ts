/**
 * SIMD&FP: the V registers as compilers and C libraries use them
 * at default flags — loads and stores of B/H/S/D/Q registers (every
 * addressing form, pairs, literals, LD1/ST1 of 1-4 registers), scalar FP
 * (fmov in all its forms, arithmetic, fused multiply-add, compares into
 * NZCV, fcsel, conversions between FP precisions and to/from integers),
 * and the AdvSIMD integer operations the string functions use (movi/mvni,
 * the three-same arithmetic / compare / logic / pairwise set, two-register
 * misc, across-lanes reductions, dup/ins/umov, ext, shifts by immediate,
 * narrowing / widening, permutes, tbl). The rows: fpsimdMem.ts (loads and
 * stores), fpScalar.ts (scalar FP), advsimd.ts (AdvSIMD integer and data
 * movement), advsimdFp.ts (AdvSIMD FP vector), advsimdScalar.ts (AdvSIMD
 * scalar forms); the register views in fpsimdRegs.ts.
 *
 * Floating point follows the ARM ARM, not JavaScript: NaN operands are
 * processed as FPProcessNaNs does (the first signalling NaN, quieted, else
 * the first quiet NaN; FPCR.DN gives the default NaN 0x7fc00000 /
 * 0x7ff8...), an invalid operation gives the default NaN, conversions to
 * integers saturate (NaN -> 0) and set IOC; FPSR's IOC and DZC are kept.
 * + - * / sqrt round to nearest (single rounding through doubles is exact
 * for singles); fused multiply-add and integer-to-FP conversions go through
 * emulator/cpu/softfloat.ts with the FPCR rounding mode, the other
 * conversions take the mode they name (fcvtzs/zu truncate). Not modelled:
 * other rounding modes for + - * / sqrt, flush-to-zero, the IXC/UFC/OFC/IDC
 * flags, half precision arithmetic.
 */
import type { Row } from '../insn';
import { ldstUnsigned, ldstImm9, ldstRegOff, ldLiteral, ldstPair, ldst1Multiple, ld1rRow } from './fpsimdMem';
import { fp2, fp3, fp1, fcmpRow, fccmpRow, fcselRow, fmovImm, convRow } from './fpScalar';
import { simdModImm, threeSame, twoMisc, acrossRow, copyRow, extRow, shiftImmRow, threeDiff, permRow, tblRow } from './advsimd';
import { fpThreeSame } from './advsimdFp';
import { scalarShiftImm, scalarCopy, scalarPairwise, scalarMiscFp } from './advsimdScalar';

/** the SIMD&FP rows; before the integer load/store rows, whose masks do not look at the V bit */
export const FPSIMD_ROWS: readonly Row[] = [
  ldstUnsigned, ldstImm9, ldstRegOff, ldLiteral, ldstPair, ldst1Multiple, ld1rRow,
  fmovImm, fp1, fcmpRow, fp2, fccmpRow, fcselRow, fp3, convRow,
  simdModImm, shiftImmRow, scalarShiftImm, scalarCopy, scalarPairwise, scalarMiscFp, copyRow, tblRow, permRow, extRow, acrossRow, twoMisc, threeDiff, fpThreeSame, threeSame,
];
