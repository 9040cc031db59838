/**
 * Reverse execution on the Linux machine (the full-system PC recorded by
 * timetravel/pcTimeTravel.ts), as linuxTarget.ts offers it to a front end:
 *
 *   step back         -> CPU c one instruction back: the machine as it was when c had
 *                        retired one instruction fewer (the other CPUs as they were then)
 *   reverse continue  -> back to the last point before now where a breakpoint, function,
 *                        instruction or data breakpoint set now stops the machine (whether or
 *                        not it was set when the machine ran there), or a gutter probe of the
 *                        guest's agent stops it (its hit re-executed: the stop at
 *                        agent_stop_point with the hit pending), else the oldest point kept
 *   go to hit         -> the timeline's hit `seq`: an emulator breakpoint's stop (linuxHits.ts: the
 *                        machine as it stopped there), or an agent hit: the machine just after
 *                        the agent's `out` that sent it (its exact place, linuxAgentProbes.ts
 *                        AgentHitPlace), the handler snippets run again there; the stop shows
 *                        the probed context from the hit's pt_regs
 */
import type { PcBreakMet, PcTimeTravel } from '../timetravel/pcTimeTravel';
import type { AgentHitPlace, AgentStop, LinuxAgentProbes } from './linuxAgentProbes';
import type { BreakHitPlace, LinuxHits } from './linuxHits';

/** the stop's description, or why not */
export function linuxStepBack(tt: PcTimeTravel, cpu: number): { description: string } | string {
  const h = tt.run.cpus[cpu];
  if (!h) return `no CPU ${cpu}`;
  if (h.instret === 0) return `CPU ${cpu} has not run an instruction yet`;
  const r = tt.seek({ kind: 'retired', cpu, instret: h.instret - 1 });
  if (!r.ok) return `step back: ${r.why}`;
  return { description: `Stepped back one instruction on CPU ${cpu}` };
}

/** where the machine went back to (a breakpoint met), null: no earlier stop (it is at the oldest point), or why not */
export function linuxReverseContinue(tt: PcTimeTravel, stops: (b: PcBreakMet) => boolean): PcBreakMet | null | string {
  if (tt.snapshotCount === 0) return 'reverse continue: nothing is recorded yet';
  const met = tt.reverseToBreak(b => b.detail.startsWith('a debugger watchpoint') || stops(b));
  return met ?? null;
}

/** to the place of hit `seq` (the hit's CPU one instruction past the `out` that sent it), or why not */
export function linuxGoToHit(tt: PcTimeTravel, seq: number, place: AgentHitPlace | undefined): string | undefined {
  if (!place) return `hit ${seq} is not among the guest agent's hits kept`;
  if (place.g + 1 > tt.frontier) return `hit ${seq} is not in the recorded run yet`;
  const r = tt.seek({ kind: 'retired', cpu: place.cpu, instret: place.instret + 1 });
  if (!r.ok) return `go to hit ${seq}: ${r.why}`;
  return undefined;
}

/** The Debug Console's line after a move: where the machine is, what the recording holds, what the move cost. */
export function linuxTravelLine(tt: PcTimeTravel, ms: number): string {
  const mib = (n: number): string => (n / 1048576).toFixed(1);
  return `kprobe: time travel: now at ${tt.run.instructions} instructions (the run reached ${tt.frontier}); ${tt.snapshotCount} snapshots, ${mib(tt.snapshotBytes)} MiB `
    + `(largest ${mib(tt.stats.maxSnapshotBytes)} MiB); this move took ${(ms / 1000).toFixed(2)} s`;
}

/** what the moves need of the Linux target (linuxTarget.ts) */
export interface LinuxTravelHost {
  travel(): PcTimeTravel;
  readonly hits: LinuxHits;
  agent(): LinuxAgentProbes | undefined;
  /** the machine runs (or has ended): no move */
  busy(): boolean;
  /** a reverse continue stops at this break met (a breakpoint set now, or agent_stop_point with a stopping hit pending) */
  stopsAt(b: PcBreakMet): boolean;
  /** the machine moved (the line says where to): the probed context shown before is gone */
  moved(line: string): void;
  report(s: { reason: 'step' | 'goto'; cpu: number; description: string }): void;
  /** the stop at a break met, shown as the run would show it */
  reportBreak(cpu: number, detail: string): void;
  /** the stop at an agent hit, its probed context from the hit's pt_regs */
  reportAgentHit(cpu: number, seq: number, stop: AgentStop): void;
}

/** Step back, reverse continue and go to hit on the Linux target: the move, the Debug Console's line, then the stop (after the request's answer). */
export class LinuxTravelMoves {
  /** the last go to hit stopped at a breakpoint's instruction (shown as a breakpoint stop: linuxFrames.ts inlined entries) */
  atBreakpoint = false;
  constructor(private readonly t: LinuxTravelHost) {}

  stepBack(cpu: number): string | undefined {
    if (this.t.busy()) return 'the machine is running';
    const t0 = performance.now();
    const r = linuxStepBack(this.t.travel(), cpu);
    if (typeof r === 'string') return r;
    this.t.moved(linuxTravelLine(this.t.travel(), performance.now() - t0));
    setImmediate(() => this.t.report({ reason: 'step', cpu, description: r.description }));
    return undefined;
  }

  reverseContinue(): string | undefined {
    if (this.t.busy()) return 'the machine is running';
    const t0 = performance.now();
    const r = linuxReverseContinue(this.t.travel(), b => this.t.stopsAt(b));
    if (typeof r === 'string') return r;
    this.t.moved(linuxTravelLine(this.t.travel(), performance.now() - t0));
    if (r === null) { setImmediate(() => this.t.report({ reason: 'step', cpu: 0, description: 'Reverse continue: no earlier breakpoint stop; the oldest point recorded' })); return undefined; }
    setImmediate(() => this.t.reportBreak(r.cpu, r.detail));
    return undefined;
  }

  /** the timeline's hit `seq`: an emulator breakpoint's stop (the machine as it stopped) or an agent hit (just after its `out`) */
  goToHit(seq: number): string | undefined {
    if (this.t.busy()) return 'the machine is running; pause it first';
    const at = this.t.hits.breakPlace(seq);
    if (at) return this.goToBreakHit(seq, at);
    const agent = this.t.agent();
    if (!agent) return `hit ${seq} is not in the hit log kept`;
    const place = agent.place(seq);
    const t0 = performance.now();
    const why = linuxGoToHit(this.t.travel(), seq, place);
    if (why !== undefined) return why;
    this.t.moved(linuxTravelLine(this.t.travel(), performance.now() - t0));
    // the stop shown is the hit's: its pending stop at agent_stop_point is taken
    agent.stopAt(place!.cpu);
    this.atBreakpoint = false;
    setImmediate(() => this.t.reportAgentHit(place!.cpu, seq, place!.stop));
    return undefined;
  }

  /** an emulator breakpoint's hit: the CPU at the breakpoint, or just past the watched access */
  private goToBreakHit(seq: number, at: BreakHitPlace): string | undefined {
    const tt = this.t.travel();
    if (at.g > tt.frontier) return `hit ${seq} is not in the recorded run yet`;
    const t0 = performance.now();
    const r = tt.seek({ kind: 'retired', cpu: at.cpu, instret: at.instret });
    if (!r.ok) return `go to hit ${seq}: ${r.why}`;
    this.t.moved(linuxTravelLine(tt, performance.now() - t0));
    this.atBreakpoint = !at.description.startsWith('Data breakpoint');
    setImmediate(() => this.t.report({ reason: 'goto', cpu: at.cpu, description: `Hit ${seq}: ${at.description}` }));
    return undefined;
  }
}
