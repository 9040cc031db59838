/**
 * Decoded-instruction cache for one address space and privilege mode, for
 * every architecture: per-4KiB-page arrays indexed by page offset. Shared by
 * every CPU running in that Memory (decoded instructions hold no CPU state).
 * Subscribes to Memory.codeWriteListeners so a write to executable bytes
 * (textPoke, a store into RWX memory, the loader) drops every instruction
 * overlapping the written bytes: probes change code at run time, so a stale
 * entry would be a correctness bug.
 */
import { Memory } from '../memory/memory';
import { VAddr } from '../memory/address';
import { FAULT_UD } from './faults';
import { hostOwned } from '../base/marks';
import { nextTlbGeneration } from '../memory/tlbGeneration';

const PAGE = 4096;

/** What the cache and the run loop need of a decoded instruction. */
export interface CachedInsn {
  /** VAddr of the first byte */
  readonly addr: VAddr;
  /** length in bytes */
  readonly len: number;
  /** VAddr of the next instruction */
  readonly next: VAddr;
  /** the translator's count of arrivals here by a jump (tiering; emulator/jit/translator.ts) */
  hot: number;
  /** the translated block that starts here (emulator/jit), or null */
  jit: object | null;
}

/** Decode the instruction at ip (fetch permission checked), or null when undecodable. Throws MemoryFault. */
export type DecodeAt<I> = (mem: Memory, ip: VAddr) => I | null;

export class DecodeCache<I extends CachedInsn> {
  private pages = new Map<number, (I | undefined)[]>();
  private lastKey = NaN;
  /** the page array of the last lookup and its base address (read by the run loop's inline fast path) */
  lastPage: (I | undefined)[] = [];
  lastBase = NaN;

  constructor(private readonly mem: Memory, private readonly decodeAt: DecodeAt<I>, private readonly maxLen: number,
    /** page arrays of read-only file pages, shared by every address space mapping them at the same address */
    private readonly shared?: WeakMap<object, Map<string, (I | undefined)[]>>) {
    hostOwned(this); // a cache of the bytes, never captured: time travel tells it what changed (Memory.codeWriteListeners)
  }

  /**
   * The page array for the page at `key`: a shared one when the page (and
   * the bytes an instruction starting on it can reach) lies in a read-only
   * mapping of a file's pages — every process running that file at that
   * address decodes the same bytes to the same instructions — else its own.
   */
  private pageArray(key: number): (I | undefined)[] {
    const base = key * PAGE;
    const r = this.shared ? this.mem.regionAt(base) : undefined;
    if (r && this.shared && r.backing.identity.kind === 'file' && (r.perms & 2) === 0 && r.base <= base && r.end >= base + PAGE + this.maxLen) {
      let m = this.shared.get(r.backing);
      if (!m) { m = new Map(); this.shared.set(r.backing, m); }
      const k = `${base}:${r.offset + (base - r.base)}`;
      let p = m.get(k);
      if (!p) { p = new Array<I | undefined>(PAGE); m.set(k, p); }
      return p;
    }
    return new Array<I | undefined>(PAGE);
  }

  /** Instruction at ip; decodes on a miss (throws MemoryFault on fetch, GuestFault #UD). */
  get(ip: VAddr): I {
    const key = Math.floor(ip / PAGE);
    let page = this.lastPage;
    if (key !== this.lastKey) {
      let p = this.pages.get(key);
      if (p === undefined) {
        p = this.pageArray(key);
        this.pages.set(key, p);
        // stores into this page must now leave translated code (they may rewrite decoded instructions)
        if (!this.mem.codePages.has(key)) { this.mem.codePages.add(key); this.mem.tlbGeneration = nextTlbGeneration(); }
      }
      page = this.lastPage = p;
      this.lastKey = key;
      this.lastBase = key * PAGE;
    }
    const off = ip - key * PAGE;
    const hit = page[off];
    if (hit !== undefined) return hit;
    const insn = this.decodeAt(this.mem, ip);
    if (insn === null) throw FAULT_UD;
    page[off] = insn;
    return insn;
  }

  /** The decoded instruction at ip if it is cached (never decodes). */
  peek(ip: VAddr): I | undefined {
    const p = this.pages.get(Math.floor(ip / PAGE));
    return p === undefined ? undefined : p[ip - Math.floor(ip / PAGE) * PAGE];
  }

  /** The cached page array of the page holding ip (never decodes), for the translator's scan of a page. */
  peekPage(ip: VAddr): readonly (I | undefined)[] | undefined { return this.pages.get(Math.floor(ip / PAGE)); }

  /** Drop instructions overlapping [addr, addr+len). */
  invalidate(addr: VAddr, len: number): void {
    if (this.pages.size === 0) return;
    const from = addr - (this.maxLen - 1), to = addr + len;
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

/**
 * The caches of one architecture: one kernel-mode and one user-mode cache
 * per Memory, created on first use and kept in step with its code writes.
 */
export class DecodeCaches<I extends CachedInsn> {
  private readonly caches = new WeakMap<Memory, [DecodeCache<I>, DecodeCache<I>]>();
  /** user-mode page arrays of file text, by backing (see DecodeCache.pageArray) */
  private readonly sharedUser = new WeakMap<object, Map<string, (I | undefined)[]>>();

  constructor(private readonly decodeAt: DecodeAt<I>, private readonly maxLen: number) { hostOwned(this); }

  /** The shared cache of a Memory for kernel (user=false) or user mode. */
  for(mem: Memory, user: boolean): DecodeCache<I> {
    let c = this.caches.get(mem);
    if (c === undefined) {
      const pair: [DecodeCache<I>, DecodeCache<I>] = [new DecodeCache(mem, this.decodeAt, this.maxLen), new DecodeCache(mem, this.decodeAt, this.maxLen, this.sharedUser)];
      this.caches.set(mem, pair);
      mem.codeWriteListeners.push((a, len) => { pair[0].invalidate(a, len); pair[1].invalidate(a, len); });
      c = pair;
    }
    return user ? c[1] : c[0];
  }
}
