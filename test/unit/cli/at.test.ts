/**
 * `kprobe-run run --at N:ACTION` (run-time actions from the CLI, what a
 * module or a shell does to a live kernel): disable / enable / unregister a
 * --probes probe, the debugfs enabled knob and a sysctl after N instructions;
 * deterministic (two runs print the same); bad actions are one-line errors
 * naming the option.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { repoPath } from '../../util/paths';

const IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(argv, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}
const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-at-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const file = join(tmp, 'f.kprobe');
writeFileSync(file, 'kprobe kprobe_target { pre { printk("t\\n"); return 0; } }\nkprobe fib { pre { return 0; } }\n');
const hits = (out: string): number => out.split('\n').filter(l => l === 't').length;

describe('kprobe-run run --at', () => {
  test('disable then enable a probe by target and by FILE:LINE: fewer hits than without, same output twice', async () => {
    const full = await cli('run', IMAGE, '--probes', file);
    const a = await cli('run', IMAGE, '--probes', file, '--at', '300000:disable=kprobe_target', '--at', '400000:enable=f.kprobe:1', '--list');
    assert.equal(a.code, 0);
    assert.ok(hits(a.out) > 0 && hits(a.out) < hits(full.out), `${hits(a.out)} of ${hits(full.out)}`);
    assert.match(a.err, /^kprobe-run: at \d+ instructions: disable_kprobe .*f\.kprobe:1 \(kprobe kprobe_target\)$/m);
    assert.match(a.err, /^kprobe-run: at \d+ instructions: enable_kprobe .*f\.kprobe:1 \(kprobe kprobe_target\)$/m);
    const b = await cli('run', IMAGE, '--probes', file, '--at', '300000:disable=kprobe_target', '--at', '400000:enable=f.kprobe:1', '--list');
    assert.equal(b.out, a.out);
    assert.equal(b.err, a.err);
  });

  test('unregister, the enabled knob and a sysctl at run time', async () => {
    const r = await cli('run', IMAGE, '--probes', file, '--at', '100:sysctl=debug.kprobes_optimization=0', '--at', '200:unregister=fib',
      '--at', '300000:kprobes-enabled=0', '--list');
    assert.equal(r.code, 0);
    assert.match(r.err, /sysctl debug\.kprobes_optimization=0/);
    assert.match(r.err, /unregister_kprobe .*f\.kprobe:2 \(kprobe fib\)/);
    assert.match(r.out, /^# cat \/sys\/kernel\/debug\/kprobes\/enabled\n0$/m);
    assert.doesNotMatch(r.out, /fib\+0x0/, 'fib unregistered');
    assert.doesNotMatch(r.out, /\[OPTIMIZED\]/, 'optimization off before the probes could be optimized');
  });

  test('unregistering an already-unregistered probe is harmless (by target, by FILE:LINE): a line says so, the run and --list go on', async () => {
    for (const again of ['fib', 'f.kprobe:2', `${file}:2`]) {
      const r = await cli('run', IMAGE, '--probes', file, '--at', '200:unregister=f.kprobe:2', '--at', `300:unregister=${again}`, '--list');
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /^kprobe-run: at \d+ instructions: unregister_kprobe .*f\.kprobe:2 \(kprobe fib\)$/m);
      assert.match(r.err, /^kprobe-run: at \d+ instructions: unregister_kprobe .*f\.kprobe:2 \(kprobe fib\): already unregistered \(at \d+ instructions\), nothing to do$/m);
      assert.match(r.out, /^# cat \/sys\/kernel\/debug\/kprobes\/list$/m, '--list printed');
      assert.match(r.out, /kprobe_target\+0x0/);
      assert.doesNotMatch(r.out, /fib\+0x0/);
      assert.ok(hits(r.out) > 0);
    }
    // enable / disable of an unregistered probe: Linux's -EINVAL, one line naming the option
    const e = await cli('run', IMAGE, '--probes', file, '--at', '200:unregister=fib', '--at', '300:enable=fib');
    assert.equal(e.code, 1);
    assert.match(e.err, /^kprobe-run: --at 300:enable=fib: enable_kprobe .*f\.kprobe:2 \(kprobe fib\): -EINVAL, the probe was already unregistered \(at \d+ instructions\)$/m);
  });

  test('bad actions: one line naming the option', async () => {
    const a = await cli('run', IMAGE, '--at', '10:frob=1');
    assert.notEqual(a.code, 0);
    assert.equal(a.err.trim().split('\n').length, 1);
    assert.match(a.err, /--at: unknown action 'frob' \(known: kprobes-enabled, sysctl, disable, enable, unregister\)/);
    const b = await cli('run', IMAGE, '--probes', file, '--at', '1000:disable=nope');
    assert.match(b.err, /--at 1000:disable=nope: no --probes probe 'nope'/);
    const c = await cli('run', IMAGE, '--at', 'soon:disable=x');
    assert.match(c.err, /--at: expected N:ACTION=ARG/);
  });
});
