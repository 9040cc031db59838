/**
 * The rows the debugger's views show (Kprobes, Uprobes, Modules, Debug
 * Registers): what the debug facade builds from the machine's probes,
 * modules and debug registers. Numbers and strings only (addresses as `0x`
 * + 16 hex digits), so a front end carries them as they are (the DAP
 * adapter's `_probeState` body is this snapshot).
 */

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
