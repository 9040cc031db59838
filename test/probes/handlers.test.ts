/**
 * Probe-file probes on the running sample kernel: handler output in the
 * console with the right values, register writes, the fault path for
 * runaway loops and bad memory reads, registration errors with errno names,
 * the disabled attribute, dump_stack.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hex64 } from '../../emulator/memory/address';
import { compileProbeFile } from '../../emulator/handlers';
import { SYSCTL_KPROBES_OPTIMIZATION } from '../../emulator/kprobes';
import { RAND1, TARGET_CALLS, addFile, probeRig, runAll, sym, type ProbeRig, type RunResult } from './helpers';

/** 1-based line:column of the first occurrence of needle in text */
function posOf(text: string, needle: string): string {
  const i = text.indexOf(needle);
  assert.ok(i >= 0, needle);
  const before = text.slice(0, i).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

const selftestTarget = (lines: string[]): string | undefined => lines.find(l => l.startsWith('selftest: kprobe_target('));

describe('probe-file probes on the sample kernel', () => {
  test('kretprobe: the argument saved in ri->data by the entry handler, the return value = value / 3', () => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, `
kretprobe kprobe_target data_size=8 {
  entry { *(u32 *)ri->data = (u32)arg0; return 0; }
  return {
    u32 arg = *(u32 *)ri->data;
    unsigned long rv = regs_return_value(regs);
    printk("ret %s(%u) = %lu %s\\n", p->symbol_name, arg, rv, rv == arg / 3 ? "ok" : "BAD");
    return 0;
  }
}`);
    assert.deepEqual(r.errors, []);
    const out = runAll(machine);
    assert.equal(out.exit.reason, 'poweroff');
    assert.equal(out.exit.code, 0);
    const rets = out.records.filter(x => x.text.startsWith('ret '));
    assert.equal(rets.length, TARGET_CALLS);
    assert.ok(rets.every(x => x.source === 'probe' && x.text.endsWith(' ok')), rets.find(x => !x.text.endsWith(' ok'))?.text);
    // the self-test call: printed by the return handler before the kernel prints the result
    const want = `ret kprobe_target(${RAND1}) = ${RAND1 / 3n} ok`;
    const i = out.lines.indexOf(want);
    assert.ok(i >= 0, want);
    assert.ok(i < out.lines.indexOf(`selftest: kprobe_target(${RAND1}) = ${RAND1 / 3n}`));
    const e = mgr.list()[0];
    assert.equal(e.hits, TARGET_CALLS);
    assert.equal(e.nmissed, 0);
  });

  describe('pre handler writing regs: emulate an immediate return of 42 (ip = return address, sp += 8, return 1)', () => {
    /**
     * The redirecting probe at kprobe_target's entry, plus a probe at
     * kprobe_target+0x6 (past the entry probe's 5-byte jump region, so it
     * does not keep the entry probe from being optimized) that only
     * prints: it is reached exactly when the function body runs, i.e. when
     * the redirection was NOT honoured. Both print the task's pid, so the
     * hits of one task pair up whatever the scheduler interleaves.
     */
    const probes = (post: string): string => `
kprobe kprobe_target {
  pre {
    printk("pre %d\\n", current->pid);
    regs->ax = 42;
    regs->ip = *(u64 *)regs->sp;
    regs->sp = regs->sp + 8;
    return 1;
  }${post}
}
kprobe kprobe_target+0x6 { pre { printk("body %d\\n", current->pid); return 0; } }`;

    /** per entry hit, in order: whether the body ran after it (the redirection was ignored), and the record index */
    function hitsOf(out: RunResult): { index: number; bodyRan: boolean }[] {
      const open = new Map<string, { index: number; bodyRan: boolean }>();
      const hits: { index: number; bodyRan: boolean }[] = [];
      out.records.forEach((r, index) => {
        const m = /^(pre|body) (\d+)$/.exec(r.text);
        if (!m || r.source !== 'probe') return;
        if (m[1] === 'pre') { const h = { index, bodyRan: false }; hits.push(h); open.set(m[2], h); return; }
        const h = open.get(m[2]);
        assert.ok(h, `body of pid ${m[2]} without an entry hit (record ${index})`);
        h.bodyRan = true;
        open.delete(m[2]);
      });
      return hits;
    }

    function checkRedirectedEverywhere(out: RunResult, mgr: ProbeRig['mgr']): void {
      assert.equal(out.exit.code, 0);
      const hits = hitsOf(out);
      assert.equal(hits.length, TARGET_CALLS);
      assert.deepEqual(hits.filter(h => h.bodyRan), [], 'every hit is redirected: the body never runs');
      assert.equal(selftestTarget(out.lines), `selftest: kprobe_target(${RAND1}) = 42`);
      assert.ok(out.lines.includes(`selftest: kprobe_target2(${RAND1}) = ${RAND1 / 3n + 1n}`));
      const [entry, body] = mgr.list();
      assert.equal(entry.hits, TARGET_CALLS);
      assert.equal(body.hits, 0);
      assert.ok(!entry.sites.some(x => x.flags.includes('[OPTIMIZED]')), entry.sites.map(x => x.flags).join(' '));
    }

    test('with an empty post handler (no jump optimization) every hit is redirected', () => {
      const { machine, mgr } = probeRig();
      const optimized: string[] = [];
      mgr.engine.events.on(e => { if (e.type === 'optimized') optimized.push(e.probe.where); });
      const r = addFile(mgr, probes('\n  post { }'));
      assert.deepEqual(r.diagnostics, []);
      checkRedirectedEverywhere(runAll(machine), mgr);
      assert.ok(!optimized.includes('kprobe_target+0x0'), optimized.join(', '));
    });

    test('with debug.kprobes_optimization=0 every hit is redirected (the checker still warns: the file does not know the sysctl)', () => {
      const { machine, mgr } = probeRig();
      assert.equal(machine.writeSysctl(SYSCTL_KPROBES_OPTIMIZATION, '0').errno, 0);
      const r = addFile(mgr, probes(''));
      assert.deepEqual(r.diagnostics.map(d => d.severity), ['warning']);
      checkRedirectedEverywhere(runAll(machine), mgr);
    });

    test('with optimization on and no post handler, only hits before the jump is written are redirected (as documented)', () => {
      const { machine, mgr } = probeRig();
      let optimizedAt = -1;
      mgr.engine.events.on(e => {
        if (e.type === 'optimized' && e.probe.where === 'kprobe_target+0x0') optimizedAt = machine.printkRecords.length;
      });
      const r = addFile(mgr, probes(''));
      assert.deepEqual(r.diagnostics.map(d => [d.severity, d.line]), [['warning', 6]], 'the checker warns on the regs->ip assignment');
      assert.match(r.diagnostics[0].message, /ignored once the probe is jump-optimized/);
      const out = runAll(machine);
      assert.equal(out.exit.code, 0);
      assert.ok(optimizedAt > 0, 'the entry probe was optimized during the run');
      const hits = hitsOf(out);
      assert.equal(hits.length, TARGET_CALLS, 'the pre handler runs at every hit, optimized or not');
      const before = hits.filter(h => h.index < optimizedAt), after = hits.filter(h => h.index >= optimizedAt);
      assert.ok(before.length >= 1, 'the self-test call comes before the optimizer runs');
      assert.ok(after.length >= 1);
      assert.deepEqual(before.filter(h => h.bodyRan), [], 'hits through the breakpoint are redirected');
      assert.deepEqual(after.filter(h => !h.bodyRan), [], 'hits through the jump ignore the change of regs->ip: the body runs');
      assert.equal(selftestTarget(out.lines), `selftest: kprobe_target(${RAND1}) = 42`);
      const [entry, body] = mgr.list();
      assert.equal(entry.hits, TARGET_CALLS);
      assert.equal(body.hits, after.length);
      assert.ok(entry.sites.some(x => x.flags.includes('[OPTIMIZED]')), entry.sites.map(x => x.flags).join(' '));
    });
  });

  test('a runaway loop in a handler: step budget -> fault path (fault handler, nmissed), the probe goes on', () => {
    const { machine, mgr } = probeRig({ stepBudget: 2000 });
    const text = `
kprobe kprobe_recursed_target {
  pre {
    unsigned long n = 0;
    while (1)
      n++;
    return 0;
  }
  fault {
    printk("fault_handler: trap %d at %lx\\n", trapnr, p->addr);
    return 0;
  }
}`;
    addFile(mgr, text, 'loop.kprobe');
    const out = runAll(machine);
    assert.equal(out.exit.reason, 'poweroff');
    assert.equal(out.exit.code, 0);
    const rep = out.records.find(x => x.text.includes('faulted'));
    assert.ok(rep, 'a fault report');
    assert.equal(rep.source, 'emulator');
    // the budget runs out on a statement of the loop (the while or its body)
    const at = [posOf(text, 'while'), posOf(text, 'n++')];
    assert.ok(at.some(a => rep.text.startsWith(`loop.kprobe:${a}: `)), rep.text);
    assert.match(rep.text, /: pre handler of kprobe kprobe_recursed_target faulted at kprobe_recursed_target\+0x0: handler exceeded its step budget of 2000/);
    assert.ok(out.lines.includes(`fault_handler: trap 13 at ${sym('kprobe_recursed_target').toString(16)}`));
    // the function itself ran normally
    assert.ok(out.lines.includes(`selftest: kprobe_recursed_target(${RAND1}) = ${RAND1 / 3n}`));
    const e = mgr.list()[0];
    assert.equal(e.hits, 1);
    assert.equal(e.nmissed, 1);
  });

  test('a bad memory read in a handler: fault path, then the probe goes on at every hit', () => {
    const { machine, mgr } = probeRig();
    const text = `
kprobe kprobe_target2 {
  pre {
    printk("before\\n");
    printk("value %lx\\n", *(u64 *)0xffff800012345678);
    return 0;
  }
}`;
    addFile(mgr, text, 'bad.kprobe');
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    const reps = out.lines.filter(l => l.includes('faulted'));
    assert.equal(reps.length, TARGET_CALLS);
    assert.ok(reps[0].startsWith(`bad.kprobe:${posOf(text, '*(u64')}: `), reps[0]);
    assert.match(reps[0], /: pre handler of kprobe kprobe_target2 faulted at kprobe_target2\+0x0: bad memory read of 8 byte\(s\) at 0xffff800012345678/);
    assert.equal(out.lines.filter(l => l === 'before').length, TARGET_CALLS, 'text printed before the fault is kept');
    assert.ok(!out.lines.some(l => l.startsWith('value ')));
    assert.ok(out.lines.includes(`selftest: kprobe_target2(${RAND1}) = ${RAND1 / 3n + 1n}`));
    assert.equal(mgr.list()[0].nmissed, TARGET_CALLS);
  });

  test('registration errors carry the errno name; the other probes still register and run', () => {
    const { machine, mgr } = probeRig();
    // compiled without the image's symbol check, so the unknown symbol reaches the engine
    const c = compileProbeFile(`
kprobe notify_die { pre { return 0; } }
kprobe no_such_function { pre { return 0; } }
kprobe kprobe_target { pre { printk("hit\\n"); return 0; } }
`, 'errs.kprobe', { regNames: machine.arch.regs.map(r => r.name) });
    const r = mgr.addProbeSpecs(c.probes, 'errs.kprobe');
    assert.deepEqual(r.errors, [
      'errs.kprobe:2:1: kprobe notify_die: register_kprobe failed: -EINVAL (address is inside the kprobe blacklist)',
      "errs.kprobe:3:1: kprobe no_such_function: register_kprobe failed: -ENOENT (unknown symbol 'no_such_function')",
    ]);
    assert.equal(r.probes[2].verified, true);
    const out = runAll(machine);
    assert.equal(out.lines.filter(l => l === 'hit').length, TARGET_CALLS);
  });

  test('a kretprobe away from a function entry is -EINVAL from the engine, named as such', () => {
    const { mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'do_fork+0x1', mode: 'kretprobe' });
    assert.equal(e.verified, false);
    assert.equal(e.message, 'register_kretprobe failed: -EINVAL (a kretprobe must be placed at a function entry, not do_fork+0x1)');
  });

  test('kretprobe maxactive: a recursive function with one instance misses the nested entries (nmissed)', () => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, 'kretprobe fib maxactive=1 { return { return 0; } }');
    assert.deepEqual(r.errors, []);
    runAll(machine);
    const e = mgr.list()[0];
    assert.ok(e.hits > 0);
    assert.ok(e.nmissed > 0, 'nested fib() entries found no free instance');
    assert.ok(e.nmissed < e.hits);
    const { machine: m2, mgr: g2 } = probeRig();
    addFile(g2, 'kretprobe fib maxactive=64 { return { return 0; } }');
    runAll(m2);
    assert.equal(g2.list()[0].nmissed, 0, 'enough instances: nothing missed');
  });

  test('a probed instruction that faults while single-stepped runs the fault snippet (trapnr 14), then the kernel fixup', () => {
    const { machine, mgr } = probeRig();
    // the guarded load of probe_kernel_read_long: the first __ex_table entry
    const ex = machine.image.section('__ex_table');
    assert.ok(ex && ex.data.length >= 16);
    const insn = new DataView(ex.data.buffer, ex.data.byteOffset, 16).getBigUint64(0, true);
    assert.equal(machine.image.symbols.resolve(insn)?.sym.name, 'probe_kernel_read_long');
    const r = addFile(mgr, `kprobe 0x${insn.toString(16)} { fault { printk("fault trap %d at %pS\\n", trapnr, p->addr); return 0; } }`);
    assert.deepEqual(r.errors, []);
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    const faults = out.lines.filter(l => l.startsWith('fault trap '));
    // the self-test's read of 0x10 and one per worker (iteration ITERS / 2)
    assert.equal(faults.length, 1 + 4);
    assert.match(faults[0], /^fault trap 14 at probe_kernel_read_long\+0x[0-9a-f]+/);
    assert.ok(out.lines.includes('selftest: guarded read of 0x10: err=-14'));
    assert.ok(out.lines.includes('selftest: guarded read ok: err=0 value=6b70726f6265'));
  });

  test('disabled attribute: registered with [DISABLED], never hit until enabled', () => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, 'kprobe kprobe_target disabled { pre { printk("hit\\n"); return 0; } }');
    assert.match(mgr.debugfsList(), new RegExp(`^${hex64(sym('kprobe_target'))}  k  kprobe_target\\+0x0 .*\\[DISABLED\\]\\n$`));
    const e = mgr.list()[0];
    assert.equal(e.enabled, false);
    assert.equal(e.sites[0].flags, '[DISABLED]');
    const out = runAll(machine);
    assert.ok(!out.lines.includes('hit'));
    assert.equal(mgr.get(r.probes[0].id)?.hits, 0);
  });

  test('current, smp_processor_id and symbol() in a handler', () => {
    const { machine, mgr } = probeRig();
    addFile(mgr, `
kprobe kprobe_target2 {
  pre {
    if (symbol("kprobe_target2") == p->addr && current->pid == 1)
      printk("%s pid %d cpu %d\\n", current->comm, current->pid, smp_processor_id());
    return 0;
  }
}`);
    const out = runAll(machine);
    assert.ok(out.lines.includes('init pid 1 cpu 0'));
  });

  test('dump_stack: a Call Trace of the probed context, kretprobe trampolines shown as the real return address', () => {
    const { machine, mgr } = probeRig({ cpus: 1 });
    addFile(mgr, `
kretprobe kprobe_stacktrace_target { return { return 0; } }
kprobe kprobe_stacktrace_internal_target { pre { if (current->pid == 1) dump_stack(); return 0; } }
`);
    const out = runAll(machine);
    const i = out.lines.indexOf('Call Trace:');
    assert.ok(i > 0);
    assert.equal(out.lines[i - 1], 'CPU: 0 PID: 1 Comm: init Not tainted');
    const frames = out.lines.slice(i + 1, i + 6).map(l => l.trim().replace(/\+.*/, ''));
    assert.deepEqual(frames, ['kprobe_stacktrace_internal_target', 'kprobe_stacktrace_target', 'kprobe_stacktrace_driver', 'kprobes_selftest', 'start_kernel']);
    assert.match(out.lines[i + 1], /^ kprobe_stacktrace_internal_target\+0x0\/0x[0-9a-f]+$/);
    // the trace ends at the kernel-thread return page, named as Linux's kthread traces end
    let end = i + 1;
    while (out.lines[end + 1]?.startsWith(' ')) end++;
    assert.deepEqual(out.lines.slice(end - 1, end + 1).map(l => l.replace(/\+.*/, '')), [' start_kernel', ' ret_from_fork']);
    assert.equal(out.lines[end], ' ret_from_fork+0x0/0x1000');
  });
});
