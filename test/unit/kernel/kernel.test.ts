/** Boots the x86_64 sample kernel through the Machine: console, exit code, CPU counts, determinism, limits. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../../emulator/machine';
import { SAMPLE_X86, boot, image, transcript } from '../../fixtures/kernel/harness';

const SUMMARY = 'summary: forks 80, rx 56 dropped 40, checksum f5eea83031290534';

describe('sample kernel (x86_64)', () => {
  test('boots to power off with code 0 and prints its console lines in order', () => {
    const r = boot(SAMPLE_X86, { cpus: 2 });
    assert.deepEqual(r.exit.reason, 'poweroff');
    assert.equal(r.exit.code, 0);
    assert.equal(r.lines[0], 'Linux version 2.6.99-kp (kprobe-debug sample kernel) x86_64');
    assert.equal(r.lines[1], 'smp: 2 CPUs online');
    assert.ok(r.lines.includes('selftest: fib(20) = 6765'));
    assert.ok(r.lines.includes('selftest: guarded read of 0x10: err=-14'), 'the __ex_table fixup turned the fault into -EFAULT');
    assert.ok(r.lines.includes('selftest: sys_open("/nonexistent") = -2'));
    for (const w of ['kworker/0:1', 'kworker/1:1', 'kworker/0:2', 'kworker/1:2']) {
      const cpu = w[8];
      assert.ok(r.lines.includes(`${w}: started on cpu ${cpu}`), w);
      const started = r.records.find(x => x.text === `${w}: started on cpu ${cpu}`)!;
      assert.equal(started.cpu, Number(cpu), 'printk record carries the CPU that printed');
    }
    // odd workers exit with kp_thread_exit(id), even ones return (exit code 0)
    assert.ok(r.lines.includes('joined kworker/0:1: exit code 0'));
    assert.ok(r.lines.includes('joined kworker/1:1: exit code 1'));
    assert.ok(r.lines.includes('joined kworker/1:2: exit code 3'));
    assert.equal(r.lines.at(-2), SUMMARY);
    assert.equal(r.lines.at(-1), 'Power down.');
    assert.ok(r.records.every(x => x.source === 'kernel'), 'no warnings or oops');
    assert.deepEqual(r.machine.kernel.tasks().map(t => [t.pid, t.comm, t.state]), [
      [1, 'init', 'exited'], [2, 'kworker/0:1', 'exited'], [3, 'kworker/1:1', 'exited'],
      [4, 'kworker/0:2', 'exited'], [5, 'kworker/1:2', 'exited'],
    ]);
  });

  for (const cpus of [1, 2, 4]) {
    test(`--cpus ${cpus}: finishes with the same summary`, () => {
      const r = boot(SAMPLE_X86, { cpus });
      assert.equal(r.exit.reason, 'poweroff');
      assert.equal(r.exit.code, 0);
      assert.equal(r.lines[1], `smp: ${cpus} CPU${cpus === 1 ? '' : 's'} online`);
      assert.equal(r.lines.at(-2), SUMMARY);
      const cpusUsed = new Set(r.records.map(x => x.cpu));
      assert.equal(cpusUsed.size, cpus, 'every CPU printed something');
    });
  }

  test('deterministic: two runs give the identical transcript (times, CPUs, text) and instruction count', () => {
    const a = boot(SAMPLE_X86, { cpus: 2 });
    const b = boot(SAMPLE_X86, { cpus: 2 });
    assert.deepEqual(transcript(a.records), transcript(b.records));
    assert.equal(a.machine.totalInstructions, b.machine.totalInstructions);
  });

  test('runSlice budgets do not change the interleaving', () => {
    const ref = boot(SAMPLE_X86, { cpus: 2 });
    const m = new Machine(image(SAMPLE_X86), { cpus: 2 });
    const recs: string[] = [];
    m.onPrintk(r => recs.push(`${r.timeNs} ${r.cpu} ${r.source} ${r.text}`));
    let slices = 0;
    for (;;) {
      const r = m.runSlice(777 + (slices % 5) * 1000);
      slices++;
      if (r.kind === 'exited') { assert.equal(r.code, 0); break; }
      assert.equal(r.kind, 'running');
    }
    assert.ok(slices > 100);
    assert.deepEqual(recs, transcript(ref.records));
    assert.equal(m.totalInstructions, ref.machine.totalInstructions);
  });

  test('virtual time: 1 ns per instruction slot, HZ 1000 jiffies', () => {
    const r = boot(SAMPLE_X86, { cpus: 1 });
    const k = r.machine.kernel;
    // one CPU never idles before power off, so time = instructions retired
    assert.equal(k.timeNs(), BigInt(r.machine.totalInstructions));
    assert.equal(k.jiffies(), k.timeNs() / 1_000_000n);
    for (let i = 1; i < r.records.length; i++) assert.ok(r.records[i].timeNs >= r.records[i - 1].timeNs);
  });

  test('maxInstructions stops the machine at exactly that count', () => {
    const r = boot(SAMPLE_X86, { cpus: 2, maxInstructions: 50_000 });
    assert.equal(r.exit.reason, 'limit');
    assert.equal(r.machine.totalInstructions, 50_000);
    assert.equal(r.exit.instructions, 50_000);
    assert.ok(!r.lines.includes('Power down.'));
    const m = new Machine(image(SAMPLE_X86), { maxInstructions: 1234 });
    assert.deepEqual(m.runSlice(1e9), { kind: 'limit', instructions: 1234 });
    assert.deepEqual(m.runSlice(1e9), { kind: 'limit', instructions: 1234 }, 'stays at the limit');
  });

  test('a smaller quantum changes the interleaving but not the result', () => {
    const r = boot(SAMPLE_X86, { cpus: 2, quantum: 1000 });
    assert.equal(r.exit.code, 0);
    assert.equal(r.lines.at(-2), SUMMARY);
  });
});
