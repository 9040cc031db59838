/**
 * DebugTarget (target.ts) over this emulator's Machine: the one place the
 * debugger's requests meet the machine's parts (CPUs, kernel, kprobes
 * engine, probe manager, debug registers, modules, hit log, recorder).
 */
import type { ArchOps, Cpu } from '../arch/types';
import type { ElfImage } from '../elf/types';
import type { CompileOptions } from '../handlers';
import type { KernelModule } from '../kernel/modules/modules';
import type { PrintkRecord, Task } from '../kernel/types';
import { SYSCTL_KPROBES_OPTIMIZATION, symbolizeEngineAddress } from '../kprobes';
import type { Machine } from '../machine';
import { resolveDataTarget } from '../probes/dataTarget';
import type { DataTarget } from '../probes/dataTarget';
import { symbolAt, whereOf } from '../probes';
import { probesOf } from '../probes/attach';
import { timeTravelOf } from '../timetravel/recorder';
import type { BreakpointHit, BreakpointMode, ProbeEntry } from '../probes';
import type { BreakpointRequest } from '../probes/types';
import type { ProbeTarget } from '../handlers';
import type { HwBpRequest } from '../hwbp';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { disassemblyRows } from './disassembly';
import type { DisassemblyRow } from './disassembly';
import { evaluate, frameContext } from './evaluate';
import type { EvaluateAnswer } from './evaluate';
import { MachineFrames } from './frames';
import type { EmulatorCode, WalkedFrame } from './frames';
import type { HitLogView } from './hitQueries';
import { loadLaunchModules } from './launch';
import { DebugMemory } from './memory';
import { patchNotes, probePatches } from './probePatches';
import { debugRegisterRows, moduleRows, probeState, warningsByProbe } from './probeRows';
import { registerRows, setRegister } from './registers';
import type { RegisterRow } from './registers';
import { resolveBreakpoint } from './resolver';
import type { BreakpointParts, BreakpointPlacement, BreakpointRequestSpec, BreakpointResolution } from './resolver';
import type { ProbeStateBody } from './rows';
import { RunController } from './runControl';
import type { RunEnd } from './runControl';
import { Stepper } from './stepper';
import type { StepKind } from './stepper';
import type { ProbeStop } from './stoppedEnv';
import { SessionTimeTravel } from './timeTravel';
import { UserPrograms } from './userPrograms';
import { SourceMap } from './sourceMap';
import type { Expandable, FrameState, FrameVariable, FrameVariables } from './variables';
import type { DebugProbes, DebugTarget, EvaluateRequest, ProbeChange, RowsContext } from './target';
import { formatAddress } from './addresses';

export class MachineTarget implements DebugTarget {
  readonly kind = 'emulator';
  readonly userPrograms: UserPrograms;
  readonly sources: SourceMap;
  readonly timeTravel: SessionTimeTravel;
  private readonly stack: MachineFrames;

  constructor(private readonly m: Machine) {
    this.userPrograms = new UserPrograms(m.kernel);
    this.sources = new SourceMap(m.image.path);
    this.stack = new MachineFrames(m, pid => this.userPrograms.imageOf(pid));
    this.timeTravel = new SessionTimeTravel(m);
  }

  get arch(): ArchOps { return this.m.arch; }
  get image(): ElfImage { return this.m.image; }

  // ---- threads and run control

  get cpuCount(): number { return this.m.cpus.length; }
  cpu(index: number): Cpu | undefined { return this.m.cpus[index]; }
  threadName(cpu: number): string {
    const t = this.m.kernel.current(cpu);
    return t ? `CPU ${cpu}: ${t.comm} [${t.pid}]` : `CPU ${cpu}: swapper/${cpu}`;
  }
  currentTask(index: number): Task | undefined { return this.m.kernel.current(index); }
  runController(onEnd: (end: RunEnd) => void): RunController { return new RunController(this.m, onEnd); }
  stepper(cpuIndex: number, kind: StepKind, pc: bigint, returnAddress?: bigint): Stepper {
    // original code (probes hidden); a non-canonical address is a clear error, caught by the stepper's decode
    const view = this.memory();
    return new Stepper(this.m, cpuIndex, kind, { pc, readCode: (a, n) => view.readCode(a, n), returnAddress, where: a => whereOf(this.m.image, a) });
  }
  scheduleFirstTasks(): void { this.m.scheduleFirstTasks(); }
  get exit(): { code: number } | null { return this.m.exit; }
  onPrintk(listener: (r: PrintkRecord) => void): () => void { return this.m.onPrintk(listener); }

  // ---- stack, variables, registers, evaluation

  frames(cpuIndex: number, pc: bigint, showInlineEntry: boolean): WalkedFrame[] { return this.stack.frames(cpuIndex, pc, showInlineEntry); }
  frameState(cpuIndex: number, frame: WalkedFrame, pc: bigint): FrameState | undefined { return this.stack.frameState(cpuIndex, frame, pc); }
  frameVariables(cpuIndex: number, frame: WalkedFrame, state: FrameState): FrameVariables | undefined { return this.stack.frameVariables(cpuIndex, frame, state); }
  frameGlobals(cpuIndex: number, frame: WalkedFrame): FrameVariable[] | undefined { return this.stack.frameGlobals(cpuIndex, frame); }
  children(x: Expandable, cpuIndex: number): FrameVariable[] { return this.stack.children(x, cpuIndex); }
  emulatorCode(pc: bigint): EmulatorCode | undefined { return this.stack.emulatorCode(pc); }
  get threadReturnPage(): bigint { return this.m.kernel.layout.execArea; }
  moduleAt(pc: bigint): KernelModule | undefined { return this.stack.moduleAt(pc); }

  registers(cpuIndex: number): RegisterRow[] {
    return registerRows(this.m.arch, this.needCpu(cpuIndex));
  }

  setRegister(cpuIndex: number, name: string, value: string): string {
    return setRegister(this.m.arch, this.needCpu(cpuIndex), name, value);
  }

  evaluate(req: EvaluateRequest): EvaluateAnswer {
    const mgr = probesOf(this.m);
    return evaluate({ ...req, machine: this.m, engine: mgr.engine, compileOptions: mgr.compileOptions(), cpu: this.needCpu(req.cpuIndex) });
  }

  dataTarget(expression: string, at?: { cpuIndex: number; stop?: ProbeStop; frame?: EvaluateRequest['frame']; image?: ElfImage }): DataTarget | string {
    const mgr = probesOf(this.m);
    if (!at) return mgr.dataTarget(expression);
    const { env, opts } = frameContext({
      machine: this.m, engine: mgr.engine, compileOptions: mgr.compileOptions(), cpu: this.needCpu(at.cpuIndex),
      stop: at.stop, frame: at.frame, image: at.image,
    });
    return resolveDataTarget(this.m.kernel, opts, expression, env);
  }

  probeStop(hit: BreakpointHit): ProbeStop | undefined {
    // hardware and data breakpoints have no kprobe behind them
    if (hit.mode !== 'kprobe' && hit.mode !== 'kretprobe') return undefined;
    const kp = probesOf(this.m).engine.probes.probesAt(hit.addr).find(k => k.id === hit.probeId);
    if (!kp) return undefined;
    return { mode: hit.mode, kp, addr: hit.addr, reportPc: hit.reportPc, returnValue: hit.returnValue, maxactive: hit.maxactive, breakpointId: hit.breakpointId };
  }

  userImage(pid: number): ElfImage | undefined { return this.userPrograms.imageOf(pid); }
  compileOptions(): CompileOptions { return probesOf(this.m).compileOptions(); }

  private needCpu(index: number): Cpu {
    const cpu = this.m.cpus[index];
    if (!cpu) throw new Error(`no CPU ${index}`);
    return cpu;
  }

  // ---- memory and code

  memory(): DebugMemory { return DebugMemory.of(this.m); }

  disassemble(base: bigint, insnOffset: number, count: number): DisassemblyRow[] {
    const m = this.m;
    const view = this.memory();
    const engine = m.hasKprobes ? m.kprobes : undefined;
    return disassemblyRows({
      arch: m.arch, mem: m.kernel.mem, image: m.image,
      readCode: (a, n) => view.readCode(a, n),
      notes: this.disassemblyNotes(),
      extraSymbol: engine ? a => symbolizeEngineAddress(engine, a) : undefined,
    }, base, insnOffset, count);
  }

  /** Notes for the disassembly: what the probes (and execute debug registers) did to an instruction. */
  private disassemblyNotes(): (addr: bigint, len: number) => string[] {
    const m = this.m;
    // execute debug registers: nothing in memory shows them, the note does
    const hwExec = m.hwbp.list().filter(b => b.req.type === 'x' && b.active);
    const hwNotes = (addr: bigint, len: number): string[] =>
      hwExec.filter(b => b.req.addr >= addr && b.req.addr < addr + BigInt(len)).map(b => `hardware breakpoint (${b.registerName}, ${b.owner})`);
    if (!probesOf(m).hasKprobes) return hwNotes;
    const patches = probePatches(probesOf(m).engine, m.arch);
    const arch = m.arch;
    let bp = 'breakpoint';
    try { bp = arch.decodeBytes(arch.breakpointInsn, 0n)?.mnemonic ?? bp; } catch { /* keep the generic word */ }
    return (addr, len) => [...patchNotes(patches, addr, len, bp), ...hwNotes(addr, len)];
  }

  where(addr: bigint): string { return whereOf(this.m.image, addr); }
  symbolAt(addr: bigint, image: ElfImage = this.m.image): string | undefined { return symbolAt(image, addr); }

  // ---- breakpoints and probes

  get probes(): DebugProbes { return probesOf(this.m); }

  resolveBreakpoint(spec: BreakpointRequestSpec): BreakpointResolution {
    return resolveBreakpoint({
      image: this.m.image, arch: this.m.arch, same: (p, f) => this.sources.same(p, f), userPrograms: probesOf(this.m).uprobes ? this.userPrograms : null,
      modulesSupported: this.m.loadedModules() !== undefined,
    }, spec);
  }

  placeBreakpoint(spec: BreakpointRequestSpec, parts: BreakpointParts): BreakpointPlacement {
    const r = this.resolveBreakpoint(spec);
    const add = (target: ProbeTarget, mode: BreakpointMode, definition?: string, sites?: BreakpointRequest['sites']): ProbeEntry => probesOf(this.m).addBreakpoint({
      target: definition ?? target, mode, condition: parts.condition, hitCondition: parts.hitCondition, logMessage: parts.logMessage,
      sites: definition === undefined ? sites : undefined,
    });
    if (r.ok) return { ...r, entry: add(r.target, r.mode, r.definition, r.sites) };
    // no line information yet: registered unverified, a module loaded later may bring the file
    if (r.pending) return { ok: false, message: r.message, pending: { target: r.pending, entry: add(r.pending, 'kprobe') } };
    return { ok: false, message: r.message };
  }

  sourceFiles(): readonly string[] { return this.m.image.lines?.files() ?? []; }

  onProbeChange(listener: (what: ProbeChange) => void): () => void {
    const mgr = probesOf(this.m);
    const off: (() => void)[] = [];
    if (mgr.hasKprobes) {
      off.push(mgr.engine.events.on(e => {
        if (e.type === 'hit' || e.type === 'missed') return listener('counters');
        // a module's own kprobe came or went (after the register call returned: the C API lists its probe then)
        if (e.type === 'registered' || e.type === 'unregistered') queueMicrotask(() => listener('kernelProbes'));
        listener('probes');
      }));
    }
    // processes mapping probed files come and go: the Uprobes view's children follow
    mgr.uprobes?.onChange(() => listener('probes'));
    return () => { for (const f of off.splice(0)) f(); };
  }

  uprobeHits(): number {
    const st = probesOf(this.m).uprobes?.stats;
    return st ? st.hits + st.retHits : 0;
  }

  kernelProbeCount(): number { return probesOf(this.m).engine.cApi.registered().length; }

  setKernelProbeEnabled(engineId: number, on: boolean): void {
    const mgr = probesOf(this.m);
    const e = mgr.hasKprobes ? mgr.engine.probes.listEntries().find(x => x.probe.id === engineId) : undefined;
    if (!e) throw new Error(`no probe with id ${-engineId}`);
    const r = on ? mgr.engine.enableKprobe(e.probe) : mgr.engine.disableKprobe(e.probe);
    if (r !== 0) throw new Error(`${on ? 'enable' : 'disable'}_kprobe failed: ${r}`);
  }

  probeRows(ctx: RowsContext): ProbeStateBody {
    const m = this.m;
    const mgr = probesOf(m);
    // the hit log's missed-hit warnings on the kprobes' rows (uprobe and watchpoint ids are other engines')
    const warnings = warningsByProbe(m.hitLog.warnings().filter(w => w.kind !== 'uprobe' && w.kind !== 'uretprobe' && w.kind !== 'watchpoint'));
    const st = probeState({ mgr, toLocal: ctx.toLocal, idOf: ctx.idOf, warningOf: id => warnings.get(id) });
    const mods = m.loadedModules();
    if (mods) st.modules = moduleRows(mods, mgr.hasKprobes ? mgr.engine.probes.listEntries().map(e => e.addr) : []);
    const hw = m.hwbp;
    if (hw.unavailable) st.debugRegistersUnavailable = hw.unavailable;
    else {
      st.debugRegisters = debugRegisterRows(hw, a => m.kernel.image.symbols.format(a, false));
      st.debugRegisterValues = hw.values().map(v => ({ cpu: v.cpu, name: v.name, value: formatAddress(v.value) }));
    }
    return st;
  }

  // ---- debug registers

  debugRegistersUnavailable(): string | undefined { return this.m.hwbp.unavailable; }
  validateWatch(req: HwBpRequest): { reason: string } | undefined { return this.m.hwbp.validate(req) ?? undefined; }

  // ---- modules, sysctl

  loadedModules(): readonly KernelModule[] | undefined { return this.m.loadedModules(); }
  onModulesChange(listener: () => void): void { this.m.onModulesChange(listener); }

  loadModule(file: string, params: readonly string[], onError: (err: string) => void): KernelModule {
    const abs = resolvePath(file);
    const bytes = new Uint8Array(readFileSync(abs));
    return this.m.modules.load(bytes, abs, params, err => { if (err) onError(err); });
  }

  unloadModule(name: string, onError: (err: string) => void): string | undefined {
    return this.m.modules.unload(name, e => { if (e) onError(e); }) || undefined;
  }

  loadLaunchModules(specs: readonly string[], report: (line: string) => void): void { loadLaunchModules(this.m, specs, report); }

  writeSysctl(name: string, value: string): { errno: number; reason?: string } { return this.m.writeSysctl(name, value); }

  setKprobesOptimization(on: boolean): void {
    const r = this.m.writeSysctl(SYSCTL_KPROBES_OPTIMIZATION, on ? '1' : '0');
    if (r.errno !== 0) throw new Error(`sysctl ${SYSCTL_KPROBES_OPTIMIZATION} failed: ${r.reason}`);
  }

  // ---- hit log and time travel

  get hits(): HitLogView { return this.m.hitLog; }
  hitSeq(): number { return this.m.kernel.hitSeq; }
  onTimeTravelMessage(listener: (line: string) => void): () => void {
    return timeTravelOf(this.m)?.onMessage(listener) ?? (() => undefined);
  }
  get inPast(): boolean { return timeTravelOf(this.m)?.inPast ?? false; }
  get recording(): boolean { return timeTravelOf(this.m) !== null; }
}
