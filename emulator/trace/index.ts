/**
 * Probe-hit tracing: the hit log (every probe hit numbered and recorded),
 * kretprobe latency histograms, and warnings for missed hits.
 */
export { DEFAULT_HIT_LOG_SIZE, HitLog, MAX_OUTPUT_LINES, NO_OUTPUT } from './hitLog';
export type { HitKind, HitListener, HitRecord } from './hitLog';
export { bucketLabel, bucketOf, formatHistogram, formatHistogramLines, histIndexLabel } from './histogram';
export type { LatencyHistogram } from './histogram';
export { warningOf } from './warnings';
export type { MissInfo, MissReason, MissWarning, WarningListener } from './warnings';
export { formatHistograms, formatWarnings, hitLogListSection } from './report';
