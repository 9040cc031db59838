/**
 * Data processing (register): logical and add/sub with a shifted register,
 * add/sub with an extended register, adc/sbc, conditional compare, the
 * conditional select family, 1- and 2-source operations (rbit, rev*, clz,
 * cls, udiv/sdiv, variable shifts) and 3-source multiplies.
 */
import { A64Cpu } from '../cpu';
import { A64Insn, Row } from '../insn';
import { f, rZ, wZ, rS, gz, gs, COND, SHIFT, EXTEND } from '../fmt';

// ------------------------------------------------------------ logical (shifted register)
// op: opc*2 + N (and bic orr orn eor eon ands bics); op2 = shift type; imm2 = amount
function logicalReg(c: A64Cpu, i: A64Insn): void {
  let bl: number, bh: number;
  if (i.sf) { bl = c.shift64(c.lo[i.m], c.hi[i.m], i.op2, i.imm2); bh = c.th; }
  else { bl = A64Cpu.shift32(c.lo[i.m], i.op2, i.imm2); bh = 0; }
  if (i.op & 1) { bl = ~bl; bh = ~bh; }
  const al = c.lo[i.n], ah = c.hi[i.n];
  let l: number, h: number;
  switch (i.op >> 1) {
    case 0: case 3: l = al & bl; h = ah & bh; break;
    case 1: l = al | bl; h = ah | bh; break;
    default: l = al ^ bl; h = ah ^ bh;
  }
  if (!i.sf) h = 0;
  c.lo[i.d] = l; c.hi[i.d] = h;
  if (i.op >= 6) { if (i.sf) c.setNZ64(l, h); else c.setNZ32(l); c.cf = 0; c.vf = 0; }
}
/** mov xd, xm (orr with the zero register, no shift) */
function movReg(c: A64Cpu, i: A64Insn): void { c.lo[i.d] = c.lo[i.m]; c.hi[i.d] = i.sf ? c.hi[i.m] : 0; }
const LOGIC = ['and', 'bic', 'orr', 'orn', 'eor', 'eon', 'ands', 'bics'];

const logicalShifted: Row = {
  name: 'logical (shifted register)', mask: 0x1f000000, match: 0x0a000000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 29, 2) * 2 + f(w, 21, 1);
    i.op2 = f(w, 22, 2); i.imm2 = f(w, 10, 6);
    if (!i.sf && i.imm2 >= 32) return false;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm);
    i.exec = i.op === 2 && i.rn === 31 && i.imm2 === 0 ? movReg : logicalReg;
    return true;
  },
  fmt(i) {
    const sh = i.imm2 === 0 && i.op2 === 0 ? '' : `, ${SHIFT[i.op2]} #${i.imm2}`;
    const rm = gz(i.rm, i.sf);
    if (i.op === 2 && i.rn === 31 && sh === '') return ['mov', `${gz(i.rd, i.sf)}, ${rm}`];
    if (i.op === 3 && i.rn === 31) return ['mvn', `${gz(i.rd, i.sf)}, ${rm}${sh}`];
    if (i.op === 6 && i.rd === 31) return ['tst', `${gz(i.rn, i.sf)}, ${rm}${sh}`];
    return [LOGIC[i.op], `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}, ${rm}${sh}`];
  },
};

// ------------------------------------------------------------ add/sub (shifted register)
/** rn + b (op 0) or rn - b (op 1) into rd; flags when imm3 (S) */
function addOrSub(c: A64Cpu, i: A64Insn, bl: number, bh: number): void {
  if (i.op) c.addc(i.d, c.lo[i.n], c.hi[i.n], ~bl, ~bh, 1, i.sf, i.imm3 === 1);
  else c.addc(i.d, c.lo[i.n], c.hi[i.n], bl, bh, 0, i.sf, i.imm3 === 1);
}
// op = op(sub) ; op2 = shift type; imm2 = amount; imm3 = S
function addSubShifted(c: A64Cpu, i: A64Insn): void {
  let bl: number, bh: number;
  if (i.sf) { bl = c.shift64(c.lo[i.m], c.hi[i.m], i.op2, i.imm2); bh = c.th; }
  else { bl = A64Cpu.shift32(c.lo[i.m], i.op2, i.imm2); bh = 0; }
  addOrSub(c, i, bl, bh);
}
const addSubShiftedRow: Row = {
  name: 'add/sub (shifted register)', mask: 0x1f200000, match: 0x0b000000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 30, 1); i.imm3 = f(w, 29, 1);
    i.op2 = f(w, 22, 2); i.imm2 = f(w, 10, 6);
    if (i.op2 === 3 || (!i.sf && i.imm2 >= 32)) return false;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm);
    i.exec = addSubShifted;
    return true;
  },
  fmt(i) {
    const sh = i.imm2 === 0 && i.op2 === 0 ? '' : `, ${SHIFT[i.op2]} #${i.imm2}`;
    const rm = gz(i.rm, i.sf);
    if (i.imm3 && i.rd === 31) return [i.op ? 'cmp' : 'cmn', `${gz(i.rn, i.sf)}, ${rm}${sh}`];
    if (i.op && i.rn === 31) return [i.imm3 ? 'negs' : 'neg', `${gz(i.rd, i.sf)}, ${rm}${sh}`];
    return [(i.op ? 'sub' : 'add') + (i.imm3 ? 's' : ''), `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}, ${rm}${sh}`];
  },
};

// ------------------------------------------------------------ add/sub (extended register)
// op2 = extend option, imm2 = shift (0..4)
function addSubExt(c: A64Cpu, i: A64Insn): void {
  const bl = c.extend(i.m, i.op2, i.imm2), bh = i.sf ? c.th : 0;
  addOrSub(c, i, bl, bh);
}
const addSubExtRow: Row = {
  name: 'add/sub (extended register)', mask: 0x1f200000, match: 0x0b200000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 30, 1); i.imm3 = f(w, 29, 1);
    i.op2 = f(w, 13, 3); i.imm2 = f(w, 10, 3);
    if (f(w, 22, 2) !== 0 || i.imm2 > 4) return false;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = i.imm3 ? wZ(i.rd) : rS(i.rd); i.n = rS(i.rn); i.m = rZ(i.rm);
    i.exec = addSubExt;
    return true;
  },
  fmt(i) {
    const rm = gz(i.rm, i.sf && (i.op2 & 3) === 3 ? 1 : 0);
    let ext: string;
    const lslForm = (i.rd === 31 || i.rn === 31) && i.op2 === (i.sf ? 3 : 2);
    if (lslForm) ext = i.imm2 ? `, lsl #${i.imm2}` : '';
    else ext = `, ${EXTEND[i.op2]}${i.imm2 ? ` #${i.imm2}` : ''}`;
    if (i.imm3 && i.rd === 31) return [i.op ? 'cmp' : 'cmn', `${gs(i.rn, i.sf)}, ${rm}${ext}`];
    const rd = i.imm3 ? gz(i.rd, i.sf) : gs(i.rd, i.sf);
    return [(i.op ? 'sub' : 'add') + (i.imm3 ? 's' : ''), `${rd}, ${gs(i.rn, i.sf)}, ${rm}${ext}`];
  },
};

// ------------------------------------------------------------ adc/sbc
function adcSbc(c: A64Cpu, i: A64Insn): void {
  const bl = c.lo[i.m], bh = c.hi[i.m];
  if (i.op) c.addc(i.d, c.lo[i.n], c.hi[i.n], ~bl, ~bh, c.cf, i.sf, i.imm3 === 1);
  else c.addc(i.d, c.lo[i.n], c.hi[i.n], bl, bh, c.cf, i.sf, i.imm3 === 1);
}
const adcSbcRow: Row = {
  name: 'adc/sbc', mask: 0x1fe0fc00, match: 0x1a000000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 30, 1); i.imm3 = f(w, 29, 1);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm);
    i.exec = adcSbc;
    return true;
  },
  fmt(i) {
    const s = i.imm3 ? 's' : '';
    if (i.op && i.rn === 31) return [`ngc${s}`, `${gz(i.rd, i.sf)}, ${gz(i.rm, i.sf)}`];
    return [(i.op ? 'sbc' : 'adc') + s, `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}, ${gz(i.rm, i.sf)}`];
  },
};

// ------------------------------------------------------------ conditional compare
// op = 1 ccmp / 0 ccmn; op2 = 1 immediate form; imm = imm5; imm2 = nzcv
function condCmp(c: A64Cpu, i: A64Insn): void {
  if (!c.cond(i.cond)) { c.setNzcv(i.imm2); return; }
  const bl = i.op2 ? i.imm : c.lo[i.m], bh = i.op2 ? 0 : c.hi[i.m];
  if (i.op) c.addc(ZR_SINK, c.lo[i.n], c.hi[i.n], ~bl, ~bh, 1, i.sf, true);
  else c.addc(ZR_SINK, c.lo[i.n], c.hi[i.n], bl, bh, 0, i.sf, true);
}
const ZR_SINK = wZ(31);
const condCmpRow: Row = {
  name: 'conditional compare', mask: 0x3fe00410, match: 0x3a400000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 30, 1); i.op2 = f(w, 11, 1);
    i.cond = f(w, 12, 4); i.imm2 = f(w, 0, 4);
    i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.imm = i.rm;
    i.n = rZ(i.rn); i.m = rZ(i.rm);
    i.exec = condCmp;
    return true;
  },
  fmt(i) {
    const b = i.op2 ? `#${i.imm}` : gz(i.rm, i.sf);
    return [i.op ? 'ccmp' : 'ccmn', `${gz(i.rn, i.sf)}, ${b}, #${i.imm2}, ${COND[i.cond]}`];
  },
};

// ------------------------------------------------------------ conditional select
// op = op*2 + op2<0> (csel csinc csinv csneg)
function condSel(c: A64Cpu, i: A64Insn): void {
  if (c.cond(i.cond)) { c.lo[i.d] = c.lo[i.n]; c.hi[i.d] = i.sf ? c.hi[i.n] : 0; return; }
  let l = c.lo[i.m], h = i.sf ? c.hi[i.m] : 0;
  switch (i.op) {
    case 1:
      l = (l >>> 0) + 1;
      if (l > 0xffffffff) { l = 0; h = i.sf ? h + 1 : 0; }
      l |= 0; h |= 0;
      break;
    case 2: l = ~l; h = i.sf ? ~h : 0; break;
    case 3:
      if (i.sf) { l = ~l; h = ~h; l = (l >>> 0) + 1; if (l > 0xffffffff) { l = 0; h = h + 1; } l |= 0; h |= 0; }
      else l = -l | 0;
      break;
    default: break;
  }
  c.lo[i.d] = l; c.hi[i.d] = h;
}
const condSelRow: Row = {
  name: 'conditional select', mask: 0x1fe00800, match: 0x1a800000,
  decode(w, i) {
    if (f(w, 29, 1)) return false;
    i.sf = f(w, 31, 1); i.op = f(w, 30, 1) * 2 + f(w, 10, 1);
    i.cond = f(w, 12, 4);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm);
    i.exec = condSel;
    return true;
  },
  fmt(i) {
    const rd = gz(i.rd, i.sf), rn = gz(i.rn, i.sf), inv = COND[i.cond ^ 1];
    if (i.cond < 14 && i.rn === i.rm) {
      if (i.op === 1) return i.rn === 31 ? ['cset', `${rd}, ${inv}`] : ['cinc', `${rd}, ${rn}, ${inv}`];
      if (i.op === 2) return i.rn === 31 ? ['csetm', `${rd}, ${inv}`] : ['cinv', `${rd}, ${rn}, ${inv}`];
      if (i.op === 3) return ['cneg', `${rd}, ${rn}, ${inv}`];
    }
    return [['csel', 'csinc', 'csinv', 'csneg'][i.op], `${rd}, ${rn}, ${gz(i.rm, i.sf)}, ${COND[i.cond]}`];
  },
};

// ------------------------------------------------------------ data processing (2 source)
function udiv(c: A64Cpu, i: A64Insn): void {
  if (!i.sf) { const b = c.lo[i.m] >>> 0; c.lo[i.d] = b === 0 ? 0 : ((c.lo[i.n] >>> 0) / b) | 0; c.hi[i.d] = 0; return; }
  const b = c.x64(i.m);
  c.setX64(i.d, b === 0n ? 0n : c.x64(i.n) / b);
}
function sdiv(c: A64Cpu, i: A64Insn): void {
  if (!i.sf) {
    const a = c.lo[i.n], b = c.lo[i.m];
    c.lo[i.d] = b === 0 ? 0 : (a === -0x80000000 && b === -1 ? a : (a / b) | 0); c.hi[i.d] = 0; return;
  }
  const b = BigInt.asIntN(64, c.x64(i.m));
  c.setX64(i.d, b === 0n ? 0n : BigInt.asUintN(64, BigInt.asIntN(64, c.x64(i.n)) / b));
}
function shiftVar(c: A64Cpu, i: A64Insn): void {
  if (i.sf) { c.lo[i.d] = c.shift64(c.lo[i.n], c.hi[i.n], i.op2, c.lo[i.m] & 63); c.hi[i.d] = c.th; }
  else { c.lo[i.d] = A64Cpu.shift32(c.lo[i.n], i.op2, c.lo[i.m] & 31); c.hi[i.d] = 0; }
}
const dp2Row: Row = {
  name: 'data processing (2 source)', mask: 0x7fe00000, match: 0x1ac00000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 10, 6);
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm);
    if (i.op === 2) i.exec = udiv;
    else if (i.op === 3) i.exec = sdiv;
    else if (i.op >= 8 && i.op <= 11) { i.op2 = i.op - 8; i.exec = shiftVar; }
    else return false;
    return true;
  },
  fmt(i) {
    const name = i.op === 2 ? 'udiv' : i.op === 3 ? 'sdiv' : SHIFT[i.op - 8];
    return [name, `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}, ${gz(i.rm, i.sf)}`];
  },
};

// ------------------------------------------------------------ data processing (1 source)
function rbit32(v: number): number {
  v = ((v >>> 1) & 0x55555555) | ((v & 0x55555555) << 1);
  v = ((v >>> 2) & 0x33333333) | ((v & 0x33333333) << 2);
  v = ((v >>> 4) & 0x0f0f0f0f) | ((v & 0x0f0f0f0f) << 4);
  v = ((v >>> 8) & 0x00ff00ff) | ((v & 0x00ff00ff) << 8);
  return (v >>> 16) | (v << 16);
}
function bswap32(v: number): number { return ((v >>> 24) | ((v >> 8) & 0xff00) | ((v & 0xff00) << 8) | (v << 24)) | 0; }
function rev16(v: number): number { return ((v >>> 8) & 0x00ff00ff) | ((v & 0x00ff00ff) << 8); }
function cls32(v: number): number { return Math.clz32(v ^ (v >> 31)) - 1; }

function dp1(c: A64Cpu, i: A64Insn): void {
  const l = c.lo[i.n], h = c.hi[i.n];
  let rl: number, rh = 0;
  if (!i.sf) {
    switch (i.op) {
      case 0: rl = rbit32(l); break;
      case 1: rl = rev16(l); break;
      case 2: rl = bswap32(l); break;
      case 4: rl = Math.clz32(l); break;
      default: rl = cls32(l);
    }
  } else {
    switch (i.op) {
      case 0: rl = rbit32(h); rh = rbit32(l); break;
      case 1: rl = rev16(l); rh = rev16(h); break;
      case 2: rl = bswap32(l); rh = bswap32(h); break;
      case 3: rl = bswap32(h); rh = bswap32(l); break;
      case 4: rl = h !== 0 ? Math.clz32(h) : 32 + Math.clz32(l); break;
      default: {
        const s = h >> 31, xh = h ^ s, xl = l ^ s;
        rl = (xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl)) - 1;
      }
    }
  }
  c.lo[i.d] = rl; c.hi[i.d] = rh;
}
const dp1Row: Row = {
  name: 'data processing (1 source)', mask: 0x7fff0000, match: 0x5ac00000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 10, 6);
    if (i.op > 5 || (i.op === 3 && !i.sf)) return false;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
    i.d = wZ(i.rd); i.n = rZ(i.rn);
    i.exec = dp1;
    return true;
  },
  fmt(i) {
    const name = ['rbit', 'rev16', i.sf ? 'rev32' : 'rev', 'rev', 'clz', 'cls'][i.op];
    return [name, `${gz(i.rd, i.sf)}, ${gz(i.rn, i.sf)}`];
  },
};

// ------------------------------------------------------------ data processing (3 source)
// op = op31*2 + o0: 0 madd 1 msub 2 smaddl 3 smsubl 4 smulh 10 umaddl 11 umsubl 12 umulh
function madd32(c: A64Cpu, i: A64Insn): void {
  const p = Math.imul(c.lo[i.n], c.lo[i.m]);
  c.lo[i.d] = i.op === 1 ? (c.lo[i.a] - p) | 0 : (c.lo[i.a] + p) | 0; c.hi[i.d] = 0;
}
function mul3(c: A64Cpu, i: A64Insn): void {
  const n = c.x64(i.n), m = c.x64(i.m), a = c.x64(i.a);
  let r: bigint;
  switch (i.op) {
    case 0: r = a + n * m; break;
    case 1: r = a - n * m; break;
    case 2: r = a + BigInt.asIntN(32, n) * BigInt.asIntN(32, m); break;
    case 3: r = a - BigInt.asIntN(32, n) * BigInt.asIntN(32, m); break;
    case 4: r = (BigInt.asIntN(64, n) * BigInt.asIntN(64, m)) >> 64n; break;
    case 10: r = a + BigInt.asUintN(32, n) * BigInt.asUintN(32, m); break;
    case 11: r = a - BigInt.asUintN(32, n) * BigInt.asUintN(32, m); break;
    default: r = (n * m) >> 64n;
  }
  c.setX64(i.d, BigInt.asUintN(64, r));
}
/** 64-bit madd/msub without bigint: the low 64 bits of n*m from 16-bit partial products */
function madd64(c: A64Cpu, i: A64Insn): void {
  const nl = c.lo[i.n], nh = c.hi[i.n], ml = c.lo[i.m], mh = c.hi[i.m];
  const a = nl >>> 16, b = nl & 0xffff, cc = ml >>> 16, d = ml & 0xffff;
  const mid = a * d + b * cc;
  const low = b * d + (mid % 65536) * 65536;
  const carry = Math.floor(low / 4294967296);
  let pl = low | 0;
  let ph = (a * cc + Math.floor(mid / 65536) + carry + Math.imul(nl, mh) + Math.imul(nh, ml)) | 0;
  if (i.op === 1) { pl = ~pl; ph = ~ph; c.addc(i.d, c.lo[i.a], c.hi[i.a], pl, ph, 1, 1, false); return; }
  c.addc(i.d, c.lo[i.a], c.hi[i.a], pl, ph, 0, 1, false);
}
const dp3Row: Row = {
  name: 'data processing (3 source)', mask: 0x1f000000, match: 0x1b000000,
  decode(w, i) {
    i.sf = f(w, 31, 1); i.op = f(w, 21, 3) * 2 + f(w, 15, 1);
    if (f(w, 29, 2) !== 0 || ![0, 1, 2, 3, 4, 10, 11, 12].includes(i.op) || (!i.sf && i.op > 1)) return false;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.rm = f(w, 16, 5); i.ra = f(w, 10, 5);
    if ((i.op === 4 || i.op === 12) && i.ra !== 31) return false;
    i.d = wZ(i.rd); i.n = rZ(i.rn); i.m = rZ(i.rm); i.a = rZ(i.ra);
    i.exec = i.sf ? (i.op <= 1 ? madd64 : mul3) : madd32;
    return true;
  },
  fmt(i) {
    const long = i.op >= 2 && i.op !== 4 && i.op !== 12;
    const src = long ? 0 : i.sf;
    const ops = `${gz(i.rd, i.sf)}, ${gz(i.rn, src)}, ${gz(i.rm, src)}`;
    if (i.op === 4 || i.op === 12) return [i.op === 4 ? 'smulh' : 'umulh', ops];
    const names: Record<number, [string, string]> = {
      0: ['madd', 'mul'], 1: ['msub', 'mneg'], 2: ['smaddl', 'smull'], 3: ['smsubl', 'smnegl'], 10: ['umaddl', 'umull'], 11: ['umsubl', 'umnegl'],
    };
    const [full, alias] = names[i.op];
    return i.ra === 31 ? [alias, ops] : [full, `${ops}, ${gz(i.ra, i.sf)}`];
  },
};

export const DATA_REG_ROWS: readonly Row[] = [
  logicalShifted, addSubShiftedRow, addSubExtRow, adcSbcRow, condCmpRow, condSelRow, dp2Row, dp1Row, dp3Row,
];
