/**
 * The records behind kretprobe instances (Linux struct kretprobe_instance
 * and the per-kretprobe free list): an instance with its entry time and
 * stack pointer, a task's live instances, a registered kretprobe's state.
 */
import { fromVAddr, VAddr } from '../memory/address';
import { Kretprobe, KretprobeInstance, KretprobeInstanceRec } from './kprobe';
import type { MissedState } from './kretprobeMissed';

/** An instance with what the hit log needs: when and at which stack pointer its call entered. */
export class TimedInstance extends KretprobeInstanceRec {
  constructor(rp: Kretprobe, data: bigint, readonly st: RpState) { super(rp, data); }
  /** virtual time (ns) of the entry on its CPU (the return's latency is measured from it) */
  entryNs = 0;
  /**
   * The stack pointer at the entry (the call's frame: missed calls deeper
   * than it ended when it returns) as a VAddr; NaN when not canonical, and
   * then entrySp holds it (read both through entrySpOf).
   */
  entrySpV: VAddr = 0;
  entrySp = 0n;
}

/** the stack pointer at an instance's entry */
export function entrySpOf(ri: Pick<TimedInstance, 'entrySpV' | 'entrySp'>): bigint {
  return ri.entrySpV === ri.entrySpV ? fromVAddr(ri.entrySpV) : ri.entrySp;
}

/** A task's live instances (innermost last) and the one whose return handler is running (already off the list). */
export interface TaskInstances {
  list: TimedInstance[];
  running: KretprobeInstance | undefined;
}

export interface RpState extends MissedState {
  rp: Kretprobe;
  free: TimedInstance[];
  /** unregistered: live instances are dropped on return, handlers skipped */
  dead: boolean;
  /** emulated address standing for the kretprobe object (start of its instance data block) */
  base: bigint;
}
