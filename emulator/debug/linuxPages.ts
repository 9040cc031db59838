/**
 * The guest's linear addresses as the debugger reads them on the
 * full-system PC: a walk of the guest's own 4-level page tables (CR3 of
 * the stopped CPU) over physical RAM, read-only. Unlike the CPU's walk it
 * sets no accessed/dirty bit, fills no TLB and raises no #PF: looking at
 * memory never changes what the guest sees. Physical addresses nothing
 * backs with RAM (MMIO, holes) read as unavailable, never through a
 * device (a read of a device register could change it).
 */
import type { Memory } from '../memory/memory';
import { PERM_R, PERM_W, PERM_X } from '../memory/memory';

const PAGE = 4096;
const ADDR_MASK = 0x000ffffffffff000n;
const P = 1n, RW = 2n, PS = 0x80n, NX = 1n << 63n;

/** Where a linear page is: its physical frame and whether it is writable and executable. */
export interface GuestPage {
  /** physical address of the byte asked for */
  phys: number;
  writable: boolean;
  executable: boolean;
}

/** canonical 48-bit linear address (4-level paging) */
export function isCanonical(va: bigint): boolean {
  const top = va >> 47n;
  return top === 0n || top === 0x1ffffn;
}

export class GuestPages {
  /** `cr3`: the page-table root of the address space read (the stopped CPU's CR3) */
  constructor(private readonly phys: Memory, private readonly cr3: bigint) {}

  private entry(table: bigint, index: bigint): bigint | undefined {
    const a = Number((table & ADDR_MASK) + index * 8n);
    if (!this.phys.isMapped(a, 8)) return undefined;
    return this.phys.read64(a);
  }

  /** the physical address behind a linear one, or undefined when not present */
  translate(va: bigint): GuestPage | undefined {
    va = BigInt.asUintN(64, va);
    if (!isCanonical(va)) return undefined;
    let table = this.cr3;
    let writable = true, executable = true;
    for (let level = 3; level >= 0; level--) {
      const shift = 12n + 9n * BigInt(level);
      const e = this.entry(table, (va >> shift) & 0x1ffn);
      if (e === undefined || (e & P) === 0n) return undefined;
      writable &&= (e & RW) !== 0n;
      executable &&= (e & NX) === 0n;
      if (level > 0 && level < 3 && (e & PS) !== 0n) {
        const size = 1n << shift;
        const base = e & ADDR_MASK & ~(size - 1n);
        return { phys: Number(base + (va & (size - 1n))), writable, executable };
      }
      if (level === 0) return { phys: Number((e & ADDR_MASK) + (va & 0xfffn)), writable, executable };
      table = e;
    }
    return undefined;
  }

  /** `len` bytes at `va`: as many as are readable from its start (a shorter array stops at the first unreadable byte) */
  read(va: bigint, len: number): Uint8Array {
    const out = new Uint8Array(len);
    let i = 0;
    while (i < len) {
      const t = this.translate(va + BigInt(i));
      if (!t) break;
      const n = Math.min(len - i, PAGE - (t.phys % PAGE));
      if (!this.phys.isMapped(t.phys, n)) break;
      out.set(this.phys.readBytes(t.phys, n), i);
      i += n;
    }
    return i === len ? out : out.slice(0, i);
  }

  /** a 64-bit little-endian value, or undefined when not readable */
  read64(va: bigint): bigint | undefined {
    const b = this.read(va, 8);
    return b.length === 8 ? new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true) : undefined;
  }

  /** write through the tables (the debugger's own change, as a setVariable / writeMemory would); false when not all mapped RAM */
  write(va: bigint, data: Uint8Array): boolean {
    const parts: [number, Uint8Array][] = [];
    let i = 0;
    while (i < data.length) {
      const t = this.translate(va + BigInt(i));
      if (!t) return false;
      const n = Math.min(data.length - i, PAGE - (t.phys % PAGE));
      if (!this.phys.isMapped(t.phys, n)) return false;
      parts.push([t.phys, data.subarray(i, i + n)]);
      i += n;
    }
    for (const [a, d] of parts) this.phys.writeBytes(a, d, 'debugger');
    return true;
  }

  /** the permissions a Memory would give the page of `va` (for decoders that ask) */
  permsOf(va: bigint): number {
    const t = this.translate(va);
    if (!t) return 0;
    return PERM_R | (t.writable ? PERM_W : 0) | (t.executable ? PERM_X : 0);
  }
}
