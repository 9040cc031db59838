/**
 * Synthetic events in tracefs from user space (Debian's busybox-static on
 * the sample kernel, amd64; fetch: test/userspace/debian/fetch.sh), against
 * Linux 6.1's kernel/trace/trace_events_synth.c and trace_dynevent.c:
 *  - `s:[synthetic/]NAME FIELDS` in dynamic_events and `NAME FIELDS` in
 *    synthetic_events define events/synthetic/NAME; dynamic_events lists
 *    "s:synthetic/NAME\tTYPE FIELD; TYPE FIELD" (synth_event_show),
 *    synthetic_events the same without "s:synthetic/";
 *  - `!s:NAME ...` in dynamic_events and `!NAME` in synthetic_events remove
 *    one; `>` of synthetic_events clears only synthetic events, `>` of
 *    kprobe_events only kprobe events;
 *  - a bad field type is -EINVAL with error_log's "synthetic_events: error:
 *    Invalid type" and '^' under the type (err_pos).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { unfetched } from '../util/fetched';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const T = '/sys/kernel/tracing';

export async function busyboxScript(bb: string, kernel: string, script: string): Promise<{ code: number; out: string; err: string }> {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-dynevent-'));
  try {
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'tmp'));
    copyFileSync(bb, join(root, 'bin', 'busybox'));
    const c = captureIo();
    const code = await runCli(['run', kernel, '--rootfs', root, '--exec',
      `/bin/busybox sh -c '/bin/busybox --install -s /bin && ${script.replace(/'/g, `'\\''`)}'`], c.io);
    return { code, out: c.stdout(), err: c.stderr() };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function between(out: string, from: string, to: string): string {
  const a = out.indexOf(`${from}\n`), b = out.indexOf(`${to}\n`, a + 1);
  assert.ok(a >= 0 && b > a, `markers ${from}/${to} in\n${out}`);
  return out.slice(a + from.length + 1, b);
}

describe('synthetic events (tracefs dynamic_events / synthetic_events)', () => {
  test('amd64: define, list, format, remove and clear synthetic events; a bad type in error_log', async t => {
    const bb = debianBusybox('amd64');
    if (!bb) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
    const r = await busyboxScript(bb, KERNEL, [
      `cd ${T}`,
      `echo 's:latency1 u64 lat; pid_t pid;' >> dynamic_events`,
      `echo 'wakeup char comm[16]; unsigned int prio; char name[]' >> synthetic_events`,
      'echo "p:myevent1 kernel_clone" >> dynamic_events',
      'echo @dyn; cat dynamic_events; echo @syn; cat synthetic_events; echo @fmt; cat events/synthetic/latency1/format; echo @end',
      'test -d events/synthetic/wakeup && echo wakeup-dir',
      `echo 's:latency1 u64 lat' >> dynamic_events; echo dup=$?`,
      `echo > error_log; echo 'bad u65 lat' >> synthetic_events; echo bad=$?`,
      'echo @log; cat error_log; echo @logend',
      `echo '!s:latency1 u64 lat; pid_t pid;' >> dynamic_events; echo rm=$?`,
      'test -d events/synthetic/latency1 || echo latency1-gone',
      'echo "!nosuch" >> synthetic_events; echo rmnone=$?',
      'echo > kprobe_events; echo @afterk; cat dynamic_events; echo @afterkend',
      'echo "p:myevent1 kernel_clone" >> dynamic_events',
      'echo > synthetic_events; echo @afters; cat dynamic_events; echo @aftersend',
      'test -d events/synthetic || echo synthetic-gone',
    ].join('\n'));
    assert.equal(r.code, 0, r.err + r.out.slice(-3000));
    assert.equal(between(r.out, '@dyn', '@syn'),
      's:synthetic/latency1\tu64 lat; pid_t pid\n' +
      's:synthetic/wakeup\tchar[16] comm; unsigned int prio; char[] name\n' +
      'p:kprobes/myevent1 kernel_clone\n');
    assert.equal(between(r.out, '@syn', '@fmt'), 'latency1\tu64 lat; pid_t pid\nwakeup\tchar[16] comm; unsigned int prio; char[] name\n');
    const fmt = between(r.out, '@fmt', '@end');
    assert.match(fmt, /^name: latency1\nID: \d+\nformat:\n/);
    assert.match(fmt, /\tfield:u64 lat;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:pid_t pid;\toffset:16;\tsize:4;\tsigned:1;\n/);
    assert.match(fmt, /print fmt: "lat=%llu, pid=%d", REC->lat, REC->pid\n/);
    assert.match(r.out, /\nwakeup-dir\n/);
    assert.match(r.out, /\ndup=1\n/, 'a second latency1 is refused');
    assert.match(r.out, /\nbad=1\n/);
    assert.equal(between(r.out, '@log', '@logend').replace(/^\[[ \d.]+\] /, ''),
      'synthetic_events: error: Invalid type\n  Command: bad u65 lat\n               ^\n');
    assert.match(r.out, /\nrm=0\n/);
    assert.match(r.out, /\nlatency1-gone\n/);
    assert.match(r.out, /\nrmnone=1\n/);
    assert.equal(between(r.out, '@afterk', '@afterkend'), 's:synthetic/wakeup\tchar[16] comm; unsigned int prio; char[] name\n');
    assert.equal(between(r.out, '@afters', '@aftersend'), 'p:kprobes/myevent1 kernel_clone\n');
    assert.match(r.out, /\nsynthetic-gone\n/);
  });
});
