/**
 * Memory.textWrites counts every change to executable bytes other than a
 * textPoke patch, whoever makes it (a CPU store, a bulk write of any
 * source, a write through another space's window onto the same bytes);
 * watchText makes translated code's stores into the bytes take the path
 * that counts (the pages join codePages). The optimizer trusts its scan of
 * a function while the count (and tlbGeneration) is unchanged.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, PERM_R, PERM_W, PERM_X } from '../../emulator/memory/memory';
import { Backing } from '../../emulator/memory/backing';
import { mustVAddr } from '../../emulator/memory/address';
import { textPoke } from '../../emulator/memory/textPoke';

const base = mustVAddr(0xffffffff81000000n);

function mk(): Memory {
  const m = new Memory();
  m.map(base, 0x2000, PERM_R | PERM_W | PERM_X, 'text');
  m.map(base + 0x2000, 0x1000, PERM_R | PERM_W, 'data');
  return m;
}

describe('Memory.textWrites', () => {
  test('CPU stores of every width into executable bytes count; stores into data do not', () => {
    const m = mk();
    let n = m.textWrites;
    m.write8(base + 1, 0x90); assert.ok(m.textWrites > n, 'write8'); n = m.textWrites;
    m.write16(base + 2, 0x9090); assert.ok(m.textWrites > n, 'write16'); n = m.textWrites;
    m.write32(base + 4, 0x90909090); assert.ok(m.textWrites > n, 'write32'); n = m.textWrites;
    m.write64(base + 8, 0x9090909090909090n); assert.ok(m.textWrites > n, 'write64'); n = m.textWrites;
    m.write64Halves(base + 16, 0x90909090, 0x90909090); assert.ok(m.textWrites > n, 'write64Halves'); n = m.textWrites;
    m.storedInPlace(m.regionAt(base)!, base + 24, 8); assert.ok(m.textWrites > n, 'storedInPlace'); n = m.textWrites;
    m.write64(base + 0x2000, 1n);
    m.writeBytes(base + 0x2008, new Uint8Array([1, 2, 3]), 'kernel');
    assert.equal(m.textWrites, n, 'data writes');
  });

  test('bulk writes of every source but textPoke count', () => {
    const m = mk();
    for (const source of ['cpu', 'uaccess', 'engine', 'kernel', 'loader', 'debugger'] as const) {
      const n = m.textWrites;
      m.writeBytes(base + 0x10, new Uint8Array([0xc3]), source);
      assert.ok(m.textWrites > n, source);
    }
    const n = m.textWrites;
    textPoke(m, base + 0x20, new Uint8Array([0xcc]));
    m.writeBytes(base + 0x21, new Uint8Array([0xcc]), 'textPoke');
    m.codeMeaningChanged(base + 0x20, 1);
    assert.equal(m.textWrites, n, 'the patches of text_poke and a native entry\'s new meaning are not counted');
    assert.equal(m.read8(base + 0x20), 0xcc);
  });

  test('a write through another space onto the same bytes counts in the space that executes them', () => {
    const b = Backing.anonymous(new Uint8Array(0x1000));
    const kernel = new Memory('kernel');
    kernel.mapBacking(base, 0x1000, PERM_R | PERM_X, 'text', b, 0);
    const other = new Memory('other');
    const alias = mustVAddr(0x400000n);
    other.mapBacking(alias, 0x1000, PERM_R | PERM_W, 'alias', b, 0);
    const n = kernel.textWrites;
    other.write32(alias + 0x40, 0x90909090);
    assert.ok(kernel.textWrites > n, 'alias store');
    assert.equal(kernel.read32(base + 0x40), 0x90909090);
    const k = kernel.textWrites;
    textPoke(other, alias + 0x44, new Uint8Array([0xcc]));
    assert.equal(kernel.textWrites, k, 'a textPoke through the alias');
  });

  test('watchText enters the pages in codePages (translated stores then leave translated code) and says so', () => {
    const m = mk();
    const t0 = m.tlbGeneration;
    assert.equal(m.watchText(base + 0xff0, 0x20), true);
    assert.ok(m.codePages.has(Math.floor(base / 4096)) && m.codePages.has(Math.floor(base / 4096) + 1), 'both pages');
    assert.notEqual(m.tlbGeneration, t0, 'translated TLBs are flushed so that no cached direct-store entry survives');
    const t1 = m.tlbGeneration;
    m.watchText(base + 0x10, 4);
    assert.equal(m.tlbGeneration, t1, 'pages already watched: nothing to flush');
  });

  test('a space whose bytes live in another memory cannot promise the count', () => {
    class Elsewhere extends Memory { override get directMemory(): Memory { return phys; } }
    const phys = mk();
    assert.equal(new Elsewhere('linear').watchText(base, 16), false);
  });
});
