/**
 * Debian's busybox-static for an arch (amd64, arm64), fetched by
 * test/userspace/debian/fetch.sh when missing. Undefined when it cannot be
 * had, so the test skips — outside CI only: CI fetches it (.ci/run), so
 * there a missing busybox is a failure, not a skip.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { repoPath } from '../../util/paths';

const DEB = repoPath('test', 'userspace', 'debian');

export function debianBusybox(arch: string): string | undefined {
  const bb = join(DEB, 'cache', arch, 'bin', 'busybox');
  if (!existsSync(bb)) spawnSync(join(DEB, 'fetch.sh'), { stdio: 'ignore', timeout: 300_000 });
  if (existsSync(bb)) return bb;
  if (process.env.CI) throw new Error(`busybox-static:${arch} is missing in CI (test/userspace/debian/fetch.sh)`);
  return undefined;
}
