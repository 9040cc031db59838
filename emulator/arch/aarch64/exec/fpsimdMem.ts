/**
 * SIMD&FP loads and stores: B/H/S/D/Q registers in every addressing form,
 * pairs, literals, LD1/ST1 of 1-4 registers, LD1R. See fpsimd.ts.
 */
import type { A64Cpu } from '../cpu';
import type { A64Insn, Row } from '../insn';
import { f, sf, rZ, rS, gz, base, target, EXTEND } from '../fmt';
import { TWO32, zeroFrom, lane, setLane, setLane64, vname, sreg } from './fpsimdRegs';

// ---------------------------------------------------------------- loads and stores

export function ld(c: A64Cpu, t: number, a: number, bytes: number): void {
  const o = t * 4;
  // an 8- or 16-byte access made as words: the debug registers see it whole first
  if (bytes >= 8) c.watchAccess(a, bytes, false);
  if (bytes === 16) { for (let k = 0; k < 4; k++) c.vw[o + k] = c.mem.read32(a + 4 * k) | 0; return; }
  if (bytes === 8) { c.vw[o] = c.mem.read32(a) | 0; c.vw[o + 1] = c.mem.read32(a + 4) | 0; c.vw[o + 2] = 0; c.vw[o + 3] = 0; return; }
  c.vw[o] = bytes === 4 ? c.mem.read32(a) | 0 : bytes === 2 ? c.mem.read16(a) : c.mem.read8(a);
  c.vw[o + 1] = 0; c.vw[o + 2] = 0; c.vw[o + 3] = 0;
}
export function st(c: A64Cpu, t: number, a: number, bytes: number): void {
  const o = t * 4;
  if (bytes >= 8) c.watchAccess(a, bytes, true);
  if (bytes >= 4) { for (let k = bytes / 4 - 1; k >= 0; k--) c.mem.write32(a + 4 * k, c.vw[o + k]); return; }
  if (bytes === 2) c.mem.write16(a, c.vh[t * 8]); else c.mem.write8(a, c.vb[t * 16]);
}
/** i.d = Rt, i.size = bytes, i.op = 1 load / 0 store, i.imm offset; i.op2: 0 offset, 1 post, 2 pre */
export function xferOne(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, i.op ? 'read' : 'write');
  const a = i.op2 === 1 ? b : b + i.imm;
  if (i.op) ld(c, i.rd, a, i.size); else st(c, i.rd, a, i.size);
  if (i.op2) c.setAddr(i.n, b + i.imm);
}
export function xferReg(c: A64Cpu, i: A64Insn): void {
  const l = c.extend(i.a, i.op2, i.imm2);
  const a = c.addrOf(i.n, i.op ? 'read' : 'write') + c.th * TWO32 + (l >>> 0);
  if (i.op) ld(c, i.rd, a, i.size); else st(c, i.rd, a, i.size);
}
export function xferLiteral(c: A64Cpu, i: A64Insn): void { ld(c, i.rd, i.target, i.size); }
export function xferPair(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, i.op ? 'read' : 'write');
  const a = i.op2 === 1 ? b : b + i.imm;
  c.watchPair(a, i.size, !i.op);
  if (i.op) { ld(c, i.rd, a, i.size); ld(c, i.ra, a + i.size, i.size); } else { st(c, i.rd, a, i.size); st(c, i.ra, a + i.size, i.size); }
  if (i.op2) c.setAddr(i.n, b + i.imm);
}
/** the V-register size of a load/store: size:opc -> bytes, or 0 when unallocated */
export function vbytes(size: number, opc: number): number {
  if (opc >= 2) return size === 0 ? 16 : 0;
  return 1 << size;
}
export const fmtAddr = (i: A64Insn): string => {
  const imm = i.imm ? `, #${i.imm}` : '';
  return i.op2 === 1 ? `[${base(i.rn)}], #${i.imm}` : i.op2 === 2 ? `[${base(i.rn)}${imm}]!` : `[${base(i.rn)}${imm}]`;
};

export const ldstUnsigned: Row = {
  name: 'SIMD&FP load/store (unsigned offset)', mask: 0x3f000000, match: 0x3d000000,
  decode(w, i) {
    const bytes = vbytes(f(w, 30, 2), f(w, 22, 2));
    if (!bytes) return false;
    i.size = bytes; i.op = f(w, 22, 1); i.op2 = 0; i.imm = f(w, 10, 12) * bytes;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.exec = xferOne;
    return true;
  },
  fmt: i => [i.op ? 'ldr' : 'str', `${sreg(i.rd, i.size)}, ${fmtAddr(i)}`],
};
export const ldstImm9: Row = {
  name: 'SIMD&FP load/store (unscaled, pre/post-index)', mask: 0x3f200000, match: 0x3c000000,
  decode(w, i) {
    const bytes = vbytes(f(w, 30, 2), f(w, 22, 2)), kind = f(w, 10, 2);
    if (!bytes || kind === 2) return false;
    i.size = bytes; i.op = f(w, 22, 1); i.op2 = kind === 0 ? 0 : kind === 1 ? 1 : 2; i.imm = sf(w, 12, 9);
    i.imm3 = kind === 0 ? 1 : 0;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.exec = xferOne;
    return true;
  },
  fmt: i => [(i.op ? 'ld' : 'st') + (i.imm3 ? 'ur' : 'r'), `${sreg(i.rd, i.size)}, ${fmtAddr(i)}`],
};
export const ldstRegOff: Row = {
  name: 'SIMD&FP load/store (register offset)', mask: 0x3f200c00, match: 0x3c200800,
  decode(w, i) {
    const bytes = vbytes(f(w, 30, 2), f(w, 22, 2)), option = f(w, 13, 3);
    if (!bytes || !(option & 2)) return false;
    i.size = bytes; i.op = f(w, 22, 1); i.op2 = option; i.imm2 = f(w, 12, 1) ? Math.log2(bytes) : 0; i.imm3 = f(w, 12, 1);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.n = rS(i.rn); i.a = rZ(i.rm); i.exec = xferReg;
    return true;
  },
  fmt: i => {
    const x = i.op2 === 3 || i.op2 === 7 ? 1 : 0;
    const ext = i.op2 === 3 ? (i.imm3 ? `, lsl #${i.imm2}` : '') : `, ${EXTEND[i.op2]}${i.imm3 ? ` #${i.imm2}` : ''}`;
    return [i.op ? 'ldr' : 'str', `${sreg(i.rd, i.size)}, [${base(i.rn)}, ${gz(i.rm, x)}${ext}]`];
  },
};
export const ldLiteral: Row = {
  name: 'SIMD&FP load register (literal)', mask: 0x3f000000, match: 0x1c000000, pcRel: true,
  decode(w, i) {
    const opc = f(w, 30, 2);
    if (opc === 3) return false;
    i.size = 4 << opc; i.rd = f(w, 0, 5); i.target = i.addr + sf(w, 5, 19) * 4; i.exec = xferLiteral;
    return true;
  },
  fmt: i => ['ldr', `${sreg(i.rd, i.size)}, ${target(i.target)}`],
};
export const ldstPair: Row = {
  name: 'SIMD&FP load/store pair', mask: 0x3e000000, match: 0x2c000000,
  decode(w, i) {
    const opc = f(w, 30, 2), mode = f(w, 23, 2);
    if (opc === 3) return false;
    i.size = 4 << opc; i.op = f(w, 22, 1); i.op2 = mode === 1 ? 1 : mode === 3 ? 2 : 0; i.imm3 = mode === 0 ? 1 : 0;
    i.imm = sf(w, 15, 7) * i.size;
    i.rd = f(w, 0, 5); i.ra = f(w, 10, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.exec = xferPair;
    return true;
  },
  fmt: i => [(i.op ? 'ld' : 'st') + (i.imm3 ? 'np' : 'p'), `${sreg(i.rd, i.size)}, ${sreg(i.ra, i.size)}, ${fmtAddr(i)}`],
};
/** LD1/ST1 (multiple structures, 1-4 consecutive registers), no offset or post-index */
export function ld1st1(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, i.op ? 'read' : 'write');
  const bytes = i.size; // 8 or 16 per register
  // every register's element is shown to the debug registers before any moves
  for (let k = 0; k < i.imm2; k++) c.watchAccess(b + k * bytes, bytes, !i.op);
  for (let k = 0; k < i.imm2; k++) {
    const t = (i.rd + k) % 32, a = b + k * bytes;
    if (i.op) ld(c, t, a, bytes); else st(c, t, a, bytes);
  }
  if (i.op2) c.setAddr(i.n, b + (i.a === 31 ? bytes * i.imm2 : Number(c.x64(i.a))));
}
export const LD1_REGS: Record<number, number> = { 7: 1, 10: 2, 6: 3, 2: 4 };
export const ldst1Multiple: Row = {
  name: 'AdvSIMD LD1/ST1 (multiple structures)', mask: 0xbf200000, match: 0x0c000000,
  decode(w, i) {
    const n = LD1_REGS[f(w, 12, 4)];
    if (!n) return false;
    const post = f(w, 23, 1);
    if (!post && f(w, 16, 5) !== 0) return false;
    i.size = f(w, 30, 1) ? 16 : 8; i.imm2 = n; i.op = f(w, 22, 1); i.op2 = post; i.op = f(w, 22, 1);
    i.imm3 = f(w, 10, 2); i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.rm = f(w, 16, 5); i.a = i.rm === 31 ? 31 : rZ(i.rm);
    i.exec = ld1st1;
    return true;
  },
  fmt: i => {
    const es = 1 << i.imm3, q = i.size === 16 ? 1 : 0;
    const regs = Array.from({ length: i.imm2 }, (_, k) => vname((i.rd + k) % 32, q, es)).join(', ');
    const post = i.op2 ? (i.rm === 31 ? `, #${i.size * i.imm2}` : `, ${gz(i.rm, 1)}`) : '';
    return [i.op ? 'ld1' : 'st1', `{ ${regs} }, [${base(i.rn)}]${post}`];
  },
};
/** LD1R: one element replicated to every lane */
export function ld1r(c: A64Cpu, i: A64Insn): void {
  const b = c.addrOf(i.n, 'read');
  if (i.imm3 === 8) c.watchAccess(b, 8, false);
  const es = i.imm3, v = es === 8 ? Number(c.mem.read32(b) >>> 0) + (c.mem.read32(b + 4) >>> 0) * TWO32 : es === 4 ? c.mem.read32(b) >>> 0 : es === 2 ? c.mem.read16(b) : c.mem.read8(b);
  const lanes = (i.size / es);
  if (es === 8) { const big = (BigInt(c.mem.read32(b + 4) >>> 0) << 32n) | BigInt(c.mem.read32(b) >>> 0); for (let k = 0; k < lanes; k++) setLane64(c, i.rd, k, big); }
  else for (let k = 0; k < lanes; k++) setLane(c, i.rd, es, k, v);
  zeroFrom(c, i.rd, i.size);
  if (i.op2) c.setAddr(i.n, b + (i.a === 31 ? es : Number(c.x64(i.a))));
}
export const ld1rRow: Row = {
  name: 'AdvSIMD LD1R', mask: 0xbf60e000, match: 0x0d40c000,
  decode(w, i) {
    const post = f(w, 23, 1);
    if (!post && f(w, 16, 5) !== 0) return false;
    if (f(w, 13, 1)) return false; // LD3R/LD4R
    i.size = f(w, 30, 1) ? 16 : 8; i.imm3 = 1 << f(w, 10, 2); i.op2 = post;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.n = rS(i.rn); i.rm = f(w, 16, 5); i.a = i.rm === 31 ? 31 : rZ(i.rm);
    i.exec = ld1r;
    return f(w, 21, 1) === 0; // LD2R
  },
  fmt: i => ['ld1r', `{ ${vname(i.rd, i.size === 16 ? 1 : 0, i.imm3)} }, [${base(i.rn)}]${i.op2 ? (i.rm === 31 ? `, #${i.imm3}` : `, ${gz(i.rm, 1)}`) : ''}`],
};
