/**
 * nmissed made visible: what the engines report when a probe hit ran no
 * handler (kernel.probeMissed), and the readable warning the hit log makes
 * of it:
 *
 *   kretprobe do_fork: 3 instances missed (maxactive=1); maxactive=4 would have sufficed (observed 4 concurrent calls)
 *   kprobe kp_leaf+0x0: 2 hits missed (reentered while kprobe kp_outer+0x0 was being handled on CPU 0)
 *
 * Deduplication (per probe and reason): a warning is emitted at a probe's
 * first miss, then again each time its missed count has doubled since the
 * last warning (1, 2, 4, 8, ... misses: at most log2(misses) + 1 warnings
 * per probe). warnings() always gives each probe's latest state (its missed
 * count and suggestion as of its last miss), one entry per probe.
 */
import type { HitKind, MissInfo, MissReason } from '../kernel/types';

// the kernel declares what the engines report (kernel/types.ts); the warnings are made of it here
export type { MissInfo, MissReason } from '../kernel/types';

/** A warning for a probe's missed hits (the Debug Console and the Kprobes view show these). */
export interface MissWarning {
  reason: MissReason;
  kind: HitKind;
  probeId: number;
  probe: string;
  /** missed hits so far */
  missed: number;
  /** one readable line */
  text: string;
  /** maxactive: the maxactive that would have sufficed (the observed concurrency) */
  suggestedMaxactive?: number;
  maxactive?: number;
  /** maxactive: the most concurrent calls seen */
  observedConcurrency?: number;
  /** reentry: the probe that was being handled */
  runningProbeId?: number;
  runningProbe?: string;
  /** the CPU of the latest miss */
  cpu: number;
  /** the kernel's missed-hit sequence number of the latest miss */
  missSeq: number;
}

export type WarningListener = (w: MissWarning) => void;

function kindWord(kind: HitKind): string {
  switch (kind) {
    case 'kretprobe-entry': case 'kretprobe-return': return 'kretprobe';
    case 'uretprobe': return 'uretprobe';
    default: return kind;
  }
}

function plural(n: number, word: string): string { return `${n} ${word}${n === 1 ? '' : 's'}`; }

/** The warning for a miss (its text included). */
export function warningOf(info: MissInfo, missSeq: number): MissWarning {
  const base = {
    reason: info.reason, kind: info.kind, probeId: info.probeId, probe: info.probe, missed: info.missed,
    cpu: info.cpu, missSeq,
  };
  const who = `${kindWord(info.kind)} ${info.probe}`;
  if (info.reason === 'maxactive') {
    const maxactive = info.maxactive ?? 0;
    const seen = Math.max(info.concurrency ?? 0, maxactive + 1);
    return {
      ...base, maxactive, observedConcurrency: seen, suggestedMaxactive: seen,
      text: `${who}: ${plural(info.missed, 'instance')} missed (maxactive=${maxactive}); `
        + `maxactive=${seen} would have sufficed (observed ${seen} concurrent calls)`,
    };
  }
  if (info.reason === 'reentry') {
    const running = info.runningProbe ?? '?';
    const self = info.runningProbeId !== undefined && info.runningProbeId === info.probeId && info.runningProbe === info.probe;
    return {
      ...base, runningProbeId: info.runningProbeId, runningProbe: info.runningProbe,
      text: self
        ? `${who}: ${plural(info.missed, 'hit')} missed (a fault in code its own handler ran, on CPU ${info.cpu})`
        : `${who}: ${plural(info.missed, 'hit')} missed (reentered while ${running} was being handled on CPU ${info.cpu})`,
    };
  }
  return { ...base, text: `${who}: ${plural(info.missed, 'hit')} missed (${info.detail ?? 'missed'})` };
}

/** per probe and reason: the latest warning and the missed count at the last emission */
export interface WarningState {
  latest: MissWarning;
  emittedAt: number;
}

/** whether a miss re-emits its probe's warning: the first one, then each doubling of the missed count */
export function shouldEmit(st: WarningState | undefined, missed: number): boolean {
  return st === undefined || missed >= 2 * st.emittedAt;
}
