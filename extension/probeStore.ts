import * as vscode from 'vscode';
import { ProbeEvent, ProbeRequest, ProbeRequestName, ProbeStateBody } from '../adapter/dapCustom';
import { ContextKey, DEBUG_TYPE } from './constants';

/**
 * Probe state per kprobe debug session, fed by the adapter's `_probeState`
 * events and by the responses of the `_probe*` requests. The views show the
 * state of the active kprobe session (else of the last one started). When
 * the shown session ends, its last state (the final hits/nmissed the
 * adapter sends before it terminates) stays shown, marked as ended
 * (`ended`), until the next kprobe session starts.
 */
export class ProbeStore implements vscode.Disposable {
  private readonly states = new Map<string, ProbeStateBody>();
  private readonly sessions = new Map<string, vscode.DebugSession>();
  private lastSessionId: string | undefined;
  /** the last state of the shown session once it ended (kept until the next launch) */
  private endedState: ProbeStateBody | undefined;
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly disposables: vscode.Disposable[] = [this.changeEmitter];

  constructor() {
    this.disposables.push(
      vscode.debug.onDidStartDebugSession(s => {
        if (s.type !== DEBUG_TYPE) return;
        this.sessions.set(s.id, s);
        this.lastSessionId = s.id;
        if (this.endedState) {
          this.endedState = undefined;
          this.changed();
        }
      }),
      vscode.debug.onDidReceiveDebugSessionCustomEvent(e => {
        if (e.session.type !== DEBUG_TYPE || e.event !== ProbeEvent.state) return;
        this.sessions.set(e.session.id, e.session);
        this.lastSessionId ??= e.session.id;
        this.update(e.session.id, e.body as ProbeStateBody);
      }),
      vscode.debug.onDidTerminateDebugSession(s => {
        const shown = this.session?.id === s.id;
        if (!this.sessions.delete(s.id)) return;
        const last = this.states.get(s.id);
        this.states.delete(s.id);
        if (shown && last) this.endedState = last;
        if (this.lastSessionId === s.id) this.lastSessionId = [...this.sessions.keys()].pop();
        this.changed();
      }),
      vscode.debug.onDidChangeActiveDebugSession(() => this.changed()),
    );
    void this.setContext();
  }

  /** The session the views show. */
  get session(): vscode.DebugSession | undefined {
    const active = vscode.debug.activeDebugSession;
    if (active?.type === DEBUG_TYPE && this.sessions.has(active.id)) return active;
    return this.lastSessionId ? this.sessions.get(this.lastSessionId) : undefined;
  }

  sessionById(id: string): vscode.DebugSession | undefined {
    return this.sessions.get(id);
  }

  /** The shown state: the shown session's, else the last state of the session that ended. */
  get state(): ProbeStateBody | undefined {
    const s = this.session;
    return s ? this.states.get(s.id) : this.endedState;
  }

  /** True when the views show the last state of an ended session (no session to send requests to). */
  get ended(): boolean {
    return !this.session && this.endedState !== undefined;
  }

  /** Sends a `_probe*` request to the shown session and applies the returned snapshot. */
  async request(command: ProbeRequestName, args?: object): Promise<ProbeStateBody> {
    const s = this.session;
    if (!s) throw new Error('no kprobe debug session is running');
    const body = await s.customRequest(command, args) as ProbeStateBody;
    this.update(s.id, body);
    return body;
  }

  refresh(): Promise<ProbeStateBody> {
    return this.request(ProbeRequest.list);
  }

  private update(sessionId: string, body: ProbeStateBody | undefined): void {
    if (!body || !Array.isArray(body.kprobes) || !Array.isArray(body.uprobes)) return;
    this.states.set(sessionId, body);
    this.changed();
  }

  private changed(): void {
    this.changeEmitter.fire();
    void this.setContext();
  }

  private async setContext(): Promise<void> {
    const st = this.state;
    await vscode.commands.executeCommand('setContext', ContextKey.sessionActive, !!st && !this.ended);
    await vscode.commands.executeCommand('setContext', ContextKey.globalEnabled, st?.enabled ?? true);
    await vscode.commands.executeCommand('setContext', ContextKey.optimization, st?.optimization ?? true);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
