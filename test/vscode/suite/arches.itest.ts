/**
 * The aarch64 and riscv64 sample kernels in a real VS Code (the other two
 * ports must debug as x86_64 does): a gutter breakpoint in fork.c stops the
 * kernel, the Kprobes view row is the probe's debugfs line with its counters,
 * the stopped frame is do_fork on the line, and the Variables scopes of that
 * frame hold do_fork's arguments from DWARF (names, not only registers) with
 * the value of the first argument register.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeDebugfsBody, ProbeRequest } from '../../../adapter/dapCustom';
import { DEBUG_TYPE } from '../../../extension/constants';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, markerLine, workspaceFolder, until, endSession } from './util';


/** the argument register of each arch, as the Registers scope names it */
const ARG0: Record<string, string> = { aarch64: 'x0', riscv64: 'a0' };

suite('aarch64 and riscv64 sessions', () => {
  const stopped: DebugProtocol.StoppedEvent[] = [];
  const changed = new vscode.EventEmitter<void>();
  let tracker: vscode.Disposable;
  setup(() => {
    stopped.length = 0;
    tracker = vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
      createDebugAdapterTracker: () => ({
        onDidSendMessage: (m: DebugProtocol.ProtocolMessage) => {
          if (m.type === 'event' && (m as DebugProtocol.Event).event === 'stopped') { stopped.push(m as DebugProtocol.StoppedEvent); changed.fire(); }
        },
      }),
    });
  });
  teardown(async () => {
    tracker.dispose();
    await endSession();
  });

  for (const arch of ['aarch64', 'riscv64']) {
    test(`${arch}: a gutter breakpoint stops in do_fork; the Kprobes row; do_fork's arguments in the Variables scopes`, async () => {
      const { api } = await activateExtension();
      const folder = workspaceFolder();
      const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
      const line = markerLine(fork.fsPath, 'do_fork_body');
      vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)))]);
      const started = await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE, request: 'launch', name: `itest ${arch}`, program: `\${workspaceFolder}/kernel/build/kernel-${arch}.elf`, cpus: 2,
      });
      assert.equal(started, true);
      await until(changed.event, () => stopped.length > 0, `the ${arch} breakpoint stop`);
      assert.equal(stopped[0].body.reason, 'breakpoint');
      const session = vscode.debug.activeDebugSession;
      assert.ok(session);

      const probeNodes = () => api.kprobesTree.getChildren().filter((n): n is Extract<ProbeNode, { kind: 'probe' }> => n.kind === 'probe');
      await until(api.probes.onDidChange, () => probeNodes().some(n => n.probe.nhit >= 1), 'the probe row with a hit');
      const node = probeNodes()[0];
      const item = api.kprobesTree.getTreeItem(node);
      const body = await session.customRequest(ProbeRequest.debugfs) as ProbeDebugfsBody;
      const px = BigInt(node.probe.address).toString(16).padStart(16, '0');
      const listLine = body.list.split('\n').find(l => l.startsWith(`${px}  k  do_fork+0x`));
      assert.ok(listLine, body.list);
      assert.equal(String(item.tooltip).split('\n')[0], `${listLine.trimEnd()}  hits ${node.probe.nhit}, missed 0`);
      assert.match(String(item.label), new RegExp(`^k do_fork\\+0x[0-9a-f]+ ${node.probe.nhit}/0$`));
      assert.doesNotMatch(listLine, /OPTIMIZED/, 'no jump optimization on this arch');

      const threadId = stopped[0].body.threadId ?? 1;
      const frames = (await session.customRequest('stackTrace', { threadId })).stackFrames as DebugProtocol.StackFrame[];
      assert.match(frames[0].name, /^do_fork/);
      assert.equal(frames[0].line, line);
      const scopes = (await session.customRequest('scopes', { frameId: frames[0].id })).scopes as DebugProtocol.Scope[];
      const vars = async (name: string): Promise<Map<string, string>> => {
        const s = scopes.find(x => x.name === name);
        assert.ok(s, `${name} in ${scopes.map(x => x.name).join(', ')}`);
        const v = (await session.customRequest('variables', { variablesReference: s.variablesReference })).variables as DebugProtocol.Variable[];
        return new Map(v.map(x => [x.name, x.value]));
      };
      const args = await vars('Arguments');
      assert.deepEqual([...args.keys()], ['clone_flags', 'stack_start', 'regs', 'stack_size', 'parent_tidptr', 'child_tidptr']);
      const regs = await vars('Registers');
      const arg0 = regs.get(ARG0[arch]);
      assert.ok(arg0 !== undefined, [...regs.keys()].join(' '));
      assert.equal(BigInt(args.get('clone_flags') ?? 'x'), BigInt(arg0));
    });
  }
});
