/**
 * kprobe-run and the hit log: --hist prints each kretprobe's latency
 * histogram in bpftrace's layout at the end of the run, --list includes
 * them, and the missed-hit warnings (maxactive too small) are printed on
 * stderr at the end, one line per probe.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';

const IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-hist-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** one histogram block of the output: its header and bucket lines */
function block(out: string, header: string): string[] {
  const lines = out.split('\n');
  const i = lines.indexOf(header);
  assert.ok(i >= 0, `${header} in:\n${out}`);
  const rest = lines.slice(i + 1);
  return [header, ...rest.slice(0, rest.indexOf(''))];
}

describe('kprobe-run --hist', () => {
  test('prints the kretprobe latency histogram in bpftrace\'s layout; a too-small maxactive is one warning line with its suggestion', async () => {
    const f = join(tmp, 'fib.kprobe');
    writeFileSync(f, 'kretprobe fib maxactive=3 { return { return 0; } }\nkretprobe sys_open { return { return 0; } }\n');
    const c = captureIo();
    const code = await runCli(['run', IMAGE, '--probes', f, '--hist'], c.io);
    assert.equal(code, 0, c.stderr());
    for (const name of ['fib+0x0', 'sys_open+0x0']) {
      const b = block(c.stdout(), `@latency_ns[${name}]:`);
      assert.ok(b.length >= 2, `${name}: bucket lines`);
      const counts = b.slice(1).map(l => {
        const m = /^(\[\d+[KMGT]?(?:, \d+[KMGT]?\))?|\[\d+\]) *(\d+) \|(@*) *\|$/.exec(l);
        assert.ok(m, `bpftrace line: '${l}'`);
        assert.equal(l.length, 16 + 8 + 2 + 52 + 1, 'label 16, count 8, " |", bar 52, "|"');
        return { count: Number(m[2]), bar: m[3].length };
      });
      const max = Math.max(...counts.map(x => x.count));
      assert.ok(counts.some(x => x.bar === 52 && x.count === max), 'the largest bucket has the full bar');
      assert.ok(counts[0].count > 0 && counts[counts.length - 1].count > 0, 'first and last printed buckets are non-empty');
    }
    const warns = c.stderr().split('\n').filter(l => l.startsWith('kprobe-run: warning: '));
    assert.equal(warns.length, 1, c.stderr());
    assert.match(warns[0], /^kprobe-run: warning: kretprobe fib\+0x0: \d+ instances missed \(maxactive=3\); maxactive=(\d+) would have sufficed \(observed \1 concurrent calls\)$/);
  });

  test('--list includes the histograms; no kretprobe: --hist says so; --hit-log-size is checked', async () => {
    const f = join(tmp, 'open.kprobe');
    writeFileSync(f, 'kretprobe sys_open maxactive=20 { return { return 0; } }\n');
    const c = captureIo();
    assert.equal(await runCli(['run', IMAGE, '--probes', f, '--list', '--hit-log-size', '16'], c.io), 0, c.stderr());
    assert.match(c.stdout(), /^# kretprobe latency \(ns, entry -> return, virtual time\)\n@latency_ns\[sys_open\+0x0\]:\n\[/m);
    assert.match(c.stdout(), /^# hit log: 16 records kept, \d+ older ones dropped \(ring of 16\)$/m);
    assert.doesNotMatch(c.stderr(), /warning/);
    const k = join(tmp, 'k.kprobe');
    writeFileSync(k, 'kprobe do_fork { pre { return 0; } }\n');
    const c2 = captureIo();
    assert.equal(await runCli(['run', IMAGE, '--probes', k, '--hist'], c2.io), 0, c2.stderr());
    assert.match(c2.stdout(), /^# no kretprobe returned: no latency histogram$/m);
    const c3 = captureIo();
    assert.equal(await runCli(['run', IMAGE, '--hit-log-size', '0'], c3.io), 1);
    assert.match(c3.stderr(), /--hit-log-size: 0 is out of range \(1\.\.16777216\)/);
  });
});
