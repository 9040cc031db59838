/**
 * Paths of the *at() system calls of user processes: a path from user
 * memory, resolved from the cwd (AT_FDCWD) or an open directory, procfs's
 * per-process links (/proc/self/exe, /proc/<pid>/maps) found the way
 * procfs would; shared by the file, stat and name system calls.
 */
import { Errno } from '../abi';
import { Inode, S_IFREG } from '../fs/vfs';
import { readUserString } from './uaccess';
import type { FdEntry } from './files';
import { SyscallCtx, i32, neg } from './results';
import { procMaps } from './procMaps';

export const AT_FDCWD = -100, AT_SYMLINK_NOFOLLOW = 0x100, AT_REMOVEDIR = 0x200, AT_EMPTY_PATH = 0x1000;

export type Resolved = { ok: true; inode: Inode } | { ok: false; errno: number };

/** The directory a relative path starts from: the cwd (AT_FDCWD) or an open directory. */
function startDir(c: SyscallCtx, dirfd: number): Inode | number {
  if (dirfd === AT_FDCWD) return c.proc.cwd;
  const e = c.proc.fds.get(dirfd);
  if (!e) return Errno.EBADF;
  if (!e.file.inode?.isDir) return Errno.ENOTDIR;
  return e.file.inode;
}

/** /proc/self/exe (and /proc/<own pid>/exe): the process's executable. */
export function procExe(c: SyscallCtx, path: string): boolean {
  return path === '/proc/self/exe' || path === `/proc/${c.proc.pid}/exe`;
}

/** /proc/self/maps, /proc/<pid>/maps: a file of the text at open time (an inode in no directory) */
function procMapsFile(c: SyscallCtx, path: string): Resolved | undefined {
  const m = /^\/proc\/(self|\d+)\/maps$/.exec(path);
  if (!m) return undefined;
  const k = c.proc.kernel;
  const proc = m[1] === 'self' ? c.proc : k.processes.get(Number(m[1]));
  if (!proc || proc.waitStatus !== null) return { ok: false, errno: Errno.ENOENT };
  const f = k.fs.newInode(S_IFREG | 0o444);
  f.write(0, new TextEncoder().encode(procMaps(k, proc)), k.fs.now());
  return { ok: true, inode: f };
}

export function resolve(c: SyscallCtx, dirfd: number, path: string, follow = true): Resolved {
  const maps = procMapsFile(c, path);
  if (maps) return maps;
  // not followed, it is the link procfs has (lstat, readlink)
  if (procExe(c, path) && (follow || !c.proc.kernel.fs.lookup(path, c.proc.cwd, false).ok)) {
    if (!follow) return { ok: false, errno: Errno.EINVAL };
    return c.proc.exe ? { ok: true, inode: c.proc.exe } : { ok: false, errno: Errno.ENOENT };
  }
  const start = path.startsWith('/') ? c.proc.cwd : startDir(c, dirfd);
  if (typeof start === 'number') return { ok: false, errno: start };
  return c.proc.kernel.fs.lookup(path, start, follow);
}

export function parentOf(c: SyscallCtx, dirfd: number, path: string): { ok: true; dir: Inode; name: string } | { ok: false; errno: number } {
  const start = path.startsWith('/') ? c.proc.cwd : startDir(c, dirfd);
  if (typeof start === 'number') return { ok: false, errno: start };
  return c.proc.kernel.fs.parentOf(path, start);
}

export function userPath(c: SyscallCtx, p: bigint): string | number {
  const s = readUserString(c.proc.mm, p, 4096);
  if (s === null) return Errno.EFAULT;
  if (s === '') return Errno.ENOENT;
  return s;
}

export function fdEntry(c: SyscallCtx, fd: bigint): FdEntry | undefined { return c.proc.fds.get(i32(fd)); }

export function pathArg<T>(c: SyscallCtx, p: bigint, f: (path: string) => T): T | bigint {
  const s = userPath(c, p);
  return typeof s === 'number' ? neg(s) : f(s);
}
