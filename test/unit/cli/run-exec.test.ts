/** `kprobe-run run` / `kprobe-run exec` through runCli (the same code dist/cli.js runs). */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { repoPath } from '../../util/paths';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(args, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}

const KERNEL = repoPath('examples/kernel/build/kernel-x86_64.elf');

describe('kprobe-run run/exec', () => {
  test('run IMAGE --cpus 1 --stats: console on stdout, exit code 0, stats on stderr', async () => {
    const r = await cli('run', KERNEL, '--cpus', '1', '--stats');
    assert.equal(r.code, 0);
    const lines = r.out.trimEnd().split('\n');
    assert.equal(lines[0], 'Linux version 2.6.99-kp (kprobe-debug sample kernel) x86_64');
    assert.equal(lines[1], 'smp: 1 CPU online');
    assert.equal(lines.at(-1), 'Power down.');
    assert.match(r.err, /^instructions: \d+\nseconds: \d+\.\d{3}\n$/);
  });

  test('the image defaults to the sample kernel and `run` is the default command', async () => {
    const r = await cli('--cpus=2');
    assert.equal(r.code, 0);
    assert.match(r.out, /^Linux version 2\.6\.99-kp .*\nsmp: 2 CPUs online\n/);
  });

  test('exit code = power-off code; halted and limit endings are reported on stderr', async () => {
    const r = await cli('run', repoPath('test/fixtures/kernel/bin/hcall.elf'));
    assert.equal(r.code, 42);
    const d = await cli(repoPath('test/fixtures/kernel/bin/deadlock.elf'));
    assert.equal(d.code, 1);
    assert.match(d.err, /deadlock\.elf: machine halted: no runnable task left \(2 blocked, 0 oops\)\n$/);
    const l = await cli(KERNEL, '--max-instructions', '1000');
    assert.equal(l.code, 124);
    assert.match(l.err, /stopped after 1000 instructions/);
  });

  test('unsupported architectures and bad options are one-line errors, exit 1', async () => {
    // every port has a CPU now: an image whose e_machine names an architecture without one (ppc64)
    const a = join(mkdtempSync(join(tmpdir(), 'kp-cli-')), 'ppc64.elf');
    const bytes = readFileSync(repoPath('examples/kernel/build/kernel-riscv64.elf'));
    bytes.writeUInt16LE(21 /* EM_PPC64 */, 18);
    writeFileSync(a, bytes);
    const r = await cli('run', a);
    assert.equal(r.code, 1);
    assert.equal(r.err, `kprobe-run: ${a}: unsupported machine ppc64: no CPU emulator for this architecture yet\n`);
    const b = await cli('run', '--frobnicate');
    assert.equal(b.code, 1);
    assert.match(b.err, /^kprobe-run: run: unknown option '--frobnicate' \(options: .*--cpus.*\)\n$/);
    assert.match((await cli('run', '--cpus', '0')).err, /--cpus: 0 is out of range \(1\.\.64\)/);
    assert.match((await cli('run', '--cpus')).err, /option --cpus needs a value/);
    assert.match((await cli('run', '--cpus', 'two')).err, /--cpus: expected a number, got 'two'/);
    assert.match((await cli('run', 'a.elf', 'b.elf')).err, /expected at most one IMAGE/);
    assert.match((await cli('run', '/nonexistent.elf')).err, /^kprobe-run: \/nonexistent\.elf: no such file\n$/);
  });

  test('exec PROG: program stdout, its exit status; arguments after PROG belong to it', async () => {
    const prog = repoPath('test/conformance/bin/exitcode-gcc-O2.elf');
    const r = await cli('exec', prog, '--cpus', 'x');
    assert.equal(r.code, 66);
    assert.match(r.out, /leaving with status 66\n$/);
    const s = await cli('exec', repoPath('test/fixtures/kernel/bin/user-segv.elf'));
    assert.equal(s.code, 139);
    assert.equal(s.out, 'about to fault\n');
    assert.match(s.err, /Segmentation fault/);
    assert.match((await cli('exec')).err, /exec: expected PROG\.elf/);
  });

  test('every architecture with a CPU boots the sample kernel to the same checksum; --list says when kprobes is not ported there', async () => {
    const sums = new Set<string>();
    for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
      const r = await cli('run', repoPath(`examples/kernel/build/kernel-${arch}.elf`), '--list');
      assert.equal(r.code, 0, `${arch}: ${r.err}`);
      const sum = /^summary: .*checksum [0-9a-f]{16}$/m.exec(r.out);
      assert.ok(sum, `${arch} prints its checksum line`);
      sums.add(sum[0]);
      assert.ok(r.out.includes('# cat /sys/kernel/debug/kprobes/list') || /no kprobes on this machine \(kprobes is not ported to \w+ yet\)/.test(r.out), `${arch}: ${r.out.slice(-300)}`);
      assert.doesNotMatch(r.err, /internal error/);
    }
    assert.equal(sums.size, 1, [...sums].join(', '));
  });
});
