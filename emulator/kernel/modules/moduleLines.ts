/**
 * Source lines of loaded modules: a module's .debug_line (with the
 * .debug_info / .debug_str / .debug_line_str it refers to) relocated for
 * where its sections were placed, so that its rows carry the module's real
 * addresses; and the kernel's line table with the modules' added
 * (CompositeLines, installed as the image's `lines` next to kallsyms), so
 * that breakpoints in a module's C source, stack frames in module code and
 * the source of probes there are found like the kernel's own.
 */
import type { ElfImage, ElfSection, LineRow, LineTable } from '../../elf/types';
import { parseDebugLine } from '../../elf/dwarf/debugLine';
import { readCompDirs } from '../../elf/dwarf/compDirs';
import type { ArchModuleRelocs } from './relocations';
import type { RelObject } from './object';

const SHF_ALLOC = 2n;

/** The module's line table at its load addresses (null without .debug_line, or when it cannot be read). */
export function moduleLineTable(obj: RelObject, relocs: ArchModuleRelocs, values: readonly bigint[]): LineTable | null {
  const byName = new Map(obj.sections.map(s => [s.name, s] as const));
  const line = byName.get('.debug_line');
  if (!line) return null;
  // debug sections are at address 0 of their own space: a symbol in one is its offset there
  const symValue = (i: number): bigint => {
    const s = obj.symbols[i];
    const sec: ElfSection | undefined = obj.sections[s.shndx];
    return sec && (sec.flags & SHF_ALLOC) === 0n ? s.value : values[i];
  };
  const get = (name: string): Uint8Array | undefined => {
    const s = byName.get(name);
    if (!s) return undefined;
    const bytes = s.data.slice();
    const relas = obj.debugRelas.get(s.index);
    if (relas) {
      const err = relocs.applyRelocateAdd({ bytes, addr: 0n, name: s.name }, relas, symValue);
      if (err) throw new Error(err);
    }
    return bytes;
  };
  try {
    const info = get('.debug_info'), abbrev = get('.debug_abbrev'), str = get('.debug_str'), lineStr = get('.debug_line_str');
    const compDirs = readCompDirs({ info, abbrev, str, lineStr }, true);
    return parseDebugLine({ line: get('.debug_line') as Uint8Array, str, lineStr }, { little: true, file: obj.path, compDirs, addressSize: 8 });
  } catch {
    return null;
  }
}

/**
 * The module's debug information at its load addresses, as an image the
 * DWARF readers take (emulator/debug/variables.ts: a frame's arguments and
 * locals in module code): the kernel image with the module's .debug_*
 * sections, relocated as for its line table. Undefined without
 * .debug_info, or when a relocation fails.
 */
export function moduleDebugImage(kernelImage: ElfImage, obj: RelObject, relocs: ArchModuleRelocs, values: readonly bigint[]): ElfImage | undefined {
  const byName = new Map(obj.sections.filter(s => s.name.startsWith('.debug_')).map(s => [s.name, s] as const));
  if (!byName.has('.debug_info')) return undefined;
  const symValue = (i: number): bigint => {
    const s = obj.symbols[i];
    const sec: ElfSection | undefined = obj.sections[s.shndx];
    return sec && (sec.flags & SHF_ALLOC) === 0n ? s.value : values[i];
  };
  const relocated = new Map<string, ElfSection>();
  for (const [name, s] of byName) {
    const bytes = s.data.slice();
    const relas = obj.debugRelas.get(s.index);
    if (relas && relocs.applyRelocateAdd({ bytes, addr: 0n, name }, relas, symValue)) return undefined;
    relocated.set(name, { ...s, flags: s.flags, data: bytes });
  }
  const image = Object.create(kernelImage) as ElfImage & { section(name: string): ElfSection | undefined };
  image.section = (name: string): ElfSection | undefined => relocated.get(name);
  return image;
}

/** The kernel's line table plus the loaded modules' (each covering its own address ranges). */
export class CompositeLines implements LineTable {
  private readonly mods: { name: string; table: LineTable; lo: bigint; hi: bigint }[] = [];

  constructor(readonly base: LineTable | null) {}

  add(name: string, table: LineTable, ranges: readonly { lo: bigint; hi: bigint }[]): void {
    for (const r of ranges) this.mods.push({ name, table, lo: r.lo, hi: r.hi });
  }
  /** forget a module's lines in one range (its freed init code) or all of them */
  remove(name: string, range?: { lo: bigint; hi: bigint }): void {
    for (let i = this.mods.length - 1; i >= 0; i--) {
      const m = this.mods[i];
      if (m.name === name && (!range || (m.lo === range.lo && m.hi === range.hi))) this.mods.splice(i, 1);
    }
  }

  private tables(): LineTable[] {
    const out: LineTable[] = this.base ? [this.base] : [];
    for (const m of this.mods) if (!out.includes(m.table)) out.push(m.table);
    return out;
  }

  addressesForLine(file: string, line: number): bigint[] {
    const out = this.base ? this.base.addressesForLine(file, line) : [];
    const seen = new Set<LineTable>();
    for (const m of this.mods) {
      if (seen.has(m.table)) continue;
      seen.add(m.table);
      // a module's addresses where its memory is live (not its freed init code)
      const ranges = this.mods.filter(x => x.table === m.table);
      out.push(...m.table.addressesForLine(file, line).filter(a => ranges.some(r => a >= r.lo && a < r.hi)));
    }
    return out;
  }

  lineForAddress(addr: bigint): { file: string; line: number; column: number } | undefined {
    const m = this.mods.find(x => addr >= x.lo && addr < x.hi);
    return m ? m.table.lineForAddress(addr) : this.base?.lineForAddress(addr);
  }

  nextLineWithCode(file: string, line: number): number | undefined {
    let best: number | undefined;
    for (const t of this.tables()) {
      const n = t.nextLineWithCode(file, line);
      if (n !== undefined && (best === undefined || n < best)) best = n;
    }
    return best;
  }

  files(): string[] { return [...new Set(this.tables().flatMap(t => t.files()))]; }
  rows(): readonly LineRow[] { return this.tables().flatMap(t => t.rows()); }
  fileOf(unit: number, index: number): string | undefined { return this.base?.fileOf?.(unit, index); }
}
