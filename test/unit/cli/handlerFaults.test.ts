/**
 * kprobe-run run with probe handlers that fault or run away (a handler is
 * user code: its faults are reports, never a crash), through runCli with a
 * capturing io. One output rule: what the kernel and the handlers print goes
 * to stdout, what the emulator says about the run (source 'emulator': oops
 * reports, handler fault reports, the runaway-probe message) goes to stderr
 * with the CLI's other errors.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { RUNAWAY_DISABLE_AFTER } from '../../../emulator/probes';
import { DEFAULT_STEP_BUDGET } from '../../../emulator/handlers';
import { repoPath } from '../../util/paths';

const IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(argv, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}

const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-faults-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
function probeFile(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

describe('kprobe-run run: handler faults and runaway handlers', () => {
  test('an endless printk loop in a pre handler with --max-instructions 2000000: ends promptly, bounded output, the probe disabled once', async () => {
    const f = probeFile('loop.kprobe', 'kprobe do_fork { pre { while (1) { printk("x\\n"); } return 0; } }\n');
    const t0 = Date.now();
    const r = await cli('run', IMAGE, '--probes', f, '--max-instructions', '2000000');
    assert.ok(Date.now() - t0 < 30_000);
    assert.equal(r.code, 0, r.err);
    const out = r.out.split('\n');
    const xs = out.filter(l => l === 'x').length;
    assert.ok(xs > 0 && xs <= RUNAWAY_DISABLE_AFTER * DEFAULT_STEP_BUDGET / 2, String(xs));
    const err = r.err.trimEnd().split('\n');
    assert.equal(err.filter(l => l.includes(': pre handler of kprobe do_fork faulted at do_fork+0x0: handler exceeded its step budget')).length, RUNAWAY_DISABLE_AFTER);
    assert.deepEqual(err.filter(l => l.includes(' disabled: ')), [
      `kprobe at do_fork+0x0 disabled: its handlers exceeded their step budget on ${RUNAWAY_DISABLE_AFTER} hits in a row (${f}:1:1: kprobe do_fork)`,
    ]);
    assert.ok(!out.some(l => l.includes('faulted') || l.includes(' disabled: ')), 'no emulator report on stdout');
    assert.ok(!err.includes('x'), 'no handler output on stderr');
  });

  test('an unhandled NULL write in a pre handler: the oops report on stderr names the handler\'s file:line:col; the console stays on stdout', async () => {
    const f = probeFile('null.kprobe', 'kprobe kprobe_target {\n  pre { printk("pre\\n"); *(u64 *)0x10 = 1; return 0; }\n}\n');
    const r = await cli('run', IMAGE, '--probes', f, '--cpus', '1');
    assert.notEqual(r.code, 0);
    const out = r.out.split('\n'), err = r.err.split('\n');
    assert.ok(out.includes('pre'));
    assert.ok(out.some(l => l.startsWith('Linux version ')), 'the console before the oops');
    assert.ok(!out.some(l => /BUG|Oops|faulted/.test(l)), r.out);
    const i = err.indexOf('BUG: kernel NULL pointer dereference, address: 0000000000000010');
    assert.ok(i >= 0, r.err);
    assert.equal(err[i + 4], `${f}:2:26: pre handler of kprobe kprobe_target faulted at kprobe_target+0x0: NULL pointer dereference: write of 8 byte(s) at 0x10`);
    assert.match(r.err, /machine halted: no runnable task left \(\d+ blocked, 1 oops\)/);
    // --handler-faults report: one diagnostic per fault on stderr, the kernel powers off
    const rep = await cli('run', IMAGE, '--probes', f, '--cpus', '1', '--handler-faults', 'report');
    assert.equal(rep.code, 0, rep.err);
    assert.ok(rep.err.split('\n').every(l => l === '' || l.endsWith(': pre handler of kprobe kprobe_target faulted at kprobe_target+0x0: NULL pointer dereference: write of 8 byte(s) at 0x10')), rep.err);
    assert.match((await cli('run', '--handler-faults', 'ignore')).err, /^kprobe-run: --handler-faults: expected oops or report, got 'ignore'\n$/);
  });

  test('a probe inside an instruction: a warning on stderr; --insn-boundary reject: -EILSEQ, the run goes on', async () => {
    const f = probeFile('split.kprobe', 'kprobe do_fork+0x3 { pre { return 0; } }\n');
    const mov = 'do_fork+0x3 is inside "mov rbp, rsp" (do_fork+0x1..+0x4)';
    const w = await cli('run', IMAGE, '--probes', f, '--max-instructions', '1');
    assert.ok(w.err.startsWith(`${f}:1:1: kprobe do_fork+0x3: warning: ${mov}: registered as on Linux 2.6`), w.err);
    const r = await cli('run', IMAGE, '--probes', f, '--insn-boundary', 'reject');
    assert.equal(r.code, 0);
    assert.equal(r.err, `${f}:1:1: kprobe do_fork+0x3: register_kprobe failed: -EILSEQ (${mov})\n`);
  });
});
