/**
 * Linux 6.1's own ftrace selftests (tools/testing/selftests/ftrace from
 * Debian's linux-source-6.1, fetched by
 * test/modules/linux/fetch-test-kprobes.sh), unmodified, inside Debian's own
 * kernel booted on the full-system PC through `kprobe-run boot`, with
 * Debian's busybox-static as /bin/sh: test/linux/make-initramfs.sh puts them
 * in the initramfs's /ftrace. ftracetest's "[N] description\t[RESULT]" lines
 * and its "# of <result>:" summary are read from the guest's console, and
 * its exit status from an echo after it.
 *
 * Cost: every case resets the whole of tracefs before and after it
 * (ftracetest's initialize_ftrace greps every event's trigger and filter
 * file: Debian's kernel has about 1,600 events), about half a minute of host
 * CPU per case here, and some cases search /proc/kallsyms against
 * available_filter_functions in a shell loop. So CI runs the cases in
 * CI_CASES (the probes' machine-facing paths: registers and user memory read
 * by fetch args, a kretprobe's return trampoline, several probes at one
 * address); KPROBE_FTRACETEST=all runs every case of test.d/kprobe and
 * test.d/dynevent, each against EXPECTED.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { debianKernel } from '../../system/linuxFiles';
import { debianBusybox } from '../../userspace/debian/busybox';
import { repoPath } from '../../util/paths';
import { unfetched } from '../../util/fetched';
import { CI_CASES, EXPECTED, withoutTracePrintk, type Result } from './expected';

const SELFTESTS = repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1', 'tools', 'testing', 'selftests', 'ftrace');
const RESULTS: readonly Result[] = ['PASS', 'FAIL', 'UNRESOLVED', 'UNTESTED', 'UNSUPPORTED', 'XFAIL', 'UNDEFINED'];
/** the summary's name of each result ("# of passed:  N") */
const SUMMARY: Record<Result, string> = {
  PASS: 'passed', FAIL: 'failed', UNRESOLVED: 'unresolved', UNTESTED: 'untested', UNSUPPORTED: 'unsupported', XFAIL: 'xfailed', UNDEFINED: 'undefined\\(test bug\\)',
};

const all = process.env.KPROBE_FTRACETEST === 'all';
const cases = all ? ['test.d/kprobe', 'test.d/dynevent'] : CI_CASES.map(c => c.file);

test(`ftracetest in Debian's kernel on the full-system PC: ${all ? 'test.d/kprobe and test.d/dynevent' : `${CI_CASES.length} cases of test.d/kprobe and test.d/dynevent`}, each case's result`, async t => {
  const kernel = debianKernel(t);
  if (!kernel) return;
  if (!existsSync(join(SELFTESTS, 'ftracetest'))) { unfetched(t, 'no Linux 6.1 selftests (test/modules/linux/fetch-test-kprobes.sh)'); return; }
  if (!debianBusybox('amd64')) { unfetched(t, 'no Debian busybox-static (test/userspace/debian/fetch.sh)'); return; }
  const dir = mkdtempSync(join(tmpdir(), 'kpd-ftracetest-'));
  try {
    const initrd = join(dir, 'initramfs.cpio.gz');
    const made = spawnSync(repoPath('test', 'linux', 'make-initramfs.sh'), [initrd], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stdout + made.stderr);
    const c = captureIo();
    const code = await runCli(['boot', '--kernel', kernel.path, '--initrd', initrd, '--append', 'console=ttyS0 nokaslr panic=-1 acpi=off',
      '--cpus', '1', '--memory', '256', '--max-instructions', '400000000000',
      // dmesg -n 1: the kernel's own lines (a case that probes every function makes it warn about each notrace one) would land in the middle of ftracetest's
      '--input', `dmesg -n 1; cd /ftrace && ./ftracetest ${cases.join(' ')}; echo "ftracetest exit status $?"`], c.io);
    const out = c.stdout().replace(/\r/g, '');
    assert.equal(code, 0, `${c.stderr().slice(-1500)}\n${out.slice(-3000)}`);
    const got = new Map<string, Result>();
    for (const m of out.matchAll(/^\[(\d+)\] (.*)\t\[([A-Z]+)\]$/gm)) got.set(m[2], m[3] as Result);
    // make-initramfs.sh puts the trace-printk sample in when it was built
    const expected = existsSync(repoPath('test', 'linux', 'ftrace', 'cache', 'trace-printk.ko')) ? EXPECTED : withoutTracePrintk(EXPECTED);
    const want = new Map(all ? Object.entries(expected) : CI_CASES.map(c => [c.description, expected[c.description]]));
    assert.deepEqual(Object.fromEntries(got), Object.fromEntries(want), `ftracetest's results differ; its output ends:\n${out.slice(-4000)}`);
    // its own summary agrees with the lines, and its status says whether every case passed
    for (const r of RESULTS) {
      const m = new RegExp(`^# of ${SUMMARY[r]}:\\s+(\\d+)$`, 'm').exec(out);
      assert.ok(m, `no "# of ${SUMMARY[r]}" line`);
      assert.equal(Number(m[1]), [...got.values()].filter(v => v === r).length, `# of ${SUMMARY[r]}`);
    }
    // ftracetest's status: 1 when a case failed or its result was undefined (unresolved and unsupported count as 0 by default)
    const bad = [...got.values()].some(r => r === 'FAIL' || r === 'UNDEFINED');
    assert.match(out, new RegExp(`^ftracetest exit status ${bad ? 1 : 0}$`, 'm'));
    // the guest met nothing the CPU does not emulate (the machine logs each such #UD once: sysmode/delivery.ts)
    const unemulated = c.stderr().split('\n').filter(l => /is not emulated: #UD|no instruction this CPU emulates/.test(l));
    assert.deepEqual(unemulated, [], 'an instruction the CPU does not emulate');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
