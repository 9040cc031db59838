/**
 * The machine state the x86 64-bit boot protocol enters the kernel with
 * (Documentation/arch/x86/boot.rst, "64-bit Boot Protocol"): long mode with
 * paging on, an identity map covering the kernel, boot_params and the
 * command line (the loader's own page tables, 2 MiB pages over the first
 * 4 GiB), a GDT whose __BOOT_CS (0x10) is a flat 64-bit code segment and
 * __BOOT_DS (0x18) a flat data segment, interrupts off, %rsi = boot_params,
 * at the protected-mode kernel's load address + 0x200 (startup_64).
 * As plain data: the CPU's system half puts it in its registers.
 */

export const BOOT_CS = 0x10;
export const BOOT_DS = 0x18;
/** CR0 */
export const CR0_PE = 1n << 0n;
export const CR0_ET = 1n << 4n;
export const CR0_PG = 1n << 31n;
/** CR4 */
export const CR4_PAE = 1n << 5n;
/** EFER */
export const EFER_LME = 1n << 8n;
export const EFER_LMA = 1n << 10n;
/** the 64-bit entry's offset from the protected-mode kernel's load address */
export const STARTUP_64_OFFSET = 0x200;

/** A segment register as loaded from its descriptor. */
export interface SegmentState {
  readonly selector: number;
  readonly base: bigint;
  readonly limit: number;
  /** descriptor bits 40..55 as the SDM numbers them (type, S, DPL, P, AVL, L, D/B, G) shifted down by 40 */
  readonly attributes: number;
}

export interface Entry64State {
  readonly rip: bigint;
  readonly rsi: bigint;
  readonly rsp: bigint;
  readonly rflags: bigint;
  readonly cr0: bigint;
  readonly cr3: bigint;
  readonly cr4: bigint;
  readonly efer: bigint;
  readonly gdtr: { readonly base: bigint; readonly limit: number };
  readonly idtr: { readonly base: bigint; readonly limit: number };
  readonly cs: SegmentState;
  readonly ds: SegmentState;
  readonly es: SegmentState;
  readonly ss: SegmentState;
  readonly fs: SegmentState;
  readonly gs: SegmentState;
}

/** GDT descriptors: null, null, flat 64-bit code (L=1, DPL 0), flat 4 GiB data */
export const GDT_CODE64 = 0x00af9a000000ffffn;
export const GDT_DATA = 0x00cf92000000ffffn;

export function buildGdt(): Uint8Array {
  const g = new Uint8Array(4 * 8);
  const dv = new DataView(g.buffer);
  dv.setBigUint64(BOOT_CS, GDT_CODE64, true);
  dv.setBigUint64(BOOT_DS, GDT_DATA, true);
  return g;
}

const segment = (selector: number, desc: bigint): SegmentState => ({
  selector,
  base: 0n,
  limit: 0xffffffff,
  attributes: Number((desc >> 40n) & 0xf0ffn),
});

/** page-table entry bits */
const PTE_P = 1n, PTE_RW = 2n, PTE_PS = 0x80n;
export const IDENTITY_MAP_BYTES = 4 * 1024 * 1024 * 1024;

/**
 * The identity map: one PML4 page, one PDPT, four page directories of
 * 2 MiB pages; `base` is the PML4's physical address, the rest follow it.
 * Returns the six pages as one block.
 */
export function buildIdentityMap(base: number): Uint8Array {
  const pt = new Uint8Array(6 * 4096);
  const dv = new DataView(pt.buffer);
  const B = BigInt(base);
  dv.setBigUint64(0, (B + 0x1000n) | PTE_P | PTE_RW, true);
  for (let gib = 0; gib < 4; gib++) {
    const pd = 0x2000 + gib * 0x1000;
    dv.setBigUint64(0x1000 + gib * 8, (B + BigInt(pd)) | PTE_P | PTE_RW, true);
    for (let i = 0; i < 512; i++) {
      const phys = BigInt(gib) * 0x40000000n + BigInt(i) * 0x200000n;
      dv.setBigUint64(pd + i * 8, phys | PTE_P | PTE_RW | PTE_PS, true);
    }
  }
  return pt;
}

export function entry64(p: { loadAddress: number; bootParams: number; pageTables: number; gdt: number; stackTop: number }): Entry64State {
  const cs = segment(BOOT_CS, GDT_CODE64), ds = segment(BOOT_DS, GDT_DATA);
  return {
    rip: BigInt(p.loadAddress + STARTUP_64_OFFSET),
    rsi: BigInt(p.bootParams),
    rsp: BigInt(p.stackTop),
    rflags: 0x2n,
    cr0: CR0_PE | CR0_ET | CR0_PG,
    cr3: BigInt(p.pageTables),
    cr4: CR4_PAE,
    efer: EFER_LME | EFER_LMA,
    gdtr: { base: BigInt(p.gdt), limit: 4 * 8 - 1 },
    idtr: { base: 0n, limit: 0 },
    cs, ds, es: ds, ss: ds, fs: ds, gs: ds,
  };
}
