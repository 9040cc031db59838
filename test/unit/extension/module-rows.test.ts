/** Rows of the Modules view (extension/moduleTree.ts texts, emulator/debug/probeRows.ts moduleRows). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { moduleRows } from '../../../emulator/debug/probeRows';
import type { KernelModule } from '../../../emulator/kernel/modules/modules';
import { moduleDescription, moduleLabel } from '../../../extension/probeRows';

test('a module row: lsmod\'s fields plus the probes placed in its live code', () => {
  const user = { name: 'user' } as KernelModule;
  const m = {
    name: 'hello', path: '/m/hello.ko', state: 'live', core: { lo: 0xffffffffa0400000n, hi: 0xffffffffa040008bn },
    init: { lo: 0xffffffffa0401000n, hi: 0xffffffffa040104cn }, initFreed: true, usedBy: new Set([user]),
  } as unknown as KernelModule;
  const [row] = moduleRows([m], [0xffffffffa0400010n, 0xffffffffa0400010n, 0xffffffffa0401000n, 0xffffffff81000000n]);
  assert.deepEqual(row, { name: 'hello', path: '/m/hello.ko', state: 'live', base: '0xffffffffa0400000', size: 0x8b, usedBy: ['user'], probesIn: 1 });
  assert.equal(moduleLabel(row), 'hello  0xffffffffa0400000');
  assert.equal(moduleDescription(row), '139 bytes  live  used by user  1 probe in it');
});
