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

/**
 * A record's kind as the row stores it: its index in KINDS (the one list of
 * the kinds and their order; the enum's members are the indexes the hot
 * path compares with, as literals).
 */
const enum Kind { Kprobe = 0, KretprobeEntry = 1, Return = 2, Jprobe = 3 }
const KINDS: readonly HitKind[] = ['kprobe', 'kretprobe-entry', 'kretprobe-return', 'jprobe', 'uprobe', 'uretprobe', 'watchpoint', 'breakpoint'];
const KIND_INDEX = Object.fromEntries(KINDS.map((k, i) => [k, i])) as Readonly<Record<HitKind, number>>;

/** KIND_INDEX[kind] without a keyed lookup of eight string keys (a megamorphic access on every hit) for the kinds hit most */
function kindIndex(kind: HitKind): number {
  switch (kind) {
    case 'kprobe': return Kind.Kprobe;
    case 'kretprobe-entry': return Kind.KretprobeEntry;
    case 'kretprobe-return': return Kind.Return;
    case 'jprobe': return Kind.Jprobe;
    default: return KIND_INDEX[kind];
  }
}

/** records per chunk of the ring (a 64 KiB buffer each): ring slot i is row i & Chunks.Mask of chunk i >> Chunks.Bits */
const enum Chunks { Bits = 10, Records = 1 << 10, Mask = (1 << 10) - 1 }

/**
 * A record's row, 8 float64 slots (64 bytes) of its chunk's buffer: seq,
 * instructions, timeNs, latencyNs, addr (through the u64 view), then the
 * int32 pairs (cpu, pid), (probeId, kind) and a spare pair, the int32
 * slots numbered as such (x 2 of the float64 ones). A const enum, so that
 * the offsets are literals in the compiled code.
 */
const enum Row {
  Size = 8, Seq = 0, Insn = 1, Time = 2, Lat = 3, Addr = 4,
  Cpu = 10, Pid = 11, Probe = 12, Kind = 13,
}

/**
 * A chunk of the ring: row r holds a record's numeric fields in one buffer
 * (viewed as float64, int32 and u64), its comm and probe name (strings the
 * tasks and probes already hold) at 2r and 2r + 1 of `s`. A hit writes one
 * row and two string slots and allocates nothing; records are made when
 * asked for. The ring's chunks are made as the ring first reaches them and
 * never copied, grown or remade: a log costs the memory of the records it
 * has held, and a new machine's log fills without reallocating.
 */
class Chunk {
  readonly f: Float64Array;
  readonly w: Int32Array;
  readonly b: BigUint64Array;
  readonly s: string[];
  constructor(records: number) {
    const buf = new ArrayBuffer(records * Row.Size * 8);
    this.f = new Float64Array(buf);
    this.w = new Int32Array(buf);
    this.b = new BigUint64Array(buf);
    this.s = new Array<string>(2 * records).fill('');
  }
}

export class HitLog implements ProbeHitSink {
  /** capacity of the ring */
  readonly size: number;
  /** records overwritten because the ring was full */
  dropped = 0;
  /** seq of the newest hit recorded (0: none) */
  lastSeq = 0;
  /** missSeq of the newest miss recorded (0: none) */
  lastMissSeq = 0;
  /** the ring's chunks (slot i in chunk i >> Chunks.Bits), made as the ring reaches them */
  private readonly chunks: Chunk[] = hostOwned([]);
  /** ring slot of the oldest record, and records held */
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
    // the rare cases are calls of their own (a replay, a new chunk, a return's histogram, listeners)
    if (seq <= this.lastSeq) return this.replayedHit(cpu);
    const n = this.count, size = this.size;
    let i = this.start + n;
    if (i >= size) i -= size;
    const c = this.chunks[i >> Chunks.Bits];
    if (c === undefined) {
      this.chunk(i >> Chunks.Bits);
      return this.hit(seq, instructions, timeNs, cpu, pid, comm, kind, probeId, probe, addr, latencyNs);
    }
    const o = (i & Chunks.Mask) * Row.Size, p = 2 * o, f = c.f, w = c.w;
    if (n === size) {
      if (this.outputs.size !== 0) this.outputs.delete(f[o + Row.Seq]);
      this.start = i + 1 === size ? 0 : i + 1;
      this.dropped++;
    } else this.count = n + 1;
    this.lastSeq = seq;
    const k = kindIndex(kind);
    f[o + Row.Seq] = seq; f[o + Row.Insn] = instructions; f[o + Row.Time] = timeNs; f[o + Row.Lat] = latencyNs;
    c.b[o + Row.Addr] = addr; // the store takes it modulo 2^64 (BigInt.asUintN would allocate)
    w[p + Row.Cpu] = cpu; w[p + Row.Pid] = pid; w[p + Row.Probe] = probeId; w[p + Row.Kind] = k;
    const r = 2 * (i & Chunks.Mask), s = c.s;
    s[r] = comm; s[r + 1] = probe;
    if (cpu >= 0) this.open[cpu] = seq;
    if (k === Kind.Return || this.hitListeners.length !== 0) this.recorded(i, k, probeId, probe, latencyNs);
    return true;
  }

  /** hit() of a replayed hit: nothing recorded; its CPU's output goes nowhere */
  private replayedHit(cpu: number): false {
    if (cpu >= 0) this.open[cpu] = 0;
    return false;
  }

  /** after hit() wrote slot i: the latency histogram of a return, the listeners */
  private recorded(i: number, k: number, probeId: number, probe: string, latencyNs: number): void {
    if (k === Kind.Return && latencyNs === latencyNs) {
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
  }

  /** record() for a whole record (tests, other producers): as hit() */
  record(r: HitRecord): boolean {
    return this.hit(r.seq, r.instructions, r.timeNs, r.cpu, r.pid, r.comm, r.kind, r.probeId, r.probe, r.addr, r.latencyNs ?? NaN);
  }

  /** chunk n of the ring, made now (the last one holds only the slots below size) */
  private chunk(n: number): Chunk {
    const c = hostOwned(new Chunk(Math.min(Chunks.Records, this.size - n * Chunks.Records)));
    this.chunks[n] = c;
    return c;
  }

  /** the seq of the record in slot i */
  private seqAt(i: number): number { return this.chunks[i >> Chunks.Bits].f[(i & Chunks.Mask) * Row.Size + Row.Seq]; }

  /** the record in slot i (made now; its output is the lines attached so far) */
  private at(i: number): HitRecord {
    const c = this.chunks[i >> Chunks.Bits], row = i & Chunks.Mask;
    const o = row * Row.Size, f = c.f, w = c.w;
    const seq = f[o + Row.Seq];
    const r: HitRecord = {
      seq, instructions: f[o + Row.Insn], timeNs: f[o + Row.Time], cpu: w[2 * o + Row.Cpu], pid: w[2 * o + Row.Pid], comm: c.s[2 * row],
      kind: KINDS[w[2 * o + Row.Kind]], probeId: w[2 * o + Row.Probe], probe: c.s[2 * row + 1], addr: c.b[o + Row.Addr],
      output: this.outputs.get(seq) ?? NO_OUTPUT,
    };
    const lat = f[o + Row.Lat];
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
    for (let j = 0; j < this.count; j++) {
      let i = this.start + j;
      if (i >= this.size) i -= this.size;
      out[j] = this.at(i);
    }
    return out;
  }

  /** records held */
  get length(): number { return this.count; }

  /** the held record with this seq, if any */
  bySeq(seq: number): HitRecord | undefined {
    if (this.count === 0) return undefined;
    const j = seq - this.seqAt(this.start);
    if (!Number.isInteger(j) || j < 0 || j >= this.count) return undefined;
    let i = this.start + j;
    if (i >= this.size) i -= this.size;
    return this.seqAt(i) === seq ? this.at(i) : undefined;
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
    while (this.count > 0) {
      let i = this.start + this.count - 1;
      if (i >= this.size) i -= this.size;
      const c = this.chunks[i >> Chunks.Bits], o = (i & Chunks.Mask) * Row.Size, f = c.f, w = c.w;
      const s = f[o + Row.Seq];
      if (s <= seq) break;
      const lat = f[o + Row.Lat];
      if (w[2 * o + Row.Kind] === Kind.Return && lat === lat) {
        const h = this.hists.get(w[2 * o + Row.Probe]);
        if (h) histogramRemove(h, lat);
      }
      this.outputs.delete(s);
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
