/**
 * Module relocations against a real linker (a module's code must be patched
 * exactly): each example module of every arch (examples/modules/build/*.ko)
 * and the loader's x86_64 gcc / clang fixtures relocated by the arch's
 * applyRelocateAdd at the addresses ld.lld gave its sections
 * (test/fixtures/modules/lld/link.sh: undefined symbols --defsym'd at fixed
 * addresses, no string merging) must give the bytes lld wrote, section by
 * section.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { parseRelObject, SHF_ALLOC, SHN_ABS, SHN_UNDEF } from '../../emulator/kernel/modules/object';
import { moduleRelocsFor } from '../../emulator/arch/registry';
import { repoPath } from '../util/paths';

const DIRS = [repoPath('examples', 'modules', 'build'), repoPath('test', 'fixtures', 'modules', 'bin')];
const LLD = repoPath('test', 'fixtures', 'modules', 'lld');
const SHT_NOBITS = 8;

/** the linked output section an input section went to (lld names them after the input, .rodata.* -> .rodata) */
function outName(name: string): string {
  for (const p of ['.text', '.rodata', '.data', '.bss', '.init.text', '.init.data']) if (name === p || name.startsWith(`${p}.`)) return p;
  return name;
}

describe('module relocations = ld.lld\'s', () => {
  // hello-x86_64-gcc.ko has .rodata and .rodata.str1.1, two inputs of one output section: where each
  // landed inside it would need lld's map file, so it is compared through the clang build only
  const kos = DIRS.flatMap(d => readdirSync(d).filter(f => f.endsWith('.ko') && !f.includes('-riscv64-clang') && f !== 'hello-x86_64-gcc.ko')
    .map(f => ({ dir: d, ko: f })));
  test('the example modules of every arch and the gcc / clang fixtures have reference links', () => {
    assert.ok(kos.length >= 20, kos.map(k => k.ko).join(' '));
  });
  for (const { dir, ko } of kos) {
    test(ko, () => {
      const obj = parseRelObject(new Uint8Array(readFileSync(join(dir, ko))), ko);
      const relocs = moduleRelocsFor(obj.image.archName);
      assert.ok(relocs, obj.image.archName);
      const linked = loadElf(join(LLD, ko.replace(/\.ko$/, '.elf')));
      const alloc = obj.sections.filter(s => (s.flags & SHF_ALLOC) !== 0n && s.size > 0n);
      const addr = new Map<number, bigint>();
      for (const s of alloc) {
        const same = alloc.filter(x => outName(x.name) === outName(s.name));
        assert.equal(same.length, 1, `one input per output section (${s.name})`);
        const out = linked.section(outName(s.name));
        assert.ok(out, `${s.name} -> ${outName(s.name)} in the link`);
        assert.equal(out.size, s.size, `${s.name}: no merging, same size`);
        addr.set(s.index, out.addr);
      }
      const value = (i: number): bigint => {
        const sym = obj.symbols[i];
        if (sym.shndx === SHN_UNDEF) {
          const d = linked.symbols.lookup(sym.name);
          assert.ok(d, `the link defines ${sym.name}`);
          return d.value;
        }
        if (sym.shndx === SHN_ABS) return sym.value;
        const base = addr.get(sym.shndx);
        return base === undefined ? sym.value : base + sym.value;
      };
      let checked = 0;
      for (const [target, relas] of obj.relas) {
        const sec = obj.sections[target];
        const at = addr.get(target);
        if (at === undefined || sec.type === SHT_NOBITS) continue;
        const bytes = sec.data.slice();
        const err = relocs.applyRelocateAdd({ bytes, addr: at, name: sec.name }, relas, value);
        assert.equal(err, undefined);
        assert.deepEqual([...bytes], [...(linked.section(outName(sec.name)) as { data: Uint8Array }).data], `${ko} ${sec.name}`);
        checked += relas.length;
      }
      assert.ok(checked > 0, `${checked} relocations compared`);
    });
  }
});
