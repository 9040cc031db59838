/**
 * .debug_aranges (DWARF 2-5): which compilation unit (its .debug_info
 * offset) holds an address, without reading any unit's DIEs. On a vmlinux
 * with thousands of units this is what keeps address -> unit lookups cheap
 * (a binary search instead of reading every unit's ranges). Read once, on
 * first use; a malformed set ends the reading (the sets before it are kept)
 * and the caller falls back to the units' own ranges for what is not covered.
 */
import { ByteReader } from '../reader';

export interface ArangeIndex {
  /** the .debug_info offset of the unit whose set covers addr, or undefined */
  unitAt(addr: bigint): number | undefined;
  /** the .debug_info offsets of every unit some set names */
  readonly units: ReadonlySet<number>;
}

export function readAranges(sec: Uint8Array | undefined, little: boolean): ArangeIndex | undefined {
  if (!sec || sec.length === 0) return undefined;
  const lo: bigint[] = [], hi: bigint[] = [], cu: number[] = [];
  const units = new Set<number>();
  const spans: { lo: bigint; hi: bigint; cu: number }[] = [];
  const r = new ByteReader(sec, little);
  try {
    while (r.pos < r.length) {
      const setStart = r.pos;
      const { length, offsetSize } = r.initialLength();
      const end = r.pos + Number(length);
      if (length === 0n || end > r.length) break;
      const version = r.u16();
      const info = Number(r.uint(offsetSize));
      const addressSize = r.u8();
      const segSize = r.u8();
      if (version !== 2 || (addressSize !== 4 && addressSize !== 8) || segSize !== 0) { r.pos = end; continue; }
      units.add(info);
      // tuples start at a multiple of twice the address size from the set's start
      const tuple = addressSize * 2;
      r.pos = setStart + Math.ceil((r.pos - setStart) / tuple) * tuple;
      while (r.pos + tuple <= end) {
        const a = r.uint(addressSize), n = r.uint(addressSize);
        if (a === 0n && n === 0n) break;
        if (n > 0n) spans.push({ lo: a, hi: a + n, cu: info });
      }
      r.pos = end;
    }
  } catch {
    // a truncated set: keep the ones read
  }
  spans.sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  for (const s of spans) { lo.push(s.lo); hi.push(s.hi); cu.push(s.cu); }
  return {
    units,
    unitAt(addr: bigint): number | undefined {
      let l = 0, h = lo.length;
      while (l < h) {
        const m = (l + h) >> 1;
        if (lo[m] <= addr) l = m + 1; else h = m;
      }
      // overlapping sets happen only in broken input: look back a little
      for (let i = l - 1; i >= 0 && i >= l - 8; i--) if (addr < hi[i]) return cu[i];
      return undefined;
    },
  };
}
