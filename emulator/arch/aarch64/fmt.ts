/**
 * Field extraction and operand formatting shared by the encoding table's
 * rows: register names in llvm-objdump's spelling (x/w, sp/wsp, xzr/wzr),
 * immediates, condition names, shift/extend names, and the slot mapping of
 * register 31 (regs.ts).
 */
import { SP, ZR_READ, ZR_WRITE } from './regs';

/** bits [lo, lo+len) of w */
export function f(w: number, lo: number, len: number): number { return (w >>> lo) & ((1 << len) - 1) >>> 0; }
/** sign-extended bits [lo, lo+len) of w */
export function sf(w: number, lo: number, len: number): number { return (w << (32 - lo - len)) >> (32 - len); }

/** slot of a source register where 31 is the zero register */
export function rZ(n: number): number { return n === 31 ? ZR_READ : n; }
/** slot of a destination register where 31 is the zero register */
export function wZ(n: number): number { return n === 31 ? ZR_WRITE : n; }
/** slot of a register where 31 is sp */
export function rS(n: number): number { return n === 31 ? SP : n; }

/** register name, 31 = zero register */
export function gz(n: number, sf64: number): string { return n === 31 ? (sf64 ? 'xzr' : 'wzr') : (sf64 ? 'x' : 'w') + n; }
/** register name, 31 = sp */
export function gs(n: number, sf64: number): string { return n === 31 ? (sf64 ? 'sp' : 'wsp') : (sf64 ? 'x' : 'w') + n; }
/** base register of an address (64-bit, 31 = sp) */
export function base(n: number): string { return gs(n, 1); }

export const COND = ['eq', 'ne', 'hs', 'lo', 'mi', 'pl', 'vs', 'vc', 'hi', 'ls', 'ge', 'lt', 'gt', 'le', 'al', 'nv'] as const;
export const SHIFT = ['lsl', 'lsr', 'asr', 'ror'] as const;
export const EXTEND = ['uxtb', 'uxth', 'uxtw', 'uxtx', 'sxtb', 'sxth', 'sxtw', 'sxtx'] as const;

export function imm(v: number | bigint): string { return `#${v}`; }
export function hexImm(v: number | bigint): string { return `#0x${v.toString(16)}`; }
/** absolute branch target as llvm-objdump prints it (without the symbol) */
export function target(v: number): string {
  return '0x' + (v < 0 ? BigInt(v) + (1n << 64n) : BigInt(v)).toString(16);
}
/** ", lsl #3" style suffix, empty for a zero shift */
export function shiftSuffix(type: number, amt: number): string { return amt === 0 && type === 0 ? '' : `, ${SHIFT[type]} #${amt}`; }

/** highest set bit of a positive number (-1 for 0) */
function hsb(v: number): number { return v === 0 ? -1 : 31 - Math.clz32(v); }
function ones(n: number): bigint { return (1n << BigInt(n)) - 1n; }

/**
 * DecodeBitMasks (ARM ARM): the (wmask, tmask) of a logical immediate or
 * bitfield instruction at width m (32 or 64); null when reserved.
 */
export function decodeBitMasks(n: number, imms: number, immr: number, immediate: boolean, m: number): [bigint, bigint] | null {
  const len = hsb((n << 6) | (~imms & 0x3f));
  if (len < 1) return null;
  const levels = (1 << len) - 1;
  if (immediate && (imms & levels) === levels) return null;
  const s = imms & levels, r = immr & levels;
  const d = (s - r) & levels;
  const esize = 1 << len;
  if (esize > m) return null;
  const welem = ones(s + 1), telem = ones(d + 1);
  const emask = ones(esize);
  const rot = r === 0 ? welem : ((welem >> BigInt(r)) | (welem << BigInt(esize - r))) & emask;
  let wmask = 0n, tmask = 0n;
  for (let i = 0; i < m; i += esize) { wmask |= rot << BigInt(i); tmask |= telem << BigInt(i); }
  return [wmask, tmask];
}

/** low and high int32 halves of a 64-bit bigint */
export function halves(v: bigint): [number, number] {
  return [Number(BigInt.asIntN(32, v)), Number(BigInt.asIntN(32, v >> 32n))];
}
