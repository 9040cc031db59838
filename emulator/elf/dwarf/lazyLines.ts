/**
 * The line table of a big image (a vmlinux: thousands of line-table units,
 * tens of millions of rows) read per unit, on demand. Only the units' headers
 * are read up front (their file tables: which unit names which source file);
 * a unit's line program runs the first time a query needs it:
 *  - address -> line: the unit holding the address comes from .debug_info
 *    (through .debug_aranges; `unitLineOffset`), and only its program runs;
 *  - file:line -> addresses and the next line with code: only the units
 *    whose file table names a matching file;
 *  - rows(): every unit (what the eager table holds), on first call only.
 * The decoded rows of the most recently used units are kept (KEPT_UNITS).
 * Per unit the answers are ElfLineTable's, so they equal the eager table's
 * wherever the address's unit is known. files() lists the files the units'
 * headers name (a superset of those with rows).
 */
import { LineRow, LineTable } from '../types';
import { DebugLineOptions, DebugLineSections, FullLineRow, LineUnitHeader, readLineUnit } from './debugLine';
import { ElfLineTable, matchFiles } from './lineTable';

/**
 * How many units' decoded rows are kept (least recently used dropped): a
 * header's line (include/linux/fs.h) runs the programs of most units of a
 * vmlinux, whose rows together take gigabytes.
 */
const KEPT_UNITS = 128;

export class LazyLineTable implements LineTable {
  private headerList: LineUnitHeader[] | undefined;
  private byFile: Map<string, number[]> | undefined;
  private fileList: string[] | undefined;
  private readonly tables = new Map<number, ElfLineTable>();
  private readonly matchCache = new Map<string, string[]>();
  private all: readonly LineRow[] | undefined;

  constructor(
    private readonly sections: DebugLineSections,
    private readonly opts: DebugLineOptions,
    /** the .debug_line offset (DW_AT_stmt_list) of the unit whose code holds addr */
    private readonly unitLineOffset: (addr: bigint) => number | undefined,
  ) {}

  /** every unit's header, in section order (no line program is run) */
  headers(): readonly LineUnitHeader[] {
    if (this.headerList) return this.headerList;
    const out: LineUnitHeader[] = [];
    for (let off = 0; off < this.sections.line.length;) {
      const { header, next } = readLineUnit(this.sections, this.opts, off);
      out.push(header);
      off = next;
    }
    this.headerList = out;
    return out;
  }

  private index(): { byFile: Map<string, number[]>; files: string[] } {
    if (!this.byFile || !this.fileList) {
      const byFile = new Map<string, number[]>();
      for (const h of this.headers()) {
        h.files.forEach((f, i) => {
          if (h.version < 5 && i === 0) return;
          let l = byFile.get(f);
          if (!l) byFile.set(f, (l = []));
          if (l[l.length - 1] !== h.offset) l.push(h.offset);
        });
      }
      this.byFile = byFile;
      this.fileList = [...byFile.keys()].sort();
    }
    return { byFile: this.byFile, files: this.fileList };
  }

  /** the line table of the unit at a .debug_line offset, its program run once */
  unitTable(offset: number): ElfLineTable {
    let t = this.tables.get(offset);
    if (t) {
      // most recently used last: the first entries are the ones dropped
      this.tables.delete(offset);
    } else {
      const rows: FullLineRow[] = [];
      const { header } = readLineUnit(this.sections, this.opts, offset, rows);
      t = new ElfLineTable(rows, [header]);
      if (this.tables.size >= KEPT_UNITS) this.tables.delete(this.tables.keys().next().value as number);
    }
    this.tables.set(offset, t);
    return t;
  }

  private matches(file: string): string[] {
    let m = this.matchCache.get(file);
    if (!m) this.matchCache.set(file, (m = matchFiles(this.index().files, file)));
    return m;
  }

  private each<T>(file: string, f: (t: ElfLineTable, path: string) => T): T[] {
    const out: T[] = [];
    const { byFile } = this.index();
    for (const path of this.matches(file)) {
      for (const off of byFile.get(path) ?? []) out.push(f(this.unitTable(off), path));
    }
    return out;
  }

  addressesForLine(file: string, line: number): bigint[] {
    const set = new Set<bigint>();
    for (const list of this.each(file, (t, p) => t.addressesForLine(p, line))) for (const a of list) set.add(a);
    return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  lineForAddress(addr: bigint): { file: string; line: number; column: number } | undefined {
    const off = this.unitLineOffset(BigInt.asUintN(64, addr));
    return off === undefined ? undefined : this.unitTable(off).lineForAddress(addr);
  }

  nextLineWithCode(file: string, line: number): number | undefined {
    let best: number | undefined;
    for (const n of this.each(file, (t, p) => t.nextLineWithCode(p, line))) {
      if (n !== undefined && (best === undefined || n < best)) best = n;
    }
    return best;
  }

  files(): string[] {
    return [...this.index().files];
  }

  rows(): readonly LineRow[] {
    if (!this.all) {
      const rows: LineRow[] = [];
      for (const h of this.headers()) for (const r of this.unitTable(h.offset).rows()) rows.push(r);
      this.all = rows;
    }
    return this.all;
  }

  fileOf(unit: number, index: number): string | undefined {
    const h = this.headers().find(x => x.offset === unit);
    if (!h || (h.version < 5 && index === 0)) return undefined;
    return h.files[index];
  }
}
