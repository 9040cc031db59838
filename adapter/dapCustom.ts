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
export type HitKind = 'kprobe' | 'kretprobe-entry' | 'kretprobe-return' | 'jprobe' | 'uprobe' | 'uretprobe' | 'watchpoint';

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

/** What the Kprobes view shows on a row that has a warning (the last one raised for its probe). */
export interface ProbeRowWarning {
  text: string;
  missed: number;
  suggestedMaxactive?: number;
}

/** debugfs `list` column 2: k (kprobe), r (kretprobe), j (jprobe). */
export type KprobeKind = 'kprobe' | 'kretprobe' | 'jprobe';
export type UprobeKind = 'uprobe' | 'uretprobe';
export type ProbeKind = KprobeKind | UprobeKind;

/** Kprobes-view rows held by a debug register: kwatch (register_kwatch), a hardware-mode breakpoint, a data breakpoint. */
export type HwProbeKind = 'kwatch' | 'hardware' | 'watch';

/** Letter of debugfs `list` column 2 per kind; the debug-register kinds (not in debugfs) get their own: W kwatch, h hardware, w watch. */
export const KPROBE_KIND_LETTER: Readonly<Record<KprobeKind | HwProbeKind, string>> = {
  kprobe: 'k', kretprobe: 'r', jprobe: 'j', kwatch: 'W', hardware: 'h', watch: 'w',
};

/** Fields every row of the Kprobes / Uprobes views has. */
export interface ProbeInfoBase {
  /** adapter-wide unique id of the user probe (breakpoint or .kprobe file probe); also the DAP breakpoint id */
  id: number;
  /**
   * engine id of this registration (Kprobe.id) when registered. A user probe
   * registered at several addresses (a source line with code in two places)
   * gives one row per address, all with the same `id`.
   */
  engineId?: number;
  /** display name: `symbol+0xoff`, `r:symbol`, `/path:0xoff` for uprobes */
  name: string;
  /** probed address as `0x` + 16 hex digits (64-bit exact) */
  address: string;
  /** not DISABLED */
  enabled: boolean;
  /** debugfs [GONE]: the probed code went away (module unloaded / process exited) */
  gone: boolean;
  /** times the handlers ran */
  nhit: number;
  /** missed hits (reentry, kretprobe maxactive exhausted) */
  nmissed: number;
  /** source location of the probed address when DWARF line info has it */
  source?: ProbeSource;
}

/** One registered kprobe as the Kprobes view shows it: a debugfs `kprobes/list` line plus counters. */
export interface ProbeInfo extends ProbeInfoBase {
  kind: KprobeKind | HwProbeKind;
  /** the debug-register kinds: the register held ("DR1"; absent while none), what it watches, and whether it waits for it */
  debugRegister?: { name?: string; addr: string; len: number; type: string; suspended: boolean };
  /** kallsyms symbol of the address (absent: the list shows the bare address) */
  symbol?: string;
  /** offset from `symbol` */
  offset?: number;
  /** module owning the probed code (absent: core kernel text; the list prints a blank) */
  module?: string;
  /** registered (false: the breakpoint/probe failed; `name` carries the reason) */
  registered: boolean;
  /** debugfs [OPTIMIZED] */
  optimized: boolean;
  /** debugfs [FTRACE] */
  ftrace: boolean;
  /** kretprobes: instances preallocated, as registered (the default max(10, 2*NR_CPUS) filled in) */
  maxactive?: number;
  /** the hit log's last warning about this probe (missed hits, suggested maxactive) */
  warning?: ProbeRowWarning;
  /** a kprobe_events definition's event (`kprobes/myopen`): its hits write trace lines, it never stops */
  event?: string;
  /** a breakpoint in kprobe handler code: it stops there as a debugger breakpoint (which handler) */
  inHandler?: string;
  /** a probe C code registered (register_kprobe from a module): the module whose code registered it */
  registeredBy?: string;
}

/** One uprobe as the Uprobes view shows it: the inode/offset table of uprobe_events. */
export interface UprobeInfo extends ProbeInfoBase {
  kind: UprobeKind;
  /** inode number of the probed file */
  inode: number;
  /** offset of the probed instruction in the file */
  offset: number;
  /** path of the probed file */
  path: string;
  /** `symbol+0xoff` of the probed instruction in the program, when its symbol table has one */
  symbol?: string;
  /** uprobe_consumers on the (inode, offset) (all owners: file probes, breakpoints) */
  consumers: number;
  /** registered (false: uprobe_register failed; `name` carries the reason) */
  registered: boolean;
  /** processes whose mapping of the file has the breakpoint inserted (the row's children) */
  processes: UprobeProcessInfo[];
}

/** One process a uprobe is inserted in (a child row of the Uprobes view). */
export interface UprobeProcessInfo {
  pid: number;
  comm: string;
  /** the probed instruction's address in that process, `0x` + 16 hex digits */
  address: string;
  /** the page holding the breakpoint: 'private copy' (copy-on-write of the file page, as uprobe_write_opcode makes) */
  page: string;
  /** this process's hits */
  nhit: number;
}

export interface ProbeSource {
  /** absolute file path as the adapter sees it */
  path: string;
  /** 1-based line */
  line: number;
}

/** A loaded kernel module as the Modules view shows it (lsmod, plus probes). */
export interface ModuleInfo {
  name: string;
  path: string;
  /** 'coming' (init running), 'live', 'going' (exit running) */
  state: string;
  /** core area, `0x` + 16 hex digits, and its size */
  base: string;
  size: number;
  /** init area while not freed */
  init?: { base: string; size: number };
  /** the modules that use this one's symbols (refcount) */
  usedBy: string[];
  /** kprobes placed in this module's code */
  probesIn: number;
}

/** One debug register of one CPU as the Debug Registers view shows it. */
export interface DebugRegisterInfo {
  cpu: number;
  /** the arch's name ("DR2", "DBGWVR1_EL1") */
  name: string;
  /** 'exec' (arm64 breakpoint registers) or 'data' (x86: every DRn; arm64 watchpoint registers) */
  pool: 'exec' | 'data';
  index: number;
  /** who holds it (absent: free) */
  holder?: DebugRegisterHolder;
  /** users displaced by a higher-priority one, waiting for this register */
  waiting: DebugRegisterHolder[];
}

export interface DebugRegisterHolder {
  /** 'kwatch' (register_kwatch, .kprobe kwatch) or 'debugger' (data / hardware breakpoints) */
  owner: string;
  /** `0x` + 16 hex digits */
  addr: string;
  /** symbol+0xoff of addr, when known */
  where?: string;
  len: number;
  /** x (execute), w, r, rw */
  type: string;
  hits: number;
  nmissed: number;
}

export interface ProbeLoadModuleArgs { path: string; params?: string[] }
export interface ProbeModuleArgs { name: string }

export interface ProbeStateBody {
  kprobes: ProbeInfo[];
  uprobes: UprobeInfo[];
  /** loaded kernel modules (absent: no module support on this machine) */
  modules?: ModuleInfo[];
  /** the debug registers of every CPU (absent: none emulated on this architecture; see debugRegistersUnavailable) */
  debugRegisters?: DebugRegisterInfo[];
  /** why there are no debug registers on this machine */
  debugRegistersUnavailable?: string;
  /** the debug registers' raw values per CPU ("DR7", `0x` + 16 hex digits), as the arch reads them */
  debugRegisterValues?: { cpu: number; name: string; value: string }[];
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
}

/** The debug type contributed by the extension. */
export const KPROBE_DEBUG_TYPE = 'kprobe';

/** Snapshot with nothing registered and the kernel's default knobs. */
export function emptyProbeState(): ProbeStateBody {
  return { kprobes: [], uprobes: [], enabled: true, optimization: true };
}
