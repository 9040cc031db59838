/**
 * The name system calls of user processes (fs/namei.c): mkdir, unlink and
 * rmdir, rename, link, symlink and readlink, and their *at forms, over the
 * emulated filesystem (emulator/kernel/fs/vfs.ts).
 */
import { Inode, S_IFDIR } from '../fs/vfs';
import { copyToUser, readUserString } from './uaccess';
import { E, SyscallCtx, SyscallHandler, i32, neg } from './results';
import { AT_FDCWD, AT_REMOVEDIR, parentOf, procExe, resolve, userPath } from './pathAt';
import type { SyscallName } from '../../arch/types';
import { imageCall } from './imageCalls';
import { UserRequestOp } from './kernelService';

function mkdirAt(c: SyscallCtx, dirfd: number, pathPtr: bigint, mode: number): bigint {
  const path = userPath(c, pathPtr);
  if (typeof path === 'number') return neg(path);
  const p = parentOf(c, dirfd, path);
  if (!p.ok) return neg(p.errno);
  if (p.dir.children!.has(p.name) || p.name === '.' || p.name === '..') return E('EEXIST');
  const fs = c.proc.kernel.fs;
  const d = fs.newInode(S_IFDIR | (mode & 0o7777 & ~c.proc.umask));
  d.nlink = 2;
  fs.link(p.dir, p.name, d);
  return 0n;
}

function unlinkAt(c: SyscallCtx, dirfd: number, pathPtr: bigint, flags: number): bigint {
  const path = userPath(c, pathPtr);
  if (typeof path === 'number') return neg(path);
  const p = parentOf(c, dirfd, path);
  if (!p.ok) return neg(p.errno);
  if (p.name === '.' ) return E('EINVAL');
  if (p.name === '..') return E('ENOTEMPTY');
  const victim = p.dir.children!.get(p.name);
  if (!victim) return E('ENOENT');
  if (flags & AT_REMOVEDIR) {
    if (!victim.isDir) return E('ENOTDIR');
    if (victim.children!.size) return E('ENOTEMPTY');
    if (victim === c.proc.kernel.fs.root) return E('EBUSY');
    p.dir.nlink--;
  } else if (victim.isDir) return E('EISDIR');
  p.dir.children!.delete(p.name);
  victim.nlink--;
  p.dir.mtimeNs = p.dir.ctimeNs = c.proc.kernel.fs.now();
  return 0n;
}

function renameAt(c: SyscallCtx, olddirfd: number, oldPtr: bigint, newdirfd: number, newPtr: bigint, flags: number): bigint {
  const op = userPath(c, oldPtr), np = userPath(c, newPtr);
  if (typeof op === 'number') return neg(op);
  if (typeof np === 'number') return neg(np);
  const a = parentOf(c, olddirfd, op), b = parentOf(c, newdirfd, np);
  if (!a.ok) return neg(a.errno);
  if (!b.ok) return neg(b.errno);
  const src = a.dir.children!.get(a.name);
  if (!src) return E('ENOENT');
  const dst = b.dir.children!.get(b.name);
  if (dst === src) return 0n;
  if (dst && (flags & 1)) return E('EEXIST');
  if (src.isDir) {
    // no directory into itself
    for (let d: Inode | undefined = b.dir; d; d = d.parent === d ? undefined : d.parent) if (d === src) return E('EINVAL');
    if (dst && !dst.isDir) return E('ENOTDIR');
    if (dst && dst.children!.size) return E('ENOTEMPTY');
  } else if (dst?.isDir) return E('EISDIR');
  const fs = c.proc.kernel.fs;
  if (dst) { b.dir.children!.delete(b.name); dst.nlink--; if (dst.isDir) b.dir.nlink--; }
  a.dir.children!.delete(a.name);
  if (src.isDir) a.dir.nlink--;
  fs.link(b.dir, b.name, src);
  return 0n;
}

function readlinkAt(c: SyscallCtx, dirfd: number, pathPtr: bigint, buf: bigint, size: bigint): bigint {
  const path = userPath(c, pathPtr);
  if (typeof path === 'number') return neg(path);
  const n = i32(size);
  if (n <= 0) return E('EINVAL');
  let target: string;
  if (procExe(c, path)) target = c.proc.exeLink();
  else {
    const r = resolve(c, dirfd, path, false);
    if (!r.ok) return neg(r.errno);
    if (!r.inode.isLink) return E('EINVAL');
    target = r.inode.target!;
  }
  const b = new TextEncoder().encode(target).subarray(0, n);
  return copyToUser(c.proc.mm, buf, b) ? BigInt(b.length) : E('EFAULT');
}

function symlinkAt(c: SyscallCtx, targetPtr: bigint, dirfd: number, pathPtr: bigint): bigint {
  const target = readUserString(c.proc.mm, targetPtr, 4096);
  if (target === null) return E('EFAULT');
  const path = userPath(c, pathPtr);
  if (typeof path === 'number') return neg(path);
  return symlinkNamed(c, target, dirfd, path);
}

/** symlink(2)'s work once both names are known (imageWork.ts calls it for the image's vfs_symlink). */
export function symlinkNamed(c: SyscallCtx, target: string, dirfd: number, path: string): bigint {
  if (target === '' || path === '') return E('ENOENT');
  const p = parentOf(c, dirfd, path);
  if (!p.ok) return neg(p.errno);
  if (p.dir.children!.has(p.name)) return E('EEXIST');
  const fs = c.proc.kernel.fs;
  const l = fs.newInode(0o120777);
  l.target = target;
  l.size = new TextEncoder().encode(target).length;
  fs.link(p.dir, p.name, l);
  return 0n;
}

function linkAt(c: SyscallCtx, olddirfd: number, oldPtr: bigint, newdirfd: number, newPtr: bigint, flags: number): bigint {
  const op = userPath(c, oldPtr), np = userPath(c, newPtr);
  if (typeof op === 'number') return neg(op);
  if (typeof np === 'number') return neg(np);
  const r = resolve(c, olddirfd, op, (flags & 0x400) !== 0);
  if (!r.ok) return neg(r.errno);
  if (r.inode.isDir) return E('EPERM');
  const p = parentOf(c, newdirfd, np);
  if (!p.ok) return neg(p.errno);
  if (p.dir.children!.has(p.name)) return E('EEXIST');
  p.dir.children!.set(p.name, r.inode);
  r.inode.nlink++;
  return 0n;
}

export const NAMEI_SYSCALLS = {
  mkdir: (c, [p, mode]) => mkdirAt(c, AT_FDCWD, p, i32(mode)),
  mkdirat: (c, [dirfd, p, mode]) => mkdirAt(c, i32(dirfd), p, i32(mode)),
  rmdir: (c, [p]) => unlinkAt(c, AT_FDCWD, p, AT_REMOVEDIR),
  unlink: (c, [p]) => unlinkAt(c, AT_FDCWD, p, 0),
  unlinkat: (c, [dirfd, p, flags]) => unlinkAt(c, i32(dirfd), p, i32(flags)),
  rename: (c, [a, b]) => renameAt(c, AT_FDCWD, a, AT_FDCWD, b, 0),
  renameat: (c, [ad, a, bd, b]) => renameAt(c, i32(ad), a, i32(bd), b, 0),
  renameat2: (c, [ad, a, bd, b, flags]) => renameAt(c, i32(ad), a, i32(bd), b, i32(flags)),
  readlink: (c, [p, buf, size]) => readlinkAt(c, AT_FDCWD, p, buf, size),
  readlinkat: (c, [dirfd, p, buf, size]) => readlinkAt(c, i32(dirfd), p, buf, size),
  // the image's do_symlinkat does the work when its thread serves user space (imageCalls.ts)
  symlink: (c, [t, p]) => imageCall(c, UserRequestOp.SymlinkAt, [t, BigInt(AT_FDCWD), p]) ?? symlinkAt(c, t, AT_FDCWD, p),
  symlinkat: (c, [t, dirfd, p]) => imageCall(c, UserRequestOp.SymlinkAt, [t, dirfd, p]) ?? symlinkAt(c, t, i32(dirfd), p),
  link: (c, [a, b]) => linkAt(c, AT_FDCWD, a, AT_FDCWD, b, 0),
  linkat: (c, [ad, a, bd, b, flags]) => linkAt(c, i32(ad), a, i32(bd), b, i32(flags)),
} satisfies Partial<Record<SyscallName, SyscallHandler>>;
