/**
 * A breakpoint in the handlers of kprobes the kernel hits without a
 * breakpoint (examples/modules/fast_kprobe_example.c) through the adapter:
 * fib's optimized probe (the detour buffer calls the handlers) and
 * traced_function's ftrace-based probe (the ftrace trampoline calls them).
 * The machine stops inside the handler while the probe is being handled,
 * shows its arguments, steps through it, and continuing completes every
 * hit: none missed, every handler line there. Both kinds exist on x86_64
 * only (the other ports have neither optprobes nor kprobes on ftrace).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { Harness, kernelImage, lineOf, within } from './dapHarness';
import { repoPath } from '../util/paths';

const h = new Harness();
const SRC = repoPath('examples', 'modules', 'fast_kprobe_example.c');
const MODULE = repoPath('examples', 'modules', 'build', 'fast_kprobe_example-x86_64.ko');

function collectOutput(): string[] {
  const out: string[] = [];
  h.dc.on('output', (e: DebugProtocol.OutputEvent) => out.push(e.body.output));
  return out;
}

async function probeState(): Promise<ProbeStateBody> {
  return (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'the probe list')).body as ProbeStateBody;
}

/** the byte at addr as the CPU sees it (probe patches included) */
async function patchedByte(addr: string): Promise<number> {
  const r = await within(h.dc.customRequest(ProbeRequest.readMemory, { memoryReference: addr, count: 1, patched: true }) as Promise<DebugProtocol.Response>, 'the patched byte');
  return Buffer.from((r.body as DebugProtocol.ReadMemoryResponse['body'])?.data ?? '', 'base64')[0];
}

/** the frame's non-register variables by name */
async function frameVars(frameId: number): Promise<Map<string, DebugProtocol.Variable>> {
  const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
  const vars = new Map<string, DebugProtocol.Variable>();
  for (const s of scopes.filter(x => !/register/i.test(x.name))) {
    for (const v of (await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables) vars.set(v.name, v);
  }
  return vars;
}

/** at a stop in `fn` at `line`: its p and regs, p->symbol_name the probed function; then a step to a later line of it */
async function inspectAndStep(threadId: number, fn: string, line: number, probed: string): Promise<void> {
  const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
  assert.match(frames[0].name, new RegExp(`^${fn}\\b`));
  assert.equal(frames[0].line, line);
  const vars = await frameVars(frames[0].id);
  assert.ok(vars.has('p') && vars.has('regs'), [...vars.keys()].join(' '));
  // the handler's own p: the module's struct kprobe on the probed function
  const p = vars.get('p') as DebugProtocol.Variable;
  assert.ok(p.variablesReference > 0, JSON.stringify(p));
  const fields = (await h.dc.variablesRequest({ variablesReference: p.variablesReference })).body.variables;
  const deref = fields.length === 1 && fields[0].variablesReference > 0 && !fields.some(f => f.name === 'symbol_name')
    ? (await h.dc.variablesRequest({ variablesReference: fields[0].variablesReference })).body.variables : fields;
  assert.match(deref.find(f => f.name === 'symbol_name')?.value ?? '', new RegExp(`"${probed}"`), JSON.stringify(deref.map(f => [f.name, f.value])));
  let step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
  for (let i = 0; i < 3 && step.body.reason === 'breakpoint' && (await h.topFrame(threadId)).line === line; i++) {
    step = await h.stepAndWait(() => h.dc.nextRequest({ threadId }));
  }
  assert.equal(step.body.reason, 'step');
  const next = await h.topFrame(threadId);
  assert.match(next.name, new RegExp(`^${fn}\\b`));
  assert.ok((next.line ?? 0) > line, `line ${next.line} after ${line}`);
}

describe('a breakpoint in the handler of an optimized or ftrace-based kprobe on the x86_64 kernel', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('stops in fib_pre while fib\'s probe is [OPTIMIZED], steps, and continuing counts every hit in the handler (none missed)', async () => {
    const out = collectOutput();
    const line = lineOf(SRC, 'fib_hits++;');
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage('x86_64'), modules: [MODULE], stopAtExit: true, kprobesOptimization: true });
    // the first hits come through the breakpoint while the optimization is queued: on to a stop with the jump in
    // fib's code (its first byte e9 in the patched text)
    let stop = await h.continueToStop();
    let optimized = false;
    for (let i = 0; i < 200 && stop.body.reason === 'breakpoint'; i++) {
      assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at fib\+0x0 is being handled\)/);
      const row = (await probeState()).kprobes.find(r => r.registeredBy === 'fast_kprobe_example' && r.name === 'fib+0x0');
      optimized = row !== undefined && row.optimized && (await patchedByte(row.address)) === 0xe9;
      if (optimized) break;
      stop = await h.continueToStop(stop.body.threadId);
    }
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed|Planted/.test(l)).slice(0, 5).join('\n')}`);
    assert.ok(optimized, 'a stop in fib_pre with fib+0x0 [OPTIMIZED] and its jump in place');
    // the next hit jumps to the detour buffer, whose callback runs the handler: a stop there too
    stop = await h.continueToStop(stop.body.threadId);
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed/.test(l)).slice(0, 3).join('\n')}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at fib\+0x0 is being handled\)/);
    const threadId = stop.body.threadId as number;
    await inspectAndStep(threadId, 'fib_pre', line, 'fib');

    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    assert.doesNotMatch(out.join(''), /hits? missed/);
    const fib = (await probeState()).kprobes.find(r => r.registeredBy === 'fast_kprobe_example' && r.name === 'fib+0x0');
    assert.ok(fib);
    assert.equal(fib.nmissed, 0);
    const top = (await h.dc.stackTraceRequest({ threadId: end.body.threadId as number })).body.stackFrames[0];
    // the module's counter from a kernel frame (the module's DWARF): its value, and through its address its 8 bytes
    const val = await h.dc.evaluateRequest({ expression: 'fib_hits', frameId: top.id, context: 'watch' });
    assert.equal(val.body.result, String(fib.nhit), 'the handler counted every hit');
    const ref = await h.dc.evaluateRequest({ expression: '&fib_hits', frameId: top.id, context: 'watch' });
    const addr = /0x[0-9a-f]+/.exec(ref.body.result)?.[0];
    assert.ok(addr, ref.body.result);
    const mem = (await h.dc.customRequest('readMemory', { memoryReference: addr, count: 8 })).body as DebugProtocol.ReadMemoryResponse['body'];
    const bytes = Buffer.from(mem?.data ?? '', 'base64');
    assert.equal(bytes.length, 8);
    assert.equal(bytes.readBigUInt64LE(0), BigInt(fib.nhit));
  });

  for (const which of [
    { fn: 'traced_pre', marker: 'printk("traced_pre:' },
    { fn: 'traced_post', marker: 'printk("traced_post:' },
  ]) test(`stops in ${which.fn} of traced_function's [FTRACE] probe, steps, and continuing completes every hit (none missed)`, async () => {
    const out = collectOutput();
    const line = lineOf(SRC, which.marker);
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage('x86_64'), modules: [MODULE], stopAtExit: true });
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint', `${stop.body.description}: ${out.join('').split('\n').filter(l => /missed|Planted/.test(l)).slice(0, 5).join('\n')}`);
    assert.match(stop.body.description ?? '', /in a kprobe handler \(the kprobe at traced_function\+0x0 is being handled\)/);
    assert.equal((await probeState()).kprobes.find(r => r.registeredBy === 'fast_kprobe_example' && r.name === 'traced_function+0x0')?.ftrace, true);
    const threadId = stop.body.threadId as number;
    await inspectAndStep(threadId, which.fn, line, 'traced_function');

    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    const end = await h.continueToStop(threadId);
    assert.notEqual(end.body.reason, 'breakpoint');
    const text = out.join('');
    assert.doesNotMatch(text, /hits? missed/);
    const pre = text.split('\n').filter(l => /traced_pre: p->addr=/.test(l)).length;
    assert.ok(pre > 2);
    assert.equal(text.split('\n').filter(l => /traced_post: p->addr=/.test(l)).length, pre, 'a post_handler line per pre_handler line');
    const row = (await probeState()).kprobes.find(r => r.registeredBy === 'fast_kprobe_example' && r.name === 'traced_function+0x0');
    assert.ok(row);
    assert.equal(row.nhit, pre);
    assert.equal(row.nmissed, 0);
  });
});
