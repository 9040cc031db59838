/**
 * Load-time address checks of an ELF image: e_entry and every PT_LOAD
 * segment must fit the image's virtual address space, and LOAD segments may
 * not overlap. A failure is an ImageError naming the field and the segment,
 * reported when the file is read (not later, as an internal error of the
 * machine that maps it or jumps to it).
 *
 * Virtual address widths of the 64-bit architectures: an address is
 * canonical when bits 63..N-1 all equal bit N-1 (x86_64: 48-bit 4-level
 * paging, what the x86_64 CPU here enforces; aarch64: up to 52-bit VAs in
 * TTBR0/TTBR1; riscv64: up to Sv57). Machines not listed are only checked
 * for wrap-around.
 */
import { ElfSegment, ImageError } from './types';

const VA_BITS: Readonly<Record<string, number>> = { x86_64: 48, aarch64: 52, riscv64: 57 };
const PT_LOAD = 1;

function hex(v: bigint): string {
  return '0x' + v.toString(16);
}

/** Whether `addr` is canonical for an N-bit virtual address space (bits 63..N-1 equal). */
export function isCanonical(addr: bigint, vaBits: number): boolean {
  const top = addr >> BigInt(vaBits - 1);
  return top === 0n || top === (1n << BigInt(65 - vaBits)) - 1n;
}

function canonicalRule(arch: string, bits: number): string {
  return `not a canonical ${arch} address (bits 63..${bits - 1} must all equal bit ${bits - 1})`;
}

/** Throws ImageError for a bad e_entry or LOAD segment address range. */
export function checkAddresses(path: string, elfClass: 32 | 64, arch: string, entry: bigint, segments: readonly ElfSegment[]): void {
  const bits = elfClass === 64 ? VA_BITS[arch] : undefined;
  if (bits !== undefined && !isCanonical(entry, bits)) {
    throw new ImageError(path, `e_entry ${hex(entry)} is ${canonicalRule(arch, bits)}`);
  }
  const limit = 1n << BigInt(elfClass);
  const loads: { i: number; start: bigint; end: bigint }[] = [];
  segments.forEach((s, i) => {
    if (s.type !== PT_LOAD || s.memsz === 0n) return;
    const what = `segment ${i} (LOAD at p_vaddr ${hex(s.vaddr)}, p_memsz ${hex(s.memsz)})`;
    const end = s.vaddr + s.memsz;
    if (end > limit) throw new ImageError(path, `${what}: p_vaddr + p_memsz = ${hex(end)} wraps past the end of the ${elfClass}-bit address space`);
    if (bits !== undefined) {
      if (!isCanonical(s.vaddr, bits)) throw new ImageError(path, `${what}: p_vaddr is ${canonicalRule(arch, bits)}`);
      const last = end - 1n;
      if (!isCanonical(last, bits) || (last >> BigInt(bits - 1)) !== (s.vaddr >> BigInt(bits - 1))) {
        throw new ImageError(path, `${what}: its last byte ${hex(last)} is ${canonicalRule(arch, bits)} or in the other half of the address space`);
      }
    }
    loads.push({ i, start: s.vaddr, end });
  });
  loads.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  for (let k = 1; k < loads.length; k++) {
    const a = loads[k - 1], b = loads[k];
    if (b.start < a.end) {
      throw new ImageError(path, `LOAD segments ${a.i} [${hex(a.start)}, ${hex(a.end)}) and ${b.i} [${hex(b.start)}, ${hex(b.end)}) overlap`);
    }
  }
}
