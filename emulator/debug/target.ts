/**
 * DebugTarget: the machine as a debugger front end sees it, in the
 * debugger's terms (threads = CPUs, frames, variables, registers,
 * breakpoints and probes with their rows, disassembly, memory, time travel,
 * the probe-hit log, modules, uprobes, debug registers, sysctl). The DAP
 * adapter holds one and never the machine behind it: MachineTarget
 * (machineTarget.ts) serves it over this emulator's Machine; another kind of
 * machine (a full-system PC running a real kernel) serves the same
 * interface, so the adapter keeps its shape.
 *
 * Types only: every value comes through emulator/debug/index.ts.
 */
import type { ArchOps, Cpu } from '../arch/types';
import type { ElfImage } from '../elf/types';
import type { CompileOptions } from '../handlers';
import type { KernelModule } from '../kernel/modules/modules';
import type { PrintkRecord, Task } from '../kernel/types';
import type { BreakpointHit, ProbeManager } from '../probes';
import type { DataTarget } from '../probes/dataTarget';
import type { HwBpRequest } from '../hwbp';
import type { DisassemblyRow } from './disassembly';
import type { EvaluateAnswer, EvaluateInput } from './evaluate';
import type { EmulatorCode, WalkedFrame } from './frames';
import type { HitLogView } from './hitQueries';
import type { DebugMemory } from './memory';
import type { RegisterRow } from './registers';
import type { BreakpointParts, BreakpointPlacement, BreakpointRequestSpec, BreakpointResolution } from './resolver';
import type { ProbeStateBody } from './rows';
import type { RunController, RunEnd } from './runControl';
import type { StepKind, Stepper } from './stepper';
import type { SessionTimeTravel } from './timeTravel';
import type { ProbeStop } from './stoppedEnv';
import type { SourceMap } from './sourceMap';
import type { Expandable, FrameState, FrameVariable, FrameVariables } from './variables';
import type { UserPrograms } from './userPrograms';

/** The probe service of a target: what a debugger registers, lists and changes (emulator/probes ProbeManager's debugger half). */
export type DebugProbes = Pick<ProbeManager,
  'addBreakpoint' | 'addDataBreakpoint' | 'addProbeFile' | 'dataTarget' | 'get' | 'list' | 'remove' | 'setEnabled'
  | 'onBreakpointHit' | 'kprobesEnabled' | 'writeKprobesEnabled' | 'debugfsList' | 'compileOptions' | 'hasKprobes'>;

/** What changed among a target's probes: counters (a hit, a missed hit) or the set of probes and their state. */
export type ProbeChange = 'counters' | 'probes' | 'kernelProbes';

/** The context of a rows snapshot: how the front end names files and probes. */
export interface RowsContext {
  /** DWARF path -> path shown to the client */
  toLocal(file: string): string;
  /** the front end's id of a manager probe (its breakpoint id for a breakpoint) */
  idOf(probeId: number): number;
}

/** A stopped CPU's evaluation: the expression and the frame it runs in. */
export type EvaluateRequest = Omit<EvaluateInput, 'machine' | 'engine' | 'compileOptions' | 'cpu'> & { cpuIndex: number };

export interface DebugTarget {
  /** what kind of machine serves the target ('emulator': this emulator's Machine) */
  readonly kind: string;
  readonly arch: ArchOps;
  /** the kernel image: its symbols, line table and DWARF */
  readonly image: ElfImage;

  // ---- threads (one per CPU) and run control
  readonly cpuCount: number;
  cpu(index: number): Cpu | undefined;
  /** "CPU 0: init [1]", "CPU 1: swapper/1" */
  threadName(index: number): string;
  currentTask(index: number): Task | undefined;
  runController(onEnd: (end: RunEnd) => void): RunController;
  /** A step of one CPU from `pc` (the pc shown), out of the frame returning to `returnAddress`. */
  stepper(cpuIndex: number, kind: StepKind, pc: bigint, returnAddress?: bigint): Stepper;
  /** tasks on their CPUs without running (a stop at the entry) */
  scheduleFirstTasks(): void;
  readonly exit: { code: number } | null;
  onPrintk(listener: (r: PrintkRecord) => void): () => void;

  // ---- stack, variables, registers, evaluation
  frames(cpuIndex: number, pc: bigint, showInlineEntry: boolean): WalkedFrame[];
  frameState(cpuIndex: number, frame: WalkedFrame, pc: bigint): FrameState | undefined;
  frameVariables(cpuIndex: number, frame: WalkedFrame, state: FrameState): FrameVariables | undefined;
  frameGlobals(cpuIndex: number, frame: WalkedFrame): FrameVariable[] | undefined;
  children(x: Expandable, cpuIndex: number): FrameVariable[];
  /** code the machine itself owns at an address (no image holds it) */
  emulatorCode(pc: bigint): EmulatorCode | undefined;
  /** the kernel-thread return page (code the machine owns) */
  readonly threadReturnPage: bigint;
  moduleAt(pc: bigint): KernelModule | undefined;
  registers(cpuIndex: number): RegisterRow[];
  /** writes a register; the value as shown afterwards */
  setRegister(cpuIndex: number, name: string, value: string): string;
  evaluate(req: EvaluateRequest): EvaluateAnswer;
  /** what a data breakpoint on an expression (in a frame, else over memory) would watch, or why not */
  dataTarget(expression: string, frame?: { cpuIndex: number; stop?: ProbeStop; frame?: EvaluateRequest['frame']; image?: ElfImage }): DataTarget | string;
  /** the breakpoint probe a hit stopped at, for the Probe scope and `p->` at the stop */
  probeStop(hit: BreakpointHit): ProbeStop | undefined;
  /** the user program a task runs (its own ELF), when it is a user process */
  userImage(pid: number): ElfImage | undefined;
  /** the compile options of the handler language on this target */
  compileOptions(): CompileOptions;

  // ---- memory and code
  /** kernel memory as the debugger reads it: probed code as its original bytes, no writes over a probe */
  memory(): DebugMemory;
  disassemble(base: bigint, insnOffset: number, count: number): DisassemblyRow[];
  /** symbol+0xoff of an address ("do_fork+0x12"), or its hex value */
  where(addr: bigint): string;
  /** symbol+0xoff of an address inside a symbol of `image` (default the kernel's), else undefined */
  symbolAt(addr: bigint, image?: ElfImage): string | undefined;

  // ---- breakpoints and probes
  readonly probes: DebugProbes;
  /** source file / function / instruction / event -> where the probe goes, or why not (resolver.ts) */
  resolveBreakpoint(spec: BreakpointRequestSpec): BreakpointResolution;
  /** resolve and register: the probe a breakpoint becomes (pending ones too: verified when a module brings their file) */
  placeBreakpoint(spec: BreakpointRequestSpec, parts: BreakpointParts): BreakpointPlacement;
  /** where the sources DWARF names are on this host (and which front-end path is which DWARF file) */
  readonly sources: SourceMap;
  /** DWARF files of the kernel image and its loaded modules' line tables */
  sourceFiles(): readonly string[];
  readonly userPrograms: UserPrograms;
  onProbeChange(listener: (what: ProbeChange) => void): () => void;
  /** hits of uprobes so far (entry and return) */
  uprobeHits(): number;
  /** how many probes the kernel's and modules' own C code registered */
  kernelProbeCount(): number;
  /** enable_kprobe / disable_kprobe on a probe the kernel's or a module's code registered (by engine id) */
  setKernelProbeEnabled(engineId: number, on: boolean): void;
  /** the views' rows: kprobes, uprobes, modules, debug registers, knobs */
  probeRows(ctx: RowsContext): ProbeStateBody;

  // ---- debug registers
  /** why there are none, or the verdict on a watch (undefined: it fits) */
  debugRegistersUnavailable(): string | undefined;
  validateWatch(req: HwBpRequest): { reason: string } | undefined;

  // ---- modules, sysctl
  loadedModules(): readonly KernelModule[] | undefined;
  onModulesChange(listener: () => void): void;
  /** insmod: loaded now, its init runs when the machine runs; onError gets a later failure */
  loadModule(file: string, params: readonly string[], onError: (err: string) => void): KernelModule;
  /** rmmod: the error when refused now; onError gets a later failure */
  unloadModule(name: string, onError: (err: string) => void): string | undefined;
  loadLaunchModules(specs: readonly string[], report: (line: string) => void): void;
  /** sysctl -w NAME=VALUE through the kernel's table */
  writeSysctl(name: string, value: string): { errno: number; reason?: string };
  /** sysctl debug.kprobes_optimization on/off */
  setKprobesOptimization(on: boolean): void;

  // ---- hit log and time travel
  readonly hits: HitLogView;
  /** the seq of the machine's latest hit (in the past after time travel) */
  hitSeq(): number;
  /** reverse execution (its moves say so when the run is not recorded) */
  readonly timeTravel: SessionTimeTravel;
  /** the run is recorded (time travel works) */
  readonly recording: boolean;
  /** the recorder's messages (what a change in the past discarded...) */
  onTimeTravelMessage(listener: (line: string) => void): () => void;
  /** the machine is in the past of its recording */
  readonly inPast: boolean;
}
