/**
 * Queries over decoded line-table rows: source line -> addresses (breakpoints),
 * address -> source line (stack frames, stops), next line with code.
 *
 * File matching (addressesForLine / nextLineWithCode), first rule that finds
 * any file wins:
 *   1. the exact normalized path;
 *   2. the query is a path suffix of a recorded file at a '/' boundary
 *      ("kernel.c", "examples/kernel/kernel.c");
 *   3. for an absolute query only (an editor path on a machine other than the
 *      one that built the image): the recorded files sharing the most trailing
 *      path components with it, at least the file name.
 */
import { posix } from 'node:path';
import { LineRow, LineTable } from '../types';

interface Sequence {
  start: bigint;
  /** address of the end_sequence row (one past the last instruction) */
  end: bigint;
  /** rows of the sequence without the end_sequence row, ascending by address (stable) */
  rows: LineRow[];
}

/** Normalize a user-given path: backslashes to '/', '.'/'..' folded, no trailing '/'. */
export function normalizeSourcePath(p: string): string {
  let s = p.replace(/\\/g, '/');
  if (/^[A-Za-z]:\//.test(s)) s = s[0].toLowerCase() + s.slice(1);
  s = posix.normalize(s);
  return s.length > 1 && s.endsWith('/') ? s.slice(0, -1) : s;
}

function components(p: string): string[] {
  return p.split('/').filter((c) => c !== '' && c !== '.');
}

function isAbsolute(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:\//.test(p);
}

export class ElfLineTable implements LineTable {
  private readonly all: readonly LineRow[];
  private readonly sequences: Sequence[] = [];
  /** is_stmt rows by file (non end_sequence) */
  private readonly stmtByFile = new Map<string, LineRow[]>();
  private readonly fileList: string[];
  private readonly matchCache = new Map<string, string[]>();

  constructor(rows: readonly LineRow[], private readonly units: readonly { offset: number; version: number; files: readonly string[] }[] = []) {
    this.all = rows;
    let cur: LineRow[] = [];
    const files = new Set<string>();
    for (const row of rows) {
      if (row.endSequence) {
        if (cur.length > 0 && !isTombstone(cur[0].address)) {
          const sorted = cur.map((r, i) => ({ r, i }))
            .sort((a, b) => (a.r.address < b.r.address ? -1 : a.r.address > b.r.address ? 1 : a.i - b.i))
            .map((x) => x.r);
          this.sequences.push({ start: sorted[0].address, end: row.address, rows: sorted });
          for (const r of cur) {
            files.add(r.file);
            if (!r.isStmt) continue;
            let list = this.stmtByFile.get(r.file);
            if (!list) this.stmtByFile.set(r.file, (list = []));
            list.push(r);
          }
        }
        cur = [];
      } else {
        cur.push(row);
      }
    }
    this.sequences.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.fileList = [...files].sort();
  }

  fileOf(unit: number, index: number): string | undefined {
    const u = this.units.find(x => x.offset === unit);
    if (!u || (u.version < 5 && index === 0)) return undefined;
    return u.files[index];
  }

  /** recorded files that `file` names (see the matching rules above) */
  matchFiles(file: string): string[] {
    const cached = this.matchCache.get(file);
    if (cached) return cached;
    const out = matchFiles(this.fileList, file);
    this.matchCache.set(file, out);
    return out;
  }

  addressesForLine(file: string, line: number): bigint[] {
    const set = new Set<bigint>();
    for (const f of this.matchFiles(file)) {
      for (const r of this.stmtByFile.get(f) ?? []) if (r.line === line) set.add(r.address);
    }
    return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  lineForAddress(addr: bigint): { file: string; line: number; column: number } | undefined {
    const a = BigInt.asUintN(64, addr);
    // sequences may overlap only in broken inputs; search the last one starting <= a, then back
    let lo = 0, hi = this.sequences.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sequences[mid].start <= a) lo = mid + 1; else hi = mid;
    }
    for (let i = lo - 1; i >= 0; i--) {
      const s = this.sequences[i];
      if (a >= s.end) continue;
      // last row with address <= a (the last of equal addresses, as llvm-symbolizer);
      // when that row is no statement, the last statement row at its address (as gdb's find_pc_line)
      let l = 0, h = s.rows.length;
      while (l < h) {
        const m = (l + h) >> 1;
        if (s.rows[m].address <= a) l = m + 1; else h = m;
      }
      let r = s.rows[l - 1];
      if (!r.isStmt) {
        for (let k = l - 2; k >= 0 && s.rows[k].address === r.address; k--) {
          if (s.rows[k].isStmt) { r = s.rows[k]; break; }
        }
      }
      return { file: r.file, line: r.line, column: r.column };
    }
    return undefined;
  }

  nextLineWithCode(file: string, line: number): number | undefined {
    let best: number | undefined;
    for (const f of this.matchFiles(file)) {
      for (const r of this.stmtByFile.get(f) ?? []) {
        if (r.line >= line && (best === undefined || r.line < best)) best = r.line;
      }
    }
    return best;
  }

  files(): string[] {
    return [...this.fileList];
  }

  rows(): readonly LineRow[] {
    return this.all;
  }
}

/** The files of `fileList` that `file` names (see the matching rules above). */
export function matchFiles(fileList: readonly string[], file: string): string[] {
  const q = normalizeSourcePath(file);
  let out = fileList.filter((f) => f === q);
  if (out.length === 0 && !isAbsolute(q)) {
    const qc = components(q);
    out = fileList.filter((f) => endsWithComponents(components(f), qc));
  }
  if (out.length === 0 && isAbsolute(q)) {
    const qc = components(q);
    let best = 0;
    for (const f of fileList) {
      const n = commonTail(components(f), qc);
      if (n > best) { best = n; out = [f]; } else if (n === best && n > 0) out.push(f);
    }
  }
  return out;
}

/** Linkers mark line sequences of discarded code with an all-ones address (or -2). */
function isTombstone(a: bigint): boolean {
  return a === 0xffffffffffffffffn || a === 0xfffffffffffffffen || a === 0xffffffffn || a === 0xfffffffen;
}

function endsWithComponents(f: string[], q: string[]): boolean {
  if (q.length === 0 || q.length > f.length) return false;
  for (let i = 1; i <= q.length; i++) if (f[f.length - i] !== q[q.length - i]) return false;
  return true;
}

function commonTail(f: string[], q: string[]): number {
  let n = 0;
  while (n < f.length && n < q.length && f[f.length - 1 - n] === q[q.length - 1 - n]) n++;
  return n;
}
