/**
 * The kernel image's exported symbols (Linux's __ksymtab / __ksymtab_gpl,
 * kernel/module/main.c find_symbol): what EXPORT_SYMBOL(sym) and
 * EXPORT_SYMBOL_GPL(sym) of examples/kernel/kernel.h record, one
 * struct kernel_symbol {unsigned long value; const char *name;} (16 bytes,
 * LP64) per export, the names in __ksymtab_strings.
 *
 * An image that has neither section exports nothing explicitly: the module
 * loader then lets modules use every global function and object of the
 * image (the behaviour before exports existed, kept for images written
 * without kernel.h's macros). `readKsymtab` returns null for such an image.
 *
 * GPL-only exports are offered to a module only when its MODULE_LICENSE is
 * GPL-compatible (Linux's license_is_gpl_compatible); a module without a
 * license is proprietary, as in Linux. Other modules get "Unknown symbol".
 */
import type { ElfImage } from '../../elf/types';

export const KSYMTAB_SECTION = '__ksymtab';
export const KSYMTAB_GPL_SECTION = '__ksymtab_gpl';
const KERNEL_SYMBOL_SIZE = 16;

export interface KernelExport {
  readonly name: string;
  readonly value: bigint;
  /** from EXPORT_SYMBOL_GPL */
  readonly gplOnly: boolean;
}

/** the image's exports by name, or null when the image has no __ksymtab / __ksymtab_gpl (every global is usable) */
export function readKsymtab(image: ElfImage): ReadonlyMap<string, KernelExport> | null {
  const plain = image.section(KSYMTAB_SECTION);
  const gpl = image.section(KSYMTAB_GPL_SECTION);
  if (!plain && !gpl) return null;
  const out = new Map<string, KernelExport>();
  for (const [sec, gplOnly] of [[plain, false], [gpl, true]] as const) {
    if (!sec) continue;
    const dv = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength);
    for (let off = 0; off + KERNEL_SYMBOL_SIZE <= dv.byteLength; off += KERNEL_SYMBOL_SIZE) {
      const value = dv.getBigUint64(off, true);
      const name = cStringAt(image, dv.getBigUint64(off + 8, true));
      if (name) out.set(name, { name, value, gplOnly });
    }
  }
  return out;
}

/** the NUL-terminated string at a virtual address of the image's file-backed sections ('' when none) */
function cStringAt(image: ElfImage, addr: bigint): string {
  const s = image.sections.find(x => x.addr !== 0n && addr >= x.addr && addr < x.addr + BigInt(x.data.length));
  if (!s) return '';
  const start = Number(addr - s.addr);
  let end = start;
  while (end < s.data.length && s.data[end] !== 0) end++;
  return new TextDecoder().decode(s.data.subarray(start, end));
}

/** Linux's license_is_gpl_compatible (include/linux/license.h) */
export function licenseIsGplCompatible(license: string | undefined): boolean {
  return license !== undefined && ['GPL', 'GPL v2', 'GPL and additional rights', 'Dual BSD/GPL', 'Dual MIT/GPL', 'Dual MPL/GPL'].includes(license);
}
