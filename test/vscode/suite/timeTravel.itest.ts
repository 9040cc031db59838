import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import { activateExtension, endSession, markerLine, pageRequest, trackStops, until, workspaceFolder } from './util';

/** the top frame of a thread as the debugger shows it */
async function topFrame(session: vscode.DebugSession, threadId: number): Promise<DebugProtocol.StackFrame> {
  const st = await session.customRequest('stackTrace', { threadId, startFrame: 0, levels: 1 }) as DebugProtocol.StackTraceResponse['body'];
  return st.stackFrames[0];
}

suite('reverse execution in VS Code', () => {
  teardown(async () => {
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('Reverse Continue stops at the previous hit of the breakpoint; Step Back undoes a step', async () => {
    await activateExtension();
    const folder = workspaceFolder();
    const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
    const line = markerLine(fork.fsPath, 'do_fork_body');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)))]);
    const t = trackStops();
    try {
      assert.equal(await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE, request: 'launch', name: 'itest reverse', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
      }), true);
      await until(t.changed, () => t.stops.length >= 1, 'the first breakpoint stop');
      const session = vscode.debug.activeDebugSession!;
      const first = t.stops[0].body;
      assert.equal(first.reason, 'breakpoint');
      const firstFrame = await topFrame(session, first.threadId!);
      assert.equal(firstFrame.line, line);
      // two more hits forward; the second hit's frame is read while stopped there (by the third stop its CPU has moved on)
      let secondFrame: DebugProtocol.StackFrame | undefined;
      for (let n = 2; n <= 3; n++) {
        await vscode.commands.executeCommand('workbench.action.debug.continue');
        await until(t.changed, () => t.stops.length >= n, `breakpoint stop ${n}`);
        if (n === 2) secondFrame = await topFrame(session, t.stops[1].body.threadId!);
      }
      const second = t.stops[1].body;
      assert.ok(secondFrame);
      assert.equal(secondFrame.line, line);
      // the Debug toolbar's Reverse button
      await vscode.commands.executeCommand('workbench.action.debug.reverseContinue');
      await until(t.changed, () => t.stops.length >= 4, 'the stop after Reverse Continue');
      const back = t.stops[3].body;
      assert.equal(back.reason, 'breakpoint');
      assert.match(back.description ?? '', /Reverse continue: hit \d+ of do_fork/);
      assert.equal(back.threadId, second.threadId, 'the CPU of the previous hit');
      const backFrame = await topFrame(session, back.threadId!);
      assert.equal(backFrame.line, line);
      assert.equal(backFrame.instructionPointerReference, secondFrame.instructionPointerReference);
      // the editor shows the stop's source
      await until(vscode.window.onDidChangeActiveTextEditor, () => vscode.window.activeTextEditor?.document.uri.fsPath === fork.fsPath, 'fork.c in the editor');
      await pageRequest<{ path: string }>('screenshot/reverse-continue');
      // Step Back (instruction granularity through the DAP request the toolbar sends) and forward again
      await session.customRequest('stepIn', { threadId: back.threadId, granularity: 'instruction' });
      await until(t.changed, () => t.stops.length >= 5, 'the step');
      const stepped = await topFrame(session, back.threadId!);
      await vscode.commands.executeCommand('workbench.action.debug.stepBack');
      await until(t.changed, () => t.stops.length >= 6, 'the stop after Step Back');
      assert.equal(t.stops[5].body.reason, 'step');
      const after = await topFrame(session, back.threadId!);
      assert.notEqual(stepped.instructionPointerReference, after.instructionPointerReference);
    } finally {
      t.dispose();
    }
  });
});
