import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import { endSession, markerLine, pageRequest, workspaceFolder } from './util';

/** Every DAP request VS Code sent and every message the adapter sent, in order. */
class Transcript {
  readonly requests: DebugProtocol.Request[] = [];
  readonly sent: DebugProtocol.ProtocolMessage[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onChange = this.emitter.event;
  private readonly registration = vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
    createDebugAdapterTracker: () => ({
      onWillReceiveMessage: (m: DebugProtocol.ProtocolMessage) => { if (m.type === 'request') this.requests.push(m as DebugProtocol.Request); this.emitter.fire(); },
      onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => { this.sent.push(m); this.emitter.fire(); },
    }),
  });
  response<T extends DebugProtocol.Response>(req: DebugProtocol.Request): T | undefined {
    return this.sent.find((m): m is T => m.type === 'response' && (m as DebugProtocol.Response).request_seq === req.seq);
  }
  /** resolves once cond() holds, re-checked on every message; rejects after ms naming what */
  until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out waiting for ${what}`)); }, ms);
      const sub = this.onChange(() => {
        if (!cond()) return;
        clearTimeout(timer);
        sub.dispose();
        resolve();
      });
    });
  }
  dispose(): void { this.registration.dispose(); this.emitter.dispose(); }
}

suite('built-in Disassembly view', () => {
  let t: Transcript;
  setup(() => { t = new Transcript(); });
  teardown(async () => {
    t.dispose();
    // close the Disassembly view first: left open, it keeps asking the next sessions for instructions
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.getConfiguration('debug').update('disassemblyView.showSourceCode', undefined, vscode.ConfigurationTarget.Global);
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('stopped inside do_fork, Open Disassembly View highlights the instruction at the pc', async () => {
    // The view renders a row with a source location only after opening that
    // file as a text model through URI.file(path); in the browser workbench
    // (code-server) file: URIs do not resolve, the render is abandoned and
    // the row keeps a recycled instruction's text. Rows without source are
    // rendered synchronously: switch the interleaved source off for this test.
    await vscode.workspace.getConfiguration('debug').update('disassemblyView.showSourceCode', false, vscode.ConfigurationTarget.Global);
    const folder = workspaceFolder();
    const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
    const line = markerLine(fork.fsPath, 'do_fork_body');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)))]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest disassembly', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 1,
    });
    assert.equal(started, true);
    await t.until(() => t.sent.some(m => m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped'), 'the breakpoint stop');
    const session = vscode.debug.activeDebugSession!;
    const stop = t.sent.find(m => m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped') as DebugProtocol.StoppedEvent;
    const trace = await session.customRequest('stackTrace', { threadId: stop.body.threadId }) as DebugProtocol.StackTraceResponse['body'];
    const pc = trace.stackFrames[0].instructionPointerReference!;
    assert.match(trace.stackFrames[0].name, /do_fork/);
    assert.ok(pc, 'the top frame has an instruction pointer reference');

    await vscode.commands.executeCommand('debug.action.openDisassemblyView');

    // DAP level: the view's load around the pc, and the reply holds the pc at index -instructionOffset
    const isLoad = (r: DebugProtocol.Request) => r.command === 'disassemble' && (r.arguments as DebugProtocol.DisassembleArguments).memoryReference === pc
      && ((r.arguments as DebugProtocol.DisassembleArguments).offset ?? 0) === 0 && ((r.arguments as DebugProtocol.DisassembleArguments).instructionOffset ?? 0) < 0;
    await t.until(() => t.requests.some(r => isLoad(r) && t.response(r) !== undefined), 'the Disassembly view\'s disassemble request around the pc');
    for (const r of t.requests.filter(isLoad)) {
      const args = r.arguments as DebugProtocol.DisassembleArguments;
      const reply = t.response<DebugProtocol.DisassembleResponse>(r)!;
      assert.equal(reply.body?.instructions.length, args.instructionCount);
      assert.equal(BigInt(reply.body!.instructions[-args.instructionOffset!].address), BigInt(pc), `disassemble ${JSON.stringify(args)}`);
    }

    // what the user sees: the row marked as the top stack frame shows the pc
    const row = await pageRequest<{ text: string; background: string }>('disassembly-current-row');
    const shown = /^\s*(0x[0-9a-f]+)/i.exec(row.text);
    assert.ok(shown, `highlighted row "${row.text}" starts with an address`);
    assert.equal(BigInt(shown[1]), BigInt(pc), `highlighted row: ${row.text}`);
    assert.notEqual(row.background, 'transparent', 'the row has the top stack frame background');
  });
});
