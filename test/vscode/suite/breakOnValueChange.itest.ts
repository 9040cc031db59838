/*
 * Break on Value Change in VS Code's own UI: stopped in do_fork, the
 * Variables view's Globals scope is expanded and its nr_forks row
 * right-clicked through the page (test/vscode/run.mjs variables-menu);
 * VS Code asks the adapter dataBreakpointInfo for the row (its scope's
 * variablesReference and the name) and, once the menu entry is clicked,
 * setDataBreakpoints; Continue stops after the next write to nr_forks.
 * The requests are VS Code's (read from a debug adapter tracker), not the
 * test's.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import { activateExtension, endSession, pageRequest, until, workspaceFolder } from './util';

/** Both directions of the DAP conversation VS Code holds with the adapter. */
class Conversation {
  readonly requests: DebugProtocol.Request[] = [];
  readonly fromAdapter: DebugProtocol.ProtocolMessage[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onMessage = this.emitter.event;
  readonly registration = vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
    createDebugAdapterTracker: () => ({
      onWillReceiveMessage: (m: DebugProtocol.ProtocolMessage) => { if (m.type === 'request') this.requests.push(m as DebugProtocol.Request); this.emitter.fire(); },
      onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => { this.fromAdapter.push(m); this.emitter.fire(); },
    }),
  });
  answered<A, B>(command: string): { args: A; body: B }[] {
    const out: { args: A; body: B }[] = [];
    for (const m of this.fromAdapter) {
      const r = m as DebugProtocol.Response;
      if (m.type !== 'response' || r.command !== command || !r.success) continue;
      const req = this.requests.find(q => q.seq === r.request_seq);
      if (req) out.push({ args: req.arguments as A, body: r.body as B });
    }
    return out;
  }
  stops(): DebugProtocol.StoppedEvent[] {
    return this.fromAdapter.filter((m): m is DebugProtocol.StoppedEvent => m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped');
  }
  dispose(): void { this.registration.dispose(); this.emitter.dispose(); }
}

suite('Break on Value Change from the Variables view', () => {
  let conv: Conversation;
  setup(() => { conv = new Conversation(); });
  teardown(async () => {
    conv.dispose();
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('right-click nr_forks in the Globals scope > Break on Value Change: the next fork stops after its write', async () => {
    await activateExtension();
    const folder = workspaceFolder();
    const fb = new vscode.FunctionBreakpoint('do_fork');
    vscode.debug.addBreakpoints([fb]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest break on value change', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 1,
    });
    assert.equal(started, true);
    await until(conv.onMessage, () => conv.stops().length > 0, 'the do_fork stop');
    await vscode.commands.executeCommand('workbench.view.debug');
    type Scopes = { args: DebugProtocol.ScopesArguments; body: DebugProtocol.ScopesResponse['body'] };
    await until(conv.onMessage, () => conv.answered<Scopes['args'], Scopes['body']>('scopes').length > 0, 'VS Code asking for the scopes');
    const globals = conv.answered<Scopes['args'], Scopes['body']>('scopes')[0].body.scopes.find(s => s.name === 'Globals');
    assert.ok(globals, 'a Globals scope');
    vscode.debug.removeBreakpoints([fb]);

    const menu = await pageRequest<{ offered: string[] }>(`variables-menu?expand=Globals&name=nr_forks&item=${encodeURIComponent('Break on Value Change')}`)
      .catch(async (e: unknown) => { await pageRequest('screenshot/break-on-value-change-menu-failed'); throw e; });
    assert.ok(menu.offered.includes('Break on Value Change'), menu.offered.join(' | '));
    type Info = { args: DebugProtocol.DataBreakpointInfoArguments; body: DebugProtocol.DataBreakpointInfoResponse['body'] };
    type SetData = { args: DebugProtocol.SetDataBreakpointsArguments; body: DebugProtocol.SetDataBreakpointsResponse['body'] };
    const infos = conv.answered<Info['args'], Info['body']>('dataBreakpointInfo');
    const info = infos.find(i => i.args.name === 'nr_forks');
    assert.ok(info, JSON.stringify(infos));
    assert.equal(info.args.variablesReference, globals.variablesReference, 'asked for the row of the Globals scope');
    assert.match(info.body.dataId ?? '', /\/8$/, info.body.description);
    const setData = (): SetData[] => conv.answered<SetData['args'], SetData['body']>('setDataBreakpoints').filter(s => s.args.breakpoints.length > 0);
    await until(conv.onMessage, () => setData().length > 0, 'VS Code setting the data breakpoint');
    const set = setData()[setData().length - 1];
    assert.deepEqual(set.args.breakpoints.map(b => [b.dataId, b.accessType]), [[info.body.dataId, 'write']]);
    assert.equal(set.body.breakpoints[0].verified, true);

    const n = conv.stops().length;
    await vscode.commands.executeCommand('workbench.action.debug.continue');
    await until(conv.onMessage, () => conv.stops().length > n, 'the data breakpoint stop');
    const stop = conv.stops()[n];
    assert.equal(stop.body.reason, 'data breakpoint');
    assert.match(String(stop.body.description), /^watchpoint DR0 hit: write to nr_forks \(0x[0-9a-f]+\): (\d+) -> (\d+)$/);
    await until(vscode.debug.onDidChangeActiveStackItem, () => vscode.debug.activeStackItem instanceof vscode.DebugStackFrame, 'VS Code showing the stopped frame');
    await pageRequest('screenshot/break-on-value-change');
  });
});
