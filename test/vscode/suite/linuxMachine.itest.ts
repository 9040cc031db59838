import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import { Tracker, endSession, pageRequest, until, workspaceFolder } from './util';
import { unfetched } from '../../util/fetched';

/**
 * Debian's own kernel on the full-system PC from VS Code: a launch.json with
 * `kernel`, `initrd`, `vmlinux`, `append`; the guest's console in the Debug
 * Console (screenshot test-output/vscode/linux-debug-console.png); a
 * function breakpoint on calibrate_delay (early in start_kernel, after the
 * console has printed the kernel's banner) stops the machine there.
 * The kernel, initramfs and vmlinux are fetched (test/linux/fetch-kernel.sh,
 * make-initramfs.sh, dbg/fetch-vmlinux-dbg.sh): missing, the test is
 * skipped outside CI and fails in CI.
 */
suite('the Linux machine in VS Code', () => {
  let tracker: Tracker;
  setup(() => { tracker = new Tracker(); });
  teardown(async () => { tracker.dispose(); await endSession(); });

  test('its console in the Debug Console, then a function breakpoint stops it', async function () {
    this.timeout(600_000);
    const repo = path.dirname(workspaceFolder().uri.fsPath);
    const files = {
      kernel: path.join(repo, 'test', 'linux', 'cache', 'vmlinuz'),
      initrd: path.join(repo, 'test', 'linux', 'cache', 'initramfs.cpio.gz'),
      vmlinux: path.join(repo, 'test', 'linux', 'dbg', 'cache', 'vmlinux'),
    };
    const missing = Object.values(files).filter(f => !existsSync(f));
    if (missing.length) return unfetched(this, `missing ${missing.join(', ')}`);
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('calibrate_delay')]);
    const started = await vscode.debug.startDebugging(workspaceFolder(), {
      type: DEBUG_TYPE, request: 'launch', name: 'itest Linux', ...files, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256,
    });
    assert.equal(started, true);
    const stdout = (): string => tracker.events('output').filter(e => (e as DebugProtocol.OutputEvent).body.category === 'stdout')
      .map(e => String((e as DebugProtocol.OutputEvent).body.output)).join('');
    await until(tracker.onMessage, () => tracker.events('stopped').length > 0, 'the stop at calibrate_delay', 540_000);
    const stop = tracker.events('stopped')[0] as DebugProtocol.StoppedEvent;
    assert.equal(stop.body.reason, 'function breakpoint', stop.body.description);
    assert.match(stdout(), /Linux version 6\.1\.\S+-cloud-amd64/);
    const session = vscode.debug.activeDebugSession!;
    const frames = await session.customRequest('stackTrace', { threadId: stop.body.threadId }) as DebugProtocol.StackTraceResponse['body'];
    assert.equal(frames.stackFrames[0].name, 'calibrate_delay');
    assert.ok(frames.stackFrames.some(f => /^start_kernel\+0x/.test(f.name)), frames.stackFrames.map(f => f.name).join(' <- '));
    // VS Code asks for the threads after the stop: CPU 0 runs the boot's first task (current->comm, pid from the vmlinux's DWARF)
    const stopAt = tracker.messages.indexOf(stop);
    const threadsAfterStop = (): DebugProtocol.ThreadsResponse | undefined => tracker.messages.slice(stopAt)
      .find((m): m is DebugProtocol.ThreadsResponse => m.type === 'response' && (m as DebugProtocol.Response).command === 'threads');
    await until(tracker.onMessage, () => threadsAfterStop() !== undefined, 'the threads after the stop', 120_000);
    assert.deepEqual(threadsAfterStop()!.body.threads.map(t => t.name), ['CPU 0: swapper/0 [0]']);
    // the Debug Console shows the guest's latest console line
    await vscode.commands.executeCommand('workbench.debug.action.focusRepl');
    const last = stdout().trimEnd().split('\n').pop()!.trim();
    await pageRequest<string>(`repl-text?includes=${encodeURIComponent(last)}`);
    await pageRequest('screenshot/linux-debug-console');
  });
});
