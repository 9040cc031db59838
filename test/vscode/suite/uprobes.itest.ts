import * as assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, workspaceFolder, until, endSession, trackStops } from './util';


suite('uprobes: a gutter breakpoint in a user program', () => {
  let t: ReturnType<typeof trackStops>;
  let stops: DebugProtocol.StoppedEvent[] = [];
  let changed: vscode.Event<void>;
  let root = '';
  setup(() => { t = trackStops(); stops = t.stops; changed = t.changed; });
  teardown(async () => {
    t.dispose();
    await endSession();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('stops in the user task, and the Uprobes view shows the (inode, offset) row with its process', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const repo = vscode.Uri.joinPath(folder.uri, '..');
    const src = vscode.Uri.joinPath(repo, 'test', 'userspace', 'programs', 'uprobed.c');
    const line = readFileSync(src.fsPath, 'utf8').split('\n').findIndex(l => l.includes('long leaf(long x)')) + 1;
    assert.ok(line > 0);
    root = mkdtempSync(join(tmpdir(), 'kprobe-itest-rootfs-'));
    mkdirSync(join(root, 'bin'));
    copyFileSync(join(repo.fsPath, 'test', 'uprobes', 'bin', 'uprobed-x86_64-gcc-O0.elf'), join(root, 'bin', 'uprobed'));
    chmodSync(join(root, 'bin', 'uprobed'), 0o755);
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(src, new vscode.Position(line - 1, 0)))]);

    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest uprobes',
      program: join(repo.fsPath, 'test', 'fixtures', 'kernel', 'bin', 'userinit.elf'), cpus: 2, rootfs: root, exec: ['/bin/uprobed'],
    });
    assert.equal(started, true);
    await until(changed, () => stops.length > 0, 'the uprobe stop');
    assert.equal(stops[0].body.reason, 'breakpoint');
    assert.match(String(stops[0].body.description), /uprobe, uprobed\[\d+\]/);

    const rows = (): Extract<ProbeNode, { kind: 'uprobe' }>[] =>
      api.uprobesTree.getChildren().filter((n): n is Extract<ProbeNode, { kind: 'uprobe' }> => n.kind === 'uprobe');
    await until(api.probes.onDidChange, () => rows().some(n => n.probe.nhit >= 1 && n.probe.processes.length === 1), 'the uprobe row with its process');
    const row = rows()[0];
    const item = api.uprobesTree.getTreeItem(row);
    assert.match(String(item.label), /^inode \d+ {2}\/bin\/uprobed:0x[0-9a-f]+$/);
    assert.match(String(item.description), /^leaf\+0x[0-9a-f]+ {2}1 process {2}hits 1, missed 0$/);
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
    const kids = api.uprobesTree.getChildren(row).map(n => api.uprobesTree.getTreeItem(n));
    assert.equal(kids.length, 1);
    assert.match(String(kids[0].label), /^uprobed\[\d+\]$/);
    assert.match(String(kids[0].description), /^0x0{10}[0-9a-f]{6} {2}private copy of the file page {2}hits 1$/);

    // the Call Stack's top frame is the program's leaf() in uprobed.c
    const session = vscode.debug.activeDebugSession;
    assert.ok(session);
    const st = await session.customRequest('stackTrace', { threadId: stops[0].body.threadId }) as DebugProtocol.StackTraceResponse['body'];
    // named by the function, as VS Code shows C frames; the exact address is the instruction pointer
    assert.equal(st.stackFrames[0].name, 'leaf');
    assert.match(st.stackFrames[0].instructionPointerReference ?? '', /^0x[0-9a-f]+$/);
    assert.equal(st.stackFrames[0].line, line);
    assert.match(st.stackFrames[0].source?.path ?? '', /uprobed\.c$/);
  });
});
