/**
 * The probe-hit log over DAP (adapter/dapCustom.ts HitRequest / ProbeEvent):
 *
 *   _probeTimeline { sinceSeq? }  -> the log's records (addresses as hex strings), dropped, lastSeq, nowSeq
 *   _probeHistograms              -> one log2 latency histogram per kretprobe, with bpftrace's text
 *   _probeGoToHit { seq }         -> the session's time travel (`session.timeTravel.goToHit(seq)`)
 *   _probeHitsChanged (event)     -> at most every HITS_INTERVAL_MS of wall time while hits come, and at each stop
 *   _probeWarning (event)         -> each warning of the log (missed hits), also printed in the Debug Console
 *
 * One HitTimeline per machine (a restart makes a new one); the session
 * dispatches the requests here (isHitRequest / answerHitRequest) and calls
 * atStop() when the machine stops.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Event as DapEvent } from '@vscode/debugadapter';
import {
  HitInfo, HitRequest, HitRequestName, ProbeEvent, ProbeHistogramsBody, ProbeHitsChangedBody,
  ProbeTimelineBody, ProbeWarningBody,
} from './dapCustom';
import { dapError } from './errors';
import { formatAddress, hitsSince, histogramRows } from '../emulator/debug/index';
import type { HitLogView, HitRecord, MissWarning } from '../emulator/debug/index';

/** Wall time between two `_probeHitsChanged` events while hits keep coming. */
export const HITS_INTERVAL_MS = 250;

/** What the time-travel engine offers the timeline: move the machine to a hit of the log. */
export interface HitNavigator {
  goToHit(seq: number): unknown;
}

/** The message of `_probeGoToHit` when the session has no time travel. */
export const NO_TIME_TRAVEL = 'time travel is not available in this session';

export function isHitRequest(command: string): command is HitRequestName {
  return (Object.values(HitRequest) as string[]).includes(command);
}

/** A log record as DAP carries it: numbers and strings only (the address as `0x` + 16 hex digits). */
export function hitInfo(r: HitRecord): HitInfo {
  const h: HitInfo = {
    seq: Number(r.seq), instructions: Number(r.instructions), timeNs: Number(r.timeNs), cpu: r.cpu, pid: r.pid, comm: r.comm,
    kind: r.kind, probeId: r.probeId, probe: r.probe, addr: formatAddress(r.addr), output: [...r.output],
  };
  if (r.latencyNs !== undefined) h.latencyNs = Number(r.latencyNs);
  return h;
}

export class HitTimeline {
  private dirty = false;
  /** the hit the machine is at (set at a stop or by a go-to; a new hit clears it) */
  private nowSeq: number | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly log: HitLogView,
    private readonly send: (event: DebugProtocol.Event) => void,
    /** prints a line in the Debug Console */
    private readonly print: (line: string) => void,
    /** the probe rows changed (a warning): the Kprobes view should refresh */
    private readonly onRowsChanged: () => void = () => undefined,
    /**
     * the seq of the machine's latest hit (kernel.hitSeq: machine state, so
     * after time travel the position in the past); absent: the log's newest
     */
    private readonly position: () => number = () => log.lastSeq,
  ) {
    this.unsubscribe.push(
      log.onHit(() => { this.dirty = true; this.nowSeq = undefined; }),
      log.onWarning(w => this.warn(w)),
    );
    this.timer = setInterval(() => { if (this.dirty) this.sendChanged(); }, HITS_INTERVAL_MS);
    this.timer.unref();
  }

  /** The machine stopped (or moved in time): the views refresh now, the marker at the machine's latest hit. */
  atStop(): void {
    const at = this.position();
    this.nowSeq = at > 0 ? at : undefined;
    this.sendChanged();
  }

  timeline(sinceSeq?: number): ProbeTimelineBody {
    const body: ProbeTimelineBody = { hits: hitsSince(this.log, sinceSeq).map(hitInfo), dropped: this.log.dropped, lastSeq: Number(this.log.lastSeq) };
    if (this.nowSeq !== undefined) body.nowSeq = this.nowSeq;
    return body;
  }

  histograms(): ProbeHistogramsBody {
    return { histograms: histogramRows(this.log) };
  }

  /**
   * Go to a hit through the session's time travel; resolves once there (the
   * navigator sends the `stopped` event). The marker moves to the hit.
   */
  async goToHit(seq: number, nav: HitNavigator | undefined): Promise<void> {
    if (!nav) throw new Error(NO_TIME_TRAVEL);
    await nav.goToHit(seq);
    this.nowSeq = seq;
    this.sendChanged();
  }

  private warn(w: MissWarning): void {
    const body: ProbeWarningBody = { probeId: w.probeId, probe: w.probe, text: w.text, missed: w.missed };
    if (w.suggestedMaxactive !== undefined) body.suggestedMaxactive = w.suggestedMaxactive;
    this.send(new DapEvent(ProbeEvent.warning, body) as DebugProtocol.Event);
    this.print(`kprobe: warning: ${w.text}`);
    this.onRowsChanged();
  }

  private sendChanged(): void {
    this.dirty = false;
    const body: ProbeHitsChangedBody = { lastSeq: Number(this.log.lastSeq), dropped: this.log.dropped };
    if (this.nowSeq !== undefined) body.nowSeq = this.nowSeq;
    this.send(new DapEvent(ProbeEvent.hitsChanged, body) as DebugProtocol.Event);
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const u of this.unsubscribe.splice(0)) u();
  }
}

/** The session's time travel, when it has one (`session.timeTravel`, set by the time-travel engine). */
export function navigatorOf(session: object): HitNavigator | undefined {
  const t = (session as { timeTravel?: unknown }).timeTravel;
  return typeof t === 'object' && t !== null && typeof (t as HitNavigator).goToHit === 'function' ? t as HitNavigator : undefined;
}

/** How the session answers (its sendResponse / sendErrorResponse). */
export interface Responder {
  ok(response: DebugProtocol.Response): void;
  fail(response: DebugProtocol.Response, message: DebugProtocol.Message): void;
}

/**
 * Answers one `_probeTimeline` / `_probeHistograms` / `_probeGoToHit`
 * request of `session` (whose `timeTravel` serves go-to) over `timeline`
 * (undefined: not launched, or no hit log on this machine).
 */
export function answerHitRequest(timeline: HitTimeline | undefined, session: object, command: HitRequestName,
  args: unknown, response: DebugProtocol.Response, reply: Responder): void {
  if (!timeline) return reply.fail(response, dapError('notLaunched'));
  const a = (args ?? {}) as Record<string, unknown>;
  const done = (body: unknown): void => { response.body = body; reply.ok(response); };
  const failed = (e: unknown): void => reply.fail(response, dapError('probeRequest', e, false));
  try {
    switch (command) {
      case HitRequest.timeline:
        if (a.sinceSeq !== undefined && (typeof a.sinceSeq !== 'number' || !Number.isFinite(a.sinceSeq))) {
          throw new Error(`${command} needs {"sinceSeq"?: number}`);
        }
        return done(timeline.timeline(a.sinceSeq as number | undefined));
      case HitRequest.histograms:
        return done(timeline.histograms());
      case HitRequest.goToHit:
        if (typeof a.seq !== 'number' || !Number.isInteger(a.seq)) throw new Error(`${command} needs {"seq": number}`);
        timeline.goToHit(a.seq, navigatorOf(session)).then(() => done(undefined), failed);
        return;
    }
  } catch (e) {
    failed(e);
  }
}
