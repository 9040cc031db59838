/**
 * Linux 6.1's own ftrace selftests, unmodified, inside the emulated user
 * space: tools/testing/selftests/ftrace/ (fetched from Debian's
 * linux-source-6.1 by test/modules/linux/fetch-test-kprobes.sh, never
 * committed) is copied into a root filesystem with Debian's busybox-static
 * (test/userspace/debian/fetch.sh) and Linux's samples/trace_printk module
 * (built against examples/include by test/modules/linux/build.sh, installed
 * under /lib/modules/$(uname -r) and indexed by busybox depmod, so that
 * kprobe_module.tc's modprobe finds it), the sample kernel starts
 *   /bin/busybox sh -c 'busybox --install -s /bin && sh /ftrace/ftracetest -v /ftrace/test.d/DIR'
 * as init, and ftracetest's "[N] description\t[RESULT]" lines are counted per
 * directory (kprobe/, dynevent/) and arch. Each case's result is asserted,
 * so that a case that passes today and fails tomorrow is a failure here.
 *
 * Linux 6.1 refuses a probe inside an instruction with -EILSEQ, so the
 * kernel runs with --insn-boundary reject: multiple_kprobes.tc counts only
 * the `p SYM+5` (x86_64: after `call __fentry__`) that register, and the
 * sample kernel's lib/ helpers, built -pg -mfentry on x86_64, give it 256.
 *
 * What is not PASS, and why:
 *   kprobe_ftrace.tc      PASS on x86_64 (the function tracer over the
 *                         -pg -mfentry functions); UNSUPPORTED on aarch64
 *                         and riscv64, built without a function tracer
 *   dynevent/             PASS everywhere; on aarch64 and riscv64 there
 *                         is no sys_enter_open (no open(2)), so
 *                         test_duplicates.tc's `! echo 'e:syscalls/
 *                         sys_enter_open ...'` makes an event there, which
 *                         the test cannot see (sh's set -e ignores `!`)
 *
 * Each run's counts and seconds (wall and CPU) are the test's diagnostics.
 * Outside CI a missing fetch is a skip; in CI (which fetches both first) a
 * failure. riscv64 runs Debian trixie's busybox-static (bookworm has no
 * riscv64 port); two of its cases are UNTESTED as on a real riscv64 Linux
 * 6.1 (expected.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { EXPECTED, type Result } from './expected';
import { unfetched } from '../util/fetched';

const FTRACE = repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1', 'tools', 'testing', 'selftests', 'ftrace');
const ARCHES = [{ deb: 'amd64', arch: 'x86_64' }, { deb: 'arm64', arch: 'aarch64' }, { deb: 'riscv64', arch: 'riscv64' }] as const;
const DIRS = ['kprobe', 'dynevent'] as const;
/** Linux's samples/trace_printk built for the arch (test/modules/linux/build.sh): the module kprobe_module.tc modprobes */
const TRACE_PRINTK = (arch: string): string => repoPath('test', 'modules', 'linux', 'build', 'linux-source-6.1', 'samples', arch, 'trace-printk.ko');
/**
 * Installed as a distribution installs a module (under /lib/modules/$(uname -r)/kernel/, then busybox depmod writes
 * modules.dep), so that busybox modprobe finds it.
 */
const INSTALL_MODULES = 'd=/lib/modules/$(uname -r)/kernel/samples/trace_printk && mkdir -p $d && cp /root/trace-printk.ko $d/ && depmod';

/** seconds: wall clock; cpuSeconds: this process's CPU time (user + system), the figure a loaded machine does not inflate */
interface Run { results: Map<string, Result>; seconds: number; cpuSeconds: number; out: string }

/** ftracetest over test.d/DIR in the sample kernel of `arch` with busybox `bb` */
async function ftracetest(bb: string, arch: string, dir: string): Promise<Run> {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-ftracetest-'));
  try {
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'tmp'));
    copyFileSync(bb, join(root, 'bin', 'busybox'));
    cpSync(FTRACE, join(root, 'ftrace'), { recursive: true });
    mkdirSync(join(root, 'root'));
    copyFileSync(TRACE_PRINTK(arch), join(root, 'root', 'trace-printk.ko'));
    const c = captureIo();
    const start = process.hrtime.bigint(), cpu0 = process.cpuUsage();
    // Linux 6.1 refuses a kprobe inside an instruction (-EILSEQ, x86 can_probe()); the emulator's default is 2.6's
    const code = await runCli(['run', repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`), '--insn-boundary', 'reject', '--rootfs', root,
      '--exec', `/bin/busybox sh -c '/bin/busybox --install -s /bin && ${INSTALL_MODULES} && /bin/sh /ftrace/ftracetest -v /ftrace/test.d/${dir}'`,
      '--max-instructions', '50000000000'], c.io);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const out = c.stdout();
    // ftracetest exits 1 when a case did not pass; the machine exits with init's status
    assert.ok(code === 0 || code === 1, `exit ${code}\n${c.stderr()}\n${out.slice(-4000)}`);
    const results = new Map<string, Result>();
    for (const m of out.matchAll(/^\[\d+\](.*)\t\[(PASS|FAIL|UNRESOLVED|UNTESTED|UNSUPPORTED|XFAIL|UNDEFINED)\]$/gm)) {
      results.set(m[1].trim(), m[2] as Result);
    }
    return { results, seconds, cpuSeconds, out };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function counts(results: Map<string, Result>): Record<Result, number> {
  const c: Record<Result, number> = { PASS: 0, FAIL: 0, UNRESOLVED: 0, UNTESTED: 0, UNSUPPORTED: 0, XFAIL: 0, UNDEFINED: 0 };
  for (const r of results.values()) c[r]++;
  return c;
}

describe('Linux 6.1 ftracetest (test.d/kprobe, test.d/dynevent) in the emulated user space, unmodified', () => {
  for (const { deb, arch } of ARCHES) {
    for (const dir of DIRS) {
      test(`${arch}: ftracetest test.d/${dir}: each case's result`, async t => {
        if (!existsSync(join(FTRACE, 'ftracetest'))) {
          unfetched(t, `no ${FTRACE}: run test/modules/linux/fetch-test-kprobes.sh`);
          return;
        }
        if (!existsSync(TRACE_PRINTK(arch))) {
          unfetched(t, `no ${TRACE_PRINTK(arch)}: run test/modules/linux/build.sh`);
          return;
        }
        const bb = debianBusybox(deb);
        if (!bb) { unfetched(t, `busybox-static:${deb} could not be fetched (offline?): run test/userspace/debian/fetch.sh`); return; }
        const r = await ftracetest(bb, arch, dir);
        const c = counts(r.results);
        t.diagnostic(`${arch} ${dir}: PASS ${c.PASS} FAIL ${c.FAIL} UNRESOLVED ${c.UNRESOLVED} UNSUPPORTED ${c.UNSUPPORTED} UNTESTED ${c.UNTESTED} in ${r.seconds.toFixed(1)} s (CPU ${r.cpuSeconds.toFixed(1)} s)`);
        const want = EXPECTED[arch][dir];
        assert.deepEqual(Object.fromEntries(r.results), want, `ftracetest's results differ; its output ends:\n${r.out.slice(-6000)}`);
      });
    }
  }
});
