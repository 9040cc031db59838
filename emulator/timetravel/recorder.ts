/**
 * Time travel: the machine's history as the list of calls that moved it
 * forward (Machine.runSlice / stepCpu, exactly as made) and the points
 * where a front end changed it while stopped (mutations), with snapshots
 * (snapshot.ts) at some call boundaries. Any earlier moment is reached by
 * restoring the last snapshot before it and re-executing the recorded calls
 * (the machine is deterministic), stopping inside a call at an exact point:
 * when a CPU has retired N instructions, or when the Nth probe hit has been
 * handled (Kernel.hitSeq).
 *
 * Going forward while in the past follows the recording: a continue stops
 * where the recorded run stopped (breakpoints), a step of a CPU stops when
 * that CPU has retired one more instruction; at the end of the recording
 * the machine runs live again. A mutation while in the past (a breakpoint
 * set, a register or memory written) discards the recorded future: the
 * machine goes on from here, recording anew.
 *
 * What the front ends already saw is not repeated: the kernel log's
 * listeners hear nothing while a re-execution stays behind the furthest
 * point ever reached (the records themselves are machine state and are put
 * back as they were), and the probe-hit log ignores hits it already has.
 *
 * Memory: snapshots share unchanged 4 KiB chunks with the one before; when
 * the total passes `maxBytes` the oldest snapshot and the history before
 * the next one are dropped, with a message.
 */
import type { Machine, RunRecorder, SliceResult } from '../machine';
import { capture, restore, sharedBytes, Snapshot } from './snapshot';
import { hostOwned } from '../base/marks';

export interface TimeTravelOptions {
  /** ceiling on the bytes the snapshots hold (default 512 MiB) */
  maxBytes?: number;
  /** instructions (all CPUs together) between periodic snapshots, at least (default 100,000) */
  interval?: number;
  /** running time per capture time at least (default CAPTURE_RATIO; 0: snapshots by instruction count alone, as tests want) */
  captureRatio?: number;
}

/** running time per snapshot capture time, at least (see TimeTravel.due) */
export const CAPTURE_RATIO = 10;

export const TIME_TRAVEL_DEFAULTS = { maxBytes: 512 * 1024 * 1024, interval: 100_000 } as const;

/** Where the machine is in its history, at the start of a recorded call. */
export interface Point {
  /** Machine.totalInstructions */
  g: number;
  /** Kernel.hitSeq: probe hits so far */
  hits: number;
  /** Machine.retired: per CPU */
  retired: number[];
  /** virtual time (ns) of CPU 0's clock */
  timeNs: bigint;
}

type Op =
  | { kind: 'slice'; budget: number; at: Point; end?: SliceResult['kind'] }
  | { kind: 'step'; cpu: number; count: number; at: Point; end?: SliceResult['kind'] }
  | { kind: 'mutation'; what: string; at: Point };

/** a recorded call from before the oldest snapshot (never re-executed again) */
const DROPPED: Op = Object.freeze({ kind: 'mutation', what: 'dropped', at: Object.freeze({ g: 0, hits: 0, retired: [], timeNs: 0n }) }) as Op;

/** Where to stop inside the history. */
export type TravelTarget =
  | { kind: 'retired'; cpu: number; retired: number }
  | { kind: 'hit'; seq: number }
  | { kind: 'start' };

export interface TravelResult {
  /** false: not possible (nothing recorded before, the point was dropped); `why` says so */
  ok: boolean;
  why?: string;
  /** the stop for the debugger (a CPU and a description), when ok */
  cpu?: number;
  description?: string;
}

/** What a re-execution found different from the recording: an internal error (state the snapshots did not capture). */
export class ReplayDivergence extends Error {}

interface HitInfo { seq: number; instructions: number }

/**
 * Record the machine's history from now on so that it can go back in time:
 * the recorder attaches itself to the machine (its runSlice / stepCpu go
 * through it); the same one when already recording.
 */
export function recordMachine(m: Machine, opts: TimeTravelOptions = {}): TimeTravel {
  const have = timeTravelOf(m);
  if (have) return have;
  const tt = new TimeTravel(m, opts);
  m.attachRecorder(tt);
  return tt;
}

/** The machine's time-travel recorder, when it is recording. */
export function timeTravelOf(m: Machine): TimeTravel | null {
  const r = m.recorder;
  return r instanceof TimeTravel ? r : null;
}

export class TimeTravel implements RunRecorder {
  private readonly ops: Op[] = [];
  /** op index -> the machine as the op started (index ops.length: the frontier, taken when going back) */
  private readonly snaps = new Map<number, Snapshot>();
  private bytes = 0;
  /** the machine is at the start of ops[op], or inside it with `mid` left of its budget/count */
  private cursor: { op: number; mid: number | null } = { op: 0, mid: null };
  private lastSnapG = -Infinity;
  private needSnapshot = true;
  /** the furthest point ever reached (op index): re-executions before it are quiet */
  private dropped = 0;
  readonly maxBytes: number;
  readonly interval: number;
  readonly captureRatio: number;
  private readonly messages: ((text: string) => void)[] = [];
  /** reverse steps and continues made, snapshots taken (figures for the bench and the views) */
  readonly stats = { snapshots: 0, restores: 0, replayedInstructions: 0, captureMs: 0, restoreMs: 0, firstSnapshotBytes: 0 };

  constructor(private readonly m: Machine, opts: TimeTravelOptions = {}) {
    hostOwned(this);
    this.maxBytes = opts.maxBytes ?? TIME_TRAVEL_DEFAULTS.maxBytes;
    this.interval = opts.interval ?? TIME_TRAVEL_DEFAULTS.interval;
    this.captureRatio = opts.captureRatio ?? CAPTURE_RATIO;
  }

  /** Messages for the user (oldest snapshot dropped, ...). */
  onMessage(l: (text: string) => void): () => void {
    this.messages.push(l);
    return () => { const i = this.messages.indexOf(l); if (i >= 0) this.messages.splice(i, 1); };
  }

  /** the machine is behind the end of its recording */
  get inPast(): boolean { return this.cursor.op < this.ops.length || this.cursor.mid !== null; }
  /** where the machine is in the recording: at the start of recorded call `op` (ops.length: the end), or inside it */
  get position(): { op: number; inside: boolean } { return { op: this.cursor.op, inside: this.cursor.mid !== null }; }
  /** recorded calls (forward calls and changes) so far */
  get recordedCalls(): number { return this.ops.length; }
  /** bytes held by snapshots */
  get snapshotBytes(): number { return this.bytes; }
  get snapshotCount(): number { return this.snaps.size; }
  /** instructions (all CPUs) at the oldest point still reachable */
  get oldestInstructions(): number {
    const first = this.firstSnap();
    return first === undefined ? this.m.totalInstructions : this.pointAt(first).g;
  }

  // ------------------------------------------------------------------ forward
  /** Machine.runSlice while recording: live at the end of the history, else following it. */
  runSlice(budget: number): SliceResult {
    if (this.inPast) return this.followSlice();
    this.beforeLive();
    let r: SliceResult = { kind: 'running' };
    let left = budget;
    // split so that no recorded call is longer than the snapshot interval (bounded re-execution)
    while (left > 0) {
      const part = Math.min(left, this.interval);
      if (this.ops.length && this.due()) this.snapshotHere();
      const op: Op = { kind: 'slice', budget: part, at: this.point() };
      this.ops.push(op);
      const t0 = performance.now();
      r = this.m.advanceSlice(part);
      this.liveMs += performance.now() - t0;
      op.end = r.kind;
      if (r.kind === 'stopped') this.landedLive();
      this.cursor = { op: this.ops.length, mid: null };
      left -= part;
      if (r.kind !== 'running') break;
    }
    return r;
  }

  /** Machine.stepCpu while recording. */
  stepCpu(cpu: number, count: number): SliceResult {
    if (this.inPast) return this.followStep(cpu, count);
    this.beforeLive();
    if (this.due()) this.snapshotHere();
    const op: Op = { kind: 'step', cpu, count, at: this.point() };
    this.ops.push(op);
    const t0 = performance.now();
    const r = this.m.advanceStep(cpu, count);
    this.liveMs += performance.now() - t0;
    op.end = r.kind;
    if (r.kind === 'stopped') this.landedLive();
    this.cursor = { op: this.ops.length, mid: null };
    return r;
  }

  /**
   * A front end is about to change the machine while it is stopped (a
   * probe, a register, memory, a sysctl). In the past this discards the
   * recorded future; the next forward call snapshots the changed machine.
   */
  mutating(what: string): void {
    if (this.inPast) {
      const from = this.point(), to = this.frontierPoint();
      this.truncate();
      const text = discardedText(what, from, to);
      for (const l of this.messages) l(text);
    }
    const last = this.ops[this.ops.length - 1];
    if (last?.kind !== 'mutation') this.ops.push({ kind: 'mutation', what, at: this.point() });
    this.cursor = { op: this.ops.length, mid: null };
    this.needSnapshot = true;
    // a snapshot here is of the machine before this change (one made after an earlier change at this point): the next one replaces it
    const stale = this.snaps.get(this.ops.length);
    if (stale) { this.snaps.delete(this.ops.length); this.bytes -= stale.cost; }
  }

  /**
   * A periodic snapshot is due: `interval` instructions since the last one,
   * and at least CAPTURE_RATIO times the last capture's wall time spent
   * running since (recording costs at most ~1/CAPTURE_RATIO of the run).
   * Where snapshots fall changes only how far a move back re-executes,
   * never the machine.
   */
  private due(): boolean {
    return this.m.totalInstructions - this.lastSnapG >= this.interval && this.liveMs >= this.captureRatio * this.lastCaptureMs;
  }

  private liveMs = 0;
  private lastCaptureMs = 0;

  private beforeLive(): void {
    this.m.kernel.log.replay.quiet = false;
    this.frontier = null;
    if (this.needSnapshot) this.snapshotHere();
  }

  /** Continue in the past: re-execute recorded calls until one stopped, or the end of the recording. */
  private followSlice(): SliceResult {
    const { op, mid } = this.cursor;
    const r = this.guarded(() => this.replayOp(op, mid, null));
    if (this.inPast === false) this.m.kernel.log.replay.quiet = false;
    if (r.kind === 'stopped' || r.kind === 'exited' || r.kind === 'limit') return r;
    return { kind: 'running' };
  }

  /**
   * A re-execution going forward that does not match the recording (state
   * the snapshots missed, a change no front end reported): the recording
   * after this point is dropped, with a message, and the machine goes on
   * live from where it is.
   */
  private guarded(replay: () => SliceResult): SliceResult {
    try {
      return replay();
    } catch (e) {
      if (!(e instanceof ReplayDivergence)) throw e;
      this.truncate();
      this.needSnapshot = true; // from here on the run is what the snapshots will hold
      const text = `${e.message}; the recording after this point is dropped and the machine goes on from here`;
      for (const l of this.messages) l(text);
      return { kind: 'running' };
    }
  }

  /** A step in the past: until `cpu` has retired `count` more instructions along the recording. */
  private followStep(cpu: number, count: number): SliceResult {
    const want = this.m.retired[cpu] + count;
    for (;;) {
      if (!this.inPast) {
        this.m.kernel.log.replay.quiet = false;
        const left = want - this.m.retired[cpu];
        return left > 0 ? this.stepCpu(cpu, left) : { kind: 'running' };
      }
      const { op, mid } = this.cursor;
      const r = this.guarded(() => this.replayOp(op, mid, { kind: 'retired', cpu, retired: want }));
      if (this.m.retired[cpu] >= want) return { kind: 'running' };
      if (r.kind !== 'running') return r;
    }
  }

  // ------------------------------------------------------------------ backward
  /** Go back to the moment `cpu` had retired one instruction fewer (instruction step back). */
  stepBack(cpu: number): TravelResult {
    const now = this.m.retired[cpu];
    if (now === 0) return { ok: false, why: `CPU ${cpu} has not run an instruction yet` };
    return this.seek({ kind: 'retired', cpu, retired: now - 1 });
  }

  /**
   * Back to the stop after a probe hit: the latest hit before the current
   * point among `hits` (records of the probe-hit log, oldest first), of a
   * probe `wanted` accepts; else the start of the recording.
   */
  reverseToHit(hits: readonly HitInfo[], wanted: (seq: number) => boolean = () => true): TravelResult {
    const nowSeq = this.hitSeq();
    const g0 = this.m.totalInstructions;
    const oldest = this.oldestInstructions;
    for (let i = hits.length - 1; i >= 0; i--) {
      const h = hits[i];
      if (h.seq > nowSeq || !wanted(h.seq)) continue;
      if (h.instructions < oldest) break;
      // a hit whose stop is where we are (the trap we are stopped after had several hits) is not "previous"
      const known = this.landings.get(h.seq);
      if (known && known.g === g0 && known.seq === nowSeq) continue;
      const r = this.seek({ kind: 'hit', seq: h.seq });
      if (!r.ok) return r;
      if (this.m.totalInstructions === g0 && this.hitSeq() === nowSeq) continue;
      return r;
    }
    return this.seek({ kind: 'start' });
  }

  /** Go to the stop after hit `seq` (the timeline's click), backwards or forwards along the recording. */
  goToHit(seq: number): TravelResult {
    if (seq <= 0) return { ok: false, why: `no hit ${seq}` };
    return this.seek({ kind: 'hit', seq });
  }

  /**
   * Put the machine at `target`: restore the last snapshot before it and
   * re-execute the recorded calls, stopping inside one at the target.
   */
  seek(target: TravelTarget): TravelResult {
    if (!this.inPast && this.ops.length) this.snapshotFrontier();
    const first = this.firstSnap();
    if (first === undefined) return { ok: false, why: 'nothing is recorded yet' };
    const i = this.opOf(target);
    if (i === undefined) return { ok: false, why: target.kind === 'hit' ? `hit ${target.seq} is not in the recording (it was dropped, or has not happened)` : 'that point is not in the recording any more' };
    // restore the last snapshot at or before op i (or go on from where we are if that is nearer)
    let j = i;
    while (j > first && !this.snaps.has(j)) j--;
    const here = this.cursor;
    const fromHere = here.op <= i && here.op >= j && this.before(target);
    if (!fromHere) {
      this.restoreAt(j);
    }
    const quiet = this.m.kernel.log.replay;
    quiet.quiet = true;
    if (target.kind === 'start') {
      return { ok: true, cpu: 0, description: 'the start of the recording' };
    }
    while (this.cursor.op < i) {
      const c = this.cursor;
      this.replayOp(c.op, c.mid, null, true);
    }
    this.replayOp(i, this.cursor.mid, target, true);
    if (target.kind === 'hit') {
      // every hit handled in the trap we stopped after stops here
      const at = { g: this.m.totalInstructions, seq: this.hitSeq() };
      for (let q = target.seq; q <= at.seq; q++) this.landings.set(q, at);
    }
    if (!this.reached(target)) throw new ReplayDivergence(`time travel: re-execution did not reach ${describe(target)} in call ${i} (recorded ${JSON.stringify(this.ops[i].at)})`);
    const cpu = target.kind === 'retired' ? target.cpu : this.lastStopCpu;
    return { ok: true, cpu, description: target.kind === 'hit' ? `hit ${target.seq}` : `CPU ${target.cpu} at instruction ${target.retired}` };
  }

  private lastStopCpu = 0;
  /** where a stop after hit seq lands (instructions, hitSeq there), learnt from seeks and live stops; forgotten with the future */
  private readonly landings = new Map<number, { g: number; seq: number }>();

  /** is the machine still before `target`? */
  private before(t: TravelTarget): boolean {
    if (t.kind === 'start') return false;
    if (t.kind === 'hit') return this.hitSeq() < t.seq;
    return this.m.retired[t.cpu] < t.retired;
  }

  private reached(t: TravelTarget): boolean {
    if (t.kind === 'start') return true;
    if (t.kind === 'hit') return this.hitSeq() >= t.seq;
    return this.m.retired[t.cpu] >= t.retired;
  }

  /** index of the recorded call during which `t` happens */
  private opOf(t: TravelTarget): number | undefined {
    const first = this.firstSnap();
    if (first === undefined) return undefined;
    if (t.kind === 'start') return first;
    for (let i = first; i < this.ops.length; i++) {
      const after = i + 1 < this.ops.length ? this.ops[i + 1].at : this.frontierPoint();
      if (t.kind === 'hit' ? after.hits >= t.seq : after.retired[t.cpu] >= t.retired) {
        const at = this.ops[i].at;
        if (t.kind === 'hit' ? at.hits >= t.seq : at.retired[t.cpu] >= t.retired) return undefined; // before the oldest snapshot
        return i;
      }
    }
    return undefined;
  }

  /**
   * Re-execute recorded call `i` (from inside it when `mid` is set) with an
   * optional target to stop at; advances the cursor. A call run to its end
   * must end where it ended when recorded.
   */
  private replayOp(i: number, mid: number | null, target: TravelTarget | null, seeking = false): SliceResult {
    const op = this.ops[i];
    const m = this.m;
    const g0 = m.totalInstructions;
    if (op.kind === 'mutation') {
      // the front end's change cannot be re-made: the snapshot after it holds it
      this.restoreAt(i + 1);
      if (seeking) this.m.kernel.log.replay.quiet = true;
      return { kind: 'running' };
    }
    if (target?.kind === 'retired') m.travelStop = { cpu: target.cpu, retired: target.retired };
    const k = m.kernel;
    if (target?.kind === 'hit') k.hitStopAt = target.seq;
    let r: SliceResult;
    try {
      r = op.kind === 'slice' ? m.advanceSlice(mid ?? op.budget) : m.advanceStep(op.cpu, mid ?? op.count);
    } finally {
      m.travelStop = null;
      k.hitStopAt = 0;
    }
    this.stats.replayedInstructions += m.totalInstructions - g0;
    if (r.kind === 'stopped') this.lastStopCpu = r.cpu;
    if (target && this.reached(target) && r.kind === 'stopped' && !this.endsHere(i, r)) {
      // stopped inside the call: remember what is left of it
      const left = op.kind === 'slice' ? m.sliceLeft : m.stepLeft;
      this.cursor = { op: i, mid: left };
      return r;
    }
    this.cursor = { op: i + 1, mid: null };
    const next = i + 1 < this.ops.length ? this.ops[i + 1].at : this.frontierPoint();
    if (next.g !== m.totalInstructions || next.hits !== this.hitSeq()) {
      throw new ReplayDivergence(`time travel: re-executing call ${i} (${op.kind}) ended at ${m.totalInstructions} instructions / ${this.hitSeq()} hits, recorded ${next.g} / ${next.hits}`);
    }
    if (op.end !== undefined && op.end !== r.kind) {
      throw new ReplayDivergence(`time travel: re-executing call ${i} (${op.kind}) ended '${r.kind}', recorded '${op.end}'`);
    }
    return r;
  }

  /** did call i, when recorded, end exactly at the state stop `r` leaves (its own recorded stop)? */
  private endsHere(i: number, r: SliceResult): boolean {
    const op = this.ops[i];
    if (op.kind === 'mutation' || op.end !== 'stopped' || r.kind !== 'stopped') return false;
    const next = i + 1 < this.ops.length ? this.ops[i + 1].at : this.frontierPoint();
    return next.g === this.m.totalInstructions && next.hits === this.hitSeq();
  }

  /** a live stop (a breakpoint) right after the hits of its trap: the stop of the newest hit */
  private landedLive(): void {
    const seq = this.hitSeq();
    if (seq > 0 && !this.landings.has(seq)) this.landings.set(seq, { g: this.m.totalInstructions, seq });
  }

  /** Drop the recorded future: the machine goes on live from here. */
  private truncate(): void {
    for (const [k, v] of [...this.landings]) if (v.g > this.m.totalInstructions || k > this.hitSeq()) this.landings.delete(k);
    const { op, mid } = this.cursor;
    if (mid !== null) {
      const o = this.ops[op];
      if (o.kind === 'slice') o.budget -= mid;
      else if (o.kind === 'step') o.count -= mid;
      if (o.kind !== 'mutation') o.end = 'running';
      this.ops.length = op + 1;
    } else {
      this.ops.length = op;
    }
    for (const [k, s] of [...this.snaps]) {
      if (k > this.ops.length || (k === this.ops.length && mid !== null)) { this.snaps.delete(k); this.bytes -= s.cost; }
    }
    this.cursor = { op: this.ops.length, mid: null };
    this.lastSnapG = this.lastSnapPoint();
    this.m.kernel.log.replay.quiet = false;
    this.frontier = null;
    // the hits of the discarded future are not history any more: the new ones take their numbers
    this.m.hitLog.truncateAfter(this.hitSeq(), this.m.kernel.missSeq);
  }

  // ------------------------------------------------------------------ snapshots
  private frontier: Point | null = null;

  private frontierPoint(): Point {
    return this.frontier ?? this.point();
  }

  private snapshotFrontier(): void {
    this.frontier = this.point();
    if (!this.snaps.has(this.ops.length)) this.take(this.ops.length);
  }

  private snapshotHere(): void {
    this.take(this.ops.length);
    this.needSnapshot = false;
  }

  private take(index: number): void {
    const t0 = performance.now();
    let prev: Snapshot | undefined;
    for (let k = index; k >= 0 && !prev; k--) prev = this.snaps.get(k);
    const s = capture(this.m, prev);
    this.lastCaptureMs = performance.now() - t0;
    this.liveMs = 0;
    this.stats.captureMs += this.lastCaptureMs;
    if (this.stats.snapshots++ === 0) this.stats.firstSnapshotBytes = s.cost;
    const old = this.snaps.get(index);
    if (old) this.bytes -= old.cost;
    this.snaps.set(index, s);
    this.bytes += s.cost;
    this.lastSnapG = this.m.totalInstructions;
    this.enforceCeiling();
  }

  /** the machine as recorded call `index` started (the frontier: where the recording ends) */
  private pointAt(index: number): Point {
    return index < this.ops.length ? this.ops[index].at : this.frontierPoint();
  }

  private lastSnapPoint(): number {
    let best = -Infinity;
    for (const k of this.snaps.keys()) best = Math.max(best, this.pointAt(k).g);
    return best;
  }

  private restoreAt(index: number): void {
    const s = this.snaps.get(index);
    if (!s) throw new ReplayDivergence(`time travel: no snapshot at call ${index}`);
    const t0 = performance.now();
    restore(s);
    this.stats.restoreMs += performance.now() - t0;
    this.stats.restores++;
    this.m.kernel.stopRequest = null;
    this.cursor = { op: index, mid: null };
  }

  private firstSnap(): number | undefined {
    let best: number | undefined;
    for (const k of this.snaps.keys()) if (best === undefined || k < best) best = k;
    return best;
  }

  /** Keep the snapshots under maxBytes: the oldest go first (never the only one, never the frontier's). */
  private enforceCeiling(): void {
    while (this.bytes > this.maxBytes && this.snaps.size > 1) {
      const first = this.firstSnap()!;
      const s = this.snaps.get(first)!;
      const keys = [...this.snaps.keys()].sort((a, b) => a - b);
      const next = this.snaps.get(keys[1])!;
      // chunks the next snapshot shares with this one now count as its own
      const shared = sharedBytes(s, next);
      (next as { cost: number }).cost += shared;
      this.snaps.delete(first);
      // the calls before the oldest snapshot can never be re-executed again: keep only their slots
      for (let i = first; i < keys[1]; i++) this.ops[i] = DROPPED;
      this.bytes -= s.cost - shared;
      this.dropped++;
      const p = this.pointAt(keys[1]);
      for (const l of this.messages) l(`time travel: the recording now starts at ${p.g} instructions (older snapshots dropped to stay under ${Math.round(this.maxBytes / 1048576)} MiB)`);
    }
  }

  private point(): Point {
    const m = this.m;
    return { g: m.totalInstructions, hits: this.hitSeq(), retired: m.retired.slice(), timeNs: m.kernel.clock.now() };
  }

  private hitSeq(): number {
    return this.m.kernel.hitSeq;
  }
}

/** The Debug Console's line for a change at `from` that discarded the recording up to `to`. */
function discardedText(what: string, from: Point, to: Point): string {
  const hits = to.hits - from.hits;
  const which = hits === 0 ? '' : hits === 1 ? ` (hit ${to.hits})` : ` (hits ${from.hits + 1}-${to.hits})`;
  return `time travel: ${what} at ${from.g} instructions (after hit ${from.hits}) discarded the recorded future: `
    + `${to.g - from.g} instructions and ${hits} hit${hits === 1 ? '' : 's'}${which}; the run goes on from here, recorded anew`;
}

function describe(t: TravelTarget): string {
  return t.kind === 'hit' ? `hit ${t.seq}` : t.kind === 'retired' ? `CPU ${t.cpu} instruction ${t.retired}` : 'the start';
}

