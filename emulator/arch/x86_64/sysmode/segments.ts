/**
 * Segment selectors and descriptors in 64-bit mode (SDM vol. 3 ch. 3.4-3.5,
 * 5.5-5.8, and vol. 2 "MOV", "LTR", "LLDT"): a selector's descriptor read
 * from the GDT or LDT, the checks a segment register load makes, the TSS
 * and LDT loads. Bases and limits of CS/SS/DS/ES are ignored in 64-bit mode
 * (flat); FS/GS take the descriptor's 32-bit base on a load (the MSRs and
 * SWAPGS set the full 64-bit bases). Descriptor reads are supervisor
 * accesses through the linear address space (a #PF on a table is the
 * table's).
 */
import type { X86Cpu } from '../cpu';
import type { SystemState } from './state';
import { X86Exception, VEC_GP, VEC_NP, VEC_SS, VEC_TS } from './exception';

export const SREG_ES = 0, SREG_CS = 1, SREG_SS = 2, SREG_DS = 3, SREG_FS = 4, SREG_GS = 5;
export const SREG_NAMES = ['es', 'cs', 'ss', 'ds', 'fs', 'gs'];

/** a descriptor's fields (the first 8 bytes; system descriptors in 64-bit mode have 8 more) */
export interface Descriptor {
  lo: number; hi: number;
  /** S = 1: code or data */
  user: boolean;
  type: number; dpl: number; present: boolean;
  /** L: 64-bit code */
  long: boolean;
  base32: number;
  limit: number;
}

export function parseDescriptor(lo: number, hi: number): Descriptor {
  const limit = ((lo & 0xffff) | (hi & 0xf0000)) >>> 0;
  return {
    lo, hi, user: (hi & 0x1000) !== 0, type: (hi >>> 8) & 0xf, dpl: (hi >>> 13) & 3, present: (hi & 0x8000) !== 0,
    long: (hi & 0x200000) !== 0,
    base32: ((lo >>> 16) | ((hi & 0xff) << 16) | (hi & 0xff000000)) >>> 0,
    limit: (hi & 0x800000) !== 0 ? limit * 4096 + 4095 : limit,
  };
}

/** supervisor reads of descriptor-table memory, whatever the CPL */
export function sysRead32(s: SystemState, a: number): number {
  const m = s.mem, user = m.userMode;
  m.userMode = false;
  try { return m.read32(a); } finally { m.userMode = user; }
}
export function sysWrite8(s: SystemState, a: number, v: number): void {
  const m = s.mem, user = m.userMode;
  m.userMode = false;
  try { m.write8(a, v); } finally { m.userMode = user; }
}

/** the descriptor-table address of a selector's entry, or #GP/#TS(sel) (`vector`) when outside the table */
export function descriptorAddr(s: SystemState, sel: number, vector = VEC_GP): number {
  const ldt = (sel & 4) !== 0;
  const base = ldt ? s.ldtBase : s.gdtBase, limit = ldt ? s.ldtLimit : s.gdtLimit;
  if ((ldt && s.ldtr === 0) || (sel | 7) > limit) throw new X86Exception(vector, sel & 0xfffc, `selector 0x${sel.toString(16)} outside the ${ldt ? 'LDT' : 'GDT'}`);
  return base + (sel & ~7);
}

export function readDescriptor(s: SystemState, sel: number, vector = VEC_GP): Descriptor {
  const a = descriptorAddr(s, sel, vector);
  return parseDescriptor(sysRead32(s, a), sysRead32(s, a + 4));
}

const isCode = (d: Descriptor): boolean => d.user && (d.type & 8) !== 0;
const isWritableData = (d: Descriptor): boolean => d.user && (d.type & 8) === 0 && (d.type & 2) !== 0;

/**
 * MOV Sreg / POP Sreg in 64-bit mode. CS cannot be loaded this way (#UD
 * is the caller's). Null selectors: DS ES FS GS always; SS at CPL 0 only
 * with RPL 0. FS/GS take the 32-bit base of their descriptor (a null
 * selector clears it, as Intel processors do).
 */
export function loadSegment(cpu: X86Cpu, s: SystemState, sreg: number, sel: number): void {
  sel &= 0xffff;
  const cpl = s.cpl, rpl = sel & 3;
  if ((sel & 0xfffc) === 0) {
    if (sreg === SREG_SS && (cpl === 3 || rpl !== cpl)) throw new X86Exception(VEC_GP, 0, 'null selector into ss');
    setSelector(cpu, s, sreg, sel, 0);
    return;
  }
  const d = readDescriptor(s, sel);
  if (sreg === SREG_SS) {
    if (rpl !== cpl || !isWritableData(d) || d.dpl !== cpl) throw new X86Exception(VEC_GP, sel & 0xfffc, `ss: selector 0x${sel.toString(16)} is not a writable data segment at CPL ${cpl}`);
    if (!d.present) throw new X86Exception(VEC_SS, sel & 0xfffc, `ss: segment 0x${sel.toString(16)} not present`);
  } else {
    // data, or readable code; a data or non-conforming code segment needs DPL >= CPL and RPL
    if (!d.user || (isCode(d) && (d.type & 2) === 0)) throw new X86Exception(VEC_GP, sel & 0xfffc, `${SREG_NAMES[sreg]}: selector 0x${sel.toString(16)} is not data or readable code`);
    const conforming = isCode(d) && (d.type & 4) !== 0;
    if (!conforming && (rpl > d.dpl || cpl > d.dpl)) throw new X86Exception(VEC_GP, sel & 0xfffc, `${SREG_NAMES[sreg]}: selector 0x${sel.toString(16)}: DPL ${d.dpl} below CPL ${cpl} / RPL ${rpl}`);
    if (!d.present) throw new X86Exception(VEC_NP, sel & 0xfffc, `${SREG_NAMES[sreg]}: segment 0x${sel.toString(16)} not present`);
  }
  setAccessed(s, sel, d);
  setSelector(cpu, s, sreg, sel, d.base32);
}

function setAccessed(s: SystemState, sel: number, d: Descriptor): void {
  if ((d.hi & 0x100) === 0) sysWrite8(s, descriptorAddr(s, sel) + 5, ((d.hi >>> 8) & 0xff) | 1);
}

function setSelector(cpu: X86Cpu, s: SystemState, sreg: number, sel: number, base: number): void {
  switch (sreg) {
    case SREG_ES: s.es = sel; return;
    case SREG_SS: s.ss = sel; return;
    case SREG_DS: s.ds = sel; return;
    case SREG_FS: s.fs = sel; cpu.fsBase = base; return;
    default: s.gs = sel; cpu.gsBase = base;
  }
}

export function selectorOf(s: SystemState, sreg: number): number {
  return [s.es, s.cs, s.ss, s.ds, s.fs, s.gs][sreg];
}

/** the 16-byte system descriptor's 64-bit base */
function systemBase(s: SystemState, sel: number, d: Descriptor): number {
  const high = sysRead32(s, descriptorAddr(s, sel) + 8) | 0;
  return high * 4294967296 + d.base32;
}

/** LTR: an available 64-bit TSS in the GDT, marked busy */
export function loadTr(s: SystemState, sel: number): void {
  sel &= 0xffff;
  if ((sel & 0xfffc) === 0 || (sel & 4) !== 0) throw new X86Exception(VEC_GP, sel & 0xfffc, `ltr: selector 0x${sel.toString(16)} is null or in the LDT`);
  const d = readDescriptor(s, sel);
  if (d.user || d.type !== 9) throw new X86Exception(VEC_GP, sel & 0xfffc, `ltr: selector 0x${sel.toString(16)} is not an available 64-bit TSS`);
  if (!d.present) throw new X86Exception(VEC_NP, sel & 0xfffc, `ltr: TSS 0x${sel.toString(16)} not present`);
  s.trBase = systemBase(s, sel, d);
  s.trLimit = d.limit;
  s.tr = sel;
  sysWrite8(s, descriptorAddr(s, sel) + 5, ((d.hi >>> 8) & 0xff) | 2); // busy
}

/** LLDT: a null selector disables the LDT; else an LDT descriptor in the GDT */
export function loadLdt(s: SystemState, sel: number): void {
  sel &= 0xffff;
  if ((sel & 0xfffc) === 0) { s.ldtr = 0; s.ldtBase = 0; s.ldtLimit = 0; return; }
  if ((sel & 4) !== 0) throw new X86Exception(VEC_GP, sel & 0xfffc, 'lldt: selector in the LDT');
  const d = readDescriptor(s, sel);
  if (d.user || d.type !== 2) throw new X86Exception(VEC_GP, sel & 0xfffc, `lldt: selector 0x${sel.toString(16)} is not an LDT`);
  if (!d.present) throw new X86Exception(VEC_NP, sel & 0xfffc, `lldt: LDT 0x${sel.toString(16)} not present`);
  s.ldtBase = systemBase(s, sel, d);
  s.ldtLimit = d.limit;
  s.ldtr = sel;
}

/** a 64-bit TSS field: RSP0-2 at 4 + 8n, IST1-7 at 0x24 + 8(n-1); #TS(tr) beyond the TSS's limit */
export function tssStack(s: SystemState, offset: number): number {
  if (offset + 7 > s.trLimit) throw new X86Exception(VEC_TS, s.tr & 0xfffc, `TSS field at 0x${offset.toString(16)} beyond its limit`);
  const lo = sysRead32(s, s.trBase + offset), hi = sysRead32(s, s.trBase + offset + 4) | 0;
  return hi * 4294967296 + (lo >>> 0);
}

/** the code segment a gate or a far transfer names: a present 64-bit code segment */
export function codeDescriptor(s: SystemState, sel: number, errBase: number): Descriptor {
  if ((sel & 0xfffc) === 0) throw new X86Exception(VEC_GP, errBase, 'null code selector');
  const d = readDescriptor(s, sel);
  if (!isCode(d) || !d.long) throw new X86Exception(VEC_GP, (sel & 0xfffc) | (errBase & 1), `selector 0x${sel.toString(16)} is not a 64-bit code segment`);
  if (!d.present) throw new X86Exception(VEC_NP, (sel & 0xfffc) | (errBase & 1), `code segment 0x${sel.toString(16)} not present`);
  return d;
}

export { isCode, isWritableData };
