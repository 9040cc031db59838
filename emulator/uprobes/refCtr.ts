/**
 * Uprobe reference counters (Linux kernel/events/uprobes.c: update_ref_ctr,
 * __update_ref_ctr, delayed_ref_ctr_inc), the semaphores of SDT markers
 * (USDT): a uprobe registered with a ref_ctr_offset, a file offset in the
 * same file, counts its breakpoints in each process. When the breakpoint
 * is written into an address space the 2-byte counter at that offset is
 * incremented in that space, when it is taken out (unregister, a filter
 * that no longer wants the process) decremented; a program tests the
 * counter to know whether anyone is tracing it.
 *
 * The counter lives in a private writable mapping of the file (Linux's
 * valid_ref_ctr_vma: the same inode, VM_WRITE without VM_SHARED, covering
 * the offset): the program's data segment, or a private writable mmap of
 * the file. When the breakpoint goes in before such a mapping exists the
 * increment waits (the delayed_uprobe list) and is made when the mapping
 * comes (uprobe_mmap's delayed_ref_ctr_inc); a breakpoint removed before
 * that forgets it, as does the end of the address space.
 *
 * A counter that would go below 0 is left alone with Linux's warning; a
 * counter that cannot be written is warned about too (update_ref_ctr_warn)
 * and the breakpoint stays, as on Linux.
 */
import type { Kernel } from '../kernel/kernel';
import type { UserProcess } from '../kernel/user/process';
import { PERM_W, type Memory, type Region } from '../memory/memory';
import { mustVAddr } from '../memory/address';
import type { Uprobe } from './uprobe';

const PT_LOAD = 1;
const PF_W = 2;

/** struct delayed_uprobe: an increment waiting for the counter's mapping */
interface Delayed { readonly uprobe: Uprobe; readonly mm: Memory }

export class RefCtrs {
  private readonly delayed: Delayed[] = [];

  constructor(private readonly kernel: Kernel) {}

  /** update_ref_ctr: the counter of `u` in proc's space by d (+1 / -1) */
  update(u: Uprobe, proc: UserProcess, d: 1 | -1): void {
    if (!u.refCtrOffset) return;
    const vaddr = this.counterAddress(u, proc);
    if (vaddr !== undefined) {
      if (!this.add(proc.mm, vaddr, d)) this.warn(u, proc, d);
      if (d > 0) return;
    }
    if (d > 0) this.delayed.push({ uprobe: u, mm: proc.mm });
    else this.forget(u, proc.mm);
  }

  /** delayed_ref_ctr_inc: a mapping appeared in proc's space; the increments waiting for it are made */
  mapped(proc: UserProcess): void {
    for (let i = 0; i < this.delayed.length;) {
      const du = this.delayed[i];
      const vaddr = du.mm === proc.mm ? this.counterAddress(du.uprobe, proc) : undefined;
      if (vaddr === undefined) { i++; continue; }
      if (!this.add(proc.mm, vaddr, 1)) this.warn(du.uprobe, proc, 1);
      this.delayed.splice(i, 1);
    }
  }

  /** delayed_uprobe_remove: of one uprobe and/or one address space (undefined: any) */
  forget(u: Uprobe | undefined, mm: Memory | undefined): void {
    for (let i = this.delayed.length - 1; i >= 0; i--) {
      const du = this.delayed[i];
      if ((u === undefined || du.uprobe === u) && (mm === undefined || du.mm === mm)) this.delayed.splice(i, 1);
    }
  }

  /** increments waiting in an address space (tests, the listing) */
  pending(mm: Memory): number { return this.delayed.filter(d => d.mm === mm).length; }

  /**
   * find_ref_ctr_vma + offset_to_vaddr: where proc's space holds the
   * counter, in a private writable mapping of u's file: a writable PT_LOAD
   * segment of the executable it runs (the file's bytes there), or a
   * mapping the kernel records as a window of that file (a private mmap).
   */
  counterAddress(u: Uprobe, proc: UserProcess): bigint | undefined {
    const off = u.refCtrOffset;
    const mm = proc.mm;
    if (proc.exe === u.inode) {
      for (const s of proc.image.segments) {
        if (s.type !== PT_LOAD || (s.flags & PF_W) === 0 || off < s.offset || off + 2n > s.offset + s.filesz) continue;
        const vaddr = s.vaddr + (off - s.offset);
        if (this.privateWritable(proc, mm.regionAt(mustVAddr(vaddr)))) return vaddr;
      }
    }
    const pages = u.inode.pages();
    for (const r of mm.allRegions()) {
      const origin = this.kernel.mapOrigins.get(r);
      if (!origin || origin.backing !== pages || !this.privateWritable(proc, r)) continue;
      const at = Number(off) - origin.offset;
      if (at >= 0 && at + 2 <= r.size) return BigInt(r.base + at);
    }
    return undefined;
  }

  /** (vm_flags & (VM_WRITE|VM_SHARED)) == VM_WRITE, and the bytes the process's own */
  private privateWritable(proc: UserProcess, r: Region | undefined): r is Region {
    return r !== undefined && (r.perms & PERM_W) !== 0 && !proc.shared.has(r) && r.backing.identity.kind !== 'file';
  }

  /** __update_ref_ctr: the short at vaddr += d; false when it cannot be (unmapped, or it would go below 0) */
  private add(mm: Memory, vaddr: bigint, d: 1 | -1): boolean {
    const v = mustVAddr(vaddr);
    let b: Uint8Array;
    try { b = mm.readBytes(v, 2); } catch { return false; }
    const cur = (b[0] | (b[1] << 8)) << 16 >> 16;
    if (cur + d < 0) {
      this.kernel.warn(-1, `ref_ctr going negative. vaddr: 0x${vaddr.toString(16)}, curr val: ${cur}, delta: ${d}`);
      return false;
    }
    const n = (cur + d) & 0xffff;
    try { mm.writeBytes(v, Uint8Array.of(n & 0xff, n >> 8), 'kernel'); } catch { return false; }
    return true;
  }

  /** update_ref_ctr_warn */
  private warn(u: Uprobe, proc: UserProcess, d: 1 | -1): void {
    this.kernel.warn(-1, `ref_ctr ${d > 0 ? 'increment' : 'decrement'} failed for inode: 0x${u.inode.ino.toString(16)} offset: 0x${u.offset.toString(16)} `
      + `ref_ctr_offset: 0x${u.refCtrOffset.toString(16)} of mm: ${proc.comm}[${proc.pid}]`);
  }
}
