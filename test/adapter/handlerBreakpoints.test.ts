/**
 * A breakpoint in a kprobe module's handler (examples/modules/kprobe_example.c
 * handler_pre) through the adapter, on every architecture with kprobes: it
 * stops inside the handler while do_fork's kprobe is being handled (a
 * debugger breakpoint, as kgdb's, not a reentered kprobe counted as missed),
 * shows the handler's variables, steps through it, and continuing finishes
 * the probed function's hit: the module's kprobe (a Kprobes row of its own,
 * registered by the module) counts every hit, none missed, and the
 * post_handler ran for each. The breakpoint's message says it is a
 * debugger breakpoint in handler code.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { kprobeListLine } from '../../extension/probeRows';
import { KPROBE_ARCHES } from '../kprobes/harness';
import { FORK_C, Harness, kernelImage, lineOf, markerLine, within } from './dapHarness';
import { repoPath } from '../util/paths';
import { assertFramesBelow } from '../kprobes/belowHandler';

const h = new Harness();
const SRC = repoPath('examples', 'modules', 'kprobe_example.c');
const MAIN_C = repoPath('examples', 'kernel', 'main.c');

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

for (const arch of KPROBE_ARCHES) describe(`a breakpoint in a kprobe handler on the ${arch} kernel`, () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('stops in handler_pre with its variables, steps, and continuing completes do_fork\'s hits (none missed)', async () => {
    const out = collectOutput();
    const line = lineOf(SRC, 'printk("pre_handler: p->addr');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] })).body.breakpoints;
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `kprobe_example-${arch}.ko`)], stopAtExit: true });
    assert.equal(bps.length, 1);
    const kindRe = /^debugger breakpoint in kprobe handler code \(handler_pre is a handler of the kprobe at do_fork\+0x0\)/;
    const kind = within(new Promise<DebugProtocol.Breakpoint>(resolve => h.dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => {
      if (e.body.breakpoint.id === bps[0].id && kindRe.test(e.body.breakpoint.message ?? '')) resolve(e.body.breakpoint);
    })), 'the breakpoint event saying the breakpoint is in handler code');

    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed|pre_handler|Planted/.test(l)).slice(0, 5).join('\n')} ${JSON.stringify(bps)}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at do_fork\+0x0 is being handled\)/);
    const threadId = stop.body.threadId as number;
    // the breakpoint says which kind it is once the module's kprobe (whose handler holds it) is registered
    assert.equal((await kind).verified, true);
    const during = (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'the probe list')).body as ProbeStateBody;
    assert.match(during.kprobes.find(r => r.id === bps[0].id)?.inHandler ?? '', /^handler_pre is a handler of the kprobe at do_fork\+0x0/);
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.match(frames[0].name, /^handler_pre\b/);
    assert.equal(frames[0].line, line);
    // below the handler: the kprobe's handling, do_fork at the probed address, its caller
    assertFramesBelow(frames, 1, [{ stub: true }, { fn: 'do_fork', offset: 0n }, { fn: 'worker_fn', line: lineOf(MAIN_C, 'pid = do_fork(') }], kernelImage(arch));
    // do_fork's frame has its arguments as the probed context holds them (the first in its register)
    const forkScopes = (await h.dc.scopesRequest({ frameId: frames[2].id })).body.scopes;
    const forkArgs = forkScopes.find(x => x.name === 'Arguments');
    assert.ok(forkArgs, forkScopes.map(x => x.name).join(','));
    const cloneFlags = (await h.dc.variablesRequest({ variablesReference: forkArgs.variablesReference })).body.variables.find(v => v.name === 'clone_flags');
    assert.match(cloneFlags?.value ?? '', /^(0x)?[0-9a-f]+$/i, JSON.stringify(cloneFlags));
    const scopes = (await h.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
    const names: string[] = [];
    for (const s of scopes.filter(x => !/register/i.test(x.name))) {
      names.push(...(await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables.map(v => v.name));
    }
    assert.ok(names.includes('p') && names.includes('regs'), `${scopes.map(x => x.name).join(',')}: ${names.join(' ')}`);
    // the handler's own p: the module's struct kprobe on do_fork
    const args = scopes.find(x => x.name === 'Arguments');
    assert.ok(args);
    const p = (await h.dc.variablesRequest({ variablesReference: args.variablesReference })).body.variables.find(v => v.name === 'p');
    assert.ok(p && p.variablesReference > 0, JSON.stringify(p));
    const fields = (await h.dc.variablesRequest({ variablesReference: p.variablesReference })).body.variables;
    const deref = fields.length === 1 && fields[0].variablesReference > 0 && !fields.some(f => f.name === 'symbol_name')
      ? (await h.dc.variablesRequest({ variablesReference: fields[0].variablesReference })).body.variables : fields;
    assert.match(deref.find(f => f.name === 'symbol_name')?.value ?? '', /"do_fork"/, JSON.stringify(deref.map(f => [f.name, f.value])));

    // step over the printk (a second site of the line stops first on arches that have one): the next line of the handler
    let step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
    for (let i = 0; i < 3 && step.body.reason === 'breakpoint' && (await h.topFrame(threadId)).line === line; i++) {
      step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
    }
    assert.equal(step.body.reason, 'step');
    const after1 = await h.topFrame(threadId);
    assert.match(after1.name, /^handler_pre\b/);
    assert.ok((after1.line ?? 0) > line, `line ${after1.line} after ${line}`);

    // a second stop in the handler (the next do_fork hit), then without the breakpoint the run ends normally
    const again = await h.continueToStop(threadId);
    assert.equal(again.body.reason, 'breakpoint');
    assert.match((await h.topFrame(again.body.threadId as number)).name, /^handler_pre\b/);
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(again.body.threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /hits missed/);
    const pre = text.split('\n').filter(l => /pre_handler: p->addr=/.test(l)).length;
    const post = text.split('\n').filter(l => /post_handler: p->addr=/.test(l)).length;
    assert.ok(pre > 2);
    assert.equal(post, pre, 'the post_handler ran after each pre_handler (the probed instruction was single-stepped)');
    // the module's own kprobe in the Kprobes view: every hit counted, none missed
    const st = (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'the probe list')).body as ProbeStateBody;
    const mod = st.kprobes.find(r => r.registeredBy === 'kprobe_example');
    assert.ok(mod, JSON.stringify(st.kprobes.map(r => r.name)));
    assert.equal(mod.name, 'do_fork+0x0');
    const list = (await within(h.dc.customRequest(ProbeRequest.debugfs) as Promise<DebugProtocol.Response>, 'debugfs')).body.list as string;
    assert.ok(list.split('\n').map(l => l.trimEnd()).includes(kprobeListLine(mod)), `${kprobeListLine(mod)} in\n${list}`);
    assert.equal(mod.nhit, pre);
    assert.equal(mod.nmissed, 0);
    // the view's Disable / Enable reach it (disable_kprobe / enable_kprobe); its module unregisters it, not the view
    await within(h.dc.customRequest(ProbeRequest.setEnabled, { id: mod.id, enabled: false }) as Promise<DebugProtocol.Response>, 'disable');
    assert.match((await within(h.dc.customRequest(ProbeRequest.debugfs) as Promise<DebugProtocol.Response>, 'debugfs')).body.list, /do_fork\+0x0 +\[DISABLED\]/);
    await assert.rejects(h.dc.customRequest(ProbeRequest.unregister, { id: mod.id }), /registered by the kernel's or a module's own code/);
  });

  test('a breakpoint in handler_post stops there too, after the probed instruction ran; the run then ends normally', async () => {
    const out = collectOutput();
    const line = lineOf(SRC, 'printk("post_handler: p->addr');
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `kprobe_example-${arch}.ko`)], stopAtExit: true });
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at do_fork\+0x0 is being handled\)/);
    const frames = (await h.dc.stackTraceRequest({ threadId: stop.body.threadId as number })).body.stackFrames;
    assert.match(frames[0].name, /^handler_post\b/);
    assert.equal(frames[0].line, line);
    // below the handler: do_fork after its probed instruction ran, its caller
    assertFramesBelow(frames, 1, [{ stub: true }, { fn: 'do_fork', inside: true }, { fn: 'worker_fn', line: lineOf(MAIN_C, 'pid = do_fork(') }], kernelImage(arch));
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(stop.body.threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /hits? missed/);
    const pre = text.split('\n').filter(l => /pre_handler: p->addr=/.test(l)).length;
    assert.ok(pre > 2);
    assert.equal(text.split('\n').filter(l => /post_handler: p->addr=/.test(l)).length, pre);
  });

  test('a breakpoint set in handler_pre after the handler already ran (without one) stops at the next hit', async () => {
    const out = collectOutput();
    const pre = (): number => out.join('').split('\n').filter(l => /pre_handler: p->addr=/.test(l)).length;
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] });
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `kprobe_example-${arch}.ko`)], stopAtExit: true });
    // in do_fork's body: the module's pre_handler ran for this call already, as a nested call (no breakpoint in it then)
    const inBody = await h.continueToStop();
    assert.equal(inBody.body.reason, 'breakpoint');
    const threadId = inBody.body.threadId as number;
    assert.match((await h.topFrame(threadId)).name, /^do_fork\b/);
    assert.ok(pre() >= 1, out.join(''));
    const line = lineOf(SRC, 'printk("pre_handler: p->addr');
    await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [] });
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    const before = pre();
    const stop = await h.continueToStop(threadId);
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed/.test(l)).slice(0, 3).join('\n')}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at do_fork\+0x0 is being handled\)/);
    const top = await h.topFrame(stop.body.threadId as number);
    assert.match(top.name, /^handler_pre\b/);
    assert.equal(top.line, line);
    assert.equal(pre(), before, 'the next do_fork hit stopped, before its printk');
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(stop.body.threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    assert.doesNotMatch(out.join(''), /hits? missed/);
  });
});
