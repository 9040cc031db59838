/**
 * Custom DAP requests and events between the kprobe debug adapter and the
 * extension's Kprobes/Uprobes views (the idea of vscode-js-debug's
 * dapCustom.ts, written by hand). Every name starts with `_probe`.
 *
 * Imported by both adapter/ and extension/: keep it free of runtime
 * dependencies (no imports at all).
 */

/** Custom events sent by the adapter. */
export const ProbeEvent = {
  /** Full snapshot of the probe lists and global knobs; body: ProbeStateBody. */
  state: '_probeState',
  /** A probe was hit; body: ProbeHitBody (hit counts also arrive in the next `_probeState`). */
  hit: '_probeHit',
} as const;
export type ProbeEventName = typeof ProbeEvent[keyof typeof ProbeEvent];

/** Custom requests handled by the adapter. Every response body is a ProbeStateBody. */
export const ProbeRequest = {
  /** args: none */
  list: '_probeList',
  /** args: ProbeSetEnabledArgs — enable_kprobe()/disable_kprobe() on one probe */
  setEnabled: '_probeSetEnabled',
  /** args: ProbeIdArgs — unregister_kprobe() */
  unregister: '_probeUnregister',
  /** args: ProbeKnobArgs — /sys/kernel/debug/kprobes/enabled (arm/disarm all) */
  setGlobalEnabled: '_probeSetGlobalEnabled',
  /** args: ProbeKnobArgs — sysctl debug.kprobes_optimization */
  setOptimization: '_probeSetOptimization',
} as const;
export type ProbeRequestName = typeof ProbeRequest[keyof typeof ProbeRequest];

export type ProbeKind = 'kprobe' | 'kretprobe' | 'uprobe' | 'uretprobe' | 'watchpoint';

/** One registered probe as the views show it (debugfs `kprobes/list` plus counters). */
export interface ProbeInfo {
  /** adapter-wide unique id; also the DAP breakpoint id when the probe came from a breakpoint */
  id: number;
  kind: ProbeKind;
  /** display name: `symbol+0xoff`, `r:symbol`, `/path:0xoff` for uprobes */
  name: string;
  /** probed address as `0x` + 16 hex digits (64-bit exact) */
  address: string;
  symbol?: string;
  offset?: number;
  /** not DISABLED */
  enabled: boolean;
  /** debugfs [OPTIMIZED] */
  optimized: boolean;
  /** debugfs [GONE]: the probed code went away (module unloaded / process exited) */
  gone: boolean;
  /** times the pre-handler ran */
  nhit: number;
  /** missed hits (reentry, kretprobe maxactive exhausted) */
  nmissed: number;
  /** source location of the probed address when DWARF line info has it */
  source?: ProbeSource;
  /** uprobes: the process it is attached to */
  process?: { pid: number; comm: string };
}

export interface ProbeSource {
  /** absolute file path as the adapter sees it */
  path: string;
  /** 1-based line */
  line: number;
}

export interface ProbeStateBody {
  kprobes: ProbeInfo[];
  uprobes: ProbeInfo[];
  /** /sys/kernel/debug/kprobes/enabled */
  enabled: boolean;
  /** sysctl debug.kprobes_optimization */
  optimization: boolean;
  /** set while the probe engine is not available: why */
  unavailable?: string;
}

export interface ProbeHitBody {
  id: number;
  cpu: number;
  nhit: number;
}

export interface ProbeSetEnabledArgs { id: number; enabled: boolean }
export interface ProbeIdArgs { id: number }
export interface ProbeKnobArgs { enabled: boolean }

/** Launch arguments of the `kprobe` debug type (package.json configurationAttributes). */
export interface KprobeLaunchArgs {
  program: string;
  cpus?: number;
  probes?: string[];
  stopOnEntry?: boolean;
  maxInstructions?: number;
  kprobesOptimization?: boolean;
}

/** The debug type contributed by the extension. */
export const KPROBE_DEBUG_TYPE = 'kprobe';

/** Snapshot with nothing registered and the kernel's default knobs. */
export function emptyProbeState(): ProbeStateBody {
  return { kprobes: [], uprobes: [], enabled: true, optimization: true };
}
