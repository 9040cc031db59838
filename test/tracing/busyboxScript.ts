/**
 * A shell script run by Debian's busybox as the sample kernel's init (a
 * temporary rootfs with /bin/busybox and /tmp), for the tracefs tests;
 * and the console between two marker lines the script echoes.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';

export async function busyboxScript(bb: string, kernel: string, script: string): Promise<{ code: number; out: string; err: string }> {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-tracefs-'));
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

/** the console's lines between the marker lines `from` and `to` */
export function between(out: string, from: string, to: string): string {
  const a = out.indexOf(`${from}\n`), b = out.indexOf(`${to}\n`, a + 1);
  assert.ok(a >= 0 && b > a, `markers ${from}/${to} in\n${out}`);
  return out.slice(a + from.length + 1, b);
}
