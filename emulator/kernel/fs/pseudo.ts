/**
 * Pseudo-files of the kernel's own filesystems (procfs, sysfs, debugfs,
 * tracefs): a file's contents are made from live state when it is opened,
 * as Linux's seq_file makes them (a reader sees one consistent snapshot,
 * read in as many pieces as it likes), and each write(2) goes to the file's
 * handler, which answers with the bytes taken or an errno, as a
 * file_operations.write does. Their size is 0 in stat, as in Linux.
 */
import { Errno } from '../abi';
import { CharDevice, Inode, S_IFDIR, S_IFLNK, S_IFREG, Vfs } from './vfs';

export interface PseudoFile {
  /** the file's text, made when it is opened */
  show?(): string;
  /** one write(2) of the open file: bytes taken, or -errno */
  write?(text: string, opts: { append: boolean }): number;
  /** open(O_TRUNC) for writing: what `>` does (kprobe_events: clear every event) */
  truncate?(): number | void;
  /**
   * A consuming stream instead of a snapshot (trace_pipe): each read takes up
   * to `len` bytes, null while there is nothing; `wait` asks to be woken when
   * there is (a blocking read sleeps meanwhile).
   */
  stream?: { read(len: number): Uint8Array | null; wait(wake: () => void): void };
}

/** A pseudo-file inode (mode 0444 when it has no write handler, 0644 when it has one and shows, 0200 for write-only). */
export function pseudoInode(fs: Vfs, file: PseudoFile, mode?: number): Inode {
  const m = mode ?? (file.write ? (file.show ? 0o644 : 0o200) : 0o444);
  const i = fs.newInode(S_IFREG | m);
  i.pseudo = file;
  return i;
}

/** An empty directory of a pseudo filesystem (not linked anywhere yet). */
export function pseudoDir(fs: Vfs, mode = 0o755): Inode {
  const d = fs.newInode(S_IFDIR | mode);
  d.nlink = 2;
  return d;
}

/** Build a tree of pseudo-files under `dir`: { 'kprobes/list': file, ... }; directories as needed. */
export function addPseudoFiles(fs: Vfs, dir: Inode, files: Readonly<Record<string, PseudoFile | Inode>>): void {
  for (const [path, f] of Object.entries(files)) {
    const parts = path.split('/');
    let d = dir;
    for (const p of parts.slice(0, -1)) {
      let next = d.children!.get(p);
      if (!next) { next = pseudoDir(fs); fs.link(d, p, next); }
      d = next;
    }
    fs.link(d, parts[parts.length - 1], f instanceof Inode ? f : pseudoInode(fs, f));
  }
}

/** A symlink inode of a pseudo filesystem (not linked anywhere yet). */
export function pseudoLink(fs: Vfs, target: string): Inode {
  const l = fs.newInode(S_IFLNK | 0o777);
  l.target = target;
  l.size = new TextEncoder().encode(target).length;
  return l;
}

const O_ACCMODE = 3, O_RDONLY = 0, O_TRUNC = 0o1000, O_APPEND = 0o2000;

/**
 * open(2) of a pseudo-file: the per-open file (its snapshot and position)
 * as a character device of that open file description, or -errno.
 */
export function openPseudo(file: PseudoFile, flags: number): CharDevice | number {
  const acc = flags & O_ACCMODE;
  if (acc !== O_RDONLY && !file.write) return -Errno.EACCES;
  if (acc === O_RDONLY && !file.show && !file.stream) return -Errno.EACCES;
  const stream = file.stream;
  if (stream && acc === O_RDONLY) {
    return {
      name: 'pseudo-stream',
      read: (len: number) => stream.read(len) ?? -Errno.EAGAIN,
      write: () => -Errno.EINVAL,
      waitReadable: wake => stream.wait(wake),
    };
  }
  if ((flags & O_TRUNC) && acc !== O_RDONLY && file.truncate) {
    const r = file.truncate();
    if (typeof r === 'number' && r < 0) return r;
  }
  let text: Uint8Array | null = null;
  let pos = 0;
  const append = (flags & O_APPEND) !== 0;
  return {
    name: 'pseudo',
    read(len: number): Uint8Array | number {
      text ??= new TextEncoder().encode(file.show?.() ?? '');
      const out = text.slice(pos, pos + len);
      pos += out.length;
      return out;
    },
    write(bytes: Uint8Array): number {
      if (!file.write) return -Errno.EINVAL;
      return file.write(new TextDecoder().decode(bytes), { append });
    },
  };
}
