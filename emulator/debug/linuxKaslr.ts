/**
 * Where the running kernel is against the vmlinux it was linked as: with
 * KASLR (a command line without `nokaslr`) the decompressor moves the
 * kernel's virtual base by a multiple of CONFIG_PHYSICAL_ALIGN (2 MiB) in
 * the kernel image's 1 GiB window. The slide is read from the CPU: the IDT
 * register holds the address the kernel loaded its IDT at, which is one of
 * its own symbols (`bringup_idt_table` from startup_64, then `idt_table`),
 * so slide = IDTR base - that symbol's link address. Undefined before the
 * kernel has loaded an IDT of its own.
 *
 * The debugger's symbols, breakpoints, frames and variables use the
 * vmlinux's link addresses: LinuxSession says so once when the slide is not
 * 0 (launch with `nokaslr`, the default command line, to use them).
 */
import type { ElfImage } from '../elf/types';

const ALIGN = 0x200000n;
const WINDOW = 0x40000000n;

/** the kernel's virtual slide from the IDT register's base, or undefined (no IDT of the kernel's yet, no vmlinux) */
export function kernelSlide(vmlinux: ElfImage | undefined, idtrBase: bigint): bigint | undefined {
  if (!vmlinux || idtrBase < 0xffffffff80000000n) return undefined;
  for (const name of ['idt_table', 'bringup_idt_table']) {
    const s = vmlinux.symbols.lookup(name);
    if (!s) continue;
    const slide = idtrBase - s.value;
    if (slide >= 0n && slide < WINDOW && slide % ALIGN === 0n) return slide;
  }
  return undefined;
}

/** the IDT register's base from the Registers scope's `idtr` row (`0x… limit 0x…`) */
export function idtrBaseOf(rows: readonly { name: string; value: string }[]): bigint | undefined {
  const r = rows.find(x => x.name === 'idtr');
  const m = r ? /^(0x[0-9a-f]+)/.exec(r.value) : null;
  return m ? BigInt(m[1]) : undefined;
}
