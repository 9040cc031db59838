/**
 * The memory bus: a set of non-overlapping regions in one virtual address
 * space. RAM regions are a Uint8Array + DataView; device regions implement
 * read/write. All multi-byte accesses are little-endian (every arch we run
 * executes little-endian).
 *
 * Addresses are VAddr (see address.ts). An access that touches no region, or
 * violates the region's permissions, throws a MemoryFault. The CPU catches it
 * and turns it into a typed trap (#PF / data abort / access fault); nothing
 * else should let it escape.
 *
 * A region is a window onto a Backing (backing.ts): anonymous memory or a
 * file's pages (inode, offset). Several regions, in this and other address
 * spaces, may show the same bytes at different virtual addresses with
 * their own permissions; a write through one is seen through all.
 *
 * Writes to bytes that are executable through any window notify the
 * `codeWriteListeners` of every address space mapping them executable (the
 * CPUs drop their decoded-instruction caches for those bytes). Code
 * patching by the kprobes engine goes through `textPoke()`
 * (emulator/memory/textPoke.ts), which also writes to read-only text.
 *
 * Every guest write goes through this class: CPU stores (write8..write64)
 * and bulk writes (writeBytes, with a WriteSource saying who wrote). Write
 * observers (addWriteObserver) see each after it happened; with none
 * attached the stores pay one boolean test.
 */
import { PageSet } from './pageSet';
import { VAddr, fromVAddr, hex } from './address';
import { Alias, Backing, ByteIdentity, PAGE_SIZE } from './backing';
import type { WriteObserver, WriteSource } from './writeSource';
import { HARDWARE_VISIBLE } from './writeSource';
import { guestBytes } from './guestRam';
import { nextTlbGeneration } from './tlbGeneration';
import { hostOwned, onRestore } from '../base/marks';

/** What sees a CPU's data accesses while it runs on this address space (its debug registers' match unit, cpu/hwDebug.ts). */
export interface AccessWatcher {
  /** a CPU load/store of [a, a+len), before it happens (may throw to stop it: an arm64 watchpoint) */
  access(a: VAddr, len: number, write: boolean): void;
  /** a write made for the guest outside an instruction, after it happened */
  bulk(a: VAddr, len: number, write: boolean): void;
}

export const PERM_R = 1;
export const PERM_W = 2;
export const PERM_X = 4;
/** Region is accessible from user mode (otherwise supervisor only). */
export const PERM_U = 8;

export interface Device {
  read(offset: number, size: 1 | 2 | 4 | 8): bigint;
  write(offset: number, size: 1 | 2 | 4 | 8, value: bigint): void;
}

export class Region {
  readonly end: VAddr;
  /** this window's bytes: a view of backing.bytes from `offset` */
  readonly bytes: Uint8Array;
  readonly view: DataView;
  /** what the bytes are (anonymous memory, or a file's pages); shared with every alias */
  readonly backing: Backing;
  /** offset of `base` in the backing */
  readonly offset: number;
  /** the address spaces this region is mapped into (maintained by Memory) */
  readonly spaces: Memory[] = [];
  /**
   * true when these bytes are executable through some window (this one or
   * an alias): a store must invalidate decoded code. Maintained by Backing.
   */
  codeMapped: boolean;
  private permBits: number;
  constructor(
    readonly base: VAddr,
    readonly size: number,
    perms: number,
    readonly name: string,
    readonly device?: Device,
    backing?: Uint8Array | Backing,
    offset = 0,
  ) {
    this.end = base + size;
    this.permBits = perms;
    this.codeMapped = (perms & PERM_X) !== 0;
    this.offset = offset;
    if (backing instanceof Backing) {
      if (device) throw new RangeError(`region ${name}: a device region has no backing memory`);
      if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`region ${name}: bad offset ${offset} in its backing`);
      if (offset + size > backing.size) {
        throw new RangeError(`region ${name}: window [0x${offset.toString(16)}, +0x${size.toString(16)}) is outside its backing (0x${backing.size.toString(16)} bytes)`);
      }
      this.backing = backing;
      this.bytes = backing.bytes.subarray(offset, offset + size);
    } else {
      this.bytes = backing ?? (device ? new Uint8Array(0) : guestBytes(size));
      this.backing = Backing.anonymous(this.bytes);
    }
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }
  /** Permissions of this window (other aliases of the bytes have their own). */
  get perms(): number { return this.permBits; }
  set perms(p: number) {
    this.permBits = p;
    this.codeMapped = (p & PERM_X) !== 0;
    this.backing.recomputeCode();
  }
  contains(a: VAddr, len = 1): boolean { return a >= this.base && a + len <= this.end; }
  /** What the byte at `a` (inside this region) is: anonymous memory or (inode, file offset). */
  identityAt(a: VAddr): ByteIdentity { return this.backing.identityAt(this.offset + (a - this.base)); }
}

/** Thrown by the bus on a bad access; converted into a trap by the CPU. */
export class MemoryFault {
  constructor(
    readonly addr: VAddr,
    readonly access: 'read' | 'write' | 'exec',
    /** true when a region is mapped there but the permission is missing */
    readonly present: boolean,
    readonly user: boolean,
  ) {}
  get address(): bigint { return fromVAddr(this.addr); }
  toString(): string {
    return `${this.present ? 'protection' : 'unmapped'} ${this.access} at ${hex(fromVAddr(this.addr))}`;
  }
}

export type CodeWriteListener = (addr: VAddr, len: number) => void;
export type TextPokeListener = (addr: VAddr, oldBytes: Uint8Array, newBytes: Uint8Array) => void;

const NO_REGION = new Region(0, 0, 0, '<none>');


export class Memory {
  private regions: Region[] = [];
  /** last region used per access class: a one-entry TLB */
  private lastR: Region = NO_REGION;
  private lastW: Region = NO_REGION;
  private lastX: Region = NO_REGION;
  /** when true, accesses are checked against PERM_U (CPU in user mode) */
  userMode = false;
  /** caches of decoded or translated code (not machine state: not restored by time travel, which tells them what changed) */
  readonly codeWriteListeners: CodeWriteListener[] = hostOwned([]);
  /** observers of textPoke() patches (debugger views, tests) */
  readonly textPokeListeners: TextPokeListener[] = hostOwned([]);
  /**
   * The debug registers of the CPU running on this address space, while
   * some data watch is armed (set by the CPU as its run starts); null
   * otherwise: every load and store tests this one field.
   */
  watcher: AccessWatcher | null = null;

  /**
   * Bumped whenever what an address means may have changed (a mapping
   * added or removed, permissions, a write observer, the executable status
   * of bytes): translated code's TLBs (emulator/jit) are flushed on change.
   */
  tlbGeneration = 0;
  /**
   * 4 KiB pages (address / 4096) from which some CPU decoded instructions
   * in this space (maintained by the decode caches): translated stores may
   * go straight to a writable-and-executable page only while it holds no
   * decoded code.
   */
  readonly codePages = new PageSet();
  /**
   * Counts the changes to executable bytes of this space that were not
   * textPoke() patches (Linux's text_poke: the kprobes engine's and
   * uprobes' breakpoints and jumps, whose patchers keep the original bytes
   * themselves): CPU stores, bulk writes (kernel, loader, debugger) and
   * writes through another space's window onto the same bytes. With
   * tlbGeneration (mappings, permissions, time travel) it tells a cache
   * of what the original code says that nothing it read changed, without
   * reading the code again; see watchText for the bytes it covers.
   */
  textWrites = 0;
  /** an arch's own state of this address space, by name (e.g. the register files kept for signal frames): machine state, so time travel puts it back */
  readonly archState = new Map<string, unknown>();

  /** write observers; `observed` is true while there is at least one (the stores' only extra test) */
  private writeObservers: WriteObserver[] = [];
  private observed = false;

  constructor(readonly name = 'kernel') {
    let before: Map<Region, number> | null = null;
    onRestore(this, {
      before: () => { before = new Map(this.regions.map(r => [r, r.perms])); },
      after: changed => {
        this.tlbGeneration = nextTlbGeneration();
        this.restoredBytes(before ?? new Map(), changed);
        before = null;
      },
    });
  }

  /** Map a new region. Overlap with an existing region is an error. */
  map(base: VAddr, size: number, perms: number, name: string, device?: Device, backing?: Uint8Array): Region {
    this.checkFree(base, size, name);
    return this.insert(new Region(base, size, perms, name, device, backing));
  }

  /**
   * Map [offset, offset+size) of a backing at `base` with this mapping's
   * own permissions; the bytes are shared with every other mapping of the
   * backing (in this or another address space). A file backing must be
   * mapped at an address congruent to its file offset modulo the page size,
   * as mmap(2) requires.
   */
  mapBacking(base: VAddr, size: number, perms: number, name: string, backing: Backing, offset: number): Region {
    this.checkFree(base, size, name);
    const r = new Region(base, size, perms, name, undefined, backing, offset); // checks the window
    const id = backing.identity;
    if (id.kind === 'file' && (base - Number((backing.fileOffset + BigInt(offset)) % BigInt(PAGE_SIZE))) % PAGE_SIZE !== 0) {
      throw new RangeError(`region ${name}: ${id.path} offset 0x${(backing.fileOffset + BigInt(offset)).toString(16)} cannot be mapped at ${hex(fromVAddr(base))} (not congruent modulo the page size)`);
    }
    return this.insert(r);
  }

  /** Share an existing region object (e.g. kernel regions in a process address space). */
  addRegion(r: Region): void {
    this.checkFree(r.base, r.size, r.name);
    this.insert(r);
  }

  unmap(r: Region): void {
    const before = this.regions.length;
    this.regions = this.regions.filter(x => x !== r);
    this.lastR = this.lastW = this.lastX = NO_REGION;
    this.tlbGeneration = nextTlbGeneration();
    if (this.regions.length === before) return;
    const i = r.spaces.indexOf(this);
    if (i >= 0) r.spaces.splice(i, 1);
    if (r.spaces.length === 0) r.backing.detach(r);
  }

  private checkFree(base: VAddr, size: number, name: string): void {
    if (!Number.isSafeInteger(base) || !Number.isSafeInteger(size) || size <= 0) throw new RangeError(`bad region ${name}`);
    for (const r of this.regions) {
      if (base < r.end && r.base < base + size) {
        throw new RangeError(`region ${name} [${hex(fromVAddr(base))}, +0x${size.toString(16)}) overlaps ${r.name}`);
      }
    }
  }

  private insert(r: Region): Region {
    this.regions.push(r);
    this.regions.sort((a, b) => a.base - b.base);
    this.tlbGeneration = nextTlbGeneration();
    r.spaces.push(this);
    r.backing.attach(r);
    return r;
  }

  allRegions(): readonly Region[] { return this.regions; }

  /** Region containing [a, a+len), or undefined. No permission check. */
  regionAt(a: VAddr, len = 1): Region | undefined {
    const rs = this.regions;
    let lo = 0, hi = rs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = rs[mid];
      if (a < r.base) hi = mid - 1;
      else if (a >= r.end) lo = mid + 1;
      else return a + len <= r.end ? r : undefined;
    }
    return undefined;
  }

  private lookup(a: VAddr, len: number, perm: number, access: 'read' | 'write' | 'exec'): Region {
    const r = this.regionAt(a, len);
    if (!r) throw new MemoryFault(a, access, false, this.userMode);
    if ((r.perms & perm) === 0 || (this.userMode && (r.perms & PERM_U) === 0) || r.device && perm === PERM_X) {
      throw new MemoryFault(a, access, true, this.userMode);
    }
    if (perm === PERM_R) this.lastR = r; else if (perm === PERM_W) this.lastW = r; else this.lastX = r;
    return r;
  }

  /**
   * Where translated code's TLB finds the bytes of `a`: the memory whose
   * regions hold them (this one; a paged space's physical memory) ...
   */
  get directMemory(): Memory { return this; }
  /**
   * ... and the address there, as the access (a read, or a write) would
   * reach it now, with the side effects that access would have on the
   * translation (a page walk's A/D bits); NaN when it would fault (the
   * access leaves translated code and the interpreter raises the fault).
   * Never throws. (Not -1: addresses in the upper half are negative.)
   */
  directAddress(a: VAddr, _write: boolean): VAddr { return a; }
  /** The address in directMemory of `a` with no side effect, or NaN (lockstep's record of the bytes a store is about to change). */
  peekDirect(a: VAddr): VAddr { return a; }

  /** Invalidate the one-entry TLBs (call after changing userMode or perms). */
  flushTlb(): void { this.lastR = this.lastW = this.lastX = NO_REGION; this.tlbGeneration = nextTlbGeneration(); }

  /** true while some write observer watches this space (translated stores then take the slow path) */
  get isObserved(): boolean { return this.observed; }

  // ---- data reads -------------------------------------------------------
  read8(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 1, false);
    let r = this.lastR;
    if (a < r.base || a >= r.end) r = this.lookup(a, 1, PERM_R, 'read');
    if (r.device) return Number(r.device.read(a - r.base, 1));
    return r.bytes[a - r.base];
  }
  read16(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 2, false);
    let r = this.lastR;
    if (a < r.base || a + 2 > r.end) r = this.lookup(a, 2, PERM_R, 'read');
    if (r.device) return Number(r.device.read(a - r.base, 2));
    return r.view.getUint16(a - r.base, true);
  }
  /** Unsigned 32-bit read (returned as int32 bit pattern >>> 0). */
  read32(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 4, false);
    let r = this.lastR;
    if (a < r.base || a + 4 > r.end) r = this.lookup(a, 4, PERM_R, 'read');
    if (r.device) return Number(r.device.read(a - r.base, 4));
    return r.view.getUint32(a - r.base, true);
  }
  read64(a: VAddr): bigint {
    if (this.watcher !== null) this.watcher.access(a, 8, false);
    let r = this.lastR;
    if (a < r.base || a + 8 > r.end) r = this.lookup(a, 8, PERM_R, 'read');
    if (r.device) return r.device.read(a - r.base, 8);
    return r.view.getBigUint64(a - r.base, true);
  }

  /**
   * read64 as 32-bit halves (no BigInt): one 8-byte access; returns the
   * low half (int32) and leaves the high half in `readHi`.
   */
  read64Lo(a: VAddr): number {
    if (this.watcher !== null) this.watcher.access(a, 8, false);
    let r = this.lastR;
    if (a < r.base || a + 8 > r.end) r = this.lookup(a, 8, PERM_R, 'read');
    if (r.device) {
      const v = r.device.read(a - r.base, 8);
      this.readHi = Number(BigInt.asIntN(32, v >> 32n));
      return Number(BigInt.asIntN(32, v));
    }
    this.readHi = r.view.getInt32(a - r.base + 4, true);
    return r.view.getInt32(a - r.base, true);
  }
  /** the high half of the last read64Lo */
  readHi = 0;

  // ---- data writes ------------------------------------------------------
  write8(a: VAddr, v: number): void {
    if (this.watcher !== null) this.watcher.access(a, 1, true);
    let r = this.lastW;
    if (a < r.base || a >= r.end) r = this.lookup(a, 1, PERM_W, 'write');
    if (r.device) r.device.write(a - r.base, 1, BigInt(v & 0xff));
    else {
      r.bytes[a - r.base] = v;
      if (r.codeMapped) this.codeWritten(r, a, 1);
    }
    if (this.observed) this.wrote(a, 1, 'cpu');
  }
  write16(a: VAddr, v: number): void {
    if (this.watcher !== null) this.watcher.access(a, 2, true);
    let r = this.lastW;
    if (a < r.base || a + 2 > r.end) r = this.lookup(a, 2, PERM_W, 'write');
    if (r.device) r.device.write(a - r.base, 2, BigInt(v & 0xffff));
    else {
      r.view.setUint16(a - r.base, v, true);
      if (r.codeMapped) this.codeWritten(r, a, 2);
    }
    if (this.observed) this.wrote(a, 2, 'cpu');
  }
  write32(a: VAddr, v: number): void {
    if (this.watcher !== null) this.watcher.access(a, 4, true);
    let r = this.lastW;
    if (a < r.base || a + 4 > r.end) r = this.lookup(a, 4, PERM_W, 'write');
    if (r.device) r.device.write(a - r.base, 4, BigInt(v >>> 0));
    else {
      r.view.setUint32(a - r.base, v >>> 0, true);
      if (r.codeMapped) this.codeWritten(r, a, 4);
    }
    if (this.observed) this.wrote(a, 4, 'cpu');
  }
  write64(a: VAddr, v: bigint): void {
    if (this.watcher !== null) this.watcher.access(a, 8, true);
    let r = this.lastW;
    if (a < r.base || a + 8 > r.end) r = this.lookup(a, 8, PERM_W, 'write');
    if (r.device) r.device.write(a - r.base, 8, BigInt.asUintN(64, v));
    else {
      r.view.setBigUint64(a - r.base, BigInt.asUintN(64, v), true);
      if (r.codeMapped) this.codeWritten(r, a, 8);
    }
    if (this.observed) this.wrote(a, 8, 'cpu');
  }

  /**
   * A 64-bit store given as 32-bit halves (CPUs that hold registers as
   * int32 pairs): one access and one observed 8-byte write. When the 8
   * bytes are not inside one region, the high half is stored first, so that
   * a fault at a region's end leaves memory unchanged.
   */
  write64Halves(a: VAddr, lo: number, hi: number): void {
    if (this.watcher !== null) this.watcher.access(a, 8, true);
    let r = this.lastW;
    if (a < r.base || a + 8 > r.end) {
      if (!this.regionAt(a, 8)) {
        // two stores of one access: the watcher saw the 8 bytes already
        const w = this.watcher;
        this.watcher = null;
        try { this.write32(a + 4, hi); this.write32(a, lo); } finally { this.watcher = w; }
        return;
      }
      r = this.lookup(a, 8, PERM_W, 'write');
    }
    if (r.device) r.device.write(a - r.base, 8, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
    else {
      r.view.setUint32(a - r.base, lo >>> 0, true);
      r.view.setUint32(a - r.base + 4, hi >>> 0, true);
      if (r.codeMapped) this.codeWritten(r, a, 8);
    }
    if (this.observed) this.wrote(a, 8, 'cpu');
  }

  // ---- instruction fetch ------------------------------------------------
  /** Fetch one byte for execution (checks PERM_X). */
  fetch8(a: VAddr): number {
    let r = this.lastX;
    if (a < r.base || a >= r.end) r = this.lookup(a, 1, PERM_X, 'exec');
    return r.bytes[a - r.base];
  }

  // ---- bulk, permission-free access for the debugger/loader/kernel ------
  /** Copy bytes out; throws MemoryFault when any byte is unmapped. */
  readBytes(a: VAddr, len: number): Uint8Array {
    const out = new Uint8Array(len);
    let i = 0;
    while (i < len) {
      const r = this.regionAt(a + i);
      if (!r || r.device) throw new MemoryFault(a + i, 'read', !!r, false);
      const n = Math.min(len - i, r.end - (a + i));
      const from = a + i - r.base;
      // a few bytes (an instruction, a patch) copied in a loop: no subarray view made for them
      if (n <= 64) { const src = r.bytes; for (let k = 0; k < n; k++) out[i + k] = src[from + k]; }
      else out.set(r.bytes.subarray(from, from + n), i);
      i += n;
    }
    return out;
  }
  /**
   * Copy bytes in ignoring W permission: the bulk path of every write that
   * is not a CPU store (the kernel on the guest's behalf, the kprobes
   * engine, the loader, the debugger); `source` says which (see
   * writeSource.ts). Nothing is written when any byte is not mapped RAM
   * (MemoryFault at the first such byte). Executable bytes written this way
   * notify code-write listeners, in every address space that maps them.
   */
  writeBytes(a: VAddr, data: Uint8Array, source: WriteSource = 'kernel'): void {
    for (let i = 0; i < data.length;) {
      const r = this.regionAt(a + i);
      if (!r || r.device) throw new MemoryFault(a + i, 'write', !!r, false);
      i += Math.min(data.length - i, r.end - (a + i));
    }
    let i = 0;
    const counted = source !== 'textPoke';
    while (i < data.length) {
      const r = this.regionAt(a + i) as Region;
      const n = Math.min(data.length - i, r.end - (a + i));
      r.bytes.set(n === data.length ? data : data.subarray(i, i + n), a + i - r.base);
      if (r.codeMapped) this.codeWritten(r, a + i, n, counted);
      i += n;
    }
    if (this.observed && data.length > 0) this.wrote(a, data.length, source);
    if (this.watcher !== null && data.length > 0 && HARDWARE_VISIBLE[source]) this.watcher.bulk(a, data.length, true);
  }
  /** True if every byte of [a, a+len) is mapped RAM. */
  isMapped(a: VAddr, len = 1): boolean {
    let i = 0;
    while (i < len) {
      const r = this.regionAt(a + i);
      if (!r || r.device) return false;
      i += Math.min(len - i, r.end - (a + i));
    }
    return true;
  }
  /** Read a NUL-terminated string (at most max bytes), for %s and names. */
  readCString(a: VAddr, max = 4096): string {
    let s = '';
    for (let i = 0; i < max; i++) {
      const r = this.regionAt(a + i);
      if (!r || r.device) throw new MemoryFault(a + i, 'read', !!r, false);
      const c = r.bytes[a + i - r.base];
      if (c === 0) break;
      s += String.fromCharCode(c);
    }
    return s;
  }

  /** What the byte at `a` is (anonymous memory or a file's (inode, offset)); undefined when unmapped or a device. */
  identityAt(a: VAddr): ByteIdentity | undefined {
    const r = this.regionAt(a);
    return r && !r.device ? r.identityAt(a) : undefined;
  }

  /**
   * Every mapping, in every address space (this one included), of the
   * bytes at [a, a+len) of this one; unmapped parts contribute nothing.
   */
  aliasesOf(a: VAddr, len: number): Alias[] {
    const out: Alias[] = [];
    let i = 0;
    while (i < len) {
      const r = this.regionAt(a + i);
      if (!r) { i++; continue; }
      const n = Math.min(len - i, r.end - (a + i));
      if (!r.device) out.push(...r.backing.aliases(r.offset + (a + i - r.base), n));
      i += n;
    }
    return out;
  }

  // ---- observers ----------------------------------------------------------
  /** Watch every write to this address space (after it happened); returns the function that stops watching. */
  addWriteObserver(o: WriteObserver): () => void {
    this.writeObservers.push(o);
    this.observed = true;
    this.tlbGeneration = nextTlbGeneration();
    return () => {
      const i = this.writeObservers.indexOf(o);
      if (i >= 0) this.writeObservers.splice(i, 1);
      this.observed = this.writeObservers.length > 0;
      this.tlbGeneration = nextTlbGeneration();
    };
  }

  /**
   * A write the caller made straight into a region's bytes, after checking
   * that the bytes are writable RAM executable through no mapping (the
   * kprobes engine's native pt_regs frames, written as words for speed):
   * the observers hear of it as of any other write. A boolean test when
   * nobody watches.
   */
  wroteInPlace(a: VAddr, len: number, source: WriteSource): void {
    if (this.observed) this.wrote(a, len, source);
    if (this.watcher !== null && HARDWARE_VISIBLE[source]) this.watcher.bulk(a, len, true);
  }

  /**
   * Bytes a CPU stored straight into RAM region `r` at [a, a+len) (a rep
   * movs/stos run inside one page, after its first element went through the
   * ordinary store): code caches and observers hear of them as of the
   * element stores they stand for.
   */
  storedInPlace(r: Region, a: VAddr, len: number): void {
    if (r.codeMapped) this.codeWritten(r, a, len);
    if (this.observed) this.wrote(a, len, 'cpu');
  }

  private wrote(a: VAddr, len: number, source: WriteSource): void {
    const os = this.writeObservers;
    for (let i = 0; i < os.length; i++) os[i](a, len, source);
  }

  /** @internal Backing: bytes this space executes at [a, a+len) changed. */
  /**
   * Time travel put this space back (timetravel/snapshot.ts): the caches of
   * its code (decode caches, translations) forget what they held for bytes
   * that changed and for mappings that came, went or changed permissions;
   * the rest of what they hold is still right.
   */
  private restoredBytes(before: Map<Region, number>, changed: readonly { buf: ArrayBufferLike; start: number; end: number }[]): void {
    const stale = (r: Region): void => this.notifyCodeWrite(r.base, r.size);
    for (const [r, perms] of before) if (!this.regions.includes(r) || r.perms !== perms) stale(r);
    for (const r of this.regions) {
      if (!before.has(r)) { stale(r); continue; }
      if (r.device || !r.codeMapped || changed.length === 0) continue; // only executable bytes can be in a cache of code
      const b = r.bytes, lo = b.byteOffset, hi = b.byteOffset + b.byteLength;
      for (const c of changed) {
        if (c.buf !== b.buffer || c.end <= lo || c.start >= hi) continue;
        const from = Math.max(c.start, lo), to = Math.min(c.end, hi);
        this.notifyCodeWrite(r.base + (from - lo), to - from);
      }
    }
  }

  /**
   * What these bytes stand for changed though they did not (the kprobes
   * engine attached or took back a native entry's handlers): every address
   * space executing them drops its decoded and translated code there, as
   * after a write. Nothing happens where nothing is mapped.
   */
  codeMeaningChanged(a: VAddr, len: number): void {
    const r = this.regionAt(a, len);
    if (r !== undefined && r.codeMapped) this.codeWritten(r, a, len, false);
  }

  /**
   * Make every later change to the bytes of [a, a+len) count in
   * textWrites: translated code stores straight into a writable executable
   * page only while no decode cache holds it (codePages), so the pages are
   * entered there as a decode cache enters those it decodes from. false
   * when this space cannot promise it (its bytes live in another memory:
   * a paged space), and the caller must read the bytes again instead.
   */
  watchText(a: VAddr, len: number): boolean {
    if (this.directMemory !== this) return false;
    const p1 = Math.floor((a + Math.max(len, 1) - 1) / 4096);
    for (let p = Math.floor(a / 4096); p <= p1; p++) {
      if (!this.codePages.has(p)) { this.codePages.add(p); this.tlbGeneration = nextTlbGeneration(); }
    }
    return true;
  }

  notifyCodeWrite(a: VAddr, len: number): void {
    const ls = this.codeWriteListeners;
    for (let i = 0; i < ls.length; i++) ls[i](a, len);
  }

  /**
   * true when codePages lists every page of this memory whose writes some
   * code-write listener cares about (a physical memory under paged spaces,
   * which keep it: x86_64 sysmode/paging.ts): a store elsewhere tells
   * nobody (with all RAM executable, most stores are elsewhere)
   */
  codeWritesByPage = false;

  /** `counted`: a change to the bytes other than a textPoke patch (textWrites) */
  private codeWritten(r: Region, a: VAddr, len: number, counted = true): void {
    if (counted) this.textWrites++;
    if (this.codeWritesByPage) {
      const cp = this.codePages, p0 = Math.floor(a / 4096), p1 = Math.floor((a + len - 1) / 4096);
      let any = cp.has(p0) || cp.has(p1);
      for (let p = p0 + 1; !any && p < p1; p++) any = cp.has(p);
      if (!any) return;
    }
    r.backing.codeWritten(r.offset + (a - r.base), len, counted);
  }
}
