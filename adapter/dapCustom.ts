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
