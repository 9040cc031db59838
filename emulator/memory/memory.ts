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
 * Writes into executable regions notify `codeWriteListeners` (the CPUs drop
 * their decoded-instruction caches for those bytes). Code patching by the
 * kprobes engine goes through `textPoke()` (emulator/memory/textPoke.ts),
 * which also writes to read-only text.
 */
import { VAddr, fromVAddr, hex } from './address';

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
  readonly bytes: Uint8Array;
  readonly view: DataView;
  constructor(
    readonly base: VAddr,
    readonly size: number,
    public perms: number,
    readonly name: string,
    readonly device?: Device,
    backing?: Uint8Array,
  ) {
    this.end = base + size;
    this.bytes = backing ?? new Uint8Array(device ? 0 : size);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }
  contains(a: VAddr, len = 1): boolean { return a >= this.base && a + len <= this.end; }
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
  readonly codeWriteListeners: CodeWriteListener[] = [];
  /** observers of textPoke() patches (debugger views, tests) */
  readonly textPokeListeners: TextPokeListener[] = [];

  constructor(readonly name = 'kernel') {}

  /** Map a new region. Overlap with an existing region is an error. */
  map(base: VAddr, size: number, perms: number, name: string, device?: Device, backing?: Uint8Array): Region {
    if (!Number.isSafeInteger(base) || size <= 0) throw new RangeError(`bad region ${name}`);
    for (const r of this.regions) {
      if (base < r.end && r.base < base + size) {
        throw new RangeError(`region ${name} [${hex(fromVAddr(base))}, +0x${size.toString(16)}) overlaps ${r.name}`);
      }
    }
    const r = new Region(base, size, perms, name, device, backing);
    this.regions.push(r);
    this.regions.sort((a, b) => a.base - b.base);
    return r;
  }

  /** Share an existing region object (e.g. kernel regions in a process address space). */
  addRegion(r: Region): void {
    this.regions.push(r);
    this.regions.sort((a, b) => a.base - b.base);
  }

  unmap(r: Region): void {
    this.regions = this.regions.filter(x => x !== r);
    this.lastR = this.lastW = this.lastX = NO_REGION;
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

  /** Invalidate the one-entry TLBs (call after changing userMode or perms). */
  flushTlb(): void { this.lastR = this.lastW = this.lastX = NO_REGION; }

  // ---- data reads -------------------------------------------------------
  read8(a: VAddr): number {
    let r = this.lastR;
    if (a < r.base || a >= r.end) r = this.lookup(a, 1, PERM_R, 'read');
    if (r.device) return Number(r.device.read(a - r.base, 1));
    return r.bytes[a - r.base];
  }
  read16(a: VAddr): number {
    let r = this.lastR;
    if (a < r.base || a + 2 > r.end) r = this.lookup(a, 2, PERM_R, 'read');
    if (r.device) return Number(r.device.read(a - r.base, 2));
    return r.view.getUint16(a - r.base, true);
  }
  /** Unsigned 32-bit read (returned as int32 bit pattern >>> 0). */
  read32(a: VAddr): number {
    let r = this.lastR;
    if (a < r.base || a + 4 > r.end) r = this.lookup(a, 4, PERM_R, 'read');
    if (r.device) return Number(r.device.read(a - r.base, 4));
    return r.view.getUint32(a - r.base, true);
  }
  read64(a: VAddr): bigint {
    let r = this.lastR;
    if (a < r.base || a + 8 > r.end) r = this.lookup(a, 8, PERM_R, 'read');
    if (r.device) return r.device.read(a - r.base, 8);
    return r.view.getBigUint64(a - r.base, true);
  }

  // ---- data writes ------------------------------------------------------
  write8(a: VAddr, v: number): void {
    let r = this.lastW;
    if (a < r.base || a >= r.end) r = this.lookup(a, 1, PERM_W, 'write');
    if (r.device) { r.device.write(a - r.base, 1, BigInt(v & 0xff)); return; }
    r.bytes[a - r.base] = v;
    if (r.perms & PERM_X) this.codeWritten(a, 1);
  }
  write16(a: VAddr, v: number): void {
    let r = this.lastW;
    if (a < r.base || a + 2 > r.end) r = this.lookup(a, 2, PERM_W, 'write');
    if (r.device) { r.device.write(a - r.base, 2, BigInt(v & 0xffff)); return; }
    r.view.setUint16(a - r.base, v, true);
    if (r.perms & PERM_X) this.codeWritten(a, 2);
  }
  write32(a: VAddr, v: number): void {
    let r = this.lastW;
    if (a < r.base || a + 4 > r.end) r = this.lookup(a, 4, PERM_W, 'write');
    if (r.device) { r.device.write(a - r.base, 4, BigInt(v >>> 0)); return; }
    r.view.setUint32(a - r.base, v >>> 0, true);
    if (r.perms & PERM_X) this.codeWritten(a, 4);
  }
  write64(a: VAddr, v: bigint): void {
    let r = this.lastW;
    if (a < r.base || a + 8 > r.end) r = this.lookup(a, 8, PERM_W, 'write');
    if (r.device) { r.device.write(a - r.base, 8, BigInt.asUintN(64, v)); return; }
    r.view.setBigUint64(a - r.base, BigInt.asUintN(64, v), true);
    if (r.perms & PERM_X) this.codeWritten(a, 8);
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
      out.set(r.bytes.subarray(a + i - r.base, a + i - r.base + n), i);
      i += n;
    }
    return out;
  }
  /**
   * Copy bytes in ignoring W permission (loader, debugger writeMemory).
   * Executable bytes written this way notify code-write listeners.
   */
  writeBytes(a: VAddr, data: Uint8Array): void {
    let i = 0;
    while (i < data.length) {
      const r = this.regionAt(a + i);
      if (!r || r.device) throw new MemoryFault(a + i, 'write', !!r, false);
      const n = Math.min(data.length - i, r.end - (a + i));
      r.bytes.set(data.subarray(i, i + n), a + i - r.base);
      if (r.perms & PERM_X) this.codeWritten(a + i, n);
      i += n;
    }
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

  private codeWritten(a: VAddr, len: number): void {
    const ls = this.codeWriteListeners;
    for (let i = 0; i < ls.length; i++) ls[i](a, len);
  }
}
