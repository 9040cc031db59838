/**
 * The adapter's errors are named once (adapter/errors.ts): unique ids per
 * meaning, the text prefix, and notifications only for actions the user
 * started (launch, writes, view actions) — never for evaluate, whose errors
 * the Debug Console shows inline. Bad requests (missing or ill-typed
 * arguments, a handler that throws) get an error naming the request and the
 * argument, never a JS stack.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { DAP_ERRORS, dapError } from '../../adapter/errors';
import { FRAME_STRIDE } from '../../adapter/inspector';
import { Harness, within } from './dapHarness';

describe('adapter errors', () => {
  test('ids name one meaning each (restart failure shares launch\'s)', () => {
    const byId = new Map<number, string[]>();
    for (const [name, k] of Object.entries(DAP_ERRORS)) byId.set(k.id, [...(byId.get(k.id) ?? []), name]);
    for (const [id, names] of byId) assert.ok(names.length === 1 || names.join() === 'launchFailed,restartFailed', `${id}: ${names.join(', ')}`);
  });

  test('evaluate errors are never notifications; writes and launch are', () => {
    assert.equal(dapError('evaluate', 'x').showUser, false);
    assert.equal(dapError('evaluateNoRegister', 'x').showUser, false);
    assert.equal(dapError('writeMemory', 'x').showUser, true);
    assert.deepEqual(dapError('notLaunched'), { id: 1002, format: 'kprobe: not launched', showUser: false });
    assert.equal(dapError('readMemory', new Error('bad')).format, 'kprobe: readMemory: bad');
  });
});

/** The message of a request that must fail, or a failure of the test. */
async function failure(p: Promise<unknown>, what: string): Promise<string> {
  try {
    await within(p, what);
  } catch (e) {
    const m = e instanceof Error ? e.message : String(e);
    if (/^timed out/.test(m)) throw e;
    return m;
  }
  throw new Error(`${what} succeeded but should fail`);
}

/** A JS stack or exception name in a message the user reads. */
const STACK = /\n\s+at |TypeError|ReferenceError|Cannot read properties|\{_stack\}/;

describe('bad requests get a DAP error naming the request and the argument, never a JS stack (adapter)', () => {
  const h = new Harness();
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('setBreakpoints without source', async () => {
    await h.launchWith(async () => {});
    const m = await failure(h.dc.customRequest('setBreakpoints', { breakpoints: [{ line: 3 }] }), 'setBreakpoints');
    assert.doesNotMatch(m, STACK);
    assert.match(m, /setBreakpoints: source is missing/);
    // the session goes on
    assert.equal((await h.dc.threadsRequest()).body.threads.length, 2);
  });

  test('dataBreakpointInfo with a variables reference that names nothing', async () => {
    await h.launchWith(async () => {});
    const m = await failure(h.dc.customRequest('dataBreakpointInfo', { name: 'nr_forks', variablesReference: FRAME_STRIDE * 900 }), 'dataBreakpointInfo');
    assert.doesNotMatch(m, STACK);
    assert.match(m, /dataBreakpointInfo: variables reference 900000 is unknown/);
  });

  test('ill-typed arguments of every request are refused by name, before the request changes anything', async () => {
    await h.launchWith(async () => {});
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['continue', { threadId: '1' }, /threadId "1" is not an integer/],
      ['next', {}, /threadId is missing/],
      ['stepBack', { threadId: 1.5 }, /threadId 1\.5 is not an integer/],
      ['stackTrace', { threadId: 1, levels: 'all' }, /levels "all" is not an integer/],
      ['scopes', { frameId: null }, /frameId is missing/],
      ['variables', { variablesReference: [] }, /variablesReference \[\.\.\.\] is not an integer/],
      ['setVariable', { variablesReference: 1000, name: 'ax' }, /value is missing/],
      ['evaluate', { expression: 42 }, /expression 42 is not a string/],
      ['readMemory', { memoryReference: '0x0' }, /count is missing/],
      ['writeMemory', { memoryReference: 7, data: '' }, /memoryReference 7 is not a string/],
      ['disassemble', { memoryReference: '0x0', instructionCount: '10' }, /instructionCount "10" is not an integer/],
      ['setBreakpoints', { source: 'fork.c' }, /source "fork.c" is not an object/],
      ['setBreakpoints', { source: {}, breakpoints: [{ line: 'x' }] }, /breakpoints\[0\]\.line "x" is not an integer/],
      ['setBreakpoints', { source: {}, lines: [1, null] }, /lines\[1\] null is not an integer/],
      ['setFunctionBreakpoints', { breakpoints: [{ name: 'do_fork' }, {}] }, /breakpoints\[1\]\.name is missing/],
      ['setFunctionBreakpoints', {}, /breakpoints is missing/],
      ['setInstructionBreakpoints', { breakpoints: 'x' }, /breakpoints "x" is not an array/],
      ['setDataBreakpoints', { breakpoints: [{ dataId: 5 }] }, /breakpoints\[0\]\.dataId 5 is not a string/],
      ['dataBreakpointInfo', { name: 'nr_forks', bytes: '4' }, /bytes "4" is not an integer/],
      ['source', {}, /sourceReference is missing/],
      ['pause', { threadId: {} }, /threadId \{\.\.\.\} is not an integer/],
    ];
    for (const [command, args, want] of cases) {
      const m = await failure(h.dc.customRequest(command, args), `${command} ${JSON.stringify(args)}`);
      assert.doesNotMatch(m, STACK, command);
      assert.match(m, new RegExp(`^kprobe: ${command}: `), m);
      assert.match(m, want, m);
    }
    // a refused breakpoint request left the breakpoints as they were; the machine is still stopped at the entry
    const st = await h.dc.threadsRequest();
    assert.equal(st.body.threads.length, 2);
    assert.ok((await h.topFrame(1)).name);
  });
});
