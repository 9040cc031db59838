/**
 * open(2) and symlink(2) of user programs are the sample kernel's work, as
 * on Linux: its user thread runs do_sys_open -> do_sys_openat2 (and
 * ksys_symlinkat -> do_symlinkat -> vfs_symlink) with the calling process's
 * address space in use (kthread_use_mm), so a probe on them reads the
 * process's strings through its user pointer (`+0($arg2):ustring`,
 * `+u0($arg2):string`), a return probe sees the descriptor the call
 * returns, and a bad pointer is -EFAULT from strncpy_from_user, printed
 * `(fault)` by the probe. The program (test/userspace/programs/userptr.c)
 * prints each call's result; the expected results are Linux's: qemu-user
 * gives -14 for the two bad names (the good name is in this machine's root
 * only).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';

const ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;

async function run(arch: string, ...events: string[]): Promise<{ code: number; out: string; err: string }> {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-userptr-'));
  try {
    mkdirSync(join(root, 'bin'));
    copyFileSync(repoPath('test', 'userspace', 'bin', 'edge', `userptr-${arch}.elf`), join(root, 'bin', 'userptr'));
    chmodSync(join(root, 'bin', 'userptr'), 0o755);
    writeFileSync(join(root, 'userptr-file'), 'x\n');
    const c = captureIo();
    const code = await runCli(['run', repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`), '--rootfs', root,
      '--exec', '/bin/userptr', ...events.flatMap(e => ['--event', e])], c.io);
    return { code, out: c.stdout(), err: c.stderr() };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** the value of `name=` in each trace line of `event` */
function values(out: string, event: string, name: string): string[] {
  return [...out.matchAll(new RegExp(`^.*: ${event}: .* ${name}=(\\S+)`, 'gm'))].map(m => m[1]);
}

describe('user programs\' open/symlink run the sample kernel\'s do_sys_openat2 / vfs_symlink with their user memory', () => {
  for (const arch of ARCHES) {
    test(`${arch}: the calls' results are Linux's; probes read the user's names, fault on bad pointers, see the descriptor`, async () => {
      const r = await run(arch,
        'p:uopen do_sys_openat2 dfd=$arg1:s32 path=+0($arg2):ustring path2=+u0($arg2):string kpath=+0($arg2):string',
        'r:ropen do_sys_openat2 ret=$retval:s32',
        'p:usym vfs_symlink old=+0($arg4):string dentry=+0($arg3):ustring',
        'p:dsym do_symlinkat newdfd=$arg2:s32');
      assert.equal(r.code, 0, r.err);
      const lines = r.out.split('\n');
      for (const want of ['open good 3', 'open unmapped -14', 'open kernel -14', 'symlink bad target -14', 'symlink good 0']) {
        assert.ok(lines.includes(want), `"${want}" missing:\n${r.out}`);
      }
      // the probe reads the process's string through its user pointer, in the image's user thread
      assert.deepEqual(values(r.out, 'uopen', 'path').slice(0, 3), ['"/userptr-file"', '(fault)', '(fault)']);
      assert.deepEqual(values(r.out, 'uopen', 'path2').slice(0, 3), ['"/userptr-file"', '(fault)', '(fault)']);
      assert.deepEqual(values(r.out, 'uopen', 'dfd').slice(0, 3), ['-100', '-100', '-100']);
      // a kernel-memory read of a user address faults (the kernel's own reads do not reach user memory)
      assert.deepEqual(values(r.out, 'uopen', 'kpath').slice(0, 1), ['(fault)']);
      assert.match(r.out, /^\s*kusersvc\/\d+-\d+\s.*uopen: \(do_sys_openat2\+0x0/m);
      assert.deepEqual(values(r.out, 'ropen', 'ret').slice(0, 3), ['3', '-14', '-14']);
      // a bad target never reaches vfs_symlink; the good one does, with the kernel's copy of the target and a kernel dentry
      assert.deepEqual(values(r.out, 'dsym', 'newdfd'), ['-100', '-100']);
      assert.deepEqual(values(r.out, 'usym', 'old'), ['"/userptr-file"']);
      assert.deepEqual(values(r.out, 'usym', 'dentry'), ['(fault)']);
    });
  }
});
