/**
 * The riscv64 sample kernel on the riscv64 CPU: it boots, runs its workers
 * on two CPUs and powers down with the same summary (checksum) line and the
 * same per-worker results as the x86_64 image; the riscv64 loopbench prints
 * qemu-riscv64's output.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { boot, runUser, SAMPLE_X86 } from '../../fixtures/kernel/harness';
import { repoPath } from '../../util/paths';

const SAMPLE_RV = 'examples/kernel/build/kernel-riscv64.elf';

describe('rv64 sample kernel', () => {
  test('boots and prints the same checksum lines as on x86_64', () => {
    const rv = boot(SAMPLE_RV);
    const x86 = boot(SAMPLE_X86);
    assert.equal(rv.exit.reason, 'poweroff');
    const summary = (lines: string[]) => lines.filter(l => l.startsWith('summary:'));
    assert.equal(summary(rv.lines).length, 1);
    assert.deepEqual(summary(rv.lines), summary(x86.lines));
    // the workers' results, order aside (interleaving differs with instruction counts)
    const done = (lines: string[]) => lines.filter(l => /: done, |^joined /.test(l)).sort();
    assert.deepEqual(done(rv.lines), done(x86.lines));
    assert.ok(rv.lines[0].endsWith('riscv64'), rv.lines[0]);
  });
  test('loopbench (clang -O2) matches qemu-riscv64', () => {
    const bin = 'test/conformance/bin/riscv64/loopbench-clang-O2.elf';
    const r = runUser(bin);
    assert.equal(r.stdout.toString('latin1'), readFileSync(repoPath('test/conformance/golden/riscv64/loopbench-clang-O2.out'), 'latin1'));
    assert.equal(r.exit.code, 0);
  });
});
