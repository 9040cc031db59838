/**
 * File system calls of user processes over the emulated filesystem
 * (emulator/kernel/fs/vfs.ts) and the open-file model (files.ts):
 * open/openat/creat, read/write and their vectored and positioned forms,
 * lseek, getdents64, fcntl, dup*, pipes, poll, the console's ioctls, cwd,
 * access, modes and owners, umask, truncation. The stat family is
 * statSyscalls.ts, the name calls (mkdir, unlink, rename, links)
 * nameiSyscalls.ts, the paths of the *at calls pathAt.ts.
 *
 * Every process runs as root (uid 0): permission bits are kept and shown
 * but only the execute bits are checked (execve, access X_OK).
 */
import { Errno } from '../abi';
import type { SyscallName } from '../../arch/types';
import { Inode, S_IFMT, S_IFREG } from '../fs/vfs';
import { copyFromUser, copyToUser } from './uaccess';
import { O_ACCMODE, O_APPEND, O_CLOEXEC, O_CREAT, O_EXCL, O_NONBLOCK, O_RDONLY, O_TRUNC, O_WRONLY, OpenFile, Pipe } from './files';
import { E, RESTART, SyscallCtx, SyscallHandler, SyscallResult, i32, neg } from './results';
import { deliverSignal } from './procSyscalls';
import { openPseudo } from '../fs/pseudo';
import { SIGPIPE } from './signals';
import { imageCall } from './imageCalls';
import { UserRequestOp } from './kernelService';
import { AT_FDCWD, AT_SYMLINK_NOFOLLOW, fdEntry, parentOf, pathArg, resolve, userPath } from './pathAt';

const IO_MAX = 1 << 24;
const PIPE_BUF = 4096;
const F_DUPFD = 0, F_GETFD = 1, F_SETFD = 2, F_GETFL = 3, F_SETFL = 4, F_DUPFD_CLOEXEC = 1030, FD_CLOEXEC = 1;
const TCGETS = 0x5401, TIOCGWINSZ = 0x5413, TIOCGPGRP = 0x540f;
const SEEK_SET = 0, SEEK_CUR = 1, SEEK_END = 2;

/** open(2)'s work once the name is known: the descriptor, or -errno (imageWork.ts calls it for the image's do_sys_openat2). */
export function openInode(c: SyscallCtx, dirfd: number, path: string, flags: number, mode: number): bigint {
  const fs = c.proc.kernel.fs;
  const oflags = c.proc.kernel.arch.kernel.user.openFlags;
  let r = resolve(c, dirfd, path, (flags & oflags.nofollow) === 0);
  if (r.ok && (flags & O_CREAT) && (flags & O_EXCL)) return E('EEXIST');
  if (!r.ok && r.errno === Errno.ENOENT && (flags & O_CREAT)) {
    const p = parentOf(c, dirfd, path);
    if (!p.ok) return neg(p.errno);
    if (p.dir.children!.has(p.name)) {
      const existing = p.dir.children!.get(p.name)!;
      if (existing.isLink) return E('EEXIST'); // a dangling symlink with O_CREAT|O_NOFOLLOW-like: keep it simple
    }
    const f = fs.newInode(S_IFREG | (mode & 0o7777 & ~c.proc.umask));
    fs.link(p.dir, p.name, f);
    r = { ok: true, inode: f };
  }
  if (!r.ok) return neg(r.errno);
  const inode = r.inode;
  if (inode.isLink) return E('ELOOP');
  if ((flags & oflags.directory) && !inode.isDir) return E('ENOTDIR');
  const acc = flags & O_ACCMODE;
  if (inode.isDir && acc !== O_RDONLY) return E('EISDIR');
  if ((flags & O_TRUNC) && inode.isReg && acc !== O_RDONLY) inode.truncate(0, fs.now());
  const pseudo = inode.pseudo ? openPseudo(inode.pseudo, flags) : null;
  if (typeof pseudo === 'number') return neg(-pseudo);
  const file = new OpenFile('inode', flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC), inode, null, pseudo);
  const fd = c.proc.fds.install(file, (flags & O_CLOEXEC) !== 0);
  return fd === null ? E('EMFILE') : BigInt(fd);
}

/** read(2) from a description at its position (or at `at` for pread); RESTART when a pipe must wait. */
function readFile(c: SyscallCtx, f: OpenFile, len: number, at?: number): Uint8Array | bigint | typeof RESTART {
  if (!f.readable) return E('EBADF');
  if (f.pipe) {
    const p = f.pipe;
    if (p.len > 0) { const out = p.read(len); p.wakeWaiters(); return out; }
    if (p.writers === 0) return new Uint8Array(0);
    if (f.flags & O_NONBLOCK) return E('EAGAIN');
    p.waiting.add(c.task);
    return RESTART;
  }
  const dev = f.chr;
  if (dev) {
    const r = dev.read(len);
    // nothing yet on a device that can wait: sleep until it has data, as a pipe reader does
    if (r === -Errno.EAGAIN && dev.waitReadable && !(f.flags & O_NONBLOCK)) {
      const task = c.task, k = c.proc.kernel;
      dev.waitReadable(() => k.sched.wake(task));
      return RESTART;
    }
    return typeof r === 'number' ? neg(-r) : r;
  }
  const inode = f.inode!;
  if (inode.isDir) return E('EISDIR');
  const pos = at ?? f.pos;
  const out = inode.read(pos, len);
  if (at === undefined) f.pos += out.length;
  return out;
}

function writeFile(c: SyscallCtx, f: OpenFile, bytes: Uint8Array, at?: number): bigint | typeof RESTART {
  if (!f.writable) return E('EBADF');
  if (f.pipe) {
    const p = f.pipe;
    if (p.readers === 0) { deliverSignal(c.proc.kernel, c.proc, SIGPIPE); return E('EPIPE'); }
    if (bytes.length === 0) return 0n;
    // writes of at most PIPE_BUF bytes are atomic: all or wait
    if (p.space === 0 || (bytes.length <= PIPE_BUF && p.space < bytes.length)) {
      if (f.flags & O_NONBLOCK) return E('EAGAIN');
      p.waiting.add(c.task);
      return RESTART;
    }
    const n = p.write(bytes);
    p.wakeWaiters();
    return BigInt(n);
  }
  const dev = f.chr;
  if (dev) { const r = dev.write(bytes); return BigInt(r); }
  const inode = f.inode!;
  const fs = inode.fs;
  const pos = at ?? ((f.flags & O_APPEND) ? inode.size : f.pos);
  inode.write(pos, bytes, fs.now());
  if (at === undefined) f.pos = pos + bytes.length;
  return BigInt(bytes.length);
}

/** The iovec array of readv/writev: (base, len) pairs. */
function iovecs(c: SyscallCtx, iov: bigint, cnt: bigint): [bigint, number][] | bigint {
  const n = i32(cnt);
  if (n < 0 || n > 1024) return E('EINVAL');
  const vec = copyFromUser(c.proc.mm, iov, n * 16);
  if (!vec) return E('EFAULT');
  const dv = new DataView(vec.buffer, vec.byteOffset, vec.byteLength);
  const out: [bigint, number][] = [];
  for (let i = 0; i < n; i++) {
    const len = dv.getBigUint64(i * 16 + 8, true);
    if (len > BigInt(IO_MAX)) return E('EINVAL');
    out.push([dv.getBigUint64(i * 16, true), Number(len)]);
  }
  return out;
}

function doRead(c: SyscallCtx, fd: bigint, buf: bigint, count: bigint, at?: number): SyscallResult {
  const e = fdEntry(c, fd);
  if (!e) return E('EBADF');
  const u = BigInt.asUintN(64, count);
  const n = u > BigInt(IO_MAX) ? IO_MAX : Number(u);
  const r = readFile(c, e.file, n, at);
  if (r === RESTART) return RESTART;
  if (typeof r === 'bigint') return r;
  if (r.length && !copyToUser(c.proc.mm, buf, r)) return E('EFAULT');
  return BigInt(r.length);
}

function doWrite(c: SyscallCtx, fd: bigint, buf: bigint, count: bigint, at?: number): SyscallResult {
  const e = fdEntry(c, fd);
  if (!e) return E('EBADF');
  const u = BigInt.asUintN(64, count);
  const n = u > BigInt(IO_MAX) ? IO_MAX : Number(u);
  const bytes = n === 0 ? new Uint8Array(0) : copyFromUser(c.proc.mm, buf, n);
  if (!bytes) return E('EFAULT');
  return writeFile(c, e.file, bytes, at);
}

const DT = (i: Inode): number => ((i.mode & S_IFMT) >> 12);

function getdents64(c: SyscallCtx, fd: bigint, buf: bigint, count: bigint): bigint {
  const e = fdEntry(c, fd);
  if (!e) return E('EBADF');
  const dir = e.file.inode;
  if (!dir?.isDir) return E('ENOTDIR');
  dir.refresh?.();
  const entries: [string, Inode][] = [['.', dir], ['..', dir.parent ?? dir], ...dir.children!];
  const max = Math.min(Number(BigInt.asUintN(64, count) & 0xffffffn), IO_MAX);
  const out = new Uint8Array(max);
  const dv = new DataView(out.buffer);
  let at = 0;
  const enc = new TextEncoder();
  while (e.file.dirPos < entries.length) {
    const [name, ino] = entries[e.file.dirPos];
    const nb = enc.encode(name);
    const reclen = (19 + nb.length + 1 + 7) & ~7;
    if (at + reclen > max) {
      if (at === 0) return E('EINVAL');
      break;
    }
    dv.setBigUint64(at, ino.ino, true);
    dv.setBigInt64(at + 8, BigInt(e.file.dirPos + 1), true);
    dv.setUint16(at + 16, reclen, true);
    out[at + 18] = DT(ino);
    out.set(nb, at + 19);
    at += reclen;
    e.file.dirPos++;
  }
  return copyToUser(c.proc.mm, buf, out.subarray(0, at)) ? BigInt(at) : E('EFAULT');
}

function pipe2(c: SyscallCtx, fdsPtr: bigint, flags: number): bigint {
  const k = c.proc.kernel;
  const p = new Pipe(t => k.sched.wake(t));
  const nb = flags & O_NONBLOCK;
  const r = new OpenFile('pipe-r', O_RDONLY | nb, null, p);
  const w = new OpenFile('pipe-w', O_WRONLY | nb, null, p);
  const cloexec = (flags & O_CLOEXEC) !== 0;
  const rfd = c.proc.fds.install(r, cloexec);
  if (rfd === null) return E('EMFILE');
  const wfd = c.proc.fds.install(w, cloexec);
  if (wfd === null) { c.proc.fds.close(rfd); return E('EMFILE'); }
  if (!copyToUser(c.proc.mm, fdsPtr, Uint8Array.from([...u32(rfd), ...u32(wfd)]))) {
    c.proc.fds.close(rfd); c.proc.fds.close(wfd);
    return E('EFAULT');
  }
  return 0n;
}

const u32 = (v: number): number[] => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff];

function dup3(c: SyscallCtx, oldfd: number, newfd: number, flags: number): bigint {
  const e = c.proc.fds.get(oldfd);
  if (!e) return E('EBADF');
  if (newfd < 0 || newfd >= 1024) return E('EBADF');
  if (oldfd === newfd) return E('EINVAL');
  c.proc.fds.set(newfd, e.file, (flags & O_CLOEXEC) !== 0);
  return BigInt(newfd);
}

function ioctl(c: SyscallCtx, fd: bigint, req: bigint, arg: bigint): bigint {
  const e = fdEntry(c, fd);
  if (!e) return E('EBADF');
  const dev = e.file.chr;
  const r = Number(BigInt.asUintN(32, req));
  if (!dev?.tty) return E('ENOTTY');
  if (r === TCGETS) {
    const t = new Uint8Array(36);
    const dv = new DataView(t.buffer);
    dv.setUint32(0, 0x500, true); dv.setUint32(4, 0x5, true); dv.setUint32(8, 0xbf, true); dv.setUint32(12, 0x8a3b, true);
    return copyToUser(c.proc.mm, arg, t) ? 0n : E('EFAULT');
  }
  if (r === TIOCGWINSZ) return copyToUser(c.proc.mm, arg, Uint8Array.from([24, 0, 80, 0, 0, 0, 0, 0])) ? 0n : E('EFAULT');
  if (r === TIOCGPGRP) return copyToUser(c.proc.mm, arg, Uint8Array.from(u32(c.proc.pid))) ? 0n : E('EFAULT');
  return E('ENOTTY');
}

function accessAt(c: SyscallCtx, dirfd: number, pathPtr: bigint, mode: number, flags = 0): bigint {
  const path = userPath(c, pathPtr);
  if (typeof path === 'number') return neg(path);
  const r = resolve(c, dirfd, path, (flags & AT_SYMLINK_NOFOLLOW) === 0);
  if (!r.ok) return neg(r.errno);
  // root: read and write always; execute when some x bit is set (or a directory)
  if ((mode & 1) && !r.inode.isDir && (r.inode.mode & 0o111) === 0) return E('EACCES');
  return 0n;
}

function chdirTo(c: SyscallCtx, i: Inode): bigint {
  if (!i.isDir) return E('ENOTDIR');
  c.proc.cwd = i;
  return 0n;
}

function truncate(c: SyscallCtx, i: Inode, len: bigint): bigint {
  if (i.isDir) return E('EISDIR');
  if (!i.isReg) return E('EINVAL');
  const n = BigInt.asIntN(64, len);
  if (n < 0n) return E('EINVAL');
  if (n > BigInt(1 << 30)) return E('EFBIG');
  i.truncate(Number(n), i.fs.now());
  return 0n;
}

function chmodInode(i: Inode, mode: number): bigint {
  i.mode = (i.mode & S_IFMT) | (mode & 0o7777);
  i.ctimeNs = i.fs.now();
  return 0n;
}

/** poll / ppoll: pipes by their fill, everything else always ready; sleeps (restarts) when nothing is and the timeout allows */
function poll(c: SyscallCtx, fdsPtr: bigint, nfds: number, wait: boolean): SyscallResult {
  if (nfds < 0 || nfds > 1024) return E('EINVAL');
  const b = nfds ? copyFromUser(c.proc.mm, fdsPtr, nfds * 8) : new Uint8Array(0);
  if (!b) return E('EFAULT');
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const POLLIN = 1, POLLOUT = 4, POLLERR = 8, POLLHUP = 0x10, POLLNVAL = 0x20;
  let ready = 0;
  const pipes: Pipe[] = [];
  for (let k = 0; k < nfds; k++) {
    const fd = dv.getInt32(k * 8, true), ev = dv.getInt16(k * 8 + 4, true);
    let rev = 0;
    if (fd >= 0) {
      const e = c.proc.fds.get(fd);
      if (!e) rev = POLLNVAL;
      else if (e.file.pipe) {
        const p = e.file.pipe;
        pipes.push(p);
        if (e.file.kind === 'pipe-r') rev = (p.len > 0 ? ev & POLLIN : 0) | (p.writers === 0 ? POLLHUP : 0);
        else rev = p.readers === 0 ? POLLERR : p.space > 0 ? ev & POLLOUT : 0;
      } else rev = ev & (POLLIN | POLLOUT);
    }
    dv.setInt16(k * 8 + 6, rev, true);
    if (rev) ready++;
  }
  if (ready === 0 && wait && pipes.length) {
    for (const p of pipes) p.waiting.add(c.task);
    return RESTART;
  }
  return copyToUser(c.proc.mm, fdsPtr, b) ? BigInt(ready) : E('EFAULT');
}

export const FILE_SYSCALLS = {
  poll: (c, [fds, nfds, timeout]) => poll(c, fds, i32(nfds), i32(timeout) !== 0),
  ppoll: (c, [fds, nfds, ts]) => {
    let wait = true;
    if (ts !== 0n) {
      const t = copyFromUser(c.proc.mm, ts, 16);
      if (!t) return E('EFAULT');
      const dv = new DataView(t.buffer, t.byteOffset, 16);
      wait = dv.getBigInt64(0, true) !== 0n || dv.getBigInt64(8, true) !== 0n;
    }
    return poll(c, fds, i32(nfds), wait);
  },
  read: (c, [fd, buf, count]) => doRead(c, fd, buf, count),
  write: (c, [fd, buf, count]) => doWrite(c, fd, buf, count),
  pread64: (c, [fd, buf, count, off]) => (BigInt.asIntN(64, off) < 0n ? E('EINVAL') : doRead(c, fd, buf, count, Number(off))),
  pwrite64: (c, [fd, buf, count, off]) => (BigInt.asIntN(64, off) < 0n ? E('EINVAL') : doWrite(c, fd, buf, count, Number(off))),
  readv: (c, [fd, iov, cnt]) => {
    const v = iovecs(c, iov, cnt);
    if (typeof v === 'bigint') return v;
    let total = 0n;
    for (const [base, len] of v) {
      if (len === 0) continue;
      const r = doRead(c, fd, base, BigInt(len));
      if (typeof r !== 'bigint') return total > 0n ? total : r;
      if (r < 0n) return total > 0n ? total : r;
      total += r;
      if (r < BigInt(len)) break;
    }
    return total;
  },
  writev: (c, [fd, iov, cnt]) => {
    const v = iovecs(c, iov, cnt);
    if (typeof v === 'bigint') return v;
    let total = 0n;
    for (const [base, len] of v) {
      if (len === 0) continue;
      const r = doWrite(c, fd, base, BigInt(len));
      if (typeof r !== 'bigint') return total > 0n ? total : r;
      if (r < 0n) return total > 0n ? total : r;
      total += r;
      if (r < BigInt(len)) break;
    }
    return total;
  },
  // the image's do_sys_open does the work when its thread serves user space (imageCalls.ts)
  open: (c, [p, flags, mode]) => imageCall(c, UserRequestOp.OpenAt, [BigInt(AT_FDCWD), p, flags, mode])
    ?? pathArg(c, p, path => openInode(c, AT_FDCWD, path, i32(flags), i32(mode))),
  creat: (c, [p, mode]) => imageCall(c, UserRequestOp.OpenAt, [BigInt(AT_FDCWD), p, BigInt(O_CREAT | O_WRONLY | O_TRUNC), mode])
    ?? pathArg(c, p, path => openInode(c, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, i32(mode))),
  openat: (c, [dirfd, p, flags, mode]) => imageCall(c, UserRequestOp.OpenAt, [dirfd, p, flags, mode])
    ?? pathArg(c, p, path => openInode(c, i32(dirfd), path, i32(flags), i32(mode))),
  close: (c, [fd]) => (c.proc.fds.close(i32(fd)) ? 0n : E('EBADF')),
  lseek: (c, [fd, off, whence]) => {
    const e = fdEntry(c, fd);
    if (!e) return E('EBADF');
    const f = e.file;
    if (f.pipe || f.chr) return f.chr && !f.pipe ? 0n : E('ESPIPE');
    const o = BigInt.asIntN(64, off);
    let base: bigint;
    switch (i32(whence)) {
      case SEEK_SET: base = 0n; break;
      case SEEK_CUR: base = BigInt(f.pos); break;
      case SEEK_END: base = BigInt(f.inode!.isReg ? f.inode!.size : 0); break;
      default: return E('EINVAL');
    }
    const n = base + o;
    if (n < 0n) return E('EINVAL');
    if (f.inode?.isDir) { f.dirPos = Number(n); f.pos = Number(n); return n; }
    f.pos = Number(n);
    return n;
  },
  getdents64: (c, [fd, buf, count]) => getdents64(c, fd, buf, count),
  fcntl: (c, [fd, cmd, arg]) => {
    const e = fdEntry(c, fd);
    if (!e) return E('EBADF');
    switch (i32(cmd)) {
      case F_DUPFD: case F_DUPFD_CLOEXEC: {
        const min = i32(arg);
        if (min < 0 || min >= 1024) return E('EINVAL');
        const n = c.proc.fds.install(e.file, i32(cmd) === F_DUPFD_CLOEXEC, min);
        return n === null ? E('EMFILE') : BigInt(n);
      }
      case F_GETFD: return e.cloexec ? BigInt(FD_CLOEXEC) : 0n;
      case F_SETFD: e.cloexec = (i32(arg) & FD_CLOEXEC) !== 0; return 0n;
      case F_GETFL: return BigInt(e.file.flags);
      case F_SETFL: e.file.flags = (e.file.flags & O_ACCMODE) | (i32(arg) & (O_APPEND | O_NONBLOCK)); return 0n;
      default: return E('EINVAL');
    }
  },
  dup: (c, [fd]) => {
    const e = fdEntry(c, fd);
    if (!e) return E('EBADF');
    const n = c.proc.fds.install(e.file, false);
    return n === null ? E('EMFILE') : BigInt(n);
  },
  dup2: (c, [oldfd, newfd]) => {
    if (i32(oldfd) === i32(newfd)) return c.proc.fds.get(i32(oldfd)) ? BigInt(i32(newfd)) : E('EBADF');
    return dup3(c, i32(oldfd), i32(newfd), 0);
  },
  dup3: (c, [oldfd, newfd, flags]) => dup3(c, i32(oldfd), i32(newfd), i32(flags)),
  pipe: (c, [fds]) => pipe2(c, fds, 0),
  pipe2: (c, [fds, flags]) => pipe2(c, fds, i32(flags)),
  ioctl: (c, [fd, req, arg]) => ioctl(c, fd, req, arg),
  getcwd: (c, [buf, size]) => {
    const path = c.proc.kernel.fs.pathOf(c.proc.cwd);
    const b = new TextEncoder().encode(path + '\0');
    if (BigInt(b.length) > BigInt.asUintN(64, size)) return E('ERANGE');
    return copyToUser(c.proc.mm, buf, b) ? BigInt(b.length) : E('EFAULT');
  },
  chdir: (c, [p]) => pathArg(c, p, path => { const r = resolve(c, AT_FDCWD, path); return r.ok ? chdirTo(c, r.inode) : neg(r.errno); }),
  fchdir: (c, [fd]) => { const e = fdEntry(c, fd); return !e ? E('EBADF') : e.file.inode ? chdirTo(c, e.file.inode) : E('ENOTDIR'); },
  access: (c, [p, mode]) => accessAt(c, AT_FDCWD, p, i32(mode)),
  faccessat: (c, [dirfd, p, mode]) => accessAt(c, i32(dirfd), p, i32(mode)),
  faccessat2: (c, [dirfd, p, mode, flags]) => accessAt(c, i32(dirfd), p, i32(mode), i32(flags)),
  umask: (c, [mask]) => { const old = c.proc.umask; c.proc.umask = i32(mask) & 0o777; return BigInt(old); },
  ftruncate: (c, [fd, len]) => {
    const e = fdEntry(c, fd);
    if (!e) return E('EBADF');
    if (!e.file.inode || !e.file.writable) return E('EINVAL');
    return truncate(c, e.file.inode, len);
  },
  truncate: (c, [p, len]) => pathArg(c, p, path => { const r = resolve(c, AT_FDCWD, path); return r.ok ? truncate(c, r.inode, len) : neg(r.errno); }),
  fsync: (c, [fd]) => (fdEntry(c, fd) ? 0n : E('EBADF')),
  fdatasync: (c, [fd]) => (fdEntry(c, fd) ? 0n : E('EBADF')),
  chmod: (c, [p, mode]) => pathArg(c, p, path => { const r = resolve(c, AT_FDCWD, path); return r.ok ? chmodInode(r.inode, i32(mode)) : neg(r.errno); }),
  fchmod: (c, [fd, mode]) => { const e = fdEntry(c, fd); return !e ? E('EBADF') : e.file.inode ? chmodInode(e.file.inode, i32(mode)) : 0n; },
  fchmodat: (c, [dirfd, p, mode]) => pathArg(c, p, path => { const r = resolve(c, i32(dirfd), path); return r.ok ? chmodInode(r.inode, i32(mode)) : neg(r.errno); }),
  chown: (c, [p]) => pathArg(c, p, path => { const r = resolve(c, AT_FDCWD, path); return r.ok ? 0n : neg(r.errno); }),
  lchown: (c, [p]) => pathArg(c, p, path => { const r = resolve(c, AT_FDCWD, path, false); return r.ok ? 0n : neg(r.errno); }),
  fchown: (c, [fd]) => (fdEntry(c, fd) ? 0n : E('EBADF')),
  fchownat: (c, [dirfd, p, , , flags]) => pathArg(c, p, path => { const r = resolve(c, i32(dirfd), path, (i32(flags) & AT_SYMLINK_NOFOLLOW) === 0); return r.ok ? 0n : neg(r.errno); }),
} satisfies Partial<Record<SyscallName, SyscallHandler>>;

