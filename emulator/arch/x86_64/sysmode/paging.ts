/**
 * A system-mode CPU's linear address space: the x86_64 4-level page walk
 * (SDM vol. 3 ch. 4.5 "4-level paging") through the guest's own page
 * tables in a physical Memory, with a TLB per CPU. It presents the
 * interface the interpreter uses today (a Memory: read8..write64Halves,
 * fetch8, the decode caches' code-write listeners), so the executors run
 * unchanged; only a system-mode CPU is given one.
 *
 * Translation: P, R/W (CR0.WP for supervisor writes), U/S (supervisor may
 * touch user pages: SMEP/SMAP are not advertised), XD (with EFER.NXE; else
 * bit 63 is reserved), PS at the PDPTE (1 GiB) and PDE (2 MiB), reserved
 * bits (MAXPHYADDR 40: bits 51:40 of every entry; the PS bit of a PML4E;
 * the large pages' reserved low bits) -> #PF with RSVD. A walk that
 * succeeds sets A in every entry it used and D in the leaf for a write.
 * A failing one sets nothing and raises #PF with CR2 and the error code
 * (P, W, U, RSVD, I/D; I/D with EFER.NXE). With CR0.PG = 0 linear is
 * physical.
 *
 * The TLB: direct-mapped, 1024 entries per (access kind, privilege), each
 * a 4 KiB translation already checked for that access (a write entry only
 * once D is set). Flushes: flushNonGlobal (MOV to CR3), flushAll (CR4.PGE
 * or CR0.PG changes), invlpg (every entry of the page containing the
 * address, the whole large page for a large page's entries).
 *
 * Decoded code: the decode caches are keyed by linear address. Every page
 * an instruction was fetched from is remembered with its physical page;
 * when its physical bytes are written (through any CPU's mapping: the
 * physical Memory's code-write listeners, so physical RAM must be mapped
 * executable there), or its translation is flushed and the page tables no
 * longer map it to that physical page with the rights it was fetched with,
 * the decoded instructions of that linear page are dropped. A flush re-walks
 * each page decoded from (without side effects) and keeps what still maps
 * the same physical page executable: a TLB may be refilled from the paging
 * structures at any time (SDM vol. 3 4.10.2.3), and Linux flushes the
 * whole TLB around every change of kernel page rights, which leaves its
 * text where it was.
 */
import { Memory } from '../../../memory/memory';
import { VAddr, fromVAddr, hex } from '../../../memory/address';
import { nextTlbGeneration } from '../../../memory/tlbGeneration';
import { X86Exception, VEC_PF, PF_P, PF_W, PF_U, PF_RSVD, PF_ID } from './exception';

const PAGE = 4096;
const TLB_BITS = 10;
const TLB_SIZE = 1 << TLB_BITS;
const TWO32 = 4294967296;
const TWO48 = 281474976710656;
/** access kinds (TLB banks) */
export const ACC_READ = 0, ACC_WRITE = 1, ACC_EXEC = 2;
const ACC_NAMES = ['read', 'write', 'exec'] as const;
/** bits 51:40 of an entry, in its high word (MAXPHYADDR 40) */
const RSVD_HI = 0x000fff00;
/** reserved low bits of a 1 GiB / 2 MiB page entry (above its PAT bit) */
const RSVD_1G = 0x3fffe000, RSVD_2M = 0x001fe000;

/**
 * The physical pages some CPU decoded instructions from, per physical
 * Memory: how many (CPU, linear page) pairs map each, and the paged spaces
 * over it. The physical Memory's codePages holds the pages with a count:
 * translated code's TLB (jit/cpuState.ts) never stores straight into one
 * (the store goes through the interpreter, whose write reaches the decode
 * caches). A page that becomes code moves every space's tlbGeneration, so
 * every CPU's translated-code TLB forgets its direct entries.
 */
interface PhysCode { readonly count: Map<number, number>; readonly spaces: PagedMemory[] }
const physCode = new WeakMap<Memory, PhysCode>();

export class PagedMemory extends Memory {
  /** CR0.PG */
  paging = false;
  /** CR0.WP: supervisor writes honour R/W */
  wp = false;
  /** EFER.NXE: bit 63 is XD */
  nxe = false;
  /** CR4.PGE: G entries survive a CR3 load */
  pge = false;
  /** the PML4's physical address (CR3 bits 39:12) */
  root = 0;
  private readonly tags = new Float64Array(6 * TLB_SIZE).fill(NaN);
  private readonly frames = new Float64Array(6 * TLB_SIZE);
  /** per entry: 1 global, 2 from a large page */
  private readonly kind = new Uint8Array(6 * TLB_SIZE);
  /** log2 of the large page sizes of the large-page entries filled since the last full flush (0: none) */
  private largeFilled = 0;
  /** linear pages decoded from -> [physical page, global, fetched from at CPL 3] */
  private readonly codeMap = new Map<number, [number, boolean, boolean]>();
  /** physical page -> linear pages decoded from it */
  private readonly codeRev = new Map<number, Set<number>>();
  /** the linear pages of codeMap whose translation is not global (what a CR3 load drops) */
  private readonly localCode = new Set<number>();
  /** walks made (for tests and figures) */
  walks = 0;

  constructor(readonly phys: Memory, name = 'linear') {
    super(name);
    phys.codeWriteListeners.push((pa, len) => this.physCodeWritten(pa, len));
    let pc = physCode.get(phys);
    if (pc === undefined) { pc = { count: new Map(), spaces: [] }; physCode.set(phys, pc); }
    pc.spaces.push(this);
    this.shared = pc;
    phys.codeWritesByPage = true; // its codePages are the physical pages the spaces over it decoded from

  }
  private readonly shared: PhysCode;

  // ---------------------------------------------------------------- translated code's view
  override get directMemory(): Memory { return this.phys; }
  override directAddress(a: VAddr, write: boolean): VAddr {
    try {
      return this.translate(a, write ? ACC_WRITE : ACC_READ);
    } catch (e) {
      if (e instanceof X86Exception) return NaN;
      throw e;
    }
  }
  override peekDirect(a: VAddr): VAddr { return this.virtToPhys(a) ?? NaN; }

  // ---------------------------------------------------------------- translation
  /** The physical address of `a` for an access of kind acc (0 read, 1 write, 2 exec) at the current privilege; raises #PF. */
  translate(a: VAddr, acc: number): number {
    const vpn = Math.floor(a / PAGE);
    const i = (((acc << 1) | (this.userMode ? 1 : 0)) << TLB_BITS) | (vpn & (TLB_SIZE - 1));
    if (this.tags[i] === vpn) return this.frames[i] + (a - vpn * PAGE);
    return this.miss(a, acc, i, vpn);
  }

  private miss(a: VAddr, acc: number, i: number, vpn: number): number {
    if (!this.paging) {
      if (a < 0 || a >= TWO48) throw new X86Exception(VEC_PF, 0, `linear address 0x${a.toString(16)} beyond physical memory`, a);
      this.fill(i, vpn, vpn * PAGE, 1, acc);
      return a;
    }
    this.walks++;
    const w = this.walk(a);
    const user = this.userMode;
    if (w.fault >= 0) this.pageFault(a, acc, w.fault);
    const write = acc === ACC_WRITE;
    if ((write && !w.rw && (user || this.wp)) || (user && !w.us) || (acc === ACC_EXEC && w.nx)) this.pageFault(a, acc, PF_P);
    // the walk is good: A in every entry used, D in the leaf for a write
    const ents = w.entries, phys = this.phys;
    for (let k = 0; k < ents.length; k++) {
      const e = ents[k];
      const lo = phys.read32(e);
      const want = k === ents.length - 1 && write ? 0x60 : 0x20;
      if ((lo & want) !== want) phys.write32(e, lo | want);
    }
    const frame = w.frame;
    const global = w.global && this.pge;
    this.fill(i, vpn, frame, (global ? 1 : 0) | (w.sizeLog > 12 ? 2 : 0), acc);
    if (w.sizeLog > 12) this.largeFilled = Math.max(this.largeFilled, w.sizeLog);
    return frame + (a - vpn * PAGE);
  }

  private fill(i: number, vpn: number, frame: number, kind: number, acc: number): void {
    this.tags[i] = vpn;
    this.frames[i] = frame;
    this.kind[i] = kind;
    if (acc === ACC_EXEC) this.rememberCode(vpn, frame / PAGE, (kind & 1) !== 0, this.userMode);
  }

  private pageFault(a: VAddr, acc: number, bits: number): never {
    let code = bits;
    if (acc === ACC_WRITE) code |= PF_W;
    if (this.userMode) code |= PF_U;
    if (acc === ACC_EXEC && this.nxe) code |= PF_ID;
    throw new X86Exception(VEC_PF, code, `page fault: ${ACC_NAMES[acc]} at ${hex(fromVAddr(a))}`, a);
  }

  /**
   * The walk for `a` with no side effect: the leaf's 4 KiB frame, the
   * combined rights, the entries used, or fault >= 0 (the #PF bits: 0 not
   * present, PF_P | PF_RSVD reserved bits).
   */
  walk(a: VAddr): { fault: number; frame: number; rw: boolean; us: boolean; nx: boolean; global: boolean; sizeLog: number; entries: number[] } {
    const la = a < 0 ? a + TWO48 : a;
    const vpn = Math.floor(la / PAGE);
    let table = this.root;
    let rw = true, us = true, nx = false;
    const entries: number[] = [];
    const phys = this.phys;
    for (let level = 4; level >= 1; level--) {
      const shift = 9 * (level - 1);
      const idx = Math.floor(vpn / 2 ** shift) % 512;
      const e = table + idx * 8;
      const lo = phys.read32(e), hi = phys.read32(e + 4) | 0;
      entries.push(e);
      const fail = { fault: 0, frame: 0, rw, us, nx, global: false, sizeLog: 12, entries };
      if ((lo & 1) === 0) return fail;
      const ps = level < 4 && level > 1 && (lo & 0x80) !== 0;
      if ((hi & RSVD_HI) !== 0 || (!this.nxe && hi < 0) || (level === 4 && (lo & 0x80) !== 0)
        || (ps && (lo & (level === 3 ? RSVD_1G : RSVD_2M)) !== 0)) { fail.fault = PF_P | PF_RSVD; return fail; }
      rw = rw && (lo & 2) !== 0;
      us = us && (lo & 4) !== 0;
      nx = nx || (this.nxe && hi < 0);
      const addr = (hi & 0xff) * TWO32 + ((lo & 0xfffff000) >>> 0);
      if (level === 1 || ps) {
        const sizeLog = 12 + shift;
        const base = Math.floor(addr / 2 ** sizeLog) * 2 ** sizeLog;
        const frame = base + (vpn % 2 ** shift) * PAGE;
        return { fault: -1, frame, rw, us, nx, global: (lo & 0x100) !== 0, sizeLog, entries };
      }
      table = addr;
    }
    throw new Error('unreachable');
  }

  /** `a`'s physical address as a supervisor read sees it, without side effects; null when not mapped (the debugger's view). */
  virtToPhys(a: VAddr): number | null {
    if (!this.paging) return a >= 0 ? a : null;
    const w = this.walk(a);
    if (w.fault >= 0) return null;
    return w.frame + (((a % PAGE) + PAGE) % PAGE);
  }

  // ---------------------------------------------------------------- TLB maintenance
  /** MOV to CR3: every entry but the global ones */
  flushNonGlobal(): void {
    const tags = this.tags, kind = this.kind;
    for (let i = 0; i < tags.length; i++) if ((kind[i] & 1) === 0) tags[i] = NaN;
    this.dropCode(false);
    this.tlbGeneration = nextTlbGeneration();
  }
  /** CR4.PGE / CR0.PG / CR0.WP / EFER.NXE changes: every entry */
  flushAll(): void {
    this.tags.fill(NaN);
    this.largeFilled = 0;
    this.dropCode(true);
    this.tlbGeneration = nextTlbGeneration();
  }
  /** INVLPG: the entries (global too) of the page containing `a`, or of the large page containing it */
  invlpg(a: VAddr): void {
    const vpn = Math.floor(a / PAGE);
    const tags = this.tags;
    if (this.largeFilled === 0) {
      for (let bank = 0; bank < 6; bank++) { const i = (bank << TLB_BITS) | (vpn & (TLB_SIZE - 1)); if (tags[i] === vpn) tags[i] = NaN; }
    } else {
      // a large page's 4 KiB pieces: drop every entry of the largest large page that can contain a
      const span = 2 ** (this.largeFilled - 12), first = Math.floor(vpn / span) * span;
      for (let i = 0; i < tags.length; i++) {
        const t = tags[i];
        if (t === vpn || (t >= first && t < first + span && (this.kind[i] & 2) !== 0)) tags[i] = NaN;
      }
    }
    const c = this.codeMap.get(vpn);
    if (c !== undefined) this.forgetCode(vpn, c[0]);
    this.tlbGeneration = nextTlbGeneration();
  }
  /** the interpreter flushes when the privilege changes between runs: entries are per privilege here, nothing to do */
  override flushTlb(): void { /* per-privilege TLB banks */ }

  // ---------------------------------------------------------------- decoded code
  private rememberCode(vpn: number, ppn: number, global: boolean, user: boolean): void {
    const had = this.codeMap.get(vpn);
    if (global) this.localCode.delete(vpn); else this.localCode.add(vpn);
    if (had !== undefined && had[0] === ppn) { had[1] = global; had[2] ||= user; return; }
    if (had !== undefined) this.forgetCode(vpn, had[0]);
    this.codeMap.set(vpn, [ppn, global, user]);
    if (!global) this.localCode.add(vpn);
    let s = this.codeRev.get(ppn);
    if (s === undefined) { s = new Set(); this.codeRev.set(ppn, s); }
    s.add(vpn);
    const count = this.shared.count, n = count.get(ppn) ?? 0;
    count.set(ppn, n + 1);
    if (n === 0) {
      this.phys.codePages.add(ppn);
      const g = nextTlbGeneration();
      for (const sp of this.shared.spaces) sp.tlbGeneration = g;
    }
  }
  private forgetCode(vpn: number, ppn: number): void {
    this.codeMap.delete(vpn);
    this.localCode.delete(vpn);
    const s = this.codeRev.get(ppn);
    if (s !== undefined) { s.delete(vpn); if (s.size === 0) this.codeRev.delete(ppn); }
    const count = this.shared.count, n = (count.get(ppn) ?? 1) - 1;
    if (n > 0) count.set(ppn, n);
    else { count.delete(ppn); this.phys.codePages.delete(ppn); }
    this.notifyCodeWrite(vpn * PAGE, PAGE);
  }
  /**
   * A flush: every page decoded from (a full flush) or only the non-global
   * ones (a CR3 load) is walked again; what no longer maps the same physical
   * page with execute rights (for CPL 3 too when fetched from there) is
   * dropped, what does is kept with the walk's global bit.
   */
  private dropCode(all: boolean): void {
    for (const vpn of all ? [...this.codeMap.keys()] : [...this.localCode]) {
      const c = this.codeMap.get(vpn)!;
      if (this.stillMaps(vpn, c)) continue;
      this.forgetCode(vpn, c[0]);
    }
  }
  /** whether linear page vpn maps physical page c[0] now, executable (by CPL 3 when c[2]), accessed; updates c's global bit */
  private stillMaps(vpn: number, c: [number, boolean, boolean]): boolean {
    if (!this.paging) return false;
    const w = this.walk(vpn * PAGE);
    if (w.fault >= 0 || w.nx || (c[2] && !w.us) || w.frame !== c[0] * PAGE) return false;
    // a translation is cached only with A set in every entry it used: else the next fetch walks (and sets A)
    for (const e of w.entries) if ((this.phys.read32(e) & 0x20) === 0) return false;
    const global = w.global && this.pge;
    c[1] = global;
    if (global) this.localCode.delete(vpn); else this.localCode.add(vpn);
    return true;
  }
  private physCodeWritten(pa: number, len: number): void {
    const rev = this.codeRev;
    if (rev.size === 0) return;
    for (let p = Math.floor(pa / PAGE); p <= Math.floor((pa + len - 1) / PAGE); p++) {
      const s = rev.get(p);
      if (s === undefined) continue;
      const lo = Math.max(pa, p * PAGE), hi = Math.min(pa + len, (p + 1) * PAGE);
      for (const vpn of s) this.notifyCodeWrite(vpn * PAGE + (lo - p * PAGE), hi - lo);
    }
  }

  // ---------------------------------------------------------------- data accesses
  override read8(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 1, false);
    return this.phys.read8(this.translate(a, ACC_READ));
  }
  override read16(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 2, false);
    if ((a & 4095) > 4094) return this.readSplit(a, 2);
    return this.phys.read16(this.translate(a, ACC_READ));
  }
  override read32(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 4, false);
    if ((a & 4095) > 4092) return this.readSplit(a, 4) >>> 0;
    return this.phys.read32(this.translate(a, ACC_READ));
  }
  override read64(a: VAddr): bigint {
    const lo = this.read64Lo(a);
    return (BigInt(this.readHi >>> 0) << 32n) | BigInt(lo >>> 0);
  }
  override read64Lo(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 8, false);
    if ((a & 4095) > 4088) {
      const w = this.watcher;
      this.watcher = null;
      try { const lo = this.read32(a) | 0; this.readHi = this.read32(a + 4) | 0; return lo; } finally { this.watcher = w; }
    }
    const phys = this.phys;
    const lo = phys.read64Lo(this.translate(a, ACC_READ));
    this.readHi = phys.readHi;
    return lo;
  }
  /** a read crossing a page: both pages translated (in order), then the bytes */
  private readSplit(a: VAddr, n: number): number {
    const w = this.watcher;
    this.watcher = null;
    try {
      // bytes in address order: a fault on the second page reports its first byte (CR2)
      let v = 0;
      for (let k = 0; k < n; k++) v += this.read8(a + k) * 2 ** (8 * k);
      return v | 0;
    } finally { this.watcher = w; }
  }

  override write8(a: VAddr, v: number): void {
    if (this.watcher !== null) this.watcher.access(a, 1, true);
    this.phys.write8(this.translate(a, ACC_WRITE), v);
  }
  override write16(a: VAddr, v: number): void {
    if (this.watcher !== null) this.watcher.access(a, 2, true);
    if ((a & 4095) > 4094) { this.writeSplit(a, 2, v, 0); return; }
    this.phys.write16(this.translate(a, ACC_WRITE), v);
  }
  override write32(a: VAddr, v: number): void {
    if (this.watcher !== null) this.watcher.access(a, 4, true);
    if ((a & 4095) > 4092) { this.writeSplit(a, 4, v, 0); return; }
    this.phys.write32(this.translate(a, ACC_WRITE), v);
  }
  override write64(a: VAddr, v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.write64Halves(a, Number(u & 0xffffffffn) | 0, Number(u >> 32n) | 0);
  }
  override write64Halves(a: VAddr, lo: number, hi: number): void {
    if (this.watcher !== null) this.watcher.access(a, 8, true);
    if ((a & 4095) > 4088) { this.writeSplit(a, 8, lo, hi); return; }
    this.phys.write64Halves(this.translate(a, ACC_WRITE), lo, hi);
  }
  /** a write crossing a page: both pages are translated first (CR2 of a fault: the first byte on the faulting page), so a fault leaves memory unchanged */
  private writeSplit(a: VAddr, n: number, lo: number, hi: number): void {
    this.translate(a, ACC_WRITE);
    this.translate(Math.floor(a / PAGE) * PAGE + PAGE, ACC_WRITE);
    for (let k = 0; k < n; k++) {
      const b = k < 4 ? (lo >>> (8 * k)) & 0xff : (hi >>> (8 * (k - 4))) & 0xff;
      this.phys.write8(this.translate(a + k, ACC_WRITE), b);
    }
  }

  override fetch8(a: VAddr): number {
    return this.phys.fetch8(this.translate(a, ACC_EXEC));
  }

  // ---------------------------------------------------------------- the debugger's and the platform's bulk view
  /** bytes at linear `a` as a supervisor sees them (no A/D side effects); MemoryFault-free: throws a #PF exception when unmapped */
  override readBytes(a: VAddr, len: number): Uint8Array {
    const out = new Uint8Array(len);
    for (let i = 0; i < len;) {
      const pa = this.virtToPhys(a + i);
      if (pa === null) throw new X86Exception(VEC_PF, 0, `not mapped: 0x${(a + i).toString(16)}`, a + i);
      const n = Math.min(len - i, PAGE - (pa % PAGE));
      out.set(this.phys.readBytes(pa, n), i);
      i += n;
    }
    return out;
  }
  override writeBytes(a: VAddr, data: Uint8Array, source: Parameters<Memory['writeBytes']>[2] = 'kernel'): void {
    for (let i = 0; i < data.length;) {
      const pa = this.virtToPhys(a + i);
      if (pa === null) throw new X86Exception(VEC_PF, PF_W, `not mapped: 0x${(a + i).toString(16)}`, a + i);
      const n = Math.min(data.length - i, PAGE - (pa % PAGE));
      this.phys.writeBytes(pa, data.subarray(i, i + n), source);
      i += n;
    }
  }
  override isMapped(a: VAddr, len = 1): boolean {
    for (let i = 0; i < len; i += PAGE - (((a + i) % PAGE) + PAGE) % PAGE) if (this.virtToPhys(a + i) === null) return false;
    return true;
  }
  override readCString(a: VAddr, max = 4096): string {
    let s = '';
    for (let i = 0; i < max; i++) {
      const c = this.readBytes(a + i, 1)[0];
      if (c === 0) break;
      s += String.fromCharCode(c);
    }
    return s;
  }
}
