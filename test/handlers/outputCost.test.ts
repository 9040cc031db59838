/**
 * Builtins that print are charged to the handler's step budget by the text
 * they add to the kernel log (one step per 8 bytes), not one step per call:
 * a loop of dump_stack() or of long printk()s meets the budget after a
 * bounded amount of output.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_STEP_BUDGET, HandlerFault } from '../../emulator/handlers';
import { FakeEnv } from './fakeEnv';
import { compile } from './helpers';

/** A FakeEnv whose dump_stack() prints a trace of a fixed length, as the probe env does. */
class TracingEnv extends FakeEnv {
  static readonly TRACE = 'CPU: 1 PID: 7 Comm: init Not tainted\nCall Trace:\n do_fork+0x0/0x9b\n worker_fn+0x8c/0x3d0\n ret_from_fork+0x0/0x1000\n';
  override dumpStack(): number {
    this.stacks++;
    this.log.push(TracingEnv.TRACE);
    return TracingEnv.TRACE.length;
  }
}

function budgetFault(fn: () => unknown): HandlerFault {
  try { fn(); } catch (e) { if (e instanceof HandlerFault) return e; throw e; }
  assert.fail('expected a budget fault');
}

describe('handler language: builtins that print are charged by their output', () => {
  test('a dump_stack() loop meets the step budget after about budget * 8 bytes of traces', () => {
    const env = new TracingEnv();
    const f = budgetFault(() => compile('while (1)\n  dump_stack();').run(env));
    assert.equal(f.kind, 'budget');
    const perCall = 1 + (TracingEnv.TRACE.length >> 3);
    // the loop's own steps (condition + statement) and the bytes printed
    assert.ok(env.stacks <= Math.ceil(DEFAULT_STEP_BUDGET / perCall), `${env.stacks} traces printed`);
    assert.ok(env.stacks >= Math.floor(DEFAULT_STEP_BUDGET / (perCall + 2)), `${env.stacks} traces printed`);
    assert.ok(env.text.length <= DEFAULT_STEP_BUDGET * 8 + TracingEnv.TRACE.length, `${env.text.length} bytes printed`);
  });

  test('a bounded dump_stack() loop within the budget runs to its end', () => {
    const env = new TracingEnv();
    assert.equal(compile('for (int i = 0; i < 1000; i++) dump_stack(); return 7;').run(env), 7n);
    assert.equal(env.stacks, 1000);
  });

  test('a long printk() costs its length: a loop of 1000-byte lines ends after about budget * 8 bytes', () => {
    const env = new FakeEnv();
    const f = budgetFault(() => compile(`while (1) printk("${'x'.repeat(999)}\\n");`).run(env));
    assert.equal(f.kind, 'budget');
    assert.ok(env.log.length <= Math.ceil(DEFAULT_STEP_BUDGET / 125), `${env.log.length} lines printed`);
    // short lines still cost one step each
    const short = new FakeEnv();
    budgetFault(() => compile('while (1) printk("x\\n");').run(short));
    assert.ok(short.log.length >= DEFAULT_STEP_BUDGET / 3, `${short.log.length} short lines`);
  });

  test('an env whose dump_stack() says nothing is charged nothing extra', () => {
    const env = new FakeEnv();
    assert.equal(compile('for (int i = 0; i < 1000; i++) dump_stack(); return 1;', 'pre', { stepBudget: 4000 }).run(env), 1n);
    assert.equal(env.stacks, 1000);
  });
});
