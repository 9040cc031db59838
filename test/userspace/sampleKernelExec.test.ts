/**
 * The sample kernel starts user space as Linux's kernel_init runs init:
 * `kprobe-run run IMAGE --rootfs DIR --exec "/bin/prog"` (dist/cli.js as a
 * child) runs the program on x86_64, aarch64 and riscv64, next to the
 * kernel's workers, with its uprobes hit; the machine exits with the
 * program's status; a program that cannot start is the kernel's panic
 * (exit 1, the reason on stderr); and a kernel image that powers off without
 * ever calling kp_user_init says on stderr that the programs never ran.
 * Time travel over it: back before the call and forward again gives the
 * kernel log a fresh run has, the program's console lines included.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { repoPath } from '../util/paths';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine, SliceResult } from '../../emulator/machine';
import { recordMachine } from '../../emulator/timetravel/recorder';

const CLI = repoPath('dist', 'cli.js');
const ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;
const UPROBED = (arch: string): string => repoPath('test', 'uprobes', 'bin', `uprobed-${arch}-gcc-O2.elf`);
/** qemu cannot run the foreign builds here: every arch prints what the x86_64 build printed under qemu */
const UPROBED_OUT = readFileSync(repoPath('test', 'uprobes', 'golden', 'uprobed-x86_64-gcc-O2.out'), 'utf8').trimEnd().split('\n');
const PROCS = repoPath('test', 'userspace', 'bin', 'procs-x86_64-clang-O2.elf');
const PROCS_CODE = Number(readFileSync(repoPath('test', 'userspace', 'golden', 'procs-x86_64-clang-O2.code'), 'utf8').trim());
/** a kernel image that never calls kp_user_init (hypercall edge cases; powers off with 42) */
const NO_USER_INIT = repoPath('test', 'fixtures', 'kernel', 'bin', 'hcall.elf');

function cli(...args: string[]): { status: number | null; out: string; err: string } {
  assert.ok(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first (npm test does)`);
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: repoPath(), encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.error, undefined, `spawning ${CLI}: ${r.error?.message}`);
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** `want` appears in `lines` in this order (other lines, the kernel's, may come between) */
function assertSubsequence(lines: string[], want: string[]): void {
  let at = 0;
  for (const w of want) {
    const i = lines.indexOf(w, at);
    assert.ok(i >= 0, `"${w}" (after line ${at}) is missing from:\n${lines.join('\n')}`);
    at = i + 1;
  }
}

let root = '';
before(() => {
  root = mkdtempSync(join(tmpdir(), 'kprobe-sample-exec-'));
  mkdirSync(join(root, 'bin'));
  for (const arch of ARCHES) copyFileSync(UPROBED(arch), join(root, 'bin', `uprobed-${arch}`));
  copyFileSync(PROCS, join(root, 'bin', 'procs'));
  for (const f of [...ARCHES.map(a => `uprobed-${a}`), 'procs']) chmodSync(join(root, 'bin', f), 0o755);
});
after(() => rmSync(root, { recursive: true, force: true }));

describe('kprobe-run run --exec with the sample kernel (kernel_init starts the program)', () => {
  for (const arch of ARCHES) {
    test(`${arch}: the program runs next to the workers, prints what qemu printed, its uprobe is hit; exit 0`, () => {
      const prog = `/bin/uprobed-${arch}`;
      const probes = join(root, `leaf-${arch}.kprobe`);
      writeFileSync(probes, `uprobe ${prog}:leaf { pre { printk("leaf hit\\n"); } }\n`);
      const r = cli('run', repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`), '--rootfs', root, '--exec', prog, '--probes', probes, '--list');
      assert.equal(r.status, 0, r.err);
      const lines = r.out.split('\n');
      assertSubsequence(lines, ['init: started 1 user program', ...UPROBED_OUT, 'init: user space ended, exit status 0', 'Power down.']);
      assert.ok(lines.some(l => l.startsWith('kworker/')), 'the workers ran too');
      assert.ok(lines.includes('leaf hit'), 'the uprobe handler ran');
      assert.match(r.out, new RegExp(`^.*leaf-${arch}\\.kprobe:1:1 uprobe ${prog}:leaf: 30 hits, 0 missed$`, 'm'));
      assert.doesNotMatch(r.err, /never ran/);
    });
  }

  test('the machine exits with the program\'s status', () => {
    const r = cli('run', '--rootfs', root, '--exec', '/bin/procs');
    assert.equal(r.status, PROCS_CODE, r.err);
    assert.ok(PROCS_CODE !== 0);
    assert.match(r.out, new RegExp(`^init: user space ended, exit status ${PROCS_CODE}$`, 'm'));
  });

  test('a program that is not in the filesystem: the kernel panics as on a failed init, exit 1, the reason on stderr', () => {
    const r = cli('run', '--rootfs', root, '--exec', '/bin/missing arg');
    assert.equal(r.status, 1);
    assert.match(r.out, /^Kernel panic - not syncing: Requested init failed \(error -2\)\.$/m);
    assert.match(r.err, /user_init: \/bin\/missing: no such file in the machine's filesystem/);
  });

  test('without --exec the sample kernel starts nothing and says nothing about user space', () => {
    const r = cli('run');
    assert.equal(r.status, 0, r.err);
    assert.doesNotMatch(r.out, /^init: /m);
    assert.equal(r.err, '');
  });
});

describe('a kernel that powers off without starting the programs it was given', () => {
  test('says on stderr that they never ran (the image never called kp_user_init)', () => {
    const r = cli('run', NO_USER_INIT, '--cpus', '2', '--rootfs', root, '--exec', '/bin/procs a', '--exec', '/bin/uprobed-x86_64');
    assert.equal(r.status, 42, r.err);
    assert.match(r.err, /^kprobe-debug: the kernel powered off without starting user space: "\/bin\/procs a", "\/bin\/uprobed-x86_64" never ran \(the image never called kp_user_init, examples\/include\/kprobe_image\.h\)$/m);
    const quiet = cli('run', NO_USER_INIT, '--cpus', '2');
    assert.doesNotMatch(quiet.err, /never ran/, 'nothing to say when no program was given');
  });
});

describe('time travel over user space started by the sample kernel', () => {
  test('back before kp_user_init and forward: the same kernel log (program lines included) and the same end', () => {
    const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf')), { cpus: 2, rootfs: root, exec: ['/bin/uprobed-x86_64'] });
    const tt = recordMachine(m, { interval: 50_000 });
    const messages: string[] = [];
    tt.onMessage(t => messages.push(t));
    const toEnd = (): SliceResult => { let r: SliceResult; do { r = m.runSlice(50_000); } while (r.kind === 'running' || r.kind === 'stopped'); return r; };
    toEnd();
    const first = m.printkRecords.map(r => r.text);
    const end = m.totalInstructions;
    assertSubsequence(first, UPROBED_OUT);
    // init (CPU 0) at 30,000 instructions is still in the self-test: user space not started yet
    assert.ok(tt.seek({ kind: 'retired', cpu: 0, retired: 30_000 }).ok);
    assert.ok(!m.printkRecords.some(r => r.text.startsWith('init: ')), 'before the call');
    toEnd();
    assert.equal(m.totalInstructions, end);
    assert.deepEqual(m.printkRecords.map(r => r.text), first);
    assert.deepEqual(messages, []);
  });
});
