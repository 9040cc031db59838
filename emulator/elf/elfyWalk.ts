/**
 * The `elfy` package as the loader uses it, and the turning of elfy's
 * value names back into ELF numbers.
 *
 * elfy's parser (lib/elfy/parser.js) is used step by step (parseHeader,
 * parseBody, resolveBody) so the loader can check bounds between the steps;
 * the ways elfy gets fields wrong are listed in elfFile.ts, next to the
 * re-reads that correct them.
 */
import * as elfy from 'elfy';

export type ElfyParser = elfy.Parser;
export type ElfyHeader = elfy.ElfyHeader;
export type ElfyBody = elfy.ElfyBody;
export const elfyConstants = elfy.constants;

export function newElfyParser(): ElfyParser {
  return new elfy.Parser();
}

const reversed = new Map<Record<number, string>, Map<string, number>>();

function reverse(table: Record<number, string>): Map<string, number> {
  let m = reversed.get(table);
  if (!m) {
    m = new Map();
    for (const [k, name] of Object.entries(table)) if (!m.has(name)) m.set(name, Number(k));
    reversed.set(table, m);
  }
  return m;
}

/**
 * The number behind one of elfy's names (constants.type, machine, entryType,
 * sectType); a number passes through; undefined when elfy had no name (it
 * then dropped the value, which the caller re-reads).
 */
export function codeOf(table: Record<number, string>, v: string | number | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (v === undefined) return undefined;
  return reverse(table).get(v);
}

/**
 * The bit mask behind elfy's mapFlags() object: named bits through the
 * table, unnamed ones are keyed by their value (bit 31 as -2147483648, from
 * elfy's 32-bit shifts). Exact for 32-bit flag words only.
 */
export function flagsOf(flags: Record<string, boolean>, table: Record<number, string>): number {
  const names = reverse(table);
  let v = 0;
  for (const [k, set] of Object.entries(flags)) {
    if (!set) continue;
    const bit = names.get(k) ?? Number(k);
    if (Number.isInteger(bit)) v |= bit;
  }
  return v >>> 0;
}
