/**
 * The kernel's stack walker (kernel/stack.ts) sees the kprobes engine only
 * through the unwind hooks the kernel holds (KernelApi.unwindHooks), which
 * the machine installs with the engine: the original bytes under the
 * engine's breakpoints, the kretprobe trampoline, the real return address
 * of a live kretprobe instance, the names of the engine's code.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KPROBE_ARCHES, rig, sampleImage } from './harness';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import { Machine } from '../../emulator/machine';
import { dumpStackLines, emulatorCodeAt, THREAD_RETURN_FRAME } from '../../emulator/kernel/stack';

const fn = (line: string): string => line.trim().replace(/\+0x[0-9a-f]+\/0x[0-9a-f]+$/, '');

for (const arch of KPROBE_ARCHES) describe(`kernel stack walks through the engine's unwind hooks (${arch})`, () => {
  test('the machine installs the hooks with its engine; a machine without an engine has none', () => {
    const r = rig({ arch });
    const hooks = r.machine.kernel.unwindHooks;
    assert.ok(hooks);
    assert.equal(hooks.kretprobeTrampoline(), r.engine.kretprobes.trampoline);
    const bare = new Machine(sampleImage(arch), { cpus: 1, kprobes: false });
    assert.equal(bare.kernel.unwindHooks, null);
  });

  test('dump_stack below a kretprobed function shows the real return address; without the hooks the trace stops at the trampoline', () => {
    const r = rig({ arch, cpus: 1 });
    const k = r.machine.kernel;
    const hooks = k.unwindHooks;
    let withHooks: string[] = [];
    let without: string[] = [];
    const rp: Kretprobe = { kp: { symbol_name: 'kprobe_stacktrace_target' }, handler: () => 0 };
    const kp: Kprobe = {
      symbol_name: 'kprobe_stacktrace_internal_target',
      pre_handler: (p, regs) => {
        if (withHooks.length) return 0;
        withHooks = dumpStackLines(k, regs.cpu, { pc: p.addr });
        k.unwindHooks = null;
        try { without = dumpStackLines(k, regs.cpu, { pc: p.addr }); } finally { k.unwindHooks = hooks; }
        return 0;
      },
    };
    assert.equal(r.engine.registerKretprobe(rp), 0);
    assert.equal(r.engine.registerKprobe(kp), 0);
    r.run();
    const names = withHooks.slice(2).map(fn);
    assert.deepEqual(names.slice(0, 3), ['kprobe_stacktrace_internal_target', 'kprobe_stacktrace_target', 'kprobe_stacktrace_driver'], withHooks.join('\n'));
    assert.ok(!withHooks.some(l => l.includes('kretprobe_trampoline')), withHooks.join('\n'));
    // the return address of kprobe_stacktrace_target is the trampoline: nothing past it without the engine's answer
    assert.deepEqual(without.slice(2).map(fn), ['kprobe_stacktrace_internal_target', 'kprobe_stacktrace_target'], without.join('\n'));
  });

  test('emulatorCodeAt names the engine\'s code through the hooks; the thread-return page without them', () => {
    const r = rig({ arch });
    const k = r.machine.kernel;
    const kp: Kprobe = { symbol_name: 'fib', post_handler: () => undefined };
    assert.equal(r.engine.registerKprobe(kp), 0);
    const slot = kp.ainsn?.insn;
    assert.ok(slot !== undefined);
    assert.deepEqual(emulatorCodeAt(k, slot), { name: 'kprobe_insn_slot[fib]+0x0', kind: 'kprobes' });
    assert.deepEqual(emulatorCodeAt(k, k.layout.execArea + 4n), { name: `${THREAD_RETURN_FRAME}+0x4`, kind: 'thread-return' });
    const hooks = k.unwindHooks;
    k.unwindHooks = null;
    try {
      assert.equal(emulatorCodeAt(k, slot), undefined);
      assert.equal(emulatorCodeAt(k, k.layout.execArea)?.kind, 'thread-return');
    } finally { k.unwindHooks = hooks; }
  });
});
