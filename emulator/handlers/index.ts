/**
 * The handler-snippet language: a small C subset for kprobe handlers,
 * breakpoint conditions and log messages, .kprobe probe files, and printk
 * formatting. Talks to the machine only through HandlerEnv.
 */
export type {
  HandlerKind, HandlerEnv, HandlerProbeInfo, HandlerRetInstanceInfo, SymbolizedAddress, Diagnostic,
  CompileOptions, CompiledHandler, HandlerFaultKind, HandlerWatchInfo, PrintkArg, PrintkEnv, ProbeControlOp, ProgramName, ProgramPlace,
} from './types';
export { HandlerFault, HANDLER_KIND_NAMES, HW_BREAKPOINT_R, HW_BREAKPOINT_W, HW_BREAKPOINT_X } from './types';
export { compileHandler, DEFAULT_STEP_BUDGET } from './compiler';
export { compileLogMessage, isHandlerSnippetLogMessage } from './logMessage';
export { parseProbeFile, parseProbeFileImage, parseTarget } from './probeFile';
export type { ProbeFileAst, ProbeAst, ProbeTarget, ProbeKindName, ProbeAttrAst, ProbeHandlerAst } from './probeFile';
export { checkProbeFile, compileProbeFile, ignoredPcWriteMessage, MAX_MAXACTIVE, MAX_DATA_SIZE, KWATCH_TYPES, MAX_KWATCH_LEN } from './probeCheck';
export type { CheckOptions, ProbeSpec, KwatchTypeName } from './probeCheck';
export { BUILTINS, CONSTANTS } from './builtins';
export type { BuiltinInfo } from './builtins';
export { HANDLER_KINDS, WATCH_NAMES, contextFields, defaultArgRegs, pcRegOf } from './context';
export type { HandlerKindInfo, ContextVarInfo, ContextFieldInfo } from './context';
export { formatPrintk, parseFormat } from './printk';
export { LITERAL_POOL_BASE, DYNAMIC_POOL_BASE } from './runtime';
export { evaluateExpression, formatValue, hexOf, isIdentifier } from './evaluate';
export type { EvalValue, EvalResult } from './evaluate';
export { addressOf, noAddressMessage } from './addressOf';
export type { AddressOfResult } from './addressOf';
