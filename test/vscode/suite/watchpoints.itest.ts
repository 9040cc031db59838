import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE } from '../../../extension/constants';
import type { DebugRegNode } from '../../../extension/debugRegTree';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, until, workspaceFolder, endSession, trackStops } from './util';

/**
 * Break on Value Change in a real VS Code: the data breakpoint goes through
 * the session's DAP requests (dataBreakpointInfo / setDataBreakpoints, as
 * the Variables view's "Break on Value Change" sends them; the workbench
 * offers extensions no API to add one), the stop says which register fired
 * and the old and new value, and the Debug Registers and Kprobes views show
 * the register held.
 */
suite('watchpoints: Break on Value Change', () => {
  let t: ReturnType<typeof trackStops>;
  let stops: DebugProtocol.StoppedEvent[] = [];
  let changed: vscode.Event<void>;
  setup(() => { t = trackStops(); stops = t.stops; changed = t.changed; });
  teardown(async () => {
    t.dispose();
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    await endSession();
  });

  test('a data breakpoint on boot_counter stops after each write with DR0 and the old and new value; the views show the register', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    // stop early (the first fork) to set the data breakpoint from a stopped session, as a user would
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('do_fork')]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest watchpoints', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 1,
    });
    assert.equal(started, true);
    await until(changed, () => stops.length > 0, 'the do_fork stop');
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    const session = vscode.debug.activeDebugSession as vscode.DebugSession;
    const info = await session.customRequest('dataBreakpointInfo', { name: 'boot_counter' }) as DebugProtocol.DataBreakpointInfoResponse['body'];
    assert.ok(info.dataId, info.description);
    assert.deepEqual(info.accessTypes, ['write', 'readWrite']);
    const set = await session.customRequest('setDataBreakpoints', { breakpoints: [{ dataId: info.dataId, accessType: 'write' }] }) as DebugProtocol.SetDataBreakpointsResponse['body'];
    assert.equal(set.breakpoints[0].verified, true);

    const values: [bigint, bigint][] = [];
    for (let i = 0; i < 2; i++) {
      const n = stops.length;
      await session.customRequest('continue', { threadId: stops[n - 1].body.threadId });
      await until(changed, () => stops.length > n && stops[stops.length - 1].body.reason === 'data breakpoint', 'a data breakpoint stop');
      const d = String(stops[stops.length - 1].body.description);
      const m = /^watchpoint DR0 hit: write to boot_counter \(0x[0-9a-f]+\): (\d+) -> (\d+)$/.exec(d);
      assert.ok(m, d);
      values.push([BigInt(m[1]), BigInt(m[2])]);
    }
    assert.equal(values[0][1], values[0][0] + 1n, 'read_boot_counter increments it');
    assert.deepEqual(values[1], [values[0][1], values[0][1] + 1n], 'the next stop starts from the last new value');

    // the Debug Registers view: CPU 0's DR0 held by the debugger on boot_counter
    const cpus = (): Extract<DebugRegNode, { kind: 'cpu' }>[] =>
      api.debugRegsTree.getChildren().filter((n): n is Extract<DebugRegNode, { kind: 'cpu' }> => n.kind === 'cpu');
    await until(api.probes.onDidChange, () => cpus()[0]?.regs[0]?.holder?.hits === 2, 'DR0 with two hits');
    const dr0 = api.debugRegsTree.getTreeItem(api.debugRegsTree.getChildren(cpus()[0])[0]);
    assert.equal(String(dr0.label), 'DR0  w boot_counter+0x0  2/0');
    assert.match(String(dr0.description), /^debugger {2}[0-9a-f]{16} len 8$/);
    // the Kprobes view's row for it
    const row = api.kprobesTree.getChildren().find((n: ProbeNode) => n.kind === 'probe' && n.probe.kind === 'watch');
    assert.ok(row && row.kind === 'probe');
    assert.match(String(api.kprobesTree.getTreeItem(row).label), /^w boot_counter\+0x0 2\/0$/);
  });
});
