/**
 * A breakpoint in a kretprobe module's handlers (examples/modules/
 * kretprobe_example.c entry_handler and ret_handler) through the adapter,
 * on every architecture with kprobes: it stops inside the handler while
 * sys_open's kretprobe is being handled (a debugger breakpoint, not a
 * reentered kprobe counted as missed), shows the handler's arguments,
 * steps through it, and continuing finishes the hit: sys_open still
 * returns through the return handler (a "returned" line per call, with the
 * entry handler's stamp) and nothing is missed.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { KPROBE_ARCHES } from '../kprobes/harness';
import { Harness, kernelImage, lineOf, markerLine, within } from './dapHarness';
import { repoPath } from '../util/paths';
import { assertFramesBelow } from '../kprobes/belowHandler';

const h = new Harness();
const SRC = repoPath('examples', 'modules', 'kretprobe_example.c');
const FS = repoPath('examples', 'kernel', 'fs.c');
const MAIN_C = repoPath('examples', 'kernel', 'main.c');

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

/** the names of the frame's non-register variables */
async function argNames(frameId: number): Promise<Map<string, DebugProtocol.Variable>> {
  const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
  const vars = new Map<string, DebugProtocol.Variable>();
  for (const s of scopes.filter(x => !/register/i.test(x.name))) {
    for (const v of (await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables) vars.set(v.name, v);
  }
  return vars;
}

for (const arch of KPROBE_ARCHES) describe(`a breakpoint in a kretprobe handler on the ${arch} kernel`, () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  for (const which of [
    { fn: 'entry_handler', marker: 'data->entry_stamp = 1;', live: 'data' },
    { fn: 'ret_handler', marker: 'printk("%s returned', live: 'regs' },
  ]) test(`stops in ${which.fn} with its arguments, steps, and continuing completes sys_open's returns (none missed)`, async () => {
    const out = collectOutput();
    const line = lineOf(SRC, which.marker);
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `kretprobe_example-${arch}.ko`)], stopAtExit: true });

    const stop = await h.continueToStop();
    const lines = (): string => out.join('').split('\n').filter(l => /missed|returned|Planted/.test(l)).slice(0, 5).join('\n');
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${lines()}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at /);
    const threadId = stop.body.threadId as number;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.match(frames[0].name, new RegExp(`^${which.fn}\\b`));
    assert.equal(frames[0].line, line);
    // below the handler: sys_open at its entry (the entry handler) or, once it returned, its caller at the call
    const caller = { fn: 'read_file', line: lineOf(MAIN_C, 'sys_open(path, O_RDONLY') };
    assertFramesBelow(frames, 1, which.fn === 'entry_handler' ? [{ stub: true }, { fn: 'sys_open', offset: 0n }, caller] : [{ stub: true }, caller], kernelImage(arch));
    const vars = await argNames(frames[0].id);
    assert.ok(vars.has('ri') && vars.has('regs'), [...vars.keys()].join(' '));
    // an argument that is live at the line: the struct pt_regs of the probed (entry) or returning context
    const live = [...vars.values()].filter(v => v.variablesReference > 0 && v.value !== '<optimized out>').map(v => v.name);
    assert.ok(live.includes(which.live), `${which.live} in ${JSON.stringify([...vars.values()].map(v => [v.name, v.value]))}`);

    // a step: the next line of the handler
    let step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
    for (let i = 0; i < 3 && step.body.reason === 'breakpoint' && (await h.topFrame(threadId)).line === line; i++) {
      step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
    }
    assert.equal(step.body.reason, 'step');
    const after1 = await h.topFrame(threadId);
    assert.match(after1.name, new RegExp(`^${which.fn}\\b`));
    assert.ok((after1.line ?? 0) > line, `line ${after1.line} after ${line}`);

    // then without the breakpoint the run ends normally, each sys_open returning through ret_handler
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /hits? missed/);
    const returned = text.split('\n').filter(l => /sys_open returned -?\d+ \(entry stamp 1\)/.test(l)).length;
    assert.ok(returned >= 1, lines());
    assert.equal(text.split('\n').filter(l => /sys_open returned/.test(l)).length, returned, 'every return saw the entry handler\'s stamp');
    const st = (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'the probe list')).body as ProbeStateBody;
    const mod = st.kprobes.find(r => r.registeredBy === 'kretprobe_example');
    assert.ok(mod, JSON.stringify(st.kprobes.map(r => r.name)));
    assert.equal(mod.nmissed, 0);
    assert.equal(mod.nhit, returned);
  });

  test('an instance that entered before the breakpoint was set (through the kretprobe booster\'s trampoline on x86) stops in ret_handler when it returns', async () => {
    const out = collectOutput();
    const returnedLines = (): string[] => out.join('').split('\n').filter(l => /sys_open returned/.test(l));
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: FS }, breakpoints: [{ line: markerLine(FS, 'sys_open_ok') }] });
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `kretprobe_example-${arch}.ko`)], stopAtExit: true });
    // inside sys_open: its kretprobe instance is live, its return address the trampoline chosen at its entry
    const inside = await h.continueToStop();
    assert.equal(inside.body.reason, 'breakpoint');
    const threadId = inside.body.threadId as number;
    assert.match((await h.topFrame(threadId)).name, /^sys_open\b/);
    const before = returnedLines().length;
    // now the breakpoint in the return handler; the one in sys_open goes
    const line = lineOf(SRC, 'printk("%s returned');
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    await h.dc.setBreakpointsRequest({ source: { path: FS }, breakpoints: [] });
    const stop = await h.continueToStop(threadId);
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed|returned/.test(l)).slice(0, 5).join('\n')}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at /);
    const top = await h.topFrame(stop.body.threadId as number);
    assert.match(top.name, /^ret_handler\b/);
    assert.equal(top.line, line);
    // the very instance that was live at the first stop (no sys_open returned in between), not a later one
    assert.equal(returnedLines().length, before, returnedLines().join('\n'));
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(stop.body.threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    assert.doesNotMatch(out.join(''), /hits? missed|kretprobe BUG/);
    assert.ok(returnedLines().length > before);
  });
});
