/**
 * The emulated kernel's filesystem (the files user programs run from and work
 * on): one in-memory tree of inodes with real inode numbers — directories,
 * regular files, symlinks, character devices — and a page cache: a regular
 * file's pages are one Backing per inode (emulator/memory/backing.ts), so
 * every process that maps the file sees the same page frames, and a byte of a
 * mapping is identified by (inode, file offset), which is what uprobes patch.
 *
 * Populated from a host directory (lazily: a file's bytes are read from the
 * host the first time they are needed) and/or a cpio `newc` initramfs
 * (emulator/kernel/fs/cpio.ts). Writes by programs change only this tree:
 * the host is never written.
 *
 * Path walk as Linux's namei: components one by one, `.` and `..`,
 * symlinks followed (40 at most: ELOOP) except the last when asked not to,
 * ENOENT / ENOTDIR / EEXIST... as errno numbers (emulator/kernel/abi.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { Backing, PAGE_SIZE } from '../../memory/backing';
import { copyWrittenPages, guestBytes } from '../../memory/guestRam';
import { Errno, ErrnoName } from '../abi';
import { MACHINE_RAM } from '../ram';
import type { PseudoFile } from './pseudo';

export const S_IFMT = 0o170000, S_IFREG = 0o100000, S_IFDIR = 0o040000, S_IFLNK = 0o120000, S_IFCHR = 0o020000, S_IFIFO = 0o010000;
/** Linux's MAXSYMLINKS */
const MAX_SYMLINKS = 40;

/**
 * A file operation the machine cannot do for this file: the system call
 * returns -errno (the message, naming the file, goes to the kernel log).
 */
export class FsErrno extends Error {
  constructor(readonly errno: ErrnoName, message: string) { super(message); }
}

/** The most bytes a file's pages can hold in memory (the machine's RAM, see ../ram.ts). */
export const MAX_FILE_PAGES = MACHINE_RAM;
/** The most bytes one read of a host file too large to hold returns (a short read, as a regular file may give). */
const HOST_READ_PIECE = 16 << 20;

/** Bytes [pos, pos+len) of a host file, read in place (its size may have changed: what is there). */
function readHost(path: string | Buffer, pos: number, len: number, into?: Uint8Array): Uint8Array {
  const out = into ?? new Uint8Array(len);
  let fd: number;
  try { fd = openSync(path, 'r'); } catch (e) {
    throw new FsErrno('EIO', `${path.toString()}: the host file cannot be read (${e instanceof Error ? e.message : String(e)})`);
  }
  try {
    let got = 0;
    while (got < len) {
      const n = readSync(fd, out, got, Math.min(len - got, HOST_READ_PIECE), pos + got);
      if (n === 0) break;
      got += n;
    }
    // a file that shrank since: what is there (the rest of `into` stays zero)
    return into || got === out.length ? out : out.subarray(0, got);
  } finally { closeSync(fd); }
}

/** A character device: what reads and writes of its open files do. */
export interface CharDevice {
  readonly name: string;
  /** bytes read (empty: end of file), or an errno (negative) */
  read(len: number): Uint8Array | number;
  /** bytes written, or an errno (negative) */
  write(bytes: Uint8Array): number;
  /** a terminal: TCGETS and TIOCGWINSZ answer */
  readonly tty?: boolean;
  /**
   * A device whose read returns -EAGAIN while it has nothing yet (trace_pipe):
   * `wake` is called once data comes; a blocking read sleeps until then.
   */
  waitReadable?(wake: () => void): void;
}

export class Inode {
  nlink = 1;
  uid = 0;
  gid = 0;
  /** modification / status-change time, ns of the virtual clock */
  mtimeNs = 0n;
  ctimeNs = 0n;
  /** regular file: its bytes [0, size); `data` may be longer (capacity) */
  private bytes: Uint8Array | null = null;
  size = 0;
  /** regular file from the host, read on first use (a Buffer when its name is not UTF-8) */
  hostPath?: string | Buffer;
  /** directory entries (not `.` / `..`) */
  readonly children?: Map<string, Inode>;
  /** directory: its parent (the root's is itself) */
  parent?: Inode;
  /** symlink target */
  target?: string;
  /** character device */
  device?: CharDevice;
  rdev = 0;
  /** the page cache of a regular file (one Backing, shared by every mapping) */
  private cache: Backing | null = null;
  /** a pseudo-file (procfs, debugfs, tracefs): its contents made at open, its writes to a handler (fs/pseudo.ts) */
  pseudo?: PseudoFile;
  /** a directory whose entries follow live state (/proc's pids): brings `children` up to date before use */
  refresh?: () => void;
  /** a mount point: the root of the filesystem mounted on it (fs/mounts.ts) */
  mounted?: Inode;
  /** a mounted filesystem's root: the directory it is mounted on */
  mountPoint?: Inode;

  constructor(readonly fs: Vfs, readonly ino: bigint, public mode: number) {
    if ((mode & S_IFMT) === S_IFDIR) this.children = new Map();
  }

  get isDir(): boolean { return (this.mode & S_IFMT) === S_IFDIR; }
  get isReg(): boolean { return (this.mode & S_IFMT) === S_IFREG; }
  get isLink(): boolean { return (this.mode & S_IFMT) === S_IFLNK; }
  get isChr(): boolean { return (this.mode & S_IFMT) === S_IFCHR; }

  /** A regular file's bytes [0, size) (read from the host the first time). */
  data(): Uint8Array {
    this.load();
    return this.bytes!.subarray(0, this.size);
  }

  /** The file's bytes in memory, `capacity` bytes of pages at least: a host file's first `keep` bytes (default all) read in. */
  private load(keep = Infinity, capacity = 0): void {
    if (this.bytes) return;
    if (this.hostPath !== undefined) {
      const n = Math.min(keep, this.size);
      if (Math.max(n, capacity) > MAX_FILE_PAGES) throw this.tooLarge('ENOMEM', n);
      this.bytes = guestBytes(roundPage(Math.max(n, capacity)));
      readHost(this.hostPath, 0, n, this.bytes.subarray(0, n));
      this.size = n;
    } else {
      this.bytes = guestBytes(roundPage(Math.max(this.size, capacity)));
    }
  }

  private tooLarge(errno: ErrnoName, size: number): FsErrno {
    const what = errno === 'EFBIG' ? 'would grow to' : 'has';
    return new FsErrno(errno, `${this.fs.pathOf(this)}: ${what} ${size} bytes, more than the ${MAX_FILE_PAGES >> 20} MiB of the machine's memory can hold as pages`);
  }

  /** A host file too large to hold in memory: read in pieces from the host, never loaded whole. */
  private get inPieces(): boolean { return !this.bytes && this.hostPath !== undefined && this.size > MAX_FILE_PAGES; }

  /** Read up to len bytes at pos (a host file too large to hold in memory: at most 16 MiB, from the host). */
  read(pos: number, len: number): Uint8Array {
    if (this.inPieces) {
      if (pos >= this.size) return new Uint8Array(0);
      return readHost(this.hostPath!, pos, Math.min(len, this.size - pos, HOST_READ_PIECE));
    }
    const d = this.data();
    if (pos >= d.length) return new Uint8Array(0);
    return d.slice(pos, Math.min(d.length, pos + len));
  }

  /** Copy the file's bytes from pos into `into` (those there are; the rest of `into` is left as it is). */
  copyOut(pos: number, into: Uint8Array): void {
    if (pos >= this.size) return;
    if (this.inPieces) { readHost(this.hostPath!, pos, Math.min(into.length, this.size - pos), into); return; }
    into.set(this.data().subarray(pos, pos + into.length));
  }

  /** Write at pos (growing the file); the page cache sees it while the file keeps its capacity. */
  write(pos: number, src: Uint8Array, nowNs: bigint): number {
    const end = pos + src.length;
    if (end > MAX_FILE_PAGES) throw this.tooLarge('EFBIG', end);
    this.load();
    if (end > this.bytes!.length) {
      // a bigger page frame set: mappings made before keep the old pages (documented limit)
      const grown = guestBytes(roundPage(Math.min(MAX_FILE_PAGES, Math.max(end, this.bytes!.length * 2))));
      copyWrittenPages(grown.subarray(0, this.bytes!.length), this.bytes!);
      this.bytes = grown;
      this.cache = null;
    }
    // past the end the pages are zero while no mapping of them exists (one could have stored past the end):
    // the zero pages of what is written then stay untouched
    if (pos >= this.size && pos % PAGE_SIZE === 0 && !this.cache) copyWrittenPages(this.bytes!.subarray(pos, end), src);
    else this.bytes!.set(src, pos);
    if (end > this.size) this.size = end;
    this.mtimeNs = this.ctimeNs = nowNs;
    return src.length;
  }

  truncate(len: number, nowNs: bigint): void {
    if (len > MAX_FILE_PAGES) throw this.tooLarge('EFBIG', len);
    this.load(len, len);
    if (len > this.bytes!.length) {
      const grown = guestBytes(roundPage(len));
      copyWrittenPages(grown.subarray(0, this.bytes!.length), this.bytes!);
      this.bytes = grown;
      this.cache = null;
    }
    if (len < this.size) this.bytes!.fill(0, len, this.size);
    this.size = len;
    this.mtimeNs = this.ctimeNs = nowNs;
  }

  /** The file's pages: one Backing for every mapping (identity: inode, path). */
  /** The file's pages, or undefined when the file is too large to hold them (a host file read in pieces). */
  pagesIfHeld(): Backing | undefined {
    return this.bytes || this.hostPath === undefined || this.size <= MAX_FILE_PAGES ? this.pages() : undefined;
  }

  pages(): Backing {
    this.load();
    if (!this.cache) this.cache = Backing.file(this.ino, this.fs.pathOf(this), this.bytes!, 0n);
    return this.cache;
  }
}

const roundPage = (n: number): number => Math.max(PAGE_SIZE, Math.ceil(n / PAGE_SIZE) * PAGE_SIZE);

export type Lookup = { ok: true; inode: Inode } | { ok: false; errno: number };
const fail = (e: keyof typeof Errno): { ok: false; errno: number } => ({ ok: false, errno: Errno[e] });

export class Vfs {
  readonly root: Inode;
  private nextIno = 2n;
  /** the virtual clock for timestamps */
  now: () => bigint = () => 0n;

  constructor() {
    this.root = new Inode(this, this.nextIno++, S_IFDIR | 0o755);
    this.root.parent = this.root;
    this.root.nlink = 2;
  }

  newInode(mode: number): Inode {
    const i = new Inode(this, this.nextIno++, mode);
    i.mtimeNs = i.ctimeNs = this.now();
    return i;
  }

  /** Absolute path of an inode (its first name; a file unlinked everywhere shows `(deleted)`). */
  pathOf(target: Inode): string {
    if (target === this.root) return '/';
    if (target.mountPoint) return this.pathOf(target.mountPoint);
    const parts: string[] = [];
    const seen = new Set<Inode>();
    const find = (dir: Inode, prefix: string[]): boolean => {
      if (seen.has(dir)) return false;
      seen.add(dir);
      for (const [name, c] of dir.children ?? []) {
        if (c === target) { parts.push(...prefix, name); return true; }
      }
      for (const [name, c] of dir.children ?? []) if (c.isDir && find(c.mounted ?? c, [...prefix, name])) return true;
      return false;
    };
    if (target.isDir && target.parent && target.parent !== target) {
      for (const [name, c] of target.parent.children ?? []) if (c === target) return (target.parent === this.root ? '' : this.pathOf(target.parent)) + '/' + name;
    }
    return find(this.root, []) ? '/' + parts.join('/') : '(deleted)';
  }

  /**
   * Walk a path from `cwd` (absolute paths from the root). `follow`: follow
   * a symlink in the last component. `self` answers /proc/self/exe.
   */
  lookup(path: string, cwd: Inode, follow = true, depth = 0): Lookup {
    if (path === '') return fail('ENOENT');
    let dir = path.startsWith('/') ? this.root : cwd;
    const parts = path.split('/').filter(p => p !== '');
    if (parts.length === 0) return { ok: true, inode: dir };
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i];
      const last = i === parts.length - 1;
      if (!dir.isDir) return fail('ENOTDIR');
      dir.refresh?.();
      let next: Inode | undefined;
      if (name === '.') next = dir;
      else if (name === '..') next = (dir.mountPoint ?? dir).parent ?? dir;
      else next = dir.children!.get(name);
      if (!next) return fail('ENOENT');
      while (next.mounted && name !== '..') next = next.mounted;
      if (next.isLink && (!last || follow)) {
        if (depth >= MAX_SYMLINKS) return fail('ELOOP');
        const r = this.lookup(next.target!, dir, true, depth + 1);
        if (!r.ok) return r;
        next = r.inode;
      }
      // a trailing slash asks for a directory
      if (last && path.endsWith('/') && !next.isDir) return fail('ENOTDIR');
      dir = next;
    }
    return { ok: true, inode: dir };
  }

  /** The directory a new name goes in, and the name; EEXIST checks are the caller's. */
  parentOf(path: string, cwd: Inode): { ok: true; dir: Inode; name: string } | { ok: false; errno: number } {
    const trimmed = path.replace(/\/+$/, '');
    if (trimmed === '' ) return path.startsWith('/') ? fail('EEXIST') : fail('ENOENT');
    const slash = trimmed.lastIndexOf('/');
    const dirPath = slash < 0 ? '.' : slash === 0 ? '/' : trimmed.slice(0, slash);
    const name = trimmed.slice(slash + 1);
    const d = this.lookup(dirPath, cwd);
    if (!d.ok) return d;
    if (!d.inode.isDir) return fail('ENOTDIR');
    if (name.length > 255) return fail('ENAMETOOLONG');
    return { ok: true, dir: d.inode, name };
  }

  /** Link an inode under dir/name (a new directory gets its parent). */
  link(dir: Inode, name: string, inode: Inode): void {
    dir.children!.set(name, inode);
    if (inode.isDir) { inode.parent = dir; dir.nlink++; } else if (dir.children) inode.nlink = Math.max(inode.nlink, 1);
    dir.mtimeNs = dir.ctimeNs = this.now();
  }

  /** The directory at `path`, made with its missing parents (a symlink to a directory is followed); ENOTDIR when a component is something else. */
  mkdirp(path: string, mode = 0o755): Inode {
    let dir = this.root;
    for (const part of path.split('/').filter(p => p)) {
      let next = dir.children!.get(part);
      if (!next) { next = this.newInode(S_IFDIR | mode); next.nlink = 2; this.link(dir, part, next); }
      if (next.isLink) {
        const r = this.lookup(part, dir);
        if (r.ok) next = r.inode;
      }
      if (!next.isDir) throw new FsErrno('ENOTDIR', `${path}: ${part} is not a directory`);
      dir = next;
    }
    return dir;
  }

  /** Create (or replace) a regular file with these bytes; returns it. */
  writeFile(path: string, bytes: Uint8Array | { host: string | Buffer; size: number }, mode = 0o644): Inode {
    const slash = path.lastIndexOf('/');
    const dir = this.mkdirp(path.slice(0, Math.max(0, slash)));
    const name = path.slice(slash + 1);
    const f = this.newInode(S_IFREG | (mode & 0o7777));
    if (bytes instanceof Uint8Array) f.write(0, bytes, this.now());
    else { f.hostPath = bytes.host; f.size = bytes.size; }
    this.link(dir, name, f);
    return f;
  }

  symlink(path: string, target: string): Inode {
    const slash = path.lastIndexOf('/');
    const dir = this.mkdirp(path.slice(0, Math.max(0, slash)));
    const l = this.newInode(S_IFLNK | 0o777);
    l.target = target;
    l.size = new TextEncoder().encode(target).length;
    this.link(dir, path.slice(slash + 1), l);
    return l;
  }

  device(path: string, dev: CharDevice, major: number, minor: number, mode = 0o666): Inode {
    const slash = path.lastIndexOf('/');
    const dir = this.mkdirp(path.slice(0, Math.max(0, slash)));
    const d = this.newInode(S_IFCHR | mode);
    d.device = dev;
    d.rdev = (major << 8) | minor;
    this.link(dir, path.slice(slash + 1), d);
    return d;
  }
}
