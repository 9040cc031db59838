/**
 * The log2 latency histograms (emulator/trace/histogram.ts) and the hit
 * log's ring, replay and truncation rules (emulator/trace/hitLog.ts), on
 * hand-made records: buckets and bpftrace's text layout computed by hand.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bucketLabel, bucketOf, formatHistogram, HitLog, HitRecord, histIndexLabel, LatencyHistogram, NO_OUTPUT,
} from '../../emulator/trace';
import { newHistogram, histogramAdd } from '../../emulator/trace/histogram';
import { isHostOwned } from '../../emulator/base/marks';

function rec(seq: number, extra: Partial<HitRecord> = {}): HitRecord {
  return {
    seq, instructions: seq * 10, timeNs: seq * 10, cpu: 0, pid: 1, comm: 'init', kind: 'kprobe', probeId: 1, probe: 'do_fork+0x0',
    addr: 0xffffffff81000000n, output: NO_OUTPUT, latencyNs: undefined, ...extra,
  };
}

describe('log2 buckets (bpftrace hist())', () => {
  test('bucket of a latency: [0], [1], [2, 4), [4, 8), ... [1K, 2K) ... and past 2^32', () => {
    const cases: [number, number, string][] = [
      [0, 0, '[0]'], [1, 1, '[1]'], [2, 2, '[2, 4)'], [3, 2, '[2, 4)'], [4, 3, '[4, 8)'], [7, 3, '[4, 8)'], [8, 4, '[8, 16)'],
      [1023, 10, '[512, 1K)'], [1024, 11, '[1K, 2K)'], [2047, 11, '[1K, 2K)'], [1_048_576, 21, '[1M, 2M)'],
      [2 ** 32, 33, '[4G, 8G)'], [2 ** 40 + 5, 41, '[1T, 2T)'],
    ];
    for (const [ns, b, label] of cases) {
      assert.equal(bucketOf(ns), b, `bucket of ${ns}`);
      assert.equal(bucketLabel(b), label, `label of bucket ${b}`);
    }
    assert.equal(bucketOf(-5), 0, 'a negative latency counts as 0');
    assert.deepEqual([0, 9, 10, 19, 20, 30, 40].map(histIndexLabel), ['1', '512', '1K', '512K', '1M', '1G', '1T']);
  });

  test('counts of known latencies and the text bpftrace prints for them', () => {
    const h = newHistogram(7, 'do_fork+0x0');
    for (const ns of [0, 1, 2, 3, 5, 6, 7, 1024, 1500, 2000, 2047, 3000, 3000, 3000]) histogramAdd(h, ns);
    // [0]:1 [1]:1 [2,4):2 [4,8):3 [1K,2K):4 [2K,4K):3
    assert.deepEqual(h.buckets.map((c, i) => [i, c]).filter(([, c]) => c > 0), [[0, 1], [1, 1], [2, 2], [3, 3], [11, 4], [12, 3]]);
    assert.equal(h.count, 14);
    assert.equal(h.minNs, 0);
    assert.equal(h.maxNs, 3000);
    assert.equal(h.sumNs, 0 + 1 + 2 + 3 + 5 + 6 + 7 + 1024 + 1500 + 2000 + 2047 + 9000);
    const bar = (n: number): string => '@'.repeat(n).padEnd(52);
    // bar = trunc(count / max * 52) with max = 4: 1 -> 13, 2 -> 26, 3 -> 39, 4 -> 52
    const want = [
      '@latency_ns[do_fork+0x0]:',
      `[0]                    1 |${bar(13)}|`,
      `[1]                    1 |${bar(13)}|`,
      `[2, 4)                 2 |${bar(26)}|`,
      `[4, 8)                 3 |${bar(39)}|`,
      `[8, 16)                0 |${bar(0)}|`,
      `[16, 32)               0 |${bar(0)}|`,
      `[32, 64)               0 |${bar(0)}|`,
      `[64, 128)              0 |${bar(0)}|`,
      `[128, 256)             0 |${bar(0)}|`,
      `[256, 512)             0 |${bar(0)}|`,
      `[512, 1K)              0 |${bar(0)}|`,
      `[1K, 2K)               4 |${bar(52)}|`,
      `[2K, 4K)               3 |${bar(39)}|`,
      '', '',
    ].join('\n');
    assert.equal(formatHistogram(h), want);
  });

  test('only the buckets from the first to the last non-empty one; bars in single precision (7/9 of 52 -> 40)', () => {
    const h: LatencyHistogram = { ...newHistogram(1, 'x'), buckets: [0, 0, 0, 0, 0, 7, 9] };
    assert.equal(formatHistogram(h, '@t'), `@t:\n[16, 32)               7 |${'@'.repeat(40).padEnd(52)}|\n[32, 64)               9 |${'@'.repeat(52)}|\n\n`);
    assert.equal(formatHistogram(newHistogram(1, 'x'), '@t'), '@t:\n\n', 'an empty histogram prints no bucket');
  });
});

describe('the hit log ring', () => {
  test('keeps the newest N records oldest first and counts the dropped ones; host-owned for time travel', () => {
    const log = new HitLog(4);
    assert.ok(isHostOwned(log));
    for (let s = 1; s <= 10; s++) assert.equal(log.record(rec(s)), true);
    assert.deepEqual(log.records().map(r => r.seq), [7, 8, 9, 10]);
    assert.equal(log.dropped, 6);
    assert.equal(log.lastSeq, 10);
    assert.equal(log.length, 4);
    assert.equal(log.bySeq(8)?.seq, 8);
    assert.equal(log.bySeq(6), undefined, 'dropped');
    assert.throws(() => new HitLog(0), RangeError);
  });

  test('a ring larger than its first columns grows (several times) keeping every field of every record, then wraps', () => {
    // the columns start at 1024 records and double; 5000 records fill a 4096-record ring and wrap it
    const log = new HitLog(4096);
    const mk = (s: number): HitRecord => rec(s, {
      cpu: s % 3, pid: 100 + s, comm: `t${s}`, kind: s % 2 ? 'kretprobe-return' : 'kprobe', probeId: s % 5,
      probe: `p${s}`, addr: 0xffffffff81000000n + BigInt(s), latencyNs: s % 2 ? s * 7 : undefined,
    });
    for (let s = 1; s <= 5000; s++) log.record(mk(s));
    assert.equal(log.length, 4096);
    assert.equal(log.dropped, 5000 - 4096);
    const got = log.records();
    assert.deepEqual(got.map(r => r.seq), Array.from({ length: 4096 }, (_, i) => 5000 - 4096 + 1 + i));
    for (const r of got) {
      const want = mk(r.seq);
      if (want.latencyNs === undefined) delete want.latencyNs; // a record without a latency has no such key
      assert.deepEqual(r, want, `record ${r.seq}`);
    }
  });

  test('addresses: the same one hit after hit and changing ones, every 64-bit value exactly', () => {
    const addrs = [0xffffffff81000000n, 0xffffffff81000000n, 0xffffffffa0001234n, 0xffffffff81000000n, 0n, 0x7fffffffefffn,
      0xffffffffffffffffn, 0xffffffffffffffffn, 0x80000000n, 0x00000000ffffffffn, 0x8000000000000000n, 0xffffffff81000000n];
    const log = new HitLog(64);
    addrs.forEach((addr, i) => log.record(rec(i + 1, { addr })));
    assert.deepEqual(log.records().map(r => r.addr), addrs);
  });

  test('a replayed hit (seq <= lastSeq) is not recorded again, nor seen by the listeners, nor counted in a histogram', () => {
    const log = new HitLog(16);
    const seen: number[] = [];
    const off = log.onHit(r => seen.push(r.seq));
    for (let s = 1; s <= 5; s++) log.record(rec(s, { kind: 'kretprobe-return', latencyNs: 100 }));
    // the machine went back to after hit 2 and re-executes: hits 3..5 come again with the same seqs
    for (let s = 3; s <= 5; s++) assert.equal(log.record(rec(s, { kind: 'kretprobe-return', latencyNs: 100 })), false);
    log.record(rec(6));
    assert.deepEqual(log.records().map(r => r.seq), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
    assert.equal(log.histogram(1)?.count, 5);
    off();
    log.record(rec(7));
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6], 'unsubscribed');
  });

  test('truncateAfter drops the discarded future and its histogram counts; recording goes on from there', () => {
    const log = new HitLog(16);
    for (let s = 1; s <= 6; s++) log.record(rec(s, { kind: 'kretprobe-return', latencyNs: s * 100 }));
    log.truncateAfter(3);
    assert.deepEqual(log.records().map(r => r.seq), [1, 2, 3]);
    assert.equal(log.lastSeq, 3);
    assert.equal(log.histogram(1)?.count, 3);
    assert.equal(log.histogram(1)?.sumNs, 600);
    assert.equal(log.record(rec(4, { kind: 'kretprobe-return', latencyNs: 5000 })), true, 'a new hit 4 (another future)');
    assert.equal(log.histogram(1)?.count, 4);
  });

  test('handler output goes to the latest hit of the same CPU, bounded', () => {
    const log = new HitLog(16);
    log.record(rec(1, { cpu: 0 }));
    log.record(rec(2, { cpu: 1 }));
    log.output(0, 'a');
    log.output(1, 'b');
    log.output(1, 'c');
    log.output(2, 'nobody');
    assert.deepEqual(log.records().map(r => r.output), [['a'], ['b', 'c']]);
    assert.deepEqual(NO_OUTPUT, [], 'the shared empty output stays empty');
    log.replayed(0);
    log.output(0, 'replayed hit output');
    assert.deepEqual(log.records()[0].output, ['a']);
  });
});

describe('missed-hit warnings', () => {
  const miss = (missed: number, concurrency: number) => ({
    reason: 'maxactive' as const, kind: 'kretprobe-entry' as const, cpu: 0, probeId: 3, addr: 0n, probe: 'do_fork',
    missed, maxactive: 1, concurrency,
  });

  test('the maxactive suggestion and its text; emitted at 1, 2, 4, 8 ... misses; warnings() has the latest', () => {
    const log = new HitLog(16);
    const emitted: number[] = [];
    log.onWarning(w => emitted.push(w.missed));
    for (let n = 1; n <= 9; n++) log.missed(n, miss(n, Math.min(n + 1, 4)));
    assert.deepEqual(emitted, [1, 2, 4, 8]);
    const [w] = log.warnings();
    assert.equal(log.warnings().length, 1);
    assert.equal(w.missed, 9);
    assert.equal(w.suggestedMaxactive, 4);
    assert.equal(w.text, 'kretprobe do_fork: 9 instances missed (maxactive=1); maxactive=4 would have sufficed (observed 4 concurrent calls)');
  });

  test('a replayed miss (missSeq <= lastMissSeq) is ignored; truncateAfter with a missSeq reopens it', () => {
    const log = new HitLog(16);
    const emitted: number[] = [];
    log.onWarning(w => emitted.push(w.missed));
    log.missed(1, miss(1, 2));
    assert.equal(log.missed(1, miss(1, 2)), null);
    assert.deepEqual(emitted, [1]);
    log.truncateAfter(0, 0);
    assert.notEqual(log.missed(1, miss(2, 3)), null);
    assert.deepEqual(emitted, [1, 2]);
  });
});
