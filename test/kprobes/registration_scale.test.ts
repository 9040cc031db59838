/**
 * Registration stays linear: the optimizer re-evaluates only the prepared
 * regions a registration can affect (Optimizer.reconsiderNear) and reading
 * the original text looks up only the probes that can overlap the read.
 * These must give exactly what the full rescan gives: the same optimizer
 * states for every probe, and unregistering everything restores the
 * kernel text byte for byte.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { rig, insns, KPROBE_ARCHES, Rig } from './harness';

const FUNCS = ['do_fork', 'copy_process', 'kprobe_target', 'fib', 'sys_open', 'path_lookup', 'alloc_pid'];

function probeEveryInsn(r: Rig): bigint[] {
  const addrs: bigint[] = [];
  for (const f of FUNCS) for (const i of insns(r, f)) addrs.push(i.addr);
  return addrs;
}

function statuses(r: Rig, addrs: readonly bigint[]): string[] {
  return addrs.map(a => {
    const s = r.engine.optimizer.status(a);
    return `${a.toString(16)} ${s.state} ${s.reason ?? ''} ${s.size ?? ''}`;
  });
}

// x86_64 only: the optimizer (jump optimization exists only there)
describe('registration at scale', () => {
  test('probes on every instruction of several functions: per-address re-evaluation equals a full rescan', () => {
    const a = rig({ cpus: 1 });
    const addrs = probeEveryInsn(a);
    assert.ok(addrs.length > 100, `${addrs.length} probes`);
    const results = addrs.map(addr => a.engine.registerKprobe({ addr, pre_handler: () => 0 }));
    a.engine.waitForOptimizer();
    const near = statuses(a, addrs);

    const b = rig({ cpus: 1 });
    assert.deepEqual(addrs.map(addr => b.engine.registerKprobe({ addr, pre_handler: () => 0 })), results);
    b.engine.optimizer.reconsider(); // the full rescan
    b.engine.waitForOptimizer();
    assert.deepEqual(statuses(b, addrs), near);
    assert.ok(near.some(s => s.includes(' optimized ')), 'some probes were optimized');
    assert.ok(near.some(s => s.includes('inside the region')), 'probes inside another probe\'s region block it');
  });
});

for (const arch of KPROBE_ARCHES) describe(`registration at scale (${arch})`, () => {
  test('unregistering every probe restores the text byte for byte', () => {
    const r = rig({ arch, cpus: 1 });
    const addrs = probeEveryInsn(r);
    const lo = addrs.reduce((m, a) => (a < m ? a : m)), hi = addrs.reduce((m, a) => (a > m ? a : m)) + 16n;
    const mem = r.machine.kernel.mem;
    const before = mem.readBytes(Number(BigInt.asIntN(64, lo)), Number(hi - lo));
    const kps = addrs.map(addr => ({ addr, pre_handler: () => 0 }));
    for (const kp of kps) r.engine.registerKprobe(kp);
    r.engine.waitForOptimizer();
    assert.notDeepEqual(mem.readBytes(Number(BigInt.asIntN(64, lo)), Number(hi - lo)), before, 'the probes changed the text');
    assert.deepEqual(r.engine.arming.readTextWithoutProbes(mem, lo, Number(hi - lo)), before, 'the original text reads through the probes');
    r.engine.unregisterKprobes(kps);
    assert.deepEqual(mem.readBytes(Number(BigInt.asIntN(64, lo)), Number(hi - lo)), before);
  });
});
