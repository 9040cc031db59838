/**
 * mount(2) and umount2(2) (fs/namespace.c): mount a filesystem type the
 * kernel has (fs/mounts.ts: proc, sysfs, debugfs, tracefs, tmpfs) on a
 * directory; an unknown type is -ENODEV, a missing mount point -ENOENT, a
 * path that is no mount -EINVAL, as Linux answers. Every process is root,
 * so there is no -EPERM.
 */
import type { SyscallName } from '../../arch/types';
import { mountTable } from '../fs/mounts';
import { readUserString } from './uaccess';
import { E, SyscallCtx, SyscallHandler, i32, neg } from './results';

function mount(c: SyscallCtx, src: bigint, target: bigint, type: bigint, flags: number): bigint {
  const source = src === 0n ? 'none' : readUserString(c.proc.mm, src, 4096);
  const path = readUserString(c.proc.mm, target, 4096);
  const fstype = type === 0n ? '' : readUserString(c.proc.mm, type, 4096);
  if (source === null || path === null || fstype === null) return E('EFAULT');
  if (path === '') return E('ENOENT');
  const k = c.proc.kernel;
  const r = k.fs.lookup(path, c.proc.cwd);
  if (!r.ok) return neg(r.errno);
  const rc = mountTable(k).mount(source, r.inode, fstype, flags);
  return rc ? neg(-rc) : 0n;
}

function umount2(c: SyscallCtx, target: bigint, flags: number): bigint {
  const path = readUserString(c.proc.mm, target, 4096);
  if (path === null) return E('EFAULT');
  if (path === '') return E('ENOENT');
  const k = c.proc.kernel;
  const r = k.fs.lookup(path, c.proc.cwd);
  if (!r.ok) return neg(r.errno);
  const rc = mountTable(k).umount(r.inode, flags);
  return rc ? neg(-rc) : 0n;
}

export const MOUNT_SYSCALLS = {
  mount: (c, [src, target, type, flags]) => mount(c, src, target, type, i32(flags)),
  umount2: (c, [target, flags]) => umount2(c, target, i32(flags)),
} satisfies Partial<Record<SyscallName, SyscallHandler>>;
