/**
 * DebugClient test of the launch's `modules` (loading modules into a debugged
 * kernel): the module is loaded after boot (a line in the Debug Console), its
 * init's printk is shown, a function breakpoint on one of its symbols is a
 * kprobe in module code that stops there (the frame named `sym+0xoff [mod]`
 * in a module without debug info, `function [mod]` in one with), and a module
 * that cannot be loaded is one line naming it.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness, lineOf, within } from './dapHarness';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { repoPath } from '../util/paths';

const h = new Harness();
const MOD = (n: string): string => repoPath('test', 'fixtures', 'modules', 'bin', `${n}-x86_64-gcc.ko`);

describe('adapter: the launch\'s kernel modules', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('a function breakpoint on a module function stops in the module; a bad module is one console line', async () => {
    const out: string[] = [];
    h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'hello_helper' }] })).body.breakpoints;
    }, { modules: [MOD('hello'), MOD('unknown')] });
    assert.equal(bps[0].verified, true, JSON.stringify(bps[0]));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    const frames = (await h.dc.stackTraceRequest({ threadId: stop.body.threadId as number })).body.stackFrames;
    assert.equal(frames[0].name, 'hello_helper+0x0 [hello]');
    assert.match(frames[1].name, /^init_module\+0x[0-9a-f]+ \[hello\]$/);
    const text = out.join('');
    assert.match(text, /kprobe: insmod \S+hello-x86_64-gcc\.ko: module hello at 0x[0-9a-f]+\n/);
    assert.match(text, /kprobe: insmod \S+unknown-x86_64-gcc\.ko: unknown: Unknown symbol no_such_function \(err -2\)\n/);
    const exited = h.dc.waitForEvent('exited');
    await h.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    await h.dc.continueRequest({ threadId: stop.body.threadId as number });
    await within(exited, 'the end of the machine');
    assert.match(out.join(''), /hello: init two 25/);
  });
});

describe('adapter: breakpoints in a module\'s C source', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('a breakpoint in kprobe_example.c\'s init stops in the insmod thread; one in its handler stops inside the handler (a debugger breakpoint, not a reentered kprobe)', async () => {
    const src = repoPath('examples', 'modules', 'kprobe_example.c');
    const initLine = lineOf(src, 'ret = register_kprobe(&kp);');
    const handlerLine = lineOf(src, 'printk("pre_handler: p->addr');
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [{ line: initLine }, { line: handlerLine }] })).body.breakpoints;
    }, { modules: [repoPath('examples', 'modules', 'build', 'kprobe_example-x86_64.ko')] });
    assert.deepEqual(bps.map(b => [b.verified, b.line]), [[true, initLine], [true, handlerLine]], JSON.stringify(bps));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint');
    const frames = (await h.dc.stackTraceRequest({ threadId: stop.body.threadId as number })).body.stackFrames;
    // named by the module's DWARF: module_init's function by its C name, not the init_module alias; the offset is in the address
    assert.equal(frames[0].name, 'kprobe_init [kprobe_example]');
    assert.equal(frames[0].instructionPointerReference, bps[0].instructionReference, 'the breakpoint\'s exact address');
    assert.equal(frames[0].line, initLine);
    assert.match(frames[0].source?.path ?? '', /kprobe_example\.c$/);
    // run on: the handler breakpoint is only ever reached inside the kprobe's own handler: a debugger breakpoint stops there
    const inHandler = await h.continueToStop(stop.body.threadId as number);
    assert.equal(inHandler.body.reason, 'breakpoint');
    const top = await h.topFrame(inHandler.body.threadId as number);
    assert.equal(top.name, 'handler_pre [kprobe_example]');
    assert.equal(top.instructionPointerReference, bps[1].instructionReference, 'the breakpoint\'s exact address');
    await h.dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [] });
    const exited = h.dc.waitForEvent('exited');
    await h.dc.continueRequest({ threadId: inHandler.body.threadId as number });
    await within(exited, 'the end of the machine');
  });
});

describe('adapter: the Modules view\'s requests', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('_probeState lists the modules; _probeUnloadModule runs the exit and the list empties; _probeLoadModule loads another', async () => {
    await h.launchWith(async () => {
      await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] });
    }, { modules: [MOD('hello')] });
    const list = async (): Promise<ProbeStateBody> => (await h.dc.customRequest(ProbeRequest.list) as DebugProtocol.Response).body as ProbeStateBody;
    let stop = await h.continueToStop();
    for (let i = 0; i < 20 && (await list()).modules?.[0]?.state !== 'live'; i++) stop = await h.continueToStop();
    const st = await list();
    assert.equal(st.modules?.length, 1);
    assert.equal(st.modules?.[0].name, 'hello');
    assert.equal(st.modules?.[0].state, 'live');
    await h.dc.customRequest(ProbeRequest.unloadModule, { name: 'hello' });
    assert.equal((await list()).modules?.[0].state, 'going');
    for (let i = 0; i < 100 && (await list()).modules?.length; i++) stop = await h.continueToStop(); // the rmmod thread runs at the next scheduling tick
    assert.deepEqual((await list()).modules, []);
    await h.dc.customRequest(ProbeRequest.loadModule, { path: MOD('noexit') });
    assert.equal((await list()).modules?.[0].name, 'noexit');
    await assert.rejects(h.dc.customRequest(ProbeRequest.unloadModule, { name: 'nosuch' }), /ERROR: Module nosuch is not currently loaded/);
    assert.ok(stop.body.threadId);
  });
});

describe('adapter: pending breakpoints in a module\'s source', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('set before the module is loaded: pending; verified by a `breakpoint` event when it loads; stops in its init; [GONE] once init memory is freed', async () => {
    const src = repoPath('examples', 'modules', 'kprobe_example.c');
    const initLine = lineOf(src, 'ret = register_kprobe(&kp);');
    const events: DebugProtocol.BreakpointEvent[] = [];
    h.dc.on('breakpoint', (e: DebugProtocol.BreakpointEvent) => events.push(e));
    let bps: DebugProtocol.Breakpoint[] = [];
    await h.launchWith(async () => {
      bps = (await h.dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [{ line: initLine }] })).body.breakpoints;
      await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] });
    });
    assert.equal(bps[0].verified, false);
    assert.match(bps[0].message ?? '', /^pending: no line information for kprobe_example\.c/);
    const changed = h.dc.waitForEvent('breakpoint');
    await h.dc.customRequest(ProbeRequest.loadModule, { path: repoPath('examples', 'modules', 'build', 'kprobe_example-x86_64.ko') });
    await within(changed, 'the breakpoint event of the load');
    const verified = events.find(e => e.body.breakpoint.id === bps[0].id && e.body.breakpoint.verified);
    assert.ok(verified, JSON.stringify(events.map(e => e.body.breakpoint)));
    assert.equal(verified.body.breakpoint.line, initLine);
    // run: do_fork stops until the insmod thread reaches the init line
    let stop = await h.continueToStop();
    for (let i = 0; i < 100 && !(stop.body.hitBreakpointIds ?? []).includes(bps[0].id ?? -1); i++) stop = await h.continueToStop();
    assert.deepEqual(stop.body.hitBreakpointIds, [bps[0].id]);
    for (let i = 0; i < 100 && !events.some(e => e.body.breakpoint.id === bps[0].id && !e.body.breakpoint.verified); i++) await h.continueToStop();
    const gone = events.find(e => e.body.breakpoint.id === bps[0].id && !e.body.breakpoint.verified);
    assert.match(gone?.body.breakpoint.message ?? '', /\[GONE\]/);
  });
});
