/**
 * The per-unit line table a big image gets (LazyLineTable: unit headers up
 * front, a unit's line program only when a query needs it, the unit of an
 * address through .debug_aranges or the units' root DIEs) answers as the
 * eager table does: on every small fixture and sample kernel the two are
 * built side by side and compared query by query (address -> line for every
 * row, file:line -> addresses and the next line with code for every line
 * with code, by full path and by file name, the call-file table, all rows).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadElf } from '../../emulator/elf';
import { lazyLines } from '../../emulator/elf/elfFile';
import { sectionContents } from '../../emulator/elf/compressed';
import { LazyLineTable } from '../../emulator/elf/dwarf/lazyLines';
import { fixture } from '../fixtures/elf/goldens';
import { repoPath } from '../util/paths';

const IMAGES = [
  ...['x86_64', 'x86_64-dwarf4', 'x86_64-dwarf64', 'x86_64-zdebug', 'aarch64', 'aarch64-gcc-dwarf4', 'riscv64', 'riscv64-gcc', 'i386-dwarf2', 'ppc32be']
    .map(n => fixture(`${n}.elf`)),
  ...['gcc-O0', 'gcc-O2', 'clang-O2', 'clang-O2-dwarf4'].map(b => repoPath('test', 'fixtures', 'dwarf', `vars-${b}.elf`)),
  ...['x86_64', 'aarch64', 'riscv64'].map(a => repoPath('examples', 'kernel', 'build', `kernel-${a}.elf`)),
];

describe('per-unit line table = eager line table', () => {
  for (const path of IMAGES) {
    test(basename(path), () => {
      assert.ok(existsSync(path), `${path} exists`);
      const image = loadElf(path);
      const eager = image.lines;
      assert.ok(eager, 'the image has a line table');
      assert.ok(!(eager instanceof LazyLineTable), 'a small image keeps the eager table');
      const sec = image.section('.debug_line')!;
      const lazy = lazyLines(image, sectionContents(sec, image.elfClass, image.endian === 'little', image.path));

      const rows = eager.rows();
      assert.ok(rows.length > 0);
      const seen = new Set<bigint>();
      for (const r of rows) {
        if (r.endSequence || seen.has(r.address)) continue;
        seen.add(r.address);
        assert.deepEqual(lazy.lineForAddress(r.address), eager.lineForAddress(r.address), `line of 0x${r.address.toString(16)}`);
      }
      const lazyFiles = new Set(lazy.files());
      for (const f of eager.files()) {
        assert.ok(lazyFiles.has(f), `${f} among the lazy table's files`);
        const lines = new Set(rows.filter(r => r.file === f && r.isStmt && !r.endSequence).map(r => r.line));
        for (const l of lines) {
          assert.deepEqual(lazy.addressesForLine(f, l), eager.addressesForLine(f, l), `${f}:${l}`);
          assert.deepEqual(lazy.addressesForLine(basename(f), l), eager.addressesForLine(basename(f), l), `${basename(f)}:${l}`);
          assert.equal(lazy.nextLineWithCode(f, l + 1), eager.nextLineWithCode(f, l + 1), `next line after ${f}:${l}`);
        }
      }
      assert.deepEqual(lazy.rows().map(r => [r.address, r.file, r.line, r.column, r.isStmt, r.endSequence]),
        rows.map(r => [r.address, r.file, r.line, r.column, r.isStmt, r.endSequence]));
      for (const h of lazy.headers()) {
        for (let i = 0; i < h.files.length + 1; i++) assert.equal(lazy.fileOf(h.offset, i), eager.fileOf?.(h.offset, i), `file ${i} of unit 0x${h.offset.toString(16)}`);
      }
    });
  }
});
