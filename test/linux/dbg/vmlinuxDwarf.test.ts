/**
 * The DWARF reader on Debian's own vmlinux (linux-image-<release>-dbg,
 * fetched by test/linux/dbg/fetch-vmlinux-dbg.sh) against LLVM's tools
 * (golden/do_sys_openat2.txt, made by make-golden.sh with llvm-dwarfdump and
 * llvm-symbolizer): fs/open.c's do_sys_openat2 found by name with its
 * DWARF range, its parameters and locals with their C types, every
 * breakpoint line of fs/open.c in it -> its addresses, and each of its
 * line-table addresses -> file:line:column, the struct its `how` points to
 * found by name (members and offsets), the global jiffies_64. Every address is a kernel one
 * (0xffffffff8...) compared as bigint. The big image's line table is the
 * per-unit one. Missing vmlinux: skipped outside CI, a failure in CI (CI
 * fetches it first). A vmlinux of another version than the golden's: the
 * golden is made again from it when LLVM's tools are here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../../emulator/elf';
import { debugInfoOf } from '../../../emulator/elf/dwarf/info';
import { DW_AT, TAG } from '../../../emulator/elf/dwarf/dies';
import { LazyLineTable } from '../../../emulator/elf/dwarf/lazyLines';
import { globalDie, namesAt, outermostFunction } from '../../../emulator/elf/dwarf/scopes';
import { typeNamed } from '../../../emulator/elf/dwarf/ctype';
import { typeText } from '../../../emulator/elf/dwarf/typeDies';
import { repoPath } from '../../util/paths';
import { unfetched } from '../../util/fetched';

const DIR = repoPath('test', 'linux', 'dbg');
const VMLINUX = join(DIR, 'cache', 'vmlinux');

function missing(t: { skip(msg: string): void }, why: string): void {
  unfetched(t, why);
}

interface Golden {
  pkg: string;
  fn: { name: string; low: bigint; high: bigint };
  children: { kind: string; name: string; type: string }[];
  rows: { addr: bigint; line: number; column: number; stmt: boolean; file: string }[];
  symbolize: { addr: bigint; file: string; line: number; column: number }[];
  struct: { name: string; size: number; members: { name: string; offset: number }[] };
}

function parseGolden(text: string): Golden {
  const g: Golden = { pkg: '', fn: { name: '', low: 0n, high: 0n }, children: [], rows: [], symbolize: [], struct: { name: '', size: 0, members: [] } };
  for (const l of text.split('\n')) {
    const w = l.split(' ');
    if (w[0] === 'package') g.pkg = w.slice(1).join(' ');
    else if (w[0] === 'function') g.fn = { name: w[1], low: BigInt(w[2]), high: BigInt(w[3]) };
    else if (w[0] === 'param' || w[0] === 'variable') g.children.push({ kind: w[0], name: w[1], type: w.slice(2).join(' ') });
    else if (w[0] === 'row') g.rows.push({ addr: BigInt(w[1]), line: +w[2], column: +w[3], stmt: w[4] === 'stmt', file: w[5] });
    else if (w[0] === 'struct') g.struct = { name: w[1], size: +w[2], members: [] };
    else if (w[0] === 'member') g.struct.members.push({ name: w[1], offset: +w[w.length - 1] });
    else if (w[0] === 'symbolize') {
      const m = /^(.*):(\d+):(\d+)$/.exec(w.slice(2).join(' '));
      assert.ok(m, `golden line ${l}`);
      g.symbolize.push({ addr: BigInt(w[1]), file: m[1], line: +m[2], column: +m[3] });
    }
  }
  return g;
}

/** the golden for the fetched vmlinux: the committed one, or made again for another version */
function golden(t: { skip(msg: string): void }): Golden | undefined {
  const committed = parseGolden(readFileSync(join(DIR, 'golden', 'do_sys_openat2.txt'), 'utf8'));
  const have = ['PACKAGE', 'VERSION'].map(f => readFileSync(join(DIR, 'cache', f), 'utf8').trim()).join(' ');
  if (have === committed.pkg) return committed;
  const tmp = mkdtempSync(join(tmpdir(), 'vmlinux-golden-'));
  try {
    const out = join(tmp, 'golden.txt');
    const r = spawnSync('bash', [join(DIR, 'make-golden.sh'), out], { encoding: 'utf8' });
    if (r.status !== 0) { missing(t, `the golden is of ${committed.pkg}, the cache holds ${have}, and make-golden.sh cannot run: ${r.stderr.trim()}`); return undefined; }
    return parseGolden(readFileSync(out, 'utf8'));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** llvm-dwarfdump names a struct type without the keyword: "open_how *" */
const llvmSpelling = (s: string): string => s.replace(/\b(struct|union|enum) /g, '');
const endsWithPath = (f: string, tail: string): boolean => f === tail || f.endsWith('/' + tail);

test('Debian vmlinux DWARF = llvm-dwarfdump / llvm-symbolizer on fs/open.c do_sys_openat2', (t) => {
  if (!existsSync(VMLINUX)) { missing(t, 'no test/linux/dbg/cache/vmlinux (test/linux/fetch-kernel.sh, then test/linux/dbg/fetch-vmlinux-dbg.sh)'); return; }
  const g = golden(t);
  if (!g) return;
  const image = loadElf(VMLINUX);
  const lines = image.lines;
  assert.ok(lines instanceof LazyLineTable, 'a vmlinux gets the per-unit line table');
  // read sparsely: the relocations --emit-relocs left for the debug sections are listed without their bytes
  const rela = image.section('.rela.debug_info');
  assert.ok(rela && rela.size > 0n && rela.data.length === 0, '.rela.debug_info is not read');
  assert.equal(image.section('.debug_info')?.data.length, Number(image.section('.debug_info')?.size));

  // the function by name: the ELF symbol and the DWARF subprogram's range
  const sym = image.symbols.lookup(g.fn.name);
  assert.equal(sym?.value, g.fn.low);
  const di = debugInfoOf(image);
  const u = di.unitFor(g.fn.low);
  assert.ok(u, 'a unit holds the function');
  const root = di.root(u);
  assert.ok(root);
  assert.equal(di.name(root), 'fs/open.c');
  const fn = outermostFunction(di, root, g.fn.low);
  assert.ok(fn, 'the subprogram holding the entry');
  assert.equal(di.name(fn), g.fn.name);
  assert.deepEqual(di.ranges(fn), [[g.fn.low, g.fn.high]]);

  // its parameters and locals (the DIE's direct children) with their types
  const children = fn.children.filter(c => (c.tag === TAG.formal_parameter || c.tag === TAG.variable) && di.name(c) !== undefined)
    .map(c => ({ kind: c.tag === TAG.formal_parameter ? 'param' : 'variable', name: di.name(c)!, type: llvmSpelling(typeText(di, di.ref(c, DW_AT.type))) }));
  assert.deepEqual(children, g.children);
  // what a stop at the entry shows: the parameters with their C types
  const scope = namesAt(image, g.fn.low);
  assert.equal(scope?.function, g.fn.name);
  for (const c of g.children.filter(x => x.kind === 'param')) {
    const n = scope?.names.get(c.name);
    assert.equal(n?.kind, 'param', c.name);
    assert.equal(llvmSpelling(typeText(scope!.di, n?.type)), c.type, c.name);
  }
  assert.equal(typeText(di, scope?.names.get('how')?.type), 'struct open_how *');

  // a struct by name over every unit (the program's name index, no unit's tree read to find it)
  const how = typeNamed(image, 'struct', g.struct.name);
  assert.equal(how?.kind, 'struct');
  if (how?.kind === 'struct') {
    assert.equal(how.size, g.struct.size);
    assert.deepEqual(how.members().map(m => ({ name: m.name, offset: m.offset })), g.struct.members);
  }
  // a global by name: its DW_OP_addr is the ELF symbol's 64-bit address, exact
  const j = globalDie(image, 'jiffies_64');
  const loc = j && di.attr(j.die, DW_AT.location);
  assert.ok(loc?.kind === 'block' && loc.value[0] === 0x03, 'jiffies_64 at a DW_OP_addr');
  assert.equal(new DataView(loc.value.buffer, loc.value.byteOffset + 1, 8).getBigUint64(0, true), image.symbols.lookup('jiffies_64')?.value);

  // fs/open.c:LINE -> addresses, within the function: the golden's is_stmt rows of that line
  const inFn = (a: bigint): boolean => a >= g.fn.low && a < g.fn.high;
  const openRows = g.rows.filter(r => endsWithPath(r.file, 'fs/open.c') && r.stmt);
  assert.ok(openRows.length > 3, 'fs/open.c statements in the function');
  for (const line of new Set(openRows.map(r => r.line))) {
    const want = [...new Set(openRows.filter(r => r.line === line).map(r => r.addr))].sort((a, b) => (a < b ? -1 : 1));
    assert.deepEqual(lines.addressesForLine('fs/open.c', line).filter(inFn), want, `fs/open.c:${line}`);
  }
  // address -> file:line:column for every line-table address of the function: llvm-symbolizer's answer (the
  // last row at the address), except where that row is no statement and a statement row shares its address:
  // there the reader answers as gdb's find_pc_line does, with the last statement row at the address
  assert.ok(g.symbolize.length > 10);
  let gdbRule = 0;
  for (const s of g.symbolize) {
    const l = lines.lineForAddress(s.addr);
    assert.ok(l, `0x${s.addr.toString(16)} has a line`);
    const at: Golden['rows'] = g.rows.filter(r => r.addr === s.addr);
    const stmt: Golden['rows'][number] | undefined = at.filter(r => r.stmt).pop();
    if (at.length && !at[at.length - 1].stmt && stmt) {
      gdbRule++;
      assert.ok(endsWithPath(l.file, stmt.file), `0x${s.addr.toString(16)}: ${l.file} is ${stmt.file}`);
      assert.deepEqual([l.line, l.column], [stmt.line, stmt.column], `0x${s.addr.toString(16)} (last statement row)`);
    } else {
      assert.deepEqual({ file: l.file, line: l.line, column: l.column }, { file: s.file, line: s.line, column: s.column }, `0x${s.addr.toString(16)}`);
    }
  }
  assert.ok(gdbRule < g.symbolize.length / 2, 'most addresses compared with llvm-symbolizer as is');
});
