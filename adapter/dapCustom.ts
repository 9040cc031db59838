/**
 * Custom DAP requests and events between the kprobe debug adapter and the
 * extension's Kprobes/Uprobes views (the idea of vscode-js-debug's
 * dapCustom.ts, written by hand). Every name starts with `_probe`.
 *
 * Imported by both adapter/ and extension/: keep it free of runtime
 * dependencies (type-only imports: the views' rows are the debug facade's,
 * emulator/debug/rows.ts).
 */

export type {
  ProbeRowWarning, KprobeKind, UprobeKind, ProbeKind, HwProbeKind, ProbeInfoBase, ProbeInfo, UprobeInfo, UprobeProcessInfo, ProbeSource, ModuleInfo, DebugRegisterInfo, DebugRegisterHolder, ProbeStateBody,
} from '../emulator/debug/rows';
import type { HwProbeKind, KprobeKind, ProbeStateBody } from '../emulator/debug/rows';

/** Custom events sent by the adapter. */
export const ProbeEvent = {
  /** Full snapshot of the probe lists and global knobs; body: ProbeStateBody. */
  state: '_probeState',
  /** A probe was hit; body: ProbeHitBody (hit counts also arrive in the next `_probeState`). */
  hit: '_probeHit',
  /**
   * New records in the probe-hit log (at most every ~250 ms of wall time
   * while the kernel runs, and at each stop); body: ProbeHitsChangedBody.
   * The timeline and histogram views then ask `_probeTimeline { sinceSeq }`.
   */
  hitsChanged: '_probeHitsChanged',
  /** The hit log warns about a probe (missed hits: maxactive too small...); body: ProbeWarningBody. */
  warning: '_probeWarning',
} as const;
export type ProbeEventName = typeof ProbeEvent[keyof typeof ProbeEvent];

/** Custom requests handled by the adapter. Response bodies are ProbeStateBody unless said otherwise. */
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
  /** args: none; response body: ProbeDebugfsBody (not a ProbeStateBody) — `cat kprobes/list` and `kprobes/enabled` */
  debugfs: '_probeDebugfs',
  /**
   * args: ProbeReadMemoryArgs; response body: DAP ReadMemoryResponse body (not a ProbeStateBody).
   * DAP `readMemory` shows probed code with its original bytes; this request
   * can also return the bytes really in memory (int3 / jump of the probes).
   */
  readMemory: '_probeReadMemory',
  /** args: ProbeLoadModuleArgs — insmod (the init runs when the machine runs) */
  loadModule: '_probeLoadModule',
  /** args: ProbeModuleArgs — rmmod */
  unloadModule: '_probeUnloadModule',
} as const;
export type ProbeRequestName = typeof ProbeRequest[keyof typeof ProbeRequest];

/**
 * Custom requests over the probe-hit log (emulator/trace/hitLog.ts), the
 * timeline and latency histogram views' source (adapter/timelineRequests.ts).
 */
export const HitRequest = {
  /** args: ProbeTimelineArgs; response body: ProbeTimelineBody */
  timeline: '_probeTimeline',
  /** args: none; response body: ProbeHistogramsBody */
  histograms: '_probeHistograms',
  /**
   * args: ProbeGoToHitArgs; response body: none. Moves the machine back (or
   * forward) in time to the hit (the session's time travel); a `stopped`
   * event (reason 'goto') follows. An error when the session cannot travel.
   */
  goToHit: '_probeGoToHit',
} as const;
export type HitRequestName = typeof HitRequest[keyof typeof HitRequest];

/** What fired a hit-log record. */
export type HitKind = 'kprobe' | 'kretprobe-entry' | 'kretprobe-return' | 'jprobe' | 'uprobe' | 'uretprobe' | 'watchpoint' | 'breakpoint';

/** One record of the probe-hit log, as sent over DAP (the address as `0x` + 16 hex digits). */
export interface HitInfo {
  /** sequence number in the log (1, 2, ...: increasing, never reused) */
  seq: number;
  /** machine instructions executed when the hit happened */
  instructions: number;
  /** virtual time of the hit, ns since boot */
  timeNs: number;
  cpu: number;
  pid: number;
  comm: string;
  kind: HitKind;
  /** the log's id of the probe (engine id) */
  probeId: number;
  /** the probe as the log names it (`do_fork+0x4`, `r:sys_open`) */
  probe: string;
  /** the hit address, `0x` + 16 hex digits */
  addr: string;
  /** what the handlers printed during this hit */
  output: string[];
  /** kretprobe-return: virtual ns from the function's entry */
  latencyNs?: number;
}

export interface ProbeTimelineArgs {
  /** only records with seq > sinceSeq (absent: every record the log still holds) */
  sinceSeq?: number;
}

export interface ProbeTimelineBody {
  /** oldest first */
  hits: HitInfo[];
  /** records the log's ring buffer dropped (oldest first) since boot */
  dropped: number;
  /** seq of the newest record */
  lastSeq: number;
  /** seq of the hit the machine is at: the one it stopped at or went to (absent: running / none) */
  nowSeq?: number;
}

export interface HistogramBucket {
  /** inclusive lower bound, ns */
  lo: number;
  /** exclusive upper bound, ns */
  hi: number;
  count: number;
}

export interface ProbeHistogram {
  probeId: number;
  probe: string;
  /** log2 buckets, lowest first */
  buckets: HistogramBucket[];
  /** the histogram as bpftrace prints `@ = hist(...)` */
  text: string;
}

export interface ProbeHistogramsBody {
  histograms: ProbeHistogram[];
}

export interface ProbeGoToHitArgs { seq: number }

export interface ProbeHitsChangedBody {
  lastSeq: number;
  dropped: number;
  /** as ProbeTimelineBody.nowSeq */
  nowSeq?: number;
}

export interface ProbeWarningBody {
  probeId: number;
  probe: string;
  text: string;
  /** missed hits when the warning was raised */
  missed: number;
  /** a kretprobe's maxactive that would have caught every instance */
  suggestedMaxactive?: number;
}

/** Letter of debugfs `list` column 2 per kind; the debug-register kinds (not in debugfs) get their own: W kwatch, h hardware, w watch. */
export const KPROBE_KIND_LETTER: Readonly<Record<KprobeKind | HwProbeKind, string>> = {
  kprobe: 'k', kretprobe: 'r', jprobe: 'j', kwatch: 'W', hardware: 'h', watch: 'w',
};


export interface ProbeLoadModuleArgs { path: string; params?: string[] }
export interface ProbeModuleArgs { name: string }


export interface ProbeHitBody {
  id: number;
  cpu: number;
  nhit: number;
}

/** Response body of `_probeDebugfs`: the files as the kernel prints them. */
export interface ProbeDebugfsBody {
  /** /sys/kernel/debug/kprobes/list */
  list: string;
  /** /sys/kernel/debug/kprobes/enabled ("1\n" / "0\n") */
  enabled: string;
}

/** `_probeReadMemory`: DAP ReadMemoryArguments plus the choice of bytes. */
export interface ProbeReadMemoryArgs {
  memoryReference: string;
  offset?: number;
  count: number;
  /** true: the bytes in memory (breakpoints and jumps visible); false/absent: the original code */
  patched?: boolean;
}

export interface ProbeSetEnabledArgs { id: number; enabled: boolean }
export interface ProbeIdArgs { id: number }
export interface ProbeKnobArgs { enabled: boolean }

/** Launch arguments of the `kprobe` debug type (package.json configurationAttributes). */
export interface KprobeLaunchArgs {
  program: string;
  cpus?: number;
  /** the block translator (default true) */
  translate?: boolean;
  /** record for reverse execution (default true) and the snapshots' ceiling in MiB (default 512) */
  record?: boolean;
  recordMemoryMB?: number;
  /** with a recording: at power-off stay stopped at the end (to go back) instead of ending the session */
  stopAtExit?: boolean;
  probes?: string[];
  stopOnEntry?: boolean;
  maxInstructions?: number;
  kprobesOptimization?: boolean;
  /** 'oops' (default) or 'report': see emulator/debug/launch.ts */
  handlerFaults?: 'oops' | 'report';
  /** 'warn' (default) or 'reject' */
  insnBoundary?: 'warn' | 'reject';
  /** kernel modules loaded after boot ("FILE.ko name=value...") */
  modules?: string[];
  /** the full-system PC instead (emulator/debug/linuxLaunch.ts): a bzImage, its initramfs, the command line, RAM in MiB */
  kernel?: string;
  initrd?: string;
  append?: string;
  memory?: number;
  /** the kernel's ELF with symbols, DWARF and ORC (function breakpoints, thread names, the call stack) */
  vmlinux?: string;
  /** DWARF compilation directory -> local source tree */
  sourceMap?: Record<string, string>;
}

/** The debug type contributed by the extension. */
export const KPROBE_DEBUG_TYPE = 'kprobe';

/** Snapshot with nothing registered and the kernel's default knobs. */
export function emptyProbeState(): ProbeStateBody {
  return { kprobes: [], uprobes: [], enabled: true, optimization: true };
}
