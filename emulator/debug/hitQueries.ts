/**
 * Queries over the probe-hit log for the debugger's timeline and histogram
 * views: the records after a given hit, and one log2 latency histogram per
 * kretprobe trimmed to the buckets bpftrace prints, with bpftrace's text.
 */
import type { HitLog, HitRecord } from '../trace/hitLog';
import { formatHistogram } from '../trace/histogram';
import type { LatencyHistogram } from '../trace/histogram';

/** What the queries read of a hit log. */
export type HitLogView = Pick<HitLog, 'records' | 'histograms' | 'lastSeq' | 'dropped' | 'onHit' | 'onWarning'>;

/** The records after hit `sinceSeq` (all of them without it), oldest first. */
export function hitsSince(log: Pick<HitLog, 'records'>, sinceSeq?: number): HitRecord[] {
  const all = log.records();
  if (sinceSeq === undefined) return all;
  // records are oldest first with increasing seq: the first one after sinceSeq
  let lo = 0, hi = all.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Number(all[mid].seq) <= sinceSeq) lo = mid + 1; else hi = mid;
  }
  return all.slice(lo);
}

/** The range of log2 bucket `k` of emulator/trace/histogram.ts: [0], [1], then [2^(k-1), 2^k). */
export function bucketRange(k: number): { lo: number; hi: number } {
  return k < 2 ? { lo: k, hi: k + 1 } : { lo: 2 ** (k - 1), hi: 2 ** k };
}

/** A kretprobe's latency histogram as the views show it. */
export interface HistogramRow {
  probeId: number;
  probe: string;
  /** from the first to the last non-empty bucket (the ones bpftrace prints) */
  buckets: { lo: number; hi: number; count: number }[];
  /** the text bpftrace prints */
  text: string;
}

export function histogramInfo(h: LatencyHistogram): HistogramRow {
  const first = h.buckets.findIndex(c => c > 0);
  let last = h.buckets.length - 1;
  while (last >= 0 && !(h.buckets[last] > 0)) last--;
  const buckets = first < 0 ? [] : h.buckets.slice(first, last + 1).map((count, i) => ({ ...bucketRange(first + i), count }));
  return { probeId: h.probeId, probe: h.probe, buckets, text: formatHistogram(h) };
}

/** Every kretprobe's histogram of the log. */
export function histogramRows(log: Pick<HitLog, 'histograms'>): HistogramRow[] {
  return log.histograms().map(histogramInfo);
}
