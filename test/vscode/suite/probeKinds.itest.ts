import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Command, DEBUG_TYPE, View } from '../../../extension/constants';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, endSession, lineOf, markerLine, pageRequest, Tracker, trackStops, until, workspaceFolder } from './util';

/** The Kprobes view's rows as the tree shows them: label and description. */
function kprobeItems(api: Awaited<ReturnType<typeof activateExtension>>['api']): { label: string; description: string }[] {
  return api.kprobesTree.getChildren().filter((n: ProbeNode) => n.kind === 'probe').map((n: ProbeNode) => {
    const item = api.kprobesTree.getTreeItem(n);
    return { label: String(item.label), description: String(item.description ?? '') };
  });
}

async function topFrame(session: vscode.DebugSession, threadId: number): Promise<DebugProtocol.StackFrame> {
  const r = await session.customRequest('stackTrace', { threadId }) as DebugProtocol.StackTraceResponse['body'];
  return r.stackFrames[0];
}

suite('breakpoint kinds: kprobe_events definitions and breakpoints in kprobe handlers', () => {
  teardown(() => endSession());

  test('a kprobe_events function breakpoint traces into the Debug Console without stopping; its row names the event', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('p:myopen sys_open path=+0(%di):string flags=%si:x32 comm=$comm')]);
    const tracker = new Tracker();
    const t = trackStops();
    try {
      assert.equal(await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE, request: 'launch', name: 'itest kprobe_events', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2, stopAtExit: true,
      }), true);
      // the only stop is the end of the run
      await until(t.changed, () => t.stops.length >= 1, 'the stop at the end of the run', 60_000);
      assert.notEqual(t.stops[0].body.reason, 'breakpoint', t.stops[0].body.description);
      const traced = tracker.events('output').map(e => String((e as DebugProtocol.OutputEvent).body.output))
        .join('').split('\n').filter(l => / myopen: \(sys_open\+0x0\/0x[0-9a-f]+\) path="[^"]*" flags=0x[0-9a-f]+ comm="[^"]+"$/.test(l));
      assert.ok(traced.length > 0, 'myopen trace lines in the Debug Console');
      // the event's row with as many hits as trace lines (the view follows the adapter's periodic state)
      const label = new RegExp(`^k kprobes/myopen: sys_open\\+0x0 (\\[OPTIMIZED\\] )?${traced.length}/0$`);
      await until(api.probes.onDidChange, () => kprobeItems(api).some(r => label.test(r.label)), `the event's row with ${traced.length} hits in the Kprobes view`);
      await vscode.commands.executeCommand(`${View.kprobes}.focus`);
      await vscode.commands.executeCommand('workbench.debug.action.focusRepl');
      await pageRequest<{ path: string }>('screenshot/kprobe-events-breakpoint');
    } finally {
      t.dispose();
      tracker.dispose();
    }
  });

  test('a breakpoint in a kprobe module\'s handler_pre stops there, says it is a debugger breakpoint, steps, and the run ends normally', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const src = vscode.Uri.joinPath(folder.uri, 'modules', 'kprobe_example.c');
    const line = lineOf(src.fsPath, 'printk("pre_handler: p->addr');
    const bp = new vscode.SourceBreakpoint(new vscode.Location(src, new vscode.Position(line - 1, 0)));
    vscode.debug.addBreakpoints([bp]);
    const t = trackStops();
    try {
      assert.equal(await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE, request: 'launch', name: 'itest handler breakpoint', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
        modules: [vscode.Uri.joinPath(folder.uri, 'modules', 'build', 'kprobe_example-x86_64.ko').fsPath], stopAtExit: true,
      }), true);
      await until(t.changed, () => t.stops.length >= 1, 'the stop in handler_pre', 60_000);
      const stop = t.stops[0].body;
      assert.equal(stop.reason, 'breakpoint');
      assert.match(stop.description ?? '', /in a kprobe handler \(the kprobe at do_fork\+0x0 is being handled\)/);
      const session = vscode.debug.activeDebugSession as vscode.DebugSession;
      const frame = await topFrame(session, stop.threadId as number);
      assert.match(frame.name, /^handler_pre\b/);
      assert.equal(frame.line, line);
      // the handler's arguments (the module's DWARF)
      const scopes = (await session.customRequest('scopes', { frameId: frame.id }) as DebugProtocol.ScopesResponse['body']).scopes;
      const args = scopes.find(x => x.name === 'Arguments');
      assert.ok(args, scopes.map(x => x.name).join(', '));
      const names = (await session.customRequest('variables', { variablesReference: args.variablesReference }) as DebugProtocol.VariablesResponse['body']).variables.map(v => v.name);
      assert.deepEqual(names, ['p', 'regs']);
      // the editor shows the handler's line; the Kprobes view says which kind the breakpoint is
      await until(vscode.window.onDidChangeActiveTextEditor, () => vscode.window.activeTextEditor?.document.uri.fsPath === src.fsPath, 'kprobe_example.c in the editor');
      await until(api.probes.onDidChange, () => kprobeItems(api).some(r => r.description.includes('debugger breakpoint in handler code')), 'the breakpoint\'s row marked');
      await until(api.probes.onDidChange, () => kprobeItems(api).some(r => r.description.includes('registered by kprobe_example')), 'the module\'s own kprobe row');
      await vscode.commands.executeCommand(`${View.kprobes}.focus`);
      await pageRequest<{ path: string }>('screenshot/handler-breakpoint');
      // Step Over through the handler (a second site of the line may stop first)
      for (let i = 0; i < 3; i++) {
        const n = t.stops.length;
        await vscode.commands.executeCommand('workbench.action.debug.stepOver');
        await until(t.changed, () => t.stops.length > n, 'the step');
        if (((await topFrame(session, stop.threadId as number)).line ?? 0) > line) break;
      }
      const stepped = await topFrame(session, stop.threadId as number);
      assert.match(stepped.name, /^handler_pre\b/);
      assert.ok((stepped.line ?? 0) > line, `line ${stepped.line}`);
      // without the breakpoint the run ends normally
      vscode.debug.removeBreakpoints([bp]);
      const n = t.stops.length;
      await vscode.commands.executeCommand('workbench.action.debug.continue');
      await until(t.changed, () => t.stops.length > n, 'the end of the run', 60_000);
      assert.notEqual(t.stops[n].body.reason, 'breakpoint');
    } finally {
      t.dispose();
    }
  });

  test('Disable Probe on a breakpoint\'s row unticks the breakpoint (the row stays, [DISABLED]); Enable Probe ticks it again', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const fork = vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c');
    const line = markerLine(fork.fsPath, 'do_fork_body');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(fork, new vscode.Position(line - 1, 0)))]);
    const t = trackStops();
    try {
      assert.equal(await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE, request: 'launch', name: 'itest disable probe', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
      }), true);
      await until(t.changed, () => t.stops.length >= 1, 'the breakpoint stop');
      const row = (): ProbeNode | undefined => api.kprobesTree.getChildren().find((n: ProbeNode) => n.kind === 'probe' && n.probe.source?.line === line);
      await until(api.probes.onDidChange, () => row() !== undefined, 'the breakpoint\'s row');
      const ticked = (): boolean | undefined => vscode.debug.breakpoints.find(b => b instanceof vscode.SourceBreakpoint && b.location.range.start.line === line - 1)?.enabled;
      assert.equal(ticked(), true);
      await vscode.commands.executeCommand(Command.disableProbe, row());
      await until(vscode.debug.onDidChangeBreakpoints, () => ticked() === false, 'the breakpoint unticked');
      await until(api.probes.onDidChange, () => { const r = row(); return r?.kind === 'probe' && !r.probe.enabled; }, 'the row [DISABLED]');
      await vscode.commands.executeCommand(`${View.kprobes}.focus`);
      await vscode.commands.executeCommand('workbench.debug.viewlet.action.focusBreakpointsView').then(undefined, () => undefined);
      await pageRequest<{ path: string }>('screenshot/disable-probe-unticks');
      await vscode.commands.executeCommand(Command.enableProbe, row());
      await until(vscode.debug.onDidChangeBreakpoints, () => ticked() === true, 'the breakpoint ticked again');
      await until(api.probes.onDidChange, () => { const r = row(); return r?.kind === 'probe' && r.probe.enabled; }, 'the row enabled');
    } finally {
      t.dispose();
    }
  });
});
