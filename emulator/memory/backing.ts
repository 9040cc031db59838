/**
 * What backs a Region: the memory object whose bytes a mapping shows.
 *
 * Linux keeps this in the vm_area_struct (vm_file + vm_pgoff, or none for
 * anonymous memory) and the page cache (one struct address_space per
 * inode): every process that maps the same file page sees the same
 * physical page. Here a Backing is one such object: anonymous memory, or
 * a range of a file's pages identified by (inode, file offset). Its bytes
 * are one Uint8Array; each Region mapping it is a window (offset, size)
 * over those bytes, in some address space (Memory), at its own virtual
 * address and with its own permissions. A write through one window is
 * seen through every other, because they share the bytes (the page frame).
 *
 * The Backing knows its windows, so that a write to bytes that are
 * executable through any window (a store through an RW alias, textPoke of
 * a file page, the loader) notifies every address space that maps those
 * bytes executable (each Memory's codeWriteListeners, at that space's
 * virtual address), and so that a later uprobe can find every mapping of
 * (inode, offset).
 */
import type { VAddr } from './address';
import type { Memory, Region } from './memory';
import { guestBytes } from './guestRam';
import { nextTlbGeneration } from './tlbGeneration';

export const PAGE_SIZE = 4096;
/** Permission bit of an executable mapping (the value of memory.ts's PERM_X; restated to avoid an import cycle). */
const X = 4;

/** Identity of a backing object. */
export type BackingIdentity =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'file'; readonly inode: bigint; readonly path: string };

/** Identity of one byte: anonymous memory (with its backing), or (inode, file offset). */
export type ByteIdentity =
  | { readonly kind: 'anonymous'; readonly backing: Backing; readonly offset: number }
  | { readonly kind: 'file'; readonly inode: bigint; readonly path: string; readonly offset: bigint };

/** One address space's view of some bytes of a backing. */
export interface Alias {
  readonly memory: Memory;
  readonly region: Region;
  /** virtual address, in `memory`, of the first byte asked about that this window shows */
  readonly vaddr: VAddr;
  /** offset of that byte in the backing, and how many bytes from there this window shows */
  readonly offset: number;
  readonly len: number;
}

export class Backing {
  /** windows onto these bytes (Regions mapped in at least one Memory) */
  private readonly windows: Region[] = [];

  private constructor(
    readonly identity: BackingIdentity,
    /** the page frames: shared by every window */
    readonly bytes: Uint8Array,
    /** file offset of bytes[0] (0 for anonymous memory) */
    readonly fileOffset: bigint,
  ) {}

  /** Zero-filled anonymous memory of `size` bytes, or the given bytes (not copied). */
  static anonymous(sizeOrBytes: number | Uint8Array): Backing {
    const bytes = typeof sizeOrBytes === 'number' ? guestBytes(checkedSize(sizeOrBytes, 'anonymous memory')) : sizeOrBytes;
    return new Backing({ kind: 'anonymous' }, bytes, 0n);
  }

  /**
   * The pages of a file: `bytes` are the file's contents from `fileOffset`
   * (page-aligned) on; the caller (a page cache) keeps one Backing per
   * inode so that every mapping shares it.
   */
  static file(inode: bigint, path: string, bytes: Uint8Array, fileOffset = 0n): Backing {
    if (inode < 0n) throw new RangeError(`file backing ${path}: inode ${inode} is negative`);
    if (fileOffset < 0n || fileOffset % BigInt(PAGE_SIZE) !== 0n) {
      throw new RangeError(`file backing ${path}: offset 0x${fileOffset.toString(16)} is not page-aligned`);
    }
    return new Backing({ kind: 'file', inode, path }, bytes, fileOffset);
  }

  get size(): number { return this.bytes.length; }

  /** What byte `offset` of this backing is. */
  identityAt(offset: number): ByteIdentity {
    const id = this.identity;
    return id.kind === 'file'
      ? { kind: 'file', inode: id.inode, path: id.path, offset: this.fileOffset + BigInt(offset) }
      : { kind: 'anonymous', backing: this, offset };
  }

  /** Backing offset of a file offset (throws a RangeError naming the file when outside these bytes). */
  offsetOfFile(fileOffset: bigint): number {
    const id = this.identity;
    const rel = fileOffset - this.fileOffset;
    if (id.kind !== 'file' || rel < 0n || rel >= BigInt(this.bytes.length)) {
      const what = id.kind === 'file' ? `${id.path} (inode ${id.inode})` : 'anonymous memory';
      throw new RangeError(`file offset 0x${fileOffset.toString(16)} is outside ${what}`);
    }
    return Number(rel);
  }

  /** Every window that shows some of [offset, offset+len), in every address space, clipped to that range. */
  aliases(offset: number, len: number): Alias[] {
    const out: Alias[] = [];
    for (const r of this.windows) {
      const lo = Math.max(offset, r.offset), hi = Math.min(offset + len, r.offset + r.size);
      if (lo >= hi) continue;
      for (const m of r.spaces) out.push({ memory: m, region: r, vaddr: r.base + (lo - r.offset), offset: lo, len: hi - lo });
    }
    return out;
  }

  /** All windows (Regions) currently mapping this backing. */
  mappings(): readonly Region[] { return this.windows; }

  /** @internal Memory.map/addRegion: a window now shows these bytes. */
  attach(r: Region): void {
    if (!this.windows.includes(r)) this.windows.push(r);
    this.recomputeCode();
  }

  /** @internal Memory.unmap: the window is mapped nowhere any more. */
  detach(r: Region): void {
    const i = this.windows.indexOf(r);
    if (i >= 0) this.windows.splice(i, 1);
    r.codeMapped = (r.perms & X) !== 0;
    this.recomputeCode();
  }

  /**
   * @internal A window's permissions changed: recompute, for each window,
   * whether its bytes are executable through any window (so a store into
   * it must invalidate decoded code).
   */
  recomputeCode(): void {
    const ws = this.windows;
    for (const r of ws) {
      let code = (r.perms & X) !== 0;
      for (let j = 0; !code && j < ws.length; j++) {
        const o = ws[j];
        code = (o.perms & X) !== 0 && o.offset < r.offset + r.size && r.offset < o.offset + o.size;
      }
      if (r.codeMapped !== code) for (const m of r.spaces) m.tlbGeneration = nextTlbGeneration();
      r.codeMapped = code;
    }
  }

  /**
   * Bytes [offset, offset+len) changed: tell every address space that
   * executes them (`counted`: not a textPoke patch, counted in each one's
   * Memory.textWrites).
   */
  codeWritten(offset: number, len: number, counted = true): void {
    for (const r of this.windows) {
      if ((r.perms & X) === 0) continue;
      const lo = Math.max(offset, r.offset), hi = Math.min(offset + len, r.offset + r.size);
      if (lo >= hi) continue;
      for (const m of r.spaces) {
        if (counted) m.textWrites++;
        m.notifyCodeWrite(r.base + (lo - r.offset), hi - lo);
      }
    }
  }
}

function checkedSize(size: number, what: string): number {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`${what}: bad size ${size}`);
  return size;
}
