/**
 * The probe-hit log over DAP (adapter/timelineRequests.ts): `_probeTimeline`
 * (all records, incremental sinceSeq), `_probeHistograms` (log2 buckets and
 * bpftrace's text, against the returns' latencies), `_probeGoToHit` (the
 * session's time travel, or a clear error), `_probeHitsChanged` at stops,
 * and `_probeWarning` + Debug Console line + Kprobes row warning for a
 * kretprobe out of instances.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import {
  HitInfo, HitRequest, ProbeEvent, ProbeHistogramsBody, ProbeHitsChangedBody, ProbeRequest, ProbeStateBody,
  ProbeTimelineBody, ProbeWarningBody,
} from '../../adapter/dapCustom';
import { answerHitRequest, HitTimeline, HITS_INTERVAL_MS, NO_TIME_TRAVEL } from '../../adapter/timelineRequests';
import { bucketRange, histogramInfo } from '../../emulator/debug/hitQueries';
import { HitLog, HitRecord } from '../../emulator/trace/hitLog';
import { bucketOf } from '../../emulator/trace/histogram';
import { Harness, lineOf, within } from './dapHarness';
import { repoPath } from '../util/paths';

const h = new Harness();
const MAIN_C = repoPath('examples', 'kernel', 'main.c');
const KPROBE_EXAMPLE = repoPath('examples', 'probes', 'kprobe_example.kprobe');
const KRETPROBE_EXAMPLE = repoPath('examples', 'probes', 'kretprobe_example.kprobe');

async function req<T>(command: string, args?: object): Promise<T> {
  return (await within(h.dc.customRequest(command, args) as Promise<DebugProtocol.Response>, command)).body as T;
}

async function reqError(command: string, args?: object): Promise<string> {
  try {
    await within(h.dc.customRequest(command, args) as Promise<DebugProtocol.Response>, command);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  throw new Error(`${command} ${JSON.stringify(args)} succeeded but should fail`);
}

/** launch with `probes`, a breakpoint at main.c's summary printk (every worker done), and run to it */
async function runToSummary(probes: string[]): Promise<DebugProtocol.StoppedEvent> {
  const line = lineOf(MAIN_C, 'printk("summary: forks');
  await h.launchWith(async () => {
    const r = await h.dc.setBreakpointsRequest({ source: { path: MAIN_C }, breakpoints: [{ line }] });
    assert.equal(r.body.breakpoints[0].verified, true);
  }, { probes });
  return h.continueToStop();
}

function events<T>(name: string): T[] {
  const out: T[] = [];
  h.dc.on(name, (e: DebugProtocol.Event) => out.push(e.body as T));
  return out;
}

describe('kprobe debug adapter: the probe-hit timeline and histograms', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('_probeTimeline gives every hit of a kprobe and a kretprobe, in order, incrementally; _probeHitsChanged at the stop', async () => {
    const changed = events<ProbeHitsChangedBody>(ProbeEvent.hitsChanged);
    const stop = await runToSummary([KPROBE_EXAMPLE, KRETPROBE_EXAMPLE]);
    assert.equal(stop.body.reason, 'breakpoint');
    const tl = await req<ProbeTimelineBody>(HitRequest.timeline, {});
    assert.equal(tl.dropped, 0);
    assert.ok(tl.hits.length > 0);
    for (let i = 1; i < tl.hits.length; i++) assert.ok(tl.hits[i].seq > tl.hits[i - 1].seq, 'seq increases');
    assert.equal(tl.lastSeq, tl.hits[tl.hits.length - 1].seq);
    assert.equal(tl.nowSeq, tl.lastSeq, 'at a stop the position is the newest hit');
    for (const x of tl.hits) {
      assert.match(x.addr, /^0x[0-9a-f]{16}$/);
      assert.ok(x.cpu === 0 || x.cpu === 1, `cpu ${x.cpu}`);
      assert.equal(typeof x.timeNs, 'number');
    }
    // the counts agree with the probes' hit counters
    const st = await req<ProbeStateBody>(ProbeRequest.list);
    const fork = st.kprobes.find(p => p.kind === 'kprobe' && p.symbol === 'do_fork');
    const open = st.kprobes.find(p => p.kind === 'kretprobe' && p.symbol === 'sys_open');
    assert.ok(fork && open, JSON.stringify(st.kprobes.map(p => p.name)));
    const of = (kind: HitInfo['kind'], engineId?: number): HitInfo[] => tl.hits.filter(x => x.kind === kind && x.probeId === engineId);
    assert.equal(of('kprobe', fork.engineId).length, fork.nhit);
    assert.equal(of('kretprobe-entry', open.engineId).length, open.nhit);
    const returns = of('kretprobe-return', open.engineId);
    assert.ok(returns.length > 0 && returns.length <= open.nhit);
    for (const r of returns) assert.ok(typeof r.latencyNs === 'number' && r.latencyNs >= 0, JSON.stringify(r));
    // the handlers' printk lines are on their hits
    assert.match(of('kprobe', fork.engineId)[0].output.join(''), /pre_handler: p->addr=/);
    assert.ok(of('kprobe', fork.engineId).every(x => x.probe.startsWith('do_fork')));

    // incremental: only what follows sinceSeq
    const mid = tl.hits[Math.floor(tl.hits.length / 2)].seq;
    const tail = await req<ProbeTimelineBody>(HitRequest.timeline, { sinceSeq: mid });
    assert.deepEqual(tail.hits.map(x => x.seq), tl.hits.filter(x => x.seq > mid).map(x => x.seq));
    assert.equal((await req<ProbeTimelineBody>(HitRequest.timeline, { sinceSeq: tl.lastSeq })).hits.length, 0);
    assert.match(await reqError(HitRequest.timeline, { sinceSeq: 'x' }), /_probeTimeline needs \{"sinceSeq"\?: number\}/);

    // the stop sent a _probeHitsChanged with the newest seq and the position
    assert.ok(changed.some(c => c.lastSeq === tl.lastSeq && c.nowSeq === tl.lastSeq), JSON.stringify(changed.slice(-3)));
  });

  test('_probeHistograms: one log2 histogram per kretprobe holding every return, with bpftrace\'s text', async () => {
    await runToSummary([KRETPROBE_EXAMPLE]);
    const tl = await req<ProbeTimelineBody>(HitRequest.timeline, {});
    const hb = await req<ProbeHistogramsBody>(HitRequest.histograms);
    assert.equal(hb.histograms.length, 1);
    const hist = hb.histograms[0];
    assert.match(hist.probe, /^sys_open/);
    // the buckets are what the returns' latencies give, from the first to the last non-empty one
    const returns = tl.hits.filter(x => x.kind === 'kretprobe-return');
    const want = new Map<number, number>();
    for (const r of returns) { const b = bucketOf(r.latencyNs ?? 0); want.set(b, (want.get(b) ?? 0) + 1); }
    const ks = [...want.keys()].sort((a, b) => a - b);
    const expected = [];
    for (let k = ks[0]; k <= ks[ks.length - 1]; k++) expected.push({ ...bucketRange(k), count: want.get(k) ?? 0 });
    assert.deepEqual(hist.buckets, expected);
    for (const b of hist.buckets) assert.ok(b.hi > b.lo);
    // bpftrace's layout: header, one line per bucket, a blank line
    const lines = hist.text.split('\n');
    assert.equal(lines[0], `@latency_ns[${hist.probe}]:`);
    assert.equal(lines.length, hist.buckets.length + 3);
    hist.buckets.forEach((b, i) => assert.match(lines[i + 1], new RegExp(`^\\[[0-9KMGT, ]+\\)?\\]?\\s+${b.count} \\|@*\\s*\\|$`)));
  });

  test('_probeGoToHit: a goto stop through the session\'s time travel, or a clear error without one; bad arguments named', async () => {
    await runToSummary([KPROBE_EXAMPLE]);
    const tl = await req<ProbeTimelineBody>(HitRequest.timeline, {});
    assert.match(await reqError(HitRequest.goToHit, {}), /_probeGoToHit needs \{"seq": number\}/);
    const stopped = h.dc.waitForEvent('stopped');
    stopped.catch(() => undefined);
    try {
      await within(h.dc.customRequest(HitRequest.goToHit, { seq: tl.hits[0].seq }) as Promise<DebugProtocol.Response>, 'goToHit');
    } catch (e) {
      // no time travel in this session
      assert.equal(e instanceof Error ? e.message : String(e), `kprobe: ${NO_TIME_TRAVEL}`);
      return;
    }
    // a session with time travel goes there and stops with reason 'goto'
    const ev = await within(stopped, 'the goto stop') as DebugProtocol.StoppedEvent;
    assert.equal(ev.body.reason, 'goto');
  });

  test('a kretprobe out of instances: _probeWarning, a Debug Console line, the Kprobes row\'s warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kprobe-timeline-'));
    const file = join(dir, 'maxactive1.kprobe');
    writeFileSync(file, 'kretprobe sys_open maxactive=1 {\n  return { return 0; }\n}\n');
    const warnings = events<ProbeWarningBody>(ProbeEvent.warning);
    const output = events<DebugProtocol.OutputEvent['body']>('output');
    await runToSummary([file]);
    assert.ok(warnings.length > 0, 'a _probeWarning event');
    for (const w of warnings) {
      assert.match(w.text, /^kretprobe sys_open\+0x0: \d+ instances? missed \(maxactive=1\); maxactive=\d+ would have sufficed/);
      assert.ok(w.missed >= 1);
      assert.ok((w.suggestedMaxactive ?? 0) >= 2);
      assert.ok(output.some(o => o.output === `kprobe: warning: ${w.text}\n` && o.category === 'console'), `console line for ${w.text}`);
    }
    // deduplicated: a warning at the first miss and at each doubling
    const missed = warnings.map(w => w.missed);
    for (let i = 1; i < missed.length; i++) assert.ok(missed[i] >= 2 * missed[i - 1], missed.join(','));
    const st = await req<ProbeStateBody>(ProbeRequest.list);
    const row = st.kprobes.find(p => p.kind === 'kretprobe');
    assert.ok(row?.warning, JSON.stringify(row));
    assert.equal(row.warning.missed, row.nmissed, 'the row\'s warning counts every miss so far');
    assert.ok((row.warning.suggestedMaxactive ?? 0) >= 2);
    assert.match(row.warning.text, /maxactive=1/);
  });
});

// ---- HitTimeline over a HitLog of its own (no machine) -----------------------------

function rec(seq: number, over: Partial<HitRecord> = {}): HitRecord {
  return { seq, instructions: seq * 10, timeNs: seq * 100, cpu: 0, pid: 1, comm: 'init', kind: 'kprobe', probeId: 1, probe: 'f+0x0', addr: 0xffffffff81000000n + BigInt(seq), output: [], ...over };
}

describe('HitTimeline', () => {
  test('hitInfo: addresses as 16 hex digits; the ring\'s drops counted; sinceSeq past the ring', () => {
    const log = new HitLog(4);
    const sent: DebugProtocol.Event[] = [];
    const t = new HitTimeline(log, e => sent.push(e), () => undefined);
    try {
      for (let i = 1; i <= 6; i++) log.record(rec(i));
      const body = t.timeline();
      assert.deepEqual(body.hits.map(x => x.seq), [3, 4, 5, 6]);
      assert.equal(body.dropped, 2);
      assert.equal(body.hits[0].addr, '0xffffffff81000003');
      assert.equal(body.nowSeq, undefined, 'running: no position');
      assert.deepEqual(t.timeline(1).hits.map(x => x.seq), [3, 4, 5, 6]);
      assert.deepEqual(t.timeline(5).hits.map(x => x.seq), [6]);
      t.atStop();
      assert.equal(t.timeline().nowSeq, 6);
      const ev = sent.filter(e => e.event === ProbeEvent.hitsChanged).pop();
      assert.deepEqual(ev?.body, { lastSeq: 6, dropped: 2, nowSeq: 6 });
      log.record(rec(7));
      assert.equal(t.timeline().nowSeq, undefined, 'a new hit: running again');
    } finally {
      t.dispose();
    }
  });

  test('atStop: the marker at the machine\'s own latest hit (back in time: an older one than the log\'s newest)', () => {
    const log = new HitLog();
    let machineSeq = 0;
    const t = new HitTimeline(log, () => undefined, () => undefined, undefined, () => machineSeq);
    try {
      t.atStop();
      assert.equal(t.timeline().nowSeq, undefined, 'no hit yet: no marker');
      for (let i = 1; i <= 5; i++) log.record(rec(i));
      machineSeq = 5;
      t.atStop();
      assert.equal(t.timeline().nowSeq, 5);
      machineSeq = 2; // the machine went back in time; the log keeps its records
      t.atStop();
      assert.equal(t.timeline().nowSeq, 2);
      assert.equal(t.timeline().lastSeq, 5);
    } finally {
      t.dispose();
    }
  });

  test('new hits while running: one _probeHitsChanged within the throttle interval, not one per hit', async () => {
    const log = new HitLog();
    const sent: DebugProtocol.Event[] = [];
    let notify: (() => void) | undefined;
    const t = new HitTimeline(log, e => { sent.push(e); notify?.(); }, () => undefined);
    try {
      const changed = within(new Promise<void>(r => { notify = r; }), 'the throttled _probeHitsChanged', 5 * HITS_INTERVAL_MS);
      for (let i = 1; i <= 100; i++) log.record(rec(i));
      assert.equal(sent.length, 0, 'nothing sent synchronously per hit');
      await changed;
      assert.equal(sent.length, 1);
      assert.equal(sent[0].event, ProbeEvent.hitsChanged);
      assert.deepEqual(sent[0].body, { lastSeq: 100, dropped: 0 });
    } finally {
      t.dispose();
    }
  });

  test('histogramInfo: the buckets from the first to the last non-empty one', () => {
    const info = histogramInfo({ probeId: 3, probe: 'sys_open+0x0', count: 3, sumNs: 0, minNs: 0, maxNs: 0, buckets: [0, 0, 0, 2, 0, 1, 0] });
    assert.deepEqual(info.buckets, [{ lo: 4, hi: 8, count: 2 }, { lo: 8, hi: 16, count: 0 }, { lo: 16, hi: 32, count: 1 }]);
    assert.deepEqual([0, 1, 2, 11].map(bucketRange), [{ lo: 0, hi: 1 }, { lo: 1, hi: 2 }, { lo: 2, hi: 4 }, { lo: 1024, hi: 2048 }]);
    assert.match(info.text, /^@latency_ns\[sys_open\+0x0\]:\n\[4, 8\)\s+2 \|@+\s*\|\n\[8, 16\)\s+0 \|\s+\|\n\[16, 32\)\s+1 \|@+\s*\|\n\n$/);
  });

  test('_probeGoToHit goes through session.timeTravel.goToHit, then moves the position', async () => {
    const log = new HitLog();
    const sent: DebugProtocol.Event[] = [];
    const t = new HitTimeline(log, e => sent.push(e), () => undefined);
    try {
      for (let i = 1; i <= 3; i++) log.record(rec(i));
      const answer = (session: object, args: unknown) => new Promise<{ ok: boolean; body?: unknown; message?: string }>(resolve => {
        const response = { seq: 1, type: 'response', request_seq: 1, command: HitRequest.goToHit, success: true } as DebugProtocol.Response;
        answerHitRequest(t, session, HitRequest.goToHit, args, response, {
          ok: r => resolve({ ok: true, body: r.body }),
          fail: (_r, m) => resolve({ ok: false, message: m.format }),
        });
      });
      const none = await answer({}, { seq: 2 });
      assert.deepEqual(none, { ok: false, message: `kprobe: ${NO_TIME_TRAVEL}` });
      const went: number[] = [];
      const traveller = { timeTravel: { goToHit: async (seq: number) => { went.push(seq); } } };
      assert.deepEqual(await answer(traveller, { seq: 2 }), { ok: true, body: undefined });
      assert.deepEqual(went, [2]);
      assert.equal(t.timeline().nowSeq, 2);
      assert.equal((sent.filter(e => e.event === ProbeEvent.hitsChanged).pop()?.body as ProbeHitsChangedBody).nowSeq, 2);
      const failing = { timeTravel: { goToHit: () => Promise.reject(new Error('hit #9 is not recorded')) } };
      assert.deepEqual(await answer(failing, { seq: 9 }), { ok: false, message: 'kprobe: hit #9 is not recorded' });
      const notLaunched = await new Promise<string>(resolve => answerHitRequest(undefined, {}, HitRequest.timeline, {},
        { seq: 1, type: 'response', request_seq: 1, command: HitRequest.timeline, success: true }, { ok: () => resolve('ok'), fail: (_r, m) => resolve(m.format) }));
      assert.equal(notLaunched, 'kprobe: not launched');
    } finally {
      t.dispose();
    }
  });
});
