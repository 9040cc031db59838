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
import { loadElf } from '../../emulator/elf/elfFile';
import { repoPath } from '../util/paths';
import { hitLogText, printkText } from './machineText';

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
    printk: printkText(m),
    log: hitLogText(m),
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
    log: hitLogText(m),
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

/**
 * The x86_64 sample kernel with an optimized kprobe and a boosted
 * kretprobe on every function that takes them: the flags each handler
 * reads (pt_regs flags at the probed entry and at the return, as the
 * template's pushfq stored them) and what the run did. A native entry
 * from translated code takes the arithmetic flags translated code stored
 * in the frame (jitEmitter.ts arithFlagsOrNot) or, where that code did not
 * evaluate them, the lazy record's: both must give the interpreter's values.
 */
function flagsSeen(translate: 'on' | 'off'): { seen: string[]; instructions: number; log: string; fused: number } {
  const m = new Machine(loadElf(repoPath('examples/kernel/build/kernel-x86_64.elf')), { cpus: 2, translate });
  const e = m.kprobes;
  e.setOptimization(1);
  e.traps.kprobeBooster = true;
  e.kretprobes.setBoost(true);
  const seen: string[] = [];
  for (const f of m.image.symbols.functions()) {
    if (f.size === 0n) continue;
    const kp: Kprobe = { symbol_name: f.name, pre_handler: (_p, r) => { seen.push(`${f.name} entry ${r.flags.toString(16)}`); return 0; } };
    e.registerKprobe(kp);
    const rp: Kretprobe = { kp: { symbol_name: f.name }, maxactive: 64, handler: (_ri, r) => { seen.push(`${f.name} return ${r.flags.toString(16)}`); return 0; } };
    e.registerKretprobe(rp);
  }
  e.waitForOptimizer();
  const exit = m.run();
  assert.equal(exit.reason, 'poweroff', exit.detail);
  return { seen, instructions: exit.instructions, log: hitLogText(m), fused: e.stats.fusedNativeHits };
}

/**
 * bench.elf: an optimized kprobe at bench_target whose pre_handler changes
 * CF and ZF at every 1000th hit, and a kprobe at bench_target+6 (the
 * first instruction after the detoured push/mov/mov, none of which touch
 * the flags) recording the flags it sees: the flags the first handler
 * wrote, as the restore's popfq leaves them.
 */
function flagsWritten(translate: 'on' | 'off'): { pairs: string[]; fused: number } {
  const m = new Machine(benchImage(), { cpus: 1, translate });
  const e = m.kprobes;
  e.setOptimization(1);
  let n = 0, wrote = -1n;
  const pairs: string[] = [];
  const a: Kprobe = { symbol_name: BENCH_TARGET, pre_handler: (_p, r) => { if (++n % 1000 === 0) { r.flags = r.flags ^ 0x41n; wrote = r.flags; } return 0; } };
  const b: Kprobe = { symbol_name: BENCH_TARGET, offset: 6n, pre_handler: (_p, r) => { if (wrote >= 0n) { pairs.push(`${wrote.toString(16)} ${r.flags.toString(16)}`); wrote = -1n; } return 0; } };
  assert.equal(e.registerKprobe(a), 0);
  assert.equal(e.registerKprobe(b), 0);
  e.waitForOptimizer();
  assert.ok(e.optimizer.isOptimized(a.addr as bigint));
  const exit = m.run();
  assert.equal(exit.reason, 'poweroff', exit.detail);
  return { pairs, fused: e.stats.fusedNativeHits };
}

describe('flags in one-piece native hits', () => {
  test('a flags change by an optimized probe\'s handler reaches the probed code (the next probe sees it), as in the interpreter', () => {
    const on = flagsWritten('on'), off = flagsWritten('off');
    assert.ok(on.fused > 390000, `${on.fused} one-piece hits`);
    assert.equal(on.pairs.length, 400);
    for (const p of on.pairs) { const [w, seen] = p.split(' '); assert.equal(seen, w, p); }
    assert.deepEqual(on.pairs, off.pairs);
  });
});

describe('flags in one-piece native hits (x86_64 sample kernel, every function probed)', () => {
  test('the flags every optimized and boosted handler reads, and the run, are the interpreter\'s', () => {
    const on = flagsSeen('on'), off = flagsSeen('off');
    assert.ok(on.fused > 1000, `${on.fused} one-piece hits`);
    assert.equal(off.fused, 0);
    assert.ok(on.seen.length > 10000, `${on.seen.length} handler runs`);
    // more than one flags value: the probed entries and returns do not all see one
    assert.ok(new Set(on.seen.map(s => s.split(' ')[2])).size > 3);
    assert.deepEqual(on.seen, off.seen);
    assert.equal(on.instructions, off.instructions);
    assert.equal(on.log, off.log);
  });
});
