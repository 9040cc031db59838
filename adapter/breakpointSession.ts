/**
 * The DAP breakpoint requests (setBreakpoints, setFunctionBreakpoints,
 * setInstructionBreakpoints, dataBreakpointInfo, setDataBreakpoints) over
 * the ProbeBridge, applied in order and in slices of host time so that a
 * large set does not block the session; continue, the steps and the
 * launch's first run wait for the requests received before them
 * (afterBreakpoints).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { dapError } from './errors';
import { dataBreakpointInfo } from './dataBreakpointInfo';
import { InspectionSession } from './inspectionSession';

/** host time a breakpoint request runs before the session answers other requests (applyBreakpoints) */
const BREAKPOINT_SLICE_MS = 20;

/** what a breakpoint a request could not apply because the session ended says (applyBreakpoints) */
export const SESSION_ENDED_MESSAGE = 'the debug session ended before this breakpoint was applied';

/** runSliced's answer when the session ended first: nothing more was applied */
const ENDED = Symbol('session ended');

/**
 * Drive a step generator in slices of `sliceMs` of host time, yielding to
 * the event loop between slices; ENDED when the session ended (`alive`
 * false) before the steps were done.
 */
function runSliced<T>(steps: Generator<void, T>, sliceMs: number, alive: () => boolean): Promise<T | typeof ENDED> {
  return new Promise<T | typeof ENDED>((resolve, reject) => {
    const slice = (): void => {
      try {
        // a session that ended (disconnect, terminate) applies no more breakpoints
        if (!alive()) return resolve(ENDED);
        const until = performance.now() + sliceMs;
        for (;;) {
          const r = steps.next();
          if (r.done) return resolve(r.value);
          if (performance.now() >= until) break;
        }
        setImmediate(slice);
      } catch (e) {
        reject(e);
      }
    };
    slice();
  });
}

export abstract class BreakpointSession extends InspectionSession {
  /** the breakpoint requests being applied, in order (applyBreakpoints) */
  private breakpointWork: Promise<void> = Promise.resolve();
  /** breakpoint requests being applied: the views get the state once they are done, not every interval meanwhile */
  protected applyingBreakpoints = 0;
  /** a probe changed while breakpoint requests were applied */
  protected stateAfterBreakpoints = false;
  /** the session ended (disconnect, terminate): no more breakpoints are applied */
  protected ended = false;

  /** A state event soon (a probe changed); while breakpoint requests are applied, one once they are done. */
  protected abstract scheduleProbeState(): void;

  /** the breakpoint requests received so far, all applied */
  protected get breakpointsApplied(): Promise<void> { return this.breakpointWork; }

  protected override setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): void {
    const bps = args.breakpoints ?? (args.lines ?? []).map(line => ({ line }));
    const p = this.probes;
    const clientPath = args.source.path ? this.convertClientPathToDebugger(args.source.path) : undefined;
    if (!p || !clientPath) {
      response.body = { breakpoints: bps.map(b => ({ verified: false, line: b.line, message: p ? 'breakpoints need a source file path' : 'not launched', reason: 'failed' as const })) };
      return this.sendResponse(response);
    }
    this.applyBreakpoints(response, p.setSourceBreakpointsSteps(clientPath, bps.map(b => ({ ...b, line: this.convertClientLineToDebugger(b.line) }))), bps.map(b => b.line), breakpoints => {
      for (const b of breakpoints) {
        if (b.line !== undefined) b.line = this.convertDebuggerLineToClient(b.line);
        if (b.source?.path) b.source.path = this.convertDebuggerPathToClient(b.source.path);
      }
      response.body = { breakpoints };
    });
  }

  protected override setFunctionBreakPointsRequest(response: DebugProtocol.SetFunctionBreakpointsResponse, args: DebugProtocol.SetFunctionBreakpointsArguments): void {
    if (!this.probes) return this.sendErrorResponse(response, dapError('notLaunched'));
    this.applyBreakpoints(response, this.probes.setFunctionBreakpointsSteps(args.breakpoints), args.breakpoints.map(() => undefined), breakpoints => { response.body = { breakpoints }; });
  }

  protected override setInstructionBreakpointsRequest(response: DebugProtocol.SetInstructionBreakpointsResponse, args: DebugProtocol.SetInstructionBreakpointsArguments): void {
    if (!this.probes) return this.sendErrorResponse(response, dapError('notLaunched'));
    this.applyBreakpoints(response, this.probes.setInstructionBreakpointsSteps(args.breakpoints), args.breakpoints.map(() => undefined), breakpoints => { response.body = { breakpoints }; });
  }

  protected override dataBreakpointInfoRequest(response: DebugProtocol.DataBreakpointInfoResponse, args: DebugProtocol.DataBreakpointInfoArguments): void {
    const p = this.probes;
    if (!p || !this.target || !this.inspector) return this.sendErrorResponse(response, dapError('notLaunched'));
    try {
      response.body = dataBreakpointInfo({ target: this.target, inspector: this.inspector }, args);
    } catch (e) {
      return this.sendErrorResponse(response, dapError('variables', e));
    }
    this.sendResponse(response);
  }

  protected override setDataBreakpointsRequest(response: DebugProtocol.SetDataBreakpointsResponse, args: DebugProtocol.SetDataBreakpointsArguments): void {
    const p = this.probes;
    if (!p) return this.sendErrorResponse(response, dapError('notLaunched'));
    // in order with the other breakpoint requests (applyBreakpoints)
    this.applyingBreakpoints++;
    this.breakpointWork = this.breakpointWork.then(() => p.setDataBreakpoints(args.breakpoints)).then(
      breakpoints => { response.body = { breakpoints }; this.sendResponse(response); },
      e => this.sendErrorResponse(response, dapError('breakpoints', e)),
    ).finally(() => this.breakpointRequestDone());
  }

  /**
   * Apply a breakpoint request in slices of BREAKPOINT_SLICE_MS, yielding
   * to the event loop in between, so that a large set (10,000 function
   * breakpoints) does not block the session: other requests (threads,
   * stackTrace, evaluate, pause...) are answered meanwhile. Breakpoint
   * requests are applied one after the other in arrival order; continue,
   * the steps and the launch's first run wait until every breakpoint
   * request received before them is applied. A running machine goes on
   * between slices, as a kernel runs while probes are registered.
   * When the session ends before a request is applied (a disconnect, or
   * the client's teardown sending breakpoints after it), the request is
   * answered with each of its breakpoints unverified (`lines`: the client's
   * line of each, undefined where it has none), saying so:
   * a client that ends a session sends such requests routinely, and an
   * error answer would be logged as a failure.
   */
  protected applyBreakpoints(response: DebugProtocol.Response, steps: Generator<void, DebugProtocol.Breakpoint[]>, lines: readonly (number | undefined)[],
    fill: (bps: DebugProtocol.Breakpoint[]) => void): void {
    this.applyingBreakpoints++;
    this.breakpointWork = this.breakpointWork.then(() => runSliced(steps, BREAKPOINT_SLICE_MS, () => !this.ended)).then(
      bps => {
        if (bps === ENDED) {
          // the client's lines as it sent them (no conversion: nothing was resolved)
          response.body = { breakpoints: lines.map(line => ({ verified: false, line, message: SESSION_ENDED_MESSAGE, reason: 'failed' as const })) };
        } else fill(bps);
        this.sendResponse(response);
      },
      e => this.sendErrorResponse(response, dapError('breakpoints', e)),
    ).finally(() => this.breakpointRequestDone());
  }

  private breakpointRequestDone(): void {
    if (--this.applyingBreakpoints > 0 || !this.stateAfterBreakpoints) return;
    this.stateAfterBreakpoints = false;
    this.scheduleProbeState();
  }

  /** run `f` once every breakpoint request received so far is applied */
  protected afterBreakpoints(f: () => void): void {
    void this.breakpointWork.then(f);
  }
}
