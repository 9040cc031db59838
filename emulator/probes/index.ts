/**
 * User probes -> kprobes engine: probe files (.kprobe) and debugger
 * breakpoints, one ProbeManager per machine (`ProbeManager.for(machine)`).
 * See manager.ts for the API.
 */
export { ProbeManager } from './manager';
export type {
  ProbeEntry, ProbeSiteInfo, ProbeOrigin, BreakpointRequest, ProbeFileResult, ProbeManagerOptions, BreakpointHitListener,
} from './manager';
export type { BreakpointHit, BreakpointMode, HitPredicate } from './breakpoints';
export { parseHitCondition } from './breakpoints';
export type { EngineProbeKind } from './register';
export { resolveTarget, parseTargetText, targetText, whereOf } from './targets';
export type { ProbeSite, TargetResolution } from './targets';
export { ProbeHandlerEnv, taskAddress } from './env';
export { dumpStackLines, walkFrames } from './stack';
