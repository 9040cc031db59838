/**
 * A process's private copies of probed file pages (Linux
 * uprobe_write_opcode: the breakpoint goes into a new anonymous page that
 * replaces the file page in that one vma; the page cache, read(2) and every
 * other process keep the file's bytes). When the last breakpoint of a page
 * is removed and the copy holds the file's bytes again, the file page is
 * mapped back (as Linux puts orig_page back), so the process shares the
 * page cache (and its decoded code) again.
 *
 * A copy remembers which file page it stands for, so that later probes in
 * the same page, the listing and the restore find it.
 */
import { Backing, PAGE_SIZE } from '../memory/backing';
import { Memory, Region } from '../memory/memory';
import { VAddr, mustVAddr } from '../memory/address';
import { textPoke } from '../memory/textPoke';

/** A private copy of (part of) one file page in one address space. */
export interface CowPage {
  region: Region;
  /** the file's page cache and the backing offset of region.base */
  readonly file: Backing;
  readonly fileOffset: number;
}

export class UprobePages {
  /** `origins`: where a copy's file mapping is recorded for /proc/PID/maps (the kernel's mapOrigins) */
  constructor(private readonly origins?: WeakMap<Region, { backing: Backing; offset: number }>) {}

  private readonly cow = new Map<Memory, Map<VAddr, CowPage>>();
  /**
   * Regions this class split or replaced, and the address space they were
   * in: a caller's vma (the early interface's user->vma) stays the same
   * mapping while its pages are swapped for copies and back.
   */
  private readonly replaced = new Map<Region, Memory>();

  /** The address space of a mapping, also after its pages were copied or put back. */
  spaceOf(vma: Region): Memory | undefined {
    return vma.spaces[0] ?? this.replaced.get(vma);
  }

  /** Whether `mm` still maps at v what `vma` mapped (the same file window, or our copy of its page). */
  sameMapping(mm: Memory, vma: Region, v: VAddr): boolean {
    const r = mm.regionAt(v);
    if (!r) return false;
    if (r === vma) return true;
    if (r.name !== vma.name || r.perms !== vma.perms) return false;
    const c = this.copyAt(mm, BigInt(v));
    const file = c ? c.file : r.backing, base = c ? c.fileOffset : r.offset;
    return file === vma.backing && base - r.base === vma.offset - vma.base;
  }

  /** Patch bytes at vaddr in this address space only, copying its file page first. Returns the bytes replaced. */
  write(mm: Memory, vaddr: bigint, bytes: Uint8Array): Uint8Array {
    const v = mustVAddr(vaddr);
    this.privatize(mm, v, bytes.length);
    return textPoke(mm, v, bytes);
  }

  /** The private copy holding vaddr, if any. */
  copyAt(mm: Memory, vaddr: bigint): CowPage | undefined {
    const r = mm.regionAt(mustVAddr(vaddr));
    const c = r && this.cow.get(mm)?.get(r.base);
    return c && c.region === r ? c : undefined;
  }

  /** Make [v, v+len) private pages of this space (a patch never crosses a page in practice; both pages are copied if it does). */
  private privatize(mm: Memory, v: VAddr, len: number): void {
    for (let page = Math.floor(v / PAGE_SIZE) * PAGE_SIZE; page < v + len; page += PAGE_SIZE) {
      const at = Math.max(page, v);
      const r = mm.regionAt(at);
      if (!r) throw new RangeError(`uprobes: nothing mapped at 0x${at.toString(16)}`);
      if (this.copyAt(mm, BigInt(at))) continue;
      if (r.backing.identity.kind !== 'file') throw new RangeError(`uprobes: 0x${at.toString(16)} is not a file page (${r.name})`);
      const lo = Math.max(r.base, page), hi = Math.min(r.end, page + PAGE_SIZE);
      mm.unmap(r);
      this.replaced.set(r, mm);
      if (r.base < lo) mm.mapBacking(r.base, lo - r.base, r.perms, r.name, r.backing, r.offset);
      if (hi < r.end) mm.mapBacking(hi, r.end - hi, r.perms, r.name, r.backing, r.offset + (hi - r.base));
      const copy = mm.map(lo, hi - lo, r.perms, r.name, undefined, r.bytes.slice(lo - r.base, hi - r.base));
      let m = this.cow.get(mm);
      if (!m) this.cow.set(mm, m = new Map());
      m.set(lo, { region: copy, file: r.backing, fileOffset: r.offset + (lo - r.base) });
      this.origins?.set(copy, { backing: r.backing, offset: r.offset + (lo - r.base) });
    }
  }

  /** Put the file's page back where the copy holding vaddr has the file's bytes again; true when it did. */
  restore(mm: Memory, vaddr: bigint): boolean {
    const c = this.copyAt(mm, vaddr);
    if (!c) return false;
    const r = c.region;
    const orig = c.file.bytes.subarray(c.fileOffset, c.fileOffset + r.size);
    for (let i = 0; i < r.size; i++) if (r.bytes[i] !== orig[i]) return false;
    mm.unmap(r);
    this.replaced.set(r, mm);
    this.cow.get(mm)?.delete(r.base);
    // the file's window again, joined with the neighbouring windows of the same mapping (one region, as before the copy)
    let lo = r.base, hi = r.end, off = c.fileOffset;
    const before = mm.regionAt(r.base - 1), after = mm.regionAt(r.end);
    const joins = (n: Region | undefined): n is Region => n !== undefined && n.backing === c.file && n.perms === r.perms && n.name === r.name
      && !this.copyAt(mm, BigInt(n.base)) && n.offset - n.base === c.fileOffset - r.base;
    for (const n of [before, after]) {
      if (!joins(n)) continue;
      mm.unmap(n);
      this.replaced.set(n, mm);
      lo = Math.min(lo, n.base);
      hi = Math.max(hi, n.end);
      if (n.base < r.base) off = n.offset;
    }
    mm.mapBacking(lo, hi - lo, r.perms, r.name, c.file, off);
    // the decoded code of the copy goes: the space now runs the page cache's bytes
    mm.notifyCodeWrite(r.base, r.size);
    return true;
  }

  /** fork: the child's copies of our pages (fork copied their bytes) stand for the same file pages. */
  forked(parent: Memory, child: Memory): void {
    const m = this.cow.get(parent);
    if (!m) return;
    const cm = new Map<VAddr, CowPage>();
    for (const [base, c] of m) {
      const r = child.regionAt(base);
      if (r && r.base === base && r.size === c.region.size) {
        cm.set(base, { region: r, file: c.file, fileOffset: c.fileOffset });
        this.origins?.set(r, { backing: c.file, offset: c.fileOffset });
      }
    }
    if (cm.size) this.cow.set(child, cm);
  }

  /** the address space is gone */
  forget(mm: Memory): void { this.cow.delete(mm); }

  /** private copies of an address space (listing: page state) */
  copies(mm: Memory): number { return this.cow.get(mm)?.size ?? 0; }
}
