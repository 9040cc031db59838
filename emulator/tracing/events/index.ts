/**
 * tracefs dynamic events (kprobe_events / uprobe_events syntax) on the
 * probes the ProbeManager registers:
 *
 *   parse.ts      the definition parser (columns in errors, the kernel's error_log)
 *   argParse.ts   one fetch argument [NAME=]FETCHARG[:TYPE] of a definition
 *   errors.ts     Linux's error codes and error_log messages; limits.ts its limits
 *   multiProbe.ts several probes on one event: appending, removing by probe point
 *   readme.ts     the dynamic-events lines of tracefs README
 *   fetchArgs.ts  the fetch-argument evaluator and value printing
 *   format.ts     trace-file lines (context columns, probe locations)
 *   runtime.ts    a hit: evaluate through the probe handler environment, print the line
 *   profile.ts    kprobe_events and kprobe_profile of a kernel
 *   traceBuffer.ts the per-CPU ring buffer behind tracefs `trace` / `trace_pipe`
 *   eventFormat.ts an event's `format` file (fields and print fmt)
 *
 * The language server side (handlers/probeFile.ts, probeCheck.ts) imports
 * parse.ts alone: no kernel, no CPU.
 */
export * from './types';
export {
  parseEventDefinition, resolveEventArch, errorLog, fetchType, defaultEventName, looksLikeEventDefinition, stripEventComment,
  MAX_TRACE_ARGS, KRETPROBE_MAXACTIVE_MAX,
} from './parse';
export type { EventArch, EventParseOptions, EventParseResult } from './parse';
export { PROBE_ERRORS, linuxErrorMessage } from './errors';
export type { ProbeErrorCode } from './errors';
export { appendError, removeMatches } from './multiProbe';
export { probeEventsReadme } from './readme';
export {
  MAX_ARGSTR_LEN, MAX_ARRAY_LEN, MAX_ARG_NAME_LEN, MAX_EVENT_NAME_LEN, MAX_PROBE_EVENT_SIZE, FETCH_INSN_MAX, PARAM_MAX_STACK,
} from './limits';
export { fetchArgText, fetchArgsText, formatValue, MAX_STRING_SIZE } from './fetchArgs';
export type { FetchEnv } from './fetchArgs';
export { traceContextText, traceLine, kprobeLocation, kretprobeLocation, uprobeLocation, KPROBE_FLAGS, UPROBE_FLAGS } from './format';
export type { TraceContext } from './format';
export { emitTraceEvent, traceEventLine, fetchEnvFor, symbolWithOffset } from './runtime';
export type { HitEnv, EventHit } from './runtime';
export {
  addTraceEvent, kprobeEventEntries, kprobeProfile, kprobeProfileRows, formatProfileLine, kprobeEvents, eventDefinitionLine,
} from './profile';
export type { TraceEventEntry, ProfileRow } from './profile';
export { tracingOn, setTracingOn } from './tracingOn';
export { recordTraceLine, traceText, consumeTrace, onTraceLine, clearTrace, traceBufferKb, setTraceBufferKb, DEFAULT_BUFFER_KB } from './traceBuffer';
export { eventFormat } from './eventFormat';
