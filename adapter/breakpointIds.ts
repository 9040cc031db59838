/**
 * What the adapter keeps of the client's breakpoints: DAP breakpoint ids
 * (the adapter's own, mapped to the probe manager's probe ids, kept across
 * restarts and time travel), how each breakpoint was asked for (to register
 * it again), the modes offered, data breakpoint ids.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress } from '../emulator/debug/index';
import type { BreakpointMode, DataBreakpointRequest, ProbeTarget } from '../emulator/debug/index';

/**
 * DAP breakpoint modes offered to the client (Breakpoint.mode). `function`
 * is not one of DAP's named applicabilities (source, exception, data,
 * instruction) but the protocol allows any string; it documents that
 * function breakpoints take the same modes (also written `r:name`).
 * A kretprobe on a source line probes the function containing the line.
 */
export const BREAKPOINT_MODES: DebugProtocol.BreakpointMode[] = [
  { mode: 'kprobe', label: 'Kprobe', description: 'Stop when the instruction is reached (kprobe)', appliesTo: ['source', 'instruction', 'function'] },
  { mode: 'kretprobe', label: 'Kretprobe', description: 'Stop when the function returns (kretprobe on the function containing the line)', appliesTo: ['source', 'instruction', 'function'] },
  { mode: 'hardware', label: 'Hardware', description: 'Stop when the instruction is reached, with an execute debug register (nothing in memory is patched)', appliesTo: ['source', 'instruction', 'function'] },
];

/** A data breakpoint's dataId: "0x<address>/<length>" (the watched bytes; valid across stops and sessions). */
export function dataIdOf(addr: bigint, len: number): string { return `${formatAddress(addr)}/${len}`; }

export function parseDataId(id: string): { addr: bigint; len: number } | string {
  const m = /^(0x[0-9a-fA-F]+)\/([0-9]+)$/.exec(id);
  return m ? { addr: BigInt(m[1]), len: Number(m[2]) } : `bad dataId '${id}' (expected 0xADDRESS/LENGTH)`;
}

export interface ClientBreakpoint {
  line?: number;
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
  mode?: string;
}

/** Run a step generator to its end (the synchronous form of the *Steps methods). */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** How a breakpoint was asked for (to register it again after a restart). */
export interface BreakpointRecord {
  /** where, as the manager takes it */
  target: ProbeTarget;
  /** a kprobe_events definition as written (the manager parses it: its event, fetch args and mode) */
  definition?: string;
  mode: BreakpointMode;
  bp: ClientBreakpoint;
  group: { kind: 'source'; path: string; line: number } | { kind: 'function' } | { kind: 'instruction' } | { kind: 'data' };
  /** a data breakpoint: what the manager's addDataBreakpoint takes */
  data?: DataBreakpointRequest;
}

/** DAP breakpoint ids: handed out by the adapter, kept across restarts. */
export class BreakpointIds {
  private next = 1;
  private readonly toProbe = new Map<number, number>();
  private readonly toDap = new Map<number, number>();
  /** A new DAP id for a probe. */
  add(probeId: number): number { const id = this.next++; this.bind(id, probeId); return id; }
  /** The adapter id of a probe, handed out on first use (probe-file probes have one too: one id space for the views). */
  idOf(probeId: number): number { return this.toDap.get(probeId) ?? this.add(probeId); }
  /** Bind an existing DAP id to a (new) probe id. */
  bind(dapId: number, probeId: number): void {
    const old = this.toProbe.get(dapId);
    if (old !== undefined) this.toDap.delete(old);
    this.toProbe.set(dapId, probeId);
    this.toDap.set(probeId, dapId);
  }
  forget(dapId: number): void {
    const p = this.toProbe.get(dapId);
    if (p !== undefined) this.toDap.delete(p);
    this.toProbe.delete(dapId);
  }
  probeOf(dapId: number): number | undefined { return this.toProbe.get(dapId); }
  dapOf(probeId: number): number | undefined { return this.toDap.get(probeId); }
  /** Drop the probe side (a new machine): DAP ids are re-bound by restoreBreakpoints. */
  clearProbes(): void { this.toProbe.clear(); this.toDap.clear(); }
}

