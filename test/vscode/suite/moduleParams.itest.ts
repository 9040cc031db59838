/**
 * Linux's samples/kprobes/kprobe_example.c, unmodified, built against the
 * project's headers (test/modules/kbuild.ts: the headers' Kbuild-like
 * Makefile) and loaded from the Modules view's "Load Module" action with
 * `symbol=do_fork` as its module string parameter: the Modules view lists
 * it live, the Kprobes view shows the probe its init registered on do_fork
 * (registered by kprobe_example), and its handlers' pr_info lines reach the
 * Debug Console as Linux prints them (`handler_pre: <do_fork> p->addr = ...`).
 * Needs Linux's source (test/modules/linux/fetch-test-kprobes.sh 6.1) and
 * clang/lld: skipped outside CI without them, a failure in CI.
 */
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { Command, DEBUG_TYPE } from '../../../extension/constants';
import type { ModuleNode } from '../../../extension/moduleTree';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, until, workspaceFolder, endSession, Tracker } from './util';
import { builtModule, kbuild, unavailable } from '../../modules/kbuild';
import { repoPath } from '../../util/paths';
import type { DebugProtocol } from '@vscode/debugprotocol';

const SAMPLES = repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1', 'samples', 'kprobes');

suite('the Modules view loads a module with parameters', () => {
  let tracker: Tracker;
  setup(() => { tracker = new Tracker(); });
  teardown(async () => {
    tracker.dispose();
    await endSession();
  });

  test("Linux's kprobe_example.ko with symbol=do_fork from Load Module: listed live, its probe on do_fork, its handler lines in the Debug Console", async function () {
    if (!existsSync(join(SAMPLES, 'kprobe_example.c'))) return unavailable(this, "Linux's samples/kprobes are not fetched: run test/modules/linux/fetch-test-kprobes.sh 6.1");
    const b = kbuild(SAMPLES, 'x86_64', ['CONFIG_SAMPLE_KPROBES=m']);
    if ('missing' in b) return unavailable(this, b.missing);
    const ko = builtModule(b.out, 'kprobe_example');
    const src = readFileSync(join(SAMPLES, 'kprobe_example.c'), 'utf8');
    assert.match(src, /pr_info\("<%s> p->addr = 0x%p, ip = %lx, flags = 0x%lx\\n"/, 'the x86 pre handler line this test reads');

    const { api } = await activateExtension();
    const folder = workspaceFolder();
    // a stop at do_fork keeps the kernel alive while the module is loaded from the view
    vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('do_fork')]);
    const started = await vscode.debug.startDebugging(folder, {
      type: DEBUG_TYPE, request: 'launch', name: 'itest module params', program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2,
    });
    assert.equal(started, true);
    const session = vscode.debug.activeDebugSession as vscode.DebugSession;
    await until(tracker.onMessage, () => tracker.events('stopped').length > 0, 'the first stop at do_fork');
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);

    await vscode.commands.executeCommand(Command.loadModule, { path: ko, params: ['symbol=do_fork'] });
    const rows = (): Extract<ModuleNode, { kind: 'module' }>[] =>
      api.modulesTree.getChildren().filter((n): n is Extract<ModuleNode, { kind: 'module' }> => n.kind === 'module');
    const sample = (): Extract<ModuleNode, { kind: 'module' }> | undefined => rows().find(r => r.module.name === 'kprobe_example');
    const output = (): string => tracker.events('output').map(e => String((e as DebugProtocol.OutputEvent).body.output)).join('');
    await session.customRequest('continue', { threadId: 1 });
    const pre = /handler_pre: <do_fork> p->addr = 0x[0-9a-f]+, ip = [0-9a-f]+, flags = 0x[0-9a-f]+/;
    const post = /handler_post: <do_fork> p->addr = 0x[0-9a-f]+, flags = 0x[0-9a-f]+/;
    await until(tracker.onMessage, () => pre.test(output()) && post.test(output()), 'handler_pre and handler_post lines for do_fork in the Debug Console', 120_000);
    assert.match(output(), /kprobe_init: Planted kprobe at [0-9a-f]+/);
    await until(api.probes.onDidChange, () => sample() !== undefined, 'kprobe_example in the Modules view');
    const probe = (): ProbeNode | undefined => api.kprobesTree.getChildren()
      .find((n: ProbeNode) => n.kind === 'probe' && n.probe.registeredBy === 'kprobe_example');
    await until(api.probes.onDidChange, () => probe() !== undefined, "kprobe_example's probe in the Kprobes view");
    const p = probe() as Extract<ProbeNode, { kind: 'probe' }>;
    assert.equal(p.probe.symbol, 'do_fork');
    assert.equal(p.probe.offset ?? 0, 0);
  });
});
