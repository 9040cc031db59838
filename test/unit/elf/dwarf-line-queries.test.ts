/**
 * LineTable queries (breakpoint lines -> addresses, address -> line, next
 * line with code, file matching), expected values derived from the
 * llvm-dwarfdump goldens and the source markers.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf';
import { GOLDEN_DIR, fixture, goldenFilePath, markerLine, parseDwarfdumpLines } from '../../fixtures/elf/goldens';

/** is_stmt addresses of file:line in the golden dump (ascending, unique). */
function goldenAddresses(name: string, file: string, line: number): bigint[] {
  const g = parseDwarfdumpLines(readFileSync(join(GOLDEN_DIR, `${name}.debug_line.txt`), 'utf8'));
  const units = new Map(g.units.map((u) => [u.offset, u]));
  const set = new Set<bigint>();
  for (const r of g.rows) {
    if (r.isStmt && !r.endSequence && r.line === line && ('/' + goldenFilePath(units.get(r.unit)!, r.file)).endsWith('/' + file)) set.add(r.address);
  }
  return [...set].sort((a, b) => (a < b ? -1 : 1));
}

const CALL = markerLine('main.c', 'CALL_HELPER');
const NOCODE = markerLine('main.c', 'NOCODE');
const FOR = markerLine('main.c', 'FOR');
const HELPER = markerLine('helper.c', 'HELPER_BODY');

for (const name of ['x86_64', 'x86_64-dwarf4', 'x86_64-dwarf64', 'aarch64', 'riscv64', 'riscv64-gcc', 'aarch64-gcc-dwarf4', 'ppc32be', 'i386-dwarf2']) {
  describe(`line table queries (${name})`, () => {
    const lines = loadElf(fixture(`${name}.elf`)).lines!;

    test('addressesForLine gives every is_stmt address of the line, ascending, deduplicated', () => {
      for (const [file, line] of [['main.c', CALL], ['main.c', FOR], ['helper.c', HELPER]] as const) {
        const want = goldenAddresses(name, `src/${file}`, line);
        assert.ok(want.length > 0, `golden has code at ${file}:${line}`);
        assert.deepEqual(lines.addressesForLine(file, line), want, `${file}:${line}`);
        assert.deepEqual(lines.addressesForLine(`src/${file}`, line), want, `src/${file}:${line}`);
      }
    });

    test('lineForAddress maps those addresses back to the line', () => {
      for (const a of lines.addressesForLine('main.c', CALL)) {
        const p = lines.lineForAddress(a)!;
        assert.equal(p.line, CALL, `0x${a.toString(16)}`);
        assert.match(p.file, /(^|\/)src\/main\.c$/);
      }
      const h = lines.addressesForLine('helper.c', HELPER)[0];
      assert.match(lines.lineForAddress(h)!.file, /src\/helper\.c$/);
      assert.equal(lines.lineForAddress(0n), undefined);
    });

    test('a line without code: no addresses, next line with code is the next stmt line', () => {
      assert.deepEqual(lines.addressesForLine('main.c', NOCODE), []);
      const next = lines.nextLineWithCode('main.c', NOCODE)!;
      assert.ok(next > NOCODE);
      for (let l = NOCODE; l < next; l++) assert.deepEqual(goldenAddresses(name, 'src/main.c', l), [], `line ${l}`);
      assert.ok(goldenAddresses(name, 'src/main.c', next).length > 0);
      assert.equal(lines.nextLineWithCode('main.c', CALL), CALL);
      assert.equal(lines.nextLineWithCode('main.c', 100000), undefined);
    });

    test('files() names both sources', () => {
      const files = lines.files();
      assert.ok(files.some((f) => f.endsWith('src/main.c')), files.join(','));
      assert.ok(files.some((f) => f.endsWith('src/helper.c')));
    });
  });
}

describe('line table file matching', () => {
  const lines = loadElf(fixture('x86_64.elf')).lines!;
  const want = lines.addressesForLine('main.c', CALL);

  test('recorded paths are absolute (compilation dir joined)', () => {
    assert.deepEqual(lines.files(), ['/fixtures/elf/src/helper.c', '/fixtures/elf/src/main.c']);
  });

  test('DWARF 4 relative names are joined with DW_AT_comp_dir from .debug_info', () => {
    for (const n of ['x86_64-dwarf4', 'aarch64-gcc-dwarf4', 'i386-dwarf2']) {
      assert.deepEqual(loadElf(fixture(`${n}.elf`)).lines!.files(), ['/fixtures/elf/src/helper.c', '/fixtures/elf/src/main.c'], n);
    }
  });

  test('exact absolute path, suffixes at a "/" boundary, and not mid-name', () => {
    assert.ok(want.length > 0);
    assert.deepEqual(lines.addressesForLine('/fixtures/elf/src/main.c', CALL), want);
    assert.deepEqual(lines.addressesForLine('elf/src/main.c', CALL), want);
    assert.deepEqual(lines.addressesForLine('./src//main.c', CALL), want);
    assert.deepEqual(lines.addressesForLine('ain.c', CALL), []);
    assert.deepEqual(lines.addressesForLine('other/main.c', CALL), []);
  });

  test('an absolute editor path from another checkout matches by its longest common tail', () => {
    assert.deepEqual(lines.addressesForLine('/home/me/work/src/main.c', CALL), want);
    assert.deepEqual(lines.addressesForLine('C:\\Users\\me\\src\\main.c', CALL), want);
    assert.deepEqual(lines.addressesForLine('/home/me/work/src/other.c', CALL), []);
  });
});
