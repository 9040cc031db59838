/**
 * Where the running kernel is against the vmlinux it was linked as: with
 * KASLR (a command line without `nokaslr`) the decompressor moves the
 * kernel's virtual base by a multiple of CONFIG_PHYSICAL_ALIGN (2 MiB) in
 * the kernel image's 1 GiB window. The slide is read from the CPU: the IDT
 * register holds the address the kernel loaded its IDT at, which is one of
 * its own symbols (`bringup_idt_table` from early_setup_idt in
 * secondary_startup_64, then `idt_table`), so slide = IDTR base - that
 * symbol's link address. Undefined before the kernel has loaded an IDT of
 * its own.
 *
 * When: the Linux target looks at CPU 0's IDTR after every slice of the
 * run loop (pcRun.ts SLICE instructions) until it knows the slide. The IDT
 * load is the earliest point where the virtual slide is in a register: the
 * decompressor passes no virtual offset to the kernel proper, startup_64
 * runs identity-mapped, and the IDT startup_64 loads first is addressed
 * physically; secondary_startup_64 loads bringup_idt_table's virtual
 * address right after it switched to the kernel's high mapping, before
 * x86_64_start_kernel. Code that runs before the look (startup_64,
 * secondary_startup_64, early_setup_idt and at most one slice after it)
 * cannot stop at a breakpoint: the session says so once (kaslrNotice).
 *
 * Then the vmlinux is seen at the kernel's addresses (linuxSlide.ts
 * slidVmlinux) and the breakpoints set before are moved by the slide.
 */
import type { ElfImage } from '../elf/types';
import { KernelSlide, slidVmlinux } from './linuxSlide';

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

/** functions that run before the slide can be known (a breakpoint there cannot stop with KASLR) */
export const BEFORE_SLIDE = ['startup_64', 'secondary_startup_64', '__startup_64', 'startup_64_setup_env', 'verify_cpu', 'early_setup_idt', 'x86_64_start_kernel'];

/** the one line the session prints when the kernel runs relocated, naming the breakpoints that may not have stopped */
export function kaslrNotice(slide: bigint, vmlinuxPath: string, early: readonly string[]): string {
  const moved = `kprobe: the kernel runs relocated by KASLR, 0x${slide.toString(16)} above ${vmlinuxPath}'s link addresses (found when it loaded its IDT): symbols, breakpoints, frames, variables and the guest's lists now use the running kernel's addresses`;
  const lost = early.length ? `; code run before that cannot stop, so these breakpoints may have been passed: ${early.join(', ')}` : '';
  return `${moved}${lost}\n`;
}

/**
 * The vmlinux as the debugger sees it: as linked until the slide is known,
 * then at the running kernel's addresses (slidVmlinux). `follow` looks once
 * per call until it finds the slide; on a non-zero slide it tells `moved`
 * (which moves what was set at link addresses and returns the names of the
 * breakpoints that may have been passed) and keeps the notice to print.
 */
export class LinuxVmlinux {
  private runImage: ElfImage | undefined;
  private found: bigint | undefined;
  private notice = '';
  constructor(readonly linked: ElfImage | undefined) {}

  get image(): ElfImage | undefined { return this.runImage ?? this.linked; }
  get slide(): bigint | undefined { return this.found; }
  /** the line the session prints once the kernel runs relocated (empty without KASLR) */
  get message(): string { return this.notice; }

  /** the slide from CPU 0's IDT register base (undefined: not yet); found, the image is seen moved */
  follow(idtrBase: bigint | undefined, moved: (k: KernelSlide, beforeSlide: (linkAddr: bigint) => boolean) => string[]): bigint | undefined {
    if (this.found !== undefined || idtrBase === undefined) return this.found;
    this.found = kernelSlide(this.linked, idtrBase);
    if (this.found === undefined || this.found === 0n) return this.found;
    const linked = this.linked!;
    this.runImage = slidVmlinux(linked, this.found);
    const early = BEFORE_SLIDE.flatMap(n => { const s = linked.symbols.lookup(n); return s ? [s] : []; });
    const k = KernelSlide.of(linked, this.found);
    const missed = k ? moved(k, x => early.some(e => x >= e.value && x < e.value + (e.size || 1n))) : [];
    this.notice = kaslrNotice(this.found, linked.path, missed);
    return this.found;
  }
}
