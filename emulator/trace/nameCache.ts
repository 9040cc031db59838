/**
 * The probe-name cache lives in the kernel layer (kernel/probeNameCache.ts),
 * below the engines that use it. This re-export is left only for the
 * engines' import lines (hwbp/hwBreakpoints.ts, kprobes/hitPath.ts,
 * uprobes/traps.ts); delete it once they import kernel/probeNameCache.ts.
 */
export { ProbeNameCache } from '../kernel/probeNameCache';
