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
 *   go to hit         -> the timeline's hit `seq` of the agent's log: the machine just after
 *                        the agent's `out` that sent it (its exact place, linuxAgentProbes.ts
 *                        AgentHitPlace), the handler snippets run again there; the stop shows
 *                        the probed context from the hit's pt_regs
 */
import type { PcBreakMet, PcTimeTravel } from '../timetravel/pcTimeTravel';
import type { AgentHitPlace } from './linuxAgentProbes';

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
