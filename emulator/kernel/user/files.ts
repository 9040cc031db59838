/**
 * Open files of user processes (Linux's struct file and fd tables): a file
 * description holds the inode (or pipe end), the position and the status
 * flags and is shared by every descriptor that dup()s it and by the child
 * after fork(), as in Linux; the descriptor holds only FD_CLOEXEC.
 *
 * Pipes: a 64 KiB ring as Linux's default pipe size; a read of an empty
 * pipe with a writer left, or a write to a full one, blocks the task (the
 * system call restarts when the other end moves); a write with no reader
 * left is -EPIPE and SIGPIPE.
 *
 * The console: the first process's descriptors 0, 1 and 2 are the host's
 * stdin, stdout and stderr (as qemu-user passes them through), character
 * devices here; /dev/console reads stdin and writes stdout.
 */
import type { KTask } from '../task';
import { CharDevice, Inode } from '../fs/vfs';

export const O_ACCMODE = 3, O_RDONLY = 0, O_WRONLY = 1, O_RDWR = 2, O_CREAT = 0o100, O_EXCL = 0o200, O_NOCTTY = 0o400,
  O_TRUNC = 0o1000, O_APPEND = 0o2000, O_NONBLOCK = 0o4000, O_DIRECTORY = 0o200000, O_NOFOLLOW = 0o400000, O_CLOEXEC = 0o2000000;
export const PIPE_SIZE = 65536;

export class Pipe {
  private buf = new Uint8Array(PIPE_SIZE);
  private head = 0;
  len = 0;
  readers = 0;
  writers = 0;
  /** tasks waiting for the other end */
  readonly waiting = new Set<KTask>();

  /** `wake` makes a blocked task runnable (its system call runs again) */
  constructor(private readonly wake: (t: KTask) => void) {}

  /** The other end moved (data, space, a close): every waiter tries again. */
  wakeWaiters(): void {
    const ts = [...this.waiting];
    this.waiting.clear();
    for (const t of ts) this.wake(t);
  }

  read(max: number): Uint8Array {
    const n = Math.min(max, this.len);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.buf[(this.head + i) % PIPE_SIZE];
    this.head = (this.head + n) % PIPE_SIZE;
    this.len -= n;
    return out;
  }

  write(src: Uint8Array): number {
    const n = Math.min(src.length, PIPE_SIZE - this.len);
    for (let i = 0; i < n; i++) this.buf[(this.head + this.len + i) % PIPE_SIZE] = src[i];
    this.len += n;
    return n;
  }

  get space(): number { return PIPE_SIZE - this.len; }
}

export type FileKind = 'inode' | 'pipe-r' | 'pipe-w';

/** An open file description. */
export class OpenFile {
  refs = 0;
  pos = 0;
  /** getdents64: entries already returned */
  dirPos = 0;
  constructor(
    readonly kind: FileKind,
    public flags: number,
    readonly inode: Inode | null,
    readonly pipe: Pipe | null = null,
    /** a device not in the tree (the host's streams) */
    readonly device: CharDevice | null = null,
  ) {}

  get readable(): boolean { return this.kind === 'pipe-r' || (this.kind === 'inode' && (this.flags & O_ACCMODE) !== O_WRONLY); }
  get writable(): boolean { return this.kind === 'pipe-w' || (this.kind === 'inode' && (this.flags & O_ACCMODE) !== O_RDONLY); }
  /** the character device behind it, if any */
  get chr(): CharDevice | null { return this.device ?? this.inode?.device ?? null; }
}

export interface FdEntry { file: OpenFile; cloexec: boolean }

/** RLIMIT_NOFILE's usual soft limit */
export const MAX_FDS = 1024;

export class FdTable {
  readonly fds = new Map<number, FdEntry>();

  /** Install at the lowest free descriptor >= min; -EMFILE as null. */
  install(file: OpenFile, cloexec: boolean, min = 0): number | null {
    for (let fd = min; fd < MAX_FDS; fd++) {
      if (!this.fds.has(fd)) { this.set(fd, file, cloexec); return fd; }
    }
    return null;
  }

  set(fd: number, file: OpenFile, cloexec: boolean): void {
    const old = this.fds.get(fd);
    file.refs++;
    if (file.pipe) file.kind === 'pipe-r' ? file.pipe.readers++ : file.pipe.writers++;
    this.fds.set(fd, { file, cloexec });
    if (old) release(old.file);
  }

  get(fd: number): FdEntry | undefined { return this.fds.get(fd); }

  close(fd: number): boolean {
    const e = this.fds.get(fd);
    if (!e) return false;
    this.fds.delete(fd);
    release(e.file);
    return true;
  }

  /** fork: the same descriptions, each one more reference */
  clone(): FdTable {
    const t = new FdTable();
    for (const [fd, e] of this.fds) t.set(fd, e.file, e.cloexec);
    return t;
  }

  closeAll(): void { for (const fd of [...this.fds.keys()]) this.close(fd); }
  closeOnExec(): void { for (const [fd, e] of [...this.fds]) if (e.cloexec) this.close(fd); }
}

/** Drop one reference; the last one closes a pipe end (waking who waits on the other). */
function release(f: OpenFile): void {
  f.refs--;
  if (f.pipe) {
    if (f.kind === 'pipe-r') f.pipe.readers--; else f.pipe.writers--;
    f.pipe.wakeWaiters();
  }
}
