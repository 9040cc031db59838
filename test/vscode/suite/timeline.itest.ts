import * as assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { HitRequest, ProbeEvent, ProbeHistogramsBody, ProbeTimelineBody, ProbeWarningBody } from '../../../adapter/dapCustom';
import { Command, DEBUG_TYPE, TestCommand } from '../../../extension/constants';
import type { TimelineRendered, GoToOutcome } from '../../../extension/timelineView';
import type { HistogramsRendered } from '../../../extension/histogramView';
import type { ProbeNode } from '../../../extension/probeTree';
import { Tracker, activateExtension, endSession, lineOf, nextEvent, pageRequest, until, workspaceFolder } from './util';

const rendered = async (): Promise<{ timeline?: TimelineRendered; histograms?: HistogramsRendered }> =>
  await vscode.commands.executeCommand(TestCommand.hitViewsRendered) as { timeline?: TimelineRendered; histograms?: HistogramsRendered };

/** Launch the sample kernel with `probes`, stopping at main.c's summary printk (after every worker's hits). */
async function launchToSummary(tracker: Tracker, name: string, probes: string[]): Promise<vscode.DebugSession> {
  const folder = workspaceFolder();
  const main = vscode.Uri.joinPath(folder.uri, 'kernel', 'main.c');
  const line = lineOf(main.fsPath, 'printk("summary: forks');
  vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(main, new vscode.Position(line - 1, 0)))]);
  const started = await vscode.debug.startDebugging(folder, {
    type: DEBUG_TYPE, request: 'launch', name, program: '${workspaceFolder}/kernel/build/kernel-x86_64.elf', cpus: 2, probes,
  });
  assert.equal(started, true);
  await until(tracker.onMessage, () => tracker.events('stopped').length > 0, 'the stop at the summary printk');
  assert.equal((tracker.events('stopped')[0] as DebugProtocol.StoppedEvent).body.reason, 'breakpoint');
  // the stop shows its source: the views open beside it (not under it)
  await until(vscode.window.onDidChangeActiveTextEditor, () => vscode.window.activeTextEditor?.document.uri.fsPath === main.fsPath, 'the stop\'s source in an editor');
  const session = vscode.debug.activeDebugSession;
  assert.ok(session && session.type === DEBUG_TYPE, 'the kprobe session is active');
  return session;
}

suite('probe-hit timeline, latency histograms, missed-probe warnings', () => {
  let tracker: Tracker;
  setup(() => { tracker = new Tracker(); });
  teardown(async () => {
    tracker.dispose();
    await endSession();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the timeline and the histograms draw the recorded kprobe and kretprobe hits; a click on a hit asks to go there', async () => {
    const { api } = await activateExtension();
    const session = await launchToSummary(tracker, 'itest timeline',
      ['${workspaceFolder}/probes/kprobe_example.kprobe', '${workspaceFolder}/probes/kretprobe_example.kprobe']);

    // what the adapter's log holds at the stop
    const log = await session.customRequest(HitRequest.timeline, {}) as ProbeTimelineBody;
    const byKind = new Map<string, number>();
    for (const h of log.hits) byKind.set(h.kind, (byKind.get(h.kind) ?? 0) + 1);
    assert.ok((byKind.get('kprobe') ?? 0) > 0, 'kprobe hits recorded');
    assert.ok((byKind.get('kretprobe-entry') ?? 0) > 0 && (byKind.get('kretprobe-return') ?? 0) > 0, 'kretprobe entries and returns recorded');
    assert.equal(log.nowSeq, log.lastSeq, 'the stop puts the marker at the newest hit');

    // the timeline webview draws every hit, in one lane per CPU, the marker at the stop
    await vscode.commands.executeCommand(Command.showTimeline);
    await until(api.timeline.onDidRender, () => api.timeline.lastRendered?.hits === log.hits.length, `the timeline drawing the ${log.hits.length} recorded hits`);
    const tl = (await rendered()).timeline;
    assert.ok(tl, 'the test command returns the timeline drawing');
    assert.equal(tl.view, 'timeline');
    assert.equal(tl.hits, log.hits.length);
    assert.deepEqual(Object.fromEntries(Object.entries(tl.kinds).sort()), Object.fromEntries([...byKind].sort()));
    assert.equal(tl.lanes, new Set(log.hits.map(h => h.cpu)).size);
    assert.ok(tl.marks > 0 && tl.marks <= tl.hits, `${tl.marks} marks for ${tl.hits} hits`);
    assert.equal(tl.markerSeq, log.nowSeq);
    // left to right in the log's order, across the CPUs' lanes (each CPU has its own clock: by time they disagree)
    assert.ok(new Set(log.hits.map(h => h.cpu)).size > 1, 'hits on both CPUs');
    const outOfOrder = tl.seqByX.findIndex((q, i) => i > 0 && q < tl.seqByX[i - 1]);
    assert.equal(outOfOrder, -1, `hit #${tl.seqByX[outOfOrder]} drawn right of #${tl.seqByX[outOfOrder - 1]}`);
    await pageRequest<{ path: string }>('screenshot/timeline');

    // a click on a hit mark (in the webview, as a user clicks) asks the adapter to go there
    const went = nextEvent<GoToOutcome>(api.timeline.onDidGoTo, 'the go-to-hit outcome');
    const clicked = await pageRequest<{ seq: number }>('timeline-click-hit');
    const outcome = await went;
    assert.equal(outcome.seq, clicked.seq);
    assert.ok(log.hits.some(h => h.seq === clicked.seq), 'the mark carries a recorded seq');
    if (outcome.error !== undefined) {
      // no time travel in this session: the adapter says so
      assert.match(outcome.error, /time travel is not available in this session/);
    } else {
      await until(tracker.onMessage, () => tracker.events('stopped').some(e => (e as DebugProtocol.StoppedEvent).body.reason === 'goto'), 'the goto stop');
    }

    // the histograms: one per kretprobe, every return counted, bpftrace's text
    const hb = await session.customRequest(HitRequest.histograms) as ProbeHistogramsBody;
    assert.equal(hb.histograms.length, 1);
    const expected = hb.histograms[0];
    assert.match(expected.probe, /sys_open/);
    await vscode.commands.executeCommand(Command.showHistograms);
    await until(api.histograms.onDidRender, () => (api.histograms.lastRendered?.histograms.length ?? 0) > 0, 'the histograms drawing');
    const hg = (await rendered()).histograms;
    assert.ok(hg, 'the test command returns the histograms drawing');
    assert.equal(hg.histograms.length, 1);
    assert.equal(hg.histograms[0].probe, expected.probe);
    assert.equal(hg.histograms[0].bars, expected.buckets.length);
    assert.equal(hg.histograms[0].count, byKind.get('kretprobe-return'), 'every recorded return is in a bar');
    assert.equal(hg.histograms[0].text, expected.text);
    assert.match(hg.histograms[0].text, /^@latency_ns\[.*sys_open.*\]:\n\[/);
    await pageRequest<{ path: string }>('screenshot/histograms');
  });

  test('a kretprobe out of instances: a warning in the Debug Console, a _probeWarning event, the Kprobes row marked', async () => {
    const { api } = await activateExtension();
    const dir = mkdtempSync(join(tmpdir(), 'kprobe-itest-'));
    const file = join(dir, 'maxactive1.kprobe');
    writeFileSync(file, 'kretprobe sys_open maxactive=1 {\n  return { return 0; }\n}\n');
    const warnings: ProbeWarningBody[] = [];
    const sub = vscode.debug.onDidReceiveDebugSessionCustomEvent(e => { if (e.event === ProbeEvent.warning) warnings.push(e.body as ProbeWarningBody); });
    try {
      await launchToSummary(tracker, 'itest warnings', [file]);
      assert.ok(warnings.length > 0, 'a _probeWarning event');
      const w = warnings[warnings.length - 1];
      assert.match(w.probe, /sys_open/);
      assert.ok(w.missed >= 1 && (w.suggestedMaxactive ?? 0) >= 2, JSON.stringify(w));
      const console = tracker.events('output').map(e => String((e as DebugProtocol.OutputEvent).body.output));
      assert.ok(console.some(t => t.includes(`kprobe: warning: ${warnings[0].text}`)), 'the warning in the Debug Console');

      const row = (): Extract<ProbeNode, { kind: 'probe' }> | undefined => api.kprobesTree.getChildren()
        .find((n): n is Extract<ProbeNode, { kind: 'probe' }> => n.kind === 'probe' && n.probe.kind === 'kretprobe' && n.probe.warning !== undefined);
      await until(api.probes.onDidChange, () => row() !== undefined, 'the kretprobe row with its warning');
      const node = row()!;
      const item = api.kprobesTree.getTreeItem(node);
      assert.equal((item.iconPath as vscode.ThemeIcon).id, 'warning');
      const wr = node.probe.warning!;
      assert.match(String(item.description), new RegExp(`missed ${wr.missed}, try maxactive=${wr.suggestedMaxactive}$`));
      assert.ok(String(item.tooltip).includes(`warning: ${wr.text}`), String(item.tooltip));
      assert.ok(String(item.tooltip).includes(`suggested maxactive: ${wr.suggestedMaxactive}`), String(item.tooltip));
      assert.equal(wr.missed, node.probe.nmissed, 'the warning counts the nmissed the row shows');
    } finally {
      sub.dispose();
    }
  });
});
