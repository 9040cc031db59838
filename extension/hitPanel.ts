import * as vscode from 'vscode';
import { ProbeEvent, ProbeHitsChangedBody } from '../adapter/dapCustom';
import { MEDIA_DIR, hitViewHtml } from './webviewHtml';
import { ProbeStore } from './probeStore';

/** What a hit view's script drew, as it reports it from its DOM ({type:'rendered', ...}). */
export interface RenderedState {
  view: string;
  /** the text shown instead of a drawing (no session, no hits) */
  empty?: string;
  [key: string]: unknown;
}

/** Shown when no kprobe session exists (the views keep an ended session's last data). */
export const NO_SESSION_TEXT = 'No kprobe debug session: start one to record probe hits.';

/**
 * A webview panel showing data of the probe-hit log of the shown kprobe
 * session (ProbeStore.session): opened by a command, refreshed on the
 * adapter's `_probeHitsChanged` events (live while the kernel runs, and at
 * each stop) and when the shown session changes. Refreshes never overlap:
 * a change that comes during one makes one more. When the session ends the
 * panel keeps its last data. The script's `rendered` reports are kept
 * (lastRendered, onDidRender) so tests can see what it drew.
 */
export abstract class HitPanel<R extends RenderedState> implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  /** id of the session whose data the webview holds */
  protected shownSession: string | undefined;
  private busy = false;
  private again = false;
  private resetNext = false;
  private rendered: R | undefined;
  private readonly renderEmitter = new vscode.EventEmitter<R>();
  /** the webview drew (its counts read back from its DOM) */
  readonly onDidRender = this.renderEmitter.event;
  private readonly disposables: vscode.Disposable[] = [this.renderEmitter];

  constructor(
    protected readonly store: ProbeStore,
    private readonly extensionUri: vscode.Uri,
    protected readonly log: vscode.LogOutputChannel,
    private readonly viewType: string,
    private readonly title: string,
    private readonly script: string,
  ) {
    this.disposables.push(
      store.onDidChange(() => {
        const s = store.session;
        if (this.panel && s && s.id !== this.shownSession) this.refresh(true);
      }),
      vscode.debug.onDidReceiveDebugSessionCustomEvent(e => {
        if (!this.panel || e.event !== ProbeEvent.hitsChanged || e.session.id !== this.store.session?.id) return;
        this.onHitsChanged(e.body as ProbeHitsChangedBody);
      }),
      vscode.debug.onDidTerminateDebugSession(s => {
        if (this.panel && s.id === this.shownSession) this.post({ type: 'status', text: '(session ended)' });
      }),
    );
  }

  /** The last `rendered` report of the webview (undefined: it never drew). */
  get lastRendered(): R | undefined { return this.rendered; }

  get visible(): boolean { return this.panel !== undefined; }

  /** Open the panel (or reveal it) and load the shown session's data. */
  show(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      this.refresh(false);
      return;
    }
    const panel = vscode.window.createWebviewPanel(this.viewType, this.title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, MEDIA_DIR)],
    });
    this.panel = panel;
    this.shownSession = undefined;
    this.rendered = undefined;
    panel.webview.onDidReceiveMessage(m => this.onMessage(m as { type?: unknown }), undefined, this.disposables);
    panel.onDidDispose(() => { if (this.panel === panel) this.panel = undefined; }, undefined, this.disposables);
    panel.webview.html = hitViewHtml(panel.webview, this.extensionUri, this.title, this.script);
  }

  protected post(message: object): void {
    void this.panel?.webview.postMessage(message);
  }

  /** New hits in the shown session's log (or a new machine: lastSeq went back). */
  protected onHitsChanged(body: ProbeHitsChangedBody): void {
    void body;
    this.refresh(false);
  }

  /** Load the shown session's data into the webview; `reset`: from scratch. */
  protected refresh(reset: boolean): void {
    this.resetNext ||= reset;
    if (this.busy) { this.again = true; return; }
    this.busy = true;
    void (async () => {
      try {
        do {
          this.again = false;
          const full = this.resetNext;
          this.resetNext = false;
          await this.load(full);
        } while (this.again && this.panel);
      } finally {
        this.busy = false;
      }
    })();
  }

  private async load(reset: boolean): Promise<void> {
    const s = this.store.session;
    if (!s) {
      // no session: keep what an ended session left; an empty panel says why
      if (this.shownSession === undefined) this.post({ type: 'reset', title: this.title, empty: NO_SESSION_TEXT });
      return;
    }
    if (s.id !== this.shownSession) {
      reset = true;
      this.shownSession = s.id;
    }
    try {
      await this.fetch(s, reset);
    } catch (e) {
      if (this.shownSession !== s.id) return;
      // the session ended while asking: its last data stays
      const msg = e instanceof Error ? e.message : String(e);
      this.log.warn(`${this.viewType}: ${msg}`);
      this.post({ type: 'status', text: msg });
    }
  }

  /** Ask `session` for the data and post it to the webview (`reset`: a `reset` message first). */
  protected abstract fetch(session: vscode.DebugSession, reset: boolean): Promise<void>;

  /** A message of the view's own (besides ready / rendered). */
  protected onViewMessage(message: { type?: unknown }): void { void message; }

  private onMessage(m: { type?: unknown }): void {
    switch (m?.type) {
      case 'ready':
        // a (re)loaded page holds nothing: send everything
        this.shownSession = undefined;
        this.refresh(true);
        return;
      case 'rendered':
        this.rendered = m as unknown as R;
        this.renderEmitter.fire(this.rendered);
        return;
      default:
        this.onViewMessage(m);
    }
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
