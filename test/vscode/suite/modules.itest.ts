import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Command, DEBUG_TYPE } from '../../../extension/constants';
import type { ModuleNode } from '../../../extension/moduleTree';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, until, workspaceFolder, endSession } from './util';

suite('the Modules view', () => {
  let stops = 0;
  const emitter = new vscode.EventEmitter<void>();
  let tracker: vscode.Disposable;
  setup(() => {
    stops = 0;
    tracker = vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
      createDebugAdapterTracker: () => ({
        onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => {
          if (m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped') { stops++; emitter.fire(); }
        },
      }),
    });
  });
  teardown(async () => {
    tracker.dispose();
    await endSession();
  });

  test('a launch\'s module is listed; rmmod from the view removes it and the probe on its code becomes [GONE]', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const repo = vscode.Uri.joinPath(folder.uri, '..');
    // do_fork: stops all through the run, so the module can be seen live and unloaded before the kernel ends
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('hello_helper'), new vscode.FunctionBreakpoint('do_fork')]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest modules', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
      modules: [vscode.Uri.joinPath(repo, 'test', 'fixtures', 'modules', 'bin', 'hello-x86_64-gcc.ko').fsPath],
    });
    assert.equal(started, true);
    const session = vscode.debug.activeDebugSession as vscode.DebugSession;
    const rows = (): Extract<ModuleNode, { kind: 'module' }>[] =>
      api.modulesTree.getChildren().filter((n): n is Extract<ModuleNode, { kind: 'module' }> => n.kind === 'module');
    /** continue from the current stop to the next one */
    const step = async (): Promise<void> => {
      const n = stops;
      await session.customRequest('continue', { threadId: 1 });
      await until(emitter.event, () => stops > n, 'the next stop');
    };
    await until(emitter.event, () => stops > 0, 'the first stop');
    for (let i = 0; i < 20 && rows()[0]?.module.state !== 'live'; i++) await step();
    await until(api.probes.onDidChange, () => rows()[0]?.module.state === 'live' && rows()[0].module.probesIn === 1, 'hello live with one probe in it');
    const item = api.modulesTree.getTreeItem(rows()[0]);
    assert.match(String(item.label), /^hello {2}0x[0-9a-f]{16}$/);
    assert.match(String(item.description), /^\d+ bytes {2}live {2}1 probe in it$/);
    assert.equal(item.contextValue, 'kprobe.module.live');
    await vscode.commands.executeCommand(Command.unloadModule, rows()[0]);
    for (let i = 0; i < 100 && rows().length > 0; i++) await step(); // the rmmod thread runs at the next scheduling tick
    await until(api.probes.onDidChange, () => rows().length === 0, 'hello gone from the Modules view');
    const gone = (): boolean => api.kprobesTree.getChildren().some((n: ProbeNode) => n.kind === 'probe' && n.probe.gone);
    await until(api.probes.onDidChange, gone, 'the probe on hello_helper [GONE] in the Kprobes view');
  });
});
