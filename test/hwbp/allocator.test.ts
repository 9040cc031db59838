/**
 * The debug-register allocator's rules (emulator/hwbp/allocator.ts): free
 * registers first, the same number on every CPU, a lower-priority holder
 * displaced and waiting on its own register, equal priorities never
 * displaced, a waiting holder resumed when the taker lets go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DebugRegAllocator } from '../../emulator/hwbp/allocator';
import type { HwBpHolder, HwBpOwner } from '../../emulator/hwbp/allocator';

let nextId = 1;
function holder(owner: HwBpOwner, type: 'x' | 'w' | 'rw' = 'w', pool: 'exec' | 'data' = 'data'): HwBpHolder {
  return { id: nextId++, owner, req: { addr: 0x1000n, len: 8, type }, pool };
}

test('x86-style shared pool: four registers, the same number on every CPU, a fifth kwatch refused', () => {
  const a = new DebugRegAllocator<HwBpHolder>(2, { data: 4, exec: 0 }, true);
  assert.equal(a.poolOf({ req: { addr: 0n, len: 1, type: 'x' } }), 'data', 'execute shares DR0-DR3');
  const hs = [0, 1, 2, 3].map(() => holder('kwatch'));
  assert.deepEqual(hs.map(h => a.reserve(h).index), [0, 1, 2, 3]);
  for (const cpu of [0, 1]) for (let i = 0; i < 4; i++) assert.equal(a.active(cpu, 'data', i), hs[i]);
  assert.equal(a.reserve(holder('kwatch')).index, -1, 'equal priority: no register');
});

test('a debugger request displaces the most recent kwatch, which waits on its own register and resumes after', () => {
  const a = new DebugRegAllocator<HwBpHolder>(2, { data: 4, exec: 0 }, true);
  const ks = [0, 1, 2, 3].map(() => holder('kwatch'));
  for (const k of ks) a.reserve(k);
  const d = holder('debugger');
  const got = a.reserve(d);
  assert.equal(got.index, 3, 'the most recent of the lowest-priority holders');
  assert.equal(got.displaced, ks[3]);
  assert.equal(a.active(1, 'data', 3), d);
  assert.deepEqual(a.holders(0, 'data')[3], [ks[3], d], 'the kwatch waits under the debugger');
  // a second debugger request displaces the next most recent kwatch
  const d2 = holder('debugger');
  assert.equal(a.reserve(d2).index, 2);
  // debugger requests never displace each other
  const all = [holder('debugger'), holder('debugger')].map(h => a.reserve(h).index);
  assert.deepEqual(all, [1, 0]);
  assert.equal(a.reserve(holder('debugger')).index, -1, 'four debugger holders: a fifth is refused');
  // releasing the taker gives the register back to the waiting kwatch
  assert.equal(a.release(d, 3), ks[3]);
  assert.equal(a.active(0, 'data', 3), ks[3]);
  // releasing a waiting holder does not disturb the active one
  assert.equal(a.release(ks[2], 2), undefined);
  assert.equal(a.active(0, 'data', 2), d2);
  assert.equal(a.release(d2, 2), undefined, 'nobody left waiting on DR2');
  assert.equal(a.active(0, 'data', 2), undefined);
  assert.equal(a.reserve(holder('kwatch')).index, 2, 'the freed register is handed out again');
});

test('arm64-style separate pools: breakpoints and watchpoints do not compete', () => {
  const a = new DebugRegAllocator<HwBpHolder>(1, { data: 4, exec: 6 }, false);
  assert.equal(a.poolOf({ req: { addr: 0n, len: 4, type: 'x' } }), 'exec');
  assert.equal(a.poolOf({ req: { addr: 0n, len: 4, type: 'r' } }), 'data');
  for (let i = 0; i < 4; i++) assert.equal(a.reserve(holder('kwatch')).index, i);
  assert.equal(a.reserve(holder('kwatch')).index, -1, 'watchpoint registers exhausted');
  for (let i = 0; i < 6; i++) assert.equal(a.reserve(holder('debugger', 'x', 'exec')).index, i, 'breakpoint registers still free');
  assert.equal(a.reserve(holder('debugger', 'x', 'exec')).index, -1);
});
