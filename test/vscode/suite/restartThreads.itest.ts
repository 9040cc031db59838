/*
 * After a restart (DAP restart: VS Code keeps the session and its threads),
 * the Call Stack's labels are the new run's: a CPU that stopped at a
 * breakpoint before the restart and is idle at the restarted session's
 * entry stop is not labelled "PAUSED ON BREAKPOINT" (VS Code keeps a
 * thread's last reason until it is told the threads ran again).
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import { activateExtension, endSession, pageRequest, until, workspaceFolder, Tracker } from './util';

suite('restart: the threads\' stop labels', () => {
  let tracker: Tracker;
  setup(() => { tracker = new Tracker(); });
  teardown(async () => {
    tracker.dispose();
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('CPU 1 stopped at a breakpoint, then Restart stops at the entry: CPU 1 is not labelled as paused on a breakpoint', async () => {
    await activateExtension();
    const stops = (): DebugProtocol.StoppedEvent[] => tracker.events('stopped') as DebugProtocol.StoppedEvent[];
    const started = await vscode.debug.startDebugging(workspaceFolder(), {
      type: DEBUG_TYPE, request: 'launch', name: 'itest restart', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2, stopOnEntry: true,
    });
    assert.equal(started, true);
    await until(tracker.onMessage, () => stops().length > 0, 'the entry stop');
    const session = vscode.debug.activeDebugSession as vscode.DebugSession;
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('do_fork')]);
    // continue until CPU 1 (thread 2) is the one stopped at do_fork
    for (let i = 0; ; i++) {
      assert.ok(i < 40, 'CPU 1 reaches do_fork');
      const n = stops().length;
      await session.customRequest('continue', { threadId: stops()[n - 1].body.threadId });
      await until(tracker.onMessage, () => stops().length > n, 'a do_fork stop');
      const s = stops()[stops().length - 1];
      assert.equal(s.body.reason, 'breakpoint');
      if (s.body.threadId === 2) break;
    }
    await vscode.commands.executeCommand('workbench.view.debug');
    // VS Code labels CPU 1 with the stop's reason
    await pageRequest<{ name: string; state: string }[]>(`callstack-threads?thread=${encodeURIComponent('CPU 1')}&state=breakpoint`);

    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    const n = stops().length;
    await vscode.commands.executeCommand('workbench.action.debug.restart');
    await until(tracker.onMessage, () => stops().length > n, 'the entry stop of the restarted machine');
    assert.equal(stops()[n].body.reason, 'entry');
    assert.equal(stops()[n].body.threadId, 1);
    // once the Call Stack shows the entry stop on CPU 0: CPU 1's label
    const after = await pageRequest<{ name: string; state: string }[]>(`callstack-threads?thread=${encodeURIComponent('CPU 0')}&state=entry`);
    await pageRequest('screenshot/restart-thread-labels');
    const cpu1 = after.find(t => t.name.startsWith('CPU 1'));
    assert.ok(cpu1, JSON.stringify(after));
    assert.doesNotMatch(cpu1.state, /breakpoint/i, JSON.stringify(after));
  });
});
