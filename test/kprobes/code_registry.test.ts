/**
 * The registry of engine-owned code (codeRegistry.ts): sorted ranges
 * looked up by bigint and by VAddr, overlaps refused with a clear error,
 * handlers attached and taken back; and the engine's own ranges as a
 * fresh engine registers them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KPROBE_ARCHES, rig } from './harness';
import type { Kprobe } from '../../emulator/kprobes';
import { kprobesArchFor } from '../../emulator/arch/registry';
import { EngineCodeRegistry } from '../../emulator/kprobes/codeRegistry';
import { mustVAddr } from '../../emulator/memory/address';

const K = 0xffffffffc0000000n;

describe('EngineCodeRegistry', () => {
  test('lookups by address and by VAddr find the range holding it, whatever the insertion order', () => {
    const reg = new EngineCodeRegistry();
    reg.add(K + 0x2000n, 0x1000, 'kprobe_insn_slot');
    reg.add(K, 0x10, 'kretprobe_trampoline');
    reg.add(K + 0x100n, 0x40, 'ftrace_trampoline');
    assert.deepEqual(reg.ranges().map(c => c.symbol), ['kretprobe_trampoline', 'ftrace_trampoline', 'kprobe_insn_slot']);
    for (const [a, want] of [
      [K - 1n, undefined], [K, 'kretprobe_trampoline'], [K + 0xfn, 'kretprobe_trampoline'], [K + 0x10n, undefined],
      [K + 0x13fn, 'ftrace_trampoline'], [K + 0x140n, undefined], [K + 0x2fffn, 'kprobe_insn_slot'], [K + 0x3000n, undefined],
    ] as const) {
      assert.equal(reg.find(a)?.symbol, want, `0x${a.toString(16)}`);
      assert.equal(reg.findV(mustVAddr(a))?.symbol, want, `VAddr of 0x${a.toString(16)}`);
      assert.equal(reg.owns(a), want !== undefined);
    }
    assert.equal(reg.symbolize(K + 0x12an), 'ftrace_trampoline+0x2a');
    assert.equal(reg.symbolize(K + 0x10n), undefined);
  });

  test('an overlapping range is refused with both ranges named; an empty one too', () => {
    const reg = new EngineCodeRegistry();
    reg.add(K + 0x100n, 0x40, 'ftrace_trampoline');
    assert.throws(() => reg.add(K + 0x13fn, 8, 'optprobe_detour'), /optprobe_detour \[0xffffffffc000013f, 0xffffffffc0000147\) overlaps ftrace_trampoline/);
    assert.throws(() => reg.add(K + 0xf8n, 9, 'kprobe_nested_call_return'), /overlaps ftrace_trampoline/);
    assert.throws(() => reg.add(K, 0, 'x'), /x at 0xffffffffc0000000 has no size/);
    reg.add(K + 0x140n, 8, 'optprobe_detour');
    assert.equal(reg.ranges().length, 2);
  });

  test('handlers attached to a range route its breakpoints and name its addresses; attach({}) takes them back', () => {
    const reg = new EngineCodeRegistry();
    const code = reg.add(K, 0x40, 'optprobe_detour');
    assert.equal(reg.attach(K + 1n, {}), false, 'only at a range start');
    assert.equal(reg.attach(K, {
      symbolize: (a, c) => `${c.symbol}[fib]+0x${(a - c.start).toString(16)}`,
      site: a => (a === K + 0x20n ? 'optprobeCallback' : 'none'),
      nativeEntry: { addr: K, at: mustVAddr(K), stat: 'inlineOptEntries' },
    }), true);
    assert.equal(reg.symbolize(K + 0x10n), 'optprobe_detour[fib]+0x10');
    assert.equal(code.site?.(K + 0x20n, code), 'optprobeCallback');
    assert.equal(reg.findV(mustVAddr(K))?.nativeEntry?.stat, 'inlineOptEntries');
    reg.attach(K, {});
    assert.equal(reg.symbolize(K + 0x10n), 'optprobe_detour+0x10');
    assert.equal(code.site, undefined);
    assert.equal(code.nativeEntry, undefined);
  });

  test('attaching or taking back a native entry tells the listener (translated code relies on it); other changes do not', () => {
    const reg = new EngineCodeRegistry();
    reg.add(K, 0x40, 'optprobe_detour');
    reg.add(K + 0x40n, 0x40, 'optprobe_detour');
    const told: string[] = [];
    reg.onNativeEntryChange = at => told.push(at.toString(16));
    const entry = { addr: K, at: mustVAddr(K), stat: 'inlineOptEntries', route: { kind: 'optprobe', ip: mustVAddr(0xffffffff81000001n) } } as const;
    reg.attach(K, { symbolize: () => 'x' });
    assert.deepEqual(told, [], 'no native entry before or after');
    reg.attach(K, { nativeEntry: entry });
    assert.deepEqual(told, [mustVAddr(K).toString(16)]);
    reg.attach(K, { nativeEntry: entry, site: () => 'none' });
    assert.equal(told.length, 1, 'the same entry again');
    const moved = { addr: K + 8n, at: mustVAddr(K + 8n), stat: 'inlineOptEntries' } as const;
    reg.attach(K, { nativeEntry: moved });
    assert.deepEqual(told.slice(1), [mustVAddr(K).toString(16), mustVAddr(K + 8n).toString(16)], 'the old entry and the new one');
    reg.attach(K, {});
    assert.deepEqual(told.slice(3), [mustVAddr(K + 8n).toString(16)]);
    reg.attach(K + 0x40n, {});
    assert.equal(told.length, 4);
  });

});

for (const arch of KPROBE_ARCHES) describe(`the engine's code ranges (${arch})`, () => {
  test("a fresh engine's trampolines are registered under their symbols; a probe's slot page and detour buffer once it has them", () => {
    const r = rig({ arch });
    const e = r.engine;
    const hooks = kprobesArchFor(arch);
    assert.ok(hooks);
    const symbols = (): string[] => e.code.ranges().map(c => c.symbol).sort();
    // the breakpoint trampoline everywhere; the booster's trampoline and the ftrace trampoline where the arch has them
    const fresh = ['kretprobe_trampoline'];
    if (hooks.optprobes?.kretprobeBoostTrampoline) fresh.push('kretprobe_trampoline');
    if (hooks.ftrace) fresh.push('ftrace_trampoline');
    assert.deepEqual(symbols(), fresh.sort());
    assert.equal(e.breakpointSite(e.kretprobes.int3Trampoline), 'kretprobeTrampoline');
    if (hooks.optprobes) assert.equal(e.breakpointSite(e.kretprobes.boostCallback), 'kretprobeBoostCallback');
    if (hooks.ftrace) assert.equal(e.breakpointSite(e.ftrace.callback), 'ftraceCallback');
    assert.equal(e.breakpointSite(e.kretprobes.int3Trampoline + BigInt(r.machine.arch.minInsnLength)), 'none');
    const kp: Kprobe = { symbol_name: 'do_fork', post_handler: () => undefined };
    assert.equal(e.registerKprobe(kp), 0);
    assert.equal(kp.ainsn?.mode, 'slot');
    // its slot page, and (with jump optimization) the detour buffer prepared for it (a post_handler keeps it from being optimized)
    const withProbe = [...fresh, 'kprobe_insn_slot', ...(hooks.optprobes ? ['optprobe_detour'] : [])];
    assert.deepEqual(symbols(), withProbe.sort());
    assert.equal(e.breakpointSite(r.sym('do_fork')), 'kprobe');
    assert.equal(e.describer.where(kp.ainsn?.insn as bigint), 'kprobe_insn_slot[do_fork]+0x0');
    if (hooks.optprobes) {
      const buf = e.optimizer.status(r.sym('do_fork')).buffer as bigint;
      assert.equal(e.breakpointSite(buf), 'optprobeCallback', "the buffer's native entry");
      assert.equal(e.describer.where(buf + 3n), 'optprobe_detour[do_fork]+0x3');
    }
  });
});
