/**
 * Symbol table: lookup, kallsyms-like resolve and kernel-style format,
 * checked against the values llvm-readelf reports.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../../emulator/elf';
import { GOLDEN_DIR, fixture, parseReadelf } from '../../fixtures/elf/goldens';

function golden(name: string) {
  return parseReadelf(readFileSync(join(GOLDEN_DIR, `${name}.readelf.txt`), 'utf8'));
}

for (const arch of ['x86_64', 'aarch64', 'riscv64', 'ppc32be']) {
  describe(`symbols (${arch})`, () => {
    const img = loadElf(fixture(`${arch}.elf`));
    const g = golden(arch).symbols;
    const gsym = (name: string, bind = 'GLOBAL') => g.find((s) => s.name === name && s.bind === bind)!;
    const hex = (v: bigint) => '0x' + v.toString(16);

    test('lookup by name gives the readelf value, size and type', () => {
      for (const name of ['do_fork', 'sum_table', 'helper', '_start']) {
        const s = img.symbols.lookup(name)!;
        assert.equal(s.value, gsym(name).value, name);
        assert.equal(s.size, gsym(name).size, name);
        assert.equal(s.type, 'func');
      }
      assert.equal(img.symbols.lookup('counter')!.type, 'object');
      assert.equal(img.symbols.lookup('no_such_symbol'), undefined);
    });

    test('a repeated name prefers the global symbol over the local one', () => {
      assert.ok(g.some((s) => s.name === 'twin' && s.bind === 'LOCAL'), 'fixture has a local twin');
      const s = img.symbols.lookup('twin')!;
      assert.equal(s.bind, 'global');
      assert.equal(s.value, gsym('twin').value);
    });

    test('resolve/format an address inside a function: name+off/size', () => {
      const f = gsym('do_fork');
      assert.ok(f.size > 4n);
      const r = img.symbols.resolve(f.value + 4n)!;
      assert.equal(r.sym.name, 'do_fork');
      assert.equal(r.offset, 4n);
      assert.equal(img.symbols.format(f.value + 4n), `do_fork+0x4/${hex(f.size)}`);
      assert.equal(img.symbols.format(f.value + 4n, false), 'do_fork+0x4');
      assert.equal(img.symbols.format(f.value), `do_fork+0x0/${hex(f.size)}`);
      const last = f.value + f.size - 1n;
      assert.equal(img.symbols.resolve(last)!.sym.name, 'do_fork');
    });

    test('the local function is found by address even though lookup prefers the global', () => {
      const local = gsym('twin', 'LOCAL');
      assert.equal(img.symbols.format(local.value + 1n), `twin+0x1/${hex(local.size)}`);
    });

    test('a zero-size assembler label resolves as nearest preceding symbol, without size', () => {
      const l = gsym('asm_label');
      assert.equal(l.size, 0n);
      assert.equal(img.symbols.format(l.value + 4n), 'asm_label+0x4');
      assert.equal(img.symbols.resolve(l.value + 4n)!.offset, 4n);
    });

    test('object symbols resolve too; unknown addresses format as hex', () => {
      const c = gsym('counter');
      assert.equal(img.symbols.format(c.value + 2n), `counter+0x2/${hex(c.size)}`);
      assert.equal(img.symbols.resolve(0x10n), undefined);
      assert.equal(img.symbols.format(0x10n), '0x10');
    });

    test('functions() lists only functions, ascending; all() every named symbol', () => {
      const fs = img.symbols.functions();
      assert.ok(fs.length >= 6);
      for (const f of fs) assert.equal(f.type, 'func');
      for (let i = 1; i < fs.length; i++) assert.ok(fs[i - 1].value <= fs[i].value);
      // section symbols have no name of their own (readelf shows the section's)
      assert.equal(img.symbols.all().length, g.filter((s) => s.name !== '' && s.type !== 'SECTION').length);
      assert.equal(img.symbols.count, img.symbols.all().length);
    });
  });
}

test('aarch64 mapping symbols ($x, $d) never name an address', () => {
  const img = loadElf(fixture('aarch64.elf'));
  assert.ok(img.symbols.all().some((s) => s.name.startsWith('$x')), 'fixture has mapping symbols');
  const f = img.symbols.lookup('sum_table')!;
  assert.equal(img.symbols.resolve(f.value)!.sym.name, 'sum_table');
  for (const s of img.symbols.all()) {
    const r = img.symbols.resolve(s.value);
    if (r) assert.ok(!r.sym.name.startsWith('$'), `0x${s.value.toString(16)} -> ${r.sym.name}`);
  }
});
