/**
 * The DAP requests that inspect a stopped machine, over the debug target:
 * threads (one per CPU), stackTrace / source / scopes / variables /
 * setVariable (adapter/inspector.ts), read/writeMemory (original bytes of
 * probed code, no writes over a probe: memoryAccess.ts), disassemble
 * (disassemble.ts), evaluate (the target's: emulator/debug/evaluate.ts). The session
 * (kprobeSession.ts) builds on it; it sets the target and its helpers at launch.
 */
import { LoggingDebugSession, Thread, Event as DapEvent } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { formatAddress } from '../emulator/debug/index';
import type { DebugMemory, DebugTarget, EvaluateAnswer } from '../emulator/debug/index';
import { readMemory, writeMemory } from './memoryAccess';
import { disassemble } from './disassemble';
import { dapError } from './errors';
import type { SourceMap } from '../emulator/debug/index';
import type { ProbeBridge } from './probeBridge';
import { FRAME_STRIDE } from './inspector';
import type { StopInspector } from './inspector';

export abstract class InspectionSession extends LoggingDebugSession {
  protected target: DebugTarget | undefined;
  protected sources: SourceMap | undefined;
  protected probes: ProbeBridge | undefined;
  /** stack, scopes and variables of the stopped machine (adapter/inspector.ts) */
  protected inspector: StopInspector | undefined;
  /** thread of the last stop (evaluate without a frame) */
  protected lastStoppedThread = 1;

  /** Kernel memory as the client sees it: probed code reads as its original bytes. */
  protected memoryView(m: DebugTarget): DebugMemory {
    return m.memory();
  }

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    const m = this.target;
    response.body = { threads: m ? Array.from({ length: m.cpuCount }, (_, i) => new Thread(i + 1, m.threadName(i))) : [] };
    this.sendResponse(response);
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse, args: DebugProtocol.StackTraceArguments): void {
    if (!this.inspector) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      response.body = this.inspector.stackTrace(args);
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, dapError('stackTrace', e));
    }
  }

  /** The text of a frame's source in code the emulator owns (StopInspector.sourceText). */
  protected override sourceRequest(response: DebugProtocol.SourceResponse, args: DebugProtocol.SourceArguments): void {
    const ref = args.source?.sourceReference ?? args.sourceReference;
    const content = this.inspector?.sourceText(ref);
    if (content === undefined) return this.sendErrorResponse(response, dapError('stackTrace', `no source with reference ${ref}`));
    response.body = { content, mimeType: 'text/plain' };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    response.body = { scopes: this.inspector?.scopes(args.frameId) ?? [] };
    this.sendResponse(response);
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    if (!this.inspector) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      response.body = { variables: this.inspector.variables(args.variablesReference) };
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, dapError('variables', e));
    }
  }

  protected override setVariableRequest(response: DebugProtocol.SetVariableResponse, args: DebugProtocol.SetVariableArguments): void {
    if (!this.inspector) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      const target = this.inspector.dwarfTarget(args.variablesReference, args.name);
      if (target) {
        // a C variable (DWARF) or one of its members: `lvalue = (value)` in its frame, then its value as shown again
        const r = this.evaluateIn(target.frameId, `${target.lvalue} = (${args.value})`, 'repl');
        if (!r.ok) throw new Error(r.message.replace(/^cannot evaluate "[^"]*": /, ''));
        const again = this.inspector.variables(args.variablesReference).find(v => v.name === args.name);
        response.body = { value: again?.value ?? r.body?.result ?? args.value, type: again?.type, variablesReference: again?.variablesReference ?? 0 };
        return this.sendResponse(response);
      }
      response.body = { value: this.inspector.setVariable(args.variablesReference, args.name, args.value) };
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, dapError('setVariable', e));
    }
  }

  protected override readMemoryRequest(response: DebugProtocol.ReadMemoryResponse, args: DebugProtocol.ReadMemoryArguments): void {
    const m = this.target;
    if (!m) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      // probed code reads as its original bytes (`_probeReadMemory` with patched: true shows the breakpoints)
      response.body = readMemory(this.memoryView(m), args);
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, dapError('readMemory', e));
    }
  }

  protected override writeMemoryRequest(response: DebugProtocol.WriteMemoryResponse, args: DebugProtocol.WriteMemoryArguments): void {
    const m = this.target;
    if (!m) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      const w = writeMemory(this.memoryView(m), args);
      response.body = { bytesWritten: w.count };
      this.sendResponse(response);
      this.sendEvent(new DapEvent('memory', { memoryReference: formatAddress(w.start), offset: 0, count: w.count }));
    } catch (e) {
      this.sendErrorResponse(response, dapError('writeMemory', e));
    }
  }

  protected override disassembleRequest(response: DebugProtocol.DisassembleResponse, args: DebugProtocol.DisassembleArguments): void {
    const m = this.target;
    if (!m) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      const sources = this.sources;
      // original instructions, with what the probes wrote over them as notes
      response.body = { instructions: disassemble((base, at, count) => m.disassemble(base, at, count), args, f => sources ? sources.toLocal(f) : f) };
      this.sendResponse(response);
    } catch (e) {
      this.sendErrorResponse(response, dapError('disassemble', e));
    }
  }

  /**
   * Handler-language expressions over the stopped CPU of the frame's thread
   * (`regs->ax`, `*(u32 *)(regs->si + 8)`, `p->addr` at a probe stop,
   * `symbol("do_fork")`, `jiffies`...), `$reg` for a register, and bare
   * kernel symbol names (their address; hovers over a C identifier use it first).
   */
  protected override evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): void {
    const frame = args.frameId ?? this.lastStoppedThread * FRAME_STRIDE;
    const r = this.evaluateIn(frame, args.expression, args.context);
    if (!r.ok) return this.sendErrorResponse(response, dapError(r.error, r.message));
    response.body = r.body;
    this.sendResponse(response);
  }

  /** evaluate in a frame (its DWARF names, its registers); used by evaluate and setVariable */
  protected evaluateIn(frame: number, expression: string, context?: string): EvaluateAnswer {
    const m = this.target;
    const cpu = m?.cpu(Math.floor(frame / FRAME_STRIDE) - 1) ?? m?.cpu(0);
    const insp = this.inspector;
    if (!m || !cpu || !this.probes || !insp) return { ok: false, error: 'evaluate', message: 'not launched' };
    const index = frame % FRAME_STRIDE;
    const state = insp.frameState(cpu.id, index);
    // the target's answer has the shape of DAP's evaluate body
    return m.evaluate({
      cpuIndex: cpu.id, stop: insp.probeStopFor(cpu.id),
      expression, context,
      frameVariables: () => insp.frameVariables(cpu.id, index),
      frame: state ? { index, state } : undefined,
      image: insp.frameImage(cpu.id, index),
      expandRef: (x, viaPointer) => insp.expandRef(cpu.id, (cpu.id + 1) * FRAME_STRIDE + index, x, expression, viaPointer),
    });
  }
}
