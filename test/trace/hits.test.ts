/**
 * Every probe hit of every kind goes through kernel.probeHit: one record
 * per hit, with the kind, CPU, task, probe and seq its handler saw
 * (kernel.hitSeq is the hit's seq while its handlers run), on the sample
 * kernel (kprobe, kretprobe entry and return, jprobe, kwatch) and the
 * uprobed test program (uprobe, uretprobe). Then: the ring keeps the
 * newest records while the histograms count every return; the maxactive
 * warning's suggestion is the real concurrency; a reentry names the probe
 * being handled; replayed hits are not recorded twice; handler output is
 * attached to its hit.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rig, Rig } from '../kprobes/harness';
import type { Jprobe, Kprobe, Kretprobe, PtRegs } from '../../emulator/kprobes';
import type { HitKind, HitRecord, MissWarning } from '../../emulator/trace';
import { Machine } from '../../emulator/machine';
import { Prog } from '../uprobes/prog';
import { readFileSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';

interface Seen { seq: number; cpu: number; pid: number; comm: string }

function seen(r: { machine: Machine }, regs: PtRegs): Seen {
  const k = r.machine.kernel;
  const t = k.current(regs.cpu.id);
  return { seq: k.hitSeq, cpu: regs.cpu.id, pid: t?.pid ?? 0, comm: t?.comm ?? `swapper/${regs.cpu.id}` };
}

function ofKind(m: Machine, kind: HitKind): HitRecord[] { return m.hitLog.records().filter(h => h.kind === kind); }

/** the records of a kind are exactly the hits the handlers saw, in order */
function assertRecords(m: Machine, kind: HitKind, want: Seen[], probe: string, probeId: number): void {
  const got = ofKind(m, kind);
  assert.ok(want.length > 0, `${kind}: the handlers ran`);
  assert.deepEqual(got.map(h => ({ seq: h.seq, cpu: h.cpu, pid: h.pid, comm: h.comm })), want, `${kind}: one record per hit`);
  for (const h of got) {
    assert.equal(h.probe, probe);
    assert.equal(h.probeId, probeId);
  }
}

/** seqs are 1..hitSeq, each once, in order */
function assertContiguous(m: Machine): void {
  const seqs = m.hitLog.records().map(h => h.seq);
  assert.equal(m.hitLog.dropped, 0);
  assert.equal(seqs.length, m.kernel.hitSeq);
  seqs.forEach((s, i) => assert.equal(s, i + 1));
  assert.equal(m.hitLog.lastSeq, m.kernel.hitSeq);
}

describe('one record per hit, every kind', () => {
  test('kprobe, kretprobe entry and return, jprobe on the sample kernel (2 CPUs)', () => {
    const r: Rig = rig({ cpus: 2 });
    const k: Seen[] = [], entries: Seen[] = [], returns: Seen[] = [], j: Seen[] = [];
    const kp: Kprobe = { symbol_name: 'do_fork', pre_handler: (_p, regs) => { k.push(seen(r, regs)); return 0; } };
    const rp: Kretprobe = {
      kp: { symbol_name: 'sys_open' }, maxactive: 20,
      entry_handler: (_ri, regs) => { entries.push(seen(r, regs)); return 0; },
      handler: (_ri, regs) => { returns.push(seen(r, regs)); return 0; },
    };
    const jp: Jprobe = { kp: { symbol_name: 'vfs_read' }, entry: (_args, regs) => { j.push(seen(r, regs)); } };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.equal(r.engine.registerKretprobe(rp), 0);
    assert.equal(r.engine.registerJprobe(jp), 0);
    r.run();
    assert.equal(k.length, kp.hits);
    assertRecords(r.machine, 'kprobe', k, 'do_fork+0x0', kp.id!);
    assertRecords(r.machine, 'kretprobe-entry', entries, 'sys_open+0x0', rp.kp.id!);
    assertRecords(r.machine, 'kretprobe-return', returns, 'sys_open+0x0', rp.kp.id!);
    assertRecords(r.machine, 'jprobe', j, 'vfs_read+0x0', jp.kp.id!);
    assert.ok(new Set(k.map(s => s.cpu)).size === 2, 'hits on both CPUs');
    for (const h of ofKind(r.machine, 'kprobe')) assert.equal(h.addr, r.sym('do_fork'));
    // the latency: the return's time minus its entry's, per task (LIFO per task)
    const open = new Map<number, number[]>();
    for (const h of r.machine.hitLog.records()) {
      if (h.kind === 'kretprobe-entry') { const l = open.get(h.pid) ?? []; l.push(h.timeNs); open.set(h.pid, l); }
      if (h.kind === 'kretprobe-return') {
        const t0 = open.get(h.pid)?.pop();
        assert.ok(t0 !== undefined);
        assert.equal(h.latencyNs, h.timeNs - t0);
        assert.ok(h.latencyNs > 0);
      }
    }
    assert.equal(r.machine.hitLog.histogram(rp.kp.id!)?.count, returns.length);
    assert.equal(r.machine.hitLog.histograms().length, 1);
    assertContiguous(r.machine);
    // times and instruction counts never go back on one CPU
    for (const cpu of [0, 1]) {
      const hs = r.machine.hitLog.records().filter(h => h.cpu === cpu);
      for (let i = 1; i < hs.length; i++) {
        assert.ok(hs[i].timeNs >= hs[i - 1].timeNs);
        assert.ok(hs[i].instructions >= hs[i - 1].instructions);
      }
    }
  });

  test('the same run records the same hits (deterministic seqs, times, instruction counts)', () => {
    const once = (): string => {
      const r = rig({ cpus: 2 });
      r.engine.registerKprobe({ symbol_name: 'do_fork', pre_handler: () => 0 });
      r.engine.registerKretprobe({ kp: { symbol_name: 'fib' }, maxactive: 3, handler: () => 0 });
      r.run();
      return JSON.stringify(r.machine.hitLog.records(), (_k, v) => (typeof v === 'bigint' ? v.toString(16) : v));
    };
    const a = once();
    assert.ok(a.length > 1000);
    assert.equal(once(), a);
  });

  test('kwatch: a watchpoint hit is one record, named by owner, type, address and length', () => {
    const r = rig({ cpus: 2 });
    const w: Seen[] = [];
    const reg = r.machine.kwatch.register_kwatch(r.sym('nr_forks'), 8, 'w', ctx => { w.push(seen(r, ctx.hit.regs)); });
    assert.equal(reg, 0);
    r.run();
    const bp = r.machine.hwbp.list()[0];
    assertRecords(r.machine, 'watchpoint', w, 'kwatch w nr_forks+0x0 len 8', bp.id);
    assert.equal(w.length, bp.hits);
    for (const h of ofKind(r.machine, 'watchpoint')) assert.equal(h.addr, r.sym('nr_forks'));
    assertContiguous(r.machine);
  });

  test('uprobe and uretprobe in a user program (fork and exec included)', () => {
    const p = new Prog('x86_64', 'O2');
    const u: Seen[] = [], ur: Seen[] = [];
    const m = p.m;
    p.register('leaf', { handler: (_uc, regs) => { u.push(seen({ machine: m }, regs)); return 0; } });
    p.register('fact', { ret_handler: (_uc, _func, regs) => { ur.push(seen({ machine: m }, regs)); return 0; } });
    p.runGolden();
    const leaf = p.uprobe('leaf'), fact = p.uprobe('fact');
    const ids = m.uprobes.traps;
    assert.notEqual(ids.idOf(leaf), ids.idOf(fact));
    assertRecords(m, 'uprobe', u, `${leaf.path}:0x${leaf.offset.toString(16)}`, ids.idOf(leaf));
    assertRecords(m, 'uretprobe', ur, `${fact.path}:0x${fact.offset.toString(16)}`, ids.idOf(fact));
    assert.equal(new Set(u.map(s => s.pid)).size, 3, 'pid 1, the forked child, the exec\'d one');
    for (const h of ofKind(m, 'uprobe')) assert.equal(h.addr, p.vaddr('leaf'));
    for (const h of ofKind(m, 'uretprobe')) {
      assert.equal(h.addr, p.vaddr('fact'));
      assert.ok((h.latencyNs ?? -1) > 0, 'entry -> return time');
    }
    assert.equal(ofKind(m, 'uprobe').length, leaf.hits, 'fact (return consumer only) records no entry hit');
    assertContiguous(m);
  });
});

describe('the ring and the histograms', () => {
  test('hitLogSize: the newest N records kept, the others counted as dropped; the histogram still counts every return', () => {
    const m = new Machine(rig().image, { cpus: 2, hitLogSize: 100 });
    let returns = 0;
    const rp: Kretprobe = { kp: { symbol_name: 'fib' }, maxactive: 64, handler: () => { returns++; return 0; } };
    assert.equal(m.kprobes.registerKretprobe(rp), 0);
    m.run();
    const recs = m.hitLog.records();
    assert.equal(m.hitLog.size, 100);
    assert.equal(recs.length, 100);
    assert.ok(m.kernel.hitSeq > 10_000);
    assert.equal(m.hitLog.dropped, m.kernel.hitSeq - 100);
    assert.deepEqual(recs.map(h => h.seq), Array.from({ length: 100 }, (_, i) => m.kernel.hitSeq - 99 + i));
    assert.equal(m.hitLog.histogram(rp.kp.id!)?.count, returns);
    assert.equal(m.hitLog.histogram(rp.kp.id!)?.buckets.reduce((a, b) => a + b, 0), returns);
    assert.throws(() => new Machine(rig().image, { hitLogSize: 0 }), /"hitLogSize" must be an integer from 1 to 16777216, got 0/);
  });
});

describe('missed hits made visible', () => {
  test('kretprobe maxactive too small: the suggestion is the real concurrency (recursive fib on 2 CPUs)', () => {
    const r = rig({ cpus: 2 });
    // the truth: a kretprobe with room for every call, counting calls in flight
    let active = 0, most = 0;
    const big: Kretprobe = {
      kp: { symbol_name: 'fib' }, maxactive: 64,
      entry_handler: () => { active++; most = Math.max(most, active); return 0; }, handler: () => { active--; return 0; },
    };
    const small: Kretprobe = { kp: { symbol_name: 'fib' }, maxactive: 2, handler: () => 0 };
    assert.equal(r.engine.registerKretprobe(big), 0);
    assert.equal(r.engine.registerKretprobe(small), 0);
    const emitted: MissWarning[] = [];
    r.machine.hitLog.onWarning(w => emitted.push(w));
    r.run();
    assert.equal(big.nmissed, 0);
    assert.ok((small.nmissed ?? 0) > 1000);
    assert.ok(most > 2, `fib recursion: ${most} calls in flight`);
    const ws = r.machine.hitLog.warnings();
    assert.equal(ws.length, 1);
    const w = ws[0];
    assert.equal(w.reason, 'maxactive');
    assert.equal(w.probeId, small.kp.id);
    assert.equal(w.missed, small.nmissed);
    assert.equal(w.suggestedMaxactive, most);
    assert.equal(w.text, `kretprobe fib+0x0: ${small.nmissed} instances missed (maxactive=2); maxactive=${most} would have sufficed (observed ${most} concurrent calls)`);
    // deduplicated: at 1, 2, 4, ... misses
    assert.deepEqual(emitted.map(e => e.missed), Array.from({ length: Math.floor(Math.log2(small.nmissed!)) + 1 }, (_, i) => 2 ** i));
    // the missed entries are not hits: seqs stay contiguous, one entry record per instance taken
    assertContiguous(r.machine);
    assert.equal(ofKind(r.machine, 'kretprobe-entry').filter(h => h.probeId === small.kp.id).length, (small.kp.hits ?? 0) - small.nmissed!);
    assert.equal(r.machine.kernel.missSeq, small.nmissed);
  });

  test('maxactive = the suggestion: no instance missed', () => {
    const first = rig({ cpus: 2 });
    first.engine.registerKretprobe({ kp: { symbol_name: 'fib' }, maxactive: 1, handler: () => 0 });
    first.run();
    const suggested = first.machine.hitLog.warnings()[0].suggestedMaxactive!;
    const again = rig({ cpus: 2 });
    const rp: Kretprobe = { kp: { symbol_name: 'fib' }, maxactive: suggested, handler: () => 0 };
    again.engine.registerKretprobe(rp);
    again.run();
    assert.equal(rp.nmissed, 0);
    assert.deepEqual(again.machine.hitLog.warnings(), []);
  });

  test('kprobe reentry: the warning names the probe being handled', () => {
    const r = rig({ cpus: 1 });
    const inner: Kprobe = { symbol_name: 'kprobe_target2', pre_handler: () => 0 };
    const outer: Kprobe = {
      symbol_name: 'kprobe_target',
      pre_handler: (_p, regs) => { r.engine.nested.call(regs.cpu, r.sym('kprobe_target2'), [5n]); return 0; },
    };
    assert.equal(r.engine.registerKprobe(inner), 0);
    assert.equal(r.engine.registerKprobe(outer), 0);
    r.run();
    assert.ok((inner.nmissed ?? 0) > 0);
    const w = r.machine.hitLog.warnings().find(x => x.probeId === inner.id);
    assert.ok(w, 'a warning for the missed probe');
    assert.equal(w.reason, 'reentry');
    assert.equal(w.runningProbeId, outer.id);
    assert.equal(w.runningProbe, 'kprobe_target+0x0');
    assert.equal(w.missed, inner.nmissed);
    assert.equal(w.text, `kprobe kprobe_target2+0x0: ${inner.nmissed} hits missed (reentered while kprobe_target+0x0 was being handled on CPU 0)`);
  });
});

describe('replays and handler output', () => {
  test('hits replayed after going back (kernel.hitSeq restored) are not recorded twice', () => {
    const r = rig({ cpus: 2 });
    const kp: Kprobe = { symbol_name: 'fib', pre_handler: () => 0 };
    r.engine.registerKprobe(kp);
    const seen: number[] = [];
    r.machine.hitLog.onHit(h => seen.push(h.seq));
    while (r.machine.kernel.hitSeq < 50) r.machine.runSlice(100);
    const at = r.machine.kernel.hitSeq;
    // as the time-travel restore does with the machine state: the counter goes back by 10 hits
    r.machine.kernel.hitSeq = at - 10;
    r.run();
    const seqs = r.machine.hitLog.records().map(h => h.seq);
    assert.equal(new Set(seqs).size, seqs.length, 'no seq twice');
    assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1));
    assert.deepEqual(seen, seqs);
    assert.equal(r.machine.hitLog.lastSeq, r.machine.kernel.hitSeq);
    // the 10 hits after the rewind were replays: recorded once, though they ran twice
    assert.equal(kp.hits, r.machine.kernel.hitSeq + 10);
  });

  test('a probe file\'s handler output is attached to its hit (kretprobe_example: sys_open failures)', () => {
    const r = rig({ cpus: 2 });
    const f = repoPath('examples', 'probes', 'kretprobe_example.kprobe');
    const c = probesOf(r.machine).compileProbeFile(readFileSync(f, 'utf8'), f);
    assert.deepEqual(c.diagnostics.filter(d => d.severity === 'error'), []);
    assert.deepEqual(probesOf(r.machine).addProbeSpecs(c.specs, f).errors, []);
    const lines = r.run().filter(l => /^sys_open: return val = -\d+/.test(l));
    assert.ok(lines.length > 0);
    const returns = ofKind(r.machine, 'kretprobe-return');
    const withOutput = returns.filter(h => h.output.length > 0);
    assert.deepEqual(withOutput.flatMap(h => h.output), lines);
    assert.ok(withOutput.every(h => h.output.length === 1));
    assert.ok(ofKind(r.machine, 'kretprobe-entry').every(h => h.output.length === 0), 'the entry handler prints nothing');
  });
});
