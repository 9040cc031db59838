/** Hypercall edge cases (fixture hcall.c prints every result) and the halted outcome. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { boot, fixture } from '../../fixtures/kernel/harness';

describe('hypercalls', () => {
  test('edge cases return the documented values', () => {
    const r = boot(fixture('hcall'), { cpus: 2 });
    assert.match(r.lines[3], /^kprobe-debug: unknown hypercall 99 at start_kernel\+0x[0-9a-f]+\/0x[0-9a-f]+: returning -ENOSYS$/);
    assert.deepEqual(r.lines.filter((_, i) => i !== 3), [
      'nr_cpus=2',
      'cpu_id=0',
      'current_pid=1',
      'unknown hypercall=-38',
      'unknown hypercall again=-38',
      'create on cpu 7=-22',
      'create on cpu -1=-22',
      'create with bad comm=-14',
      'console_write bad buffer=-14',
      'console_write 0 bytes=0',
      'join missing pid=-3',
      'join self=-35',
      'created=2',
      'thread arg=1234',
      'join returned=0',
      'join again=0',
      'join exit5=5',
      'nameless pid=4',
      'nameless cpu=1',
      'join nameless=0',
      'yield alone: ok',
      'hlt slept one tick=1',
      'hlt time at tick=1',
      'partial line without newline... completed',
      'trailing text flushed at power off',
    ]);
    assert.equal(r.records[3].source, 'emulator', 'the warning is an emulator record, printed once');
    assert.equal(r.exit.reason, 'poweroff');
    assert.equal(r.exit.code, 42, 'power off from a thread on CPU 1 while init is blocked in join');
    const k = r.machine.kernel;
    assert.equal(k.taskByPid(4)?.comm, 'kthread', 'NULL comm');
    assert.equal(k.taskByPid(3)?.exitCode, 5);
    assert.equal(k.taskByPid(1)?.state, 'blocked');
  });

  test('init and a thread joining each other: the machine halts with code 1', () => {
    const r = boot(fixture('deadlock'), { cpus: 2 });
    assert.deepEqual(r.lines, ['init: joining thread', 'thread: joining init']);
    assert.equal(r.exit.reason, 'halted');
    assert.equal(r.exit.code, 1);
    assert.equal(r.exit.detail, 'no runnable task left (2 blocked, 0 oops)');
  });
});

