import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as vscode from 'vscode';
import type { KprobeExtensionApi } from '../../../extension/extension';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE, EXTENSION_ID } from '../../../extension/constants';

export async function activateExtension(): Promise<{ ext: vscode.Extension<KprobeExtensionApi>; api: KprobeExtensionApi }> {
  const ext = vscode.extensions.getExtension<KprobeExtensionApi>(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not installed in the test VS Code`);
  const api = await ext.activate();
  return { ext, api };
}

export function workspaceFolder(): vscode.WorkspaceFolder {
  const f = vscode.workspace.workspaceFolders?.[0];
  if (!f) throw new Error('the integration tests need a workspace folder (examples/)');
  return f;
}

/** Resolves with the next value `event` fires, or rejects after `ms` naming `what`. */
export function nextEvent<T>(event: vscode.Event<T>, what: string, ms = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out waiting for ${what}`)); }, ms);
    const sub = event(v => { clearTimeout(timer); sub.dispose(); resolve(v); });
  });
}

/** Collects what `event` fires while `fn` runs. */
export async function collect<T, R>(event: vscode.Event<T>, fn: () => Thenable<R> | Promise<R>): Promise<{ result: R; fired: T[] }> {
  const fired: T[] = [];
  const sub = event(v => fired.push(v));
  try {
    return { result: await fn(), fired };
  } finally {
    sub.dispose();
  }
}

/** The line (1-based) of a `#BP name` marker comment in a source file. */
export function markerLine(file: string, name: string): number {
  const i = readFileSync(file, 'utf8').split('\n').findIndex(l => l.includes(`/* #BP ${name} */`));
  if (i < 0) throw new Error(`marker #BP ${name} not found in ${file}`);
  return i + 1;
}

/** Waits until `cond()` holds, re-checking whenever `event` fires; rejects after `ms` naming `what`. */
export function until<T>(event: vscode.Event<T>, cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  if (cond()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out waiting for ${what}`)); }, ms);
    const sub = event(() => {
      if (!cond()) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

/** Remove every breakpoint and stop the active debug session, waiting for its end (suite teardown). */
export async function endSession(): Promise<void> {
  vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
  if (!vscode.debug.activeDebugSession) return;
  let sub: vscode.Disposable | undefined;
  const ended = new Promise<void>(r => { sub = vscode.debug.onDidTerminateDebugSession(() => { sub?.dispose(); r(); }); });
  try {
    await vscode.debug.stopDebugging();
  } catch (e) {
    // the session ended on its own while the stop was on its way: VS Code cancels the stop, and the session is gone all the same
    if (!/Canceled/.test(String(e))) throw e;
  }
  if (vscode.debug.activeDebugSession) await ended;
  else sub?.dispose();
}

/**
 * The `stopped` events the kprobe adapter sends, collected while the
 * tracker is registered: `stops` fills up, `changed` fires on each.
 */
export function trackStops(): { stops: DebugProtocol.StoppedEvent[]; changed: vscode.Event<void>; dispose(): void } {
  const stops: DebugProtocol.StoppedEvent[] = [];
  const emitter = new vscode.EventEmitter<void>();
  const tracker = vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
    createDebugAdapterTracker: () => ({
      onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => {
        if (m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped') { stops.push(m as DebugProtocol.StoppedEvent); emitter.fire(); }
      },
    }),
  });
  return { stops, changed: emitter.event, dispose: () => { tracker.dispose(); emitter.dispose(); } };
}

/** DAP messages the kprobe adapter sent, seen through a tracker registered while the test runs. */
export class Tracker {
  readonly messages: DebugProtocol.ProtocolMessage[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onMessage = this.emitter.event;
  readonly registration = vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
    createDebugAdapterTracker: () => ({
      onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => { this.messages.push(m); this.emitter.fire(); },
    }),
  });
  events(name: string): DebugProtocol.Event[] {
    return this.messages.filter((m): m is DebugProtocol.Event => m.type === 'event' && (m as DebugProtocol.Event).event === name);
  }
  dispose(): void { this.registration.dispose(); this.emitter.dispose(); }
}

/** 1-based line of the first line of `file` containing `text`. */
export function lineOf(file: string, text: string): number {
  const i = readFileSync(file, 'utf8').split('\n').findIndex(l => l.includes(text));
  if (i < 0) throw new Error(`"${text}" not found in ${file}`);
  return i + 1;
}

/** GET a page-bridge route of test/vscode/run.mjs (a page action, `screenshot/NAME` into test-output/vscode/). */
export function pageRequest<T>(name: string): Promise<T> {
  const bridge = process.env.KPROBE_ITEST_PAGE_BRIDGE;
  if (!bridge) return Promise.reject(new Error('KPROBE_ITEST_PAGE_BRIDGE: run through test/vscode/run.mjs'));
  return new Promise((resolve, reject) => {
    http.get(`${bridge}/${name}`, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', c => { body += c; });
      res.on('end', () => {
        const v = JSON.parse(body) as T & { error?: string };
        if (res.statusCode !== 200) reject(new Error(`page bridge ${name}: ${v.error ?? res.statusCode}`));
        else resolve(v);
      });
    }).on('error', reject);
  });
}
