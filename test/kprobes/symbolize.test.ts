/**
 * Synthetic names of the engine's own code (symbolizeEngineAddress), used
 * by the engine's where() (%pS) for stack traces, messages and disassembly.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { insns, KPROBE_ARCHES, rig } from './harness';
import { Kprobe, Kretprobe, symbolizeEngineAddress } from '../../emulator/kprobes';
import { walkFrames } from '../../emulator/kernel/stack';

for (const arch of KPROBE_ARCHES) describe(`symbolizeEngineAddress (${arch})`, () => {
  test('the kretprobe trampoline, instruction slots (in use and free), image addresses', () => {
    const r = rig({ arch });
    const e = r.engine;
    const s = (a: bigint): string | undefined => symbolizeEngineAddress(e, a);
    assert.equal(s(e.kretprobes.int3Trampoline), 'kretprobe_trampoline+0x0');
    // a probe at fib+0 and one inside do_fork, both stepped out of line (a post_handler keeps them from being optimized)
    const fib: Kprobe = { symbol_name: 'fib', post_handler: () => undefined };
    assert.equal(e.registerKprobe(fib), 0);
    assert.equal(fib.ainsn?.mode, 'slot');
    const slot = fib.ainsn?.insn;
    assert.ok(slot);
    assert.equal(s(slot), 'kprobe_insn_slot[fib]+0x0');
    assert.equal(s(slot + 1n), 'kprobe_insn_slot[fib]+0x1');
    const second = insns(r, 'do_fork')[1];
    const off = (second.addr - r.sym('do_fork')).toString(16);
    const inner: Kprobe = { addr: second.addr, post_handler: () => undefined };
    assert.equal(e.registerKprobe(inner), 0);
    assert.equal(inner.ainsn?.mode, 'slot', `${second.mnemonic} ${second.operands}`);
    assert.equal(s(inner.ainsn?.insn as bigint), `kprobe_insn_slot[do_fork+0x${off}]+0x0`);
    e.unregisterKprobe(inner);
    assert.equal(s(inner.ainsn?.insn as bigint), 'kprobe_insn_slot+0x0', 'a free slot');
    // image addresses are not the engine's
    assert.equal(s(r.sym('fib')), undefined);
    assert.equal(e.describer.where(r.sym('fib') + 4n), 'fib+0x4');
    assert.equal(e.describer.where(e.kretprobes.trampoline), 'kretprobe_trampoline+0x0');
  });

  test('a stack walked from a return handler names the trampoline; the nested-call stub is named', () => {
    const r = rig({ arch });
    const e = r.engine;
    let names: string[] = [];
    const rp: Kretprobe = {
      kp: { symbol_name: 'kprobe_stacktrace_internal_target' },
      handler: (_ri, regs) => {
        if (!names.length) names = walkFrames(r.machine.kernel, regs.cpu, r.machine.kernel.current(regs.cpu.id)).map(a => e.describer.where(a));
        return 0;
      },
    };
    let stub = '';
    const kp: Kprobe = {
      symbol_name: 'kprobe_target',
      pre_handler: (_p, regs) => {
        if (!stub) { e.nested.call(regs.cpu, r.sym('kprobe_target2'), [3n]); stub = e.describer.where(e.nested.stub()); }
        return 0;
      },
    };
    assert.equal(e.registerKretprobe(rp), 0);
    assert.equal(e.registerKprobe(kp), 0);
    r.run();
    assert.equal(names[0], 'kretprobe_trampoline+0x0');
    assert.match(names[1], /^kprobe_stacktrace_driver\+0x/, 'the return into stacktrace_target was popped: only the instance has it');
    assert.equal(stub, 'kprobe_nested_call_return+0x0');
  });
});

// x86_64 only: the kretprobe booster, ftrace and jump optimization exist only there
describe('symbolizeEngineAddress (x86_64: booster trampoline, ftrace trampoline, detour buffers)', () => {
  test('the booster trampoline, the ftrace trampoline, an optimized probe\'s detour buffer and its slot', () => {
    const r = rig();
    const e = r.engine;
    const s = (a: bigint): string | undefined => symbolizeEngineAddress(e, a);
    assert.equal(s(e.kretprobes.boostTrampoline), 'kretprobe_trampoline+0x0');
    assert.equal(s(e.kretprobes.boostTrampoline + 0x12n), 'kretprobe_trampoline+0x12');
    assert.equal(s(e.ftrace.trampoline + 0x2an), 'ftrace_trampoline+0x2a');
    // an optimized probe at fib+0: its detour buffer; its slot (every probe gets one)
    const fib: Kprobe = { symbol_name: 'fib', pre_handler: () => 0 };
    assert.equal(e.registerKprobe(fib), 0);
    e.waitForOptimizer();
    const buf = e.optimizer.status(r.sym('fib')).buffer;
    assert.ok(buf);
    assert.equal(s(buf), 'optprobe_detour[fib]+0x0');
    assert.equal(s(buf + 0x10n), 'optprobe_detour[fib]+0x10');
    assert.equal(s(fib.ainsn?.insn as bigint), 'kprobe_insn_slot[fib]+0x0');
  });
});
