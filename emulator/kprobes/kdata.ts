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

  alloc(size: number, align = 16): bigint {
    if (this.kernel.kmalloc) return this.kernel.kmalloc(size, align);
    if (this.base === 0n) this.mapArea();
    const a = BigInt(align);
    const start = (this.next + a - 1n) / a * a;
    if (start + BigInt(size) > this.end) throw new RangeError(`kprobes data area exhausted (${size} bytes requested)`);
    this.next = start + BigInt(size);
    return start;
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
