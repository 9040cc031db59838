/**
 * The probe-hit log: one record per probe hit of every kind (kprobe,
 * kretprobe entry and return, jprobe, uprobe, uretprobe, watchpoint / hw
 * breakpoint), in hit order, in a bounded ring (like the kernel's trace
 * buffer: DEFAULT_HIT_LOG_SIZE records, MachineOptions.hitLogSize; the
 * oldest are overwritten and counted in `dropped`). Every hit goes through
 * Kernel.probeHit, which numbers it (kernel.hitSeq, machine state) and
 * hands the record here; missed hits go through Kernel.probeMissed
 * (kernel.missSeq) and become warnings (warnings.ts).
 *
 * Derived, incrementally (never by rescanning the ring, so they count every
 * hit even after the ring dropped old records):
 *  - per kretprobe, the log2 histogram of its entry -> return virtual
 *    time (histogram.ts);
 *  - per probe, the warning for its missed hits (deduplicated: see
 *    warnings.ts).
 *
 * Time travel: the log is host-owned (base/marks.ts): going back in
 * time keeps what was recorded. When the machine re-executes from an
 * earlier state, the hits it replays carry the sequence numbers they had
 * (kernel.hitSeq is restored with the machine): record() ignores a hit
 * whose seq <= lastSeq, and missed() a miss whose missSeq <= lastMissSeq.
 * When the recorded future is discarded, truncateAfter(seq, missSeq) drops
 * the records after it (and their histogram counts).
 *
 * Handler output: the 'probe' printk lines a CPU prints after a hit and
 * before its next hit are that hit's handlers' (handlers run synchronously
 * on the CPU that hit): Kernel attaches them to the record (`output`).
 */
import { hostOwned } from '../base/marks';
import { LatencyHistogram, histogramAdd, histogramRemove, newHistogram } from './histogram';
import { MissInfo, MissWarning, WarningListener, WarningState, shouldEmit, warningOf } from './warnings';

export type { MissInfo, MissWarning, MissWarning as HitWarning, WarningListener } from './warnings';

import type { HitKind, ProbeHitSink } from '../kernel/types';

// the kernel declares the hit kinds it numbers (kernel/types.ts)
export type { HitKind } from '../kernel/types';

export interface HitRecord {
  /** the hit's number: kernel.hitSeq after it (1, 2, ...; missed hits have none) */
  seq: number;
  /** machine-wide instructions retired at the hit (Machine.totalInstructions; see Kernel.instructionsRetired) */
  instructions: number;
  /** virtual time of the hit on its CPU (ns, kernel.clock) */
  timeNs: number;
  cpu: number;
  /** the task on that CPU (0 and "swapper/N" when idle) */
  pid: number;
  comm: string;
  kind: HitKind;
  /**
   * the probe's id: the kprobes engine's id (kprobe, kretprobe entry and
   * return, jprobe), the uprobes engine's (uprobe, uretprobe: one per
   * (inode, offset)), the hw breakpoint registration's (watchpoint)
   */
  probeId: number;
  /** display name: symbol+off, path:0xoffset, or the watched address */
  probe: string;
  /** the probed address (uprobes: the user address hit; watchpoints: the address accessed) */
  addr: bigint;
  /** handler output lines printed during this hit (printk from probe handlers; at most MAX_OUTPUT_LINES) */
  output: string[];
  /** kretprobe-return / uretprobe: entry -> return virtual time (ns) */
  latencyNs?: number;
}

export type HitListener = (r: HitRecord) => void;

/** the ring's default size (records) */
export const DEFAULT_HIT_LOG_SIZE = 65536;
/** handler output lines kept per record */
export const MAX_OUTPUT_LINES = 64;

/** the empty `output` of a record no line was attached to (shared and frozen; replaced by an array of its own on the first line) */
export const NO_OUTPUT: string[] = Object.freeze([]) as unknown as string[];

const KINDS: readonly HitKind[] = ['kprobe', 'kretprobe-entry', 'kretprobe-return', 'jprobe', 'uprobe', 'uretprobe', 'watchpoint', 'breakpoint'];
const KIND_INDEX: Readonly<Record<HitKind, number>> = {
  kprobe: 0, 'kretprobe-entry': 1, 'kretprobe-return': 2, jprobe: 3, uprobe: 4, uretprobe: 5, watchpoint: 6, breakpoint: 7,
};
const RETURN = KIND_INDEX['kretprobe-return'];

/** KIND_INDEX[kind] without a keyed lookup of seven string keys (a megamorphic access on every hit) */
function kindIndex(kind: HitKind): number {
  switch (kind) {
    case 'kprobe': return 0;
    case 'kretprobe-entry': return 1;
    case 'kretprobe-return': return 2;
    case 'jprobe': return 3;
    default: return KIND_INDEX[kind];
  }
}
/** first capacity of the columns (they double up to the ring's size) */
const FIRST_CAPACITY = 1024;

/**
 * The ring's records: the numeric fields of record i in one 64-byte row of
 * one buffer (viewed as float64, int32 and u64), its two strings (ones the
 * probes and tasks already hold) side by side in one array. A hit writes
 * one row and two neighbouring string slots, not eleven arrays' worth of
 * cache lines, and allocates nothing; records are made when asked for.
 */
class Columns {
  readonly f: Float64Array;
  readonly w: Int32Array;
  readonly b: BigUint64Array;
  /** comm of record i at 2i, probe at 2i + 1 */
  readonly s: string[];
  constructor(readonly cap: number) {
    const buf = new ArrayBuffer(cap * ROW * 8);
    this.f = new Float64Array(buf);
    this.w = new Int32Array(buf);
    this.b = new BigUint64Array(buf);
    this.s = new Array<string>(cap * 2).fill('');
  }
  seq(i: number): number { return this.f[i * ROW + F_SEQ]; }
  latencyNs(i: number): number { return this.f[i * ROW + F_LAT]; }
  kind(i: number): number { return this.w[i * ROW * 2 + W_KIND]; }
  probeId(i: number): number { return this.w[i * ROW * 2 + W_PROBE]; }
  /** copy records [from, from + n) of `src` to records [to, to + n) of this (one bulk copy of their rows) */
  copy(src: Columns, from: number, to: number, n: number): void {
    this.f.set(src.f.subarray(from * ROW, (from + n) * ROW), to * ROW);
    for (let j = 0; j < 2 * n; j++) this.s[2 * to + j] = src.s[2 * from + j];
  }
}
/** float64 slots per row: seq, instructions, timeNs, latencyNs, addr (u64), then int32 pairs (cpu, pid), (probeId, kind), a spare */
const ROW = 8;
const F_SEQ = 0, F_INSN = 1, F_TIME = 2, F_LAT = 3, B_ADDR = 4;
/** int32 slots in a row (x 2 of the float64 ones) */
const W_CPU = 10, W_PID = 11, W_PROBE = 12, W_KIND = 13;

export class HitLog implements ProbeHitSink {
  /** capacity of the ring */
  readonly size: number;
  /** records overwritten because the ring was full */
  dropped = 0;
  /** seq of the newest hit recorded (0: none) */
  lastSeq = 0;
  /** missSeq of the newest miss recorded (0: none) */
  lastMissSeq = 0;
  private cols: Columns;
  /** column index of the oldest record, and records held */
  private start = 0;
  private count = 0;
  /** handler output by seq (only hits that printed) */
  private readonly outputs = hostOwned(new Map<number, string[]>());
  private readonly hitListeners: HitListener[] = hostOwned([]);
  private readonly warnListeners: WarningListener[] = hostOwned([]);
  private readonly hists = hostOwned(new Map<number, LatencyHistogram>());
  private readonly warnState = hostOwned(new Map<string, WarningState>());
  /** per CPU: the seq of the hit its handler output goes to (its latest; 0 none) */
  private readonly open: number[] = hostOwned([]);

  constructor(size = DEFAULT_HIT_LOG_SIZE) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`hit log size must be a positive integer, got ${size}`);
    this.size = size;
    this.cols = hostOwned(new Columns(Math.min(size, FIRST_CAPACITY)));
    hostOwned(this);
  }

  /**
   * Record a hit (Kernel.probeHit; no allocation unless a listener wants
   * the record); false (nothing recorded) when its seq is not after
   * lastSeq (a hit replayed after the machine went back in time).
   * `latencyNs`: NaN when the hit has none.
   */
  hit(seq: number, instructions: number, timeNs: number, cpu: number, pid: number, comm: string,
    kind: HitKind, probeId: number, probe: string, addr: bigint, latencyNs: number): boolean {
    if (seq <= this.lastSeq) {
      if (cpu >= 0) this.open[cpu] = 0;
      return false;
    }
    this.lastSeq = seq;
    let c = this.cols;
    let i: number;
    if (this.count < this.size) {
      if (this.count === c.cap) c = this.grow();
      i = this.start + this.count;
      if (i >= c.cap) i -= c.cap;
      this.count++;
    } else {
      i = this.start;
      this.start = i + 1 === c.cap ? 0 : i + 1;
      this.dropped++;
      if (this.outputs.size !== 0) this.outputs.delete(c.seq(i));
    }
    const k = kindIndex(kind);
    const o = i * ROW, f = c.f, w = c.w;
    f[o + F_SEQ] = seq; f[o + F_INSN] = instructions; f[o + F_TIME] = timeNs; f[o + F_LAT] = latencyNs;
    c.b[o + B_ADDR] = addr; // the store takes it modulo 2^64 (BigInt.asUintN would allocate)
    w[2 * o + W_CPU] = cpu; w[2 * o + W_PID] = pid; w[2 * o + W_PROBE] = probeId; w[2 * o + W_KIND] = k;
    c.s[2 * i] = comm; c.s[2 * i + 1] = probe;
    if (cpu >= 0) this.open[cpu] = seq;
    if (k === RETURN && latencyNs === latencyNs) {
      let h = this.hists.get(probeId);
      if (h === undefined) { h = newHistogram(probeId, probe); this.hists.set(probeId, h); }
      histogramAdd(h, latencyNs);
    }
    const ls = this.hitListeners;
    if (ls.length !== 0) {
      const r = this.at(i);
      for (const l of ls.slice()) {
        try { l(r); } catch { /* a broken view must not break the probed kernel */ }
      }
    }
    return true;
  }

  /** record() for a whole record (tests, other producers): as hit() */
  record(r: HitRecord): boolean {
    return this.hit(r.seq, r.instructions, r.timeNs, r.cpu, r.pid, r.comm, r.kind, r.probeId, r.probe, r.addr, r.latencyNs ?? NaN);
  }

  private grow(): Columns {
    const old = this.cols;
    const c = hostOwned(new Columns(Math.min(this.size, old.cap * 2)));
    // the ring's records in order: from start to the end of the old columns, then the ones wrapped to the front
    const first = Math.min(this.count, old.cap - this.start);
    c.copy(old, this.start, 0, first);
    c.copy(old, 0, first, this.count - first);
    this.start = 0;
    this.cols = c;
    return c;
  }

  /** the record in column slot i (made now; its output is the lines attached so far) */
  private at(i: number): HitRecord {
    const c = this.cols;
    const o = i * ROW, f = c.f, w = c.w;
    const seq = f[o + F_SEQ];
    const r: HitRecord = {
      seq, instructions: f[o + F_INSN], timeNs: f[o + F_TIME], cpu: w[2 * o + W_CPU], pid: w[2 * o + W_PID], comm: c.s[2 * i],
      kind: KINDS[w[2 * o + W_KIND]], probeId: w[2 * o + W_PROBE], probe: c.s[2 * i + 1], addr: c.b[o + B_ADDR],
      output: this.outputs.get(seq) ?? NO_OUTPUT,
    };
    const lat = f[o + F_LAT];
    if (lat === lat) r.latencyNs = lat;
    return r;
  }

  /** a hit replayed after going back in time (seq <= lastSeq): not recorded again; its CPU's output goes nowhere */
  replayed(cpu: number): void {
    if (cpu >= 0) this.open[cpu] = 0;
  }

  /** a line a probe handler printed on `cpu`: it belongs to that CPU's latest hit */
  output(cpu: number, line: string): void {
    const seq = this.open[cpu];
    if (!seq) return;
    const out = this.outputs.get(seq);
    if (out === undefined) this.outputs.set(seq, [line]);
    else if (out.length < MAX_OUTPUT_LINES) out.push(line);
  }

  /** the records held, oldest first (made on each call) */
  records(): HitRecord[] {
    const out: HitRecord[] = new Array(this.count);
    const cap = this.cols.cap;
    for (let j = 0; j < this.count; j++) {
      let i = this.start + j;
      if (i >= cap) i -= cap;
      out[j] = this.at(i);
    }
    return out;
  }

  /** records held */
  get length(): number { return this.count; }

  /** the held record with this seq, if any */
  bySeq(seq: number): HitRecord | undefined {
    if (this.count === 0) return undefined;
    const c = this.cols;
    const j = seq - c.seq(this.start);
    if (!Number.isInteger(j) || j < 0 || j >= this.count) return undefined;
    let i = this.start + j;
    if (i >= c.cap) i -= c.cap;
    return c.seq(i) === seq ? this.at(i) : undefined;
  }

  /** listen to new records (not replays); returns the unsubscribe function. The record's output fills later (records(), bySeq()). */
  onHit(l: HitListener): () => void {
    this.hitListeners.push(l);
    return () => { const i = this.hitListeners.indexOf(l); if (i >= 0) this.hitListeners.splice(i, 1); };
  }

  /**
   * The recorded future is discarded (time travel went back and the
   * machine will run differently): records with seq > `seq` are dropped
   * (with their histogram counts and output), and later hits are recorded
   * from seq + 1 again; `missSeq` does the same for missed hits.
   */
  truncateAfter(seq: number, missSeq?: number): void {
    const c = this.cols;
    while (this.count > 0) {
      let i = this.start + this.count - 1;
      if (i >= c.cap) i -= c.cap;
      if (c.seq(i) <= seq) break;
      const lat = c.latencyNs(i);
      if (c.kind(i) === RETURN && lat === lat) {
        const h = this.hists.get(c.probeId(i));
        if (h) histogramRemove(h, lat);
      }
      this.outputs.delete(c.seq(i));
      this.count--;
    }
    if (seq < this.lastSeq) this.lastSeq = seq;
    this.open.fill(0);
    if (missSeq !== undefined && missSeq < this.lastMissSeq) this.lastMissSeq = missSeq;
  }

  /** per kretprobe, the entry -> return latency histogram (ns), in first-return order */
  histograms(): LatencyHistogram[] {
    return [...this.hists.values()].filter(h => h.count > 0);
  }

  /** the histogram of one kretprobe (by its engine id), if it returned at least once */
  histogram(probeId: number): LatencyHistogram | undefined {
    const h = this.hists.get(probeId);
    return h && h.count > 0 ? h : undefined;
  }

  /**
   * A missed hit (kernel.probeMissed): ignored when its missSeq is not after
   * lastMissSeq (a replay); else the probe's warning is brought up to date
   * and emitted to the listeners when it is due (warnings.ts: its first
   * miss, then each doubling of its missed count).
   */
  missed(missSeq: number, info: MissInfo): MissWarning | null {
    if (missSeq <= this.lastMissSeq) return null;
    this.lastMissSeq = missSeq;
    const key = `${info.reason}:${info.kind}:${info.probeId}:${info.probe}`;
    const st = this.warnState.get(key);
    const w = warningOf(info, missSeq);
    if (!shouldEmit(st, info.missed)) {
      (st as WarningState).latest = w;
      return null;
    }
    if (st) { st.latest = w; st.emittedAt = info.missed; } else this.warnState.set(key, { latest: w, emittedAt: info.missed });
    for (const l of this.warnListeners.slice()) {
      try { l(w); } catch { /* a broken view must not break the probed kernel */ }
    }
    return w;
  }

  /** each probe's latest warning (one per probe and reason), in first-miss order */
  warnings(): MissWarning[] {
    return [...this.warnState.values()].map(s => s.latest);
  }

  /** listen to emitted warnings (deduplicated: see warnings.ts); returns the unsubscribe function */
  onWarning(l: WarningListener): () => void {
    this.warnListeners.push(l);
    return () => { const i = this.warnListeners.indexOf(l); if (i >= 0) this.warnListeners.splice(i, 1); };
  }
}
