import * as vscode from 'vscode';
import { HitRequest, ProbeHistogramsBody } from '../adapter/dapCustom';
import { HitPanel, RenderedState } from './hitPanel';
import { ProbeStore } from './probeStore';

/** What the histogram script drew, counted from its DOM. */
export interface HistogramsRendered extends RenderedState {
  view: 'histograms';
  histograms: {
    probe: string;
    /** bucket bars drawn */
    bars: number;
    /** returns counted in the drawn bars */
    count: number;
    /** the bpftrace text shown */
    text: string;
  }[];
}

/**
 * Latency histograms (media/histograms.js): one per kretprobe of the shown
 * session, entry -> return virtual ns in log2 buckets, as bars and as the
 * text bpftrace's hist() prints (`_probeHistograms`).
 */
export class HistogramPanel extends HitPanel<HistogramsRendered> {
  constructor(store: ProbeStore, extensionUri: vscode.Uri, log: vscode.LogOutputChannel) {
    super(store, extensionUri, log, 'kprobe.histograms', 'Kretprobe Latency Histograms', 'histograms.js');
  }

  protected override async fetch(session: vscode.DebugSession, reset: boolean): Promise<void> {
    const body = await session.customRequest(HitRequest.histograms) as ProbeHistogramsBody;
    if (reset) this.post({ type: 'reset', title: `Kretprobe Latency Histograms: ${session.name}` });
    this.post({ type: 'histograms', histograms: body.histograms, empty: 'No kretprobe has returned yet: the histograms count entry -> return times of kretprobes.' });
  }
}
