/**
 * Log2 latency histograms in bpftrace's `hist()` shape: buckets [0], [1],
 * [2, 4), [4, 8), ... [1K, 2K) ... [1M, 2M) ..., counted incrementally (one
 * add per kretprobe return), printed as bpftrace prints a histogram map:
 *
 *   @latency_ns[do_fork]:
 *   [256, 512)             3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
 *   [512, 1K)              1 |@@@@@@@@@@@@@@@@@                                   |
 *
 * (bpftrace's TextOutput::hist_to_str: only the buckets from the first to
 * the last non-empty one; the label left-aligned in 16 columns, the count
 * right-aligned in 8, a 52-column bar scaled to the largest bucket, with
 * the bar width computed in single precision as bpftrace does.)
 */

/** One kretprobe's entry -> return virtual-time distribution. */
export interface LatencyHistogram {
  /** the kretprobe's engine id */
  readonly probeId: number;
  /** its display name ("do_fork+0x0") */
  readonly probe: string;
  /** returns counted */
  count: number;
  /** sum, smallest and largest latency (ns) */
  sumNs: number;
  minNs: number;
  maxNs: number;
  /** counts per bucket: [0] is [0], [1] is [1], [k] (k >= 2) is [2^(k-1), 2^k) */
  readonly buckets: number[];
}

export function newHistogram(probeId: number, probe: string): LatencyHistogram {
  return { probeId, probe, count: 0, sumNs: 0, minNs: Infinity, maxNs: 0, buckets: [] };
}

/** the bucket of a latency (ns, a non-negative integer; negative counts as 0): 0 -> 0, 1 -> 1, [2^(k-1), 2^k) -> k */
export function bucketOf(ns: number): number {
  if (!(ns >= 1)) return 0;
  const v = Math.floor(ns);
  if (v < 0x1_0000_0000) return 32 - Math.clz32(v);
  return 64 - Math.clz32(Math.floor(v / 0x1_0000_0000));
}

/** count one latency */
export function histogramAdd(h: LatencyHistogram, ns: number): void {
  const b = bucketOf(ns);
  const bs = h.buckets;
  while (bs.length <= b) bs.push(0);
  bs[b]++;
  h.count++;
  h.sumNs += ns;
  if (ns < h.minNs) h.minNs = ns;
  if (ns > h.maxNs) h.maxNs = ns;
}

/** take one latency back out (the recorded future was discarded); min/max are left as they were */
export function histogramRemove(h: LatencyHistogram, ns: number): void {
  const b = bucketOf(ns);
  if (!h.buckets[b]) return;
  h.buckets[b]--;
  h.count--;
  h.sumNs -= ns;
}

/** bpftrace's hist_index_label: 2^power with a K/M/G/T suffix per 2^10 */
export function histIndexLabel(power: number): string {
  let suffix = '';
  if (power >= 40) { suffix = 'T'; power -= 40; }
  else if (power >= 30) { suffix = 'G'; power -= 30; }
  else if (power >= 20) { suffix = 'M'; power -= 20; }
  else if (power >= 10) { suffix = 'K'; power -= 10; }
  return `${2 ** power}${suffix}`;
}

/** a bucket's label: "[0]", "[1]", "[2, 4)", "[1K, 2K)" */
export function bucketLabel(b: number): string {
  if (b === 0) return '[0]';
  if (b === 1) return '[1]';
  return `[${histIndexLabel(b - 1)}, ${histIndexLabel(b)})`;
}

const BAR_WIDTH = 52;

/** The histogram's bucket lines as bpftrace prints them (no header); '' when it is empty. */
export function formatHistogramLines(h: Pick<LatencyHistogram, 'buckets'>): string {
  const bs = h.buckets;
  let lo = -1, hi = -1, max = 0;
  for (let i = 0; i < bs.length; i++) {
    const v = bs[i] ?? 0;
    if (v > 0) { if (lo < 0) lo = i; hi = i; }
    if (v > max) max = v;
  }
  if (hi < 0) return '';
  let out = '';
  for (let i = lo; i <= hi; i++) {
    const v = bs[i] ?? 0;
    // values.at(i) / (float)max_value * max_width, truncated to int
    const w = Math.trunc(Math.fround(Math.fround(Math.fround(v) / Math.fround(max)) * BAR_WIDTH));
    out += `${bucketLabel(i).padEnd(16)}${String(v).padStart(8)} |${'@'.repeat(w).padEnd(BAR_WIDTH)}|\n`;
  }
  return out;
}

/**
 * The histogram in bpftrace's layout: a `@latency_ns[PROBE]:` header line
 * (bpftrace's keyed-map header; `title` replaces it), the bucket lines, and
 * the blank line bpftrace ends a map with.
 */
export function formatHistogram(h: LatencyHistogram, title = `@latency_ns[${h.probe}]`): string {
  return `${title}:\n${formatHistogramLines(h)}\n`;
}
