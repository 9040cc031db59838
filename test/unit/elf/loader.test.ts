/**
 * ELF loader: headers, segments, sections and symbols against llvm-readelf
 * for every fixture (ELF32/64, little/big endian) and sample kernel; exact
 * 64-bit values in the kernel's high half; every bad-input error.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as elfy from 'elfy';
import {
  ImageError, assertSupportedArch, loadElf, parseElf, requireLines, requireSymbols,
} from '../../../emulator/elf';
import { readSymbols } from '../../../emulator/elf/symbols';
import { assertGoldenFresh, fixture, goldenImages, parseReadelf } from '../../fixtures/elf/goldens';

const SECTION_TYPES: Record<string, number> = {
  NULL: 0, PROGBITS: 1, SYMTAB: 2, STRTAB: 3, RELA: 4, HASH: 5, DYNAMIC: 6, NOTE: 7, NOBITS: 8, REL: 9,
  DYNSYM: 11, INIT_ARRAY: 14, FINI_ARRAY: 15, GROUP: 17, RISCV_ATTRIBUTES: 0x70000003, ARM_ATTRIBUTES: 0x70000003,
};
const SEGMENT_TYPES: Record<string, number> = {
  NULL: 0, LOAD: 1, DYNAMIC: 2, INTERP: 3, NOTE: 4, PHDR: 6, TLS: 7,
  GNU_EH_FRAME: 0x6474e550, GNU_STACK: 0x6474e551, GNU_RELRO: 0x6474e552, RISCV_ATTRIBUTES: 0x70000003,
};
const SYM_TYPES: Record<string, string> = { NOTYPE: 'notype', OBJECT: 'object', FUNC: 'func', SECTION: 'section', FILE: 'file', TLS: 'tls' };
const SYM_BINDS: Record<string, string> = { LOCAL: 'local', GLOBAL: 'global', WEAK: 'weak' };
const SHN: Record<string, number> = { UND: 0, ABS: 0xfff1, COM: 0xfff2 };

function expectImageError(fn: () => unknown, file: string, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ImageError, `ImageError, got ${String(e)}`);
    assert.equal(e.file, file);
    assert.match(e.message, pattern);
    assert.ok(!e.message.includes('\n'), 'one-line message');
    return true;
  });
}

describe('elf loader matches llvm-readelf', () => {
  const images = goldenImages();
  test('goldens cover ELF32 big- and little-endian, ELF64 and the stripped fixtures', () => {
    const names = images.map((g) => g.name);
    for (const n of ['x86_64', 'aarch64', 'riscv64', 'ppc32be', 'i386-dwarf2', 'x86_64-stripped', 'x86_64-nodebug']) assert.ok(names.includes(n), n);
  });
  for (const g of images) {
    test(g.name, () => {
      assertGoldenFresh(g);
      const img = loadElf(g.path);
      const e = parseReadelf(g.readelf);
      assert.equal(img.elfClass, e.elfClass);
      assert.equal(img.endian, e.endian);
      assert.equal(img.type, e.type === 'EXEC' ? 2 : e.type === 'DYN' ? 3 : e.type === 'REL' ? 1 : -1);
      assert.equal(img.entry, e.entry, 'e_entry');

      assert.equal(img.segments.length, e.segments.length, 'segment count');
      img.segments.forEach((s, i) => {
        const x = e.segments[i];
        const unknown = /^<unknown>: (0x[0-9a-f]+)$/.exec(x.type);
        if (unknown) assert.equal(s.type, Number(unknown[1]), `segment ${i} type`);
        if (x.type in SEGMENT_TYPES) assert.equal(s.type, SEGMENT_TYPES[x.type], `segment ${i} type`);
        assert.deepEqual(
          [s.offset, s.vaddr, s.paddr, s.filesz, s.memsz, s.align],
          [x.offset, x.vaddr, x.paddr, x.filesz, x.memsz, x.align], `segment ${i}`);
        const flags = (s.flags & 4 ? 'R' : '') + (s.flags & 2 ? 'W' : '') + (s.flags & 1 ? 'E' : '');
        assert.equal(flags, x.flags, `segment ${i} flags`);
        assert.equal(BigInt(s.data.length), s.filesz);
      });

      assert.equal(img.sections.length, e.sections.length, 'section count');
      img.sections.forEach((s, i) => {
        const x = e.sections[i];
        assert.equal(s.index, x.index);
        assert.equal(s.name, x.name, `section ${i} name`);
        if (x.type in SECTION_TYPES) assert.equal(s.type, SECTION_TYPES[x.type], `section ${s.name} type`);
        assert.deepEqual(
          [s.addr, s.offset, s.size, s.entsize, s.addralign, s.link, s.info],
          [x.addr, x.offset, x.size, x.entsize, x.addralign, x.link, x.info], `section ${s.name}`);
        assert.equal(img.section(s.name)?.name, s.name);
      });

      const symtab = img.sections.find((s) => s.type === 2) ?? img.sections.find((s) => s.type === 11);
      const syms = symtab ? readSymbols(symtab, img.sections, img.elfClass, img.endian === 'little') : [];
      assert.equal(syms.length, Math.max(0, e.symbols.length - 1), 'symbol count (without the null symbol)');
      syms.forEach((s, i) => {
        const x = e.symbols[i + 1];
        assert.deepEqual(
          // llvm-readelf shows a section symbol by its section's name
          [s.type === 'section' && s.name === '' ? img.sections[s.shndx].name : s.name, s.value, s.size, s.type, s.bind, s.shndx],
          [x.name, x.value, x.size, SYM_TYPES[x.type] ?? 'other', SYM_BINDS[x.bind] ?? 'other', SHN[x.ndx] ?? Number(x.ndx)],
          `symbol ${x.num}`);
      });
      assert.equal(img.symbols.count, syms.filter((s) => s.name !== '').length);
    });
  }
});

describe('elf loader: exact 64-bit values', () => {
  const path = fixture('x86_64.elf');
  const img = loadElf(path);
  const HIGH = 0xffffffff81000000n;

  test('entry, symbol values, segment vaddrs and line addresses in the 0xffffffff81000000 range are exact', () => {
    assert.equal(img.entry, img.symbols.lookup('_start')!.value);
    assert.ok(img.entry >= HIGH);
    // the values would not survive a JS number: this test would catch a rounding path
    assert.notEqual(BigInt(Number(img.entry)), img.entry);
    const text = img.segments.find((s) => s.type === 1 && (s.flags & 1) !== 0)!;
    assert.equal(text.vaddr, HIGH);
    assert.equal(img.section('.text')!.addr, HIGH);
    assert.equal(img.symbols.lookup('sum_table')!.value, HIGH);
    for (const f of img.symbols.functions()) assert.ok(f.value >= HIGH && f.value < HIGH + 0x1000n, f.name);
    const rows = img.lines!.rows();
    assert.ok(rows.length > 0);
    for (const r of rows) assert.ok(r.address >= HIGH && r.address <= HIGH + 0x1000n, `row 0x${r.address.toString(16)}`);
  });

  test('elfy alone rounds them and misreads ELF64 sh_addralign/sh_entsize; the loader does not', () => {
    const raw = elfy.parse(readFileSync(path));
    const e = parseReadelf(readFileSync(fixtureGolden('x86_64'), 'utf8'));
    const rodata = e.sections.find((s) => s.name === '.rodata')!;
    assert.equal(rodata.entsize, 0x20n);
    assert.equal(rodata.addralign, 16n);
    const elfyRodata = raw.body.sections.find((s) => s.name === '.rodata') as unknown as { entsize: number; addralign: number; addr: number };
    assert.notEqual(BigInt(elfyRodata.entsize), rodata.entsize, 'elfy reads sh_entsize at the wrong offset');
    assert.notEqual(BigInt(elfyRodata.addralign), rodata.addralign, 'elfy reads sh_addralign at the wrong offset');
    assert.equal(img.section('.rodata')!.entsize, rodata.entsize);
    assert.equal(img.section('.rodata')!.addralign, rodata.addralign);
    assert.equal(img.section('.symtab')!.entsize, 24n);
    assert.equal(img.section('.symtab')!.addralign, 8n);
    assert.notEqual(BigInt((raw as unknown as { entry: number }).entry), img.entry, 'elfy rounds e_entry');
  });
});

function fixtureGolden(name: string): string {
  return fixture(`../goldens/${name}.readelf.txt`);
}

describe('elf loader: architectures', () => {
  const cases: Array<[string, string, 32 | 64, 'little' | 'big']> = [
    ['x86_64.elf', 'x86_64', 64, 'little'],
    ['aarch64.elf', 'aarch64', 64, 'little'],
    ['riscv64.elf', 'riscv64', 64, 'little'],
    ['ppc32be.elf', 'ppc', 32, 'big'],
    ['i386-dwarf2.elf', 'i386', 32, 'little'],
  ];
  for (const [file, arch, cls, endian] of cases) {
    test(`${file}: ${arch}, ELF${cls}, ${endian} endian`, () => {
      const img = loadElf(fixture(file));
      assert.equal(img.archName, arch);
      assert.equal(img.elfClass, cls);
      assert.equal(img.endian, endian);
    });
  }

  test('assertSupportedArch accepts a listed arch and names the machine otherwise', () => {
    const supported = ['x86_64', 'aarch64', 'riscv64'];
    assertSupportedArch(loadElf(fixture('riscv64.elf')), supported);
    const ppc = fixture('ppc32be.elf');
    expectImageError(() => assertSupportedArch(loadElf(ppc), supported), ppc,
      /: unsupported machine ppc \(e_machine 20\); supported: x86_64, aarch64, riscv64$/);
  });
});

describe('elf loader: bad input', () => {
  const good = new Uint8Array(readFileSync(fixture('x86_64.elf')));
  const img = parseElf(good, 'k.elf');
  const dv = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

  test('not an ELF file', () => {
    expectImageError(() => parseElf(new TextEncoder().encode('#!/bin/sh\necho hi\n'), 'script.sh'), 'script.sh', /^script\.sh: not an ELF file \(bad magic\)$/);
    expectImageError(() => parseElf(new Uint8Array(0), 'empty'), 'empty', /not an ELF file/);
  });

  test('missing file and directory', () => {
    expectImageError(() => loadElf('/nonexistent/kernel.elf'), '/nonexistent/kernel.elf', /: no such file$/);
    const dir = fixture('');
    expectImageError(() => loadElf(dir), dir, /is a directory/);
  });

  test('truncated header', () => {
    expectImageError(() => parseElf(good.slice(0, 40), 'k.elf'), 'k.elf', /^k\.elf: truncated: ELF64 header needs 64 bytes, file has 40$/);
    expectImageError(() => parseElf(good.slice(0, 10), 'k.elf'), 'k.elf', /truncated: ELF identification/);
  });

  test('invalid class / data encoding', () => {
    const b = good.slice(); b[4] = 7;
    expectImageError(() => parseElf(b, 'k.elf'), 'k.elf', /invalid ELF class 7/);
    const c = good.slice(); c[5] = 0;
    expectImageError(() => parseElf(c, 'k.elf'), 'k.elf', /invalid ELF data encoding 0/);
  });

  test('truncated program headers and section headers', () => {
    expectImageError(() => parseElf(good.slice(0, 100), 'k.elf'), 'k.elf', /truncated: program headers \(\d+ at offset 0x40\) end at 0x[0-9a-f]+, beyond file size 0x64/);
    expectImageError(() => parseElf(good.slice(0, good.length - 10), 'k.elf'), 'k.elf', /truncated: section headers/);
  });

  test('truncated segment', () => {
    const b = good.slice();
    const i = img.segments.findIndex((s) => s.type === 1 && s.filesz > 0n && s.vaddr >= 0xffffffff81000000n);
    const phoff = Number(dv(b).getBigUint64(32, true));
    dv(b).setBigUint64(phoff + i * 56 + 32, 0x100000n, true); // p_filesz
    dv(b).setBigUint64(phoff + i * 56 + 40, 0x100000n, true); // p_memsz
    expectImageError(() => parseElf(b, 'k.elf'), 'k.elf', new RegExp(`truncated: segment ${i} \\(LOAD at vaddr 0xffffffff81000000\\) file bytes 0x[0-9a-f]+\\.\\.0x[0-9a-f]+ beyond file size`));
  });

  test('truncated section', () => {
    const b = good.slice();
    const sec = img.section('.debug_line')!;
    const shoff = Number(dv(b).getBigUint64(40, true));
    dv(b).setBigUint64(shoff + sec.index * 64 + 32, 0x10000000n, true); // sh_size
    expectImageError(() => parseElf(b, 'k.elf'), 'k.elf', new RegExp(`truncated: section \\[${sec.index}\\] \\.debug_line bytes`));
  });

  test('stripped image: no symbol table', () => {
    const p = fixture('x86_64-stripped.elf');
    const s = loadElf(p);
    assert.equal(s.symbols.count, 0);
    assert.equal(s.symbols.lookup('do_fork'), undefined);
    assert.equal(s.symbols.format(0xffffffff81000004n), '0xffffffff81000004');
    expectImageError(() => requireSymbols(s), p, /: no symbol table/);
  });

  test('no debug info', () => {
    const p = fixture('x86_64-nodebug.elf');
    const s = loadElf(p);
    assert.equal(s.lines, null);
    assert.ok(s.symbols.count > 0);
    expectImageError(() => requireLines(s), p, /: no debug info \(\.debug_line missing/);
    assert.ok(requireLines(img).rows().length > 0);
  });

  test('malformed .debug_line is reported when lines are read, naming the offset', () => {
    const b = good.slice();
    const off = Number(img.section('.debug_line')!.offset);
    dv(b).setUint16(off + 4, 9, true); // version of the first unit
    const bad = parseElf(b, 'k.elf');
    assert.ok(bad.symbols.count > 0, 'symbols still load');
    expectImageError(() => bad.lines, 'k.elf', /^k\.elf: malformed \.debug_line unit at offset 0x0: unsupported version 9 \(2-5 supported\)$/);
  });

  test('zlib-compressed debug sections give the same rows', () => {
    const z = loadElf(fixture('x86_64-zdebug.elf'));
    assert.equal((z.section('.debug_line')!.flags & 0x800n), 0x800n);
    assert.deepEqual(z.lines!.rows(), img.lines!.rows().map((r) => r));
  });
});
