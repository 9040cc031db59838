/**
 * Handler faults and runaway handlers, as Linux would treat them, on the
 * sample kernel:
 *  - a handler fault that nobody handles (no `fault` snippet, or one that
 *    returns 0; handler code has no exception-table fixup) oopses the CPU,
 *    the report naming the handler's file:line:col; the post handler never
 *    runs; handlerFaults: 'report' keeps the friendlier behaviour;
 *  - handler steps are charged to the CPU's virtual clock and to the
 *    machine's instruction limit, and a probe whose handlers keep exceeding
 *    their step budget is disabled, said once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { HANDLER_STEP_SLOTS, RUNAWAY_DISABLE_AFTER } from '../../emulator/probes';
import { RunawayWatch } from '../../emulator/probes/runaway';
import { DEFAULT_STEP_BUDGET } from '../../emulator/handlers';
import { TARGET_CALLS, addFile, probeRig, runAll, sampleImage } from './helpers';
import { probesOf } from '../../emulator/probes/attach';

/** 1-based line:column of the first occurrence of needle in text */
function posOf(text: string, needle: string): string {
  const i = text.indexOf(needle);
  assert.ok(i >= 0, needle);
  const before = text.slice(0, i).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

const NULL_WRITE = (fault: string): string => `
kprobe kprobe_target {
  pre { printk("pre\\n"); *(u64 *)0x10 = 1; return 0; }
  post { printk("post\\n"); }${fault}
}`;

describe('a handler fault nobody handles (an oops, as in Linux)', () => {
  for (const [what, fault] of [
    ['the fault handler returns 0', '\n  fault { printk("fault_handler trap %d\\n", trapnr); return 0; }'],
    ['there is no fault handler', ''],
  ] as const) {
    test(`${what}: the CPU oopses, the report names the handler's file:line:col; no post handler, the kernel does not go on`, () => {
      const { machine, mgr } = probeRig();
      const text = NULL_WRITE(fault);
      addFile(mgr, text, 'null.kprobe');
      const out = runAll(machine);
      assert.equal(machine.kernel.oopsCount, 1, out.lines.join('\n'));
      assert.notEqual(out.exit.reason, 'poweroff', 'the CPU running init died: the kernel never powers off');
      const emu = out.records.filter(r => r.source === 'emulator').map(r => r.text);
      const at = emu.indexOf('BUG: kernel NULL pointer dereference, address: 0000000000000010');
      assert.ok(at >= 0, emu.join('\n'));
      assert.deepEqual(emu.slice(at + 1, at + 5), [
        '#PF: supervisor write access in kernel mode',
        '#PF: error_code(0x0002) - not-present page',
        'Oops: 0002 [#1] SMP',
        `null.kprobe:${posOf(text, '*(u64')}: pre handler of kprobe kprobe_target faulted at kprobe_target+0x0: NULL pointer dereference: write of 8 byte(s) at 0x10`,
      ]);
      assert.ok(emu.some(l => /^CPU: \d PID: \d+ Comm: /.test(l)));
      assert.ok(!out.lines.includes('post'), 'the post handler does not run after an oops');
      assert.equal(out.lines.filter(l => l === 'pre').length, 1, 'the oopsed CPU was the only one to hit the probe');
      assert.equal(out.lines.filter(l => l.startsWith('fault_handler trap ')).length, fault ? 1 : 0);
      if (fault) assert.ok(out.lines.includes('fault_handler trap 14'));
      assert.ok(!out.lines.some(l => l.startsWith('selftest: kprobe_target(')), 'the probed call never returned');
      assert.equal(mgr.list()[0].nmissed, 1);
    });
  }

  test('a fault handler that returns 1 handles it: no oops, no report, the probe goes on at every hit', () => {
    const { machine, mgr } = probeRig();
    addFile(mgr, NULL_WRITE('\n  fault { return 1; }'));
    const out = runAll(machine);
    assert.equal(out.exit.reason, 'poweroff');
    assert.equal(out.exit.code, 0);
    assert.equal(machine.kernel.oopsCount, 0);
    assert.deepEqual(out.records.filter(r => r.source === 'emulator').map(r => r.text), []);
    assert.equal(out.lines.filter(l => l === 'pre').length, TARGET_CALLS);
    assert.equal(mgr.list()[0].nmissed, TARGET_CALLS);
  });

  test("handlerFaults: 'report': one diagnostic per fault (source 'emulator'), the fault counts as handled", () => {
    const { machine, mgr } = probeRig({ handlerFaults: 'report' });
    const text = NULL_WRITE('');
    addFile(mgr, text, 'null.kprobe');
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    assert.equal(machine.kernel.oopsCount, 0);
    const reps = out.records.filter(r => r.text.includes('faulted'));
    assert.equal(reps.length, TARGET_CALLS);
    assert.ok(reps.every(r => r.source === 'emulator'));
    assert.equal(reps[0].text, `null.kprobe:${posOf(text, '*(u64')}: pre handler of kprobe kprobe_target faulted at kprobe_target+0x0: NULL pointer dereference: write of 8 byte(s) at 0x10`);
  });

  test('a divide by zero in a return handler: a divide error oops naming the handler', () => {
    const { machine, mgr } = probeRig();
    const text = 'kretprobe kprobe_target {\n  return { unsigned long z = 0; printk("%lu\\n", 1 / z); return 0; }\n}';
    addFile(mgr, text, 'div.kprobe');
    const out = runAll(machine);
    assert.equal(machine.kernel.oopsCount, 1);
    const i = out.lines.indexOf('divide error: 0000 [#1] SMP');
    assert.ok(i >= 0, out.lines.join('\n'));
    assert.match(out.lines[i + 1], new RegExp(`^div\\.kprobe:${posOf(text, '1 / z')}: return handler of kretprobe kprobe_target faulted at kprobe_target\\+0x0: `));
  });
});

describe('runaway handlers bounded as a whole (they cannot hang the machine)', () => {
  test('handler steps are charged to the CPU\'s virtual time: ktime_get() after the handler sees them', () => {
    const steps = 5000;
    const { machine, mgr } = probeRig({ cpus: 1 });
    addFile(mgr, `
kprobe kprobe_target {
  pre { unsigned long i; printk("t0 %llu\\n", ktime_get_ns()); for (i = 0; i < ${steps}; i++) ; return 0; }
  post { printk("t1 %llu\\n", ktime_get_ns()); }
}`);
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    const t0 = out.lines.filter(l => l.startsWith('t0 ')).map(l => BigInt(l.slice(3)));
    const t1 = out.lines.filter(l => l.startsWith('t1 ')).map(l => BigInt(l.slice(3)));
    assert.equal(t0.length, TARGET_CALLS);
    assert.equal(t1.length, TARGET_CALLS);
    // every iteration is at least one step (HANDLER_STEP_SLOTS ns each); the single-step itself is a few ns
    const gaps = t0.map((t, i) => t1[i] - t);
    assert.ok(gaps.every(g => g >= BigInt(steps * HANDLER_STEP_SLOTS) && g < BigInt(4 * steps * HANDLER_STEP_SLOTS)), gaps.slice(0, 3).join(' '));
    // deterministic: the same run gives the same transcript
    const again = probeRig({ cpus: 1 });
    addFile(again.mgr, `
kprobe kprobe_target {
  pre { unsigned long i; printk("t0 %llu\\n", ktime_get_ns()); for (i = 0; i < ${steps}; i++) ; return 0; }
  post { printk("t1 %llu\\n", ktime_get_ns()); }
}`);
    assert.deepEqual(runAll(again.machine).lines, out.lines);
  });

  test('handler steps count toward maxInstructions: a run that fits without the handler work hits the limit with it', () => {
    const plain = new Machine(sampleImage(), { cpus: 2 });
    assert.equal(plain.run().reason, 'poweroff');
    const limit = plain.totalInstructions + 1_000_000;
    const m = new Machine(sampleImage(), { cpus: 2, maxInstructions: limit });
    // ~2 steps per iteration, well below the step budget; 97 hits: about 3.9 M steps
    addFile(probesOf(m), 'kprobe kprobe_target { pre { unsigned long i; for (i = 0; i < 20000; i++) ; return 0; } }');
    const out = runAll(m);
    assert.equal(out.exit.reason, 'limit');
    assert.ok(m.totalInstructions >= limit);
    assert.ok(probesOf(m).list()[0].hits < TARGET_CALLS);
  });

  test(`the issue's printk loop with maxInstructions 2000000 ends promptly: disabled after ${RUNAWAY_DISABLE_AFTER} budget faults in a row, said once`, () => {
    const m = new Machine(sampleImage(), { cpus: 2, maxInstructions: 2_000_000 });
    const text = 'kprobe do_fork { pre { while (1) { printk("x\\n"); } return 0; } }';
    addFile(probesOf(m), text, 'loop.kprobe');
    const t0 = Date.now();
    const out = runAll(m);
    const ms = Date.now() - t0;
    assert.ok(ms < 30_000, `${ms} ms`);
    const xs = out.lines.filter(l => l === 'x').length;
    assert.ok(xs <= RUNAWAY_DISABLE_AFTER * DEFAULT_STEP_BUDGET / 2, `${xs} lines`);
    assert.ok(xs > 0);
    const e = probesOf(m).list()[0];
    assert.equal(e.hits, RUNAWAY_DISABLE_AFTER);
    assert.equal(e.enabled, false);
    assert.ok(e.sites[0].flags.includes('[DISABLED]'), e.sites[0].flags);
    const dis = out.records.filter(r => r.text.includes(' disabled: '));
    assert.equal(dis.length, 1);
    assert.equal(dis[0].source, 'emulator');
    assert.equal(dis[0].text, `kprobe at do_fork+0x0 disabled: its handlers exceeded their step budget on ${RUNAWAY_DISABLE_AFTER} hits in a row (loop.kprobe:1:1: kprobe do_fork)`);
    assert.equal(out.records.filter(r => r.text.includes('exceeded its step budget')).length, RUNAWAY_DISABLE_AFTER);
    assert.equal(m.kernel.oopsCount, 0, 'a budget fault is the watchdog, not an oops');
    assert.equal(out.exit.reason, 'poweroff', 'the kernel goes on without the probe');
  });

  test('RunawayWatch: only budget faults in a row count; a completed run resets the streak', () => {
    const w = new RunawayWatch();
    const seq = (ops: string): boolean[] => [...ops].map(c => (c === 'b' ? w.budgetFault() : (w.completed(), false)));
    assert.deepEqual(seq('bbcbbcbb'), Array(8).fill(false));
    assert.deepEqual(seq('b'), [true], 'the third in a row');
    assert.deepEqual(seq('bbb'), [false, false, true], 'the streak starts again after disabling');
  });
});
