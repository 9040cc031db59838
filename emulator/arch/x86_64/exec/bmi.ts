/**
 * VEX-encoded BMI1/BMI2 general-purpose instructions (what clang/gcc emit
 * with -mbmi/-mbmi2): andn, blsi, blsr, blsmsk, bextr, bzhi, shlx, shrx,
 * sarx, rorx, pdep, pext, mulx. Rare in hot loops: computed with bigint.
 * Flags follow the SDM; AF and PF (undefined) are cleared.
 */
import type { X86Cpu } from '../cpu';
import type { Insn } from '../insn';
import { CF, ZF, SF } from '../flags';

function get(cpu: X86Cpu, size: number, r: number): bigint {
  const l = cpu.getR(size, r);
  return size === 8 ? (BigInt(cpu.th >>> 0) << 32n) | BigInt(l >>> 0) : BigInt(l >>> 0);
}
function getE(cpu: X86Cpu, i: Insn): bigint {
  const l = cpu.readE(i, i.size);
  return i.size === 8 ? (BigInt(cpu.th >>> 0) << 32n) | BigInt(l >>> 0) : BigInt(l >>> 0);
}
function put(cpu: X86Cpu, size: number, r: number, v: bigint): void {
  v = BigInt.asUintN(size * 8, v);
  cpu.setR(size, r, Number(BigInt.asIntN(32, v)), Number(BigInt.asIntN(32, v >> 32n)));
}
function sz(size: number, v: bigint): number {
  const bits = BigInt(size * 8);
  return (v === 0n ? ZF : 0) | ((v >> (bits - 1n)) & 1n ? SF : 0);
}

export function andn(cpu: X86Cpu, i: Insn): void {
  const m = (1n << BigInt(i.size * 8)) - 1n;
  const r = ~get(cpu, i.size, i.vreg) & getE(cpu, i) & m;
  put(cpu, i.size, i.reg, r);
  cpu.setEager(sz(i.size, r));
}

/** group 17: /1 blsr, /2 blsmsk, /3 blsi (destination is VEX.vvvv) */
export function blsx(cpu: X86Cpu, i: Insn): void {
  const m = (1n << BigInt(i.size * 8)) - 1n;
  const s = getE(cpu, i);
  let r: bigint, cf: boolean;
  if (i.cc === 1) { r = s & ((s - 1n) & m); cf = s === 0n; }
  else if (i.cc === 2) { r = (s ^ (s - 1n)) & m; cf = s === 0n; }
  else { r = (-s & m) & s; cf = s !== 0n; }
  put(cpu, i.size, i.vreg, r);
  cpu.setEager(sz(i.size, r) | (cf ? CF : 0));
}

export function bextr(cpu: X86Cpu, i: Insn): void {
  const bits = i.size * 8;
  const ctl = get(cpu, i.size, i.vreg);
  const start = Number(ctl & 0xffn), len = Number((ctl >> 8n) & 0xffn);
  const s = getE(cpu, i);
  const r = start >= bits ? 0n : (s >> BigInt(start)) & ((1n << BigInt(Math.min(len, bits))) - 1n);
  put(cpu, i.size, i.reg, r);
  cpu.setEager(r === 0n ? ZF : 0);
}

export function bzhi(cpu: X86Cpu, i: Insn): void {
  const bits = i.size * 8;
  const n = Number(get(cpu, i.size, i.vreg) & 0xffn);
  const s = getE(cpu, i);
  const r = n < bits ? s & ((1n << BigInt(n)) - 1n) : s;
  put(cpu, i.size, i.reg, r);
  cpu.setEager(sz(i.size, r) | (n > bits - 1 ? CF : 0));
}

/** shlx (cc 0) / shrx (1) / sarx (2): no flags */
export function shx(cpu: X86Cpu, i: Insn): void {
  const bits = BigInt(i.size * 8);
  const n = get(cpu, i.size, i.vreg) & (bits - 1n);
  const s = getE(cpu, i);
  const r = i.cc === 0 ? s << n : i.cc === 1 ? s >> n : BigInt.asIntN(Number(bits), s) >> n;
  put(cpu, i.size, i.reg, r);
}

export function rorx(cpu: X86Cpu, i: Insn): void {
  const bits = BigInt(i.size * 8);
  const n = BigInt(i.imm) & (bits - 1n);
  const s = getE(cpu, i);
  const r = n === 0n ? s : (s >> n) | (s << (bits - n));
  put(cpu, i.size, i.reg, r);
}

/** pdep (cc 0) / pext (cc 1): G = f(B, E) */
export function pdepPext(cpu: X86Cpu, i: Insn): void {
  const src = get(cpu, i.size, i.vreg), mask = getE(cpu, i);
  let r = 0n, k = 0n;
  for (let b = 0n; b < BigInt(i.size * 8); b++) {
    if ((mask >> b) & 1n) {
      if (i.cc === 0) { if ((src >> k) & 1n) r |= 1n << b; }
      else if ((src >> b) & 1n) r |= 1n << k;
      k++;
    }
  }
  put(cpu, i.size, i.reg, r);
}

/** mulx G(high), B(low), E: unsigned rdx * E, no flags */
export function mulx(cpu: X86Cpu, i: Insn): void {
  const bits = BigInt(i.size * 8);
  const p = get(cpu, i.size, 2) * getE(cpu, i);
  const lo = p & ((1n << bits) - 1n), hi = p >> bits;
  put(cpu, i.size, i.vreg, lo);
  put(cpu, i.size, i.reg, hi);
}
