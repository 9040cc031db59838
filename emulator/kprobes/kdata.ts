/**
 * Writable kernel data for the engine (kretprobe instance data): the
 * kernel's kmalloc when it offers one, else a data area the engine maps
 * itself just below the exec area.
 */
import type { KernelApi } from '../kernel/types';
import { mustVAddr } from '../memory/address';
import { PERM_R, PERM_W } from '../memory/memory';

const AREA_SIZE = 1 << 20;

export class KernelData {
  private base = 0n;
  private next = 0n;
  private end = 0n;

  constructor(private readonly kernel: KernelApi) {}

  /** blocks given back (free), reused first-fit */
  private readonly freed: { addr: bigint; size: number }[] = [];

  alloc(size: number, align = 16): bigint {
    const a = this.tryAlloc(size, align);
    if (a === null) throw new RangeError(`kprobes data area exhausted (${size} bytes requested)`);
    return a;
  }

  /** alloc, or null when there is no room (kmalloc failing: the caller returns -ENOMEM) */
  tryAlloc(size: number, align = 16): bigint | null {
    if (!Number.isSafeInteger(size) || size < 0 || !Number.isSafeInteger(align) || align <= 0) return null;
    if (this.kernel.kmalloc) {
      try { return this.kernel.kmalloc(size, align); } catch { return null; }
    }
    const a = BigInt(align);
    for (let i = 0; i < this.freed.length; i++) {
      const f = this.freed[i];
      if (f.size >= size && f.addr % a === 0n) {
        this.freed.splice(i, 1);
        this.zero(f.addr, size);
        return f.addr;
      }
    }
    if (this.base === 0n) {
      try { this.mapArea(); } catch { return null; }
    }
    const start = (this.next + a - 1n) / a * a;
    if (start + BigInt(size) > this.end) return null;
    this.next = start + BigInt(size);
    return start;
  }

  /**
   * Give a block back (a registration that failed after allocating). With
   * the kernel's kmalloc (no kfree in KernelApi) the block is simply kept.
   */
  free(addr: bigint, size: number): void {
    if (this.kernel.kmalloc || this.base === 0n || addr < this.base || addr >= this.end) return;
    if (addr + BigInt(size) === this.next) this.next = addr;
    else this.freed.push({ addr, size });
  }

  private zero(addr: bigint, size: number): void {
    if (size > 0) this.kernel.mem.writeBytes(mustVAddr(addr), new Uint8Array(size));
  }

  private mapArea(): void {
    const mem = this.kernel.mem;
    for (let i = 1; i <= 64; i++) {
      const cand = this.kernel.layout.execArea - BigInt(i) * 0x1000000n;
      const v = mustVAddr(cand);
      if (mem.allRegions().some(r => v < r.end && r.base < v + AREA_SIZE)) continue;
      mem.map(v, AREA_SIZE, PERM_R | PERM_W, 'kprobes-data');
      this.base = this.next = cand;
      this.end = cand + BigInt(AREA_SIZE);
      return;
    }
    throw new RangeError('kprobes: no room for the data area below the exec area');
  }
}
