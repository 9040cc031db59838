/**
 * The .debug_info reader (emulator/elf/dwarf/info.ts) against
 * llvm-dwarfdump: for the three sample kernels and vars.c built by gcc
 * (DWARF 5, 64-bit DWARF at -O2) and clang (DWARF 5 and 4) at -O0/-O2/-Os
 * (test/fixtures/dwarf/build.sh), per unit: version, 32/64-bit format, DIE
 * count, the count of each tag and every DW_AT_name (strx / strp /
 * line_strp / string forms resolved) equal llvm-dwarfdump's
 * (golden/*.json, made by dwarfsum.mjs). Also: units are read lazily,
 * references and address indexes resolve, and bad input is a unit error,
 * never an exception.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { loadElf } from '../../../emulator/elf/elfFile';
import { DebugInfo, debugInfoOf } from '../../../emulator/elf/dwarf/info';
import { DW_AT, DW_TAG } from '../../../emulator/elf/dwarf/dies';
import { repoPath } from '../../util/paths';

const DIR = repoPath('test', 'fixtures', 'dwarf');
const imagePath = (name: string): string => (name.startsWith('kernel-') ? repoPath('examples', 'kernel', 'build', `${name}.elf`) : `${DIR}/${name}.elf`);

interface UnitSummary { offset: number; format: string; version: number; dies: number; tags: Record<string, number>; names: string[] }

function summarize(d: DebugInfo): UnitSummary[] {
  return d.units().map(u => {
    assert.equal(u.error, undefined, u.error);
    const dies = d.dies(u);
    const tags: Record<string, number> = {};
    const names: string[] = [];
    for (const die of dies) {
      const t = DW_TAG[die.tag] ?? `0x${die.tag.toString(16)}`;
      tags[t] = (tags[t] ?? 0) + 1;
      if (die.attrs.has(DW_AT.name)) {
        const n = d.name(die);
        assert.ok(n !== undefined, `DW_AT_name of the DIE at 0x${die.offset.toString(16)} resolves`);
        names.push(n);
      }
    }
    names.sort();
    return { offset: u.offset, format: u.offsetSize === 8 ? 'DWARF64' : 'DWARF32', version: u.version, dies: dies.length, tags: Object.fromEntries(Object.entries(tags).sort()), names };
  });
}

describe('DWARF .debug_info reader vs llvm-dwarfdump', () => {
  const goldens = readdirSync(`${DIR}/golden`).filter(f => f.endsWith('.json')).sort();
  test('there are goldens for the three sample kernels and six vars builds', () => assert.equal(goldens.length, 9));
  for (const g of goldens) {
    test(g.replace('.json', ''), () => {
      const want = JSON.parse(readFileSync(`${DIR}/golden/${g}`, 'utf8')) as UnitSummary[];
      const got = summarize(new DebugInfo(sectionsOf(imagePath(g.replace('.json', '')))));
      assert.deepEqual(got, want);
    });
  }

  test('lazy: the units are listed without reading a DIE; a DIE tree is built once per unit', () => {
    const d = debugInfoOf(loadElf(imagePath('kernel-x86_64')));
    const units = d.units();
    assert.ok(units.length >= 5);
    const internals = d as unknown as { trees: Map<number, unknown> };
    assert.equal(internals.trees.size, 0);
    const root = d.root(units[1]);
    assert.equal(internals.trees.size, 1);
    assert.equal(root?.tag, 0x11);
    assert.equal(d.root(units[1]), root);
  });

  test('values: global addresses through addrx, types through references, low_pc of functions', () => {
    const image = loadElf(imagePath('vars-clang-O2'));
    const d = debugInfoOf(image);
    const all = d.units().flatMap(u => d.dies(u));
    const counter = all.find(x => x.tag === 0x34 && d.name(x) === 'counter');
    assert.ok(counter);
    const loc = d.attr(counter, DW_AT.location);
    assert.equal(loc?.kind, 'block');
    const type = d.ref(counter, DW_AT.type);
    assert.equal(type && d.name(type), 'int');
    const walk = all.find(x => x.tag === 0x2e && d.name(x) === 'walk');
    assert.ok(walk);
    assert.equal(d.uint(walk, DW_AT.low_pc), image.symbols.lookup('walk')?.value);
    const params = walk.children.filter(c => c.tag === 0x05).map(c => d.name(c));
    assert.deepEqual(params, ['n', 'limit']);
  });

  test('bad input: a truncated .debug_info, a bad abbreviation code, a missing .debug_abbrev are unit errors', () => {
    const s = sectionsOf(imagePath('vars-gcc-O0'));
    const cut = new DebugInfo({ ...s, info: s.info?.subarray(0, 40) });
    assert.match(cut.units()[0].error ?? '', /runs past \.debug_info/);
    const info = Uint8Array.from(s.info ?? []);
    info[12] = 0x7f; // the first DIE's abbreviation code
    const badCode = new DebugInfo({ ...s, info });
    const u = badCode.units()[0];
    assert.equal(badCode.root(u), null);
    assert.match(u.error ?? '', /abbreviation code 127 is not in the table/);
    const noAbbrev = new DebugInfo({ ...s, abbrev: undefined });
    const u2 = noAbbrev.units()[0];
    assert.deepEqual(noAbbrev.dies(u2), []);
    assert.match(u2.error ?? '', /no \.debug_abbrev/);
  });
});

function sectionsOf(path: string): ConstructorParameters<typeof DebugInfo>[0] {
  const image = loadElf(path);
  const get = (n: string): Uint8Array | undefined => image.section(n)?.data;
  return { info: get('.debug_info'), abbrev: get('.debug_abbrev'), str: get('.debug_str'), lineStr: get('.debug_line_str'), strOffsets: get('.debug_str_offsets'), addr: get('.debug_addr') };
}
