/**
 * Time travel (emulator/timetravel): snapshots put back in place and
 * re-execution. The oracle is the machine itself run forward: every state
 * reached by going back must be the state the forward run had at that
 * point — registers, instruction counts, every guest byte, the kernel log.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf';
import { Machine, SliceResult } from '../../emulator/machine';
import { capture, restore } from '../../emulator/timetravel/snapshot';
import { repoPath } from '../util/paths';
import { kprobeProfile } from '../../emulator/tracing/events';
import { probesOf } from '../../emulator/probes/attach';
import { recordMachine } from '../../emulator/timetravel/recorder';

const ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;
const PROBE_FILES = ['kprobe_example', 'kretprobe_example', 'jprobe_example', 'kwatch_example'];

function kernel(arch: string, probes: boolean): Machine {
  const m = new Machine(loadElf(repoPath(`examples/kernel/build/kernel-${arch}.elf`)));
  if (probes) {
    for (const f of PROBE_FILES) {
      const r = probesOf(m).addProbeFile(readFileSync(repoPath(`examples/probes/${f}.kprobe`), 'utf8'), `${f}.kprobe`);
      assert.deepEqual(r.errors, [], f);
    }
  }
  return m;
}

/** everything a user can see of the machine, hashed */
function stateOf(m: Machine): string {
  const h = createHash('sha256');
  h.update(`${m.totalInstructions} ${m.retired.join(',')} ${m.kernel.hitSeq} ${m.exit?.reason ?? ''}\n`);
  for (const c of m.cpus) h.update(m.arch.regs.map((_, i) => c.getReg(i).toString(16)).join(',') + '\n');
  for (const r of m.kernel.mem.allRegions()) {
    if (r.device) continue;
    h.update(`${r.name} ${r.base} ${r.size} ${r.perms}\n`);
    h.update(r.bytes);
  }
  h.update(m.printkRecords.map(r => `${r.timeNs} ${r.cpu} ${r.text}`).join('\n'));
  h.update(m.kernel.tasks().map(t => `${t.pid}:${t.state}:${t.cpu}`).join(' '));
  return h.digest('hex');
}

/** the user processes: every mapping's bytes, registers kept for signals, open files */
function processState(m: Machine): string {
  const h = createHash('sha256');
  for (const [pid, p] of [...m.kernel.processes].sort((a, b) => a[0] - b[0])) {
    h.update(`${pid} ${p.comm}\n`);
    for (const r of p.mm.allRegions()) {
      h.update(`${r.name} ${r.base} ${r.size} ${r.perms}\n`);
      if (!r.device) h.update(r.bytes);
    }
  }
  return h.digest('hex');
}

function lcg(seed: number): (n: number) => number {
  let s = seed;
  return n => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s % n; };
}

function runToEnd(m: Machine, budget = 50_000): SliceResult {
  let r: SliceResult;
  do { r = m.runSlice(budget); } while (r.kind === 'running' || r.kind === 'stopped');
  return r;
}

describe('snapshots', () => {
  test('restore puts every byte and register back, and the run from there is the same run', () => {
    const m = kernel('x86_64', true);
    m.runSlice(150_000);
    const s = capture(m);
    const at = stateOf(m);
    runToEnd(m);
    const end = stateOf(m);
    restore(s);
    assert.equal(stateOf(m), at);
    runToEnd(m);
    assert.equal(stateOf(m), end);
  });

  test('a second snapshot shares the chunks that did not change', () => {
    const m = kernel('x86_64', false);
    m.runSlice(100_000);
    const a = capture(m);
    const b = capture(m, a);
    assert.ok(a.newBytes > 50_000, `first snapshot copies the guest memory (its chunks of zeros share one copy) (${a.newBytes})`);
    assert.equal(b.newBytes, 0, 'nothing ran between: nothing new');
    m.runSlice(10_000);
    const c = capture(m, b);
    assert.ok(c.newBytes > 0 && c.newBytes < a.newBytes / 4, `a short run dirties a few chunks (${c.newBytes} of ${a.newBytes})`);
  });
});

for (const arch of ARCHES) {
  describe(`time travel on ${arch}`, () => {
    test('going back to any recorded point gives the state the forward run had there', () => {
      const m = kernel(arch, arch === 'x86_64');
      const out: string[] = [];
      m.onPrintk(r => out.push(r.text));
      const tt = recordMachine(m, { interval: 40_000, captureRatio: 0 });
      const rnd = lcg(7);
      const marks: { cpu: number; retired: number; state: string }[] = [];
      for (;;) {
        const r = m.runSlice(1_000 + rnd(15_000));
        if (r.kind === 'exited' || r.kind === 'limit') break;
        if (rnd(3) === 0) {
          const cpu = rnd(m.cpus.length);
          if (m.stepCpu(cpu, 1 + rnd(3)).kind === 'running') marks.push({ cpu, retired: m.retired[cpu], state: stateOf(m) });
        }
      }
      assert.ok(marks.length >= 12, `enough points (${marks.length})`);
      assert.ok(tt.snapshotCount >= 8, `periodic snapshots (${tt.snapshotCount})`);
      const end = stateOf(m);
      const heard = out.length;
      // in a shuffled order: backwards and forwards
      const order = marks.map((_, i) => i).sort((a, b) => ((a * 7919) % 97) - ((b * 7919) % 97));
      for (const i of order) {
        const k = marks[i];
        const r = tt.seek({ kind: 'retired', cpu: k.cpu, retired: k.retired });
        assert.ok(r.ok, r.why);
        assert.equal(stateOf(m), k.state, `point ${i}: CPU ${k.cpu} at ${k.retired}`);
        assert.ok(tt.inPast);
      }
      // forward again along the recording: the same end, and the console heard nothing twice
      runToEnd(m);
      assert.equal(tt.inPast, false);
      assert.equal(stateOf(m), end);
      assert.equal(out.length, heard, 're-execution printed nothing the listeners had');
    });

    test('a step back then a step forward is no step at all', () => {
      const m = kernel(arch, false);
      const tt = recordMachine(m, { interval: 30_000, captureRatio: 0 });
      m.runSlice(120_000);
      const rnd = lcg(3);
      for (let i = 0; i < 12; i++) {
        const cpu = rnd(m.cpus.length);
        if (m.stepCpu(cpu, 1).kind !== 'running') continue;
        const here = stateOf(m);
        const r = tt.stepBack(cpu);
        assert.ok(r.ok, r.why);
        assert.notEqual(stateOf(m), here, 'one instruction earlier');
        assert.equal(m.stepCpu(cpu, 1).kind, 'running');
        assert.equal(stateOf(m), here, `step ${i} on CPU ${cpu}`);
        m.runSlice(5_000 + rnd(20_000));
      }
    });
  });
}

describe('reverse continue', () => {
  test('lands on each previous probe hit exactly where a stopping breakpoint stopped going forward', () => {
    // forward oracle: breakpoints that stop, on a machine without recording
    const targets = ['do_fork', 'sys_open'];
    const forward = kernel('x86_64', true);
    for (const t of targets) probesOf(forward).addBreakpoint({ target: t });
    const stops: string[] = [];
    for (;;) {
      const r = forward.runSlice(50_000);
      if (r.kind === 'stopped' && r.request.reason === 'breakpoint') stops.push(stateOf(forward));
      if (r.kind === 'exited' || r.kind === 'limit') break;
    }
    assert.ok(stops.length >= 4, `the breakpoints stop (${stops.length})`);
    // the same machine recorded, run to its end, then backwards hit by hit
    const m = kernel('x86_64', true);
    for (const t of targets) probesOf(m).addBreakpoint({ target: t });
    const tt = recordMachine(m, { interval: 50_000, captureRatio: 0 });
    runToEnd(m);
    const ids = new Set(probesOf(m).list('breakpoint').flatMap(e => e.sites.flatMap(s => s.engineId === undefined ? [] : [s.engineId])));
    const recs = m.hitLog.records();
    const wanted = (seq: number) => { const h = recs.find(x => x.seq === seq); return h !== undefined && ids.has(h.probeId) && h.kind === 'kprobe'; };
    const back: string[] = [];
    for (;;) {
      const r = tt.reverseToHit(recs, wanted);
      assert.ok(r.ok, r.why);
      if (r.description === 'the start of the recording') break;
      back.push(stateOf(m));
    }
    assert.deepEqual(back, [...stops].reverse());
  });

  test('every kind of hit (kprobe, kretprobe entry and return, jprobe, watchpoint) is a place to go back to', () => {
    const m = kernel('x86_64', true);
    const tt = recordMachine(m, { interval: 60_000, captureRatio: 0 });
    runToEnd(m);
    const recs = m.hitLog.records();
    const kinds = new Set(recs.map(h => h.kind));
    for (const k of ['kprobe', 'kretprobe-entry', 'kretprobe-return', 'jprobe', 'watchpoint'] as const) {
      assert.ok(kinds.has(k), `the sample run has ${k} hits`);
      const last = [...recs].reverse().find(h => h.kind === k)!;
      const r = tt.goToHit(last.seq);
      assert.ok(r.ok, r.why);
      assert.ok(m.kernel.hitSeq >= last.seq, `${k}: at or after hit ${last.seq}`);
      // the previous hit from here is an earlier one
      const g = m.totalInstructions, seq = m.kernel.hitSeq;
      const prev = tt.reverseToHit(recs);
      assert.ok(prev.ok);
      assert.ok(m.kernel.hitSeq < seq || m.totalInstructions < g, `${k}: reverse continue moved back`);
    }
  });
});

describe('user space: a process under uprobes', () => {
  test('uprobe and uretprobe hits are places to go back to; every point of the run comes back exactly', () => {
    const stdout: string[] = [];
    const io = { stdout: (b: Uint8Array) => { stdout.push(Buffer.from(b).toString('latin1')); }, stderr: () => undefined };
    const m = Machine.forUserProgram(loadElf(repoPath('examples/rootfs/bin/uprobed')), ['/bin/uprobed'], io, { rootfs: repoPath('examples/rootfs'), execPath: '/bin/uprobed' });
    const r0 = probesOf(m).addProbeFile(readFileSync(repoPath('examples/probes/uprobe_example.kprobe'), 'utf8'), 'uprobe_example.kprobe');
    assert.deepEqual(r0.errors, []);
    const out: string[] = [];
    m.onPrintk(r => out.push(r.text));
    const tt = recordMachine(m, { interval: 40_000, captureRatio: 0 });
    const marks: { cpu: number; retired: number; state: string }[] = [];
    const rnd = lcg(11);
    for (;;) {
      const r = m.runSlice(2_000 + rnd(20_000));
      if (r.kind === 'exited' || r.kind === 'limit') break;
      const cpu = rnd(m.cpus.length);
      if (rnd(2) === 0 && m.stepCpu(cpu, 1).kind === 'running') marks.push({ cpu, retired: m.retired[cpu], state: stateOf(m) + processState(m) });
    }
    const heard = out.length, printed = stdout.join('');
    assert.ok(out.some(l => /^leaf\(/.test(l)), 'the uprobe handler ran');
    assert.match(printed, /fact 3628800/, 'the program printed');
    for (const k of [...marks].reverse()) {
      assert.ok(tt.seek({ kind: 'retired', cpu: k.cpu, retired: k.retired }).ok);
      assert.equal(stateOf(m) + processState(m), k.state, `CPU ${k.cpu} at ${k.retired}`);
    }
    const recs = m.hitLog.records();
    for (const kind of ['uprobe', 'uretprobe'] as const) {
      const last = [...recs].reverse().find(h => h.kind === kind);
      assert.ok(last, `${kind} hits recorded`);
      assert.ok(tt.goToHit(last.seq).ok);
      assert.ok(m.kernel.hitSeq >= last.seq);
      assert.equal(m.kernel.currentTask(last.cpu)?.pid, last.pid, `${kind}: the hit's task is on its CPU`);
    }
    runToEnd(m);
    assert.equal(out.length, heard, 'nothing printed twice');
    assert.equal(stdout.join(''), printed, 'the program\'s output not twice either');
  });
});

describe('recording limits and changes in the past', () => {
  test('the snapshot memory stays under its ceiling; the oldest points go, with a message', () => {
    const m = kernel('x86_64', true);
    const maxBytes = 3 * 1024 * 1024;
    const tt = recordMachine(m, { interval: 20_000, captureRatio: 0, maxBytes });
    const messages: string[] = [];
    tt.onMessage(t => messages.push(t));
    let peak = 0;
    for (;;) {
      const r = m.runSlice(10_000);
      peak = Math.max(peak, tt.snapshotBytes);
      if (r.kind === 'exited' || r.kind === 'limit') break;
    }
    assert.ok(peak <= maxBytes, `peak ${peak} <= ${maxBytes}`);
    assert.ok(messages.length > 0 && /recording now starts at \d+ instructions/.test(messages[0]), messages[0]);
    assert.ok(tt.oldestInstructions > 0);
    const r = tt.seek({ kind: 'retired', cpu: 0, retired: 10 });
    assert.equal(r.ok, false, 'a dropped point cannot be reached');
    assert.match(r.why ?? '', /not in the recording/);
  });

  test('a change made in the past discards the recorded future: the run goes on as a fresh machine would', () => {
    // fresh: run to a point, add a breakpoint with a log message, run to the end
    const fresh = kernel('x86_64', false);
    const outF: string[] = [];
    fresh.onPrintk(r => outF.push(r.text));
    fresh.runSlice(200_000);
    probesOf(fresh).addBreakpoint({ target: 'do_fork', logMessage: 'fork flags={arg0}' });
    runToEnd(fresh);
    // recorded: run to the end, go back to the same point, make the same change, run to the end
    const m = kernel('x86_64', false);
    const out: string[] = [];
    m.onPrintk(r => out.push(r.text));
    const tt = recordMachine(m, { interval: 50_000, captureRatio: 0 });
    m.runSlice(200_000);
    const p = m.retired.slice();
    runToEnd(m);
    const cpu = p.findIndex((n, i) => n !== m.retired[i] || i === 0);
    assert.ok(tt.seek({ kind: 'retired', cpu, retired: p[cpu] }).ok);
    assert.deepEqual(m.retired, p, 'back where the fresh machine added its breakpoint');
    tt.mutating('setBreakpoints');
    assert.equal(tt.inPast, false, 'the future is gone');
    probesOf(m).addBreakpoint({ target: 'do_fork', logMessage: 'fork flags={arg0}' });
    runToEnd(m);
    assert.equal(stateOf(m), stateOf(fresh));
    const hits = (x: Machine) => x.hitLog.records().map(h => `${h.seq} ${h.kind} ${h.cpu} ${h.pid} ${h.probe} ${h.instructions} ${h.timeNs}`);
    assert.equal(m.hitLog.lastSeq, m.kernel.hitSeq);
    assert.deepEqual(hits(m), hits(fresh), 'the hit log holds the new future, numbered as a fresh run numbers it');
    const logged = (xs: string[]) => xs.filter(x => x.startsWith('fork flags='));
    assert.ok(logged(outF).length > 0);
    assert.deepEqual(logged(out), logged(outF), 'the log points printed live after the change');
  });

  test('a change nobody reported makes the re-execution differ: the future is dropped with a message, and the run goes on', () => {
    const m = kernel('x86_64', false);
    const tt = recordMachine(m, { interval: 50_000, captureRatio: 0 });
    const messages: string[] = [];
    tt.onMessage(t => messages.push(t));
    m.runSlice(150_000);
    runToEnd(m);
    assert.ok(tt.seek({ kind: 'retired', cpu: 0, retired: 60_000 }).ok);
    // behind the recorder's back: CPU 0's general registers cleared (its path cannot stay the same)
    m.arch.regs.forEach((r, i) => { if (r.group === 'general' && r.name !== 'sp') m.cpus[0].setReg(i, 0n); });
    const r = runToEnd(m);
    assert.ok(r.kind === 'exited' || r.kind === 'limit');
    assert.equal(tt.inPast, false, 'live again');
    assert.ok(messages.some(t => /re-executing call \d+ .* recorded .*the recording after this point is dropped/.test(t)), messages.join('\n'));
  });

  test('kprobe_events: the trace lines and kprobe_profile follow the machine back and forward', () => {
    const m = kernel('x86_64', false);
    const r0 = probesOf(m).addProbeFile(readFileSync(repoPath('examples/probes/kprobe_events_example.kprobe'), 'utf8'), 'kprobe_events_example.kprobe');
    assert.deepEqual(r0.errors, []);
    const out: string[] = [];
    m.onPrintk(r => out.push(r.text));
    const tt = recordMachine(m, { interval: 50_000, captureRatio: 0 });
    m.runSlice(300_000);
    const mid = kprobeProfile(m.kernel), at = m.retired.slice();
    runToEnd(m);
    const end = kprobeProfile(m.kernel), heard = out.length;
    assert.notEqual(mid, end, 'more hits by the end');
    assert.ok(out.some(l => /: myopen: \(sys_open\+0x0\/0x[0-9a-f]+\) path="/.test(l)), 'trace lines printed');
    assert.ok(tt.seek({ kind: 'retired', cpu: 0, retired: at[0] }).ok);
    assert.deepEqual(m.retired, at);
    assert.equal(kprobeProfile(m.kernel), mid, 'the profile as it was');
    runToEnd(m);
    assert.equal(kprobeProfile(m.kernel), end);
    assert.equal(out.length, heard, 'no trace line twice');
  });
});
