/**
 * Table-driven x86_64 decoder: prefixes, REX, opcode map lookup (table.ts),
 * ModRM/SIB/displacement, immediates. Produces an Insn with every field the
 * executors, the disassembler and the length decoder need. Returns null for
 * bytes that are not a (supported) instruction — the CPU raises #UD.
 */
import { Insn, NO_REG, REP_F2, REP_F3, REP_NONE, SEG_FS, SEG_GS, SEG_NONE } from './insn';
import { NOP_DEF, ONE_BYTE, OPS, OpDef, Slot, TWO_BYTE, VEX } from './table';
import { COUNT_1, COUNT_CL, COUNT_IMM } from './exec/shift';
import { ud } from './exec/system';

const TWO32 = 4294967296;

export const MAX_INSN_LEN = 15;
const PAUSE_DEF = OPS.find(o => o.code === 'f3 90') as OpDef;

/** Fetch byte k of the instruction (may throw MemoryFault for execution fetches). */
export type ByteFetch = (k: number) => number;

function resolve(s: Slot, modrm: number): OpDef | undefined {
  if (s.exact) { const e = s.exact.get(modrm); if (e) return e; }
  if (s.group) { const g = s.group[(modrm >> 3) & 7]; if (g) return g; }
  return s.plain;
}

function sizeOf(letter: string, osize: number, rexW: boolean): number {
  switch (letter) {
    case 'b': return 1;
    case 'w': return 2;
    case 'd': return 4;
    case 'q': return 8;
    case 'y': return rexW ? 8 : 4;
    default: return osize;
  }
}

function byteReg(r: number, rex: number): number {
  return rex === 0 && r >= 4 && r < 8 ? r + 12 : r;
}

/** Decode one instruction at VAddr `addr`. */
export function decodeInsn(fetch: ByteFetch, addr: number): Insn | null {
  const raw: number[] = [];
  const next8 = (): number => {
    if (raw.length >= MAX_INSN_LEN) throw TOO_LONG;
    const b = fetch(raw.length);
    raw.push(b);
    return b;
  };
  try {
    return decodeInner(next8, raw, addr);
  } catch (e) {
    if (e === TOO_LONG) return null;
    throw e;
  }
}
const TOO_LONG = { tooLong: true };

function decodeInner(next8: () => number, raw: number[], addr: number): Insn | null {
  let p66 = false, p67 = false, rep = REP_NONE, lock = false, seg = SEG_NONE, rex = 0;
  const prefixes: number[] = [];
  let b: number;
  for (;;) {
    b = next8();
    if (b === 0x66) p66 = true;
    else if (b === 0x67) p67 = true;
    else if (b === 0xf3) rep = REP_F3;
    else if (b === 0xf2) rep = REP_F2;
    else if (b === 0xf0) lock = true;
    else if (b === 0x64) seg = SEG_FS;
    else if (b === 0x65) seg = SEG_GS;
    else if (b === 0x2e || b === 0x36 || b === 0x3e || b === 0x26) { /* ignored in 64-bit mode */ }
    else if ((b & 0xf0) === 0x40) { rex = b; prefixes.push(b); continue; }
    else break;
    prefixes.push(b);
    rex = 0; // a legacy prefix after REX cancels it
  }
  let map = ONE_BYTE;
  let twoByte = false;
  let vvvv = 0;
  let vexSlot: Slot | undefined;
  if (b === 0xc4 || b === 0xc5) {
    // VEX prefix (always VEX in 64-bit mode); legacy 66/f2/f3/REX before it are invalid
    if (rex !== 0 || p66 || rep !== REP_NONE) return null;
    const v1 = next8();
    let mmmmm = 1, w = 0, v2 = v1;
    rex = 0x40 | (v1 & 0x80 ? 0 : 4);
    if (b === 0xc4) {
      mmmmm = v1 & 0x1f;
      rex |= (v1 & 0x40 ? 0 : 2) | (v1 & 0x20 ? 0 : 1);
      v2 = next8();
      w = v2 >> 7;
    }
    if (w) rex |= 8;
    vvvv = (~v2 >> 3) & 15;
    if (v2 & 4) return null; // VEX.L = 1: vector forms only
    const pp = v2 & 3;
    b = next8();
    vexSlot = VEX.get(`${pp}:${mmmmm}:${b}`);
    if (!vexSlot) return null;
  } else if (b === 0x0f) { b = next8(); map = TWO_BYTE; twoByte = true; }
  const slot = vexSlot ?? map[b];
  if (!slot) return null;
  const f3slot = rep === REP_F3 ? slot.f3 : undefined;
  let modrm = -1;
  if (slot.needModrm || (f3slot && f3slot.needModrm)) modrm = next8();
  let def: OpDef | undefined;
  if (f3slot) { def = resolve(f3slot, modrm); if (def) rep = REP_NONE; }
  if (!def) {
    if (!twoByte && b === 0x90 && !(rex & 1)) def = rep === REP_F3 ? PAUSE_DEF : NOP_DEF;
    else def = resolve(slot, modrm);
  }
  if (!def) return null;

  const rexW = (rex & 8) !== 0;
  const osize = def.f64 ? 8 : rexW ? 8 : p66 ? 2 : def.d64 ? 8 : 4;
  let size = osize;
  for (const o of def.ops) {
    if (o.k === 'I' || o.k === 'J' || o.k === '1' || !o.s) continue;
    if (o.k === 'R' && o.fixed === 'CL') continue;
    size = sizeOf(o.s, osize, rexW);
    break;
  }

  const insn = new Insn(def, def.exec, new Uint8Array(0));
  insn.size = size;
  insn.asize = p67 ? 4 : 8;
  insn.rep = rep;
  insn.lock = lock;
  insn.seg = seg;
  insn.rex = rex !== 0;
  insn.prefixes = prefixes;
  insn.addr = addr;
  insn.vreg = vvvv;
  insn.cc = slot.low === 'cc' ? b & 0xf : def.srcSize ?? def.sub;

  // ModRM operand fields
  let ripRel = false;
  const usesModrm = def.ops.some(o => o.k === 'E' || o.k === 'G' || o.k === 'M');
  if (usesModrm && modrm >= 0) {
    const mod = modrm >> 6;
    const regf = ((modrm >> 3) & 7) | (rex & 4 ? 8 : 0);
    const rmf = modrm & 7;
    const gOp = def.ops.find(o => o.k === 'G');
    const eOp = def.ops.find(o => o.k === 'E' || o.k === 'M');
    insn.reg = gOp && gOp.s === 'b' ? byteReg(regf, rex) : regf;
    if (mod === 3) {
      if (eOp && eOp.k === 'M') return null; // memory-only operand (lea...) with a register: #UD
      const r = rmf | (rex & 1 ? 8 : 0);
      insn.rm = eOp && eOp.s === 'b' ? byteReg(r, rex) : r;
    } else {
      insn.hasMem = true;
      insn.rm = NO_REG;
      let base = NO_REG, index = NO_REG, scale = 0, disp = 0;
      let dispBytes = mod === 1 ? 1 : mod === 2 ? 4 : 0;
      if (rmf === 4) {
        const sib = next8();
        scale = sib >> 6;
        const idx = ((sib >> 3) & 7) | (rex & 2 ? 8 : 0);
        if (idx !== 4) index = idx;
        const bb = sib & 7;
        if (bb === 5 && mod === 0) dispBytes = 4;
        else base = bb | (rex & 1 ? 8 : 0);
      } else if (rmf === 5 && mod === 0) {
        ripRel = true;
        dispBytes = 4;
      } else base = rmf | (rex & 1 ? 8 : 0);
      if (dispBytes === 1) disp = (next8() << 24) >> 24;
      else if (dispBytes === 4) disp = next8() | (next8() << 8) | (next8() << 16) | (next8() << 24);
      insn.base = base; insn.index = index; insn.scale = scale; insn.disp = disp;
    }
  } else if (!usesModrm) {
    // register operands encoded in the opcode or fixed
    const z = def.ops.find(o => o.k === 'Z');
    if (z) {
      const r = (b & 7) | (rex & 1 ? 8 : 0);
      insn.rm = z.s === 'b' ? byteReg(r, rex) : r;
      insn.reg = 0; // xchg rAX, Zv
    } else if (def.ops.length > 0 && def.ops[0].k === 'R' && (def.ops[0].fixed === 'AL' || def.ops[0].fixed === 'rAX')) {
      insn.rm = 0;
    }
  }

  // immediates
  const imms: number[] = [];
  let immHi = 0;
  let countSrc = COUNT_1;
  let rel = 0;
  let hasRel = false;
  for (const o of def.ops) {
    if (o.k === 'I') {
      let v: number;
      const n = o.s === 'b' ? 1 : o.s === 'w' ? 2 : o.s === 'z' ? (osize === 2 ? 2 : 4) : o.s === 'v' ? osize : 4;
      if (n === 1) v = (next8() << 24) >> 24;
      else if (n === 2) v = ((next8() | (next8() << 8)) << 16) >> 16;
      else {
        v = next8() | (next8() << 8) | (next8() << 16) | (next8() << 24);
        if (n === 8) immHi = next8() | (next8() << 8) | (next8() << 16) | (next8() << 24);
      }
      if (n !== 8) immHi = v >> 31;
      imms.push(v);
      countSrc = COUNT_IMM;
    } else if (o.k === 'J') {
      hasRel = true;
      rel = o.s === 'b' ? (next8() << 24) >> 24 : next8() | (next8() << 8) | (next8() << 16) | (next8() << 24);
    } else if (o.k === 'R' && o.fixed === 'CL') countSrc = COUNT_CL;
    else if (o.k === '1') countSrc = COUNT_1;
  }
  if (imms.length > 0) {
    let v = imms[0];
    if (size === 1) { v &= 0xff; immHi = 0; } else if (size === 2) { v &= 0xffff; immHi = 0; } else if (size === 4) immHi = 0;
    insn.imm = v; insn.immHi = immHi;
  }
  insn.imm2 = imms.length > 1 ? imms[1] : countSrc;

  insn.len = raw.length;
  insn.next = addr + raw.length;
  insn.bytes = Uint8Array.from(raw);
  if (ripRel) {
    insn.ripRel = true; insn.base = NO_REG;
    const a = insn.next + insn.disp;
    // 67: eip + disp32, truncated to 32 bits and zero-extended
    insn.disp = p67 ? ((a % TWO32) + TWO32) % TWO32 : a;
  }
  if (hasRel) insn.target = insn.next + rel;
  if (def.fast) { const f = def.fast(insn); if (f) insn.exec = f; }
  // LOCK is only valid on a lockable instruction with a memory destination: anything else is #UD
  // when executed (the bytes still decode and disassemble, as llvm shows them)
  if (lock && !(def.lockable && insn.hasMem)) insn.exec = ud;
  return insn;
}
