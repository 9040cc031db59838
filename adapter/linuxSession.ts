/**
 * The DAP side of the full-system PC (a real Linux kernel booted from a
 * bzImage: launch.json `kernel`, `initrd`, `append`, `cpus`, `memory`,
 * `vmlinux`, `sourceMap`), beside the emulated-kernel machine's session.
 * KprobeSession hands it every request once a launch names `kernel`.
 *
 *   output       = the guest's console (category stdout), as it is printed
 *   evaluate     = in the Debug Console, `>TEXT` types TEXT and a newline
 *                  into the guest's UART (`>` alone: a bare newline);
 *                  `$reg` reads a register; C expressions over the stopped
 *                  CPU's page tables in the frame asked for (frame names,
 *                  current, vmlinux and module globals, per-CPU copies,
 *                  casts, sizeof: emulator/debug/linuxEvaluate.ts); a bare
 *                  function name gives its address
 *   threads      = CPUs ("CPU 0: sh [61]": current->comm and pid with a vmlinux)
 *   stackTrace   = Linux's frames through the vmlinux's ORC tables
 *   scopes       = Locals (the frame's parameters and locals: the vmlinux's DWARF, values through the
 *                  guest's page tables; hover/watch by name), Registers (general, rip, rflags,
 *                  segments, CR0/2/3/4/8, EFER, GDTR/IDTR)
 *   read/writeMemory, disassemble = through the stopped CPU's page tables
 *   setBreakpoints (Linux source lines: the vmlinux's DWARF line table, emulator/debug/linuxSources.ts),
 *   setFunctionBreakpoints / setInstructionBreakpoints = breakpoints the guest cannot see
 *   a logpoint, a breakpoint with a condition, or a source/function breakpoint in Kretprobe
 *                  mode = a kprobe / kretprobe the guest's own register_kprobe registers through
 *                  kprobe-debug's agent module (launch.json "agent", then >insmod
 *                  /root/kprobe_agent.ko; emulator/debug/linuxAgentProbes.ts): a `breakpoint`
 *                  event verifies it when the guest answers; each hit prints the message
 *                  ({name} / {$retval} / {$rdi} / {$comm} from pt_regs, or a handler snippet
 *                  `{ ...; }` run against the guest's pt_regs), or, without a message, stops
 *                  the machine (when the condition holds) showing the probed context
 *   _probeSetEnabled / _probeUnregister / _probeSetGlobalEnabled / _probeSetOptimization =
 *                  the Kprobes view's actions, carried out by the agent in the guest (Linux's
 *                  enable_kprobe & co.; the kprobes/enabled file and the optimization sysctl
 *                  written by the guest); answered when the guest has done it (a paused
 *                  machine: at once, the request waits for the machine to run)
 *   next / stepIn / stepOut = source lines (emulator/debug/linuxStep.ts), or one instruction with
 *                  granularity 'instruction' (all CPUs run along, as gdb on QEMU); from a stop
 *                  at a guest kprobe's hit they act on the probed context (the guest's kprobe
 *                  handling runs to its end first)
 *   a guest panic or triple fault = a stop ('exception') with its text; continue ends
 *   _probeTimeline / _probeHistograms = the gutter probes' hits as the agent reports them (kprobe hits,
 *                  kretprobe entries and returns, with the guest's clock, CPU and task; a kretprobe's
 *                  entry->return time in its histogram); _probeGoToHit: not on the Linux machine (an
 *                  error saying so: a re-execution does not repeat the agent's events)
 *   stepBack (one instruction of the thread's CPU) / reverseContinue (the previous stop of a
 *                  breakpoint set now) = the recorded machine (emulator/debug/linuxTimeTravel.ts)
 *   _probeState  = the Kprobes, Uprobes and Modules views' rows read from guest memory
 *                  (emulator/debug/linuxProbeRows.ts): at each stop, and while the machine
 *                  runs at most every STATE_INTERVAL_MS between two run chunks; `_probeList`
 *                  reads them now, `_probeDebugfs` gives the guest's kprobes/list text
 */
import {
  OutputEvent, StoppedEvent, TerminatedEvent, ContinuedEvent, Response, Event as DapEvent, BreakpointEvent,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { existsSync } from 'node:fs';
import { formatAddress, parseAddress } from '../emulator/debug/index';
import type { Expandable, FrameVariable, LinuxEnd, LinuxStop, LinuxTarget } from '../emulator/debug/index';
import { dapError, type DapErrorName } from './errors';
import { disassemble } from './disassemble';
import { ProbeEvent, ProbeRequest, type ProbeDebugfsBody, type ProbeStateBody } from './dapCustom';
import { HitTimeline, answerHitRequest, isHitRequest } from './timelineRequests';

/** what the Linux session needs of the DAP session it lives in */
export interface DapSink {
  sendResponse(r: DebugProtocol.Response): void;
  sendEvent(e: DebugProtocol.Event): void;
  sendErrorResponse(r: DebugProtocol.Response, m: DebugProtocol.Message): void;
  /** the machine ended (terminated) */
  ended(): void;
}

/** the Debug Console prefix that types into the guest's console */
export const INPUT_PREFIX = '>';
const REGISTERS_SCOPE = 1;
const FRAME_IDS_PER_CPU = 1000;
/** variablesReference of frame k's Locals on a CPU: LOCALS_SCOPE + cpu * FRAME_IDS_PER_CPU + k */
const LOCALS_SCOPE = 1000;
/** variablesReference of a CPU's Per-CPU scope: PERCPU_SCOPE + cpu (below CHILDREN, above any Locals reference) */
const PERCPU_SCOPE = 900_000;
/** references of expandable values (struct members) from here on; forgotten when the machine runs */
const CHILDREN = 1_000_000;
/** wall time between two `_probeState` events while the machine runs */
const STATE_INTERVAL_MS = 500;

export class LinuxSession {
  private nextBpId = 1;
  private lastThread = 1;
  private readonly expandables = new Map<number, { cpu: number; x: Expandable }>();
  private lastStateAt = 0;
  /** per source file, its plain breakpoints (id, line, where they were placed): placed again when the guest's modules change */
  private readonly plainSource = new Map<string, { source: DebugProtocol.Source; items: { line: number; id: number; at: string }[] }>();
  private moduleGeneration = 0;
  private readonly timeline: HitTimeline;

  constructor(private readonly t: LinuxTarget, private readonly sink: DapSink) {
    this.timeline = new HitTimeline(t.hitLog, e => this.sink.sendEvent(e), line => this.output(`${line}\n`, 'console'));
    t.onConsole(text => this.output(text, 'stdout'));
    t.onMachineLog(line => this.output(`[machine] ${line}\n`, 'console'));
    t.setRunListeners(s => this.onStop(s), e => this.onEnd(e));
    if (t.agentProbes) {
      t.agentProbes.onOutput = text => this.output(text.endsWith('\n') ? text : `${text}\n`, 'console');
      t.agentProbes.onStatus = st => this.sink.sendEvent(new BreakpointEvent('changed', { id: st.bpId, verified: st.verified, message: st.message } as DebugProtocol.Breakpoint));
    }
    // a module's init is next: its source breakpoints are placed before its code runs (emulator/debug/linuxModuleLoad.ts)
    t.onModuleLoad(() => this.moduleBreakpoints());
    t.onChunk(() => {
      this.kaslrNotice();
      const now = Date.now();
      if (now - this.lastStateAt < STATE_INTERVAL_MS) return;
      this.moduleBreakpoints();
      this.sendState();
    });
    const st = t.settings;
    this.output(`kprobe: booting ${st.kernel}${st.initrd ? ` with ${st.initrd}` : ''} on the full-system PC (${t.run.machine.cpus} CPU${t.run.machine.cpus > 1 ? 's' : ''}, ${st.memory} MiB): ${st.append}\n`, 'console');
    this.output(`kprobe: type into the guest's console from here with ${INPUT_PREFIX}TEXT (e.g. ${INPUT_PREFIX}ls /)\n`, 'console');
  }

  /** configurationDone: the machine starts (or stops at once: stopOnEntry) */
  start(stopOnEntry: boolean): void {
    if (stopOnEntry) this.sink.sendEvent(stopped('entry', 1, 'Stopped at the kernel\'s 64-bit entry'));
    else this.t.resume();
  }

  private output(text: string, category: 'console' | 'stdout' | 'stderr'): void {
    this.sink.sendEvent(new OutputEvent(text, category));
  }

  private kaslrWarned = false;
  /** once: the kernel runs relocated by KASLR, and the debugger moved the vmlinux's addresses by the slide (emulator/debug/linuxKaslr.ts) */
  private kaslrNotice(): void {
    if (this.kaslrWarned || !this.t.vmlinux) return;
    const slide = this.t.kaslrSlide();
    if (slide === undefined) return;
    this.kaslrWarned = true;
    if (slide !== 0n) this.output(this.t.kaslrMessage(), 'console');
  }

  private onStop(s: LinuxStop): void {
    this.kaslrNotice();
    this.moduleBreakpoints();
    this.lastThread = s.cpu + 1;
    this.expandables.clear();
    if (s.text) this.output(`kprobe: ${s.description}\n${s.text.endsWith('\n') ? s.text : `${s.text}\n`}`, 'console');
    const ev = stopped(s.reason, s.cpu + 1, s.description);
    if (s.text) ev.body.text = s.text;
    if (s.breakpointIds) ev.body.hitBreakpointIds = s.breakpointIds;
    this.sink.sendEvent(ev);
    this.sendState();
    this.timeline.atStop();
  }

  /** the views' rows read from guest memory now */
  probeState(): ProbeStateBody { return this.t.probeRows(); }

  // ---- time travel: the timeline's navigator (adapter/timelineRequests.ts `_probeGoToHit`): to a hit of the guest agent's log; the stop follows
  get timeTravel(): { goToHit(seq: number): Promise<void> } {
    return {
      goToHit: async seq => {
        const why = this.t.goToHit(seq);
        if (why !== undefined) throw new Error(why);
      },
    };
  }
  // ---- end of time travel

  private sendState(): void {
    this.lastStateAt = Date.now();
    this.sink.sendEvent(new DapEvent(ProbeEvent.state, this.probeState()));
  }

  private onEnd(e: LinuxEnd): void {
    this.output(`kprobe: the machine ${e.kind === 'poweroff' ? 'powered off' : e.kind === 'reset' ? 'reset' : 'stopped'}: ${e.detail}\n`, 'console');
    this.sink.sendEvent(new TerminatedEvent());
    this.sink.ended();
  }

  dispose(): void { this.timeline.dispose(); this.t.dispose(); }

  /** true when the request was answered here */
  dispatch(request: DebugProtocol.Request): boolean {
    const response = new Response(request) as DebugProtocol.Response;
    const args = (request.arguments ?? {}) as Record<string, unknown>;
    const fail = (name: DapErrorName, detail?: unknown): true => { this.sink.sendErrorResponse(response, dapError(name, detail)); return true; };
    const ok = (body?: unknown): true => { if (body !== undefined) response.body = body; this.sink.sendResponse(response); return true; };
    const cpuOf = (threadId: unknown): number | undefined => {
      const cpu = typeof threadId === 'number' ? threadId - 1 : this.lastThread - 1;
      return this.t.cpuIds().includes(cpu) ? cpu : undefined;
    };
    if (isHitRequest(request.command)) {
      answerHitRequest(this.timeline, this, request.command, request.arguments, response, { ok: r => this.sink.sendResponse(r), fail: (r, m) => this.sink.sendErrorResponse(r, m) });
      return true;
    }
    try {
      switch (request.command) {
        case 'threads':
          return ok({ threads: this.t.cpuIds().map(c => ({ id: c + 1, name: this.t.isRunning ? `CPU ${c}` : this.t.threadName(c) })) });
        case 'continue':
          ok({ allThreadsContinued: true });
          this.t.resume();
          return true;
        case 'pause':
          ok();
          if (this.t.isRunning) this.t.pause();
          else this.sink.sendEvent(stopped('pause', this.lastThread, 'Paused'));
          return true;
        case 'next': case 'stepIn': case 'stepOut': {
          const cpu = cpuOf(args.threadId);
          if (cpu === undefined) return fail('noSuchThread', `no CPU for thread ${String(args.threadId)}`);
          if (this.t.isRunning) return fail('running');
          ok();
          this.sink.sendEvent(new ContinuedEvent(cpu + 1, true));
          if (args.granularity === 'instruction') this.t.stepInstruction(cpu);
          else this.t.stepLine(cpu, request.command === 'next' ? 'over' : request.command === 'stepIn' ? 'in' : 'out');
          return true;
        }
        case 'stackTrace': {
          const cpu = cpuOf(args.threadId);
          if (cpu === undefined) return fail('noSuchThread', `no CPU for thread ${String(args.threadId)}`);
          if (this.t.isRunning) return fail('running');
          // the ORC frames with their inlined calls (emulator/debug/linuxFrames.ts)
          const frames = this.t.shownFrames(cpu);
          const stackFrames: DebugProtocol.StackFrame[] = frames.map((f, k) => {
            const sf: DebugProtocol.StackFrame = { id: cpu * FRAME_IDS_PER_CPU + k + 1, name: f.name, line: 0, column: 0, instructionPointerReference: formatAddress(f.pc) };
            const line = f.line;
            if (line) {
              const local = this.t.sources.toLocal(line.file);
              sf.source = { name: line.file.split('/').pop(), path: local, presentationHint: existsSync(local) ? undefined : 'deemphasize' };
              sf.line = line.line;
              sf.column = line.column || 1;
            }
            if (f.physical > 0 && f.inlineDepth === 0 && frames[k - 1].signal && f.physical !== 1) sf.presentationHint = 'label';
            return sf;
          });
          return ok({ stackFrames, totalFrames: stackFrames.length });
        }
        case 'scopes': {
          const frameId = Number(args.frameId);
          const cpu = Math.floor((frameId - 1) / FRAME_IDS_PER_CPU);
          const k = (frameId - 1) % FRAME_IDS_PER_CPU;
          const scopes: DebugProtocol.Scope[] = [{ name: 'Registers', presentationHint: 'registers', variablesReference: REGISTERS_SCOPE + cpu, expensive: false }];
          if (this.t.vmlinux) scopes.unshift({ name: 'Locals', presentationHint: 'locals', variablesReference: LOCALS_SCOPE + cpu * FRAME_IDS_PER_CPU + k, expensive: false });
          // the CPU's copies of Linux's per-CPU variables (emulator/debug/linuxPerCpu.ts)
          if (this.t.vmlinux) scopes.push({ name: 'Per-CPU', variablesReference: PERCPU_SCOPE + cpu, expensive: true });
          return ok({ scopes });
        }
        case 'variables': {
          const ref = Number(args.variablesReference);
          if (ref >= CHILDREN) {
            const e = this.expandables.get(ref);
            if (!e) return fail('variables', `no variables ${ref} (the machine ran since)`);
            return ok({ variables: this.t.children(e.cpu, e.x).map(v => this.dapVariable(e.cpu, v)) });
          }
          if (ref >= PERCPU_SCOPE) {
            const vars = this.t.perCpu(ref - PERCPU_SCOPE);
            if (typeof vars === 'string') return ok({ variables: [{ name: '(no variables)', value: vars, variablesReference: 0 }] });
            return ok({ variables: vars.map(v => this.dapVariable(ref - PERCPU_SCOPE, v)) });
          }
          if (ref >= LOCALS_SCOPE) {
            const cpu = Math.floor((ref - LOCALS_SCOPE) / FRAME_IDS_PER_CPU), k = (ref - LOCALS_SCOPE) % FRAME_IDS_PER_CPU;
            const vars = this.t.shownFrameVariables(cpu, k);
            if (!vars.ok) return ok({ variables: [{ name: '(no variables)', value: vars.reason, variablesReference: 0 }] });
            return ok({ variables: [...vars.params, ...vars.locals].map(v => this.dapVariable(cpu, v)) });
          }
          const cpu = ref - REGISTERS_SCOPE;
          if (!this.t.cpuIds().includes(cpu)) return fail('variables', `no variables ${String(args.variablesReference)}`);
          return ok({ variables: this.t.registers(cpu).map(r => ({ name: r.name, value: r.value, variablesReference: 0, memoryReference: /^0x[0-9a-f]{16}$/.test(r.value) ? r.value : undefined })) });
        }
        case 'readMemory': {
          const cpu = this.lastThread - 1;
          const addr = parseAddress(String(args.memoryReference)) + BigInt(Number(args.offset ?? 0));
          const count = Number(args.count);
          if (!Number.isInteger(count) || count < 0 || count > 1 << 20) return fail('readMemory', `count ${String(args.count)} is not an integer in 0..${1 << 20}`);
          const bytes = this.t.readMemory(cpu, addr, count);
          return ok({ address: formatAddress(addr), data: Buffer.from(bytes).toString('base64'), unreadableBytes: count - bytes.length });
        }
        case 'writeMemory': {
          const addr = parseAddress(String(args.memoryReference)) + BigInt(Number(args.offset ?? 0));
          const data = new Uint8Array(Buffer.from(String(args.data ?? ''), 'base64'));
          if (!this.t.writeMemory(this.lastThread - 1, addr, data)) return fail('writeMemory', `${formatAddress(addr)}: not all ${data.length} bytes are mapped RAM in the guest's page tables`);
          return ok({ bytesWritten: data.length });
        }
        case 'disassemble': {
          const cpu = this.lastThread - 1;
          const rows = disassemble((b, o, c) => this.t.disassemble(cpu, b, o, c), request.arguments as DebugProtocol.DisassembleArguments);
          return ok({ instructions: rows });
        }
        case 'evaluate': return this.evaluate(args, ok, fail);
        case 'setFunctionBreakpoints': {
          const bps = (args.breakpoints as DebugProtocol.FunctionBreakpoint[] | undefined) ?? [];
          const probed = this.throughAgent('function', bps.map(b => {
            const ret = (b as { mode?: string }).mode === 'kretprobe';
            if (!ret && !b.condition?.trim()) return undefined;
            const a = this.t.functionAddress(b.name);
            return typeof a === 'string' ? a : { address: a, ret, condition: b.condition };
          }));
          const res = this.t.setBreakpoints('function', 'function', bps.filter((_, i) => probed[i] === undefined).map(b => {
            const a = this.t.functionAddress(b.name);
            return { addresses: typeof a === 'string' ? a : [a], label: b.name };
          }));
          return ok({ breakpoints: probed.map(p => p ?? this.dapBreakpoint(res.shift()!)) });
        }
        case 'setInstructionBreakpoints': {
          const bps = (args.breakpoints as DebugProtocol.InstructionBreakpoint[] | undefined) ?? [];
          const res = this.t.setBreakpoints('instruction', 'instruction', bps.map(b => {
            let a: bigint | string;
            try { a = parseAddress(b.instructionReference) + BigInt(b.offset ?? 0); } catch (e) { a = (e as Error).message; }
            return { addresses: typeof a === 'bigint' ? [a] : a, label: typeof a === 'bigint' ? this.t.where(a) : '' };
          }));
          return ok({ breakpoints: res.map(r => this.dapBreakpoint(r)) });
        }
        case 'setBreakpoints': {
          const bps = (args.breakpoints as DebugProtocol.SourceBreakpoint[] | undefined) ?? [];
          const source = args.source as DebugProtocol.Source;
          const file = source.path ?? source.name ?? '';
          const lines = bps.map(b => this.t.lineAddresses(file, b.line));
          // logpoints and Kretprobe mode: kprobes the guest registers (its agent), at the line's first address; the rest: breakpoints the guest cannot see
          const probed = this.throughAgent(`source ${file}`, bps.map((b, i) => {
            if (b.logMessage === undefined && b.mode !== 'kretprobe' && !b.condition?.trim()) return undefined;
            const l = lines[i];
            return typeof l === 'string' ? l : { address: l.addresses.reduce((m, a) => (a < m ? a : m)), ret: b.mode === 'kretprobe', message: b.logMessage, condition: b.condition, source: { path: file, line: l.line } };
          }));
          const plain = lines.filter((_, i) => probed[i] === undefined);
          const res = this.t.setBreakpoints('source', `source ${file}`, plain.map(l =>
            typeof l === 'string' ? { addresses: l, label: '' } : { addresses: l.addresses, label: `${file.split('/').pop()}:${l.line}` }));
          const answer = probed.map((p, i) => {
            const b = p ?? this.dapBreakpoint(res.shift()!);
            const l = lines[i];
            if (typeof l !== 'string') { b.line = l.line; b.source = source; }
            // a line without code yet keeps an id: a module loaded later may have it (moduleBreakpoints)
            if (p === undefined) b.id ??= this.nextBpId++;
            return b;
          });
          const plainOnes = bps.flatMap((b, i) => (probed[i] === undefined ? [{ line: b.line, id: answer[i].id!, at: placeKey(lines[i]) }] : []));
          if (plainOnes.length > 0) this.plainSource.set(file, { source, items: plainOnes }); else this.plainSource.delete(file);
          return ok({ breakpoints: answer });
        }
        case 'setVariable': {
          // a register, a frame's variable or a shown member (emulator/debug/linuxSetVariable.ts)
          if (this.t.isRunning) return fail('running');
          const ref = Number(args.variablesReference), name = String(args.name);
          const e = ref >= CHILDREN ? this.expandables.get(ref) : undefined;
          if (ref >= CHILDREN && !e) return fail('setVariable', `no variables ${ref} (the machine ran since)`);
          if (ref >= PERCPU_SCOPE && ref < CHILDREN) return fail('setVariable', `per-CPU variable '${name}': expand it and change its members, or write its copy's memory`);
          const at = e ? { cpu: e.cpu, member: e.x }
            : ref >= LOCALS_SCOPE ? { cpu: Math.floor((ref - LOCALS_SCOPE) / FRAME_IDS_PER_CPU), frame: (ref - LOCALS_SCOPE) % FRAME_IDS_PER_CPU }
              : { cpu: ref - REGISTERS_SCOPE, register: true as const };
          try { return ok({ value: this.t.setValue(at, name, String(args.value)) }); } catch (err) { return fail('setVariable', (err as Error).message); }
        }
        case 'setExceptionBreakpoints':
          return ok({ breakpoints: [] });
        case 'dataBreakpointInfo': {
          // what "Break on Value Change" would watch (emulator/debug/linuxDataBreakpoints.ts)
          if (this.t.isRunning) return ok({ dataId: null, description: 'pause the machine to set a data breakpoint' });
          const ref = typeof args.variablesReference === 'number' ? args.variablesReference : undefined;
          const e = ref !== undefined && ref >= CHILDREN ? this.expandables.get(ref) : undefined;
          const fid = typeof args.frameId === 'number' ? args.frameId - 1 : undefined;
          const at = e ? { cpu: e.cpu, member: e.x }
            : ref !== undefined && ref >= LOCALS_SCOPE && ref < CHILDREN ? { cpu: Math.floor((ref - LOCALS_SCOPE) / FRAME_IDS_PER_CPU), frame: (ref - LOCALS_SCOPE) % FRAME_IDS_PER_CPU }
              : fid !== undefined && ref === undefined ? { cpu: Math.floor(fid / FRAME_IDS_PER_CPU), frame: fid % FRAME_IDS_PER_CPU }
                : { cpu: this.lastThread - 1, global: true as const };
          if (ref !== undefined && ref >= CHILDREN && !e) return ok({ dataId: null, description: `no variables ${ref} (the machine ran since)` });
          if (ref !== undefined && ref >= PERCPU_SCOPE && ref < CHILDREN) return ok({ dataId: null, description: `per-CPU variable '${String(args.name)}': watch a member of its expanded copy` });
          return ok(this.t.dataInfo(at, String(args.name ?? ''), args.asAddress === true ? { bytes: Number(args.bytes ?? 1) } : undefined));
        }
        case 'setDataBreakpoints': {
          const bps = (args.breakpoints as DebugProtocol.DataBreakpoint[] | undefined) ?? [];
          const res = this.t.setWatchpoints(bps.map(b => ({ dataId: b.dataId, accessType: b.accessType })));
          return ok({ breakpoints: res.map(r => (typeof r === 'string' ? { verified: false, message: r } : { id: this.nextBpId++, verified: true, description: r.label })) });
        }
        case ProbeRequest.list:
          return ok(this.probeState());
        case ProbeRequest.setEnabled: case ProbeRequest.unregister: case ProbeRequest.setGlobalEnabled: case ProbeRequest.setOptimization:
          return this.probeAction(request.command, args, ok, fail);
        case ProbeRequest.debugfs: {
          const g = this.t.guest;
          if (!g) return fail('requestFailed', 'the guest\'s kprobes are read through the vmlinux\'s DWARF: set "vmlinux" in launch.json');
          const st = this.probeState();
          const body: ProbeDebugfsBody = { list: g.snapshot().render.kprobesList, enabled: st.enabled ? '1\n' : '0\n' };
          return ok(body);
        }
        case 'restart':
          return fail('restartFailed', 'the Linux machine does not restart in place yet: stop the session and start it again');
        case 'stepBack': case 'reverseContinue': {
          // time travel: emulator/debug/linuxTimeTravel.ts; the stop follows the answer
          const why = request.command === 'stepBack' ? this.t.stepBack(typeof args.threadId === 'number' ? args.threadId - 1 : this.lastThread - 1) : this.t.reverseContinue();
          return why === undefined ? ok() : fail('timeTravel', why);
        }
        default:
          return false;
      }
    } catch (e) {
      return fail('requestFailed', `${request.command}: ${(e as Error).message}`);
    }
  }

  private evaluate(args: Record<string, unknown>, ok: (b?: unknown) => true, fail: (n: DapErrorName, d?: unknown) => true): true {
    const expr = String(args.expression ?? '');
    if (expr.startsWith(INPUT_PREFIX)) {
      this.t.typeInput(`${expr.slice(INPUT_PREFIX.length)}\n`);
      return ok({ result: this.t.isRunning ? '' : '(typed; the guest reads it when it runs)', variablesReference: 0 });
    }
    if (this.t.isRunning) return fail('running');
    const cpu = typeof args.frameId === 'number' ? Math.floor((args.frameId - 1) / FRAME_IDS_PER_CPU) : this.lastThread - 1;
    // a parameter or local of the frame (hover, watch)
    if (/^[A-Za-z_]\w*$/.test(expr.trim()) && typeof args.frameId === 'number' && this.t.vmlinux) {
      const vars = this.t.shownFrameVariables(cpu, (args.frameId - 1) % FRAME_IDS_PER_CPU);
      const v = vars.ok ? [...vars.params, ...vars.locals].find(x => x.name === expr.trim()) : undefined;
      if (v) { const d = this.dapVariable(cpu, v); return ok({ result: d.value, type: d.type, variablesReference: d.variablesReference }); }
      // a per-CPU variable: this CPU's copy
      const pv = this.t.perCpu(cpu, [expr.trim()]);
      if (typeof pv !== 'string' && pv[0]) { const d = this.dapVariable(cpu, pv[0]); return ok({ result: d.value, type: d.type, variablesReference: d.variablesReference }); }
      // a global or static of a launch module (its DWARF where the guest loaded it)
      const mv = this.t.moduleGlobal(cpu, (args.frameId - 1) % FRAME_IDS_PER_CPU, expr.trim());
      if (mv) { const d = this.dapVariable(cpu, mv); return ok({ result: d.value, type: d.type, variablesReference: d.variablesReference }); }
    }
    const reg = /^\$(\w+)$/.exec(expr.trim());
    if (reg) {
      const row = this.t.registers(cpu).find(r => r.name === reg[1].toLowerCase());
      if (!row) return fail('evaluateNoRegister', `no register ${reg[1]}`);
      return ok({ result: row.value, variablesReference: 0 });
    }
    // ---- C expressions over the guest's page tables (emulator/debug/linuxEvaluate.ts)
    const c = this.t.vmlinux ? this.t.evaluate(cpu, typeof args.frameId === 'number' ? (args.frameId - 1) % FRAME_IDS_PER_CPU : 0, expr) : undefined;
    if (c?.ok) {
      const d = c.body.expand ? this.dapVariable(cpu, { name: expr, value: c.body.result, type: c.body.type, kind: 'local', expand: c.body.expand }) : undefined;
      return ok({ result: c.body.result, type: c.body.type, variablesReference: d?.variablesReference ?? 0, memoryReference: c.body.memoryReference });
    }
    // a vmlinux symbol without a DWARF variable (a function): its address
    const a = this.t.functionAddress(expr.trim());
    if (typeof a === 'bigint') return ok({ result: formatAddress(a), variablesReference: 0, memoryReference: formatAddress(a) });
    if (c) return fail('evaluate', c.message);
    // ---- end of C expressions
    return fail('evaluate', `${expr}: ${a} (without a vmlinux the Linux machine evaluates $register, or ${INPUT_PREFIX}TEXT to type into the console)`);
  }

  /**
   * A Kprobes view action carried out by the guest's agent: answered with
   * the rows once the guest has done it (the rows are sent again too), or
   * the guest's -errno; a paused machine answers at once (the agent takes
   * the request when the machine runs).
   */
  private probeAction(command: string, args: Record<string, unknown>, ok: (b?: unknown) => true, fail: (n: DapErrorName, d?: unknown) => true): true {
    const knob = command === ProbeRequest.setGlobalEnabled || command === ProbeRequest.setOptimization;
    if (knob ? typeof args.enabled !== 'boolean' : typeof args.id !== 'number' || (command === ProbeRequest.setEnabled && typeof args.enabled !== 'boolean')) {
      return fail('requestFailed', `${command} needs ${knob ? '{"enabled": true|false}' : command === ProbeRequest.setEnabled ? '{"id": number, "enabled": true|false}' : '{"id": number}'}`);
    }
    const what = knob ? (command === ProbeRequest.setGlobalEnabled ? `/sys/kernel/debug/kprobes/enabled <- ${args.enabled ? 1 : 0}` : `debug.kprobes-optimization <- ${args.enabled ? 1 : 0}`)
      : `${command === ProbeRequest.unregister ? 'unregister' : args.enabled ? 'enable' : 'disable'} probe ${String(args.id)}`;
    const wasRunning = this.t.isRunning;
    let answered = false;
    const done = (result: number): void => {
      if (result !== 0) this.output(`kprobe: ${what}: the guest answered ${result}\n`, 'console');
      this.sendState();
      if (answered) return;
      answered = true;
      if (result !== 0) fail('requestFailed', `${what}: the guest answered ${result}`);
      else ok(this.probeState());
    };
    const why = knob
      ? this.t.probeKnob(command === ProbeRequest.setGlobalEnabled ? 'enabled' : 'optimization', args.enabled as boolean, done)
      : this.t.probeAction(args.id as number, command === ProbeRequest.unregister ? 'unregister' : args.enabled ? 'enable' : 'disable', done);
    if (why !== undefined) return fail('requestFailed', `${command}: ${why}`);
    if (!wasRunning) {
      answered = true;
      this.output(`kprobe: ${what}: queued for the guest's agent (it takes it when the machine runs)\n`, 'console');
      ok(this.probeState());
    }
    return true;
  }

  private dapVariable(cpu: number, v: FrameVariable): DebugProtocol.Variable {
    let ref = 0;
    if (v.expand) {
      ref = CHILDREN + this.expandables.size;
      this.expandables.set(ref, { cpu, x: v.expand });
    }
    return { name: v.name, value: v.value, type: v.type, variablesReference: ref };
  }

  /**
   * The gutter probes of `group` through the guest's agent: per breakpoint
   * undefined (an ordinary breakpoint), or its DAP answer (pending on the
   * agent's reply, a `breakpoint` event follows; or why not).
   */
  private throughAgent(group: string, asked: (undefined | string | { address: bigint; ret: boolean; message?: string; condition?: string; source?: { path: string; line: number } })[]): (DebugProtocol.Breakpoint | undefined)[] {
    const out: (DebugProtocol.Breakpoint | undefined)[] = asked.map(() => undefined);
    const wanted: Parameters<NonNullable<LinuxTarget['agentProbes']>['set']>[1][number][] = [];
    asked.forEach((a, i) => {
      if (a === undefined) return;
      const id = this.nextBpId++;
      if (typeof a === 'string') { out[i] = { id, verified: false, message: a }; return; }
      if (!this.t.agentProbes) {
        out[i] = { id, verified: false, message: `logpoints, conditions and Kretprobe mode on the Linux machine are kprobes the guest registers through kprobe-debug's agent: launch with "vmlinux" and "agent" (test/linux/agent/cache/agent.cpio.gz), then >insmod /root/kprobe_agent.ko` };
        return;
      }
      out[i] = { id, verified: false, instructionReference: formatAddress(a.address) };
      wanted.push({ bpId: id, address: a.address, ret: a.ret, message: a.message, condition: a.condition, source: a.source });
    });
    if (this.t.agentProbes) {
      for (const st of this.t.agentProbes.set(group, wanted)) {
        const b = out.find(x => x?.id === st.bpId)!;
        b.verified = st.verified;
        b.message = st.message;
      }
    }
    return out;
  }

  /**
   * The source breakpoints the debugger places (not the agent's) again where
   * the launch's modules' code now is (emulator/debug/linuxModuleDebug.ts):
   * a line of a module's source gets its addresses once the guest loaded
   * the module, and loses them when it is removed; each change is a
   * breakpoint event.
   */
  private moduleBreakpoints(): void {
    const md = this.t.moduleDebug;
    if (!md || this.plainSource.size === 0) return;
    md.refresh(this.t.guest, this.t.run.instructions);
    if (md.generation === this.moduleGeneration) return;
    this.moduleGeneration = md.generation;
    for (const [file, s] of this.plainSource) {
      const lines = s.items.map(x => this.t.lineAddresses(file, x.line));
      if (lines.every((l, k) => placeKey(l) === s.items[k].at)) continue;
      const res = this.t.setBreakpoints('source', `source ${file}`, lines.map(l =>
        typeof l === 'string' ? { addresses: l, label: '' } : { addresses: l.addresses, label: `${file.split('/').pop()}:${l.line}` }));
      res.forEach((r, k) => {
        const it = s.items[k], l = lines[k];
        it.at = placeKey(l);
        const b = this.dapBreakpoint(r);
        b.id = it.id;
        if (typeof l !== 'string') { b.line = l.line; b.source = s.source; }
        this.sink.sendEvent(new BreakpointEvent('changed', b));
      });
    }
  }

  private dapBreakpoint(r: ReturnType<LinuxTarget['setBreakpoints']>[number]): DebugProtocol.Breakpoint {
    if (typeof r === 'string') return { verified: false, message: r };
    const line = this.t.sourceLine(r.addresses[0]);
    const bp: DebugProtocol.Breakpoint = { id: this.nextBpId++, verified: true, instructionReference: formatAddress(r.addresses[0]) };
    if (line) bp.line = line.line;
    return bp;
  }
}

/** where a line's breakpoint went: its addresses, or none */
function placeKey(l: { addresses: bigint[] } | string): string {
  return typeof l === 'string' ? '' : l.addresses.join(',');
}

function stopped(reason: string, threadId: number, description: string): DebugProtocol.StoppedEvent {
  const e = new StoppedEvent(reason, threadId) as DebugProtocol.StoppedEvent;
  e.body.description = description;
  e.body.allThreadsStopped = true;
  return e;
}
