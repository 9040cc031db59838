/**
 * The full-system PC (a real Linux kernel: emulator/system/) as the
 * debugger drives it: the guest's console as text, input typed into its
 * UART, run / pause / step in slices so a front end stays responsive,
 * breakpoints the guest cannot see, and what a stop shows (CPUs with the
 * task on each, registers with the control registers, memory and code
 * through the stopped CPU's page tables, the call stack).
 *
 * Breakpoints never write guest memory (so they cannot collide with
 * Linux's own kprobes, ftrace or text_poke): each is an execute slot of
 * the CPUs' hardware debug unit above the guest's DR0-DR3
 * (system/types.ts SystemCpuDebug; x86: delivery.ts DEBUGGER_SLOT0): the
 * CPU stops before the instruction with a 'debugBreak' event the guest
 * never sees.
 *
 * A guest panic ("Kernel panic - not syncing") stops the machine where it
 * is, with the panic text kept; so does a triple fault. The machine stays
 * inspectable; a continue from there lets the guest do what it asked
 * (panic=-1 resets), which ends the session.
 */
import { linuxEvaluate, type LinuxEvalAnswer } from './linuxEvaluate';
import { loadElf } from '../elf';
import type { ElfImage } from '../elf/types';
import { BootError } from '../system/boot/setupHeader';
import { PcRun, SLICE, type PcRunOptions, type PcRunStop } from '../system/pcRun';
import type { SystemCpuDebug, SystemCpuHandle } from '../system/types';
import { archByName } from '../arch/registry';
import type { ArchOps } from '../arch/types';
import { GuestPages } from './linuxPages';
import type { DisassemblyRow } from './disassembly';
import { childrenOf, type Expandable, type FrameVariable, type FrameVariables, type MemReader } from './variables';
import type { LinuxLaunchSettings } from './linuxLaunch';
import { LinuxTasks } from './linuxTasks';
import { LinuxSources } from './linuxSources';
import { LinuxLineStep } from './linuxStep';
import type { DecodedInsn } from '../arch/types';
import { orcFrames, type LinuxFrame } from './linuxOrc';
import { shownFrames, type LinuxShownFrame } from './linuxFrames';
import type { ScopeAt } from '../elf/dwarf/scopes';
import { setLinuxValue, type LinuxSetTarget } from './linuxSetVariable';
import { perCpuVariables } from './linuxPerCpu';
import { idtrBaseOf, LinuxVmlinux } from './linuxKaslr';
import { LinuxConsole } from './linuxConsole';
import { linuxDataInfo, type LinuxDataInfo, type LinuxDataPlace, type LinuxWatch } from './linuxDataBreakpoints';
import { LinuxBreakpoints, type LinuxBreakpoint, type LinuxBreakpointKind } from './linuxBreakpoints';
import { hex64 } from '../memory/address';
import { linuxDisassemble, linuxFrameVariables, linuxRegisters, PT_REGS_ROWS } from './linuxInspect';
import { GuestKernel } from '../system/guest/guestKernel';
import { LinuxProbeView } from './linuxProbeRows';
import { LinuxAgentProbes, type AgentStop } from './linuxAgentProbes';
import type { HitLog } from '../trace/hitLog';
import { LinuxHits } from './linuxHits';
import type { ProbeStateBody } from './rows';
import { PcTimeTravel } from '../timetravel/pcTimeTravel';
import { LinuxTravelMoves } from './linuxTimeTravel';
import type { LinuxModuleDebug } from './linuxModuleDebug';
import { LinuxModuleLoads } from './linuxModuleLoad';

/** instructions run between looks at the front end (pause, breakpoints changed) */
const CHUNK = 2_000_000;

export type LinuxStopReason = 'pause' | 'breakpoint' | 'function breakpoint' | 'instruction breakpoint' | 'data breakpoint' | 'step' | 'exception' | 'goto';

export interface LinuxStop {
  reason: LinuxStopReason;
  /** the CPU that stopped (thread cpu + 1) */
  cpu: number;
  description: string;
  /** what the guest said (a panic's text) */
  text?: string;
  /** the machine cannot go on (reset, power off, a bus error): a continue ends the session */
  final?: boolean;
  /** the DAP breakpoints that stopped it (a gutter probe's hit) */
  breakpointIds?: number[];
}

/**
 * A stop at a hit of a kprobe the guest's engine registered for the
 * debugger: the CPU stands in the agent's handler; what the debugger shows
 * is the probed context out of the guest's struct pt_regs (the top frame
 * at the probed address, or for a kretprobe at the return address).
 */
export interface ProbeContext { cpu: number; pc: bigint; regs: Map<string, bigint>; hit: AgentStop }

export type LinuxEnd = { kind: 'reset' | 'poweroff' | 'stuck' | 'limit' | 'ended'; detail: string };


export interface LinuxRegister { name: string; value: string }

export class LinuxTarget {
  readonly kind = 'linux';
  readonly run: PcRun;
  /** the vmlinux as linked, then at the running kernel's addresses once the KASLR slide is known (linuxKaslr.ts) */
  private readonly kaslr: LinuxVmlinux;
  get vmlinux(): ElfImage | undefined { return this.kaslr.image; }
  readonly arch: ArchOps;
  private readonly console = new LinuxConsole();
  private readonly chunkListeners: (() => void)[] = [];
  private guestKernel: GuestKernel | undefined;
  private running = false;
  private pauseRequested = false;
  private onStop: ((s: LinuxStop) => void) | null = null;
  private onEnd: ((e: LinuxEnd) => void) | null = null;
  /** address -> the breakpoints there */
  /** the user's breakpoints and data breakpoints in the CPUs' debugger slots, with the target's own addresses */
  private readonly breaks: LinuxBreakpoints = new LinuxBreakpoints(this, () => [
    ...(this.temp ? [this.temp.address] : []),
    ...(this.agentStopAddr !== undefined ? [this.agentStopAddr] : []),
    ...this.moduleLoadHook(),
  ]);
  private lastStop: LinuxStop | null = null;
  private ended = false;
  readonly tasks: LinuxTasks | undefined;
  readonly sources: LinuxSources;
  /** gutter kprobes through the guest's agent module (launch.json "agent"; needs the vmlinux) */
  readonly agentProbes: LinuxAgentProbes | undefined;
  /** the gutter probes' hits (the agent's) and the emulator breakpoints' stops: the hit timeline and latency histograms (linuxHits.ts) */
  private readonly hits = new LinuxHits();
  get hitLog(): HitLog { return this.hits.log; }
  /** agent_stop_point in the guest's agent module: a breakpoint there while a gutter probe is to stop the machine */
  private agentStopAddr: bigint | undefined;
  private agentStopsWanted = false;
  private probeCtx: ProbeContext | null = null;
  /** the Kprobes, Uprobes and Modules views' last rows and the guest probes their actions name */
  private readonly probeView = new LinuxProbeView();
  maxInstructions = Number.MAX_SAFE_INTEGER;
  // ---- time travel
  /** the machine's recording (snapshots + re-execution: timetravel/pcTimeTravel.ts); reverse steps and continues go through it */
  readonly travel: PcTimeTravel;
  // ---- end of time travel
  /** the launch's Kbuild-built modules' DWARF where the guest placed them (linuxModuleDebug.ts; set by launchLinuxTarget) */
  moduleDebug: LinuxModuleDebug | undefined;
  private mods(): LinuxModuleDebug | undefined { this.moduleDebug?.refresh(this.guest, this.run.instructions); return this.moduleDebug; }
  // ---- module loads (linuxModuleLoad.ts)
  private readonly moduleLoads = new LinuxModuleLoads();
  /** called when the guest is about to run a module's init (its code laid out and relocated): module breakpoints are placed then */
  onModuleLoad(l: () => void): void { this.moduleLoads.listen(l); }
  private moduleLoadHook(): bigint[] { return this.moduleLoads.hook(this.moduleDebug, this.vmlinux); }
  /** a launch module's global or static variable by name, as seen from shown frame `k` of `cpu` (linuxModuleDebug.ts) */
  moduleGlobal(cpu: number, k: number, name: string): FrameVariable | undefined {
    const s = this.shownFrames(cpu)[k];
    return this.mods()?.global(name, s?.lookupPc ?? this.pc(cpu), this.memReader(cpu));
  }
  // ---- end of module loads

  constructor(readonly settings: LinuxLaunchSettings, opts: PcRunOptions) {
    let vmlinux: ElfImage | undefined;
    if (settings.vmlinux !== undefined) {
      try { vmlinux = loadElf(settings.vmlinux); } catch (e) { throw new Error(`launch: "vmlinux" ${settings.vmlinux}: ${(e as Error).message}`); }
      if (vmlinux.archName !== 'x86_64') throw new Error(`launch: "vmlinux" ${settings.vmlinux} is built for ${vmlinux.archName}; the full-system PC runs x86_64 kernels`);
    }
    try {
      this.run = new PcRun(opts);
    } catch (e) {
      if (e instanceof BootError || e instanceof RangeError) throw new Error(`launch: ${e.message}`);
      throw e;
    }
    this.kaslr = new LinuxVmlinux(vmlinux);
    // ---- time travel
    this.travel = new PcTimeTravel(this.run);
    this.travel.rearm = () => this.breaks.arm(true);
    this.travel.onMessage = text => this.run.machine.log(text);
    // ---- end of time travel
    this.arch = archByName('x86_64')!;
    this.tasks = vmlinux ? new LinuxTasks(vmlinux) : undefined;
    this.sources = new LinuxSources(settings.vmlinux ?? settings.kernel, settings.sourceMap);
    if (vmlinux && settings.agent !== undefined) {
      const m = this.run.machine;
      const target = this;
      this.agentProbes = new LinuxAgentProbes(m.agent, {
        get vmlinux(): ElfImage { return target.vmlinux!; },
        pages: () => this.pages(m.currentCpu),
        ptRegsOffset: member => this.guest!.layout.off('pt_regs', member),
        kprobeOffset: member => this.guest!.layout.off('kprobe', member),
        task: () => this.tasks?.current(this.pages(m.currentCpu), this.perCpuBase(m.currentCpu)),
        cpu: () => m.currentCpu,
        nowNs: () => m.clock.nowNs(),
        // ---- time travel: a hit's exact place (inside a CPU's slice the run's own count lags; every CPU's retired count does not)
        position: () => ({ g: this.run.cpus.reduce((n, c) => n + (c?.instret ?? 0), 0), cpu: m.currentCpu, instret: this.run.cpus[m.currentCpu]?.instret ?? 0 }),
        replaying: () => m.replay.quiet,
        // ---- end of time travel
      }, this.hits);
      this.agentProbes.onStopsWanted = wanted => { this.agentStopsWanted = wanted; this.findAgentStop(); };
      // ---- time travel: a re-execution passing agent_stop_point takes the stop pending there, as the live run did
      const agent = this.agentProbes;
      this.travel.onReplayBreak = b => { if (b.pc === this.agentStopAddr) agent.stopAt(b.cpu); };
      this.travel.onDiscard = g => agent.discardAfter(g);
      // ---- end of time travel
    } else this.travel.onDiscard = g => { this.hits.discardAfter(g); };
    this.run.machine.onConsole(b => this.console.put(b));
  }

  // ---- console

  /** the guest's console output, as it is printed (in pieces of whole bytes) */
  onConsole(l: (text: string) => void): void { this.console.onText(l); }
  onMachineLog(l: (line: string) => void): void { this.run.machine.onLog(l); }
  /** characters typed at the guest's UART (taken when the machine runs) */
  typeInput(text: string): void { this.travel.mutating('typed input'); this.run.machine.consoleInput(new TextEncoder().encode(text)); }

  // ---- run control

  get isRunning(): boolean { return this.running; }
  get stopped(): LinuxStop | null { return this.running ? null : this.lastStop; }

  /** the listeners of the run: a stop (inspectable) or the end of the machine */
  setRunListeners(onStop: (s: LinuxStop) => void, onEnd: (e: LinuxEnd) => void): void {
    this.onStop = onStop;
    this.onEnd = onEnd;
  }

  /** run until a breakpoint, a pause, a panic or the machine's end (reported to the run listeners) */
  resume(): void {
    if (this.running || this.ended) return;
    if (this.lastStop?.final) { this.finish({ kind: 'ended', detail: this.lastStop.description }); return; }
    this.prepareResume();
    this.running = true;
    this.pauseRequested = false;
    setImmediate(this.chunk);
  }

  pause(): void { if (this.running) this.pauseRequested = true; }

  /** one instruction of every running CPU (all-stop, as gdb on QEMU); ends with a 'step' stop */
  stepInstruction(cpu: number): void {
    if (!this.canStep()) return;
    // from a stop at a guest kprobe's hit: the probed context's instruction (linuxStep.ts)
    if (this.probeCtx?.cpu === cpu) { new LinuxLineStep(this, cpu, 'instruction').start(); return; }
    const stop = this.singleStep();
    if (stop === null) this.report({ reason: 'step', cpu, description: 'Stepped one instruction' });
    else this.handleStop(stop);
  }

  /** a source-line step of `cpu` (linuxStep.ts); the other CPUs run along */
  stepLine(cpu: number, kind: 'in' | 'over' | 'out'): void {
    if (!this.canStep()) return;
    new LinuxLineStep(this, cpu, kind).start();
  }

  private canStep(): boolean {
    if (this.running || this.ended) return false;
    if (this.lastStop?.final) { this.finish({ kind: 'ended', detail: this.lastStop.description }); return false; }
    return true;
  }

  /** one instruction of every running CPU: null when it ran (or stopped at a breakpoint address), else the stop that ended it */
  singleStep(cpu = this.lastStop?.cpu ?? 0): PcRunStop | null {
    this.prepareResume();
    const r = this.run;
    r.stop = null;
    const h = r.cpus[cpu];
    // the other CPUs run along as the run loop schedules them (at most a round of slices each)
    const stop = h ? this.travel.runForward(r.instructions + 2 * SLICE * r.cpus.length, () => this.until(), { cpu, instret: h.instret + 1 })
      : this.travel.runForward(r.instructions + 1, () => this.until());
    this.console.flush();
    if (stop.kind === 'debugBreak' && h && this.moduleLoads.at(h.pc())) this.moduleLoads.loaded();
    return stop.kind === 'limit' || stop.kind === 'debugBreak' ? null : stop;
  }

  /** a step's temporary breakpoint: when `cpu` reaches it, onHit decides (true: the step goes on from there) */
  private temp: { address: bigint; cpu: number; onHit: () => void } | null = null;

  /** run until `cpu` reaches `address` (a step's temporary breakpoint), then onHit; other stops end the step as usual */
  runTo(cpu: number, address: bigint, onHit: () => void): void {
    this.temp = { address, cpu, onHit };
    this.breaks.arm(true);
    this.running = true;
    this.pauseRequested = false;
    this.prepareResume();
    setImmediate(this.chunk);
  }

  /** a step's end (or a stop it ran into): the front end's stop */
  stepDone(cpu: number, description: string, stop?: PcRunStop): void {
    if (stop) this.handleStop(stop);
    else this.report({ reason: 'step', cpu, description });
  }

  /** decoded instruction at `pc` through `cpu`'s page tables */
  instructionAt(cpu: number, pc: bigint): DecodedInsn | undefined {
    const bytes = this.pages(cpu).read(pc, this.arch.maxInsnLength);
    try { return bytes.length > 0 ? this.arch.decodeBytes(bytes, pc) ?? undefined : undefined; } catch { return undefined; }
  }

  /** the CPUs leave the debugger's event; one sitting on a breakpoint runs its instruction first (resume flag) */
  private prepareResume(): void {
    this.probeCtx = null;
    for (const h of this.run.cpus) if (h !== null) h.debug.resume(this.breaks.has(h.pc()) || this.temp?.address === h.pc() || this.agentStopAddr === h.pc() || this.moduleLoads.at(h.pc()));
    this.run.stop = null;
  }

  /** agent_stop_point's address in the live kprobe_agent module (the guest's module symbols), armed while a gutter probe stops */
  private findAgentStop(): void {
    let addr: bigint | undefined;
    if (this.agentStopsWanted) {
      try {
        const mod = this.guest?.snapshot().modules.find(m => m.name === 'kprobe_agent' && m.state === 'live');
        addr = mod?.symbols().find(x => x.name === 'agent_stop_point' && x.defined)?.value;
      } catch { addr = undefined; }
    }
    if (addr === this.agentStopAddr) return;
    this.agentStopAddr = addr;
    this.breaks.arm(true);
  }

  /** the CPU reached agent_stop_point: a stop at the probed context, or (no stopping hit pending) on it goes */
  private agentStop(cpu: number, reason?: 'goto', seq = 0, shown?: AgentStop): void {
    const hit = shown ?? this.agentProbes?.stopAt(cpu);
    if (!hit) { this.running = true; this.prepareResume(); setImmediate(this.chunk); return; }
    const pages = this.pages(cpu);
    const regs = new Map<string, bigint>();
    for (const m of [...Object.values(PT_REGS_ROWS), 'ip', 'orig_ax']) {
      const v = pages.read64(hit.regs + this.guest!.layout.off('pt_regs', m));
      if (v !== undefined) regs.set(m, v);
    }
    const pc = hit.kind === 'return' ? regs.get('ip') ?? hit.at : hit.at;
    this.probeCtx = { cpu, pc, regs, hit };
    // ---- time travel: go to hit shows the hit's probed context as this stop does
    if (reason === 'goto') { this.report({ reason, cpu, description: `Hit ${seq} of ${hit.symbol}+0x${hit.offset.toString(16)} (${hit.kind === 'return' ? 'kretprobe return' : 'kprobe'} registered by the guest's kprobes)`, breakpointIds: [hit.bpId] }); return; }
    // ---- end of time travel
    const fn = hit.symbol;
    const description = hit.kind === 'return'
      ? `return from ${fn} = 0x${hex64(regs.get('ax') ?? 0n)} to ${this.where(pc)} (kretprobe registered by the guest's kprobes)`
      : `breakpoint at ${fn}${hit.offset ? `+0x${hit.offset.toString(16)}` : ''} (kprobe registered by the guest's kprobes)`;
    this.report({ reason: 'breakpoint', cpu, description, breakpointIds: [hit.bpId] });
  }

  private readonly chunk = (): void => {
    if (!this.running) return;
    const r = this.run;
    r.stop = null;
    let stop: PcRunStop;
    try {
      stop = this.travel.runForward(Math.min(this.maxInstructions, r.instructions + CHUNK), () => this.until());
    } catch (e) {
      this.console.flush();
      this.running = false;
      this.finish({ kind: 'ended', detail: `the machine failed: ${(e as Error).message}` });
      return;
    }
    this.console.flush();
    if (stop.kind === 'limit' && r.instructions < this.maxInstructions && !this.console.panicked && !this.pauseRequested) {
      if (this.agentStopsWanted && this.agentStopAddr === undefined) this.findAgentStop();
      for (const l of this.chunkListeners) l();
      setImmediate(this.chunk);
      return;
    }
    this.running = false;
    this.handleStop(stop);
  };

  /** checked by the run loop after each round of CPU slices */
  private until(): PcRunStop | null {
    this.breaks.arm();
    if (this.kaslr.slide === undefined && this.kaslr.linked) this.kaslrSlide();
    if (this.console.panicPending) return { kind: 'done', detail: 'panic' };
    if (this.pauseRequested) return { kind: 'done', detail: 'pause' };
    return null;
  }

  private handleStop(stop: PcRunStop): void {
    const cpu = stop.kind === 'debugBreak' ? stop.cpu ?? 0 : this.run.machine.currentCpu;
    if (this.console.panicPending) {
      const text = this.console.takePanic();
      const final = stop.kind === 'reset' || stop.kind === 'poweroff';
      this.report({ reason: 'exception', cpu, description: `The guest panicked: ${text.split('\n')[0].trim()}`, text, final });
      return;
    }
    switch (stop.kind) {
      case 'debugBreak': {
        const h = this.run.cpus[cpu];
        // a data breakpoint (linuxDataBreakpoints.ts): the access is done, the CPU is past it
        if (stop.detail.startsWith('a debugger watchpoint')) { this.breakHit(cpu, 'watchpoint', { reason: 'data breakpoint', cpu, description: this.breaks.watchHit(stop.detail) }); return; }
        if (h && this.agentStopAddr !== undefined && h.pc() === this.agentStopAddr && !this.breaks.has(h.pc())) { this.agentStop(cpu); return; }
        // a module's init is next (do_init_module): its breakpoints are placed, on it goes (unless a breakpoint or a step wants this address)
        if (h && this.moduleLoads.at(h.pc())) {
          this.moduleLoads.loaded();
          if (!this.breaks.has(h.pc()) && this.temp?.address !== h.pc()) { this.running = true; this.prepareResume(); setImmediate(this.chunk); return; }
        }
        const t = this.temp;
        if (t && h && h.pc() === t.address && !this.breaks.has(t.address)) {
          // a step's own breakpoint: the step decides (another CPU reaching it just goes on)
          if (cpu === t.cpu) { t.onHit(); return; }
          this.running = true; this.prepareResume(); setImmediate(this.chunk); return;
        }
        const bp = h ? this.breaks.at(h.pc()) : undefined;
        this.breakHit(cpu, 'breakpoint', { reason: bp?.kind === 'function' ? 'function breakpoint' : bp?.kind === 'instruction' ? 'instruction breakpoint' : 'breakpoint', cpu, description: `Breakpoint at ${bp?.label ?? this.where(h?.pc() ?? 0n)}` });
        return;
      }
      case 'done': this.report({ reason: 'pause', cpu, description: 'Paused' }); return;
      case 'limit': this.report({ reason: 'pause', cpu, description: `Paused after ${this.run.instructions} instructions` }); return;
      case 'tripleFault': case 'busError': case 'unsupported':
        this.report({ reason: 'exception', cpu, description: `The guest ${stop.kind === 'tripleFault' ? 'triple-faulted' : 'stopped'}: ${stop.detail}`, text: stop.detail, final: true });
        return;
      default: this.finish({ kind: stop.kind, detail: stop.detail });
    }
  }

  private report(s: LinuxStop): void {
    this.running = false;
    // a step's temporary breakpoint ends with the step (a breakpoint or a pause may end it first)
    if (this.temp) { this.temp = null; this.breaks.arm(true); }
    this.lastStop = s;
    this.onStop?.(s);
  }

  private finish(e: LinuxEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.running = false;
    this.onEnd?.(e);
  }

  /** the machine is dropped (terminate / disconnect) */
  dispose(): void { this.running = false; this.ended = true; }

  // ---- time travel: emulator/debug/linuxTimeTravel.ts (LinuxTravelMoves)
  /** CPU `cpu` one instruction back (the others as they were then); undefined, or why not. The stop follows. */
  stepBack(cpu: number): string | undefined { return this.moves.stepBack(cpu); }
  /** back to the previous stop of a breakpoint, function, instruction or data breakpoint set now, or a stopping agent hit, else the oldest point kept; the stop follows */
  reverseContinue(): string | undefined { return this.moves.reverseContinue(); }
  /** the timeline's hit `seq` (an agent hit, or an emulator breakpoint's stop): the machine there, the hit's stop shown; undefined, or why not. The stop follows. */
  goToHit(seq: number): string | undefined { return this.moves.goToHit(seq); }
  private readonly moves = new LinuxTravelMoves({
    travel: () => this.travel, hits: this.hits,
    agent: () => this.agentProbes,
    busy: () => this.running || this.ended,
    stopsAt: b => (b.pc === this.agentStopAddr && !this.breaks.has(b.pc) ? this.agentProbes?.pendingStop(b.cpu) !== undefined : this.breaks.has(b.pc)),
    moved: line => { this.run.machine.log(line); this.probeCtx = null; },
    report: s => this.report(s),
    reportBreak: (cpu, detail) => this.handleStop({ kind: 'debugBreak', detail, cpu }),
    reportAgentHit: (cpu, seq, stop) => this.agentStop(cpu, 'goto', seq, stop),
  });

  /** an emulator breakpoint's or data breakpoint's stop, into the hit log (once: not when met again after going back), then reported */
  private breakHit(cpu: number, kind: 'breakpoint' | 'watchpoint', stop: LinuxStop): void {
    const h = this.run.cpus[cpu];
    if (h) {
      const place = { g: this.run.cpus.reduce((n, c) => n + (c?.instret ?? 0), 0), cpu, instret: h.instret };
      const seq = this.hits.take(place, 'breakpoint', stop.description);
      if (seq !== undefined) {
        const task = this.tasks?.current(this.pages(cpu), this.perCpuBase(cpu));
        const pc = h.pc();
        this.hits.log.hit(seq, place.g, Number(this.run.machine.clock.nowNs()), cpu, task?.pid ?? 0, task?.comm ?? '', kind, 0, this.where(pc), pc, NaN);
      }
    }
    this.report(stop);
  }

  // ---- end of time travel

  /** called between two run chunks while the machine runs (a front end's throttled refresh) */
  onChunk(l: () => void): void { this.chunkListeners.push(l); }

  // ---- the guest's own probes, modules and uprobes (emulator/system/guest/)

  /** the guest kernel's state reader (the vmlinux's DWARF types over the machine's memory); undefined without a vmlinux */
  get guest(): GuestKernel | undefined {
    if (!this.vmlinux) return undefined;
    return (this.guestKernel ??= new GuestKernel(this.vmlinux, this.run.machine.memory));
  }

  /** the Kprobes, Uprobes and Modules views' rows read from guest memory now (linuxProbeRows.ts) */
  probeRows(): ProbeStateBody { return this.probeView.rows(this.guest, this.agentProbes); }
  /** the Kprobes view's action on a row through the guest's agent (linuxProbeRows.ts); why not, or undefined */
  probeAction(id: number, op: 'enable' | 'disable' | 'unregister', done: (result: number) => void): string | undefined { return this.probeView.action(this.agentProbes, id, op, done); }
  /** /sys/kernel/debug/kprobes/enabled or the sysctl debug.kprobes-optimization written by the guest's agent */
  probeKnob(which: 'enabled' | 'optimization', value: boolean, done: (result: number) => void): string | undefined { return this.probeView.knob(this.agentProbes, which, value, done); }

  // ---- breakpoints (no guest byte written)

  /** the address of a function of the vmlinux, or why not */
  functionAddress(name: string): bigint | string { return this.breaks.functionAddress(name); }

  /** replace the breakpoints of `group` (a kind, or a source file); per request the breakpoint or why not (linuxBreakpoints.ts) */
  setBreakpoints(kind: LinuxBreakpointKind, group: string, wanted: readonly { addresses: bigint[] | string; label: string }[]): (LinuxBreakpoint | string)[] {
    return this.breaks.setBreakpoints(kind, group, wanted);
  }

  /** the addresses of a source line, or why not (linuxBreakpoints.ts) */
  lineAddresses(clientPath: string, line: number): { addresses: bigint[]; line: number } | string {
    const r = this.breaks.lineAddresses(clientPath, line);
    return typeof r === 'string' ? this.mods()?.lineAddresses(this.sources.dwarfCandidates(clientPath), line) ?? r : r;
  }

  // ---- what a stop shows

  /** CPUs that run (an AP not started yet has no thread) */
  cpuIds(): number[] { return this.run.cpus.flatMap((c, i) => (c === null ? [] : [i])); }

  private handle(cpu: number): SystemCpuHandle {
    const h = this.run.cpus[cpu];
    if (!h) throw new Error(`no CPU ${cpu}`);
    return h;
  }

  pc(cpu: number): bigint { return this.handle(cpu).pc(); }
  reg(cpu: number, n: number): bigint { return this.handle(cpu).reg(n); }

  /** the stopped CPU's address space (its CR3) */
  pages(cpu: number): GuestPages {
    return new GuestPages(this.run.machine.memory, this.handle(cpu).debug.pageTableRoot());
  }

  /** "CPU 0: sh [57]" from current_task when the vmlinux is known, else "CPU 0" */
  threadName(cpu: number): string {
    const t = this.tasks?.current(this.pages(cpu), this.perCpuBase(cpu));
    return t ? `CPU ${cpu}: ${t.comm} [${t.pid}]` : `CPU ${cpu}`;
  }

  /** the CPU's per-CPU area (GS base in the kernel; the swapped one while user GS is live) */
  perCpuBase(cpu: number): bigint { return this.handle(cpu).debug.perCpuBase(); }

  registers(cpu: number): LinuxRegister[] { return linuxRegisters(this, cpu); }

  /** CPU `cpu`'s debug unit (registers, page-table root, slots) */
  cpuDebug(cpu: number): SystemCpuDebug { return this.handle(cpu).debug; }

  /** the probed context when CPU `cpu` is stopped at a gutter probe's hit, else null */
  probeContext(cpu: number): ProbeContext | null { return this.probeCtx?.cpu === cpu ? this.probeCtx : null; }

  /** symbol+0xoff of an address (the vmlinux's symbols), else its hex value */
  where(addr: bigint): string {
    const m = this.mods()?.where(addr);
    if (m) return m;
    const r = this.vmlinux?.symbols.resolve(addr);
    if (!r) return `0x${hex64(addr)}`;
    return r.offset === 0n ? r.sym.name : `${r.sym.name}+0x${r.offset.toString(16)}`;
  }

  /** the call stack of a stopped CPU: through Linux's ORC tables when the vmlinux has them, else the top frame */
  frames(cpu: number): LinuxFrame[] {
    const h = this.handle(cpu);
    const ctx = this.probeCtx?.cpu === cpu ? this.probeCtx : null;
    const regs = ctx ? { rip: ctx.pc, rsp: ctx.regs.get('sp') ?? 0n, rbp: ctx.regs.get('bp') ?? 0n } : { rip: h.pc(), rsp: h.reg(4), rbp: h.reg(5) };
    const pages = this.pages(cpu);
    const walked = this.vmlinux ? this.mods()?.frames(regs, a => pages.read64(a)) ?? orcFrames(this.vmlinux, regs, a => pages.read64(a)) : [{ pc: regs.rip, sp: regs.rsp }];
    return walked;
  }

  // ---- source level (inlined frames: linuxFrames.ts)
  /** the call stack as shown: the ORC frames with the calls inlined at each pc first (gdb's inline frames) */
  shownFrames(cpu: number): LinuxShownFrame[] {
    const r = this.lastStop?.reason;
    return shownFrames(this, this.frames(cpu), r === 'breakpoint' || r === 'instruction breakpoint' || (r === 'goto' && (this.probeCtx?.cpu === cpu || this.moves.atBreakpoint)));
  }

  /** the parameters and locals of shown frame `k` (an inlined call's own) */
  shownFrameVariables(cpu: number, k: number): FrameVariables {
    const s = this.shownFrames(cpu)[k];
    if (!s) return { ok: false, reason: `no frame ${k}` };
    return this.frameVariables(cpu, s.physical, { inlineDepth: s.inlineDepth, skipInlineEntry: s.skipInlineEntry });
  }
  /** the debugger's change of a register, a frame's variable or a shown member (linuxSetVariable.ts); the new value as shown, or throws why not */
  setValue(at: LinuxSetTarget, name: string, value: string): string { this.travel.mutating(`a change of ${name}`); return setLinuxValue(this, at, name, value); }
  /** CPU `cpu`'s per-CPU variables (all, or those named), or why none (linuxPerCpu.ts) */
  perCpu(cpu: number, only?: readonly string[]): FrameVariable[] | string { return perCpuVariables(this, cpu, only); }

  /** the kernel's KASLR slide once it has loaded its IDT (linuxKaslr.ts; 0 with nokaslr), else undefined; found, the vmlinux is seen moved by it */
  kaslrSlide(): bigint | undefined {
    const h = this.run.cpus[0];
    if (this.kaslr.slide !== undefined || !h) return this.kaslr.slide;
    return this.kaslr.follow(idtrBaseOf(h.debug.registers()) ?? 0n, (k, beforeSlide) => {
      this.guestKernel = undefined;
      this.agentProbes?.relocate(x => k.toRuntime(x));
      return this.breaks.relocate(x => k.toRuntime(x), beforeSlide);
    });
  }

  /** the line the session prints once the kernel runs relocated (empty without KASLR) */
  kaslrMessage(): string { return this.kaslr.message; }

  /** what a data breakpoint on `name` there would watch (DAP dataBreakpointInfo) */
  dataInfo(at: LinuxDataPlace, name: string, asAddress?: { bytes: number }): LinuxDataInfo { return linuxDataInfo(this, at, name, asAddress); }

  /** replace the data breakpoints (dataIds from linuxDataInfo); per request the watch or why not (linuxBreakpoints.ts) */
  setWatchpoints(wanted: readonly { dataId: string; accessType?: 'read' | 'write' | 'readWrite'; label?: string }[]): (LinuxWatch | string)[] {
    return this.breaks.setWatchpoints(wanted);
  }
  // ---- end of source level

  /** `len` bytes of guest memory at `addr` through CPU `cpu`'s page tables (shorter: unreadable from there on) */
  readMemory(cpu: number, addr: bigint, len: number): Uint8Array { return this.pages(cpu).read(addr, len); }

  /** the debugger's own write (writeMemory): false when not all of it is mapped RAM */
  writeMemory(cpu: number, addr: bigint, data: Uint8Array): boolean { this.travel.mutating('a memory write'); return this.pages(cpu).write(addr, data); }

  /** Disassembly rows around `base` through CPU `cpu`'s page tables (linuxInspect.ts) */
  disassemble(cpu: number, base: bigint, insnOffset: number, count: number): DisassemblyRow[] { return linuxDisassemble(this, cpu, base, insnOffset, count); }

  /** the DWARF source line of an address (the vmlinux's line table) */
  sourceLine(addr: bigint): { file: string; line: number; column: number } | undefined {
    try { return this.mods()?.lineForAddress(addr) ?? this.vmlinux?.lines?.lineForAddress(addr); } catch { return undefined; }
  }

  /** the DWARF an address's scopes are read from: a matched module's (relocated), else the vmlinux's */
  debugImage(addr: bigint): ElfImage | undefined { return this.mods()?.debugImage(addr) ?? this.vmlinux; }

  /** guest memory through CPU `cpu`'s page tables as the DWARF variables code reads it */
  memReader(cpu: number): MemReader {
    const pages = this.pages(cpu);
    return (addr, size) => { const b = pages.read(addr, size); return b.length === size ? b : undefined; };
  }

  /** the parameters and locals of frame `k` of a stopped CPU (linuxInspect.ts) */
  frameVariables(cpu: number, k: number, at: ScopeAt = {}): FrameVariables { return linuxFrameVariables(this, cpu, k, at); }

  /** the members of a struct / array / pointed-to struct shown in a frame's variables */
  children(cpu: number, x: Expandable): FrameVariable[] { return childrenOf(x, this.memReader(cpu)); }
  // ---- C expressions (linuxEvaluate.ts)
  /** a C expression in shown frame `k` of a stopped CPU: its value as the Debug Console shows it, or why not */
  evaluate(cpu: number, k: number, expr: string): LinuxEvalAnswer { return linuxEvaluate(this, cpu, k, expr); }
  // ---- end of C expressions
}
