/**
 * The breakpoint API the DAP adapter uses: stops with reason 'breakpoint'
 * naming symbol+0xoff, conditions, hit conditions, log messages, return
 * breakpoints, enable/disable, remove, and the list with hits.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHitCondition } from '../../emulator/probes';
import type { BreakpointHit } from '../../emulator/probes';
import { RAND1, TARGET_CALLS, marker, probeRig, runAll, sampleImage, sym } from './helpers';

describe('breakpoints as probes', () => {
  test('a kprobe breakpoint stops the machine at every hit: reason breakpoint, symbol+0xoff, reportPc = probe address', () => {
    const { machine, mgr } = probeRig();
    const hits: BreakpointHit[] = [];
    mgr.onBreakpointHit(h => hits.push(h));
    const e = mgr.addBreakpoint({ target: 'kprobe_target' });
    assert.equal(e.verified, true);
    const out = runAll(machine);
    assert.equal(out.exit.code, 0);
    assert.equal(out.stops.length, TARGET_CALLS);
    const s = out.stops[0];
    assert.equal(s.cpu, 0);
    assert.deepEqual(s.request, { reason: 'breakpoint', description: 'breakpoint at kprobe_target+0x0', reportPc: sym('kprobe_target'), probeId: e.sites[0].engineId });
    assert.equal(hits.length, TARGET_CALLS);
    assert.equal(hits[0].breakpointId, e.id);
    assert.equal(hits[0].where, 'kprobe_target+0x0');
    assert.equal(hits[TARGET_CALLS - 1].hitCount, TARGET_CALLS);
    // stopping changes nothing in what the kernel computes
    assert.ok(out.lines.includes(`selftest: kprobe_target(${RAND1}) = ${RAND1 / 3n}`));
    assert.equal(mgr.get(e.id)?.hits, TARGET_CALLS);
  });

  test('condition: only hits where it holds stop (arg0 == the self-test value)', () => {
    const { machine, mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'kprobe_target', condition: `arg0 == ${RAND1}` });
    assert.equal(e.verified, true, e.message);
    const out = runAll(machine);
    assert.equal(out.stops.length, 1);
    assert.equal(out.stops[0].request.description, 'breakpoint at kprobe_target+0x0');
    const after = mgr.get(e.id);
    assert.equal(after?.hits, TARGET_CALLS, 'the probe ran at every call');
    assert.equal(after?.conditionHits, 1);
  });

  test('hit condition: %10 stops at every 10th hit; >=95 at the last three', () => {
    const r1 = probeRig();
    r1.mgr.addBreakpoint({ target: 'kprobe_target', hitCondition: '%10' });
    assert.equal(runAll(r1.machine).stops.length, Math.floor(TARGET_CALLS / 10));
    const r2 = probeRig();
    r2.mgr.addBreakpoint({ target: 'kprobe_target', hitCondition: '>=95' });
    assert.equal(runAll(r2.machine).stops.length, TARGET_CALLS - 94);
  });

  test('parseHitCondition: DAP forms; bare N means >= N; bad input is an error text', () => {
    const ok = (t: string, h: number): boolean => { const p = parseHitCondition(t); assert.ok(typeof p === 'function', t); return p(h); };
    assert.equal(ok('3', 2), false);
    assert.equal(ok('3', 3), true);
    assert.equal(ok('3', 4), true);
    assert.equal(ok('==3', 4), false);
    assert.equal(ok('= 3', 3), true);
    assert.equal(ok('>3', 3), false);
    assert.equal(ok('<3', 2), true);
    assert.equal(ok('<=3', 3), true);
    assert.equal(ok('%2', 4), true);
    assert.match(String(parseHitCondition('x5')), /invalid hit condition 'x5'/);
    assert.match(String(parseHitCondition('%0')), /invalid hit condition/);
  });

  test('log message: prints every hit to the console (source probe) and never stops', () => {
    const { machine, mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'kprobe_target', logMessage: 'target({arg0}) by {current->comm}' });
    assert.equal(e.verified, true, e.message);
    const out = runAll(machine);
    assert.equal(out.stops.length, 0);
    const logs = out.records.filter(r => r.text.startsWith('target('));
    assert.equal(logs.length, TARGET_CALLS);
    assert.ok(logs.every(r => r.source === 'probe'));
    assert.equal(logs[0].text, `target(${RAND1}) by init`);
  });

  test('"p:" and "k:" prefixes (kprobe_events / perf-probe habits) make a kprobe at symbol+offset', () => {
    for (const prefix of ['p:', 'k:']) {
      const { machine, mgr } = probeRig();
      const e = mgr.addBreakpoint({ target: `${prefix}kprobe_target`, hitCondition: '==1' });
      assert.equal(e.kind, 'kprobe');
      assert.equal(e.verified, true, e.message);
      assert.equal(e.sites[0].addr, sampleImage().symbols.lookup('kprobe_target')?.value);
      const out = runAll(machine);
      assert.equal(out.stops.length, 1);
      assert.equal(out.stops[0].request.description, 'breakpoint at kprobe_target+0x0');
    }
  });

  test('kretprobe mode ("r:" prefix): stops when the function returns, with its return value', () => {
    const { machine, mgr } = probeRig();
    const hits: BreakpointHit[] = [];
    mgr.onBreakpointHit(h => hits.push(h));
    const e = mgr.addBreakpoint({ target: 'r:kprobe_target', condition: `regs_return_value(regs) == ${RAND1 / 3n}` });
    assert.equal(e.kind, 'kretprobe');
    assert.equal(e.verified, true, e.message);
    const out = runAll(machine);
    assert.equal(out.stops.length, 1);
    assert.equal(hits[0].returnValue, RAND1 / 3n);
    assert.equal(hits[0].mode, 'kretprobe');
    assert.equal(hits[0].maxactive, 10, 'the engine filled in register_kretprobe\'s default max(10, 2 * NR_CPUS)');
    // reportPc: the return address, inside the caller (the self-test)
    assert.equal(sampleImage().symbols.resolve(hits[0].reportPc)?.sym.name, 'kprobes_selftest');
    assert.equal(out.stops[0].request.reportPc, hits[0].reportPc);
    assert.match(out.stops[0].request.description, /^return from kprobe_target = 0x[0-9a-f]+ to kprobes_selftest\+0x[0-9a-f]+$/);
    assert.equal(machine.exit?.code, 0);
  });

  test('a line breakpoint stops at the #BP line; disable after the first stop, enable again after the next power-off', () => {
    const m = marker('kprobe_target');
    const { machine, mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: `${m.file}:${m.line}` });
    assert.equal(e.verified, true, e.message);
    const out = runAll(machine, (_s, n) => {
      if (n === 1) {
        assert.equal(mgr.setEnabled(e.id, false), undefined);
        const d = mgr.get(e.id);
        assert.equal(d?.enabled, false);
        assert.ok(d?.sites.every(s => s.flags === '[DISABLED]'));
        assert.match(mgr.debugfsList(), /\[DISABLED\]/);
      }
    });
    assert.equal(out.stops.length, 1);
    const pc = out.stops[0].request.reportPc as bigint;
    assert.equal(sampleImage().lines?.lineForAddress(pc)?.line, m.line);
    assert.equal(mgr.setEnabled(e.id, true), undefined);
    assert.equal(mgr.get(e.id)?.enabled, true);
    assert.doesNotMatch(mgr.debugfsList(), /\[DISABLED\]/);
  });

  test('remove: unregistered from the engine, the machine no longer stops', () => {
    const { machine, mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'kprobe_target' });
    const keep = mgr.addBreakpoint({ target: 'kprobe_target2', logMessage: 'two' });
    const out = runAll(machine, (_s, n) => { if (n === 2) assert.equal(mgr.remove(e.id), true); });
    assert.equal(out.stops.length, 2);
    assert.equal(mgr.get(e.id), undefined);
    assert.equal(mgr.remove(e.id), false);
    assert.deepEqual(mgr.list().map(p => p.id), [keep.id]);
    assert.doesNotMatch(mgr.debugfsList(), /kprobe_target\+/);
    assert.equal(out.lines.filter(l => l === 'two').length, TARGET_CALLS);
  });

  test('errors: unknown symbol -ENOENT, blacklisted -EINVAL, bad condition, kretprobe on a line', () => {
    const { mgr } = probeRig();
    const a = mgr.addBreakpoint({ target: 'no_such_fn' });
    assert.equal(a.verified, false);
    assert.equal(a.message, "register_kprobe failed: -ENOENT (unknown symbol 'no_such_fn')");
    const b = mgr.addBreakpoint({ target: 'notify_die' });
    assert.equal(b.message, 'register_kprobe failed: -EINVAL (address is inside the kprobe blacklist)');
    const c = mgr.addBreakpoint({ target: 'do_fork', condition: 'regs->nosuch == 1' });
    assert.equal(c.verified, false);
    assert.match(c.message ?? '', /^condition: 1:\d+: .*nosuch/);
    const d = mgr.addBreakpoint({ target: 'fork.c:30', mode: 'kretprobe' });
    assert.match(d.message ?? '', /must be on a function/);
    assert.equal(mgr.debugfsList(), '', 'nothing registered');
    assert.deepEqual(mgr.list().map(p => p.verified), [false, false, false, false]);
  });

  test('list: probe files and breakpoints in one list with hits, nmissed and debugfs flags', () => {
    const { machine, mgr } = probeRig();
    mgr.addProbeFile('kprobe kprobe_target { pre { return 0; } }\n', 'a.kprobe');
    mgr.addBreakpoint({ target: 'kprobe_target', logMessage: 'x' });
    mgr.addBreakpoint({ target: 'kprobe_target2', enabled: false });
    runAll(machine);
    const l = mgr.list();
    assert.deepEqual(l.map(p => [p.origin, p.kind, p.target, p.hits, p.nmissed]), [
      ['file', 'kprobe', 'kprobe_target', TARGET_CALLS, 0],
      ['breakpoint', 'kprobe', 'kprobe_target', TARGET_CALLS, 0],
      ['breakpoint', 'kprobe', 'kprobe_target2', 0, 0],
    ]);
    // flags as the debugfs list shows them (the optimizer may have made kprobe_target [OPTIMIZED])
    const listed = mgr.debugfsList().split('\n').filter(x => x);
    const flagsOf = (a: bigint): string[] => listed.filter(x => x.startsWith(a.toString(16))).map(x => /((?:\[[A-Z]+\])*)$/.exec(x)?.[1] ?? '');
    assert.deepEqual(flagsOf(sym('kprobe_target')), [l[1].sites[0].flags, l[0].sites[0].flags]);
    assert.match(l[0].sites[0].flags, /^(\[OPTIMIZED\])?$/);
    assert.deepEqual(flagsOf(sym('kprobe_target2')), ['[DISABLED]']);
    assert.equal(l[2].sites[0].flags, '[DISABLED]');
    assert.deepEqual(l[0].file, { name: 'a.kprobe', line: 1, column: 1 });
    assert.deepEqual(mgr.list('breakpoint').map(p => p.target), ['kprobe_target', 'kprobe_target2']);
  });
});
