/**
 * Decoded-instruction cache for one address space and privilege mode:
 * per-4KiB-page arrays indexed by page offset. Shared by every CPU running
 * in that Memory (decoded instructions hold no CPU state). Subscribes to
 * Memory.codeWriteListeners so a write to executable bytes (textPoke, a
 * store into RWX memory, the loader) drops every instruction overlapping
 * the written bytes.
 */
import { Memory } from '../../memory/memory';
import { VAddr } from '../../memory/address';
import { Insn } from './insn';
import { decodeInsn } from './decoder';
import { FAULT_UD } from './faults';

const PAGE = 4096;
const MAX_LEN = 15;

export class DecodeCache {
  private pages = new Map<number, (Insn | undefined)[]>();
  private lastKey = NaN;
  /** the page array of the last lookup and its base address (read by the run loop's inline fast path) */
  lastPage: (Insn | undefined)[] = [];
  lastBase = NaN;

  constructor(private readonly mem: Memory) {}

  /** Instruction at ip; decodes on a miss (throws MemoryFault on fetch, GuestFault #UD). */
  get(ip: VAddr): Insn {
    const key = Math.floor(ip / PAGE);
    let page = this.lastPage;
    if (key !== this.lastKey) {
      let p = this.pages.get(key);
      if (p === undefined) { p = new Array<Insn | undefined>(PAGE); this.pages.set(key, p); }
      page = this.lastPage = p;
      this.lastKey = key;
      this.lastBase = key * PAGE;
    }
    const off = ip - key * PAGE;
    const hit = page[off];
    if (hit !== undefined) return hit;
    const mem = this.mem;
    const insn = decodeInsn((k: number) => mem.fetch8(ip + k), ip);
    if (insn === null) throw FAULT_UD;
    page[off] = insn;
    return insn;
  }

  /** Drop instructions overlapping [addr, addr+len). */
  invalidate(addr: VAddr, len: number): void {
    if (this.pages.size === 0) return;
    const from = addr - (MAX_LEN - 1), to = addr + len;
    const k0 = Math.floor(from / PAGE), k1 = Math.floor((to - 1) / PAGE);
    for (let k = k0; k <= k1; k++) {
      const page = this.pages.get(k);
      if (page === undefined) continue;
      const base = k * PAGE;
      const lo = Math.max(from, base), hi = Math.min(to, base + PAGE);
      for (let a = lo; a < hi; a++) {
        const insn = page[a - base];
        if (insn !== undefined && a + insn.len > addr) page[a - base] = undefined;
      }
    }
  }

  clear(): void { this.pages.clear(); this.lastKey = NaN; this.lastPage = []; this.lastBase = NaN; }
}

const caches = new WeakMap<Memory, [DecodeCache, DecodeCache]>();

/** The shared cache of a Memory for kernel (user=false) or user mode. */
export function cacheFor(mem: Memory, user: boolean): DecodeCache {
  let c = caches.get(mem);
  if (c === undefined) {
    const pair: [DecodeCache, DecodeCache] = [new DecodeCache(mem), new DecodeCache(mem)];
    caches.set(mem, pair);
    mem.codeWriteListeners.push((a, len) => { pair[0].invalidate(a, len); pair[1].invalidate(a, len); });
    c = pair;
  }
  return user ? c[1] : c[0];
}
