/**
 * The mount table: filesystems mounted on directories of the tree
 * (mount(2) / umount2(2)), and /proc/mounts listing them as Linux's
 * show_vfsmnt prints it ("DEVICE MOUNTPOINT FSTYPE OPTIONS 0 0").
 *
 * A filesystem type is a factory of its root directory: `proc`, `sysfs`,
 * `debugfs` and `tracefs` (registered by the kernel's subsystems that fill
 * them: procfs.ts, debugfs.ts, tracefs.ts) have one instance each, mounted
 * as often as asked (Linux's single superblock); every `tmpfs` mount is a
 * new empty tree. Mounting sets the mount point's `mounted` (the path walk
 * crosses into the mounted root, `..` from it goes back out); the root of
 * the machine's filesystem is listed first as Linux lists an initramfs
 * root, `rootfs / rootfs rw 0 0`.
 */
import { Errno } from '../abi';
import type { Kernel } from '../kernel';
import { Inode, Vfs } from './vfs';
import { pseudoDir } from './pseudo';

export const MS_RDONLY = 1, MS_NOSUID = 2, MS_NODEV = 4, MS_NOEXEC = 8, MS_REMOUNT = 32, MS_NOATIME = 1024,
  MS_BIND = 4096, MS_MOVE = 8192, MS_STRICTATIME = 1 << 24;
/** umount2 flags: MNT_FORCE, MNT_DETACH, MNT_EXPIRE, UMOUNT_NOFOLLOW */
const UMOUNT_FLAGS = 1 | 2 | 4 | 8;

export interface Mount {
  /** the device as mount(2) was given it ("none" for NULL) */
  source: string;
  fstype: string;
  flags: number;
  /** the directory it is mounted on */
  on: Inode;
  /** the mounted filesystem's root */
  root: Inode;
}

export type FsFactory = (fs: Vfs) => Inode;

export class MountTable {
  readonly mounts: Mount[] = [];
  private readonly types = new Map<string, { make: FsFactory; single: boolean; root?: Inode }>();

  constructor(readonly fs: Vfs) {
    this.registerType('tmpfs', fs => pseudoDir(fs, 0o1777), false);
  }

  /** A filesystem type (register_filesystem); `single`: one instance shared by every mount of it. */
  registerType(name: string, make: FsFactory, single = true): void {
    this.types.set(name, { make, single });
  }

  get typeNames(): string[] { return [...this.types.keys()]; }

  /** mount(2) on a directory already looked up: 0 or -errno. */
  mount(source: string, on: Inode, fstype: string, flags: number): number {
    if (!on.isDir) return -Errno.ENOTDIR;
    if (flags & MS_REMOUNT) {
      const m = this.mounts.find(x => x.root === on);
      if (!m) return -Errno.EINVAL;
      m.flags = flags & ~MS_REMOUNT;
      return 0;
    }
    if (flags & (MS_BIND | MS_MOVE)) return -Errno.EINVAL;
    const t = this.types.get(fstype);
    if (!t) return -Errno.ENODEV;
    const root = t.single ? (t.root ??= t.make(this.fs)) : t.make(this.fs);
    if (root === on) return -Errno.EBUSY;
    root.mountPoint = on;
    root.parent = on.parent;
    on.mounted = root;
    this.mounts.push({ source, fstype, flags, on, root });
    return 0;
  }

  /** umount2(2) of the directory a path named (the mounted root it led to): 0 or -errno. */
  umount(root: Inode, flags: number): number {
    if (flags & ~UMOUNT_FLAGS) return -Errno.EINVAL;
    const i = this.mounts.findIndex(m => m.root === root && m.on.mounted === root);
    if (i < 0) return -Errno.EINVAL;
    const [m] = this.mounts.splice(i, 1);
    m.on.mounted = undefined;
    // the same instance may still be mounted elsewhere
    const still = this.mounts.find(x => x.root === root);
    root.mountPoint = still?.on;
    root.parent = still ? still.on.parent : root;
    return 0;
  }

  /** Mount a filesystem on a path, making the directories as an init script's `mkdir -p` would. */
  mountAt(path: string, fstype: string, source = fstype, flags = 0): number {
    let dir = this.fs.root;
    for (const part of path.split('/').filter(p => p)) {
      while (dir.mounted) dir = dir.mounted;
      let next = dir.children!.get(part);
      if (!next) { next = pseudoDir(this.fs); this.fs.link(dir, part, next); }
      if (!next.isDir) return -Errno.ENOTDIR;
      dir = next;
    }
    while (dir.mounted) dir = dir.mounted;
    return this.mount(source, dir, fstype, flags);
  }

  /** /proc/mounts */
  show(): string {
    const lines = ['rootfs / rootfs rw 0 0\n'];
    for (const m of this.mounts) {
      lines.push(`${mangle(m.source)} ${mangle(this.fs.pathOf(m.on))} ${m.fstype} ${mountOptions(m.flags)} 0 0\n`);
    }
    return lines.join('');
  }
}

/** show_mnt_opts / show_vfsmnt: rw|ro, then nosuid, nodev, noexec, and the atime mode (relatime unless told otherwise) */
function mountOptions(flags: number): string {
  const o = [flags & MS_RDONLY ? 'ro' : 'rw'];
  if (flags & MS_NOSUID) o.push('nosuid');
  if (flags & MS_NODEV) o.push('nodev');
  if (flags & MS_NOEXEC) o.push('noexec');
  o.push(flags & MS_NOATIME ? 'noatime' : flags & MS_STRICTATIME ? '' : 'relatime');
  return o.filter(Boolean).join(',');
}

/** seq_escape's " \t\n\\" as octal escapes */
const mangle = (s: string): string => s.replace(/[ \t\n\\]/g, c => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/**
 * The table lives on the kernel object itself (under a symbol), so that it
 * is machine state: time travel's snapshots capture and put back the
 * mounts with the rest.
 */
const TABLE = Symbol('mount table');
type WithTable = { [TABLE]?: MountTable };

/** The kernel's mount table (made on first use). */
export function mountTable(k: Kernel): MountTable {
  return (k as unknown as WithTable)[TABLE] ??= new MountTable(k.fs);
}
