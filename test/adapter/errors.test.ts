/**
 * The adapter's errors are named once (adapter/errors.ts): unique ids per
 * meaning, the text prefix, and notifications only for actions the user
 * started (launch, writes, view actions) — never for evaluate, whose errors
 * the Debug Console shows inline.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DAP_ERRORS, dapError } from '../../adapter/errors';

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
