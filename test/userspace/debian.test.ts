/**
 * Real programs nobody here wrote (built by others, at flags our own programs
 * do not use): Debian's busybox-static (glibc, static, Debian's default
 * flags) for amd64 and arm64, fetched by test/userspace/debian/fetch.sh, runs
 * a broad set of its applets in the emulator and under qemu-user, in the same
 * scratch tree: stdout, stderr and exit code must be the same. Shell
 * pipelines fork and exec busybox itself; text tools, checksums, number
 * formatting, find, tar and sort exercise the C library's string, stdio and
 * floating-point code.
 *
 * When the package cannot be fetched (offline) or qemu-user is missing,
 * each test says so and skips: `npm test` in CI fetches both (.ci/run).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';

const DEB = repoPath('test', 'userspace', 'debian');
/**
 * The reference is qemu-x86_64 running the amd64 build for both arches:
 * busybox's shell runs applets by exec'ing /proc/self/exe, which
 * qemu-aarch64 on an x86_64 host cannot do (no binfmt handler), while a
 * Linux kernel can; the commands print nothing arch-specific.
 */
const ARCHES = ['amd64', 'arm64'];
const QEMU = 'qemu-x86_64';

/** argv after "busybox", and stdin */
const COMMANDS: { argv: string[]; stdin?: string }[] = [
  { argv: ['echo', 'hello', 'world'] },
  { argv: ['printf', '%s=%d %5.2f %x %o %e|%-6s|\\n', 'n', '42', '3.14159', '255', '8', '12345.678', 'ab'] },
  { argv: ['cat', 'input.txt'] },
  { argv: ['wc', 'input.txt'] },
  { argv: ['wc', '-l', '-w', '-c'], stdin: 'one two\nthree\n' },
  { argv: ['sort', 'input.txt'] },
  { argv: ['sort', '-n', '-r', 'nums.txt'] },
  { argv: ['sort', '-g', 'floats.txt'] },
  { argv: ['uniq', '-c'], stdin: 'a\na\nb\nc\nc\nc\n' },
  { argv: ['head', '-n', '2', 'input.txt'] },
  { argv: ['tail', '-n', '2', 'input.txt'] },
  { argv: ['tr', 'a-z', 'A-Z'], stdin: 'shout this\n' },
  { argv: ['cut', '-d', ':', '-f', '2', 'colon.txt'] },
  { argv: ['sed', '-e', 's/o/0/g', '-e', '2d', 'input.txt'] },
  { argv: ['awk', '{ s += $1; n++ } END { printf "%d %.3f %g\\n", s, s / n, s * 1.5 }', 'nums.txt'] },
  { argv: ['awk', 'BEGIN { printf "%.10f %e %d\\n", atan2(0, -1), exp(1), int(-7.9); print 1/3, sqrt(2), 2^52 + 1 }'] },
  { argv: ['grep', '-n', 'o', 'input.txt'] },
  { argv: ['grep', '-c', 'zzz', 'input.txt'] },
  { argv: ['expr', '6', '*', '7'] },
  { argv: ['seq', '1', '3', '10'] },
  { argv: ['seq', '-w', '0.5', '0.25', '1.5'] },
  { argv: ['factor', '360', '9973', '1000000007'] },
  { argv: ['md5sum', 'input.txt'] },
  { argv: ['sha1sum', 'input.txt'] },
  { argv: ['sha256sum', 'input.txt'] },
  { argv: ['base64', 'input.txt'] },
  { argv: ['od', '-A', 'x', '-t', 'x1z', 'colon.txt'] },
  { argv: ['basename', '/a/b/c.txt', '.txt'] },
  { argv: ['dirname', '/a/b/c.txt'] },
  { argv: ['true'] },
  { argv: ['false'] },
  { argv: ['test', '-f', 'input.txt'] },
  { argv: ['ls', '-1', '-a'] },
  { argv: ['sh', '-c', 'find . -name "*.txt" | sort'] },
  { argv: ['du', '-a', '-k', 'sub'] },
  { argv: ['stat', '-c', '%n %s %F %a', 'input.txt', 'sub', 'link'] },
  { argv: ['readlink', 'link'] },
  { argv: ['cat', 'missing-file'] },
  { argv: ['sh', '-c', 'echo $((6 * 7)); x=abc; echo ${#x} ${x%c}; for i in 1 2 3; do printf "%s," $i; done; echo'] },
  { argv: ['sh', '-c', 'cat input.txt | sort | head -n 2 | tr a-z A-Z'] },
  { argv: ['sh', '-c', 'mkdir -p d/e && echo hi > d/e/f && cp d/e/f d/g && mv d/g d/h && ls d && cat d/h && rm -r d && ls'] },
  { argv: ['sh', '-c', 'false || echo recovered; (exit 3); echo status $?; kill -TERM $$; echo not reached'] },
  { argv: ['sh', '-c', 'trap "echo caught USR1" USR1; kill -USR1 $$; echo after'] },
  { argv: ['sh', '-c', 'tar cf t.tar input.txt nums.txt && tar tf t.tar && tar xOf t.tar nums.txt | wc -l'] },
  { argv: ['sh', '-c', 'echo 3 1 2 | xargs -n 1 | sort -n | xargs echo'] },
  { argv: ['sh', '-c', 'printf "%.3f %g %.0e\\n" 2.0005 0.0001 12345'] },
  { argv: ['dc', '-e', '2 k 10 3 / p 2 64 ^ p'] },
  { argv: ['sh', '-c', 'sleep 0.2; echo slept; (sleep 2; echo late) & sleep 1; kill $!; wait; echo done'] },
  // the child outlives the parent's first wait, so the trapped SIGCHLD always interrupts it (128+17) and the
  // second wait reaps status 4: on Linux `(exit 4) & wait $!` races the child's exit against the wait (4 or 145)
  { argv: ['sh', '-c', 'trap "echo got CHLD" CHLD; (sleep 1; exit 4) & wait $!; echo status $?; wait $!; echo status $?'] },
  { argv: ['nonexistent-applet'] },
];

/** A root with the working directory work/ holding the commands' files. */
function scratch(): string {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-busybox-'));
  const d = join(root, 'work');
  mkdirSync(d);
  writeFileSync(join(d, 'input.txt'), 'pear\napple\nbanana orange\ncherry\napple\n');
  writeFileSync(join(d, 'nums.txt'), '10\n3\n25\n7\n-4\n');
  writeFileSync(join(d, 'floats.txt'), '1e3\n-2.5\n0.001\n12\n3.25e-2\n');
  writeFileSync(join(d, 'colon.txt'), 'a:b:c\n1:2:3\nx:y\n');
  mkdirSync(join(d, 'sub'));
  writeFileSync(join(d, 'sub', 'deep.txt'), 'x'.repeat(3000));
  symlinkSync('input.txt', join(d, 'link'));
  return root;
}

/** Exit status as a shell reports it (128 + N for a signal). */
function status(r: ReturnType<typeof spawnSync>): number {
  return r.status ?? 128 + (r.signal ? osConstants.signals[r.signal] : 0);
}

function qemuHas(q: string): boolean {
  return spawnSync(q, ['--version']).status === 0;
}

describe('Debian busybox-static = qemu-user (fetch: test/userspace/debian/fetch.sh)', () => {
  for (const arch of ARCHES) {
    const bb = join(DEB, 'cache', arch, 'bin', 'busybox');
    const ref = join(DEB, 'cache', 'amd64', 'bin', 'busybox');
    test(`${arch}: ${COMMANDS.length} busybox commands print and exit as amd64 busybox under ${QEMU}`, { timeout: 600_000 }, t => {
      if (!existsSync(bb) || !existsSync(ref)) spawnSync(join(DEB, 'fetch.sh'), { stdio: 'ignore', timeout: 300_000 });
      if (!existsSync(bb) || !existsSync(ref)) { unfetched(t, `busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh`); return; }
      if (!qemuHas(QEMU)) { unfetched(t, `${QEMU} is not installed (apt-get install qemu-user)`); return; }
      const image = loadElf(bb);
      const failures: string[] = [];
      for (const c of COMMANDS) {
        const root = scratch();
        const root2 = mkdtempSync(join(tmpdir(), 'kprobe-busybox-'));
        try {
          cpSync(root, root2, { recursive: true, verbatimSymlinks: true });
          const q = spawnSync(QEMU, [ref, ...c.argv], { cwd: join(root, 'work'), input: c.stdin ?? '', env: { PATH: '/bin', LC_ALL: 'C' }, timeout: 60_000 });
          let out = Buffer.alloc(0), err = Buffer.alloc(0);
          const m = Machine.forUserProgram(image, ['busybox', ...c.argv], {
            stdout: b => { out = Buffer.concat([out, b]); },
            stderr: b => { err = Buffer.concat([err, b]); },
            stdin: () => new TextEncoder().encode(c.stdin ?? ''),
          }, { rootfs: root2, cwd: '/work', env: ['PATH=/bin', 'LC_ALL=C'], execPath: bb, cpus: 2 });
          const exit = m.run();
          if (!out.equals(q.stdout) || !err.equals(q.stderr) || exit.code !== status(q)) {
            failures.push(`busybox ${c.argv.join(' ')}:\n  qemu (${status(q)}) out=${JSON.stringify(q.stdout.toString())} err=${JSON.stringify(q.stderr.toString())}\n  ours (${exit.code}) out=${JSON.stringify(out.toString())} err=${JSON.stringify(err.toString())}`);
          }
        } finally {
          rmSync(root, { recursive: true, force: true });
          rmSync(root2, { recursive: true, force: true });
        }
      }
      assert.deepEqual(failures, [], `${failures.length} of ${COMMANDS.length} differ:\n${failures.join('\n')}`);
      assert.match(readFileSync(join(DEB, 'cache', arch, 'PACKAGE'), 'utf8'), /^busybox-static_/);
    });
  }
});
