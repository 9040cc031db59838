/**
 * The call frame information parser against llvm-dwarfdump: every CIE and
 * FDE of every .debug_frame / .eh_frame golden (x86_64, i386, aarch64,
 * riscv64, ppc32 big-endian, 64-bit DWARF, zlib-compressed, the sample
 * kernels and the -fomit-frame-pointer fixtures): offsets, pc ranges,
 * decoded instructions and the full row table.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../../emulator/elf';
import { sectionContents } from '../../../emulator/elf/compressed';
import { decodeCfaProgram, formatCfaInsn, formatRow, initialRow, parseFrameSection, unwindRows } from '../../../emulator/unwind';
import { dwarfRegNames, frameGoldens } from '../../fixtures/elf/frameGoldens';

describe('CFI parser matches llvm-dwarfdump', () => {
  const goldens = frameGoldens();
  test('goldens cover .debug_frame and .eh_frame, 32/64-bit, both endians, the sample kernels', () => {
    const names = goldens.map((g) => `${g.name}${g.section}`);
    for (const n of ['kernel-x86_64.debug_frame', 'kernel-aarch64.debug_frame', 'kernel-riscv64.debug_frame', 'omitfp-debug_frame.debug_frame',
      'omitfp-eh_frame.eh_frame', 'aarch64-gcc-dwarf4.eh_frame', 'ppc32be.debug_frame', 'i386-dwarf2.debug_frame', 'x86_64-dwarf64.debug_frame', 'x86_64-zdebug.debug_frame']) {
      assert.ok(names.includes(n), n);
    }
  });
  for (const g of goldens) {
    test(`${g.name} ${g.section}`, () => {
      const img = loadElf(g.path);
      const little = img.endian === 'little';
      const s = img.section(g.section)!;
      assert.ok(s, `${g.section} present`);
      const parsed = parseFrameSection(sectionContents(s, img.elfClass, little, img.path),
        { kind: g.section, little, addressSize: img.elfClass / 8, sectionAddr: s.addr, file: img.path });
      const name = dwarfRegNames(g.format);
      assert.ok(g.fdes.length > 0, 'golden has FDEs');
      assert.deepEqual(parsed.cies.map((c) => c.offset), g.cies.map((c) => c.offset), 'CIE offsets');
      parsed.cies.forEach((c, i) => {
        const x = g.cies[i];
        assert.deepEqual([c.version, c.augmentation, c.codeAlign, c.dataAlign, c.raReg], [x.version, x.augmentation, x.codeAlign, x.dataAlign, x.raReg], `CIE 0x${c.offset.toString(16)}`);
        assert.deepEqual(decodeCfaProgram(c.initialInstructions, c, little).map((i) => formatCfaInsn(i, name)), x.insns, `CIE 0x${c.offset.toString(16)} instructions`);
        assert.equal(formatRow(initialRow(c, little), name), x.row, `CIE 0x${c.offset.toString(16)} row`);
      });
      const fdes = [...parsed.fdes].sort((a, b) => a.offset - b.offset);
      assert.equal(fdes.length, g.fdes.length, 'FDE count');
      fdes.forEach((f, i) => {
        const x = g.fdes[i];
        const at = `FDE 0x${f.offset.toString(16)}`;
        assert.deepEqual([f.offset, f.cie.offset, f.pcBegin, f.pcEnd], [x.offset, x.cie, x.pcBegin, x.pcEnd], at);
        assert.deepEqual(decodeCfaProgram(f.instructions, f.cie, little).map((i) => formatCfaInsn(i, name)), x.insns, `${at} instructions`);
        assert.deepEqual(unwindRows(f, little).map((r) => ({ loc: r.loc, text: formatRow(r, name) })), x.rows, `${at} rows`);
      });
    });
  }
});
