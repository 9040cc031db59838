/**
 * Source level on Debian's own kernel: the DWARF reader on the real vmlinux
 * of linux-image-<release>-dbg (test/linux/dbg/fetch-vmlinux-dbg.sh), in a
 * fresh process, step by step as the debugger meets it: opening the image
 * (ELF headers, sections, symbols), the function `do_sys_openat2` by name
 * (symbol) and its DWARF ranges, its entry address -> file:line (the first
 * line-table query), that fs/open.c line -> addresses (a source breakpoint),
 * the parameters and locals with their C types at the entry (the frame's
 * Variables), a struct and a global by name (what views of the guest's
 * kprobes read: struct kprobe, kprobe_table), a line of a header most units include (include/linux/fs.h:
 * the worst case of a source breakpoint, every such unit's line program
 * runs), and the heap and peak RSS afterwards. Without the vmlinux the
 * section says how to fetch it.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { debugInfoOf } from '../../emulator/elf/dwarf/info';
import { globalDie, namesAt, outermostFunction } from '../../emulator/elf/dwarf/scopes';
import { typeNamed } from '../../emulator/elf/dwarf/ctype';
import { typeText } from '../../emulator/elf/dwarf/typeDies';
import { repoRoot } from './lib/root';

const root = repoRoot('linuxDebug');
const path = join(root, 'test', 'linux', 'dbg', 'cache', 'vmlinux');
const gc = (globalThis as { gc?: () => void }).gc;
const heap = (): number => { for (let i = 0; i < 4; i++) gc?.(); return process.memoryUsage().heapUsed; };
const mb = (b: number): string => `${(b / 1048576).toFixed(0)} MB`;
const ms = (t: number): string => `${t.toFixed(0)} ms`;
const hex = (a: bigint): string => '0x' + a.toString(16);
const fn = 'do_sys_openat2';

if (!existsSync(path)) {
  console.log(`no ${path}: run test/linux/fetch-kernel.sh then test/linux/dbg/fetch-vmlinux-dbg.sh`);
} else {
  const step = <T>(what: string, f: () => T, show: (v: T) => string): T => {
    const t0 = performance.now();
    const v = f();
    console.log(`${what.padEnd(44)} ${ms(performance.now() - t0).padStart(8)}   ${show(v)}`);
    return v;
  };
  const t0 = performance.now();
  const image = step('open (ELF, sections, symbols)', () => loadElf(path), i => `${i.symbols.count} symbols, ${i.sections.length} sections`);
  const sym = step(`symbol ${fn}`, () => image.symbols.lookup(fn), s => s ? `${hex(s.value)} size ${s.size}` : 'not found');
  if (!sym) throw new Error(`${path}: no symbol ${fn}`);
  const pos = step(`first line lookup: ${hex(sym.value)} -> file:line`, () => image.lines?.lineForAddress(sym.value), l => l ? `${l.file}:${l.line}` : 'none');
  const tFirst = performance.now() - t0;
  if (pos) step(`fs/open.c:${pos.line} -> addresses`, () => image.lines?.addressesForLine('fs/open.c', pos.line) ?? [], a => a.map(hex).join(' '));
  const di = debugInfoOf(image);
  step(`DWARF function ${fn}: ranges`, () => {
    const u = di.unitFor(sym.value);
    const r = u ? di.root(u) : null;
    const f = r ? outermostFunction(di, r, sym.value) : undefined;
    return f ? di.ranges(f) : [];
  }, r => r.map(([lo, hi]) => `[${hex(lo)}, ${hex(hi)})`).join(' ') || 'none');
  step(`frame names at the entry with types`, () => namesAt(image, sym.value), n => n
    ? [...n.names.values()].map(v => `${v.kind === 'param' ? '' : 'local '}${typeText(n.di, v.type)} ${v.name}`).join(', ')
    : 'none');
  step('struct kprobe by name (index over every unit)', () => typeNamed(image, 'struct', 'kprobe'), t => t?.kind === 'struct' ? `${t.size} bytes, ${t.members().length} members` : 'not found');
  step('global kprobe_table by name', () => globalDie(image, 'kprobe_table'), g => g ? `DIE 0x${g.die.offset.toString(16)}` : 'not found');
  const rssFirst = process.resourceUsage().maxRSS * 1024;
  step('include/linux/fs.h:1 -> next line with code', () => image.lines?.nextLineWithCode('include/linux/fs.h', 1), l => `line ${l}`);
  console.log(`${'open + first line lookup'.padEnd(44)} ${ms(tFirst).padStart(8)}`);
  console.log(`${'heap after the lookups'.padEnd(44)} ${mb(heap()).padStart(8)}   ${gc ? 'after GC' : 'approximate (no --expose-gc)'}`);
  console.log(`${'peak RSS before the fs.h query'.padEnd(44)} ${mb(rssFirst).padStart(8)}`);
  console.log(`${'peak RSS'.padEnd(44)} ${mb(process.resourceUsage().maxRSS * 1024).padStart(8)}   (vmlinux file ${mb(statSync(path).size)}; bytes not read: ${mb(image.sections.filter(s => s.size > 0n && s.data.length === 0 && s.type !== 8).reduce((n, s) => n + Number(s.size), 0))} of relocations for debug sections)`);
}
