import * as vscode from 'vscode';
import { HitRequest, ProbeHitsChangedBody, ProbeTimelineBody } from '../adapter/dapCustom';
import { HitPanel, RenderedState } from './hitPanel';
import { ProbeStore } from './probeStore';

/** What the timeline script drew, counted from its DOM. */
export interface TimelineRendered extends RenderedState {
  view: 'timeline';
  /** hits drawn (the sum of the marks' counts) */
  hits: number;
  /** marks drawn (hits in one pixel column of a lane and kind share one) */
  marks: number;
  /** hits drawn per kind */
  kinds: Record<string, number>;
  /** CPU lanes drawn */
  lanes: number;
  /** seq of the hit the position marker is drawn at */
  markerSeq?: number;
  /** the first hit's seq of each mark, left to right: increasing (the x axis is the machine's instruction count) */
  seqByX: number[];
  lastSeq: number;
  dropped: number;
}

/**
 * The probe-hit timeline (media/timeline.js): one lane per CPU, the hits of
 * the session's hit log by the machine-wide instruction count at each (the
 * log's order: every CPU has its own clock, so by time the lanes disagree). The webview gets the log
 * incrementally (`_probeTimeline { sinceSeq }`), from scratch when the
 * shown session changes or restarted (its sequence numbers went back). A
 * click on a hit asks the adapter to go there (`_probeGoToHit`); the stop
 * that follows shows its source.
 */
export class TimelinePanel extends HitPanel<TimelineRendered> {
  /** newest seq the webview holds */
  private lastSeq = 0;
  private readonly goToEmitter = new vscode.EventEmitter<GoToOutcome>();
  /** a go-to-hit (a click on a hit, or goToHit()) ended */
  readonly onDidGoTo = this.goToEmitter.event;

  constructor(store: ProbeStore, extensionUri: vscode.Uri, log: vscode.LogOutputChannel) {
    super(store, extensionUri, log, 'kprobe.timeline', 'Probe Hit Timeline', 'timeline.js');
  }

  protected override onHitsChanged(body: ProbeHitsChangedBody): void {
    // a restarted machine counts from 1 again
    this.refresh(body.lastSeq < this.lastSeq);
  }

  protected override async fetch(session: vscode.DebugSession, reset: boolean): Promise<void> {
    const args = reset ? {} : { sinceSeq: this.lastSeq };
    let body = await session.customRequest(HitRequest.timeline, args) as ProbeTimelineBody;
    if (!reset && body.lastSeq < this.lastSeq) {
      reset = true;
      body = await session.customRequest(HitRequest.timeline, {}) as ProbeTimelineBody;
    }
    if (reset) {
      this.lastSeq = 0;
      this.post({ type: 'reset', title: `Probe Hit Timeline: ${session.name}`, empty: 'No probe hits recorded yet.' });
    }
    this.lastSeq = body.lastSeq;
    this.post({ type: 'hits', hits: body.hits, dropped: body.dropped, lastSeq: body.lastSeq, nowSeq: body.nowSeq });
  }

  protected override onViewMessage(m: { type?: unknown; seq?: unknown }): void {
    if (m.type === 'goto' && typeof m.seq === 'number') void this.goToHit(m.seq);
  }

  /**
   * Ask the shown session to go to hit `seq` (time travel); the `stopped`
   * event that follows reveals its source. A failure is shown as an error
   * message and in the panel's status. Resolves with the outcome (also
   * fired on onDidGoTo).
   */
  async goToHit(seq: number): Promise<GoToOutcome> {
    const s = this.store.session;
    let outcome: GoToOutcome;
    try {
      if (!s) throw new Error('no kprobe debug session is running');
      await s.customRequest(HitRequest.goToHit, { seq });
      this.post({ type: 'status', text: `at hit #${seq}` });
      outcome = { seq };
    } catch (e) {
      // the adapter's messages start with 'kprobe: '
      const msg = (e instanceof Error ? e.message : String(e)).replace(/^kprobe: /, '');
      this.post({ type: 'status', text: `cannot go to hit #${seq}: ${msg}` });
      void vscode.window.showErrorMessage(`kprobe: cannot go to hit #${seq}: ${msg}`);
      outcome = { seq, error: msg };
    }
    this.goToEmitter.fire(outcome);
    return outcome;
  }

  override dispose(): void {
    this.goToEmitter.dispose();
    super.dispose();
  }
}

/** How a go-to-hit request ended: `error` set when the adapter refused it. */
export interface GoToOutcome {
  seq: number;
  error?: string;
}
