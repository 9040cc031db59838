/**
 * /proc/cmdline as Debian's busybox-static reads it: the kernel command line
 * the boot loader gave (`kprobe-run run --cmdline TEXT`, launch.json
 * "cmdline") and a newline, as fs/proc/cmdline.c prints saved_command_line;
 * an empty line when none was given.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from './debian/busybox';
import { unfetched } from '../util/fetched';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');

async function catCmdline(bb: string, cmdline?: string): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-cmdline-'));
  try {
    mkdirSync(join(root, 'bin'));
    copyFileSync(bb, join(root, 'bin', 'busybox'));
    const c = captureIo();
    const args = ['run', KERNEL, '--rootfs', root, '--exec', "/bin/busybox sh -c 'echo \"<$(/bin/busybox cat /proc/cmdline)>\"; /bin/busybox wc -c /proc/cmdline'"];
    if (cmdline !== undefined) args.push('--cmdline', cmdline);
    const code = await runCli(args, c.io);
    assert.equal(code, 0, c.stderr() + c.stdout());
    return c.stdout().split('\n').filter(l => /^<.*>$|\/proc\/cmdline$/.test(l)).join('\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test('/proc/cmdline: the command line given with --cmdline and a newline; an empty line without one', async t => {
  const bb = debianBusybox('amd64');
  if (!bb) { unfetched(t, "Debian's busybox-static (amd64) could not be fetched (offline?): run test/userspace/debian/fetch.sh"); return; }
  const text = 'console=ttyS0 no_hash_pointers quiet';
  assert.equal(await catCmdline(bb, text), `<${text}>\n${text.length + 1} /proc/cmdline`);
  assert.equal(await catCmdline(bb), '<>\n1 /proc/cmdline');
});
