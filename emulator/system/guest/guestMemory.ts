/**
 * The guest kernel's virtual memory read from the host side: a 4-level
 * x86_64 page-table walk (4 KiB, 2 MiB and 1 GiB pages) over the machine's
 * physical memory, from the kernel's own top-level table (`init_top_pgt`,
 * whose upper half every process's table shares) or a CR3 the caller gives.
 *
 * Where the kernel sits physically: the vmlinux links `_text` at
 * __START_KERNEL_map + LOAD_PHYSICAL_ADDR; a boot loader may put it
 * elsewhere (phys_base). findKernel() reads the actual place: the physical
 * copy of `linux_banner` at 2 MiB-aligned shifts from the link-time one
 * (the kernel moves itself only by whole 2 MiB steps), so a kernel loaded
 * away from its link address is found too. A virtual KASLR shift is the
 * symbols' business: the debugger gives the readers the vmlinux seen at the
 * running kernel's addresses (emulator/debug/linuxSlide.ts), so
 * linux_banner and init_top_pgt already name where the kernel runs; a
 * vmlinux at the wrong addresses finds no banner and says so.
 *
 * Nothing here writes; a read of an address no table maps is a
 * GuestReadError naming the address, never a host exception.
 */
import type { Memory } from '../../memory/memory';

/** x86_64's kernel text mapping base (arch/x86/include/asm/page_64_types.h) */
export const START_KERNEL_MAP = 0xffffffff80000000n;
const PTE_P = 1n, PTE_PS = 0x80n;
const ADDR_MASK = 0x000ffffffffff000n;

export class GuestReadError extends Error {
  constructor(readonly addr: bigint, why: string) {
    super(`guest address 0x${addr.toString(16)}: ${why}`);
  }
}

/** What the reader needs of the vmlinux: symbol addresses by name. */
export interface KernelSymbols {
  addressOf(name: string): bigint | undefined;
}

export interface KernelPlace {
  /** physical address of the top-level page table the walk starts from */
  readonly pgd: bigint;
  /** phys_base: the physical shift of the kernel image from its link address */
  readonly physBase: bigint;
}

/**
 * Find the kernel in physical memory: the shift at which `linux_banner`'s
 * bytes ("Linux version ") are, and from it `init_top_pgt`'s physical address.
 */
export function findKernel(phys: Memory, syms: KernelSymbols): KernelPlace {
  const banner = syms.addressOf('linux_banner');
  const pgd = syms.addressOf('init_top_pgt');
  if (banner === undefined || pgd === undefined) throw new Error('the vmlinux has no linux_banner / init_top_pgt symbol: not an x86_64 Linux vmlinux');
  const want = 'Linux version ';
  const atLink = banner - START_KERNEL_MAP;
  for (let shift = 0n; shift < 0x40000000n; shift += 0x200000n) {
    for (const p of shift === 0n ? [atLink] : [atLink + shift, atLink - shift]) {
      if (p < 0n || !phys.isMapped(Number(p), want.length)) continue;
      if (new TextDecoder('latin1').decode(phys.readBytes(Number(p), want.length)) === want) {
        const physBase = p - atLink;
        return { pgd: pgd - START_KERNEL_MAP + physBase, physBase };
      }
    }
  }
  throw new Error('the guest memory holds no copy of the vmlinux\'s linux_banner: another kernel, or one not booted yet');
}

export class GuestMemory {
  /** 4 KiB virtual page -> physical page, for one snapshot of the tables (clear() when the guest ran) */
  private readonly tlb = new Map<bigint, bigint>();

  constructor(readonly phys: Memory, readonly place: KernelPlace, private readonly top: bigint = place.pgd) {}

  /** the same physical memory walked from another top-level table (a process's CR3) */
  withTop(cr3: bigint): GuestMemory { return new GuestMemory(this.phys, this.place, cr3 & ADDR_MASK); }

  /** forget cached translations (the guest may have changed its tables since) */
  clear(): void { this.tlb.clear(); }

  private entry(table: bigint, index: bigint, va: bigint): bigint {
    const a = Number(table + index * 8n);
    if (!this.phys.isMapped(a, 8)) throw new GuestReadError(va, `its page table at physical 0x${a.toString(16)} is outside RAM`);
    return this.phys.read64(a);
  }

  /** the physical address of a virtual one, or a GuestReadError */
  translate(va: bigint): bigint {
    const page = va & ~0xfffn;
    const hit = this.tlb.get(page);
    if (hit !== undefined) return hit | (va & 0xfffn);
    let table = this.top;
    let base = 0n;
    for (let level = 3; level >= 0; level--) {
      const shift = 12n + 9n * BigInt(level);
      const e = this.entry(table, (va >> shift) & 0x1ffn, va);
      if ((e & PTE_P) === 0n) throw new GuestReadError(va, 'not mapped');
      if (level === 0 || (level <= 2 && (e & PTE_PS) !== 0n)) {
        const size = 1n << shift;
        base = (e & ADDR_MASK & ~(size - 1n)) | (page & (size - 1n));
        break;
      }
      table = e & ADDR_MASK;
    }
    this.tlb.set(page, base);
    return base | (va & 0xfffn);
  }

  bytes(va: bigint, len: number): Uint8Array {
    const out = new Uint8Array(len);
    let done = 0;
    while (done < len) {
      const a = va + BigInt(done);
      const n = Math.min(len - done, 0x1000 - Number(a & 0xfffn));
      const p = Number(this.translate(a));
      if (!this.phys.isMapped(p, n)) throw new GuestReadError(a, `physical 0x${p.toString(16)} is outside RAM`);
      out.set(this.phys.readBytes(p, n), done);
      done += n;
    }
    return out;
  }

  u64(va: bigint): bigint { return new DataView(this.bytes(va, 8).buffer).getBigUint64(0, true); }
  u32(va: bigint): number { return new DataView(this.bytes(va, 4).buffer).getUint32(0, true); }
  i32(va: bigint): number { return new DataView(this.bytes(va, 4).buffer).getInt32(0, true); }
  u16(va: bigint): number { return new DataView(this.bytes(va, 2).buffer).getUint16(0, true); }
  u8(va: bigint): number { return this.bytes(va, 1)[0]; }

  /** a NUL-terminated string of at most max bytes */
  cstring(va: bigint, max = 256): string {
    let s = '';
    for (let i = 0; i < max; i++) {
      const b = this.u8(va + BigInt(i));
      if (b === 0) break;
      s += String.fromCharCode(b);
    }
    return s;
  }
}
