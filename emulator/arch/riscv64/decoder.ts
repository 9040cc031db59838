/**
 * The riscv64 decoder: fetch 16 bits, expand a compressed instruction
 * (rvc.ts) or fetch the other 16 bits, find the row (table.ts) and extract
 * the fields its format names. Any 2-byte-aligned address decodes: mixed 2-
 * and 4-byte streams need no synchronisation. Illegal encodings decode to
 * the `unimp` row, whose executor reports the encoding.
 */
import type { Memory } from '../../memory/memory';
import type { VAddr } from '../../memory/address';
import type { RvFormat, RvInsn, RvRow } from './insn';
import { X0_SINK } from './insn';
import { ILLEGAL_ROW, matchRow } from './table';
import { expandRvc } from './rvc';

/** sign-extend the low n bits */
const sx = (v: number, n: number): number => (v << (32 - n)) >> (32 - n);

/** Immediate of a 32-bit word for a format */
export function immediate(fmt: RvFormat, w: number): number {
  switch (fmt) {
    case 'I': case 'load': case 'jalr': case 'fload': return w >> 20;
    case 'Ishift': return (w >>> 20) & 63;
    case 'Ishiftw': return (w >>> 20) & 31;
    case 'S': case 'fstore': return ((w >> 25) << 5) | ((w >>> 7) & 31);
    case 'B': return sx((((w >>> 31) & 1) << 12) | (((w >>> 7) & 1) << 11) | (((w >>> 25) & 63) << 5) | (((w >>> 8) & 15) << 1), 13);
    case 'U': return w & 0xfffff000;
    case 'J': return sx((((w >>> 31) & 1) << 20) | (((w >>> 12) & 255) << 12) | (((w >>> 20) & 1) << 11) | (((w >>> 21) & 1023) << 1), 21);
    case 'csri': return (w >>> 15) & 31;
    default: return 0;
  }
}

/** Decode a word (already expanded when compressed) found at addr. */
export function decodeWord(word: number, raw: number, len: 2 | 4, addr: VAddr): RvInsn {
  const row: RvRow = matchRow(word) ?? ILLEGAL_ROW;
  const rd = (word >>> 7) & 31;
  return {
    addr, len, next: addr + len, word, raw, row,
    rd: rd === 0 ? X0_SINK : rd,
    rs1: (word >>> 15) & 31,
    rs2: (word >>> 20) & 31,
    imm: immediate(row.fmt, word),
    csr: (word >>> 20) & 0xfff,
    exec: row.exec,
    hot: 0, jit: null,
  };
}

/** Decode from a 16-bit-unit source (lo = the unit at addr, then the next one on demand). */
export function decodeUnits(fetch16: (k: number) => number, addr: VAddr): RvInsn {
  const lo = fetch16(0);
  if ((lo & 3) !== 3) {
    const w = expandRvc(lo);
    return w === null ? { ...decodeWord(0, lo, 2, addr), row: ILLEGAL_ROW, exec: ILLEGAL_ROW.exec } : decodeWord(w, lo, 2, addr);
  }
  const w = (lo | (fetch16(1) << 16)) | 0;
  if ((lo & 0x1c) === 0x1c) return { ...decodeWord(0, w, 4, addr), row: ILLEGAL_ROW, exec: ILLEGAL_ROW.exec }; // 48-bit and longer: not supported
  return decodeWord(w, w, 4, addr);
}

/** The decode cache's decoder: fetch with execute permission. */
export function decodeAt(mem: Memory, ip: VAddr): RvInsn {
  return decodeUnits(k => mem.fetch8(ip + 2 * k) | (mem.fetch8(ip + 2 * k + 1) << 8), ip);
}
