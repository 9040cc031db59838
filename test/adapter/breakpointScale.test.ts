/**
 * A large breakpoint set (thousands of probes) does not block the session.
 * The adapter applies a breakpoint request in slices and answers other
 * requests in between; continue waits until the breakpoints received before
 * it are applied; the breakpoints are all registered, and replacing the set
 * removes the old ones. While a request is applied the views get no periodic
 * probe state (each would list every probe so far: with 10,000 breakpoints
 * they piled up hundreds of MB for the client ahead of the disconnect
 * response), one once it is done; a disconnect is answered while a large
 * request is still being applied, and that request and the ones queued
 * behind it are then answered with their breakpoints unverified (not with an
 * error, which a client ending its session would log as a failure).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { loadElf } from '../../emulator/elf';
import { Harness, within } from './dapHarness';
import { ProbeEvent, ProbeStateBody } from '../../adapter/dapCustom';
import { repoPath } from '../util/paths';
import { SESSION_ENDED_MESSAGE } from '../../adapter/breakpointSession';

/** `name+0xoff` for every instruction start of the many-functions image's cold functions (up to n) */
function coldTargets(n: number): string[] {
  const image = loadElf(MANY);
  const out: string[] = [];
  // the cold functions are `push rbp; mov rbp,rsp; ...`: probe the first two instructions of each
  for (const f of [...image.symbols.functions()].filter(s => s.name.startsWith('cold_'))) {
    out.push(f.name, `${f.name}+0x1`);
    if (out.length >= n) break;
  }
  return out.slice(0, n);
}

const MANY = repoPath('test', 'fixtures', 'kernel', 'many', 'many.elf');
/** a source path for line breakpoints the session never resolves (the request is answered after the session ended) */
const MANY_SOURCE = repoPath('test', 'fixtures', 'kernel', 'many', 'cold.c');

describe('large breakpoint sets (adapter)', () => {
  const h = new Harness();
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('other requests are answered while 3,000 function breakpoints are applied; all are registered', async () => {
    await h.launchWith(async () => {}, { program: MANY, cpus: 1 });
    const names = coldTargets(3000);
    const order: string[] = [];
    const set = h.dc.setFunctionBreakpointsRequest({ breakpoints: names.map(name => ({ name })) }).then(r => { order.push('setFunctionBreakpoints'); return r; });
    // sent after the breakpoint request: answered first, from between two slices of it
    const threads = h.dc.threadsRequest().then(r => { order.push('threads'); return r; });
    const [r, t] = await within(Promise.all([set, threads]), 'the two responses', 60_000);
    assert.deepEqual(order, ['threads', 'setFunctionBreakpoints']);
    assert.equal(t.body.threads.length, 1);
    assert.equal(r.body.breakpoints.length, 3000);
    const failed = r.body.breakpoints.filter(b => !b.verified);
    assert.deepEqual(failed, []);
    // distinct ids, each with its own address
    assert.equal(new Set(r.body.breakpoints.map(b => b.id)).size, 3000);
    assert.equal(new Set(r.body.breakpoints.map(b => b.instructionReference)).size, 3000);
    // replacing the set removes them: one breakpoint left
    const again = await within(h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'bench_target' }] }), 'the replacing set', 60_000);
    assert.equal(again.body.breakpoints.length, 1);
    assert.ok(again.body.breakpoints[0].verified);
    const list = (await h.dc.customRequest('_probeDebugfs')).body as { list: string };
    assert.equal(list.list.trim().split('\n').length, 1, list.list);
    assert.match(list.list, /bench_target\+0x0/);
  });

  test('continue sent right after a large breakpoint request runs with the breakpoints applied', async () => {
    await h.launchWith(async () => {}, { program: MANY, cpus: 1 });
    const names = [...coldTargets(2000), 'bench_target'];
    const set = h.dc.setFunctionBreakpointsRequest({ breakpoints: names.map(name => ({ name })) });
    const stop = h.dc.waitForEvent('stopped') as Promise<DebugProtocol.StoppedEvent>;
    // not awaited: the continue is queued behind the breakpoint request
    const cont = h.dc.continueRequest({ threadId: 1 });
    const [r] = await within(Promise.all([set, cont]), 'setFunctionBreakpoints and continue', 60_000);
    const ev = await within(stop, 'the breakpoint stop', 60_000);
    assert.equal(ev.body.reason, 'breakpoint');
    const target = r.body.breakpoints[r.body.breakpoints.length - 1];
    assert.ok(target.verified);
    const frame = await h.topFrame(1);
    assert.equal(frame.instructionPointerReference, target.instructionReference);
  });

  test('no probe-state events while 3,200 function breakpoints and 1,000 instruction breakpoints are applied; one with all of them after', async () => {
    await h.launchWith(async () => {}, { program: MANY, cpus: 1 });
    const log: string[] = [];
    const states: ProbeStateBody[] = [];
    h.dc.on(ProbeEvent.state, (e: DebugProtocol.Event) => { log.push('state'); states.push(e.body as ProbeStateBody); });
    const names = coldTargets(3200);
    const image = loadElf(MANY);
    const refs = [...image.symbols.functions()].filter(f => f.name.startsWith('cold_')).slice(0, 1000).map(f => `0x${(f.value + 4n).toString(16)}`);
    const fn = h.dc.setFunctionBreakpointsRequest({ breakpoints: names.map(name => ({ name })) }).then(r => { log.push('functions'); return r; });
    const insn = h.dc.customRequest('setInstructionBreakpoints', { breakpoints: refs.map(instructionReference => ({ instructionReference })) }).then(r => { log.push('instructions'); return r; });
    const [f, i] = await within(Promise.all([fn, insn]), 'the two breakpoint responses', 120_000);
    assert.equal(f.body.breakpoints.filter(b => b.verified).length, names.length);
    assert.equal((i.body as DebugProtocol.SetInstructionBreakpointsResponse['body']).breakpoints.filter(b => b.verified).length, refs.length);
    assert.deepEqual(log.slice(0, 2), ['functions', 'instructions'], `events before the responses: ${log.join(' ')}`);
    await within(new Promise<void>(resolve => {
      const check = (): void => { if (states.length && states[states.length - 1].kprobes.length >= names.length + refs.length) resolve(); else setImmediate(check); };
      check();
    }), 'a state event with every breakpoint');
  });

  test('disconnect while a large breakpoint request is applied is answered before it; the rest of that request and the ones behind it are answered unverified', async () => {
    await h.launchWith(async () => {}, { program: MANY, cpus: 1 });
    const order: string[] = [];
    const names = coldTargets(3200);
    const set = h.dc.setFunctionBreakpointsRequest({ breakpoints: names.map(name => ({ name })) });
    // queued behind the large request: a source breakpoint and an instruction breakpoint
    const src = h.dc.setBreakpointsRequest({ source: { path: MANY_SOURCE }, breakpoints: [{ line: 7 }, { line: 9 }] });
    const insn = h.dc.customRequest('setInstructionBreakpoints', { breakpoints: [{ instructionReference: '0xffffffff81000000' }] }) as Promise<DebugProtocol.SetInstructionBreakpointsResponse>;
    const done = (name: string, p: Promise<unknown>): Promise<void> => p.then(() => { order.push(name); }, (e: Error) => { order.push(`${name} failed: ${e.message}`); });
    const all = Promise.all([done('set', set), done('source', src), done('instruction', insn)]);
    await within(done('disconnect', h.dc.disconnectRequest({})), 'the disconnect response');
    await within(all, 'the breakpoint responses');
    assert.deepEqual(order, ['disconnect', 'set', 'source', 'instruction']);
    // the function request stopped part-way: none of its answers claims a breakpoint was set
    const fb = (await set).body.breakpoints;
    assert.equal(fb.length, names.length);
    for (const b of fb) assert.deepEqual({ verified: b.verified, message: b.message }, { verified: false, message: SESSION_ENDED_MESSAGE });
    // the source request was never applied: each breakpoint is answered at the line the client sent
    assert.deepEqual((await src).body.breakpoints.map(b => [b.verified, b.line, b.message]), [[false, 7, SESSION_ENDED_MESSAGE], [false, 9, SESSION_ENDED_MESSAGE]]);
    assert.deepEqual((await insn).body.breakpoints.map((b: DebugProtocol.Breakpoint) => [b.verified, b.message]), [[false, SESSION_ENDED_MESSAGE]]);
  });
});
