/*
 * The program's variables in VS Code's own UI (not only in DAP replies):
 * stopped at a line of vfs_read (fs.c), the Variables view opens the
 * Arguments scope by itself and shows `count`'s value; hovering `count` in
 * the editor (VS Code's debug hover, the command behind Ctrl+K Ctrl+I)
 * evaluates it in the hover context and shows the same value. What VS Code
 * asked and what it got are read from a debug adapter tracker: the requests
 * are VS Code's, not the test's.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import { activateExtension, endSession, markerLine, until, workspaceFolder } from './util';

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
  /** responses to VS Code's requests of a command, with the request's arguments */
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
  stopped(): boolean {
    return this.fromAdapter.some(m => m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped');
  }
  dispose(): void { this.registration.dispose(); this.emitter.dispose(); }
}

suite('the program\'s variables in the Variables view and on hover', () => {
  let conv: Conversation;
  setup(() => { conv = new Conversation(); });
  teardown(async () => {
    conv.dispose();
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('stopped at a line of vfs_read: the Variables view shows the argument count, and hovering count shows the same value', async () => {
    await activateExtension();
    const folder = workspaceFolder();
    const fs = vscode.Uri.joinPath(folder.uri, 'kernel', 'fs.c');
    const line = markerLine(fs.fsPath, 'vfs_read_loop');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fs, new vscode.Position(line - 1, 0)))]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest variables', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
    });
    assert.equal(started, true);
    await until(conv.onMessage, () => conv.stopped(), 'the breakpoint stop');
    // VS Code shows the Run and Debug view at a breakpoint; make sure it is open
    await vscode.commands.executeCommand('workbench.view.debug');

    // the Variables view: VS Code asks for the top frame's scopes and opens the first one by itself
    type Scopes = { args: DebugProtocol.ScopesArguments; body: DebugProtocol.ScopesResponse['body'] };
    type Vars = { args: DebugProtocol.VariablesArguments; body: DebugProtocol.VariablesResponse['body'] };
    const argumentsScope = (): DebugProtocol.Scope | undefined => conv.answered<Scopes['args'], Scopes['body']>('scopes')[0]?.body.scopes.find(s => s.name === 'Arguments');
    const shownArgs = (): DebugProtocol.Variable[] | undefined => {
      const ref = argumentsScope()?.variablesReference;
      return conv.answered<Vars['args'], Vars['body']>('variables').find(v => v.args.variablesReference === ref)?.body.variables;
    };
    await until(conv.onMessage, () => shownArgs() !== undefined, 'VS Code listing the Arguments scope in the Variables view');
    const scopes = conv.answered<Scopes['args'], Scopes['body']>('scopes')[0].body.scopes.map(s => s.name);
    assert.equal(scopes[0], 'Arguments', scopes.join(', '));
    const args = shownArgs()!;
    assert.deepEqual(args.map(a => a.name), ['file', 'buf', 'count', 'pos']);
    const count = args.find(a => a.name === 'count')!;
    assert.equal(count.type, 'size_t');
    assert.match(count.value, /^[1-9]\d*$/, 'a read of some bytes');
    assert.match(args.find(a => a.name === 'file')!.value, /^0x[0-9a-f]+ <file_table\+\d+>$/, 'a pointer into the file table, as gdb prints it');

    // hover: the cursor on `count` in `while (done < count && ...)`, VS Code's debug hover
    const doc = await vscode.workspace.openTextDocument(fs);
    const editor = await vscode.window.showTextDocument(doc);
    const loopLine = doc.getText().split('\n').findIndex(l => /while \(done < count/.test(l));
    assert.ok(loopLine >= 0);
    const col = doc.lineAt(loopLine).text.indexOf('count') + 2;
    editor.selection = new vscode.Selection(loopLine, col, loopLine, col);
    type Eval = { args: DebugProtocol.EvaluateArguments; body: DebugProtocol.EvaluateResponse['body'] };
    const hovers = (): Eval[] => conv.answered<Eval['args'], Eval['body']>('evaluate').filter(e => e.args.context === 'hover');
    await vscode.commands.executeCommand('editor.debug.action.showDebugHover');
    await until(conv.onMessage, () => hovers().length > 0, 'VS Code evaluating the hovered word');
    const h = hovers()[0];
    assert.equal(h.args.expression, 'count');
    assert.equal(h.body.result, count.value);
    assert.equal(h.body.type, 'size_t');
  });
});
