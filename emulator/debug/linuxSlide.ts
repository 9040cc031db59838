/**
 * The vmlinux as the running kernel has it: with KASLR the decompressor
 * moved the kernel's virtual base (linuxKaslr.ts finds by how much), and
 * everything the debugger takes from the vmlinux — symbols, the line
 * table, section addresses (the ORC tables), the DWARF's addresses
 * (functions' ranges, location lists by pc, globals' DW_OP_addr) — must
 * be moved the same way. This is the one place that happens: slidVmlinux
 * makes an ElfImage view of the vmlinux at its run-time addresses, and the
 * Linux target hands that view to every reader (breakpoints, frames,
 * variables, the guest readers, the agent) once the slide is known.
 *
 * Only what the kernel's relocation moves is moved: addresses in the
 * image, [_text, _end) as linked. The per-CPU symbols (zero-based offsets
 * into each CPU's area) and absolute symbols outside the image stay.
 */
import type { ElfImage, ElfSection, ElfSegment, ElfSymbol, LineTable, SymbolTable } from '../elf/types';
import type { AddressRelocation } from '../elf/dwarf/relocate';
import { relocatedDebugInfo } from '../elf/dwarf/info';
import { hex } from '../memory/address';

/** the kernel image's move by KASLR: [lo, hi) as linked runs at [lo + slide, hi + slide) */
export class KernelSlide implements AddressRelocation {
  constructor(readonly slide: bigint, readonly lo: bigint, readonly hi: bigint) {}

  /** the image's range as linked from its _text / _end symbols; undefined when the vmlinux lacks them */
  static of(vmlinux: ElfImage, slide: bigint): KernelSlide | undefined {
    const lo = vmlinux.symbols.lookup('_text')?.value, hi = vmlinux.symbols.lookup('_end')?.value;
    return lo === undefined || hi === undefined || hi <= lo ? undefined : new KernelSlide(slide, lo, hi);
  }

  linked(a: bigint): boolean { return a >= this.lo && a < this.hi; }
  running(a: bigint): boolean { return a >= this.lo + this.slide && a < this.hi + this.slide; }
  toRuntime(a: bigint): bigint { return this.linked(a) ? a + this.slide : a; }
  toLink(a: bigint): bigint { return this.running(a) ? a - this.slide : a; }
}

function movedSymbol(s: ElfSymbol, k: KernelSlide): ElfSymbol {
  return k.linked(s.value) ? { ...s, value: s.value + k.slide } : s;
}

class SlidSymbols implements SymbolTable {
  private byName = new Map<string, ElfSymbol | undefined>();
  private fns: readonly ElfSymbol[] | undefined;
  private everything: readonly ElfSymbol[] | undefined;
  constructor(private readonly base: SymbolTable, private readonly k: KernelSlide) {}
  get count(): number { return this.base.count; }
  lookup(name: string): ElfSymbol | undefined {
    if (this.byName.has(name)) return this.byName.get(name);
    const s = this.base.lookup(name);
    const m = s && movedSymbol(s, this.k);
    this.byName.set(name, m);
    return m;
  }
  resolve(addr: bigint): { sym: ElfSymbol; offset: bigint } | undefined {
    // the image's link range is not the running kernel's (unless the slide overlaps it): nothing there to name
    if (!this.k.running(addr) && this.k.linked(addr)) return undefined;
    const r = this.base.resolve(this.k.toLink(addr));
    return r && { sym: movedSymbol(r.sym, this.k), offset: r.offset };
  }
  format(addr: bigint, withSize = true): string {
    const r = this.resolve(addr);
    if (!r) return hex(addr);
    const s = `${r.sym.name}+${hex(r.offset)}`;
    return withSize && r.sym.size > 0n ? `${s}/${hex(r.sym.size)}` : s;
  }
  functions(): readonly ElfSymbol[] { return (this.fns ??= this.base.functions().map(s => movedSymbol(s, this.k))); }
  all(): readonly ElfSymbol[] { return (this.everything ??= this.base.all().map(s => movedSymbol(s, this.k))); }
}

class SlidLines implements LineTable {
  constructor(private readonly base: LineTable, private readonly k: KernelSlide) {}
  addressesForLine(file: string, line: number): bigint[] { return this.base.addressesForLine(file, line).map(a => this.k.toRuntime(a)); }
  lineForAddress(addr: bigint): { file: string; line: number; column: number } | undefined {
    if (!this.k.running(addr) && this.k.linked(addr)) return undefined;
    return this.base.lineForAddress(this.k.toLink(addr));
  }
  nextLineWithCode(file: string, line: number): number | undefined { return this.base.nextLineWithCode(file, line); }
  files(): string[] { return this.base.files(); }
  rows(): readonly import('../elf/types').LineRow[] { return this.base.rows().map(r => ({ ...r, address: this.k.toRuntime(r.address) })); }
  fileOf(unit: number, index: number): string | undefined { return this.base.fileOf?.(unit, index); }
}

const views = new WeakMap<ElfImage, Map<bigint, ElfImage>>();

/**
 * The vmlinux at the running kernel's addresses (the vmlinux itself for a
 * slide of 0, or when it has no _text / _end to bound the move). One view
 * per vmlinux and slide, so the caches keyed on an image (ORC tables,
 * DWARF) are built once.
 */
export function slidVmlinux(vmlinux: ElfImage, slide: bigint): ElfImage {
  if (slide === 0n) return vmlinux;
  const k = KernelSlide.of(vmlinux, slide);
  if (!k) return vmlinux;
  let per = views.get(vmlinux);
  if (!per) views.set(vmlinux, per = new Map());
  const had = per.get(slide);
  if (had) return had;
  const section = (s: ElfSection): ElfSection => (k.linked(s.addr) ? { ...s, addr: s.addr + slide } : s);
  const segment = (s: ElfSegment): ElfSegment => (k.linked(s.vaddr) ? { ...s, vaddr: s.vaddr + slide } : s);
  let sections: ElfSection[] | undefined;
  let lines: LineTable | null | undefined;
  const view: ElfImage = {
    path: vmlinux.path,
    elfClass: vmlinux.elfClass,
    endian: vmlinux.endian,
    machine: vmlinux.machine,
    archName: vmlinux.archName,
    type: vmlinux.type,
    entry: k.toRuntime(vmlinux.entry),
    segments: vmlinux.segments.map(segment),
    get sections(): ElfSection[] { return (sections ??= vmlinux.sections.map(section)); },
    symbols: new SlidSymbols(vmlinux.symbols, k),
    get lines(): LineTable | null {
      if (lines === undefined) { const l = vmlinux.lines; lines = l ? new SlidLines(l, k) : null; }
      return lines;
    },
    section(name: string): ElfSection | undefined { const s = vmlinux.section(name); return s && section(s); },
  };
  relocatedDebugInfo(view, vmlinux, k);
  per.set(slide, view);
  return view;
}
