/**
 * Data processing (immediate): add/sub immediate, logical immediate, move
 * wide (movz/movn/movk), bitfield (sbfm/bfm/ubfm and their aliases), extr,
 * adr/adrp.
 */
import { A64Cpu } from '../cpu';
import { A64Insn, Row } from '../insn';
import { f, sf as sx, rZ, wZ, rS, gz, gs, imm, hexImm, target, decodeBitMasks, halves } from '../fmt';

// ------------------------------------------------------------ add/sub immediate
function addImm(c: A64Cpu, i: A64Insn): void { c.addc(i.d, c.lo[i.n], c.hi[i.n], i.imm, 0, 0, i.sf, false); }
function addsImm(c: A64Cpu, i: A64Insn): void { c.addc(i.d, c.lo[i.n], c.hi[i.n], i.imm, 0, 0, i.sf, true); }
function subImm(c: A64Cpu, i: A64Insn): void { c.addc(i.d, c.lo[i.n], c.hi[i.n], ~i.imm, -1, 1, i.sf, false); }
function subsImm(c: A64Cpu, i: A64Insn): void { c.addc(i.d, c.lo[i.n], c.hi[i.n], ~i.imm, -1, 1, i.sf, true); }

const addSubImm: Row = {
  name: 'add/sub (immediate)', mask: 0x1f000000, match: 0x11000000,
  decode(w, i) {
    if (f(w, 23, 1)) return false;
    i.sf = f(w, 31, 1); i.op = f(w, 30, 1); const s = f(w, 29, 1); i.op2 = s;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.imm2 = f(w, 22, 1) * 12; i.imm3 = f(w, 10, 12);
    i.imm = i.imm3 << i.imm2;
    i.d = s ? wZ(i.rd) : rS(i.rd); i.n = rS(i.rn);
    i.exec = i.op ? (s ? subsImm : subImm) : (s ? addsImm : addImm);
    return true;
  },
  fmt(i) {
    const sh = i.imm2 ? ', lsl #12' : '';
    if (i.op2 && i.rd === 31) return [i.op ? 'cmp' : 'cmn', `${gs(i.rn, i.sf)}, #${i.imm3}${sh}`];
    if (!i.op && !i.op2 && i.imm === 0 && (i.rd === 31 || i.rn === 31)) return ['mov', `${gs(i.rd, i.sf)}, ${gs(i.rn, i.sf)}`];
    const rd = i.op2 ? gz(i.rd, i.sf) : gs(i.rd, i.sf);
    return [(i.op ? 'sub' : 'add') + (i.op2 ? 's' : ''), `${rd}, ${gs(i.rn, i.sf)}, #${i.imm3}${sh}`];
  },
};

// ------------------------------------------------------------ logical immediate
function andImm(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.lo[i.n] & i.imm; c.hi[i.d] = c.hi[i.n] & i.immHi; }
// 32-bit forms zero the upper half (immHi is 0 for them)
function orrImm(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.lo[i.n] | i.imm; c.hi[i.d] = i.sf ? c.hi[i.n] | i.immHi : 0; }
function eorImm(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.lo[i.n] ^ i.imm; c.hi[i.d] = i.sf ? c.hi[i.n] ^ i.immHi : 0; }
function andsImm(c: A64Cpu, i: A64Insn): void {
  const l = c.lo[i.n] & i.imm, h = c.hi[i.n] & i.immHi;
  c.lo[i.d] = l; c.hi[i.d] = h;
  if (i.sf) c.setNZ64(l, h); else c.setNZ32(l);
  c.cf = 0; c.vf = 0;
}
const LOGIC_IMM = [andImm, orrImm, eorImm, andsImm];
const LOGIC_NAMES = ['and', 'orr', 'eor', 'ands'];

/** would movz (any shift) produce v at this width? */
function isMovzAlias(v: bigint, shift: number, width: number): boolean {
  if (width === 32) v &= 0xffffffffn;
  if (v === 0n && shift !== 0) return false;
  return (v & ~(0xffffn << BigInt(shift))) === 0n;
}
function anyMovz(v: bigint, width: number): boolean {
  for (let s = 0; s < width; s += 16) if (isMovzAlias(v, s, width)) return true;
  return false;
}
function isMovnAlias(v: bigint, shift: number, width: number): boolean {
  if (anyMovz(v, width)) return false;
  let n = BigInt.asUintN(64, ~v);
  if (width === 32) n &= 0xffffffffn;
  return isMovzAlias(n, shift, width);
}
function signedAt(v: bigint, width: number): bigint { return BigInt.asIntN(width, v); }

const logicalImm: Row = {
  name: 'logical (immediate)', mask: 0x1f800000, match: 0x12000000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 29, 2);
    const n = f(w, 22, 1);
    if (!i.sf && n) return false;
    const m = decodeBitMasks(n, f(w, 10, 6), f(w, 16, 6), true, i.sf ? 64 : 32);
    if (!m) return false;
    i.big = m[0];
    [i.imm, i.immHi] = halves(m[0]);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.d = i.op === 3 ? wZ(i.rd) : rS(i.rd); i.n = rZ(i.rn);
    i.exec = LOGIC_IMM[i.op];
    return true;
  },
  fmt(i) {
    const width = i.sf ? 64 : 32;
    if (i.op === 3 && i.rd === 31) return ['tst', `${gz(i.rn, i.sf)}, ${hexImm(i.big)}`];
    if (i.op === 1 && i.rn === 31 && !anyMovz(i.big, width) && !anyMovn(i.big, width)) {
      return ['mov', `${gs(i.rd, i.sf)}, ${imm(signedAt(i.big, width))}`];
    }
    const rd = i.op === 3 ? gz(i.rd, i.sf) : gs(i.rd, i.sf);
    return [LOGIC_NAMES[i.op], `${rd}, ${gz(i.rn, i.sf)}, ${hexImm(i.big)}`];
  },
};
function anyMovn(v: bigint, width: number): boolean {
  for (let s = 0; s < width; s += 16) if (isMovnAlias(v, s, width)) return true;
  return false;
}

// ------------------------------------------------------------ move wide
function movConst(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = i.imm; c.hi[i.d] = i.immHi; }
function movk(c: A64Cpu, i: A64Insn): void {
  const v = i.imm3, s = i.imm2;
  if (s < 32) c.lo[i.d] = (c.lo[i.n] & ~(0xffff << s)) | (v << s);
  else { c.hi[i.d] = (c.hi[i.n] & ~(0xffff << (s - 32))) | (v << (s - 32)); c.lo[i.d] = c.lo[i.n]; }
  if (s < 32) c.hi[i.d] = i.sf ? c.hi[i.n] : 0;
}

const moveWide: Row = {
  name: 'move wide (immediate)', mask: 0x1f800000, match: 0x12800000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 29, 2);
    const hw = f(w, 21, 2);
    if (i.op === 1 || (!i.sf && hw >= 2)) return false;
    i.rd = f(w, 0, 5); i.d = wZ(i.rd); i.n = rZ(i.rd);
    i.imm3 = f(w, 5, 16); i.imm2 = hw * 16;
    let v = BigInt(i.imm3) << BigInt(i.imm2);
    if (i.op === 0) v = ~v;
    v = BigInt.asUintN(i.sf ? 64 : 32, v);
    i.big = v;
    [i.imm, i.immHi] = halves(v);
    i.exec = i.op === 3 ? movk : movConst;
    return true;
  },
  fmt(i) {
    const width = i.sf ? 64 : 32, rd = gz(i.rd, i.sf);
    const sh = i.imm2 ? `, lsl #${i.imm2}` : '';
    if (i.op === 3) return ['movk', `${rd}, #${i.imm3}${sh}`];
    if (i.op === 2) return isMovzAlias(i.big, i.imm2, width) ? ['mov', `${rd}, ${imm(signedAt(i.big, width))}`] : ['movz', `${rd}, #${i.imm3}${sh}`];
    return isMovnAlias(i.big, i.imm2, width) ? ['mov', `${rd}, ${imm(signedAt(i.big, width))}`] : ['movn', `${rd}, #${i.imm3}${sh}`];
  },
};

// ------------------------------------------------------------ bitfield
// fields: imm2 = immr (R), imm3 = imms (S), op = opc (0 sbfm, 1 bfm, 2 ubfm); k0/k1 = wmask, k2/k3 = tmask
function bitfield32(c: A64Cpu, i: A64Insn): void {
  const src = c.lo[i.n];
  const dst = i.op === 1 ? c.lo[i.a] : 0;
  const bot = (dst & ~i.k0) | (A64Cpu.shift32(src, 3, i.imm2) & i.k0);
  const top = i.op === 0 ? (src << (31 - i.imm3)) >> 31 : dst;
  c.lo[i.d] = (top & ~i.k2) | (bot & i.k2); c.hi[i.d] = 0;
}
function bitfield64(c: A64Cpu, i: A64Insn): void {
  const sl = c.lo[i.n], sh = c.hi[i.n];
  const dl = i.op === 1 ? c.lo[i.a] : 0, dh = i.op === 1 ? c.hi[i.a] : 0;
  const rl = c.shift64(sl, sh, 3, i.imm2), rh = c.th;
  const bl = (dl & ~i.k0) | (rl & i.k0), bh = (dh & ~i.k1) | (rh & i.k1);
  let tl = dl, tt = dh;
  if (i.op === 0) {
    const s = i.imm3;
    tl = tt = s < 32 ? (sl << (31 - s)) >> 31 : (sh << (63 - s)) >> 31;
  }
  c.lo[i.d] = (tl & ~i.k2) | (bl & i.k2); c.hi[i.d] = (tt & ~i.k3) | (bh & i.k3);
}
// fast paths of the commonest aliases
function lslImm64(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.shift64(c.lo[i.n], c.hi[i.n], 0, i.imm); c.hi[i.d] = c.th; }
function lsrImm64(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.shift64(c.lo[i.n], c.hi[i.n], 1, i.imm); c.hi[i.d] = c.th; }
function asrImm64(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.shift64(c.lo[i.n], c.hi[i.n], 2, i.imm); c.hi[i.d] = c.th; }
function sxtw(c: A64Cpu, i: A64Insn): void { const v = c.lo[i.n]; c.lo[i.d] = v; c.hi[i.d] = v >> 31; }

const bitfield: Row = {
  name: 'bitfield', mask: 0x1f800000, match: 0x13000000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 29, 2);
    const n = f(w, 22, 1);
    if (i.op === 3 || n !== i.sf) return false;
    i.imm2 = f(w, 16, 6); i.imm3 = f(w, 10, 6);
    if (!i.sf && (i.imm2 >= 32 || i.imm3 >= 32)) return false;
    const m = decodeBitMasks(n, i.imm3, i.imm2, false, i.sf ? 64 : 32);
    if (!m) return false;
    [i.k0, i.k1] = halves(m[0]); [i.k2, i.k3] = halves(m[1]);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.a = rZ(i.rd);
    i.exec = i.sf ? bitfield64 : bitfield32;
    if (i.sf && i.op === 2 && i.imm3 === 63) { i.imm = i.imm2; i.exec = lsrImm64; }
    else if (i.sf && i.op === 2 && i.imm3 + 1 === i.imm2) { i.imm = 63 - i.imm3; i.exec = lslImm64; }
    else if (i.sf && i.op === 0 && i.imm3 === 63) { i.imm = i.imm2; i.exec = asrImm64; }
    else if (i.sf && i.op === 0 && i.imm2 === 0 && i.imm3 === 31) i.exec = sxtw;
    return true;
  },
  fmt(i) {
    const r = i.imm2, s = i.imm3, width = i.sf ? 64 : 32, rd = gz(i.rd, i.sf), rn = gz(i.rn, i.sf);
    if (i.op !== 1 && s === width - 1) return [i.op === 0 ? 'asr' : 'lsr', `${rd}, ${rn}, #${r}`];
    if (i.op === 2 && s !== width - 1 && s + 1 === r) return ['lsl', `${rd}, ${rn}, #${width - 1 - s}`];
    if (i.op !== 1 && r === 0 && (s === 7 || s === 15 || (s === 31 && i.sf && i.op === 0))) {
      const src = gz(i.rn, 0);
      const suffix = s === 7 ? 'b' : s === 15 ? 'h' : 'w';
      if (i.op === 0) return [`sxt${suffix}`, `${rd}, ${src}`];
      if (!i.sf) return [`uxt${suffix}`, `${rd}, ${src}`];
    }
    const name = ['sbf', 'bf', 'ubf'][i.op];
    if (s < r) {
      if (i.op === 1 && i.rn === 31) return ['bfc', `${rd}, #${(width - r) % width}, #${s + 1}`];
      return [['sbfiz', 'bfi', 'ubfiz'][i.op], `${rd}, ${rn}, #${(width - r) % width}, #${s + 1}`];
    }
    return [i.op === 1 ? 'bfxil' : `${name}x`, `${rd}, ${rn}, #${r}, #${s - r + 1}`];
  },
};

// ------------------------------------------------------------ extr
function extr64(c: A64Cpu, i: A64Insn): void {
  // (n:m) >> lsb, low 64 bits
  const l = c.shift64(c.lo[i.m], c.hi[i.m], 1, i.imm2), h = c.th;
  const nl = i.imm2 === 0 ? 0 : c.shift64(c.lo[i.n], c.hi[i.n], 0, 64 - i.imm2), nh = i.imm2 === 0 ? 0 : c.th;
  c.lo[i.d] = l | nl; c.hi[i.d] = h | nh;
}
function extr32(c: A64Cpu, i: A64Insn): void {
  const s = i.imm2;
  c.lo[i.d] = s === 0 ? c.lo[i.m] : (c.lo[i.m] >>> s) | (c.lo[i.n] << (32 - s)); c.hi[i.d] = 0;
}
const extr: Row = {
  name: 'extr', mask: 0x1fa00000, match: 0x13800000,
  decode(w, i) {
    i.sf = f(w, 31, 1);
    if (f(w, 29, 2) !== 0 || f(w, 22, 1) !== i.sf) return false;
    i.imm2 = f(w, 10, 6);
    if (!i.sf && i.imm2 >= 32) return false;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm);
    i.exec = i.sf ? extr64 : extr32;
    return true;
  },
  fmt(i) {
    if (i.rn === i.rm) return ['ror', `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}, #${i.imm2}`];
    return ['extr', `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}, ${gz(i.rm, i.sf)}, #${i.imm2}`];
  },
};

// ------------------------------------------------------------ adr / adrp
function adr(c: A64Cpu, i: A64Insn): void { c.setAddr(i.d, i.target); }
const pcRelAddr: Row = {
  name: 'adr/adrp', mask: 0x1f000000, match: 0x10000000, pcRel: true,
  decode(w, i) {
    i.op = f(w, 31, 1);
    const off = sx(w, 5, 19) * 4 + f(w, 29, 2);
    i.rd = f(w, 0, 5); i.d = wZ(i.rd);
    i.imm = off;
    i.target = i.op ? Math.floor(i.addr / 4096) * 4096 + off * 4096 : i.addr + off;
    i.exec = adr;
    return true;
  },
  fmt(i) {
    return i.op ? ['adrp', `${gz(i.rd, 1)}, ${target(i.target)}`] : ['adr', `${gz(i.rd, 1)}, #${i.imm}`];
  },
};

export const DATA_IMM_ROWS: readonly Row[] = [addSubImm, logicalImm, moveWide, bitfield, extr, pcRelAddr];
