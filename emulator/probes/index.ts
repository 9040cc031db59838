/**
 * User probes -> kprobes engine: probe files (.kprobe) and debugger
 * breakpoints, one ProbeManager per machine (`probesOf(machine)`, attach.ts).
 * See manager.ts for the API. A debug adapter's use, in short:
 *
 *   const mgr = probesOf(machine);                  // on the machine's KprobesEngine
 *   mgr.onBreakpointHit(hit => ...);                // optional: hit.breakpointId, hit.where, hit.hitCount
 *   const bp = mgr.addBreakpoint({ target: 'fork.c:32', condition: 'arg0 & 0x100', hitCondition: '>=2' });
 *   // bp.verified / bp.message / bp.nextLine (line without code) / bp.sites[i].source.line
 *   const fn = mgr.addBreakpoint({ target: 'r:sys_open' });     // return breakpoint (kretprobe)
 *   const lp = mgr.addBreakpoint({ target: '0xffffffff81001a90', logMessage: 'fork {arg0}' }); // logpoint
 *   machine.runSlice(n) -> { kind: 'stopped', request: { reason: 'breakpoint', description:
 *     'breakpoint at do_fork+0x0', reportPc, probeId } }   // mgr calls kernel.requestStop itself
 *     (set mgr.requestStops = false to only get the onBreakpointHit callback)
 *   mgr.setEnabled(bp.id, false); mgr.remove(fn.id); mgr.list(); mgr.debugfsList();
 *
 * At a kprobe breakpoint stop the CPU's pc is already in the probe's
 * instruction slot with a single-step pending (the engine's HIT_SS state):
 * show request.reportPc (the probe address); resuming or stepping the CPU
 * finishes the probe normally.
 */
export { ProbeManager } from './manager';
export { attachProbes, probesOf } from './attach';
export type {
  ProbeEntry, ProbeListRow, ProbeSiteInfo, ProbeOrigin, BreakpointRequest, ProbeFileResult, ProbeManagerOptions, BreakpointHitListener,
} from './manager';
export type { BreakpointHit, BreakpointMode, HitPredicate } from './breakpoints';
export { parseHitCondition } from './breakpoints';
export type { EngineProbeKind } from './register';
export { resolveTarget, parseTargetText, parseBreakpointTarget, targetText, whereOf, symbolAt } from './targets';
export type { ProbeSite, TargetResolution } from './targets';
export { ProbeHandlerEnv } from './env';
export { DEFAULT_HANDLER_FAULTS, HANDLER_FAULT_POLICIES } from './invoke';
export type { HandlerFaultPolicy } from './invoke';
export { RUNAWAY_DISABLE_AFTER } from './runaway';
export { HANDLER_STEP_SLOTS } from './env';
export { DEFAULT_INSN_BOUNDARY, INSN_BOUNDARY_POLICIES } from './insnBoundary';
export type { InsnBoundaryPolicy } from './insnBoundary';
