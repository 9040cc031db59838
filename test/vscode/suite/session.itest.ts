import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeDebugfsBody, ProbeRequest, UprobeInfo, emptyProbeState } from '../../../adapter/dapCustom';
import { Command, DEBUG_TYPE, DISASSEMBLY_SCHEME } from '../../../extension/constants';
import { ProbeTreeProvider } from '../../../extension/probeTree';
import type { ProbeNode } from '../../../extension/probeTree';
import type { ProbeStore } from '../../../extension/probeStore';
import { Tracker, activateExtension, markerLine, workspaceFolder, until, endSession } from './util';


suite('debug session with the Kprobes view', () => {
  let tracker: Tracker;
  setup(() => { tracker = new Tracker(); });
  teardown(async () => {
    tracker.dispose();
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('a gutter breakpoint in fork.c stops the kernel and shows up as a kprobe in the view', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
    const line = markerLine(fork.fsPath, 'do_fork_body');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)))]);

    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest boot', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
    });
    assert.equal(started, true);
    await until(tracker.onMessage, () => tracker.events('stopped').length > 0, 'the breakpoint stop');
    const stop = tracker.events('stopped')[0] as DebugProtocol.StoppedEvent;
    assert.equal(stop.body.reason, 'breakpoint');

    // The view reads the adapter's _probeState events.
    const probeNodes = () => api.kprobesTree.getChildren().filter((n): n is Extract<ProbeNode, { kind: 'probe' }> => n.kind === 'probe');
    await until(api.probes.onDidChange, () => probeNodes().some(n => n.probe.nhit >= 1), 'the probe with one hit in the Kprobes view');
    const node = probeNodes()[0];
    const item = api.kprobesTree.getTreeItem(node);
    // the row is the engine's debugfs list line for this probe, then the counters
    const listLine = async (): Promise<string> => {
      const session = api.probes.session;
      assert.ok(session, 'the view has a session');
      const body = await session.customRequest(ProbeRequest.debugfs) as ProbeDebugfsBody;
      const px = BigInt(node.probe.address).toString(16).padStart(16, '0');
      const lines = body.list.split('\n').filter(l => l.startsWith(`${px}  k  `));
      assert.equal(lines.length, 1, body.list);
      return lines[0].trimEnd();
    };
    const hits = node.probe.nhit;
    // the label keeps what survives the side bar's cut, the tooltip the whole debugfs line and counters
    assert.equal(String(item.tooltip).split('\n')[0], `${await listLine()}  hits ${hits}, missed 0`);
    assert.match(String(item.label), new RegExp(`^k do_fork\\+0x[0-9a-f]+ ${hits}/0$`));
    assert.equal(item.description, `hits/missed  ${BigInt(node.probe.address).toString(16).padStart(16, '0')}`);
    assert.equal(item.contextValue, 'kprobe.probe.enabled');
    assert.equal(node.probe.source?.line, line);
    assert.equal(node.probe.source?.path, fork.fsPath);

    // Uprobes view: empty state.
    const up = api.uprobesTree.getChildren();
    assert.equal(up.length, 1);
    assert.equal(api.uprobesTree.getTreeItem(up[0]).label, 'No uprobes registered');

    // Per-probe command and title actions go through the _probe* requests.
    await vscode.commands.executeCommand(Command.disableProbe, node);
    assert.equal(api.probes.state?.kprobes[0].enabled, false);
    const disabledItem = api.kprobesTree.getTreeItem(probeNodes()[0]);
    assert.equal(disabledItem.contextValue, 'kprobe.probe.disabled');
    const disabledLine = await listLine();
    assert.ok(disabledLine.endsWith('[DISABLED]'), disabledLine);
    assert.equal(String(disabledItem.tooltip).split('\n')[0], `${disabledLine}  hits ${probeNodes()[0].probe.nhit}, missed 0`);
    assert.match(String(disabledItem.label), / \[DISABLED\] \d+\/0$/);
    await vscode.commands.executeCommand(Command.disableOptimization);
    assert.equal(api.probes.state?.optimization, false);
    await vscode.commands.executeCommand(Command.disableAll);
    assert.equal(api.probes.state?.enabled, false);
    await vscode.commands.executeCommand(Command.enableAll);
    assert.equal(api.probes.state?.enabled, true);

    // Disassembly around the probe, from the adapter's disassemble request.
    const editor = await vscode.commands.executeCommand<vscode.TextEditor>(Command.openDisassembly, probeNodes()[0]);
    assert.equal(editor?.document.uri.scheme, DISASSEMBLY_SCHEME);
    const marked = editor.document.getText().split('\n').find(l => l.startsWith('=>'));
    assert.ok(marked, 'the probed instruction is marked');
    assert.ok(marked.includes(node.probe.address), marked);
    assert.ok(marked.includes('<do_fork+0x'), marked);
    // the original instruction, and the (disabled) probe's patch state noted
    assert.match(marked, /; kprobe at do_fork\+0x[0-9a-f]+ \[DISABLED\]: no int3 written$/);

    // Reveal source: the probe's DWARF line in fork.c.
    await vscode.commands.executeCommand(Command.revealSource, probeNodes()[0]);
    const active = vscode.window.activeTextEditor;
    assert.equal(active?.document.uri.fsPath, fork.fsPath);
    assert.equal(active.selection.active.line, line - 1);

    // Unregister: the view goes back to its empty state.
    await vscode.commands.executeCommand(Command.unregisterProbe, probeNodes()[0]);
    assert.equal(probeNodes().length, 0);
    assert.equal(api.kprobesTree.getTreeItem(api.kprobesTree.getChildren()[0]).label, 'No kprobes registered');
  });

  test('a logpoint prints its message in the Debug Console without stopping', async () => {
    await activateExtension();
    const folder = workspaceFolder();
    const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
    const line = markerLine(fork.fsPath, 'do_fork_body');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)), true, undefined, undefined, 'itest fork flags={arg0} pid={current->pid}')]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest logpoint', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
    });
    assert.equal(started, true);
    const logged = (): string[] => tracker.events('output')
      .map(e => String((e as DebugProtocol.OutputEvent).body.output))
      .filter(t => t.includes('itest fork flags='));
    await until(tracker.onMessage, () => logged().length > 0, 'the logpoint output event');
    assert.match(logged()[0], /\] itest fork flags=(0x[0-9a-f]+|\d+) pid=\d+\n$/);
    // the kernel ran on to power off: a logpoint never stops
    await until(tracker.onMessage, () => tracker.events('terminated').length > 0, 'the end of the session');
    assert.equal(tracker.events('stopped').length, 0, 'no stop for a logpoint');
    assert.ok(logged().length >= 1);
  });

  test('the Kprobes view keeps the last rows of an ended session, marked as ended, until the next launch', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
    const line = markerLine(fork.fsPath, 'do_fork_body');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)), true, undefined, undefined, 'itest ended hit')]);
    const config = { type: DEBUG_TYPE, request: 'launch', name: 'itest ended', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2 };
    const terminated = new Promise<vscode.DebugSession>(r => { const s = vscode.debug.onDidTerminateDebugSession(x => { s.dispose(); r(x); }); });
    assert.equal(await vscode.debug.startDebugging(folder, config), true);
    // the logpoint never stops: the kernel runs to power off and the session ends by itself
    await terminated;
    const logged = tracker.events('output').filter(e => String((e as DebugProtocol.OutputEvent).body.output).includes('itest ended hit')).length;
    assert.ok(logged >= 1, 'the logpoint printed');
    assert.equal(api.probes.ended, true);
    assert.equal(api.probes.session, undefined);
    const nodes = api.kprobesTree.getChildren();
    const probes = nodes.filter((n): n is Extract<ProbeNode, { kind: 'probe' }> => n.kind === 'probe');
    assert.equal(probes.length, 1, 'the last row stays');
    const item = api.kprobesTree.getTreeItem(probes[0]);
    // the final counters: one hit per logpoint line
    assert.equal(probes[0].probe.nhit, logged);
    assert.match(String(item.label), new RegExp(`^k do_fork\\+0x[0-9a-f]+ ${logged}/0$`));
    assert.ok(String(item.description).startsWith('(session ended)'), String(item.description));
    assert.equal(item.contextValue, 'kprobe.probe.ended', 'no enable/disable/unregister on an ended row');
    await assert.rejects(api.probes.refresh(), /no kprobe debug session/);

    // the next launch clears it
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    const cleared = new Promise<void>(r => { const s = vscode.debug.onDidStartDebugSession(() => { s.dispose(); r(); }); });
    assert.equal(await vscode.debug.startDebugging(folder, { ...config, name: 'itest after ended', stopOnEntry: true }), true);
    await cleared;
    assert.equal(api.probes.ended, false);
    const after = api.kprobesTree.getChildren();
    assert.ok(after.every(n => n.kind === 'placeholder' && !n.ended), JSON.stringify(after));
  });

  test('the Uprobes view renders inode, path:offset and the processes of a uprobe row', () => {
    const changed = new vscode.EventEmitter<void>();
    const uprobe: UprobeInfo = {
      id: 7, engineId: 3, kind: 'uprobe', name: '/bin/app:0x4245c0', address: '0x00000000004245c0',
      enabled: true, gone: false, nhit: 2, nmissed: 1, inode: 1234, offset: 0x4245c0, path: '/bin/app',
      consumers: 1, registered: true, symbol: 'main+0x0',
      processes: [
        { pid: 12, comm: 'app', address: '0x00000000004245c0', page: 'private copy of the file page', nhit: 2 },
        { pid: 13, comm: 'app', address: '0x00000000004245c0', page: 'private copy of the file page', nhit: 0 },
      ],
    };
    const store = { state: { ...emptyProbeState(), uprobes: [uprobe] }, onDidChange: changed.event } as unknown as ProbeStore;
    const tree = new ProbeTreeProvider(store, 'uprobes');
    try {
      const nodes = tree.getChildren();
      assert.equal(nodes.length, 1);
      const item = tree.getTreeItem(nodes[0]);
      assert.equal(item.label, 'inode 1234  /bin/app:0x4245c0');
      assert.equal(item.description, 'main+0x0  2 processes  hits 2, missed 1');
      assert.equal(item.contextValue, 'kprobe.probe.enabled');
      assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
      assert.match(String(item.tooltip), /\/bin\/app \(inode 1234\) offset 0x4245c0/);
      const kids = tree.getChildren(nodes[0]).map(n => tree.getTreeItem(n));
      assert.deepEqual(kids.map(k => [k.label, k.description]), [
        ['app[12]', '0x00000000004245c0  private copy of the file page  hits 2'],
        ['app[13]', '0x00000000004245c0  private copy of the file page  hits 0'],
      ]);
    } finally {
      tree.dispose();
      changed.dispose();
    }
  });

  test('F5 with a missing image in launch.json-style config shows an error and starts nothing', async () => {
    const started = await vscode.debug.startDebugging(workspaceFolder(), {
      type: DEBUG_TYPE, request: 'launch', name: 'missing', program: '${workspaceFolder}/kernel/build/missing.elf',
    });
    assert.equal(started, false);
    assert.equal(vscode.debug.activeDebugSession, undefined);
  });
});
