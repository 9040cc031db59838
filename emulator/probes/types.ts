/** The public types of ProbeManager (manager.ts re-exports them). */
import type { ProbeSite } from './targets';
import type { Diagnostic, ProbeTarget } from '../handlers';
import type { BreakpointMode } from './breakpoints';
import type { HandlerFaultPolicy } from './invoke';
import type { InsnBoundaryPolicy } from './insnBoundary';
import type { EngineProbeKind } from './register';
import type { WatchInfo } from './hwProbes';

/** What the manager registers: a kprobe kind, or a uprobe / uretprobe (uprobes engine) */
export type ManagerProbeKind = EngineProbeKind | 'uprobe' | 'uretprobe' | 'kwatch' | 'hardware' | 'watch';

export type ProbeOrigin = 'file' | 'breakpoint';

/** One engine registration of a probe, as the debugger shows it. */
export interface ProbeSiteInfo {
  /** resolved address (undefined: unknown symbol) */
  addr?: bigint;
  /** "symbol+0xoff" of addr, or the target text when unresolved */
  where: string;
  /** source line of addr (DWARF), when known */
  source?: { file: string; line: number };
  /** engine id (Kprobe.id, StopRequest.probeId) while registered */
  engineId?: number;
  registered: boolean;
  /** "register_kprobe failed: -EINVAL (...)" */
  error?: string;
  /** times the probe's handlers ran */
  hits: number;
  /** missed hits (reentry; for kretprobes also entries with no free instance) */
  nmissed: number;
  /** debugfs flags: "", "[DISABLED]", "[GONE]", "[OPTIMIZED]"... */
  flags: string;
}

/** A user probe (probe-file probe or breakpoint), snapshot. */
export interface ProbeEntry {
  id: number;
  origin: ProbeOrigin;
  kind: ManagerProbeKind;
  /** target as written: "do_fork", "do_fork+0x4", "0xffffffff81000000", "fork.c:30" */
  target: string;
  /** what the target names (undefined when it did not parse) */
  targetKind?: ProbeTarget['kind'];
  /** position of the probe in its .kprobe file */
  file?: { name: string; line: number; column: number };
  /** at least one site is registered */
  verified: boolean;
  /** not disabled (sites carry KPROBE_FLAG_DISABLED when disabled) */
  enabled: boolean;
  /** why the probe (or some site) is not registered */
  message?: string;
  /** a line target without code: the next line that has code */
  nextLine?: number;
  sites: ProbeSiteInfo[];
  /** sums over the sites */
  hits: number;
  nmissed: number;
  /** breakpoints: hits whose condition held (what hitCondition counts) */
  conditionHits?: number;
  /** a kprobe_events breakpoint or probe-file line: its event as `GROUP/EVENT` (its hits write trace lines) */
  event?: string;
  /** a breakpoint in code that runs inside a kprobe handler (it stops there as a debugger breakpoint): which handler */
  inHandler?: string;
  /** uprobes: the probed file and offset (the uprobes engine's table key) */
  user?: { path: string; inode: bigint; offset: bigint; vaddr?: bigint; where?: string; event?: string };
  /** kwatch / hardware / watch: the debug register and what it watches (a hardware breakpoint: its first site's) */
  watch?: WatchInfo;
}

/**
 * A probe's line in the CLI's hit list (`--list`): what ProbeEntry says of
 * its counters and state, without the per-site rows (source lines, symbol
 * text) a file of thousands of probes does not need for it.
 */
export interface ProbeListRow extends Pick<ProbeEntry, 'id' | 'kind' | 'target' | 'file' | 'verified' | 'enabled' | 'hits' | 'nmissed' | 'watch'> {
  /** the number of sites */
  siteCount: number;
  /** some site carries [GONE] (its module went away) */
  gone: boolean;
}

export type { DataBreakpointRequest, ProbeManagerHw } from './hwProbeSet';

/** What addBreakpoint takes (DAP breakpoint fields). */
export interface BreakpointRequest {
  /**
   * Where: a ProbeTarget, or text: "do_fork", "do_fork+0x4", "0xffffffff81000010",
   * "fork.c:30"; text may start with "r:" (kretprobe mode) or "k:" (kprobe mode).
   */
  target: ProbeTarget | string;
  /**
   * The sites of `target` (a ProbeTarget) when the caller has resolved it
   * already (the debugger's resolver): the manager does not resolve it again.
   */
  sites?: readonly ProbeSite[];
  /** default 'kprobe' (or what the "r:" / "p:" / "k:" prefix says, kprobe_events and perf-probe style) */
  mode?: BreakpointMode;
  /** handler-language condition: an expression or a body returning a value (stop when non-zero) */
  condition?: string;
  /** DAP hit condition: N (= >=N), >=N, >N, <N, <=N, ==N, %N */
  hitCondition?: string;
  /** log message: "text {expr} ..." or a "{ ...; }" snippet; the breakpoint then never stops */
  logMessage?: string;
  /** default true */
  enabled?: boolean;
}

export interface ProbeFileResult {
  /** compile diagnostics, positions in the file */
  diagnostics: Diagnostic[];
  /** the probes registered (or attempted) from the file, in file order */
  probes: ProbeEntry[];
  /** one line per registration problem: "file:line:col: kprobe x: register_kprobe failed: -ENOENT (...)" */
  errors: string[];
  /** the file's `image "..."` header as written */
  image?: string;
}

export interface ProbeManagerOptions {
  /** handler step budget per invocation (default: the language's) */
  stepBudget?: number;
  /** what a probe-file handler fault its `fault` snippet does not handle does: 'oops' (default, Linux) or 'report' */
  handlerFaults?: HandlerFaultPolicy;
  /** charge handler steps to a CPU: its virtual clock and the instruction limit (the Machine sets it) */
  chargeSteps?: (cpu: number, slots: number) => void;
  /** a kprobe address inside an instruction: 'warn' (default, Linux 2.6: registered, with a warning) or 'reject' (-EILSEQ) */
  insnBoundary?: InsnBoundaryPolicy;
}
