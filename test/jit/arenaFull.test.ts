/**
 * A translator can be made while the guest arena's page-frame range is
 * full: earlier machines of the process give their frames back only when
 * they are collected, and a riscv64 run after four other machines in one
 * ftracetest process used to stop with "no room in the guest arena for the
 * chain table". The chain tables come from the arena's reserved head
 * (guestTableBytes), so every arch's translator, in both modes, is made
 * and its chain table is a view of the arena.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ARENA_RESERVED, arenaOffset, guestBuffer, guestBytes, guestTableBytes } from '../../emulator/memory/guestRam';
import { translatorFor } from '../../emulator/jit/index';
import { x86_64 } from '../../emulator/arch/x86_64/index';
import { aarch64 } from '../../emulator/arch/aarch64/index';
import { riscv64 } from '../../emulator/arch/riscv64/index';
import type { FrontEnd } from '../../emulator/jit/ir';

test('with the page-frame range of the arena full, every translator is still made with its chain table in the arena', () => {
  assert.ok(guestBuffer() !== null, 'this host reserves the guest arena');
  // fill the page-frame range: allocations halve until one falls back to an ordinary array
  const held: Uint8Array[] = [];
  for (let size = 1 << 30; size >= 4096;) {
    const b = guestBytes(size);
    if (arenaOffset(b) < 0) { size >>= 1; continue; }
    held.push(b);
  }
  assert.ok(arenaOffset(guestBytes(4096)) < 0, 'the page-frame range is full');
  for (const arch of [x86_64, aarch64, riscv64]) {
    for (const mode of ['on', 'lockstep'] as const) {
      const t = translatorFor(arch.name, arch.jit as FrontEnd<unknown, never>, mode);
      assert.ok(t !== null, `${arch.name} ${mode}: a translator`);
    }
  }
  const table = guestTableBytes(4096);
  const off = arenaOffset(table);
  assert.ok(off >= 0 && off < ARENA_RESERVED, `a further table is in the reserved head (offset ${off})`);
  assert.ok(held.length > 0);
});
