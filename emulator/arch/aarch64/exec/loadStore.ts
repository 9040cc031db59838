/**
 * Loads and stores of one register (unsigned offset, unscaled, pre/post
 * index, unprivileged, register offset with extend/shift, pc-relative
 * literal) and of register pairs (offset, pre/post index, non-temporal).
 * prfm is a no-op.
 */
import { A64Cpu } from '../cpu';
import { A64Insn, Row } from '../insn';
import { VAddr } from '../../../memory/address';
import { f, sf as sx, rZ, wZ, rS, gz, base, target, EXTEND } from '../fmt';

const TWO32 = 4294967296;
/** op values: store, load zero-extended, load sign-extended to 64 / to 32 bits, prefetch (also the translator's, ../jit.ts) */
export const ST = 0, LDZ = 1, LDS64 = 2, LDS32 = 3, PRFM = 4;

/** the register access of one load/store at address a (rt: d for loads, m for stores) */
function access(c: A64Cpu, i: A64Insn, a: VAddr): void {
  const size = i.size;
  switch (i.op) {
    case ST: c.store(a, size, c.lo[i.m], c.hi[i.m]); return;
    case LDZ: { const l = c.load(a, size); c.lo[i.d] = l; c.hi[i.d] = c.th; return; }
    case LDS64: case LDS32: {
      let l = c.load(a, size);
      if (size === 1) l = (l << 24) >> 24; else if (size === 2) l = (l << 16) >> 16;
      c.lo[i.d] = l; c.hi[i.d] = i.op === LDS64 ? l >> 31 : 0; return;
    }
    default: return;
  }
}
function ldstImm(c: A64Cpu, i: A64Insn): void { access(c, i, c.addrOf(i.n, i.op === ST ? 'write' : 'read') + i.imm); }
function ldstPre(c: A64Cpu, i: A64Insn): void { const a = c.addrOf(i.n, i.op === ST ? 'write' : 'read') + i.imm; access(c, i, a); c.setAddr(i.n, a); }
function ldstPost(c: A64Cpu, i: A64Insn): void { const a = c.addrOf(i.n, i.op === ST ? 'write' : 'read'); access(c, i, a); c.setAddr(i.n, a + i.imm); }
/** register offset: a = index slot, op2 = extend option, imm2 = shift */
function ldstReg(c: A64Cpu, i: A64Insn): void {
  const l = c.extend(i.a, i.op2, i.imm2);
  access(c, i, c.addrOf(i.n, i.op === ST ? 'write' : 'read') + c.th * TWO32 + (l >>> 0));
}
/** fast paths: 64-bit load / store with an immediate offset (one 8-byte access for the debug registers, made as two words) */
function ldrX(c: A64Cpu, i: A64Insn): void {
  const a = c.addrOf(i.n, 'read') + i.imm, m = c.mem;
  if (m.watcher !== null) m.watcher.access(a, 8, false);
  const l = m.read32(a) | 0; c.hi[i.d] = m.read32(a + 4) | 0; c.lo[i.d] = l;
}
function strX(c: A64Cpu, i: A64Insn): void {
  const a = c.addrOf(i.n, 'write') + i.imm, m = c.mem;
  if (m.watcher !== null) m.watcher.access(a, 8, true);
  m.write32(a, c.lo[i.m]); m.write32(a + 4, c.hi[i.m]);
}
function nop(): void { /* prfm */ }

/** size/opc -> op, or -1 when unallocated (V = 0) */
function opOf(size: number, opc: number): number {
  if (opc === 0) return ST;
  if (opc === 1) return LDZ;
  if (opc === 2) return size === 3 ? PRFM : LDS64;
  return size >= 2 ? -1 : LDS32;
}
function setRt(w: number, i: A64Insn): boolean {
  const size = f(w, 30, 2), op = opOf(size, f(w, 22, 2));
  if (op < 0 || f(w, 26, 1)) return false;
  i.size = 1 << size; i.op = op;
  i.rd = f(w, 0, 5); i.rn = f(w, 5, 5);
  i.d = wZ(i.rd); i.m = rZ(i.rd); i.n = rS(i.rn);
  return true;
}
/** mnemonic suffix and register of the transfer */
function nameRt(i: A64Insn, stem: string): [string, string] {
  const suf = i.op === LDS64 || i.op === LDS32 ? (i.size === 1 ? 'sb' : i.size === 2 ? 'sh' : 'sw') : (i.size === 1 ? 'b' : i.size === 2 ? 'h' : '');
  const x = i.op === LDS64 || ((i.op === ST || i.op === LDZ) && i.size === 8) ? 1 : 0;
  const ld = i.op === ST ? 'st' : 'ld';
  return [`${ld}${stem}${suf}`, gz(i.rd, x)];
}
const PRF_TYPE = ['pld', 'pli', 'pst'];
function prfop(rt: number): string {
  const t = rt >> 3, tgt = (rt >> 1) & 3, pol = rt & 1;
  return t < 3 && tgt < 3 ? `${PRF_TYPE[t]}l${tgt + 1}${pol ? 'strm' : 'keep'}` : `#${rt}`;
}
function fmtRt(i: A64Insn, stem: string, addr: string): [string, string] {
  if (i.op === PRFM) return [stem === 'ur' ? 'prfum' : 'prfm', `${prfop(i.rd)}, ${addr}`];
  const [name, rt] = nameRt(i, stem);
  return [name, `${rt}, ${addr}`];
}

const ldstUimm: Row = {
  name: 'load/store (unsigned offset)', mask: 0x3b000000, match: 0x39000000,
  decode(w, i) {
    if (!setRt(w, i)) return false;
    i.imm = f(w, 10, 12) * i.size;
    i.exec = i.op === PRFM ? nop : i.size === 8 && i.op === LDZ ? ldrX : i.size === 8 && i.op === ST ? strX : ldstImm;
    return true;
  },
  fmt: i => fmtRt(i, 'r', i.imm ? `[${base(i.rn)}, #${i.imm}]` : `[${base(i.rn)}]`),
};

// imm2: 0 unscaled, 1 post, 2 unprivileged, 3 pre
const ldstImm9: Row = {
  name: 'load/store (unscaled, pre/post-index, unprivileged)', mask: 0x3b200000, match: 0x38000000,
  decode(w, i) {
    if (!setRt(w, i)) return false;
    i.imm = sx(w, 12, 9); i.imm2 = f(w, 10, 2);
    if (i.op === PRFM && i.imm2 !== 0) return false;
    i.exec = i.op === PRFM ? nop : i.imm2 === 1 ? ldstPost : i.imm2 === 3 ? ldstPre : ldstImm;
    return true;
  },
  fmt(i) {
    const b = base(i.rn);
    switch (i.imm2) {
      case 0: return fmtRt(i, 'ur', i.imm ? `[${b}, #${i.imm}]` : `[${b}]`);
      case 1: return fmtRt(i, 'r', `[${b}], #${i.imm}`);
      case 2: return fmtRt(i, 'tr', i.imm ? `[${b}, #${i.imm}]` : `[${b}]`);
      default: return fmtRt(i, 'r', `[${b}, #${i.imm}]!`);
    }
  },
};

const ldstRegOff: Row = {
  name: 'load/store (register offset)', mask: 0x3b200c00, match: 0x38200800,
  decode(w, i) {
    if (!setRt(w, i)) return false;
    i.op2 = f(w, 13, 3);
    if ((i.op2 & 2) === 0) return false;
    i.imm3 = f(w, 12, 1);
    i.imm2 = i.imm3 ? Math.log2(i.size) : 0;
    i.rm = f(w, 16, 5); i.a = rZ(i.rm);
    i.exec = i.op === PRFM ? nop : ldstReg;
    return true;
  },
  fmt(i) {
    const x = i.op2 & 1;
    let ext: string;
    if (i.op2 === 3) ext = i.imm3 ? `, lsl #${Math.log2(i.size)}` : '';
    else ext = `, ${EXTEND[i.op2]}${i.imm3 ? ` #${Math.log2(i.size)}` : ''}`;
    return fmtRt(i, 'r', `[${base(i.rn)}, ${gz(i.rm, x)}${ext}]`);
  },
};

function ldrLit(c: A64Cpu, i: A64Insn): void { access(c, i, i.target); }
const ldrLiteral: Row = {
  name: 'load register (literal)', mask: 0x3b000000, match: 0x18000000, pcRel: true,
  decode(w, i) {
    if (f(w, 26, 1)) return false;
    const opc = f(w, 30, 2);
    i.rd = f(w, 0, 5); i.d = wZ(i.rd);
    i.target = i.addr + sx(w, 5, 19) * 4;
    i.op = opc === 2 ? LDS64 : opc === 3 ? PRFM : LDZ;
    i.size = opc === 0 ? 4 : opc === 1 ? 8 : 4;
    i.exec = i.op === PRFM ? nop : ldrLit;
    return true;
  },
  fmt(i) {
    if (i.op === PRFM) return ['prfm', `${prfop(i.rd)}, ${target(i.target)}`];
    return [i.op === LDS64 ? 'ldrsw' : 'ldr', `${gz(i.rd, i.size === 8 || i.op === LDS64 ? 1 : 0)}, ${target(i.target)}`];
  },
};

// ------------------------------------------------------------ pairs
// op: ST / LDZ / LDS64 (ldpsw); a = second register (read slot for stores), ra = its number; imm2 = mode
function pairAccess(c: A64Cpu, i: A64Insn, a: VAddr): void {
  const s = i.size;
  // both elements are shown to the debug registers before either moves (a watchpoint on the second leaves the first unwritten)
  c.watchPair(a, s, i.op === ST);
  if (i.op === ST) {
    c.store(a, s, c.lo[i.m], c.hi[i.m]);
    c.store(a + s, s, c.lo[i.a], c.hi[i.a]);
    return;
  }
  let l1 = c.load(a, s), h1 = c.th;
  let l2 = c.load(a + s, s), h2 = c.th;
  if (i.op === LDS64) { h1 = l1 >> 31; h2 = l2 >> 31; }
  c.lo[i.d] = l1; c.hi[i.d] = h1;
  const d2 = wZ(i.ra);
  c.lo[d2] = l2; c.hi[d2] = h2;
}
function pairOff(c: A64Cpu, i: A64Insn): void { pairAccess(c, i, c.addrOf(i.n, i.op === ST ? 'write' : 'read') + i.imm); }
function pairPre(c: A64Cpu, i: A64Insn): void { const a = c.addrOf(i.n, i.op === ST ? 'write' : 'read') + i.imm; pairAccess(c, i, a); c.setAddr(i.n, a); }
function pairPost(c: A64Cpu, i: A64Insn): void { const a = c.addrOf(i.n, i.op === ST ? 'write' : 'read'); pairAccess(c, i, a); c.setAddr(i.n, a + i.imm); }

const ldstPair: Row = {
  name: 'load/store pair', mask: 0x3a000000, match: 0x28000000,
  decode(w, i) {
    if (f(w, 26, 1)) return false;
    const opc = f(w, 30, 2), l = f(w, 22, 1);
    i.imm2 = f(w, 23, 2);
    if (opc === 3 || (opc === 1 && (!l || i.imm2 === 0))) return false;
    i.size = opc === 2 ? 8 : 4;
    i.op = !l ? ST : opc === 1 ? LDS64 : LDZ;
    i.rd = f(w, 0, 5); i.rn = f(w, 5, 5); i.ra = f(w, 10, 5);
    i.d = wZ(i.rd); i.m = rZ(i.rd); i.a = rZ(i.ra); i.n = rS(i.rn);
    i.imm = sx(w, 15, 7) * i.size;
    i.exec = i.imm2 === 1 ? pairPost : i.imm2 === 3 ? pairPre : pairOff;
    return true;
  },
  fmt(i) {
    const x = i.size === 8 || i.op === LDS64 ? 1 : 0;
    const name = (i.op === ST ? 'st' : 'ld') + (i.imm2 === 0 ? 'np' : 'p') + (i.op === LDS64 ? 'sw' : '');
    const b = base(i.rn);
    const addr = i.imm2 === 1 ? `[${b}], #${i.imm}` : i.imm2 === 3 ? `[${b}, #${i.imm}]!` : i.imm ? `[${b}, #${i.imm}]` : `[${b}]`;
    return [name, `${gz(i.rd, x)}, ${gz(i.ra, x)}, ${addr}`];
  },
};

export const LOAD_STORE_ROWS: readonly Row[] = [ldstUimm, ldstImm9, ldstRegOff, ldrLiteral, ldstPair];
