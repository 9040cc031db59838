/**
 * The kprobe debug adapter: DAP <-> the debug facade's DebugTarget
 * (emulator/debug/index.ts). Owns no emulation logic.
 *
 *   threads      = CPUs ("CPU 0: init [1]"), ids cpu+1
 *   output       = printk lines (Debug Console)
 *   stackTrace, scopes, variables, read/writeMemory, disassemble, evaluate
 *                = adapter/inspectionSession.ts over the target
 *   set*Breakpoints = adapter/breakpointSession.ts -> ProbeBridge -> the target's resolver
 *   next/stepIn/stepOut = source lines of the selected CPU (emulator/debug/stepper.ts)
 *   continue/pause/steps = one run controller (emulator/debug/runControl.ts)
 *   stepBack/reverseContinue = the target's time travel (emulator/debug/timeTravel.ts)
 *   restart      = a new machine with the same launch arguments and breakpoints
 *   _probe* custom requests/events (adapter/dapCustom.ts, adapter/probeRequests.ts)
 */
import * as path from 'node:path';
import {
  InitializedEvent, OutputEvent, StoppedEvent,
  TerminatedEvent, ExitedEvent, Event as DapEvent, BreakpointEvent, ContinuedEvent, Response, ErrorDestination,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { isLinuxLaunch, launchLinuxTarget, launchTarget } from '../emulator/debug/index';
import { LinuxSession } from './linuxSession';
import type { DebugTarget, PrintkRecord, RunController, RunEnd, SessionTimeTravel, StepKind, TravelStop } from '../emulator/debug/index';
import { KprobeLaunchArgs, ProbeEvent } from './dapCustom';
import { changesMachine } from './timeTravel';
import { dapError } from './errors';
import { requestArgumentsProblem } from './requestArgs';
import { BREAKPOINT_MODES, BreakpointIds } from './breakpointIds';
import { ProbeBridge } from './probeBridge';
import { ProbeControls } from './probeControls';
import { StopInspector } from './inspector';
import { handleProbeRequest, isProbeRequest } from './probeRequests';
import { answerHitRequest, HitTimeline, isHitRequest } from './timelineRequests';
import { BreakpointSession } from './breakpointSession';

type LaunchRequestArgs = DebugProtocol.LaunchRequestArguments & Partial<KprobeLaunchArgs>;

/** How often hit counters are pushed to the views while the kernel runs. */
const STATE_INTERVAL_MS = 250;
/**
 * A state event that took t ms to build and send is followed by the next one
 * no sooner than STATE_COST_FACTOR * t later: with tens of thousands of probes
 * the periodic events stay a small share of the session's time and of the
 * bytes queued for the client (a disconnect response is not stuck behind them).
 */
const STATE_COST_FACTOR = 20;
export class KprobeSession extends BreakpointSession {
  /** continue and steps: one driver of the machine loop */
  private runner: RunController | undefined;
  private configurationDone!: Promise<void>;
  /** performance.now() before which no periodic state event is sent (STATE_COST_FACTOR) */
  private nextStateAt = 0;
  private markConfigured!: () => void;
  private stopOnEntry = false;
  private readonly disposers: (() => void)[] = [];
  /** the views' requests (adapter/probeControls.ts) */
  private controls: ProbeControls | undefined;
  /** DAP breakpoint ids (the session's, kept across restarts) */
  private readonly bpIds = new BreakpointIds();
  private stateTimer: NodeJS.Timeout | undefined;
  private statePending = false;
  private launchArgs: LaunchRequestArgs | undefined;
  /** the probe-hit log's requests and events (adapter/timelineRequests.ts) */
  private timeline: HitTimeline | undefined;

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
      supportsDataBreakpoints: true,
      supportsDataBreakpointBytes: true,
      supportsConditionalBreakpoints: true,
      supportsHitConditionalBreakpoints: true,
      supportsLogPoints: true,
      breakpointModes: BREAKPOINT_MODES,
      supportsTerminateRequest: true,
      supportsRestartRequest: true,
      supportsSteppingGranularity: true,
      supportsStepBack: true,
      supportsEvaluateForHovers: true,
    };
    this.sendResponse(response);
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.markConfigured();
    this.sendResponse(response);
  }

  protected override async launchRequest(response: DebugProtocol.LaunchResponse, args: LaunchRequestArgs): Promise<void> {
    if (isLinuxLaunch(args)) return this.launchLinux(response, args);
    let m: DebugTarget;
    try {
      m = this.boot(args);
    } catch (e) {
      this.sendErrorResponse(response, dapError('launchFailed', e));
      return;
    }
    this.launchArgs = args;
    this.sendResponse(response);
    this.attachMachine(m, args);
    // Breakpoints come now (setBreakpoints...), then configurationDone.
    this.sendEvent(new InitializedEvent());
    await this.configurationDone;
    await this.breakpointsApplied;
    if (this.ended) return;
    if (this.stopOnEntry) {
      m.scheduleFirstTasks();
      this.sendEvent(stopped('entry', 1, 'Stopped at the image entry point'));
    }
    else this.runner?.resume();
  }

  /** the full-system PC's session (launch.json `kernel`): it answers the requests from then on */
  private linux: LinuxSession | undefined;

  private async launchLinux(response: DebugProtocol.LaunchResponse, args: LaunchRequestArgs): Promise<void> {
    let linux: LinuxSession;
    try {
      const t = launchLinuxTarget(args as unknown as Record<string, unknown>);
      linux = new LinuxSession(t, {
        sendResponse: r => this.sendResponse(r),
        sendEvent: e => this.sendEvent(e),
        sendErrorResponse: (r, m) => this.sendErrorResponse(r, m),
        ended: () => this.stopMachine(),
      });
    } catch (e) {
      this.sendErrorResponse(response, dapError('launchFailed', e));
      return;
    }
    this.linux = linux;
    this.sendResponse(response);
    this.sendEvent(new InitializedEvent());
    await this.configurationDone;
    if (this.ended) return;
    linux.start(!!args.stopOnEntry);
  }

  /** Make m the session's machine: runner, probes (launch probe files), printk output, state timer. */
  private attachMachine(m: DebugTarget, args: LaunchRequestArgs): void {
    this.target = m;
    this.travelling = m.timeTravel;
    this.sources = m.sources;
    this.disposers.push(m.onPrintk(r => this.printk(r)));
    this.runner = m.runController(e => this.onRunEnd(e));
    this.stopOnEntry = !!args.stopOnEntry;
    this.bpIds.clearProbes();
    this.probes = new ProbeBridge(m, () => this.scheduleProbeState(), this.bpIds);
    this.controls = new ProbeControls(m, this.probes, () => this.scheduleProbeState());
    const timeline = this.timeline = new HitTimeline(m.hits, e => this.sendEvent(e), line => this.output(line + '\n', 'console'), () => this.scheduleProbeState(), () => m.hitSeq());
    this.disposers.push(() => timeline.dispose());
    this.inspector = new StopInspector(m, this.sources, {
      path: p => this.convertDebuggerPathToClient(p),
      line: n => this.convertDebuggerLineToClient(n),
      column: n => this.convertDebuggerColumnToClient(n),
    }, line => this.output(line + '\n', 'console'));
    this.output(`kprobe: booting ${m.image.path} (${m.arch.name}, ${m.cpuCount} CPU${m.cpuCount > 1 ? 's' : ''})\n`, 'console');
    this.controls.onModuleError = line => this.output(`kprobe: ${line}\n`, 'console');
    this.disposers.push(m.onTimeTravelMessage(line => this.output(`kprobe: ${line}\n`, 'console')));
    this.probes.onBreakpointsChanged = bps => { for (const b of bps) this.sendEvent(new BreakpointEvent('changed', this.clientBreakpoint(b))); };
    // modules first: probe files may name their symbols
    m.loadLaunchModules(args.modules ?? [], line => this.output(`kprobe: ${line}\n`, 'console'));
    for (const file of args.probes ?? []) {
      for (const line of this.probes.addProbeFile(path.resolve(file))) this.output(line + '\n', 'console');
    }
    this.stateTimer = setInterval(() => {
      if (this.applyingBreakpoints > 0 || performance.now() < this.nextStateAt) return;
      if (this.probes?.takeDirty()) this.sendProbeState();
    }, STATE_INTERVAL_MS);
    this.stateTimer.unref();
    this.sendProbeState();
  }

  /** Stop and drop the current machine (restart): runner, step, timer, listeners; the session goes on. */
  private detachMachine(): void {
    this.stopRunning();
    this.inspector?.forget();
  }

  /** End the run controller's job, the state timer and the machine's listeners. */
  private stopRunning(): void {
    this.runner?.dispose();
    if (this.stateTimer) clearInterval(this.stateTimer);
    this.stateTimer = undefined;
    for (const d of this.disposers.splice(0)) d();
  }

  /**
   * restart: boot a new machine from the same launch arguments (or the ones
   * the client sends), register the launch probe files and every breakpoint
   * again (same ids, `breakpoint` changed events), then stop at the entry or
   * run, as at launch.
   */
  protected override restartRequest(response: DebugProtocol.RestartResponse, args: DebugProtocol.RestartArguments): void {
    this.afterBreakpoints(() => this.restartNow(response, args));
  }

  private restartNow(response: DebugProtocol.RestartResponse, args: DebugProtocol.RestartArguments): void {
    const prev = this.launchArgs;
    if (!prev || !this.probes || this.ended) return this.sendErrorResponse(response, dapError('nothingToRestart'));
    const fresh = args?.arguments && 'program' in args.arguments ? args.arguments as LaunchRequestArgs : prev;
    let m: DebugTarget;
    try {
      m = this.boot(fresh);
    } catch (e) {
      return this.sendErrorResponse(response, dapError('restartFailed', e));
    }
    const records = this.probes.breakpointRecords();
    this.detachMachine();
    this.launchArgs = fresh;
    this.output('kprobe: restarting\n', 'console');
    this.attachMachine(m, fresh);
    const restored = this.probes.restoreBreakpoints(records);
    this.sendResponse(response);
    // every CPU runs the new machine: the client drops what the old run's stops said of each thread
    this.sendEvent(new ContinuedEvent(1, true));
    for (const b of restored) this.sendEvent(new BreakpointEvent('changed', this.clientBreakpoint(b)));
    this.sendProbeState();
    if (this.stopOnEntry) {
      m.scheduleFirstTasks();
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

  private boot(args: LaunchRequestArgs): DebugTarget {
    return launchTarget(args);
  }


  protected override disconnectRequest(response: DebugProtocol.DisconnectResponse): void {
    if (!this.ended && this.probes) this.sendProbeState(); // the views keep the final counters
    this.stopMachine();
    this.sendResponse(response);
    this.shutdown(); // exits the process in stdio mode, nothing in server mode
  }

  protected override terminateRequest(response: DebugProtocol.TerminateResponse): void {
    if (!this.ended && this.probes) this.sendProbeState(); // the views keep the final counters
    this.sendResponse(response);
    this.end();
  }

  /** Stop the machine and drop listeners (disconnect, terminate, SIGTERM). */
  stopMachine(): void {
    this.ended = true;
    this.linux?.dispose();
    this.markConfigured();
    this.stopRunning();
  }

  private end(exitCode?: number): void {
    if (this.ended) return;
    this.stopMachine();
    if (exitCode !== undefined) this.sendEvent(new ExitedEvent(exitCode));
    this.sendEvent(new TerminatedEvent());
  }

  // ---- running ----------------------------------------------------------------------

  protected override continueRequest(response: DebugProtocol.ContinueResponse): void {
    this.afterBreakpoints(() => this.continueNow(response));
  }

  private continueNow(response: DebugProtocol.ContinueResponse): void {
    response.body = { allThreadsContinued: true };
    this.sendResponse(response);
    // at the end of the run (stopAtExit), and not gone back: continue ends the session
    if (this.exitSeen && this.target?.exit && !this.target.inPast) return this.end(this.target.exit.code);
    this.exitSeen = false;
    this.runner?.cancel();
    this.forgetStops();
    this.runner?.resume();
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    this.sendResponse(response);
    if (this.runner?.running) this.runner.pause();
    else if (this.target && !this.ended) this.sendEvent(stopped('pause', this.lastStoppedThread, 'Paused'));
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

  // ---- reverse execution (adapter/timeTravel.ts) -------------------------------------

  protected override stepBackRequest(response: DebugProtocol.StepBackResponse, args: DebugProtocol.StepBackArguments): void {
    this.afterBreakpoints(() => this.travel(response, t => t.stepBack(args.threadId - 1, args.granularity === 'instruction' ? 'instruction' : 'line')));
  }

  protected override reverseContinueRequest(response: DebugProtocol.ReverseContinueResponse): void {
    this.afterBreakpoints(() => this.travel(response, t => t.reverseContinue()));
  }

  /** The timeline's navigator (adapter/timelineRequests.ts `_probeGoToHit`): to the stop after a hit. */
  get timeTravel(): { goToHit(seq: number): Promise<void> } | undefined {
    if (!this.target?.recording) return undefined;
    return {
      goToHit: seq => new Promise<void>((resolve, reject) => this.afterBreakpoints(() => {
        if (this.runner?.running) return reject(new Error('the machine is running; pause it first'));
        try {
          const stop = this.travelling!.goToHit(seq);
          resolve();
          this.afterTravel(stop);
        } catch (e) { reject(e); }
      })),
    };
  }

  private travel(response: DebugProtocol.Response, move: (t: SessionTimeTravel) => TravelStop): void {
    const t = this.travelling;
    if (!t) return this.sendErrorResponse(response, dapError('notLaunched'));
    if (this.runner?.running) return this.sendErrorResponse(response, dapError('running'));
    let stop: TravelStop;
    try {
      stop = move(t);
    } catch (e) {
      return this.sendErrorResponse(response, dapError('timeTravel', e));
    }
    this.sendResponse(response);
    this.afterTravel(stop);
  }

  /** reverse execution on the session's machine (stepBack, reverseContinue, go to a hit) */
  private travelling: SessionTimeTravel | undefined;

  /** stopAtExit: the session stopped at the machine's end instead of ending (a continue from there ends it) */
  private exitSeen = false;

  /** The machine moved in time: the views, the Debug Console's marker and a stop. */
  private afterTravel(stop: TravelStop): void {
    this.forgetStops();
    this.lastStoppedThread = stop.cpu + 1;
    const note = this.travelling?.noteHere(stop.cpu);
    if (note) this.inspector?.recordStop(stop.cpu, note.reportPc, note.hit);
    else this.inspector?.recordStop(stop.cpu, stop.reportPc, undefined);
    this.output(`${this.travelling?.positionLine()}\n`, 'console');
    this.timeline?.atStop();
    this.sendProbeState();
    this.sendEvent(stopped(stop.reason, stop.cpu + 1, stop.description));
  }

  /**
   * A request that changes the machine while it is stopped: in the past
   * this discards the recorded future (emulator/timetravel/recorder.ts), and
   * the probes are put back as the breakpoints now are.
   */
  protected override dispatchRequest(request: DebugProtocol.Request): void {
    // arguments that do not fit the protocol: an error naming them, before anything changes
    const bad = requestArgumentsProblem(request.command, request.arguments);
    if (bad) return this.sendErrorResponse(new Response(request), dapError('badArguments', `${request.command}: ${bad}`));
    if (this.linux && !this.ended && this.linux.dispatch(request)) return;
    if (this.target?.recording && changesMachine(request)) this.travelling?.beforeChange(request, () => this.probes?.resyncAfterTimeTravel());
    super.dispatchRequest(request);
  }

  /**
   * A handler that threw: DebugSession answers with the JS stack as the
   * message (error 1104, '{_stack}'); answer with the request and the error's
   * text instead (the stack goes to the adapter's log).
   */
  protected override sendErrorResponse(response: DebugProtocol.Response, codeOrMessage: number | DebugProtocol.Message, format?: string, variables?: Record<string, unknown>, dest?: ErrorDestination): void {
    if (codeOrMessage === 1104 && variables && typeof variables._exception === 'string') {
      if (typeof variables._stack === 'string') process.stderr.write(`kprobe adapter: ${response.command} failed: ${variables._stack}\n`);
      return super.sendErrorResponse(response, dapError('requestFailed', `${response.command}: ${variables._exception}`));
    }
    super.sendErrorResponse(response, codeOrMessage, format, variables, dest);
  }

  private forgetStops(): void {
    this.inspector?.forget();
  }

  /**
   * A step of the selected CPU (the other CPUs stay stopped): one
   * instruction, or source-line stepping per emulator/debug/stepper.ts, run in
   * chunks so pause is answered; ends with a `step` stop (or the stop that
   * interrupted it: a breakpoint, the end of the machine).
   */
  private step(response: DebugProtocol.Response, threadId: number, kind: StepKind): void {
    this.afterBreakpoints(() => this.stepNow(response, threadId, kind));
  }

  private stepNow(response: DebugProtocol.Response, threadId: number, kind: StepKind): void {
    const m = this.target;
    if (!m) return this.sendErrorResponse(response, dapError('notLaunched'));
    const cpuIndex = threadId - 1;
    const cpu = m.cpu(cpuIndex);
    if (!cpu) return this.sendErrorResponse(response, dapError('noSuchThread', `no CPU for thread ${threadId}`));
    if (this.runner?.running) return this.sendErrorResponse(response, dapError('running'));
    const inspector = this.inspector;
    const pc = inspector ? inspector.pcOf(cpuIndex) : cpu.getPc();
    // out of the physical function (an inlined call's frame steps out with its function)
    const returnAddress = kind === 'out' ? inspector?.frames(cpuIndex).find(f => f.physical === 1)?.pc : undefined;
    const stepper = m.stepper(cpuIndex, kind, pc, returnAddress);
    this.sendResponse(response);
    this.forgetStops();
    this.runner?.step(stepper);
  }

  private onRunEnd(s: RunEnd): void {
    if (this.ended) return;
    this.timeline?.atStop();
    switch (s.kind) {
      case 'paused':
        if (s.cpu !== undefined) this.lastStoppedThread = s.cpu + 1;
        this.sendEvent(stopped('pause', this.lastStoppedThread, s.description));
        break;
      case 'stepped':
        if (s.budget) this.output(`kprobe: ${s.description}\n`, 'console');
        this.lastStoppedThread = s.cpu + 1;
        this.sendEvent(stopped('step', s.cpu + 1, s.description));
        break;
      case 'stopped': {
        this.lastStoppedThread = s.cpu + 1;
        const ev = stopped(s.request.reason, s.cpu + 1, s.request.description);
        const hit = s.request.reason === 'breakpoint' || s.request.reason === 'data breakpoint' ? this.probes?.hitFor(s.cpu) : undefined;
        this.inspector?.recordStop(s.cpu, s.request.reportPc, hit);
        this.travelling?.noteStop(s.cpu, s.request.reportPc, hit);
        if (hit) {
          const dapId = this.probes?.ids.dapOf(hit.breakpointId);
          if (dapId !== undefined) ev.body.hitBreakpointIds = [dapId];
          this.sendEvent(new DapEvent(ProbeEvent.hit, { id: this.probes?.ids.idOf(hit.breakpointId) ?? hit.breakpointId, cpu: s.cpu, nhit: hit.hitCount }));
        }
        this.probes?.clearHits();
        this.sendProbeState();
        this.sendEvent(ev);
        break;
      }
      case 'exited': {
        this.output(`kprobe: machine ${s.detail ? `stopped: ${s.detail}` : 'powered off'} (exit code ${s.code})\n`, 'console');
        this.sendProbeState(); // the final counters
        // "stopAtExit" with a recording: stay at the end, so that the run can be gone back through
        if (this.launchArgs?.stopAtExit === true && this.target?.recording && !this.exitSeen) {
          this.exitSeen = true;
          this.output('kprobe: stopped at the end of the run: Step Back and Reverse Continue go back in time; Continue or Stop ends the session\n', 'console');
          this.sendEvent(stopped('pause', this.lastStoppedThread, `Powered off (exit code ${s.code})`));
          break;
        }
        this.end(s.code);
        break;
      }
      case 'limit':
        this.output(`kprobe: instruction limit reached after ${s.instructions} instructions\n`, 'console');
        this.sendProbeState();
        this.end(0);
        break;
    }
  }


  private printk(r: PrintkRecord): void {
    const secs = Number(r.timeNs / 1000n) / 1e6;
    const stamp = `[${secs.toFixed(6).padStart(12)}]`;
    this.output(`${stamp} ${r.text}\n`, r.source === 'emulator' ? 'stderr' : 'stdout');
  }

  private output(text: string, category: 'console' | 'stdout' | 'stderr'): void {
    this.sendEvent(new OutputEvent(text, category));
  }

  // ---- _probe* ----------------------------------------------------------------------

  protected override customRequest(command: string, response: DebugProtocol.Response, args: unknown): void {
    if (isHitRequest(command)) return answerHitRequest(this.timeline, this, command, args, response, { ok: r => this.sendResponse(r), fail: (r, m) => this.sendErrorResponse(r, m) });
    if (!isProbeRequest(command)) return super.customRequest(command, response, args);
    if (!this.controls) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      response.body = handleProbeRequest(this.controls, command, args);
    } catch (e) {
      return this.sendErrorResponse(response, dapError('probeRequest', e));
    }
    this.sendResponse(response);
  }

  /** A state event soon (a probe changed); while breakpoint requests are applied, one once they are done. */
  protected scheduleProbeState(): void {
    if (this.applyingBreakpoints > 0) { this.stateAfterBreakpoints = true; return; }
    if (this.statePending) return;
    this.statePending = true;
    setImmediate(() => {
      this.statePending = false;
      this.sendProbeState();
    });
  }

  private sendProbeState(): void {
    if (!this.probes || this.ended) return;
    const t0 = performance.now();
    this.sendEvent(new DapEvent(ProbeEvent.state, this.probes.rows()));
    const t1 = performance.now();
    this.nextStateAt = t1 + STATE_COST_FACTOR * (t1 - t0);
  }
}

function stopped(reason: string, threadId: number, description: string): DebugProtocol.StoppedEvent {
  const e = new StoppedEvent(reason, threadId) as DebugProtocol.StoppedEvent;
  e.body.description = description;
  e.body.allThreadsStopped = true;
  return e;
}


