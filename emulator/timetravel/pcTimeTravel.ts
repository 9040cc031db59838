/**
 * Time travel on the full-system PC (system/pcRun.ts): snapshots of the
 * whole machine (snapshot.ts over the PcRun: physical memory by 4 KiB
 * chunks shared with the previous snapshot, zero chunks shared by all;
 * every CPU's registers, control registers, MSRs, descriptor caches and
 * TLBs; the PICs, PIT, RTC, UART with its queued input, local APICs and
 * their timers, IO-APIC, ACPI PM, the clock, the agent channel's queued
 * requests; the run loop's place in its round of slices) taken at
 * intervals while the machine runs, and deterministic re-execution from
 * the last snapshot before a point to that exact point: a global
 * instruction count, or the count CPU c has retired.
 *
 * The PC is deterministic from a snapshot on: the same instructions in the
 * same order (PcRun keeps its slice across a cut), devices moved by the
 * virtual clock only. What comes from outside is either machine state once
 * it is in (typed input in the UART's queue, the agent's queued requests)
 * or a change the front end announces (`mutating`: a register or memory
 * written, input typed): a snapshot is taken right after such a change, and
 * a run through the past restores it when it reaches that point, so the
 * recorded future is followed. A change made in the past discards the
 * recorded future.
 *
 * A re-execution is quiet: the console's listeners hear nothing until the
 * furthest point ever reached (the front end already showed that output).
 * The agent channel's hits are passed on as in the live run, with
 * `machine.replay.quiet` set: the debugger's side (debug/linuxAgentProbes.ts)
 * runs the handler snippets again (their writes to guest memory and
 * pt_regs are repeated, so the re-execution does not diverge) but prints
 * and records nothing; the agent's replies are not passed on (the debugger
 * took them the first time).
 *
 * Cost: a snapshot is due after `interval` instructions and at least
 * `captureRatio` times the last capture's wall time spent running since
 * (recording costs at most ~1/captureRatio of the run); past `maxBytes` the
 * oldest snapshots are dropped.
 */
import type { PcRun, PcRunStop } from '../system/pcRun';
import { capture, restore, sharedBytes, type Snapshot } from './snapshot';
import { ramRanges } from '../system/boot/e820';

export interface PcTimeTravelOptions {
  /** instructions (all CPUs) between snapshots, at least (default 50 M) */
  interval?: number;
  /** running time per capture time, at least (default 10; 0: by instructions alone, as tests want) */
  captureRatio?: number;
  /** ceiling on the snapshots' own bytes (default 1 GiB) */
  maxBytes?: number;
}

export const PC_TIME_TRAVEL_DEFAULTS = { interval: 50_000_000, captureRatio: 10, maxBytes: 1024 * 1024 * 1024 } as const;

/** A point of the machine's history: the global instruction count, and what each CPU had retired (-1: not started). */
export interface PcPoint { readonly g: number; readonly retired: readonly number[] }

/** Where a re-execution should stop. */
export type PcTravelTarget = { kind: 'instructions'; g: number } | { kind: 'retired'; cpu: number; instret: number };

/** A debugger breakpoint met during a re-execution: where (the stop's point), which CPU, its pc and the stop's detail. */
export interface PcBreakMet { point: PcPoint; cpu: number; pc: bigint; detail: string }

interface PcSnap { point: PcPoint; snap: Snapshot; afterChange: boolean }

/** what a re-execution found different from the recording (state the snapshots missed) */
export class PcReplayError extends Error {}

export class PcTimeTravel {
  private readonly snaps: PcSnap[] = [];
  private bytes = 0;
  private needSnapshot = true;
  private changed = false;
  private liveMs = 0;
  private lastCaptureMs = 0;
  /** the agent channel's queued requests after the last run: more before the next one is a request the front end queued (a change) */
  private agentPending = 0;
  /** the furthest instruction count ever reached: re-executions before it are quiet */
  frontier = 0;
  readonly interval: number;
  readonly captureRatio: number;
  readonly maxBytes: number;
  /** called after every restore: the CPUs' debugger slots are as the snapshot had them; the front end puts its own back */
  rearm: () => void = () => { /* nothing armed */ };
  /** messages for the user (the recorded future discarded, old snapshots dropped) */
  onMessage: (text: string) => void = () => { /* none */ };
  /** the recorded future after instruction count g is discarded (a change in the past): what the front end recorded of it goes too */
  onDiscard: (g: number) => void = () => { /* nothing recorded */ };
  /** a debugger breakpoint a re-execution passes over (after `met` saw it): the front end's state at that stop moves on as the live run's did */
  onReplayBreak: (b: PcBreakMet) => void = () => { /* nothing to move */ };
  readonly stats = { snapshots: 0, restores: 0, replayedInstructions: 0, captureMs: 0, restoreMs: 0, lastSnapshotBytes: 0, maxSnapshotBytes: 0 };

  constructor(readonly run: PcRun, opts: PcTimeTravelOptions = {}) {
    this.interval = opts.interval ?? PC_TIME_TRAVEL_DEFAULTS.interval;
    this.captureRatio = opts.captureRatio ?? PC_TIME_TRAVEL_DEFAULTS.captureRatio;
    this.maxBytes = opts.maxBytes ?? PC_TIME_TRAVEL_DEFAULTS.maxBytes;
  }

  /** the machine is behind the furthest point it reached */
  get inPast(): boolean { return this.run.instructions < this.frontier; }
  get snapshotCount(): number { return this.snaps.length; }
  get snapshotBytes(): number { return this.bytes; }
  /** the oldest point that can still be reached */
  get oldest(): PcPoint | undefined { return this.snaps[0]?.point; }

  /** where the machine is now */
  point(): PcPoint {
    return { g: this.run.instructions, retired: this.run.cpus.map(c => (c === null ? -1 : c.instret)) };
  }

  /**
   * A front end is about to change the machine (a register, memory, typed
   * input, an agent request): in the past the recorded future is dropped;
   * the next run snapshots the changed machine first.
   */
  mutating(what: string): void {
    const g = this.run.instructions;
    if (this.inPast) {
      this.onMessage(`kprobe: time travel: ${what} at ${g} instructions discards the recorded run after it (up to ${this.frontier} instructions)`);
      this.dropAfter(g);
      this.frontier = g;
      this.onDiscard(g);
    }
    this.needSnapshot = true;
    this.changed = true;
  }

  /**
   * PcRun.run through the recorder: snapshots when due, quiet output behind
   * the frontier, and the changes recorded there put back when the run
   * reaches them.
   */
  runForward(maxInstructions: number, until: () => PcRunStop | null = () => null, target?: { readonly cpu: number; readonly instret: number }): PcRunStop {
    const r = this.run;
    if (r.machine.agent.pending > this.agentPending) this.mutating('a request to the guest\'s agent');
    if (this.needSnapshot || this.due()) this.snapshotHere(this.changed);
    try { return this.forward(maxInstructions, until, target); } finally { this.agentPending = r.machine.agent.pending; }
  }

  private forward(maxInstructions: number, until: () => PcRunStop | null, target?: { readonly cpu: number; readonly instret: number }): PcRunStop {
    const r = this.run;
    for (;;) {
      const next = this.snaps.find(s => s.afterChange && s.point.g > r.instructions);
      const behind = r.instructions < this.frontier;
      let cap = maxInstructions;
      if (next !== undefined) cap = Math.min(cap, next.point.g);
      if (behind) cap = Math.min(cap, this.frontier);
      const t0 = performance.now();
      const stop = behind ? this.quietly(() => r.run(cap, until, target)) : r.run(cap, until, target);
      this.liveMs += performance.now() - t0;
      if (r.instructions > this.frontier) this.frontier = r.instructions;
      if (stop.kind !== 'limit' || cap === maxInstructions || (target !== undefined && r.cpus[target.cpu]?.instret === target.instret)) return stop;
      r.stop = null;
      if (next !== undefined && r.instructions === next.point.g) this.restoreSnap(next);
    }
  }

  /** Go to `target` (at or before the furthest point reached): restore the last snapshot before it and re-execute quietly. */
  seek(target: PcTravelTarget): { ok: true } | { ok: false; why: string } {
    const base = this.baseFor(target);
    if (base === undefined) return { ok: false, why: this.snaps.length === 0 ? 'nothing is recorded yet' : `not recorded that far back (the oldest point kept is at ${this.snaps[0].point.g} instructions)` };
    this.restoreSnap(base);
    const reached = this.replayTo(target.kind === 'instructions' ? target.g : this.frontier, target.kind === 'retired' ? target : undefined);
    if (!reached) throw new PcReplayError(`time travel: the re-execution did not reach ${JSON.stringify(target)} (stopped at ${this.run.instructions} instructions: ${this.run.stop?.detail ?? ''})`);
    return { ok: true };
  }

  /**
   * The last debugger breakpoint or watchpoint stop (of those armed now,
   * `counts` says which) strictly before now, searched segment by segment
   * back from now; the machine is left there. undefined: none since the
   * oldest snapshot (the machine is left at the oldest point).
   */
  reverseToBreak(counts: (b: PcBreakMet) => boolean): PcBreakMet | undefined {
    const now = this.point();
    let end = now.g;
    for (let k = this.lastSnapAtOrBefore(now.g); k >= 0; k--) {
      const s = this.snaps[k];
      if (s.point.g > end) continue;
      this.restoreSnap(s);
      let last: PcBreakMet | undefined;
      // one past the segment's end: a breakpoint at its very end stops there (the next snapshot may hold the resume flag that passed it)
      this.replayTo(end + 1, undefined, b => { if (b.point.g < now.g && counts(b)) last = b; });
      if (last !== undefined) {
        this.restoreSnap(s);
        this.replayTo(last.point.g);
        return last;
      }
      end = s.point.g;
    }
    const first = this.snaps[0];
    if (first !== undefined) this.restoreSnap(first);
    return undefined;
  }

  private baseFor(target: PcTravelTarget): PcSnap | undefined {
    for (let k = this.lastSnapAtOrBefore(this.frontier); k >= 0; k--) {
      const s = this.snaps[k];
      if (target.kind === 'instructions' ? s.point.g <= target.g : (s.point.retired[target.cpu] ?? -1) >= 0 && s.point.retired[target.cpu] <= target.instret) return s;
    }
    return undefined;
  }

  /** the index of the last snapshot at or before g */
  private lastSnapAtOrBefore(g: number): number {
    let k = this.snaps.length - 1;
    while (k >= 0 && this.snaps[k].point.g > g) k--;
    return k;
  }

  /**
   * Re-execute quietly from where the machine is to instruction count `g`
   * (or CPU target), passing over debugger breakpoints (each reported to
   * `met`); a recorded change on the way is put back by its snapshot.
   * false: the machine stopped before (an end).
   */
  private replayTo(g: number, target?: { cpu: number; instret: number }, met?: (b: PcBreakMet) => void): boolean {
    const r = this.run;
    const from = r.instructions;
    try {
      return this.quietly(() => {
        for (;;) {
          const next = this.snaps.find(s => s.afterChange && s.point.g > r.instructions && s.point.g <= g);
          const cap = next !== undefined ? next.point.g : g;
          r.stop = null;
          const stop = r.run(cap, () => null, target);
          if (stop.kind === 'debugBreak') {
            const cpu = stop.cpu ?? 0;
            const h = r.cpus[cpu]!;
            const b: PcBreakMet = { point: this.point(), cpu, pc: h.pc(), detail: stop.detail };
            met?.(b);
            this.onReplayBreak(b);
            h.debug.resume(!stop.detail.startsWith('a debugger watchpoint'));
            continue;
          }
          if (stop.kind !== 'limit') return false;
          r.stop = null;
          if (target !== undefined && r.cpus[target.cpu]?.instret === target.instret) return true;
          if (next !== undefined && r.instructions === next.point.g) this.restoreSnap(next);
          if (r.instructions >= g) return target === undefined;
        }
      });
    } finally {
      this.stats.replayedInstructions += Math.max(0, r.instructions - from);
      // requests a re-executed handler snippet queued again (its disable_kprobe & co.) are the recording's, not a front end's change
      this.agentPending = r.machine.agent.pending;
    }
  }

  /** run `f` with the console and the agent's replies held back and its hits marked as re-executed (machine.replay.quiet) */
  private quietly<T>(f: () => T): T {
    const m = this.run.machine;
    const a = m.agent;
    const { onReply } = a;
    const was = m.replay.quiet;
    m.replay.quiet = true;
    a.onReply = null;
    try { return f(); } finally { m.replay.quiet = was; a.onReply = onReply; }
  }

  private due(): boolean {
    const last = this.snaps[this.snaps.length - 1];
    if (last === undefined) return true;
    return this.run.instructions - last.point.g >= this.interval && this.liveMs >= this.captureRatio * this.lastCaptureMs;
  }

  private snapshotHere(afterChange: boolean): void {
    const p = this.point();
    if (this.inPast) { this.needSnapshot = false; this.changed = false; return; }
    // a snapshot at the same point (a second change there): the newer one replaces it
    const last = this.snaps[this.snaps.length - 1];
    if (last !== undefined && last.point.g === p.g) { this.snaps.pop(); this.bytes -= last.snap.cost; }
    const t0 = performance.now();
    const prev = this.snaps[this.snaps.length - 1]?.snap;
    const snap = capture(this.run, prev);
    this.lastCaptureMs = performance.now() - t0;
    this.stats.captureMs += this.lastCaptureMs;
    this.stats.snapshots++;
    this.stats.lastSnapshotBytes = snap.cost;
    this.stats.maxSnapshotBytes = Math.max(this.stats.maxSnapshotBytes, snap.cost);
    this.snaps.push({ point: p, snap, afterChange: afterChange || this.snaps.length === 0 });
    this.bytes += snap.cost;
    this.liveMs = 0;
    this.needSnapshot = false;
    this.changed = false;
    while (this.bytes > this.maxBytes && this.snaps.length > 1) {
      const old = this.snaps.shift()!;
      // chunks the next snapshot shares with the dropped one now count as its own
      const shared = sharedBytes(old.snap, this.snaps[0].snap);
      (this.snaps[0].snap as { cost: number }).cost += shared;
      this.bytes -= old.snap.cost - shared;
      this.onMessage(`kprobe: time travel: the snapshot at ${old.point.g} instructions is dropped (snapshots over ${this.maxBytes >> 20} MiB); the run before ${this.snaps[0].point.g} instructions can no longer be reached`);
    }
  }

  private restoreSnap(s: PcSnap): void {
    const t0 = performance.now();
    // every decoded and translated instruction goes first, while the paged spaces still know which linear pages hold them:
    // their record of that is machine state the restore puts back, the caches are not
    const m = this.run.machine;
    for (const r of ramRanges(m.boot.e820)) m.memory.notifyCodeWrite(r.addr, r.size);
    restore(s.snap);
    this.agentPending = this.run.machine.agent.pending;
    this.stats.restores++;
    this.stats.restoreMs += performance.now() - t0;
    this.rearm();
  }

  private dropAfter(g: number): void {
    while (this.snaps.length > 1 && this.snaps[this.snaps.length - 1].point.g > g) this.bytes -= this.snaps.pop()!.snap.cost;
  }
}
