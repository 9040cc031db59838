/**
 * The kprobe debug adapter: DAP <-> Machine. Owns no emulation logic.
 *
 *   threads      = CPUs ("CPU 0: init [1]"), ids cpu+1
 *   output       = printk lines (Debug Console)
 *   stackTrace   = frame-pointer walk + DWARF lines
 *   scopes       = Registers (writable) per frame; Probe at a breakpoint stop
 *   evaluate     = handler-language expressions over the stopped CPU
 *   next/stepIn/stepOut = source lines of the selected CPU (adapter/stepper.ts)
 *   restart      = a new machine with the same launch arguments and breakpoints
 *   read/writeMemory, disassemble (symbol+0xoff)
 *   _probe* custom requests/events (adapter/dapCustom.ts)
 */
import * as path from 'node:path';
import {
  InitializedEvent, LoggingDebugSession, OutputEvent, Scope, Source, StackFrame, StoppedEvent,
  TerminatedEvent, Thread, ExitedEvent, Event as DapEvent,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { loadElf } from '../emulator/elf/elfFile';
import { Machine } from '../emulator/machine';
import { PrintkRecord } from '../emulator/kernel/types';
import { readMemory, writeMemory } from './memoryAccess';
import { KprobeLaunchArgs, ProbeEvent, ProbeRequest, ProbeStateBody } from './dapCustom';
import { disassemble, formatAddress } from './disassemble';
import { MachineRunner, RunnerStop } from './machineRunner';
import { registerVariables, setRegister } from './registers';
import { SourceMap } from './sourceMap';
import { BREAKPOINT_MODES, ProbeBridge } from './probeBridge';
import { walkFrames } from '../emulator/probes';
import type { BreakpointHit } from '../emulator/probes';
import { fixupStackTrace } from '../emulator/kprobes';
import { evaluateForDap } from './evaluateRequest';
import { PROBE_SCOPE_NAME, probeScopeVariables } from './probeScope';
import type { ProbeStop } from './stoppedEnv';
import { StepKind, StepRun, StepRunEnd, Stepper } from './stepper';
import { BreakpointEvent } from '@vscode/debugadapter';

type LaunchRequestArgs = DebugProtocol.LaunchRequestArguments & Partial<KprobeLaunchArgs>;

/** How often hit counters are pushed to the views while the kernel runs. */
const STATE_INTERVAL_MS = 250;

/** variablesReference / frameId encoding: (cpu + 1) * FRAME_STRIDE + frame index */
const FRAME_STRIDE = 1000;
/** variablesReference of a CPU's Probe scope: PROBE_SCOPE_BASE + cpu */
const PROBE_SCOPE_BASE = 1_000_000;

export class KprobeSession extends LoggingDebugSession {
  private machine: Machine | undefined;
  private runner: MachineRunner | undefined;
  private sources: SourceMap | undefined;
  private configurationDone!: Promise<void>;
  private markConfigured!: () => void;
  private stopOnEntry = false;
  private ended = false;
  private readonly disposers: (() => void)[] = [];
  private probes: ProbeBridge | undefined;
  private stateTimer: NodeJS.Timeout | undefined;
  private statePending = false;
  /** per CPU: the pc to show for frame 0 while the CPU has not moved since a breakpoint stop */
  private readonly reportPc = new Map<number, { cpuPc: bigint; pc: bigint }>();
  /** per CPU: the breakpoint probe it stopped at, valid while the CPU has not moved */
  private readonly probeStops = new Map<number, { cpuPc: bigint; stop: ProbeStop }>();
  /** the step in progress (chunks on the event loop) */
  private stepping: StepRun | undefined;
  private launchArgs: LaunchRequestArgs | undefined;
  /** thread of the last stop (evaluate without a frame) */
  private lastStoppedThread = 1;

  constructor() {
    super();
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
    this.configurationDone = new Promise(r => { this.markConfigured = r; });
  }

  // ---- lifecycle ------------------------------------------------------------------

  protected override initializeRequest(response: DebugProtocol.InitializeResponse): void {
    response.body = {
      ...response.body,
      supportsConfigurationDoneRequest: true,
      supportsSetVariable: true,
      supportsReadMemoryRequest: true,
      supportsWriteMemoryRequest: true,
      supportsDisassembleRequest: true,
      supportsInstructionBreakpoints: true,
      supportsFunctionBreakpoints: true,
      supportsConditionalBreakpoints: true,
      supportsHitConditionalBreakpoints: true,
      supportsLogPoints: true,
      breakpointModes: BREAKPOINT_MODES,
      supportsTerminateRequest: true,
      supportsRestartRequest: true,
      supportsSteppingGranularity: true,
      supportsEvaluateForHovers: true,
    };
    this.sendResponse(response);
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.markConfigured();
    this.sendResponse(response);
  }

  protected override async launchRequest(response: DebugProtocol.LaunchResponse, args: LaunchRequestArgs): Promise<void> {
    let m: Machine;
    try {
      m = this.boot(args);
    } catch (e) {
      this.sendErrorResponse(response, { id: 1001, format: `kprobe: ${errorText(e)}`, showUser: true });
      return;
    }
    this.launchArgs = args;
    this.sendResponse(response);
    this.attachMachine(m, args);
    // Breakpoints come now (setBreakpoints...), then configurationDone.
    this.sendEvent(new InitializedEvent());
    await this.configurationDone;
    if (this.ended) return;
    if (this.stopOnEntry) {
      this.scheduleFirstTasks(m);
      this.sendEvent(stopped('entry', 1, 'Stopped at the image entry point'));
    }
    else this.runner?.resume();
  }

  /** Make m the session's machine: runner, probes (launch probe files), printk output, state timer. */
  private attachMachine(m: Machine, args: LaunchRequestArgs): void {
    this.machine = m;
    this.sources = new SourceMap(m.image.path);
    this.disposers.push(m.onPrintk(r => this.printk(r)));
    this.runner = new MachineRunner(m, s => this.onRunnerStop(s));
    this.stopOnEntry = !!args.stopOnEntry;
    this.probes = new ProbeBridge(m, this.sources, () => this.scheduleProbeState());
    this.probes.setOptimization(args.kprobesOptimization ?? true);
    this.output(`kprobe: booting ${m.image.path} (${m.arch.name}, ${m.cpus.length} CPU${m.cpus.length > 1 ? 's' : ''})\n`, 'console');
    for (const file of args.probes ?? []) {
      for (const line of this.probes.addProbeFile(path.resolve(file))) this.output(line + '\n', 'console');
    }
    this.stateTimer = setInterval(() => { if (this.probes?.takeDirty()) this.sendProbeState(); }, STATE_INTERVAL_MS);
    this.stateTimer.unref();
    this.sendProbeState();
  }

  /** Stop and drop the current machine (restart): runner, step, timer, listeners; the session goes on. */
  private detachMachine(): void {
    this.cancelStep();
    this.runner?.dispose();
    if (this.stateTimer) clearInterval(this.stateTimer);
    this.stateTimer = undefined;
    for (const d of this.disposers.splice(0)) d();
    this.reportPc.clear();
    this.probeStops.clear();
  }

  /**
   * restart: boot a new machine from the same launch arguments (or the ones
   * the client sends), register the launch probe files and every breakpoint
   * again (same ids, `breakpoint` changed events), then stop at the entry or
   * run, as at launch.
   */
  protected override restartRequest(response: DebugProtocol.RestartResponse, args: DebugProtocol.RestartArguments): void {
    const prev = this.launchArgs;
    if (!prev || !this.probes || this.ended) return this.sendErrorResponse(response, { id: 1014, format: 'kprobe: nothing to restart (not launched)' });
    const fresh = args?.arguments && 'program' in args.arguments ? args.arguments as LaunchRequestArgs : prev;
    let m: Machine;
    try {
      m = this.boot(fresh);
    } catch (e) {
      return this.sendErrorResponse(response, { id: 1001, format: `kprobe: restart: ${errorText(e)}`, showUser: true });
    }
    const records = this.probes.breakpointRecords();
    this.detachMachine();
    this.launchArgs = fresh;
    this.output('kprobe: restarting\n', 'console');
    this.attachMachine(m, fresh);
    const restored = this.probes.restoreBreakpoints(records);
    this.sendResponse(response);
    for (const b of restored.breakpoints) this.sendEvent(new BreakpointEvent('changed', this.clientBreakpoint(b)));
    if (restored.moved.length) this.output(`kprobe: breakpoint ids ${restored.moved.join(', ')} could not be kept after the restart\n`, 'console');
    this.sendProbeState();
    if (this.stopOnEntry) {
      this.scheduleFirstTasks(m);
      this.lastStoppedThread = 1;
      this.sendEvent(stopped('entry', 1, 'Stopped at the image entry point (restarted)'));
    } else {
      this.runner?.resume();
    }
  }

  /** A breakpoint from the bridge with client line numbers and paths. */
  private clientBreakpoint(b: DebugProtocol.Breakpoint): DebugProtocol.Breakpoint {
    const out = { ...b };
    if (out.line !== undefined) out.line = this.convertDebuggerLineToClient(out.line);
    if (out.source?.path) out.source = { ...out.source, path: this.convertDebuggerPathToClient(out.source.path) };
    return out;
  }

  /**
   * Put each CPU's first queued task on it, exactly what the machine's first
   * turn on that CPU does, so a stop at the entry point shows task 1 and its
   * registers (pc = e_entry) instead of an idle CPU.
   */
  private scheduleFirstTasks(m: Machine): void {
    const k = m.kernel;
    m.cpus.forEach((_, c) => {
      if (!k.current(c) && k.sched.hasWork(c)) k.sched.schedule(c);
    });
  }

  private boot(args: LaunchRequestArgs): Machine {
    const program = args.program;
    if (typeof program !== 'string' || program === '') throw new Error('launch: "program" must name a kernel ELF image');
    const cpus = args.cpus ?? 2;
    if (!Number.isInteger(cpus) || cpus < 1 || cpus > 64) throw new Error(`launch: "cpus" must be an integer from 1 to 64, got ${JSON.stringify(args.cpus)}`);
    const maxInstructions = args.maxInstructions ?? 0;
    if (!Number.isSafeInteger(maxInstructions) || maxInstructions < 0) {
      throw new Error(`launch: "maxInstructions" must be a non-negative integer, got ${JSON.stringify(args.maxInstructions)}`);
    }
    const image = loadElf(path.resolve(program)); // ImageError names the file and the problem
    return new Machine(image, { cpus, maxInstructions });
  }

  protected override disconnectRequest(response: DebugProtocol.DisconnectResponse): void {
    this.stopMachine();
    this.sendResponse(response);
    this.shutdown(); // exits the process in stdio mode, nothing in server mode
  }

  protected override terminateRequest(response: DebugProtocol.TerminateResponse): void {
    this.sendResponse(response);
    this.end();
  }

  /** Stop the machine and drop listeners (disconnect, terminate, SIGTERM). */
  stopMachine(): void {
    this.ended = true;
    this.markConfigured();
    this.cancelStep();
    this.runner?.dispose();
    if (this.stateTimer) clearInterval(this.stateTimer);
    this.stateTimer = undefined;
    for (const d of this.disposers.splice(0)) d();
  }

  private end(exitCode?: number): void {
    if (this.ended) return;
    this.stopMachine();
    if (exitCode !== undefined) this.sendEvent(new ExitedEvent(exitCode));
    this.sendEvent(new TerminatedEvent());
  }

  // ---- running ----------------------------------------------------------------------

  protected override continueRequest(response: DebugProtocol.ContinueResponse): void {
    response.body = { allThreadsContinued: true };
    this.sendResponse(response);
    this.cancelStep();
    this.forgetStops();
    this.runner?.resume();
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    this.sendResponse(response);
    if (this.stepping) this.stepping.pause();
    else if (this.runner?.running) this.runner.pause();
    else if (this.machine && !this.ended) this.sendEvent(stopped('pause', this.lastStoppedThread, 'Paused'));
  }

  protected override nextRequest(response: DebugProtocol.NextResponse, args: DebugProtocol.NextArguments): void {
    this.step(response, args.threadId, args.granularity === 'instruction' ? 'instruction' : 'over');
  }

  protected override stepInRequest(response: DebugProtocol.StepInResponse, args: DebugProtocol.StepInArguments): void {
    this.step(response, args.threadId, args.granularity === 'instruction' ? 'instruction' : 'in');
  }

  protected override stepOutRequest(response: DebugProtocol.StepOutResponse, args: DebugProtocol.StepOutArguments): void {
    this.step(response, args.threadId, 'out');
  }

  private forgetStops(): void {
    this.reportPc.clear();
    this.probeStops.clear();
  }

  private cancelStep(): void {
    this.stepping?.cancel();
    this.stepping = undefined;
  }

  /**
   * A step of the selected CPU (the other CPUs stay stopped): one
   * instruction, or source-line stepping per adapter/stepper.ts, run in
   * chunks so pause is answered; ends with a `step` stop (or the stop that
   * interrupted it: a breakpoint, the end of the machine).
   */
  private step(response: DebugProtocol.Response, threadId: number, kind: StepKind): void {
    const m = this.machine;
    if (!m) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    const cpuIndex = threadId - 1;
    const cpu = m.cpus[cpuIndex];
    if (!cpu) return this.sendErrorResponse(response, { id: 1003, format: `kprobe: no CPU for thread ${threadId}` });
    if (this.runner?.running || this.stepping) return this.sendErrorResponse(response, { id: 1015, format: 'kprobe: the machine is running; pause it before stepping' });
    const rep = this.reportPc.get(cpuIndex);
    const pc = rep && rep.cpuPc === cpu.getPc() ? rep.pc : cpu.getPc();
    const engine = this.probes?.mgr.engine;
    const readCode = (a: bigint, n: number): Uint8Array => engine ? engine.readTextWithoutProbes(m.kernel.mem, a, n) : m.kernel.mem.readBytes(Number(BigInt.asIntN(64, a)), n);
    const returnAddress = kind === 'out' ? this.frames(m, cpuIndex)[1]?.pc : undefined;
    const stepper = new Stepper(m, cpuIndex, kind, { pc, readCode, returnAddress, where: a => m.image.symbols.format(a, false) });
    this.sendResponse(response);
    this.forgetStops();
    const run = new StepRun(stepper, end => {
      if (this.stepping !== run || this.ended) return;
      this.stepping = undefined;
      this.finishStep(threadId, end);
    });
    this.stepping = run;
    run.start();
  }

  private finishStep(threadId: number, out: StepRunEnd): void {
    switch (out.kind) {
      case 'paused':
        this.lastStoppedThread = threadId;
        this.sendEvent(stopped('pause', threadId, out.description));
        return;
      case 'error':
        this.onRunnerStop({ kind: 'exited', code: 1, detail: `internal emulator error: ${out.message}` });
        return;
      case 'done':
        this.lastStoppedThread = threadId;
        this.sendEvent(stopped('step', threadId, out.description));
        return;
      case 'budget':
        this.output(`kprobe: ${out.description}\n`, 'console');
        this.lastStoppedThread = threadId;
        this.sendEvent(stopped('step', threadId, out.description));
        return;
      case 'slice': {
        const r = out.result;
        if (r.kind === 'stopped') this.onRunnerStop({ kind: 'stopped', cpu: r.cpu, request: r.request });
        else if (r.kind === 'exited') this.onRunnerStop({ kind: 'exited', code: r.code, detail: r.detail });
        else this.onRunnerStop({ kind: 'limit', instructions: r.instructions });
      }
    }
  }

  private onRunnerStop(s: RunnerStop): void {
    if (this.ended) return;
    switch (s.kind) {
      case 'paused':
        this.sendEvent(stopped('pause', this.lastStoppedThread, 'Paused'));
        break;
      case 'stopped': {
        const cpu = this.machine?.cpus[s.cpu];
        if (cpu && s.request.reportPc !== undefined) this.reportPc.set(s.cpu, { cpuPc: cpu.getPc(), pc: s.request.reportPc });
        this.lastStoppedThread = s.cpu + 1;
        const ev = stopped(s.request.reason, s.cpu + 1, s.request.description);
        const hit = this.probes?.hitFor(s.cpu);
        if (s.request.reason === 'breakpoint' && hit) {
          const stop = this.probeStopOf(hit);
          if (cpu && stop) this.probeStops.set(s.cpu, { cpuPc: cpu.getPc(), stop });
          ev.body.hitBreakpointIds = [hit.breakpointId];
          this.sendEvent(new DapEvent(ProbeEvent.hit, { id: hit.breakpointId, cpu: s.cpu, nhit: hit.hitCount }));
        }
        this.probes?.clearHits();
        this.sendProbeState();
        this.sendEvent(ev);
        break;
      }
      case 'exited':
        this.output(`kprobe: machine ${s.detail ? `stopped: ${s.detail}` : 'powered off'} (exit code ${s.code})\n`, 'console');
        this.end(s.code);
        break;
      case 'limit':
        this.output(`kprobe: instruction limit reached after ${s.instructions} instructions\n`, 'console');
        this.end(0);
        break;
    }
  }

  /** The engine's probe behind a breakpoint hit. */
  private probeStopOf(hit: BreakpointHit): ProbeStop | undefined {
    const engine = this.probes?.mgr.engine;
    const kp = engine?.probesAt(hit.addr).find(k => k.id === hit.probeId);
    if (!kp) return undefined;
    return { mode: hit.mode, kp, addr: hit.addr, reportPc: hit.reportPc, returnValue: hit.returnValue, maxactive: hit.maxactive, breakpointId: hit.breakpointId };
  }

  /** The probe stop of a CPU while it has not moved since. */
  private probeStopFor(cpuIndex: number): ProbeStop | undefined {
    const cpu = this.machine?.cpus[cpuIndex];
    const p = this.probeStops.get(cpuIndex);
    return cpu && p && p.cpuPc === cpu.getPc() ? p.stop : undefined;
  }

  private printk(r: PrintkRecord): void {
    const secs = Number(r.timeNs / 1000n) / 1e6;
    const stamp = `[${secs.toFixed(6).padStart(12)}]`;
    this.output(`${stamp} ${r.text}\n`, r.source === 'emulator' ? 'stderr' : 'stdout');
  }

  private output(text: string, category: 'console' | 'stdout' | 'stderr'): void {
    this.sendEvent(new OutputEvent(text, category));
  }

  // ---- inspection -----------------------------------------------------------------

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    const m = this.machine;
    response.body = { threads: m ? m.cpus.map((_, i) => new Thread(i + 1, this.threadName(i))) : [] };
    this.sendResponse(response);
  }

  private threadName(cpu: number): string {
    const t = this.machine?.kernel.current(cpu);
    return t ? `CPU ${cpu}: ${t.comm} [${t.pid}]` : `CPU ${cpu}: swapper/${cpu}`;
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse, args: DebugProtocol.StackTraceArguments): void {
    const m = this.machine;
    const cpuIndex = args.threadId - 1;
    const cpu = m?.cpus[cpuIndex];
    if (!m || !cpu) return this.sendErrorResponse(response, { id: 1004, format: `kprobe: no CPU for thread ${args.threadId}` });
    const walked = this.frames(m, cpuIndex);
    const start = args.startFrame ?? 0;
    const levels = args.levels && args.levels > 0 ? args.levels : walked.length;
    const frames = walked.slice(start, start + levels).map((f, i) => {
      const idx = start + i;
      // a return address a kretprobe replaced: show the real one, say so
      const name = m.image.symbols.format(f.pc, false)
        + (f.viaTrampoline !== undefined ? ` [kretprobe: stack holds trampoline ${formatAddress(f.viaTrampoline)}]` : '');
      const line = m.image.lines?.lineForAddress(f.lookupPc);
      const local = line && this.sources ? this.sources.toLocal(line.file) : undefined;
      const sf = new StackFrame((cpuIndex + 1) * FRAME_STRIDE + idx, name,
        local ? new Source(path.basename(local), this.convertDebuggerPathToClient(local)) : undefined,
        line ? this.convertDebuggerLineToClient(line.line) : 0, line?.column ? this.convertDebuggerColumnToClient(line.column) : 0);
      sf.instructionPointerReference = formatAddress(f.pc);
      if (!local) sf.presentationHint = 'subtle';
      if (f.viaTrampoline !== undefined) sf.presentationHint = 'label';
      return sf;
    });
    response.body = { stackFrames: frames, totalFrames: walked.length };
    this.sendResponse(response);
  }

  /** Frames of a CPU: frame 0 = the pc (the probe address at a breakpoint stop), callers from the frame-pointer walk. */
  private frames(m: Machine, cpuIndex: number): { pc: bigint; lookupPc: bigint; viaTrampoline?: bigint }[] {
    const cpu = m.cpus[cpuIndex];
    const task = m.kernel.current(cpuIndex);
    const rep = this.reportPc.get(cpuIndex);
    const pc = rep && rep.cpuPc === cpu.getPc() ? rep.pc : cpu.getPc();
    const engine = this.probes?.mgr.engine;
    const raw = walkFrames(m.kernel, cpu, task, { pc, readCode: engine ? (a, n) => engine.readTextWithoutProbes(m.kernel.mem, a, n) : undefined });
    const fixed = engine ? fixupStackTrace(engine, task, raw, cpuIndex)
      : raw.map(a => ({ addr: a, raw: a, replaced: false }));
    // a caller frame's pc is a return address: its source line is the call's,
    // so look up the byte before it (inside the call instruction on every arch)
    return fixed.map((f, i) => ({
      pc: f.addr, lookupPc: i === 0 ? f.addr : f.addr - 1n,
      viaTrampoline: f.replaced ? f.raw : undefined,
    }));
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    const regs: DebugProtocol.Scope = new Scope('Registers', args.frameId, false);
    regs.presentationHint = 'registers';
    const scopes = [regs];
    const cpuIndex = Math.floor(args.frameId / FRAME_STRIDE) - 1;
    if (args.frameId % FRAME_STRIDE === 0 && this.probeStopFor(cpuIndex)) {
      scopes.unshift(new Scope(PROBE_SCOPE_NAME, PROBE_SCOPE_BASE + cpuIndex, false));
    }
    response.body = { scopes };
    this.sendResponse(response);
  }

  private probeVariables(cpuIndex: number): DebugProtocol.Variable[] {
    const m = this.machine;
    const stop = this.probeStopFor(cpuIndex);
    if (!m || !stop) return [];
    return probeScopeVariables({
      stop, entry: this.probes?.mgr.get(stop.breakpointId),
      where: a => m.image.symbols.resolve(a) ? m.image.symbols.format(a, false) : undefined,
      task: m.kernel.current(cpuIndex),
      // as the engine registered it (breakpoints leave it 0: register_kretprobe's default)
      maxactive: stop.maxactive,
    });
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    const m = this.machine;
    if (args.variablesReference >= PROBE_SCOPE_BASE) {
      response.body = { variables: this.probeVariables(args.variablesReference - PROBE_SCOPE_BASE) };
      return this.sendResponse(response);
    }
    const cpu = m?.cpus[Math.floor(args.variablesReference / FRAME_STRIDE) - 1];
    const frame = args.variablesReference % FRAME_STRIDE;
    if (!m || !cpu) return this.sendErrorResponse(response, { id: 1005, format: 'kprobe: unknown variables reference' });
    let vars = registerVariables(m.arch, cpu);
    if (frame > 0) {
      // Callers: only what the frame-pointer walk recovers.
      const f = this.frames(m, cpu.id)[frame];
      vars = f ? [{ name: 'pc', value: formatAddress(f.pc), variablesReference: 0, presentationHint: { attributes: ['readOnly'] } }] : [];
    }
    response.body = { variables: vars };
    this.sendResponse(response);
  }

  protected override setVariableRequest(response: DebugProtocol.SetVariableResponse, args: DebugProtocol.SetVariableArguments): void {
    const m = this.machine;
    const cpu = m?.cpus[Math.floor(args.variablesReference / FRAME_STRIDE) - 1];
    if (!m || !cpu || args.variablesReference % FRAME_STRIDE !== 0) {
      return this.sendErrorResponse(response, { id: 1006, format: 'kprobe: only the registers of the innermost frame can be changed' });
    }
    try {
      response.body = { value: setRegister(m.arch, cpu, args.name, args.value) };
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, { id: 1007, format: `kprobe: ${errorText(e)}`, showUser: true });
    }
  }

  protected override readMemoryRequest(response: DebugProtocol.ReadMemoryResponse, args: DebugProtocol.ReadMemoryArguments): void {
    const m = this.machine;
    if (!m) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    try {
      response.body = readMemory(m.kernel.mem, args);
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, { id: 1008, format: `kprobe: readMemory: ${errorText(e)}` });
    }
  }

  protected override writeMemoryRequest(response: DebugProtocol.WriteMemoryResponse, args: DebugProtocol.WriteMemoryArguments): void {
    const m = this.machine;
    if (!m) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    try {
      const w = writeMemory(m.kernel.mem, args);
      response.body = { bytesWritten: w.count };
      this.sendResponse(response);
      this.sendEvent(new DapEvent('memory', { memoryReference: formatAddress(w.start), offset: 0, count: w.count }));
    } catch (e) {
      this.sendErrorResponse(response, { id: 1009, format: `kprobe: writeMemory: ${errorText(e)}`, showUser: true });
    }
  }

  protected override disassembleRequest(response: DebugProtocol.DisassembleResponse, args: DebugProtocol.DisassembleArguments): void {
    const m = this.machine;
    if (!m) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    try {
      const sources = this.sources;
      const engine = this.probes?.mgr.engine;
      response.body = { instructions: disassemble({
        arch: m.arch, mem: m.kernel.mem, image: m.image, sourcePath: f => sources ? sources.toLocal(f) : f,
        readCode: engine ? (a, n) => engine.readTextWithoutProbes(m.kernel.mem, a, n) : undefined,
      }, args) };
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, { id: 1010, format: `kprobe: disassemble: ${errorText(e)}` });
    }
  }

  /**
   * Handler-language expressions over the stopped CPU of the frame's thread
   * (`regs->ax`, `*(u32 *)(regs->si + 8)`, `p->addr` at a probe stop,
   * `symbol("do_fork")`, `jiffies`...), `$reg` for a register, and bare
   * kernel symbol names (their address; hovers over a C identifier use it first).
   */
  protected override evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): void {
    const m = this.machine;
    const frame = args.frameId ?? this.lastStoppedThread * FRAME_STRIDE;
    const cpu = m?.cpus[Math.floor(frame / FRAME_STRIDE) - 1] ?? m?.cpus[0];
    const mgr = this.probes?.mgr;
    if (!m || !cpu || !mgr) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    const r = evaluateForDap({
      machine: m, engine: mgr.engine, compileOptions: mgr.compileOptions(), cpu, stop: this.probeStopFor(cpu.id),
      expression: args.expression, context: args.context,
    });
    if (!r.ok) return this.sendErrorResponse(response, { id: r.id, format: `kprobe: ${r.message}`, showUser: args.context === 'repl' });
    response.body = r.body;
    this.sendResponse(response);
  }

  // ---- breakpoints ------------------------------------------------------------------

  protected override setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): void {
    const bps = args.breakpoints ?? (args.lines ?? []).map(line => ({ line }));
    const p = this.probes;
    const clientPath = args.source.path ? this.convertClientPathToDebugger(args.source.path) : undefined;
    if (!p || !clientPath) {
      response.body = { breakpoints: bps.map(b => ({ verified: false, line: b.line, message: p ? 'breakpoints need a source file path' : 'not launched', reason: 'failed' as const })) };
      return this.sendResponse(response);
    }
    response.body = { breakpoints: p.setSourceBreakpoints(clientPath, bps.map(b => ({ ...b, line: this.convertClientLineToDebugger(b.line) }))) };
    for (const b of response.body.breakpoints) {
      if (b.line !== undefined) b.line = this.convertDebuggerLineToClient(b.line);
      if (b.source?.path) b.source.path = this.convertDebuggerPathToClient(b.source.path);
    }
    this.sendResponse(response);
  }

  protected override setFunctionBreakPointsRequest(response: DebugProtocol.SetFunctionBreakpointsResponse, args: DebugProtocol.SetFunctionBreakpointsArguments): void {
    if (!this.probes) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    response.body = { breakpoints: this.probes.setFunctionBreakpoints(args.breakpoints) };
    this.sendResponse(response);
  }

  protected override setInstructionBreakpointsRequest(response: DebugProtocol.SetInstructionBreakpointsResponse, args: DebugProtocol.SetInstructionBreakpointsArguments): void {
    if (!this.probes) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    response.body = { breakpoints: this.probes.setInstructionBreakpoints(args.breakpoints) };
    this.sendResponse(response);
  }

  // ---- _probe* ----------------------------------------------------------------------

  protected override customRequest(command: string, response: DebugProtocol.Response, args: unknown): void {
    const p = this.probes;
    const a = (args ?? {}) as { id?: unknown; enabled?: unknown };
    const known = (Object.values(ProbeRequest) as string[]).includes(command);
    if (!known) return super.customRequest(command, response, args);
    if (!p) return this.sendErrorResponse(response, { id: 1002, format: 'kprobe: not launched' });
    try {
      switch (command) {
        case ProbeRequest.list:
          break;
        case ProbeRequest.setGlobalEnabled:
        case ProbeRequest.setOptimization:
          if (typeof a.enabled !== 'boolean') throw new Error(`${command} needs {"enabled": true|false}`);
          if (command === ProbeRequest.setGlobalEnabled) p.setGlobalEnabled(a.enabled); else p.setOptimization(a.enabled);
          break;
        case ProbeRequest.setEnabled:
          if (typeof a.id !== 'number' || typeof a.enabled !== 'boolean') throw new Error(`${command} needs {"id": number, "enabled": true|false}`);
          p.setEnabled(a.id, a.enabled);
          break;
        case ProbeRequest.unregister:
          if (typeof a.id !== 'number') throw new Error(`${command} needs {"id": number}`);
          p.unregister(a.id);
          break;
      }
    } catch (e) {
      return this.sendErrorResponse(response, { id: 1013, format: `kprobe: ${errorText(e)}`, showUser: true });
    }
    response.body = p.state();
    this.sendResponse(response);
  }

  private scheduleProbeState(): void {
    if (this.statePending) return;
    this.statePending = true;
    setImmediate(() => {
      this.statePending = false;
      this.sendProbeState();
    });
  }

  private sendProbeState(): void {
    if (!this.probes || this.ended) return;
    this.sendEvent(new DapEvent(ProbeEvent.state, this.probes.state()));
  }
}

function stopped(reason: string, threadId: number, description: string): DebugProtocol.StoppedEvent {
  const e = new StoppedEvent(reason, threadId) as DebugProtocol.StoppedEvent;
  e.body.description = description;
  e.body.allThreadsStopped = true;
  return e;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

