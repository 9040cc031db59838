/**
 * RV64M executors: mul (low 64 bits from 16-bit partial products, exact),
 * mulh/mulhsu/mulhu, div/divu/rem/remu (bigint, exact), and the W forms.
 * Division by zero gives quotient -1 (all ones) and remainder = dividend;
 * the signed overflow case (most negative / -1) gives quotient = dividend
 * and remainder 0 — no trap, as the ISA specifies.
 */
import type { RvCpu } from '../cpu';
import type { RvInsn } from '../insn';

function set32(c: RvCpu, d: number, v: number): void { c.lo[d] = v; c.hi[d] = v >> 31; }

/** low 64 bits of the product of two 64-bit values given as halves */
export function mul(c: RvCpu, i: RvInsn): void {
  const al = c.lo[i.rs1], ah = c.hi[i.rs1], bl = c.lo[i.rs2], bh = c.hi[i.rs2];
  const a = al >>> 0, b = bl >>> 0;
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  const lo = ((mid & 0xffff) << 16) | (p00 & 0xffff);
  const hiFull = p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
  c.lo[i.rd] = lo;
  c.hi[i.rd] = (hiFull + Math.imul(al, bh) + Math.imul(ah, bl)) | 0;
}
const M64 = (1n << 64n) - 1n;
export function mulh(c: RvCpu, i: RvInsn): void {
  c.setX(i.rd, (BigInt.asIntN(64, c.x(i.rs1)) * BigInt.asIntN(64, c.x(i.rs2))) >> 64n);
}
export function mulhsu(c: RvCpu, i: RvInsn): void {
  c.setX(i.rd, (BigInt.asIntN(64, c.x(i.rs1)) * c.x(i.rs2)) >> 64n);
}
export function mulhu(c: RvCpu, i: RvInsn): void {
  c.setX(i.rd, (c.x(i.rs1) * c.x(i.rs2)) >> 64n);
}
export function div(c: RvCpu, i: RvInsn): void {
  const a = BigInt.asIntN(64, c.x(i.rs1)), b = BigInt.asIntN(64, c.x(i.rs2));
  c.setX(i.rd, b === 0n ? M64 : a / b); // asUintN in setX wraps -2^63 / -1 back to -2^63
}
export function divu(c: RvCpu, i: RvInsn): void {
  const a = c.x(i.rs1), b = c.x(i.rs2);
  c.setX(i.rd, b === 0n ? M64 : a / b);
}
export function rem(c: RvCpu, i: RvInsn): void {
  const a = BigInt.asIntN(64, c.x(i.rs1)), b = BigInt.asIntN(64, c.x(i.rs2));
  c.setX(i.rd, b === 0n ? a : a % b);
}
export function remu(c: RvCpu, i: RvInsn): void {
  const a = c.x(i.rs1), b = c.x(i.rs2);
  c.setX(i.rd, b === 0n ? a : a % b);
}
export function mulw(c: RvCpu, i: RvInsn): void { set32(c, i.rd, Math.imul(c.lo[i.rs1], c.lo[i.rs2])); }
export function divw(c: RvCpu, i: RvInsn): void {
  const a = c.lo[i.rs1], b = c.lo[i.rs2];
  set32(c, i.rd, b === 0 ? -1 : (a === -2147483648 && b === -1) ? a : Math.trunc(a / b) | 0);
}
export function divuw(c: RvCpu, i: RvInsn): void {
  const a = c.lo[i.rs1] >>> 0, b = c.lo[i.rs2] >>> 0;
  set32(c, i.rd, b === 0 ? -1 : Math.trunc(a / b) | 0);
}
export function remw(c: RvCpu, i: RvInsn): void {
  const a = c.lo[i.rs1], b = c.lo[i.rs2];
  set32(c, i.rd, b === 0 ? a : (b === -1 ? 0 : (a % b) | 0));
}
export function remuw(c: RvCpu, i: RvInsn): void {
  const a = c.lo[i.rs1] >>> 0, b = c.lo[i.rs2] >>> 0;
  set32(c, i.rd, b === 0 ? a | 0 : (a % b) | 0);
}
