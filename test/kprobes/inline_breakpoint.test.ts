/**
 * The engine's inline breakpoint path (KprobesArchHooks.installInlineBreakpoint,
 * X86Cpu.inlineBreakpoint): the native entries of detour buffers and of the
 * kretprobe booster trampoline are handled inside the CPU's int3 instead of
 * a trap. Compared with the same runs where every native entry traps
 * (hooks without installInlineBreakpoint), everything observable is the
 * same: the printk records with their timestamps, the virtual time and
 * registers the handlers see, the values of kernel functions called from
 * handlers (and the probes hit inside them, missed), the machine's
 * instruction count, and where a debugger stop requested by a handler
 * leaves the CPU.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Rig, rig, snapshot, stopAtFibHit } from './harness';
import type { Kprobe, Kretprobe, KprobesArchHooks } from '../../emulator/kprobes';
import { x86_64KprobesHooks } from '../../emulator/arch/x86_64/kprobes';

/** the x86_64 hooks without the inline path: native entries trap */
const TRAP_ONLY: KprobesArchHooks = { ...x86_64KprobesHooks, installInlineBreakpoint: undefined };

interface Outcome {
  records: string[];
  seen: string[];
  instructions: number;
  missed: number;
  r: Rig;
}

/** optimized kprobe on fib (calling fib(7) from the handler on a few hits) + boosted kretprobe on kprobe_target */
function runBoth(inline: boolean): Outcome {
  const r = rig({ cpus: 2, engine: inline ? {} : { hooks: TRAP_ONLY } });
  const k = r.machine.kernel;
  const fib = r.sym('fib');
  const seen: string[] = [];
  let hits = 0;
  const kp: Kprobe = {
    addr: fib,
    pre_handler: (_p, regs) => {
      hits++;
      seen.push(`t=${k.timeNs()} cpu=${regs.cpu.id} ${snapshot(regs)}`);
      if (hits % 50 === 1) {
        const v = r.engine.nested.call(regs.cpu, fib, [7n]);
        seen.push(`fib(7)=${v} t=${k.timeNs()}`);
        k.printk(regs.cpu.id, `probe: fib hit ${hits}`, 'probe');
      }
      return 0;
    },
  };
  assert.equal(r.engine.registerKprobe(kp), 0);
  r.engine.waitForOptimizer();
  assert.ok(r.engine.optimizer.isOptimized(fib));
  const rp: Kretprobe = {
    kp: { symbol_name: 'kprobe_target' },
    handler: (_ri, regs) => { seen.push(`ret t=${k.timeNs()} ${snapshot(regs)}`); return 0; },
  };
  assert.equal(r.engine.registerKretprobe(rp), 0);
  assert.ok(r.engine.kretprobes.boosted);
  const exit = r.machine.run();
  assert.equal(exit.reason, 'poweroff', exit.detail);
  return {
    records: r.machine.printkRecords.map(x => `${x.timeNs} ${x.cpu} ${x.source} ${x.text}`),
    seen, instructions: exit.instructions, missed: kp.nmissed ?? 0, r,
  };
}

// x86_64 only: native entries belong to detour buffers and the booster trampoline, which only the x86 port has
describe('inline breakpoint path for native entries', () => {
  const inl = runBoth(true);
  const trp = runBoth(false);

  test('the inline path is taken (and only where it is on)', () => {
    const s = inl.r.engine.stats;
    assert.ok(s.inlineOptEntries > 100, `inline optprobe entries: ${s.inlineOptEntries}`);
    assert.ok(s.inlineKretEntries > 0, `inline kretprobe entries: ${s.inlineKretEntries}`);
    assert.equal(s.inlineOptEntries, s.optCallbacks, 'every optimized hit entered inline');
    assert.equal(trp.r.engine.stats.inlineOptEntries, 0);
    assert.equal(trp.r.engine.stats.inlineKretEntries, 0);
    assert.equal(trp.r.engine.stats.optCallbacks, s.optCallbacks);
    assert.equal(trp.r.engine.stats.nativeOptFrames, s.nativeOptFrames);
  });
  test('same printk records (timestamps included) and same machine instruction count', () => {
    assert.ok(inl.records.some(l => l.includes('probe: fib hit 1')));
    assert.deepEqual(inl.records, trp.records);
    assert.equal(inl.instructions, trp.instructions);
  });
  test('handlers see the same time and registers; nested calls return the same, their probe hits are missed', () => {
    assert.ok(inl.seen.some(l => l.startsWith('fib(7)=13 ')), 'fib(7) called from the handler returned 13');
    assert.ok(inl.seen.some(l => l.startsWith('ret ')));
    assert.equal(inl.seen.length, trp.seen.length);
    for (let i = 0; i < inl.seen.length; i++) assert.equal(inl.seen[i], trp.seen[i], `observation ${i}`);
    assert.ok(inl.missed > 0, 'fib hits inside the nested fib(7) count as missed');
    assert.equal(inl.missed, trp.missed);
  });

  test('a debugger stop requested by a handler stops the machine at the same place and time', () => {
    const stopAt = (inline: boolean): string => stopAtFibHit(rig({ cpus: 2, engine: inline ? {} : { hooks: TRAP_ONLY } }), 40, true);
    const a = stopAt(true);
    assert.match(a, /hits=\d+/);
    assert.equal(a, stopAt(false));
  });
});
