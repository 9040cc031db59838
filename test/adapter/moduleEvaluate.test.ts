/**
 * Evaluate (Watch, Debug Console) in and around a module's code, on every
 * architecture with kprobes (examples/modules/fast_kprobe_example.c: fib's
 * kprobe counts its hits in the module's global fib_hits). At a stop in
 * the module's pre handler fib_pre, an expression uses the names of the
 * frame asked for, as the Variables view does: `p->symbol_name` is the
 * handler's own argument's ("fib"), not the debugger's breakpoint probe at
 * fib_pre. From a kernel frame, the module's globals are known as gdb
 * knows them once the module's symbols are added: `fib_hits` is its value
 * and `&fib_hits` its address.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { KPROBE_ARCHES } from '../kprobes/harness';
import { FORK_C, Harness, kernelImage, lineOf, markerLine } from './dapHarness';
import { repoPath } from '../util/paths';

const h = new Harness();
const SRC = repoPath('examples', 'modules', 'fast_kprobe_example.c');

async function evaluate(expression: string, frameId: number): Promise<DebugProtocol.EvaluateResponse['body']> {
  return (await h.dc.evaluateRequest({ expression, frameId, context: 'watch' })).body;
}

/** the integer an evaluate result shows (`22`, or the handler language's `0x16 (22)`) */
function numberOf(result: string): bigint {
  const m = /^(-?\d+)$/.exec(result) ?? /^0x[0-9a-f]+ \((-?\d+)\)$/.exec(result);
  assert.ok(m, `an integer: ${result}`);
  return BigInt(m[1]);
}

for (const arch of KPROBE_ARCHES) describe(`evaluate in a module's handler and of a module's globals on the ${arch} kernel`, () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('at a stop in fib_pre, p->symbol_name is the frame\'s p; from do_fork, fib_hits is the module global\'s value and &fib_hits its address', async () => {
    const line = lineOf(SRC, 'fib_hits++;');
    await h.launchWith(async () => {
      await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [{ line }] });
    }, { program: kernelImage(arch), modules: [repoPath('examples', 'modules', 'build', `fast_kprobe_example-${arch}.ko`)], stopAtExit: true });
    const stop = await h.continueToStop();
    assert.equal(stop.body.reason, 'breakpoint', stop.body.description);
    const threadId = stop.body.threadId as number;
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.match(frames[0].name, /^fib_pre\b/);
    // the Variables view's p and the Watch view's agree: the module's struct kprobe on fib (or, where the compiler
    // kept no location for p at this pc, both say so)
    const args = (await h.dc.scopesRequest({ frameId: frames[0].id })).body.scopes.find(x => x.name === 'Arguments');
    assert.ok(args);
    const p = (await h.dc.variablesRequest({ variablesReference: args.variablesReference })).body.variables.find(v => v.name === 'p');
    assert.ok(p, 'fib_pre\'s p in the Variables view');
    if (p.value === '<optimized out>') {
      await assert.rejects(evaluate('p->symbol_name', frames[0].id), /'p' \(parameter of fib_pre\) is optimized out/);
    } else {
      const sym = await evaluate('p->symbol_name', frames[0].id);
      assert.match(sym.result, /"fib"/, sym.result);
      assert.equal(numberOf((await evaluate('(unsigned long)p->addr == symbol("fib")', frames[0].id)).result), 1n);
    }
    // the module's own global from its own frame: a number
    const hitsHere = numberOf((await evaluate('fib_hits', frames[0].id)).result);

    // on to a kernel frame (do_fork's body, after some of fib's hits), the breakpoint in the handler gone
    await h.dc.setBreakpointsRequest({ source: { path: SRC }, breakpoints: [] });
    await h.dc.setBreakpointsRequest({ source: { path: FORK_C }, breakpoints: [{ line: markerLine(FORK_C, 'do_fork_body') }] });
    const inFork = await h.continueToStop(threadId);
    assert.equal(inFork.body.reason, 'breakpoint');
    const top = (await h.dc.stackTraceRequest({ threadId: inFork.body.threadId as number })).body.stackFrames[0];
    assert.match(top.name, /^do_fork\b/);
    const value = await evaluate('fib_hits', top.id);
    assert.match(value.result, /^\d+$/, `the value, not the symbol's address: ${value.result}`);
    assert.ok(BigInt(value.result) >= hitsHere);
    const ref = await evaluate('&fib_hits', top.id);
    const at = /0x[0-9a-f]+/.exec(ref.result)?.[0];
    assert.ok(at, ref.result);
    const mem = (await h.dc.customRequest('readMemory', { memoryReference: at, count: 8 })).body as DebugProtocol.ReadMemoryResponse['body'];
    assert.equal(Buffer.from(mem?.data ?? '', 'base64').readBigUInt64LE(0), BigInt(value.result));
    // an expression over it in the handler language too
    assert.equal(numberOf((await evaluate('fib_hits + 1', top.id)).result), BigInt(value.result) + 1n);
  });
});
