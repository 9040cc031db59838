/**
 * The V registers as the SIMD&FP executors see them (compiled aarch64 user
 * programs use them): lanes of 1/2/4/8 bytes, 64-bit halves, scalar and
 * arrangement names for the disassembler; the FPSR flag bits the executors
 * set. See fpsimd.ts.
 */
import type { A64Cpu } from '../cpu';

export const IOC = 1, DZC = 2;
export const TWO32 = 4294967296;

// ---------------------------------------------------------------- register helpers

export function zeroFrom(c: A64Cpu, r: number, bytes: number): void { c.vb.fill(0, r * 16 + bytes, r * 16 + 16); }
export function vget64(c: A64Cpu, r: number, half = 0): bigint {
  return (BigInt(c.vw[r * 4 + half * 2 + 1] >>> 0) << 32n) | BigInt(c.vw[r * 4 + half * 2] >>> 0);
}
export function vset64(c: A64Cpu, r: number, v: bigint, half = 0): void {
  c.vw[r * 4 + half * 2] = Number(v & 0xffffffffn) | 0; c.vw[r * 4 + half * 2 + 1] = Number((v >> 32n) & 0xffffffffn) | 0;
}
/** lane k of an esize-byte element of register r, unsigned (as bigint for 8-byte lanes) */
export function lane(c: A64Cpu, r: number, esize: number, k: number): number {
  const o = r * 16 + k * esize;
  switch (esize) {
    case 1: return c.vb[o];
    case 2: return c.vh[o >> 1];
    case 4: return c.vw[o >> 2] >>> 0;
    default: return Number(vget64(c, r, k));
  }
}
export function setLane(c: A64Cpu, r: number, esize: number, k: number, v: number): void {
  const o = r * 16 + k * esize;
  switch (esize) {
    case 1: c.vb[o] = v; return;
    case 2: c.vh[o >> 1] = v; return;
    case 4: c.vw[o >> 2] = v | 0; return;
    default: vset64(c, r, BigInt.asUintN(64, BigInt(v)), k);
  }
}
export const lane64 = (c: A64Cpu, r: number, k: number): bigint => vget64(c, r, k);
export const setLane64 = (c: A64Cpu, r: number, k: number, v: bigint): void => vset64(c, r, BigInt.asUintN(64, v), k);

export const vname = (n: number, q: number, esize: number): string => `v${n}.${esize === 8 ? (q ? '2d' : '1d') : `${(q ? 16 : 8) / esize}${['', 'b', 'h', '', 's'][esize]}`}`;
export const SCALAR = ['b', 'h', 's', 'd', 'q'];
export const sreg = (n: number, bytes: number): string => `${SCALAR[Math.log2(bytes)]}${n}`;
