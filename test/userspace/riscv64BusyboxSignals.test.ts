/**
 * Debian's riscv64 busybox-static (trixie) with shell traps: busybox sh
 * installs handlers (SIGCHLD for `wait`, the trapped signals), so each
 * command runs a handler in a Linux 6.1 riscv64 signal frame and returns
 * through rt_sigreturn. The reference is qemu-riscv64 running the same
 * binary. The binary comes from test/userspace/debian/fetch.sh (CI runs it,
 * .ci/run); without it, or without qemu-riscv64, the test says so and skips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { unfetched } from '../util/fetched';

const DEB = repoPath('test', 'userspace', 'debian');
const BB = join(DEB, 'cache', 'riscv64', 'bin', 'busybox');
const QEMU = 'qemu-riscv64';

const SCRIPTS = [
  // the child outlives the first wait: the trapped SIGCHLD interrupts it (128+17), the second wait reaps 4
  'trap "echo got CHLD" CHLD; (sleep 1; exit 4) & wait $!; echo status $?; wait $!; echo status $?',
  'trap "echo usr1 handled" USR1; kill -USR1 $$; echo after $?',
  'trap "echo int; x=$((x+1))" INT; x=5; kill -INT $$; kill -INT $$; echo x=$x',
  'trap "echo term" TERM; (kill -TERM $$) ; i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo i=$i',
];

function status(r: ReturnType<typeof spawnSync>): number {
  return r.status ?? 128 + (r.signal ? osConstants.signals[r.signal] : 0);
}

test(`riscv64 busybox sh: ${SCRIPTS.length} scripts with signal handlers print and exit as under ${QEMU}`, { timeout: 300_000 }, t => {
  if (!existsSync(BB)) spawnSync(join(DEB, 'fetch.sh'), { stdio: 'ignore', timeout: 300_000 });
  if (!existsSync(BB)) { unfetched(t, 'riscv64 busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
  if (spawnSync(QEMU, ['--version']).status !== 0) { unfetched(t, `${QEMU} is not installed (apt-get install qemu-user)`); return; }
  const image = loadElf(BB);
  const failures: string[] = [];
  for (const script of SCRIPTS) {
    const root = mkdtempSync(join(tmpdir(), 'kprobe-rvsig-'));
    try {
      mkdirSync(join(root, 'work'));
      const q = spawnSync(QEMU, [BB, 'sh', '-c', script], { cwd: join(root, 'work'), env: { PATH: '/bin', LC_ALL: 'C' }, timeout: 60_000 });
      let out = Buffer.alloc(0), err = Buffer.alloc(0);
      const m = Machine.forUserProgram(image, ['busybox', 'sh', '-c', script], {
        stdout: b => { out = Buffer.concat([out, b]); },
        stderr: b => { err = Buffer.concat([err, b]); },
        stdin: () => new Uint8Array(0),
      }, { rootfs: root, cwd: '/work', env: ['PATH=/bin', 'LC_ALL=C'], execPath: BB, cpus: 2 });
      const exit = m.run();
      if (!out.equals(q.stdout) || !err.equals(q.stderr) || exit.code !== status(q)) {
        failures.push(`sh -c '${script}':\n  qemu (${status(q)}) out=${JSON.stringify(q.stdout.toString())} err=${JSON.stringify(q.stderr.toString())}\n  ours (${exit.code}) out=${JSON.stringify(out.toString())} err=${JSON.stringify(err.toString())}`);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${SCRIPTS.length} differ:\n${failures.join('\n')}`);
});

test('riscv64 busybox under the sample kernel: syscall 258 (riscv_hwprobe, Linux 6.4) is -ENOSYS without a log line, as Linux 6.1 answers', async t => {
  if (!existsSync(BB)) { unfetched(t, 'riscv64 busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
  const root = mkdtempSync(join(tmpdir(), 'kprobe-rv258-'));
  try {
    mkdirSync(join(root, 'bin'));
    copyFileSync(BB, join(root, 'bin', 'busybox'));
    const c = captureIo();
    const code = await runCli(['run', repoPath('examples', 'kernel', 'build', 'kernel-riscv64.elf'), '--rootfs', root, '--exec', '/bin/busybox echo hello'], c.io);
    assert.equal(code, 0, c.stderr());
    const out = c.stdout() + c.stderr();
    assert.match(out, /^hello$/m);
    assert.doesNotMatch(out, /unimplemented syscall/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
