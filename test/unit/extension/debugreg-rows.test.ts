/** Rows of the Debug Registers view and the Kprobes view's debug-register rows (extension/probeRows.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugRegisterInfo, ProbeInfo } from '../../../adapter/dapCustom';
import { debugRegisterDescription, debugRegisterLabel, kprobeLabel, kprobeListLine } from '../../../extension/probeRows';

test('a debug register row: its holder, or free; the users waiting for it', () => {
  const free: DebugRegisterInfo = { cpu: 0, name: 'DR2', pool: 'data', index: 2, waiting: [] };
  assert.equal(debugRegisterLabel(free), 'DR2  free');
  assert.equal(debugRegisterDescription(free), '');
  const held: DebugRegisterInfo = {
    cpu: 1, name: 'DR3', pool: 'data', index: 3,
    holder: { owner: 'debugger', addr: '0xffffffff81204010', where: 'boot_counter+0x0', len: 8, type: 'w', hits: 5, nmissed: 1 },
    waiting: [{ owner: 'kwatch', addr: '0xffffffff81204020', where: 'nr_forks+0x0', len: 8, type: 'rw', hits: 0, nmissed: 0 }],
  };
  assert.equal(debugRegisterLabel(held), 'DR3  w boot_counter+0x0  5/1');
  assert.equal(debugRegisterDescription(held), 'debugger  ffffffff81204010 len 8  (1 waiting: kwatch nr_forks+0x0)');
});

test('a kwatch in the Kprobes view: its own letter, the register, [SUSPENDED] while it waits', () => {
  const p: ProbeInfo = {
    id: 4, kind: 'kwatch', registered: true, name: 'nr_forks+0x0 (DR1, rw len 8)', address: '0xffffffff81204020',
    enabled: true, gone: false, optimized: false, ftrace: false, nhit: 7, nmissed: 0, symbol: 'nr_forks', offset: 0,
    debugRegister: { name: 'DR1', addr: '0xffffffff81204020', len: 8, type: 'rw', suspended: false },
  };
  assert.equal(kprobeListLine(p), 'ffffffff81204020  W  nr_forks+0x0  DR1 rw len 8');
  assert.equal(kprobeLabel(p), 'W nr_forks+0x0 7/0');
  const waiting: ProbeInfo = { ...p, debugRegister: { ...p.debugRegister!, suspended: true } };
  assert.equal(kprobeListLine(waiting), 'ffffffff81204020  W  nr_forks+0x0  DR1 rw len 8 [SUSPENDED]');
  assert.equal(kprobeLabel({ ...p, kind: 'hardware' }), 'h nr_forks+0x0 7/0');
});
