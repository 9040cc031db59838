/** Public surface of the kprobes engine. */
export { KprobesEngine } from './core';
export type { KprobesEngineOptions } from './core';
export * from './kprobe';
export { PtRegs } from './ptRegs';
export type { KprobeEvent, KprobeListener, ProbeInfo } from './events';
export type { KprobesArchHooks, KprobesArchContext, ProbeInsnDecision } from './archHooks';
export { registerKprobesArch, kprobesArchFor, kprobesArches } from './archRegistry';
export { formatKprobeList, readKprobesEnabled, writeKprobesEnabled, readTextWithoutProbes, fixupStackTrace } from './debugfs';
export type { FixedFrame } from './kretprobes';
export { NestedCallError } from './nestedCall';
export { symbolizeEngineAddress } from './symbolize';
export type { KprobesFtrace } from './ftrace';
export { KRETPROBE_MAX_DATA_SIZE } from './validate';
export type { FtraceArchHooks } from './archHooks';
export type { KprobeStats, BreakpointSite } from './core';
export type { ArchOptimizedInsn, OptprobesArchHooks, CallbackFrame, CallbackKind } from './archHooks';
export { OPTIMIZE_DELAY_NS } from './optprobes';
export { errnoOf } from './regResult';
export type { KprobeRegError, KprobeRegResult } from './regResult';
export type { EngineCode, EngineCodeRegistry } from './codeRegistry';
export type { OptimizationStatus, OptState } from './optprobes';
export {
  SYSCTL_KPROBES_OPTIMIZATION, KPROBES_SYSCTLS, kprobesEngineOf, parseKprobesSysctl, writeKprobesSysctl,
  readKprobesOptimization, writeKprobesOptimization,
} from './sysctl';
