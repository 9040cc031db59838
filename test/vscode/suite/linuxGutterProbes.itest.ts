import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { DEBUG_TYPE, View } from '../../../extension/constants';
import type { ProbeNode } from '../../../extension/probeTree';
import { activateExtension, Tracker, endSession, pageRequest, until, workspaceFolder } from './util';
import { unfetched } from '../../util/fetched';

/**
 * Gutter probes on Debian's kernel from VS Code, registered by the guest's
 * own kprobes engine through kprobe-debug's agent (launch.json `agent`):
 * a SourceBreakpoint with a log message on do_sys_openat2's first line of
 * fs/open.c prints each path a busybox `cat` opens; one in Kretprobe mode
 * (the breakpoint mode the adapter declares in `breakpointModes`, given as
 * SourceBreakpoint's 6th argument: the VS Code 1.100 runtime takes it and
 * sends it in setBreakpoints, though @types/vscode 1.100 does not declare
 * it) prints the return values. Both lines reach the Debug Console; both
 * probes are rows of the Kprobes view, registered by the agent, with hits
 * (screenshot test-output/vscode/linux-gutter-probes.png).
 * One boot. The kernel, initramfs, vmlinux and agent are fetched or built
 * (test/linux/fetch-kernel.sh, make-initramfs.sh, dbg/fetch-vmlinux-dbg.sh,
 * agent/build-agent.sh): missing, the test is skipped outside CI and fails
 * in CI.
 */

/** SourceBreakpoint as the runtime has it: the breakpoint mode is its 6th argument */
type SourceBreakpointWithMode = new (location: vscode.Location, enabled?: boolean, condition?: string, hitCondition?: string, logMessage?: string, mode?: string) => vscode.SourceBreakpoint;

/**
 * do_sys_openat2's entry line and a later statement line, from LLVM's view of
 * its line table (test/linux/dbg/make-golden.sh: `function NAME LOW HIGH`,
 * `row ADDR LINE COL stmt|- FILE`).
 */
function openat2Lines(golden: string): { entryLine: number; laterLine: number } {
  const lines = readFileSync(golden, 'utf8').split('\n');
  const fn = lines.find(l => l.startsWith('function do_sys_openat2 '))?.split(' ');
  assert.ok(fn, `no do_sys_openat2 in ${golden}`);
  const rows = lines.filter(l => l.startsWith('row ')).map(l => l.split(' '));
  const entry = rows.find(r => BigInt(r[1]) === BigInt(fn[2]));
  assert.ok(entry, `no row at do_sys_openat2's address in ${golden}`);
  const entryLine = Number(entry[2]);
  const later = rows.find(r => r[4] === 'stmt' && Number(r[2]) !== entryLine);
  assert.ok(later, `no later statement row in ${golden}`);
  return { entryLine, laterLine: Number(later[2]) };
}

suite('gutter probes on the Linux machine in VS Code', () => {
  let tracker: Tracker;
  setup(() => { tracker = new Tracker(); });
  teardown(async () => { tracker.dispose(); await endSession(); });

  test('a logpoint in do_sys_openat2 prints each path cat opens, a Kretprobe-mode breakpoint its return values; both in the Kprobes view', async function () {
    this.timeout(900_000);
    const repo = path.dirname(workspaceFolder().uri.fsPath);
    const files = {
      kernel: path.join(repo, 'test', 'linux', 'cache', 'vmlinuz'),
      initrd: path.join(repo, 'test', 'linux', 'cache', 'initramfs.cpio.gz'),
      vmlinux: path.join(repo, 'test', 'linux', 'dbg', 'cache', 'vmlinux'),
      agent: path.join(repo, 'test', 'linux', 'agent', 'cache', 'agent.cpio.gz'),
    };
    const missing = Object.values(files).filter(f => !existsSync(f));
    if (missing.length) return unfetched(this, `missing ${missing.join(', ')}`);
    const { entryLine, laterLine } = openat2Lines(path.join(repo, 'test', 'linux', 'dbg', 'golden', 'do_sys_openat2.txt'));
    // the DWARF names fs/open.c under the source tree the adapter maps it to (launch's default: the fetched linux-source-6.1)
    const openC = vscode.Uri.file(path.join(repo, 'test', 'modules', 'linux', 'cache', 'linux-source-6.1', 'fs', 'open.c'));
    const { api } = await activateExtension();

    const SourceBreakpoint = vscode.SourceBreakpoint as SourceBreakpointWithMode;
    const logpoint = new SourceBreakpoint(new vscode.Location(openC, new vscode.Position(entryLine - 1, 0)), true, undefined, undefined, 'open {filename} by {$comm}');
    const kretprobe = new SourceBreakpoint(new vscode.Location(openC, new vscode.Position(laterLine - 1, 0)), true, undefined, undefined, 'do_sys_openat2 returned {$retval} to {$comm}', 'kretprobe');
    assert.equal((kretprobe as { mode?: string }).mode, 'kretprobe', 'this VS Code keeps a SourceBreakpoint\'s mode');
    vscode.debug.addBreakpoints([logpoint, kretprobe]);

    const started = await vscode.debug.startDebugging(workspaceFolder(), {
      type: DEBUG_TYPE, request: 'launch', name: 'itest Linux gutter probes', ...files, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256,
    });
    assert.equal(started, true);
    const session = vscode.debug.activeDebugSession!;
    const outputs = (): DebugProtocol.OutputEvent[] => tracker.events('output') as DebugProtocol.OutputEvent[];
    const stdout = (): string => outputs().filter(e => e.body.category === 'stdout').map(e => String(e.body.output)).join('');
    const debuggerLines = (): string => outputs().filter(e => e.body.category !== 'stdout').map(e => String(e.body.output)).join('');
    const typed = (cmd: string): Thenable<unknown> => session.customRequest('evaluate', { expression: `>${cmd}`, context: 'repl' });

    // what VS Code sent: the mode reached the adapter (the setBreakpoints answer says kretprobe for the second)
    const set = (): DebugProtocol.SetBreakpointsResponse | undefined => tracker.messages
      .filter((m): m is DebugProtocol.SetBreakpointsResponse => m.type === 'response' && (m as DebugProtocol.Response).command === 'setBreakpoints').at(-1);
    await until(tracker.onMessage, () => set()?.body.breakpoints.length === 2, 'the answer to setBreakpoints for fs/open.c');
    const ids = set()!.body.breakpoints.map(b => b.id!);
    assert.deepEqual(set()!.body.breakpoints.map(b => /^(\w+) do_sys_openat2\+0x0: waiting for the guest's agent/.exec(b.message ?? '')?.[1]), ['kprobe', 'kretprobe'],
      JSON.stringify(set()!.body.breakpoints));

    await until(tracker.onMessage, () => /\/ # /.test(stdout()), 'the shell prompt', 840_000);
    const verified = (id: number): boolean => (tracker.events('breakpoint') as DebugProtocol.BreakpointEvent[]).filter(e => e.body.breakpoint.id === id).at(-1)?.body.breakpoint.verified === true;
    await typed('dmesg -n 1; insmod /root/kprobe_agent.ko');
    await until(tracker.onMessage, () => ids.every(verified), 'both gutter probes registered by the guest', 120_000);

    const from = debuggerLines().length;
    await typed('cat /proc/version /proc/cmdline > /dev/null');
    const logged = (): string => debuggerLines().slice(from);
    await until(tracker.onMessage, () => /returned \d+ to cat\n[\s\S]*returned \d+ to cat$/m.test(logged()), 'two return values for cat', 120_000);
    assert.match(logged(), /^open 0x[0-9a-f]+ "\/proc\/version" by cat$/m, logged());
    assert.match(logged(), /^open 0x[0-9a-f]+ "\/proc\/cmdline" by cat$/m, logged());
    assert.equal(logged().match(/^do_sys_openat2 returned \d+ to cat$/mg)?.length, 2, logged());

    // the Kprobes view: both probes as the guest lists them, registered by the agent, with hits
    const mine = (): Extract<ProbeNode, { kind: 'probe' }>[] => api.kprobesTree.getChildren()
      .filter((n): n is Extract<ProbeNode, { kind: 'probe' }> => n.kind === 'probe' && n.probe.registeredBy === 'the debugger (kprobe_agent)');
    await until(api.probes.onDidChange, () => mine().length === 2 && mine().every(n => n.probe.nhit >= 2), 'both gutter probes in the Kprobes view with their hits', 120_000);
    assert.deepEqual(mine().map(n => [n.probe.id, n.probe.kind, n.probe.symbol, n.probe.offset ?? 0]).sort(),
      [[ids[0], 'kprobe', 'do_sys_openat2', 0], [ids[1], 'kretprobe', 'do_sys_openat2', 0]].sort());
    const rows = mine().map(n => api.kprobesTree.getTreeItem(n));
    assert.ok(rows.every(r => String(r.label).includes('do_sys_openat2')), JSON.stringify(rows.map(r => r.label)));

    // the views and the Debug Console as a user sees them
    await vscode.commands.executeCommand(`${View.kprobes}.focus`);
    await vscode.commands.executeCommand('workbench.debug.action.focusRepl');
    const last = logged().trimEnd().split('\n').pop()!.trim();
    await pageRequest<string>(`repl-text?includes=${encodeURIComponent(last)}`);
    await pageRequest('screenshot/linux-gutter-probes');
  });
});
