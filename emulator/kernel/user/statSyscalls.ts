/**
 * The stat family of user processes (fs/stat.c): stat, lstat, fstat,
 * newfstatat and statx, struct stat as the arch lays it out (x86_64's own,
 * asm-generic's for arm64 / riscv) and struct statx.
 */
import { Inode } from '../fs/vfs';
import { copyToUser, readUserString } from './uaccess';
import { E, SyscallCtx, SyscallHandler, i32, neg } from './results';
import { AT_EMPTY_PATH, AT_FDCWD, AT_SYMLINK_NOFOLLOW, fdEntry, resolve } from './pathAt';
import type { SyscallName } from '../../arch/types';

/** struct stat as this arch lays it out (x86_64's own, or asm-generic's for arm64 / riscv). */
function statBytes(c: SyscallCtx, i: Inode): Uint8Array {
  const layout = c.proc.kernel.arch.kernel.user.stat;
  const size = i.isReg ? i.size : i.isLink ? i.size : i.isDir ? 4096 : 0;
  // allocated as tmpfs does: whole pages, in 512-byte blocks
  const blocks = BigInt(Math.ceil(size / 4096) * 8);
  const sec = i.mtimeNs / 1_000_000_000n, nsec = i.mtimeNs % 1_000_000_000n;
  const csec = i.ctimeNs / 1_000_000_000n, cnsec = i.ctimeNs % 1_000_000_000n;
  const nlink = BigInt(i.isDir ? 2 + [...i.children!.values()].filter(x => x.isDir).length : i.nlink);
  const b = new Uint8Array(layout === 'x86_64' ? 144 : 128);
  const dv = new DataView(b.buffer);
  const dev = 0x800n; // one filesystem: device 8:0... numbered as a tmpfs would be (0:x); kept constant
  if (layout === 'x86_64') {
    dv.setBigUint64(0, dev, true); dv.setBigUint64(8, i.ino, true); dv.setBigUint64(16, nlink, true);
    dv.setUint32(24, i.mode, true); dv.setUint32(28, i.uid, true); dv.setUint32(32, i.gid, true);
    dv.setBigUint64(40, BigInt(i.rdev), true); dv.setBigInt64(48, BigInt(size), true); dv.setBigInt64(56, 4096n, true);
    dv.setBigInt64(64, blocks, true);
    dv.setBigInt64(72, sec, true); dv.setBigInt64(80, nsec, true);
    dv.setBigInt64(88, sec, true); dv.setBigInt64(96, nsec, true);
    dv.setBigInt64(104, csec, true); dv.setBigInt64(112, cnsec, true);
  } else {
    dv.setBigUint64(0, dev, true); dv.setBigUint64(8, i.ino, true); dv.setUint32(16, i.mode, true);
    dv.setUint32(20, Number(nlink), true); dv.setUint32(24, i.uid, true); dv.setUint32(28, i.gid, true);
    dv.setBigUint64(32, BigInt(i.rdev), true); dv.setBigInt64(48, BigInt(size), true); dv.setInt32(56, 4096, true);
    dv.setBigInt64(64, blocks, true);
    dv.setBigInt64(72, sec, true); dv.setBigInt64(80, nsec, true);
    dv.setBigInt64(88, sec, true); dv.setBigInt64(96, nsec, true);
    dv.setBigInt64(104, csec, true); dv.setBigInt64(112, cnsec, true);
  }
  return b;
}

function statxBytes(i: Inode): Uint8Array {
  const b = new Uint8Array(256);
  const dv = new DataView(b.buffer);
  const size = i.isReg || i.isLink ? i.size : i.isDir ? 4096 : 0;
  dv.setUint32(0, 0x7ff, true); // STATX_BASIC_STATS
  dv.setUint32(4, 4096, true);
  dv.setUint32(16, i.isDir ? 2 + [...i.children!.values()].filter(x => x.isDir).length : i.nlink, true);
  dv.setUint32(20, i.uid, true); dv.setUint32(24, i.gid, true); dv.setUint16(28, i.mode, true);
  dv.setBigUint64(32, i.ino, true); dv.setBigUint64(40, BigInt(size), true); dv.setBigUint64(48, BigInt(Math.ceil(size / 4096) * 8), true);
  const ts = (off: number, ns: bigint): void => { dv.setBigInt64(off, ns / 1_000_000_000n, true); dv.setUint32(off + 8, Number(ns % 1_000_000_000n), true); };
  ts(0x40, i.mtimeNs); ts(0x50, i.ctimeNs); ts(0x60, i.ctimeNs); ts(0x70, i.mtimeNs);
  dv.setUint32(0x80, i.rdev >> 8, true); dv.setUint32(0x84, i.rdev & 0xff, true);
  dv.setUint32(0x88, 8, true); dv.setUint32(0x8c, 0, true);
  return b;
}

function statAt(c: SyscallCtx, dirfd: number, pathPtr: bigint, buf: bigint, flags: number, x = false): bigint {
  let inode: Inode;
  const path = readUserString(c.proc.mm, pathPtr, 4096);
  if (path === null) return E('EFAULT');
  if (path === '' && (flags & AT_EMPTY_PATH)) {
    if (dirfd === AT_FDCWD) inode = c.proc.cwd;
    else { const e = c.proc.fds.get(dirfd); if (!e) return E('EBADF'); if (!e.file.inode) return fstatPipe(c, buf, x); inode = e.file.inode; }
  } else {
    if (path === '') return E('ENOENT');
    const r = resolve(c, dirfd, path, (flags & AT_SYMLINK_NOFOLLOW) === 0);
    if (!r.ok) return neg(r.errno);
    inode = r.inode;
  }
  return copyToUser(c.proc.mm, buf, x ? statxBytes(inode) : statBytes(c, inode)) ? 0n : E('EFAULT');
}

/** fstat of a pipe or a host stream: a FIFO / character device with no inode in the tree */
function fstatPipe(c: SyscallCtx, buf: bigint, x: boolean, dev?: boolean): bigint {
  // an inode of no filesystem (pipefs / the host's tty in Linux): it takes no number from the tree
  const fake = new Inode(c.proc.kernel.fs, 0n, dev ? 0o020620 : 0o010600);
  if (dev) fake.rdev = (136 << 8);
  return copyToUser(c.proc.mm, buf, x ? statxBytes(fake) : statBytes(c, fake)) ? 0n : E('EFAULT');
}

function fstat(c: SyscallCtx, fd: bigint, buf: bigint): bigint {
  const e = fdEntry(c, fd);
  if (!e) return E('EBADF');
  if (!e.file.inode) return fstatPipe(c, buf, false, e.file.device !== null);
  return copyToUser(c.proc.mm, buf, statBytes(c, e.file.inode)) ? 0n : E('EFAULT');
}

export const STAT_SYSCALLS = {
  fstat: (c, [fd, buf]) => fstat(c, fd, buf),
  stat: (c, [p, buf]) => statAt(c, AT_FDCWD, p, buf, 0),
  lstat: (c, [p, buf]) => statAt(c, AT_FDCWD, p, buf, AT_SYMLINK_NOFOLLOW),
  newfstatat: (c, [dirfd, p, buf, flags]) => statAt(c, i32(dirfd), p, buf, i32(flags)),
  statx: (c, [dirfd, p, flags, , buf]) => statAt(c, i32(dirfd), p, buf, i32(flags), true),
} satisfies Partial<Record<SyscallName, SyscallHandler>>;
