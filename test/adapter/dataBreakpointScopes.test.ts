/**
 * Break on Value Change from the Variables view over DAP, as VS Code sends
 * it (dataBreakpointInfo with the variablesReference of the scope or value
 * the variable sits in, then setDataBreakpoints): a Globals scope with the
 * frame's unit's globals, a member under a pointer local of a caller frame
 * evaluated in that frame, a local in a stack slot, a local the compiler
 * keeps in a register refused with the reason, and the address forms.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness } from './dapHarness';
import { assertFrameAt } from './frameAt';

const h = new Harness();

async function scope(frameId: number, name: string): Promise<DebugProtocol.Scope> {
  const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
  const s = scopes.find(x => x.name === name);
  assert.ok(s, `no ${name} scope: ${scopes.map(x => x.name).join(', ')}`);
  return s;
}

async function vars(ref: number): Promise<DebugProtocol.Variable[]> {
  return (await h.dc.variablesRequest({ variablesReference: ref })).body.variables;
}

/** Launch with a function breakpoint on do_fork and stop there (worker_fn is its caller). */
async function stopInDoFork(): Promise<DebugProtocol.StackFrame[]> {
  await h.launchWith(async () => {
    await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_fork' }] });
  });
  const stop = await h.continueToStop();
  await h.dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  return (await h.dc.stackTraceRequest({ threadId: stop.body.threadId as number })).body.stackFrames;
}

describe('adapter: Break on Value Change from the Variables view', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('the Globals scope of do_fork holds fork.c\'s nr_forks; Break on Value Change on it stops after the next fork\'s increment', async () => {
    const frames = await stopInDoFork();
    assertFrameAt(frames[0], 'do_fork', 0n);
    const globals = await scope(frames[0].id, 'Globals');
    const list = await vars(globals.variablesReference);
    const nr = list.find(v => v.name === 'nr_forks');
    assert.ok(nr, list.map(v => v.name).join(', '));
    assert.equal(nr.type, 'long');
    assert.ok(list.some(v => v.name === 'last_pid'), 'the unit\'s other static');
    assert.equal(nr.evaluateName, 'nr_forks');
    const before = BigInt(nr.value);
    const info = (await h.dc.dataBreakpointInfoRequest({ variablesReference: globals.variablesReference, name: 'nr_forks' })).body;
    assert.match(info.dataId ?? '', /^0x[0-9a-f]{16}\/8$/, info.description);
    assert.match(info.description, /^nr_forks: 8 bytes \(long\) at 0x[0-9a-f]+ <nr_forks\+0x0>$/);
    const set = (await h.dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: info.dataId as string, accessType: 'write' }] })).body.breakpoints;
    assert.equal(set[0].verified, true, JSON.stringify(set[0]));
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'data breakpoint');
    const m = /write to nr_forks \(0x[0-9a-f]+\): (\d+) -> (\d+)/.exec(stop.body.description ?? '');
    assert.ok(m, stop.body.description);
    assert.deepEqual([BigInt(m[1]), BigInt(m[2])], [before, before + 1n]);
  });

  test('a member under a pointer local of a caller frame (w->checksum in worker_fn) is evaluated in that frame', async () => {
    const frames = await stopInDoFork();
    const caller = frames.find(f => f.name.startsWith('worker_fn'));
    assert.ok(caller, frames.map(f => f.name).join(' < '));
    const locals = await vars((await scope(caller.id, 'Locals')).variablesReference);
    const w = locals.find(v => v.name === 'w');
    assert.ok(w && w.variablesReference > 0, JSON.stringify(w));
    const members = await vars(w.variablesReference);
    const checksum = members.find(v => v.name === 'checksum');
    assert.equal(checksum?.evaluateName, 'w->checksum');
    const info = (await h.dc.dataBreakpointInfoRequest({ variablesReference: w.variablesReference, name: 'checksum' })).body;
    assert.match(info.dataId ?? '', /\/8$/, info.description);
    // the same bytes as the expression in that frame
    const addr = (await h.evaluate('&w->checksum', caller.id)).result;
    assert.equal(BigInt(/^0x[0-9a-f]+/.exec(info.dataId ?? '')?.[0] ?? -1), BigInt(/0x[0-9a-f]+/.exec(addr)?.[0] ?? -2));
    // by frameId, as a watch expression of that frame
    const byFrame = (await h.dc.dataBreakpointInfoRequest({ frameId: caller.id, name: 'w->checksum' })).body;
    assert.equal(byFrame.dataId, info.dataId);
  });

  test('a local in a stack slot can be watched (said to be one); a local kept in a register is refused with the register named', async () => {
    const frames = await stopInDoFork();
    const caller = frames.find(f => f.name.startsWith('worker_fn'));
    assert.ok(caller);
    const localsRef = (await scope(caller.id, 'Locals')).variablesReference;
    // ptid's address is passed to do_fork: it lives in memory
    const ptid = (await h.dc.dataBreakpointInfoRequest({ variablesReference: localsRef, name: 'ptid' })).body;
    assert.match(ptid.dataId ?? '', /\/4$/, ptid.description);
    assert.match(ptid.description, /^ptid: 4 bytes \(int\) at 0x[0-9a-f]+ \(a stack slot of worker_fn.*: other data once the function returns\)$/);
    const answers = await Promise.all((await vars(localsRef)).map(async v =>
      ({ v, info: (await h.dc.dataBreakpointInfoRequest({ variablesReference: localsRef, name: v.name })).body })));
    const inRegister = answers.filter(a => a.info.dataId === null && /in register/.test(a.info.description));
    assert.ok(inRegister.length > 0, answers.map(a => `${a.v.name}: ${a.info.description}`).join('\n'));
    for (const { v, info } of inRegister) {
      assert.match(info.description, new RegExp(`^'${v.name}' has no address here: it is in register \\w+: the debug registers watch memory addresses`));
    }
    // a parameter of do_fork held in a register at its entry: the same reason
    const argsRef = (await scope(frames[0].id, 'Arguments')).variablesReference;
    const flags = (await h.dc.dataBreakpointInfoRequest({ variablesReference: argsRef, name: 'clone_flags' })).body;
    assert.equal(flags.dataId, null);
    assert.match(flags.description, /clone_flags' has no address here: it is in register \w+/);
  });

  test('address forms: &sym and ADDR/N as addresses, a bare address sized by the bytes asked for with a hint at the object\'s size', async () => {
    await stopInDoFork();
    const amp = (await h.dc.dataBreakpointInfoRequest({ name: '&nr_forks', asAddress: true })).body;
    assert.match(amp.dataId ?? '', /^0x[0-9a-f]{16}\/8$/, amp.description);
    const addr = amp.dataId!.split('/')[0];
    const sized = (await h.dc.dataBreakpointInfoRequest({ name: `${addr}/4`, asAddress: true })).body;
    assert.equal(sized.dataId, `${addr}/4`);
    // VS Code's "Add Data Breakpoint at Address" sends the address and 1 byte unless told "ADDRESS + N"
    const one = (await h.dc.dataBreakpointInfoRequest({ name: addr, asAddress: true, bytes: 1 })).body;
    assert.equal(one.dataId, `${addr}/1`);
    assert.equal(one.description, `1 byte at ${addr} <nr_forks+0x0> (nr_forks is 8 bytes: enter "${addr} + 8" to watch all of it)`);
    const bad = (await h.dc.dataBreakpointInfoRequest({ name: '&no_such_symbol_here', asAddress: true })).body;
    assert.equal(bad.dataId, null);
    assert.match(bad.description, /no_such_symbol_here/);
    // a reference nobody handed out, a frame that is not there: a DAP error naming it
    await assert.rejects(h.dc.dataBreakpointInfoRequest({ variablesReference: 987_654, name: 'x' }), /kprobe: dataBreakpointInfo: variables reference 987654 is unknown or from an earlier stop/);
    await assert.rejects(h.dc.dataBreakpointInfoRequest({ frameId: 999_999, name: 'nr_forks' }), /kprobe: dataBreakpointInfo: unknown frame 999999/);
  });
});
