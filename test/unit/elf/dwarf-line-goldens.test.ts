/**
 * The .debug_line parser against llvm-dwarfdump: every row (address, line,
 * column, is_stmt, end_sequence, file) of every image with a golden dump.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../../emulator/elf';
import { assertGoldenFresh, goldenFilePath, goldenImages, parseDwarfdumpLines } from '../../fixtures/elf/goldens';

const images = goldenImages().filter((g) => g.debugLine !== null);

describe('dwarf .debug_line matches llvm-dwarfdump', () => {
  test('goldens cover DWARF 2, 4, 5, 64-bit DWARF, ELF32 big/little endian and the three kernel arches', () => {
    const names = images.map((g) => g.name);
    for (const n of ['x86_64', 'x86_64-dwarf4', 'x86_64-dwarf64', 'aarch64', 'riscv64', 'riscv64-gcc', 'aarch64-gcc-dwarf4', 'ppc32be', 'i386-dwarf2']) {
      assert.ok(names.includes(n), `golden for ${n}`);
    }
    const versions = new Set(images.flatMap((g) => parseDwarfdumpLines(g.debugLine!).units.map((u) => u.version)));
    assert.deepEqual([...versions].sort(), [2, 4, 5]);
  });

  for (const g of images) {
    test(g.name, () => {
      assertGoldenFresh(g);
      const image = loadElf(g.path);
      const golden = parseDwarfdumpLines(g.debugLine!);
      assert.ok(golden.rows.length > 0, 'golden has rows');
      const rows = image.lines!.rows();
      assert.equal(rows.length, golden.rows.length, 'row count');
      const units = new Map(golden.units.map((u) => [u.offset, u]));
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i];
        const e = golden.rows[i];
        const where = `row ${i} (golden 0x${e.address.toString(16)} line ${e.line})`;
        assert.equal(r.address, e.address, `${where}: address`);
        assert.equal(r.line, e.line, `${where}: line`);
        assert.equal(r.column, e.column, `${where}: column`);
        assert.equal(r.isStmt, e.isStmt, `${where}: is_stmt`);
        assert.equal(r.endSequence, e.endSequence, `${where}: end_sequence`);
        const unit = units.get(e.unit)!;
        const path = goldenFilePath(unit, e.file);
        if (unit.version >= 5 || path.startsWith('/')) assert.equal(r.file, path, `${where}: file`);
        else assert.ok(r.file === path || r.file.endsWith('/' + path), `${where}: file ${r.file} ends with ${path}`);
      }
    });
  }
});
