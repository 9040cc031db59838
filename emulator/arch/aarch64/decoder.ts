/**
 * Decode one A64 word into an A64Insn through the encoding table; null for
 * an unallocated or unsupported encoding (the CPU reports #UD-equivalent
 * 'undefined' with the pc).
 */
import { Memory } from '../../memory/memory';
import { VAddr } from '../../memory/address';
import { GuestFault } from '../../cpu/faults';
import { A64Insn } from './insn';
import { candidateRows } from './table';

export function decodeWord(w: number, addr: VAddr): A64Insn | null {
  const rows = candidateRows(w);
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k];
    if (((w & r.mask) >>> 0) !== (r.match >>> 0)) continue;
    const i = new A64Insn();
    i.addr = addr; i.next = addr + 4; i.word = w | 0; i.row = r;
    if (r.decode(w, i)) return i;
    return null;
  }
  return null;
}

const PC_ALIGNMENT = new GuestFault('generalProtection', 'pc alignment fault');

/** Fetch (execute permission checked) and decode the instruction at ip. */
export function decodeAt(mem: Memory, ip: VAddr): A64Insn | null {
  if ((ip & 3) !== 0) throw PC_ALIGNMENT;
  const w = mem.fetch8(ip) | (mem.fetch8(ip + 1) << 8) | (mem.fetch8(ip + 2) << 16) | (mem.fetch8(ip + 3) << 24);
  return decodeWord(w, ip);
}
