/**
 * Module relocation (Linux arch/<arch>/kernel/module.c apply_relocate_add):
 * the arch half. The loader (loader.ts) lays a relocatable object's
 * sections out in the module area, resolves its symbols, and hands each
 * SHT_RELA section to the arch's applyRelocateAdd with the final address
 * of the section it patches. Each port implements the relocation types its
 * compilers emit for kernel code (x86_64 -mcmodel=kernel, aarch64 small /
 * large code models, riscv64 medany with -mno-relax), naming any other type
 * in the error.
 */

/** One Elf64_Rela entry. */
export interface Rela {
  /** r_offset: offset in the patched section */
  readonly offset: bigint;
  /** ELF64_R_TYPE */
  readonly type: number;
  /** ELF64_R_SYM: index in the object's symbol table */
  readonly sym: number;
  readonly addend: bigint;
}

/** The section a relocation section patches, at its final place. */
export interface RelocTarget {
  /** the section's bytes as they will be copied to the module area (patched in place) */
  readonly bytes: Uint8Array;
  /** the section's final address (P = addr + r_offset) */
  readonly addr: bigint;
  /** section name, for messages */
  readonly name: string;
}

export interface ArchModuleRelocs {
  readonly arch: string;
  /** R_<ARCH>_<NAME> of a type number, for messages ("R_X86_64_PC32"; unknown: "type 42") */
  typeName(type: number): string;
  /**
   * apply_relocate_add: patch every relocation of one section. symValue(i)
   * is symbol i's final address (S). Returns undefined when all applied, or
   * the error text naming the first relocation that cannot be (unsupported
   * type, value out of range, misaligned), with its offset.
   */
  applyRelocateAdd(target: RelocTarget, relas: readonly Rela[], symValue: (sym: number) => bigint): string | undefined;
}

/** Little-endian field writers for the ports. */
export function put32(b: Uint8Array, off: number, v: number): void {
  b[off] = v & 0xff; b[off + 1] = (v >>> 8) & 0xff; b[off + 2] = (v >>> 16) & 0xff; b[off + 3] = (v >>> 24) & 0xff;
}
export function get32(b: Uint8Array, off: number): number {
  return (b[off] | (b[off + 1] << 8) | (b[off + 2] << 16) | (b[off + 3] << 24)) >>> 0;
}
export function put16(b: Uint8Array, off: number, v: number): void {
  b[off] = v & 0xff; b[off + 1] = (v >>> 8) & 0xff;
}
export function get16(b: Uint8Array, off: number): number {
  return b[off] | (b[off + 1] << 8);
}
export function put64(b: Uint8Array, off: number, v: bigint): void {
  const u = BigInt.asUintN(64, v);
  put32(b, off, Number(u & 0xffffffffn));
  put32(b, off + 4, Number(u >> 32n));
}
/** whether v fits a signed field of `bits` bits */
export function fitsSigned(v: bigint, bits: number): boolean {
  const lim = 1n << BigInt(bits - 1);
  return v >= -lim && v < lim;
}
/** whether v fits an unsigned field of `bits` bits */
export function fitsUnsigned(v: bigint, bits: number): boolean {
  return v >= 0n && v < (1n << BigInt(bits));
}
