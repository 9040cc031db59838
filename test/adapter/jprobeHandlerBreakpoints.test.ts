/**
 * A breakpoint in a jprobe's entry (examples/modules/jprobe_example.c
 * jdo_fork) through the adapter, on every architecture with kprobes: it
 * stops inside the entry while do_fork's jprobe is being handled (a
 * debugger breakpoint, not a reentered kprobe counted as missed), with
 * do_fork's arguments as the entry's, steps through it, and continuing
 * finishes the hit (the probed context and stack back, do_fork runs on):
 * an entry line per hit, nothing missed.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { KPROBE_ARCHES } from '../kprobes/harness';
import { Harness, kernelImage, lineOf, within } from './dapHarness';
import { repoPath } from '../util/paths';
import { assertFramesBelow } from '../kprobes/belowHandler';

const h = new Harness();
const SRC = repoPath('examples', 'modules', 'jprobe_example.c');
const MAIN_C = repoPath('examples', 'kernel', 'main.c');

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

for (const arch of KPROBE_ARCHES) describe(`a breakpoint in a jprobe entry on the ${arch} kernel`, () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('stops in jdo_fork with do_fork\'s arguments, steps, and continuing completes every hit (none missed)', async () => {
    const out = collectOutput();
    const line = lineOf(SRC, 'printk("jprobe: clone_flags');
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `jprobe_example-${arch}.ko`)], stopAtExit: true });
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed|Planted/.test(l)).slice(0, 5).join('\n')}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at do_fork\+0x0 is being handled\)/);
    const threadId = stop.body.threadId as number;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.match(frames[0].name, /^jdo_fork\b/);
    assert.equal(frames[0].line, line);
    // below the jprobe's entry: the kprobe's handling, do_fork at the probed address, its caller
    assertFramesBelow(frames, 1, [{ stub: true }, { fn: 'do_fork', offset: 0n }, { fn: 'worker_fn', line: lineOf(MAIN_C, 'pid = do_fork(') }], kernelImage(arch));
    const scopes = (await h.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
    const names: string[] = [];
    for (const s of scopes.filter(x => !/register/i.test(x.name))) {
      names.push(...(await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables.map(v => v.name));
    }
    assert.ok(names.includes('clone_flags') && names.includes('stack_size'), names.join(' '));

    let step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
    for (let i = 0; i < 3 && step.body.reason === 'breakpoint' && (await h.topFrame(threadId)).line === line; i++) {
      step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
    }
    assert.equal(step.body.reason, 'step');
    const next = await h.topFrame(threadId);
    assert.match(next.name, /^jdo_fork\b/);
    assert.ok((next.line ?? 0) > line, `line ${next.line} after ${line}`);

    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /hits? missed/);
    const entries = text.split('\n').filter(l => /jprobe: clone_flags = /.test(l)).length;
    assert.ok(entries > 2);
    const st = (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'the probe list')).body as ProbeStateBody;
    const row = st.kprobes.find(r => r.registeredBy === 'jprobe_example');
    assert.ok(row, JSON.stringify(st.kprobes.map(r => r.name)));
    assert.equal(row.nhit, entries);
    assert.equal(row.nmissed, 0);
  });
});
