/**
 * Memory.readBytes copies a few bytes (at most 64 from one region) in a
 * loop and more through a view: every length, at every offset around a
 * region boundary, reads what byte-by-byte reads give, and an unmapped
 * byte is still a fault naming its address.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, MemoryFault, PERM_R, PERM_W, PERM_X } from '../../emulator/memory/memory';

describe('Memory.readBytes', () => {
  test('every length 1..100 at offsets across a region boundary equals byte-by-byte reads', () => {
    const m = new Memory();
    const base = 0x400000;
    m.map(base, 0x1000, PERM_R | PERM_W | PERM_X, 'text');
    m.map(base + 0x1000, 0x1000, PERM_R | PERM_W, 'data');
    const fill = new Uint8Array(0x2000);
    for (let i = 0; i < fill.length; i++) fill[i] = (i * 37 + 11) & 0xff;
    m.writeBytes(base, fill, 'loader');
    for (let start = base + 0x1000 - 80; start < base + 0x1000 + 8; start += 3) {
      for (let len = 1; len <= 100; len++) {
        const want = Array.from({ length: len }, (_, k) => m.read8(start + k));
        assert.deepEqual([...m.readBytes(start, len)], want, `readBytes(0x${start.toString(16)}, ${len})`);
      }
    }
  });

  test('a read reaching an unmapped byte faults at that byte', () => {
    const m = new Memory();
    const base = 0x400000;
    m.map(base, 0x1000, PERM_R, 'text');
    assert.throws(() => m.readBytes(base + 0x1000 - 10, 20), (e: unknown) => e instanceof MemoryFault && e.addr === base + 0x1000);
    assert.throws(() => m.readBytes(base + 0x1000 - 100, 120), (e: unknown) => e instanceof MemoryFault && e.addr === base + 0x1000);
  });
});
