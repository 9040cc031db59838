/**
 * Table-driven x86_64 decoder, in the order the bytes come: prefixes and
 * REX, the opcode (VEX prefix or 0f escape, table.ts lookup, mandatory f3,
 * ModRM group), ModRM/SIB/displacement, immediates. Produces an Insn with
 * every field the executors, the disassembler and the length decoder need,
 * and where each field lies in the bytes (InsnLayout, for the kprobes copy
 * and relocate.ts). Returns null for bytes that are not a (supported)
 * instruction — the CPU raises #UD.
 */
import { Insn, InsnLayout, NO_REG, REP_F2, REP_F3, REP_NONE, SEG_FS, SEG_GS, SEG_NONE } from './insn';
import { NOP_DEF, ONE_BYTE, OPS, OpDef, Operand, Slot, TWO_BYTE, VEX } from './table';
import { COUNT_1, COUNT_CL, COUNT_IMM } from './exec/shift';
import { ud } from './exec/system';
import { fpuGated } from './exec/fpuGate';

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
  const r = new Reader(fetch);
  try {
    return decodeInner(r, addr);
  } catch (e) {
    if (e === TOO_LONG) return null;
    throw e;
  }
}
const TOO_LONG = { tooLong: true };

/**
 * The last instruction decoded from bytes at each address. Decoding reads
 * the bytes in order and depends on nothing else, so an earlier decode at
 * the same address whose bytes start the new input is the same
 * instruction: registering a probe looks at one instruction several times
 * (the function scan, the safety checks, the slot copy, the detour buffer's
 * relocation). An Insn is never changed once decoded. Bounded: cleared
 * when full.
 */
const byAddr = new Map<number, Insn>();
const BY_ADDR_MAX = 1 << 12;

/** Decode one instruction from `bytes` (running past their end is undecodable: null). */
export function decodeBytes(bytes: Uint8Array, addr: number): Insn | null {
  const seen = byAddr.get(addr);
  if (seen !== undefined && startsWith(bytes, seen.bytes)) return seen;
  const insn = decodeInsn(k => {
    if (k >= bytes.length) throw TOO_LONG;
    return bytes[k];
  }, addr);
  if (insn !== null) {
    if (byAddr.size >= BY_ADDR_MAX) byAddr.clear();
    byAddr.set(addr, insn);
  }
  return insn;
}

function startsWith(bytes: Uint8Array, head: Uint8Array): boolean {
  const n = head.length;
  if (bytes.length < n) return false;
  for (let i = 0; i < n; i++) if (bytes[i] !== head[i]) return false;
  return true;
}

/** The instruction's bytes as they are fetched, at most MAX_INSN_LEN. */
class Reader {
  readonly raw: number[] = [];
  constructor(private readonly fetch: ByteFetch) {}
  get pos(): number { return this.raw.length; }
  next8(): number {
    const raw = this.raw;
    if (raw.length >= MAX_INSN_LEN) throw TOO_LONG;
    const b = this.fetch(raw.length);
    raw.push(b);
    return b;
  }
  /** little-endian int32 */
  next32(): number {
    return this.next8() | (this.next8() << 8) | (this.next8() << 16) | (this.next8() << 24);
  }
}

/** What the prefixes said, and the first byte after them. */
interface Prefixes {
  p66: boolean;
  p67: boolean;
  rep: number;
  lock: boolean;
  seg: number;
  /** REX byte in effect (0: none); VEX sets its R X B W bits here too */
  rex: number;
  rexOff: number;
  list: number[];
  /** first byte after the prefixes */
  b: number;
}

/** the prefix list of every instruction without prefixes (shared: nothing writes an instruction's list) */
const NO_PREFIXES: number[] = Object.freeze([]) as unknown as number[];

function readPrefixes(r: Reader): Prefixes {
  // the fields in locals, the object made once at the end (no field of it written while the prefixes are read)
  let p66 = false, p67 = false, rep = REP_NONE, lock = false, seg = SEG_NONE, rex = 0, rexOff = -1;
  let list = NO_PREFIXES;
  for (;;) {
    const b = r.next8();
    if (b === 0x66) p66 = true;
    else if (b === 0x67) p67 = true;
    else if (b === 0xf3) rep = REP_F3;
    else if (b === 0xf2) rep = REP_F2;
    else if (b === 0xf0) lock = true;
    else if (b === 0x64) seg = SEG_FS;
    else if (b === 0x65) seg = SEG_GS;
    else if (b === 0x2e || b === 0x36 || b === 0x3e || b === 0x26) { /* ignored in 64-bit mode */ }
    else if ((b & 0xf0) === 0x40) { rex = b; rexOff = r.pos - 1; list = list === NO_PREFIXES ? [b] : (list.push(b), list); continue; }
    else return { p66, p67, rep, lock, seg, rex, rexOff, list, b };
    list = list === NO_PREFIXES ? [b] : (list.push(b), list);
    rex = 0; // a legacy prefix after REX cancels it
    rexOff = -1;
  }
}

/** The opcode's table slot and where its bytes lie. */
interface Opcode {
  slot: Slot;
  /** last opcode byte (the one the slot is indexed by) */
  b: number;
  twoByte: boolean;
  vvvv: number;
  vexOff: number;
  vexLen: number;
  opcodeOff: number;
}

/** VEX prefix (always VEX in 64-bit mode): its R X B W bits go into p.rex. */
function readVex(r: Reader, p: Prefixes, c: number): Opcode | null {
  // legacy 66/f2/f3/REX before VEX are invalid
  if (p.rex !== 0 || p.p66 || p.rep !== REP_NONE) return null;
  const vexOff = r.pos - 1;
  const v1 = r.next8();
  let mmmmm = 1, w = 0, v2 = v1;
  p.rex = 0x40 | (v1 & 0x80 ? 0 : 4);
  if (c === 0xc4) {
    mmmmm = v1 & 0x1f;
    p.rex |= (v1 & 0x40 ? 0 : 2) | (v1 & 0x20 ? 0 : 1);
    v2 = r.next8();
    w = v2 >> 7;
  }
  if (w) p.rex |= 8;
  if (v2 & 4) return null; // VEX.L = 1: vector forms only
  const pp = v2 & 3;
  const opcodeOff = r.pos;
  const b = r.next8();
  const slot = VEX.get(`${pp}:${mmmmm}:${b}`);
  if (!slot) return null;
  return { slot, b, twoByte: false, vvvv: (~v2 >> 3) & 15, vexOff, vexLen: opcodeOff - vexOff, opcodeOff };
}

function readOpcode(r: Reader, p: Prefixes): Opcode | null {
  const c = p.b;
  if (c === 0xc4 || c === 0xc5) return readVex(r, p, c);
  const opcodeOff = r.pos - 1;
  let b = c, map = ONE_BYTE, twoByte = false;
  if (c === 0x0f) {
    b = r.next8();
    map = TWO_BYTE;
    twoByte = true;
  }
  const slot = map[b];
  if (!slot) return null; // 0f 38 / 0f 3a three-byte maps: no legacy-encoded entries in the table
  return { slot, b, twoByte, vvvv: 0, vexOff: -1, vexLen: 0, opcodeOff };
}

/** The slot a mandatory prefix selects (f3 / f2 / 66, as the SDM's "mandatory prefix" rule), if the opcode has one. */
function mandatorySlot(p: Prefixes, slot: Slot): Slot | undefined {
  if (p.rep === REP_F3 && slot.f3) return slot.f3;
  if (p.rep === REP_F2 && slot.f2) return slot.f2;
  if (p.p66 && slot.p66) return slot.p66;
  return undefined;
}

/** The table entry: a mandatory-prefix form first, then 90 (nop/pause/xchg), then the slot by ModRM. */
function selectDef(p: Prefixes, op: Opcode, modrm: number): OpDef | undefined {
  const ms = mandatorySlot(p, op.slot);
  if (ms) {
    const def = resolve(ms, modrm);
    if (def) {
      if (ms === op.slot.p66) p.p66 = false; else p.rep = REP_NONE;
      return def;
    }
  }
  if (!op.twoByte && op.b === 0x90 && !(p.rex & 1)) return p.rep === REP_F3 ? PAUSE_DEF : NOP_DEF;
  return resolve(op.slot, modrm);
}

/**
 * What decoding reads of a table entry's operands, worked out once per
 * entry (the entries never change): a decode looks it up instead of
 * walking the operands with a closure each time.
 */
interface DefShape {
  /** an operand is encoded in ModRM */
  readonly usesModrm: boolean;
  /** mov to/from a debug or control register */
  readonly ctlReg: boolean;
  readonly gOp: Operand | undefined;
  readonly eOp: Operand | undefined;
  /** the size letter of the first operand that gives the operand size; undefined: the operand size itself */
  readonly sizeLetter: string | undefined;
  /** a relative branch displacement follows */
  readonly rel: boolean;
}
const shapes = new Map<OpDef, DefShape>();

function shapeOf(def: OpDef): DefShape {
  let s = shapes.get(def);
  if (s === undefined) {
    let sizeLetter: string | undefined;
    for (const o of def.ops) {
      if (o.k === 'I' || o.k === 'J' || o.k === '1' || o.k === 'V' || o.k === 'W' || o.k === 'U' || !o.s) continue;
      if (o.k === 'R' && (o.fixed === 'CL' || o.fixed === 'DX')) continue; // shift counts and port numbers: not the operand size
      sizeLetter = o.s;
      break;
    }
    s = {
      usesModrm: def.ops.some(o => 'EGMVWUDCS'.includes(o.k)),
      ctlReg: def.ops.some(o => o.k === 'D' || o.k === 'C'),
      gOp: def.ops.find(o => o.k === 'G'),
      eOp: def.ops.find(o => o.k === 'E' || o.k === 'M' || o.k === 'W' || o.k === 'U'),
      sizeLetter,
      rel: def.ops.some(o => o.k === 'J'),
    };
    shapes.set(def, s);
  }
  return s;
}

/** the operand size (osize) of an instruction with prefixes `p` */
function operandSizeOf(def: OpDef, p: Prefixes): number {
  return def.f64 ? 8 : (p.rex & 8) !== 0 ? 8 : p.p66 ? 2 : def.d64 ? 8 : 4;
}

/** Where the ModRM operand's bytes lie (filled by decodeModrm). */
interface MemFields {
  sibOff: number;
  dispOff: number;
  dispLen: number;
  ripRel: boolean;
}

/** ModRM operands: reg, and rm as a register or a memory operand (SIB, displacement). false: #UD. */
function decodeModrm(r: Reader, insn: Insn, shape: DefShape, modrm: number, rex: number, m: MemFields): boolean {
  const mod = modrm >> 6;
  const regf = ((modrm >> 3) & 7) | (rex & 4 ? 8 : 0);
  const rmf = modrm & 7;
  if (shape.ctlReg) {
    // mov to/from DRn: register to register whatever mod says (no SIB, no displacement); DR8+ (REX.R) is the executor's #UD
    insn.reg = regf;
    insn.rm = rmf | (rex & 1 ? 8 : 0);
    return true;
  }
  const gOp = shape.gOp;
  const eOp = shape.eOp;
  insn.reg = gOp && gOp.s === 'b' ? byteReg(regf, rex) : regf;
  if (mod === 3) {
    if (eOp && eOp.k === 'M') return false; // memory-only operand (lea...) with a register: #UD
    const rr = rmf | (rex & 1 ? 8 : 0);
    insn.rm = eOp && eOp.s === 'b' ? byteReg(rr, rex) : rr;
    return true;
  }
  if (eOp && eOp.k === 'U') return false; // register-only xmm operand with memory: #UD
  insn.hasMem = true;
  insn.rm = NO_REG;
  let base = NO_REG, index = NO_REG, scale = 0, disp = 0;
  let dispBytes = mod === 1 ? 1 : mod === 2 ? 4 : 0;
  if (rmf === 4) {
    m.sibOff = r.pos;
    const sib = r.next8();
    scale = sib >> 6;
    const idx = ((sib >> 3) & 7) | (rex & 2 ? 8 : 0);
    if (idx !== 4) index = idx;
    const bb = sib & 7;
    if (bb === 5 && mod === 0) dispBytes = 4; // no base: [index*scale + disp32]
    else base = bb | (rex & 1 ? 8 : 0);
  } else if (rmf === 5 && mod === 0) {
    m.ripRel = true;
    dispBytes = 4;
  } else base = rmf | (rex & 1 ? 8 : 0);
  if (dispBytes > 0) { m.dispOff = r.pos; m.dispLen = dispBytes; }
  if (dispBytes === 1) disp = (r.next8() << 24) >> 24;
  else if (dispBytes === 4) disp = r.next32();
  insn.base = base; insn.index = index; insn.scale = scale; insn.disp = disp;
  return true;
}

/** Register operands encoded in the opcode (+r) or fixed (AL, rAX). */
function opcodeRegisters(insn: Insn, def: OpDef, b: number, rex: number): void {
  const z = def.ops.find(o => o.k === 'Z');
  if (z) {
    const rr = (b & 7) | (rex & 1 ? 8 : 0);
    insn.rm = z.s === 'b' ? byteReg(rr, rex) : rr;
    insn.reg = 0; // xchg rAX, Zv
  } else if (def.ops.length > 0 && def.ops[0].k === 'R' && (def.ops[0].fixed === 'AL' || def.ops[0].fixed === 'rAX')) {
    insn.rm = 0;
  }
}

/** Immediates and relative branch displacements; sets imm/immHi/imm2 and returns the branch displacement (0 when none). */
function readImmediates(r: Reader, insn: Insn, def: OpDef, osize: number): number {
  // the first two immediates and how many there are (no array per instruction)
  let imm0 = 0, imm1 = 0, imms = 0;
  let immHi = 0;
  let countSrc = COUNT_1;
  let rel = 0;
  for (const o of def.ops) {
    if (o.k === 'I') {
      let v: number;
      const n = o.s === 'b' ? 1 : o.s === 'w' ? 2 : o.s === 'z' ? (osize === 2 ? 2 : 4) : o.s === 'v' ? osize : 4;
      if (n === 1) v = (r.next8() << 24) >> 24;
      else if (n === 2) v = ((r.next8() | (r.next8() << 8)) << 16) >> 16;
      else {
        v = r.next32();
        if (n === 8) immHi = r.next32();
      }
      if (n !== 8) immHi = v >> 31;
      if (imms === 0) imm0 = v; else if (imms === 1) imm1 = v;
      imms++;
      countSrc = COUNT_IMM;
    } else if (o.k === 'J') {
      rel = o.s === 'b' ? (r.next8() << 24) >> 24 : r.next32();
    } else if (o.k === 'R' && o.fixed === 'CL') countSrc = COUNT_CL;
    else if (o.k === '1') countSrc = COUNT_1;
  }
  if (imms > 0) {
    let v = imm0;
    const size = insn.size;
    if (size === 1) { v &= 0xff; immHi = 0; } else if (size === 2) { v &= 0xffff; immHi = 0; } else if (size === 4) immHi = 0;
    insn.imm = v; insn.immHi = immHi;
  }
  insn.imm2 = imms > 1 ? imm1 : countSrc;
  return rel;
}

function decodeInner(r: Reader, addr: number): Insn | null {
  const p = readPrefixes(r);
  const prefixLen = r.pos - 1;
  const op = readOpcode(r, p);
  if (!op) return null;
  const opcodeLen = r.pos - op.opcodeOff;
  let modrm = -1, modrmOff = -1;
  if (op.slot.needModrm || mandatorySlot(p, op.slot)?.needModrm) { modrmOff = r.pos; modrm = r.next8(); }
  const def = selectDef(p, op, modrm);
  if (!def) return null;
  const shape = shapeOf(def);
  const osize = operandSizeOf(def, p);
  const size = shape.sizeLetter === undefined ? osize : sizeOf(shape.sizeLetter, osize, (p.rex & 8) !== 0);

  const insn = new Insn(def, def.exec, EMPTY);
  insn.size = size;
  insn.asize = p.p67 ? 4 : 8;
  insn.rep = p.rep;
  insn.lock = p.lock;
  insn.seg = p.seg;
  insn.rex = p.rex !== 0;
  insn.prefixes = p.list;
  insn.addr = addr;
  insn.vreg = op.vvvv;
  insn.cc = op.slot.low === 'cc' ? op.b & 0xf : def.srcSize ?? def.sub;

  const m: MemFields = { sibOff: -1, dispOff: -1, dispLen: 0, ripRel: false };
  const usesModrm = shape.usesModrm;
  if (usesModrm && modrm >= 0) {
    if (!decodeModrm(r, insn, shape, modrm, p.rex, m)) return null;
  } else if (!usesModrm) opcodeRegisters(insn, def, op.b, p.rex);

  const immOff = r.pos;
  const rel = readImmediates(r, insn, def, osize);
  const hasRel = shape.rel;
  const immLen = r.pos - immOff;

  const raw = r.raw;
  insn.len = raw.length;
  insn.next = addr + raw.length;
  insn.bytes = new Uint8Array(raw); // the constructor copies an array directly (from() goes through its iterator)
  insn.layout = {
    prefixLen, rexOff: p.rexOff, vexOff: op.vexOff, vexLen: op.vexLen,
    opcodeOff: op.opcodeOff, opcodeLen, modrmOff, sibOff: m.sibOff, dispOff: m.dispOff, dispLen: m.dispLen,
    immOff: immLen > 0 ? immOff : -1, immLen, ripRel: m.ripRel,
  } satisfies InsnLayout;
  if (m.ripRel) {
    insn.ripRel = true; insn.base = NO_REG;
    const a = insn.next + insn.disp;
    // 67: eip + disp32, truncated to 32 bits and zero-extended
    insn.disp = p.p67 ? ((a % TWO32) + TWO32) % TWO32 : a;
  }
  if (hasRel) insn.target = insn.next + rel;
  if (def.fast) { const f = def.fast(insn); if (f) insn.exec = f; }
  if (def.fpu !== undefined) insn.exec = fpuGated(insn.exec, def.fpu);
  // LOCK is only valid on a lockable instruction with a memory destination: anything else is #UD
  // when executed (the bytes still decode and disassemble, as llvm shows them)
  if (p.lock && !(def.lockable && insn.hasMem)) insn.exec = ud;
  return insn;
}
const EMPTY = new Uint8Array(0);
