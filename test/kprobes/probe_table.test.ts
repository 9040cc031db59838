/**
 * kprobe_table by VAddr (ProbeMap.byV, the CPU's inline breakpoint's
 * lookup): it keeps the last probe it found, and that kept answer follows
 * every change of the table (a probe replaced by its aggregate, removed,
 * the table cleared). Unit level, then on a running machine: a probe
 * unregistered and registered again at the same address between hits is
 * the one the next hit runs.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ProbeMap } from '../../emulator/kprobes/probeTable';
import { mustVAddr } from '../../emulator/memory/address';
import type { Kprobe } from '../../emulator/kprobes/kprobe';
import { KPROBE_ARCHES, rig } from './harness';

const A = 0xffffffff81001000n;
const B = 0xffffffff81002000n;

describe('ProbeMap.byV', () => {
  test('a lookup follows replacement, removal and clearing of the entry it found last', () => {
    const m = new ProbeMap();
    const p: Kprobe = { addr: A }, q: Kprobe = { addr: B }, ap: Kprobe = { addr: A };
    m.set(A, p).set(B, q);
    assert.equal(m.byV.get(mustVAddr(A)), p);
    assert.equal(m.byV.get(mustVAddr(A)), p, 'asked again: the same probe');
    // register_aggr_kprobe puts the aggregate in the probe's place
    m.set(A, ap);
    assert.equal(m.byV.get(mustVAddr(A)), ap);
    assert.equal(m.byV.get(mustVAddr(B)), q);
    m.delete(B);
    assert.equal(m.byV.get(mustVAddr(B)), undefined);
    assert.equal(m.byV.get(mustVAddr(A)), ap);
    m.delete(A);
    assert.equal(m.byV.get(mustVAddr(A)), undefined, 'the last one found, removed');
    m.set(A, p);
    assert.equal(m.byV.get(mustVAddr(A)), p);
    m.clear();
    assert.equal(m.byV.get(mustVAddr(A)), undefined, 'cleared');
    assert.equal(m.size, 0);
  });

  test('an address with no probe stays without one (NaN, the key of a non-canonical address, finds nothing)', () => {
    const m = new ProbeMap();
    assert.equal(m.byV.get(mustVAddr(A)), undefined);
    assert.equal(m.byV.get(NaN), undefined);
    m.set(A, { addr: A });
    assert.equal(m.byV.get(NaN), undefined);
  });
});

describe('a probe replaced between hits', () => {
  for (const arch of KPROBE_ARCHES) {
    test(`${arch}: after unregister and register at the same address, the hits run the new probe`, () => {
      const r = rig({ arch, cpus: 1 });
      const first: Kprobe = { symbol_name: 'fib', pre_handler: () => 0 };
      assert.equal(r.engine.registerKprobe(first), 0);
      r.machine.runSlice(200_000);
      const before = first.hits ?? 0;
      assert.ok(before > 0, 'fib was hit');
      r.engine.unregisterKprobe(first);
      const second: Kprobe = { symbol_name: 'fib', pre_handler: () => 0 };
      assert.equal(r.engine.registerKprobe(second), 0);
      r.machine.runSlice(200_000);
      assert.equal(first.hits, before, 'the old probe is not hit again');
      assert.ok((second.hits ?? 0) > 0, 'the new probe is hit');
    });
  }
});
