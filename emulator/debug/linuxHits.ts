/**
 * The Linux machine's hit log (the hit timeline and latency histograms)
 * and where each hit happened, shared by its two producers: the guest
 * agent's gutter kprobes (linuxAgentProbes.ts: a hit is placed just after
 * the agent's `out`) and the emulator's own breakpoints and data
 * breakpoints (linuxTarget.ts: a hit is the stop, the CPU at the
 * breakpoint's instruction or just past the watched access). Hits are
 * numbered in the order they happen, one counter for both.
 *
 * A place is exact: the instructions all CPUs had retired, and the hit
 * CPU's own count, so going to a hit re-executes to exactly there. A hit
 * is recorded once: a stop met again after going back in time (a place
 * not after the newest one recorded) is not recorded again. When a change
 * in the past discards the recorded future, the hits after it leave the
 * log and numbering goes on after the last one kept.
 */
import { HitLog } from '../trace/hitLog';

export interface HitPlace {
  /** instructions all CPUs had retired at the hit */
  g: number;
  cpu: number;
  /** the hit CPU's own retired count there */
  instret: number;
}

/** an emulator breakpoint's hit: its place and the stop it showed */
export interface BreakHitPlace extends HitPlace { from: 'breakpoint'; description: string }

export class LinuxHits {
  readonly log = new HitLog();
  private seq = 0;
  private newestG = -1;
  /** per hit of the log (by seq, oldest first) */
  private readonly places = new Map<number, HitPlace & { from: 'agent' | 'breakpoint'; description?: string }>();

  /** the next hit's number and its place recorded, or undefined when a hit at or after this place was recorded already (met again after going back) */
  take(place: HitPlace, from: 'agent' | 'breakpoint', description?: string): number | undefined {
    if (from === 'breakpoint' && place.g <= this.newestG) return undefined;
    const seq = ++this.seq;
    this.newestG = Math.max(this.newestG, place.g);
    this.places.set(seq, { ...place, from, description });
    // as many places as the log keeps records
    if (this.places.size > this.log.size) this.places.delete(this.places.keys().next().value!);
    return seq;
  }

  /** where hit `seq` happened, when it is an emulator breakpoint's */
  breakPlace(seq: number): BreakHitPlace | undefined {
    const p = this.places.get(seq);
    return p?.from === 'breakpoint' ? { g: p.g, cpu: p.cpu, instret: p.instret, from: 'breakpoint', description: p.description ?? '' } : undefined;
  }

  /** the recorded run from instruction count g on is discarded: its hits leave the log; returns the last seq kept */
  discardAfter(g: number): number {
    let keep = 0;
    this.newestG = -1;
    for (const [seq, p] of this.places) {
      if (p.g < g) { keep = seq; this.newestG = Math.max(this.newestG, p.g); } else this.places.delete(seq);
    }
    this.log.truncateAfter(keep);
    this.seq = keep;
    return keep;
  }
}
