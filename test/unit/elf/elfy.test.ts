/**
 * The loader on top of elfy: each way elfy alone gets an ELF wrong (listed in
 * emulator/elf/elfFile.ts) shown on elfy's own output, then the loader's
 * value compared with the right one.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as elfy from 'elfy';
import { parseElf } from '../../../emulator/elf';
import { fixture } from '../../fixtures/elf/goldens';

const good = new Uint8Array(readFileSync(fixture('x86_64.elf')));
const img = parseElf(good, 'k.elf');
const dv = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
const phoff = Number(dv(good).getBigUint64(32, true));
const shoff = Number(dv(good).getBigUint64(40, true));
const elfyParse = (b: Uint8Array): elfy.ElfyFile => elfy.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('elf loader: what elfy gets wrong', () => {
  test('e_machine missing from elfy\'s table (EM_RISCV) is re-read', () => {
    const rv = new Uint8Array(readFileSync(fixture('riscv64.elf')));
    assert.equal(elfyParse(rv).machine, undefined);
    const r = parseElf(rv, 'rv.elf');
    assert.equal(r.machine, 243);
    assert.equal(r.archName, 'riscv64');
  });

  test('p_type missing from elfy\'s table (PT_GNU_PROPERTY) is re-read', () => {
    const b = good.slice();
    const i = img.segments.findIndex((s) => s.type === 0x6474e551); // GNU_STACK
    assert.ok(i >= 0);
    dv(b).setUint32(phoff + i * 56, 0x6474e553, true);
    assert.equal(elfyParse(b).body.programs[i].type, undefined);
    assert.equal(parseElf(b, 'k.elf').segments[i].type, 0x6474e553);
  });

  test('flags come back as masks, including bits elfy has no name for', () => {
    const b = good.slice();
    const text = img.section('.text')!;
    const f = dv(b).getBigUint64(shoff + text.index * 64 + 8, true);
    dv(b).setBigUint64(shoff + text.index * 64 + 8, f | 0x800n | 0x80000000n | (1n << 40n), true);
    const elfyFlags = elfyParse(b).body.sections[text.index].flags;
    assert.equal(Object.keys(elfyFlags).some((k) => Number(k) === 2 ** 40), false, 'elfy drops bit 40');
    assert.equal(parseElf(b, 'k.elf').section('.text')!.flags, f | 0x800n | 0x80000000n | (1n << 40n));
    const ppc = parseElf(new Uint8Array(readFileSync(fixture('ppc32be.elf'))), 'ppc.elf');
    const seg = ppc.segments.find((s) => s.type === 1 && (s.flags & 1) !== 0)!;
    assert.equal(seg.flags, 5, 'R E');
    assert.equal(ppc.section('.text')!.flags, 6n, 'AX');
  });

  test('SHT_NOBITS sections have no file bytes (elfy slices sh_size bytes anyway)', () => {
    const bss = img.section('.bss')!;
    assert.equal(bss.type, 8);
    assert.ok(bss.size > 0n);
    assert.ok(elfyParse(good).body.sections[bss.index].data.length > 0);
    assert.equal(bss.data.length, 0);
  });

  test('extended section numbering (e_shnum 0, e_shstrndx 0xffff) gives the same sections', () => {
    const b = good.slice();
    const shnum = dv(b).getUint16(60, true);
    const shstrndx = dv(b).getUint16(62, true);
    dv(b).setUint16(60, 0, true);
    dv(b).setUint16(62, 0xffff, true);
    dv(b).setBigUint64(shoff + 32, BigInt(shnum), true); // section 0 sh_size
    dv(b).setUint32(shoff + 40, shstrndx, true); // section 0 sh_link
    assert.throws(() => elfyParse(b));
    const x = parseElf(b, 'k.elf');
    assert.deepEqual(x.sections.map((s) => s.name), img.sections.map((s) => s.name));
    assert.equal(x.symbols.count, img.symbols.count);
  });

  test('no section-name table (e_shstrndx 0): sections load unnamed, symbols still resolve', () => {
    const b = good.slice();
    dv(b).setUint16(62, 0, true);
    assert.throws(() => elfyParse(b));
    const x = parseElf(b, 'k.elf');
    assert.equal(x.sections.length, img.sections.length);
    assert.ok(x.sections.every((s) => s.name === ''));
    assert.equal(x.symbols.lookup('_start')?.value, img.entry);
  });

  test('no section headers at all: segments still load', () => {
    const b = good.slice();
    dv(b).setBigUint64(40, 0n, true);
    dv(b).setUint16(60, 0, true);
    dv(b).setUint16(62, 0, true);
    assert.throws(() => elfyParse(b));
    const x = parseElf(b, 'k.elf');
    assert.equal(x.sections.length, 0);
    assert.deepEqual(x.segments.map((s) => s.vaddr), img.segments.map((s) => s.vaddr));
    assert.equal(x.symbols.count, 0);
  });

  test('a zero program-header entry size is rejected (elfy would walk no entries)', () => {
    const b = good.slice();
    dv(b).setUint16(54, 0, true);
    assert.equal(elfyParse(b).body.programs.length, 0);
    assert.throws(() => parseElf(b, 'k.elf'), /^ImageError: k\.elf: bad program headers entry size 0 \(needs at least 56\)$/);
  });
});
