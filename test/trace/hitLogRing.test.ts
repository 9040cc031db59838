/**
 * The hit log's ring storage (emulator/trace/hitLog.ts): records are kept
 * in fixed-size chunks that the ring makes as it first reaches them and
 * never copies. What a user of the log sees must not depend on where a
 * record sits: every field of every record reads back as it was recorded
 * (and as a listener saw it) across chunk boundaries, a ring size that is
 * not a whole number of chunks, wrap-around, truncation (time travel
 * discarding the recorded future) and recording again; handler output
 * stays with its hit's seq; a huge ring costs only what it has held.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HitLog, HitRecord, NO_OUTPUT } from '../../emulator/trace';
import type { HitKind } from '../../emulator/trace';

const KINDS: HitKind[] = ['kprobe', 'kretprobe-entry', 'kretprobe-return', 'jprobe', 'uprobe', 'uretprobe', 'watchpoint', 'breakpoint'];

/** hit `s` of a made-up run: every field varies with s (names from many tasks and probes, full 64-bit addresses) */
function mk(s: number, gen = 0): HitRecord {
  const kind = KINDS[(s + gen) % KINDS.length];
  const returns = kind === 'kretprobe-return' || kind === 'uretprobe';
  const r: HitRecord = {
    seq: s, instructions: 1_000_003 * s + gen, timeNs: 7 * s + 0.5 + gen, cpu: s % 3, pid: 1000 + (s % 101),
    comm: `task-${(s * 7 + gen) % 97}`, kind, probeId: (s + gen) % 11, probe: `func_${(s + gen) % 13}+0x${s.toString(16)}`,
    addr: (0xffffffff80000000n + BigInt(s) * 0x1000n + BigInt(gen)) | (BigInt(s & 1) << 63n), output: NO_OUTPUT,
  };
  if (returns) r.latencyNs = 100 + s + gen;
  return r;
}

/** the records a log of `size` holds after hits from..to (the newest `size`) */
function want(size: number, from: number, to: number, gen = 0): HitRecord[] {
  const out: HitRecord[] = [];
  for (let s = Math.max(from, to - size + 1); s <= to; s++) out.push(mk(s, gen));
  return out;
}

function check(log: HitLog, expected: HitRecord[], what: string): void {
  const got = log.records();
  assert.equal(got.length, expected.length, `${what}: records held`);
  for (let j = 0; j < got.length; j++) assert.deepEqual(got[j], expected[j], `${what}: record ${j} (seq ${expected[j].seq})`);
  if (expected.length > 0) {
    for (const e of [expected[0], expected[expected.length >> 1], expected[expected.length - 1]]) {
      assert.deepEqual(log.bySeq(e.seq), e, `${what}: bySeq(${e.seq})`);
    }
    assert.equal(log.bySeq(expected[0].seq - 1), undefined, `${what}: bySeq before the oldest`);
  }
}

describe('hit log ring: chunked storage', () => {
  test('every field of every record reads back as recorded, at chunk boundaries, for sizes that are and are not whole chunks, through wrap-around', () => {
    for (const size of [1, 3, 1023, 1024, 1025, 2500, 3072]) {
      const log = new HitLog(size);
      const seen: HitRecord[] = [];
      log.onHit(r => seen.push(r));
      const total = size + 2100;
      const marks = new Set([1, 2, 1023, 1024, 1025, 2047, 2048, 2049, size - 1, size, size + 1, size + 1024, total]);
      for (let s = 1; s <= total; s++) {
        assert.equal(log.record(mk(s)), true);
        if (marks.has(s)) {
          check(log, want(size, 1, s), `size ${size} after ${s} hits`);
          assert.equal(log.dropped, Math.max(0, s - size), `size ${size} after ${s} hits: dropped`);
        }
      }
      assert.equal(seen.length, total, `size ${size}: one listener call per hit`);
      seen.forEach((r, j) => assert.deepEqual(r, mk(j + 1), `size ${size}: listener record ${j + 1}`));
    }
  });

  test('truncateAfter across chunk boundaries of a wrapped ring, then recording another future: records, histograms and output as a fresh log of those hits', () => {
    const size = 2500;
    const log = new HitLog(size);
    for (let s = 1; s <= 6000; s++) {
      log.record(mk(s));
      log.output(s % 3, `line ${s}`);
    }
    // back to hit 4200: the ring holds 3501..6000 (slots wrapped twice, spread over three chunks)
    log.truncateAfter(4200);
    assert.equal(log.lastSeq, 4200);
    const kept = want(size, 3501, 4200).map(r => ({ ...r, output: [`line ${r.seq}`] }));
    check(log, kept, 'after truncation');
    // another future from 4201: other fields, and output only where it printed
    for (let s = 4201; s <= 7000; s++) {
      assert.equal(log.record(mk(s, 1)), true, `new hit ${s}`);
      if (s % 5 === 0) log.output(s % 3, `new ${s}`);
    }
    const expected = [...kept, ...want(size, 4201, 7000, 1).map(r => (r.seq % 5 === 0 ? { ...r, output: [`new ${r.seq}`] } : r))].slice(-size);
    check(log, expected, 'the new future');
    // the latency histograms count every return recorded and not discarded (also the ones the ring dropped)
    const fresh = new HitLog(size);
    for (let s = 1; s <= 4200; s++) fresh.record(mk(s));
    for (let s = 4201; s <= 7000; s++) fresh.record(mk(s, 1));
    assert.deepEqual(log.histograms(), fresh.histograms());
    assert.ok(log.histograms().length > 0);
  });

  test('a record the ring dropped takes its output along: after going back before the ring, the same seqs are recorded again with only their own output', () => {
    const log = new HitLog(1500);
    for (let s = 1; s <= 4000; s++) {
      log.record(mk(s));
      log.output(s % 3, `old ${s}`);
    }
    // back to hit 100, long dropped from the ring: nothing held is kept
    log.truncateAfter(100);
    assert.equal(log.length, 0);
    for (let s = 101; s <= 2000; s++) {
      log.record(mk(s, 2));
      if (s % 7 === 0) log.output(s % 3, `again ${s}`);
    }
    check(log, want(1500, 101, 2000, 2).map(r => (r.seq % 7 === 0 ? { ...r, output: [`again ${r.seq}`] } : r)), 'recorded again');
  });

  test('replayed hits (seq <= lastSeq) across chunks are not recorded again nor seen by listeners, and their output goes nowhere', () => {
    const log = new HitLog(3000);
    for (let s = 1; s <= 2500; s++) log.record(mk(s));
    const seen: number[] = [];
    log.onHit(r => seen.push(r.seq));
    for (let s = 900; s <= 2500; s++) {
      assert.equal(log.record(mk(s, 3)), false, `replayed ${s}`);
      log.output(s % 3, `replayed ${s}`);
    }
    assert.deepEqual(seen, []);
    check(log, want(3000, 1, 2500), 'after the replay');
    log.record(mk(2501));
    log.output(2501 % 3, 'new');
    assert.deepEqual(seen, [2501]);
    assert.deepEqual(log.bySeq(2501)?.output, ['new']);
  });

  test('a huge ring costs memory for the records it has held, not for its size', () => {
    const before = process.memoryUsage().arrayBuffers;
    const log = new HitLog(16_777_216);
    for (let s = 1; s <= 10; s++) log.record(mk(s));
    const grew = process.memoryUsage().arrayBuffers - before;
    // a ring of 16M 64-byte rows would be 1 GiB; ten records need one chunk
    assert.ok(grew < 1 << 20, `array buffers grew by ${grew} bytes`);
    check(log, want(16_777_216, 1, 10), 'huge ring');
  });
});
