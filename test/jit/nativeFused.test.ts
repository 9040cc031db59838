/**
 * The one-piece native hit of translated code (traps.ts fusedNativeHit,
 * x86 nativeFusedHit): an optimized kprobe's detour buffer and the
 * kretprobe booster trampoline, entered from translated code that wrote
 * the save, run their handlers between the save and the restore in one
 * host call. A handler that fails there must leave exactly the machine the
 * interpreter leaves: the same oops, registers, frame bytes, hit log,
 * console and instruction count.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import { BENCH_TARGET, benchImage } from '../fixtures/kernel/bench/hostTime';

/** the hit after which translated code runs the entry (bench.elf's loop is translated long before) */
const FAIL_AT = 100000;

function run(mode: 'o' | 'rb', translate: 'on' | 'off'): { exit: string; instructions: number; printk: string; log: string; fused: number; calls: number } {
  const m = new Machine(benchImage(), { cpus: 1, translate });
  const e = m.kprobes;
  e.setOptimization(mode === 'o' ? 1 : 0);
  e.traps.kprobeBooster = mode === 'rb';
  e.kretprobes.setBoost(mode === 'rb');
  let calls = 0;
  const fail = (): number => {
    if (++calls === FAIL_AT) throw new Error(`handler failed at call ${calls}`);
    return 0;
  };
  if (mode === 'o') {
    const kp: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: fail };
    assert.equal(e.registerKprobe(kp), 0);
    e.waitForOptimizer();
  } else {
    const rp: Kretprobe = { kp: { symbol_name: BENCH_TARGET }, maxactive: 8, handler: fail };
    assert.equal(e.registerKretprobe(rp), 0);
  }
  const exit = m.run();
  return {
    exit: `${exit.reason} ${exit.detail ?? ''}`,
    instructions: exit.instructions,
    printk: m.printkRecords.map(x => `${x.timeNs} ${x.cpu} ${x.text}`).join('\n'),
    log: JSON.stringify(m.hitLog.records().map(h => ({ ...h, addr: h.addr.toString(16) }))),
    fused: e.stats.fusedNativeHits,
    calls,
  };
}

/**
 * bench.elf with every 1000th handler changing a register: an optimized
 * kprobe's pre_handler sets di (bench_target's argument) to 0, the
 * boosted kretprobe's handler adds 1 to ax (its return value). Returns
 * the printed sum and what else a user sees.
 */
function runChanging(mode: 'o' | 'rb', translate: 'on' | 'off'): { sum: string; instructions: number; log: string; fused: number; changed: number } {
  const m = new Machine(benchImage(), { cpus: 1, translate });
  const e = m.kprobes;
  e.setOptimization(mode === 'o' ? 1 : 0);
  e.traps.kprobeBooster = mode === 'rb';
  e.kretprobes.setBoost(mode === 'rb');
  let n = 0, changed = 0;
  if (mode === 'o') {
    const kp: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: (_p, r) => { if (++n % 1000 === 0) { r.set('di', 0n); changed++; } return 0; } };
    assert.equal(e.registerKprobe(kp), 0);
    e.waitForOptimizer();
  } else {
    const rp: Kretprobe = { kp: { symbol_name: BENCH_TARGET }, maxactive: 8, handler: (_ri, r) => { if (++n % 1000 === 0) { r.set('ax', r.get('ax') + 1n); changed++; } return 0; } };
    assert.equal(e.registerKretprobe(rp), 0);
  }
  const exit = m.run();
  assert.equal(exit.reason, 'poweroff', exit.detail);
  return {
    sum: m.printkRecords.map(x => x.text).find(t => t.startsWith('bench: sum=')) ?? '',
    instructions: exit.instructions,
    log: JSON.stringify(m.hitLog.records().map(h => ({ ...h, addr: h.addr.toString(16) }))),
    fused: e.stats.fusedNativeHits,
    changed,
  };
}

describe('one-piece native hits from translated code (x86_64)', () => {
  for (const mode of ['o', 'rb'] as const) {
    test(`${mode}: a handler's register change inside the one-piece hit reaches the probed code, as in the interpreter`, () => {
      const on = runChanging(mode, 'on'), off = runChanging(mode, 'off');
      assert.equal(on.changed, 400);
      assert.ok(on.fused > 390000, `${on.fused} one-piece hits`);
      // the sum bench.elf prints: sum of floor(i / 3) for i < 400000, changed by the handlers
      let want = 0n;
      for (let i = 0n; i < 400000n; i++) {
        const call = i + 1n;
        want += mode === 'o' && call % 1000n === 0n ? 0n : i / 3n + (mode === 'rb' && call % 1000n === 0n ? 1n : 0n);
      }
      assert.equal(on.sum.trimEnd(), `bench: sum=${want}`);
      assert.equal(off.sum, on.sum);
      assert.equal(on.instructions, off.instructions);
      assert.equal(on.log, off.log);
    });
  }

  for (const mode of ['o', 'rb'] as const) {
    test(`${mode}: a handler that fails inside the one-piece hit oopses the machine exactly as the interpreter's hit does`, () => {
      const on = run(mode, 'on'), off = run(mode, 'off');
      assert.ok(on.fused > FAIL_AT / 2, `${on.fused} one-piece hits before the failure`);
      assert.equal(off.fused, 0);
      assert.match(on.printk, /handler failed at call 100000/);
      assert.match(on.printk, /failed: handler failed at call \d+: 0000 \[#1\] SMP/);
      assert.match(on.printk, /end trace/);
      assert.equal(on.exit, off.exit);
      assert.equal(on.calls, off.calls);
      assert.equal(on.instructions, off.instructions);
      assert.equal(on.printk, off.printk);
      assert.equal(on.log, off.log);
    });
  }
});
