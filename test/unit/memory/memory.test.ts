import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, MemoryFault, PERM_R, PERM_W, PERM_X, PERM_U } from '../../../emulator/memory/memory';
import { toVAddr, fromVAddr, mustVAddr, vaddrFromHalves, lo32, hi32, hex64 } from '../../../emulator/memory/address';
import { textPoke } from '../../../emulator/memory/textPoke';

describe('64-bit addresses', () => {
  test('kernel addresses above 2^53 survive the VAddr round trip exactly', () => {
    for (const a of [0xffffffff81000000n, 0xffffffff81000001n, 0xffffffffa0000fffn, 0xffff800008000000n,
      0xffffffff80000000n, 0x400000n, 0x7fffffffffffn, 0xffff800000000000n]) {
      const v = toVAddr(a);
      assert.notEqual(v, null, hex64(a));
      assert.equal(fromVAddr(v!), a);
      assert.equal(vaddrFromHalves(lo32(v!), hi32(v!)), v);
    }
  });
  test('non-canonical addresses have no VAddr', () => {
    assert.equal(toVAddr(0x0000800000000000n), null);
    assert.equal(toVAddr(0xfffe7fffffffffffn), null);
    assert.throws(() => mustVAddr(0x8000000000000000n), /not canonical/);
    assert.equal(vaddrFromHalves(0, 0x8000), null);
  });
});

describe('memory bus', () => {
  const base = mustVAddr(0xffffffff81000000n);
  function mk(): Memory {
    const m = new Memory();
    m.map(base, 0x1000, PERM_R | PERM_X, 'text');
    m.map(base + 0x1000, 0x1000, PERM_R | PERM_W, 'data');
    return m;
  }
  test('little-endian reads and writes at every width', () => {
    const m = mk();
    const d = base + 0x1000;
    m.write32(d, 0xdeadbeef);
    assert.equal(m.read8(d), 0xef);
    assert.equal(m.read16(d), 0xbeef);
    assert.equal(m.read32(d), 0xdeadbeef);
    m.write64(d + 8, 0x1122334455667788n);
    assert.equal(m.read64(d + 8), 0x1122334455667788n);
    assert.equal(m.read32(d + 12), 0x11223344);
  });
  test('unmapped and permission faults are MemoryFault with the exact address', () => {
    const m = mk();
    assert.throws(() => m.read8(base + 0x2000), (e: unknown) =>
      e instanceof MemoryFault && !e.present && e.address === 0xffffffff81002000n && e.access === 'read');
    assert.throws(() => m.write8(base, 1), (e: unknown) => e instanceof MemoryFault && e.present && e.access === 'write');
    assert.throws(() => m.fetch8(base + 0x1000), (e: unknown) => e instanceof MemoryFault && e.access === 'exec');
    m.userMode = true; m.flushTlb();
    assert.throws(() => m.read8(base), (e: unknown) => e instanceof MemoryFault && e.present && e.user);
  });
  test('user regions are readable in user mode', () => {
    const m = new Memory('proc');
    m.map(0x400000, 0x1000, PERM_R | PERM_W | PERM_U, 'user');
    m.userMode = true;
    m.write8(0x400010, 7);
    assert.equal(m.read8(0x400010), 7);
  });
  test('accesses straddling the end of a region fault', () => {
    const m = mk();
    assert.throws(() => m.read32(base + 0x1ffe), MemoryFault);
  });
  test('overlapping regions are refused with both names', () => {
    const m = mk();
    assert.throws(() => m.map(base + 0x800, 0x1000, PERM_R, 'bad'), /bad .* overlaps text/);
  });
  test('textPoke patches read-only text, returns the old bytes and notifies listeners', () => {
    const m = mk();
    m.writeBytes(base, Uint8Array.of(0x55, 0x48, 0x89, 0xe5));
    const inval: Array<[number, number]> = [];
    const pokes: number[] = [];
    m.codeWriteListeners.push((a, n) => inval.push([a, n]));
    m.textPokeListeners.push(a => pokes.push(a));
    const old = textPoke(m, base + 1, Uint8Array.of(0xcc));
    assert.deepEqual([...old], [0x48]);
    assert.deepEqual([...m.readBytes(base, 4)], [0x55, 0xcc, 0x89, 0xe5]);
    assert.deepEqual(inval, [[base + 1, 1]]);
    assert.deepEqual(pokes, [base + 1]);
  });
  test('readCString stops at NUL and faults past the end of memory', () => {
    const m = mk();
    m.writeBytes(base + 0x1000, new TextEncoder().encode('do_fork\0x'));
    assert.equal(m.readCString(base + 0x1000), 'do_fork');
    m.writeBytes(base + 0x1ffd, Uint8Array.of(0x41, 0x42, 0x43));
    assert.throws(() => m.readCString(base + 0x1ffd), MemoryFault);
  });
});
