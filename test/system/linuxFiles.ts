/**
 * Debian's kernel and the busybox initramfs the full-system PC boots
 * (test/linux/fetch-kernel.sh, make-initramfs.sh). Missing: the test skips
 * with the way to get them — outside CI only: CI fetches them before the
 * tests, so there a missing file is a failure.
 */
import { existsSync, readFileSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';

export const LINUX_CACHE = repoPath('test', 'linux', 'cache');

export interface LinuxFile { readonly path: string; readonly data: Uint8Array }

function file(rel: string, howto: string, t: { skip(msg: string): void }): LinuxFile | undefined {
  const path = repoPath('test', 'linux', 'cache', rel);
  if (existsSync(path)) return { path, data: new Uint8Array(readFileSync(path)) };
  const why = `no test/linux/cache/${rel} (${howto})`;
  unfetched(t, why);
  return undefined;
}

export const debianKernel = (t: { skip(msg: string): void }): LinuxFile | undefined =>
  file('vmlinuz', 'test/linux/fetch-kernel.sh', t);
export const busyboxInitramfs = (t: { skip(msg: string): void }): LinuxFile | undefined =>
  file('initramfs.cpio.gz', 'test/linux/make-initramfs.sh', t);
