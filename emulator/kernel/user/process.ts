/**
 * User processes running unmodified static Linux ELF executables: each has
 * its own address space (PERM_U regions: segments, heap, mmap areas,
 * stack), the initial stack as Linux builds it, brk after the highest
 * segment, a descriptor table, a working directory, a parent and children.
 *
 *   fork   a new address space: private memory copied (what copy-on-write
 *          gives the program: both sides see their own pages), MAP_SHARED
 *          areas and the file pages of the text shared; the descriptor
 *          table cloned (shared descriptions); the child returns 0.
 *   execve the file's ELF mapped in a fresh address space (its read-only
 *          segments from the inode's page cache, shared by every process
 *          running it), registers cleared, close-on-exec descriptors closed,
 *          caught signals reset to their defaults.
 *   exit   descriptors closed, children given to init, the parent's wait4
 *          woken; the process stays a zombie until it is waited for.
 *
 * The first process (pid 1) is the machine's program: its end powers the
 * machine off with its exit status (128 + N when killed by signal N, as a
 * shell reports it).
 */
import { resolve as resolveHostPath } from 'node:path';
import { ElfImage, ImageError } from '../../elf/types';
import { parseElf } from '../../elf/elfFile';
import { Memory, PERM_R, PERM_U, PERM_W, PERM_X, Region } from '../../memory/memory';
import { VAddr, fromVAddr, mustVAddr } from '../../memory/address';
import type { Backing } from '../../memory/backing';
import { copyWrittenPages, guestBytes, guestCopy } from '../../memory/guestRam';
import type { Cpu, SyscallName } from '../../arch/types';
import { mapImage, PT_LOAD, PT_PHDR } from '../imageLoader';
import { Kernel, PAGE_SIZE, INIT_PID } from '../kernel';
import { KTask } from '../task';
import { MACHINE_RAM, MAX_AREA } from '../ram';
import { CharDevice, Inode } from '../fs/vfs';
import { addStandardNodes } from '../fs/populate';
import {
  AT_CLKTCK, AT_EGID, AT_ENTRY, AT_EUID, AT_FLAGS, AT_GID, AT_HWCAP, AT_PAGESZ, AT_PHDR, AT_PHENT, AT_PHNUM,
  AT_SECURE, AT_UID, AT_BASE, buildInitialStack,
} from './initialStack';
import { handleUserTrap, onUserSwitchIn } from './traps';
import { deliverSignal } from './procSyscalls';
import { FdTable, O_RDONLY, O_WRONLY, OpenFile } from './files';
import { SIGCHLD, SignalState } from './signals';

export interface UserIo {
  stdout(bytes: Uint8Array): void;
  stderr(bytes: Uint8Array): void;
  /** the program's standard input, all of it, asked for at the first read (default: empty) */
  stdin?(): Uint8Array;
  /** the host's standard streams are a terminal (TCGETS answers on the console) */
  tty?: boolean;
  /**
   * the streams go to the kernel's console log (user_init), which keeps its
   * records while time travel re-executes and only quiets its listeners:
   * writes are made then too
   */
  console?: boolean;
}

export interface UserProgramOptions {
  /** argv; argv[0] defaults to the image path */
  argv?: readonly string[];
  /** environment strings "K=V" (default: none, for reproducible runs) */
  env?: readonly string[];
  io: UserIo;
  /** CPU the process is bound to (default 0) */
  cpu?: number;
  /**
   * The executable's pages (its inode's page cache, a file Backing): its
   * read-only segments are mapped from them, shared with every process
   * running the file, and report (inode, offset). Default: private copies.
   */
  file?: Backing;
  /** the executable's inode in the machine's filesystem (/proc/self/exe) */
  exe?: Inode;
  /** its path as the program sees it (AT_EXECFN, /proc/self/exe); default the image path */
  execPath?: string;
  /** its working directory in the machine's filesystem (created when missing; default /) */
  cwd?: string;
}

/** Deterministic AT_RANDOM bytes (a real kernel would use get_random_bytes). */
export const AT_RANDOM_BYTES = Uint8Array.from({ length: 16 }, (_, i) => (i * 0x3b + 0x11) & 0xff);

/** AT_RANDOM for a machine seed (seed 0: AT_RANDOM_BYTES) */
function atRandom(seed: bigint): Uint8Array {
  if (seed === 0n) return AT_RANDOM_BYTES;
  let x = seed | 1n;
  return Uint8Array.from({ length: 16 }, () => { x ^= x >> 12n; x ^= (x << 25n) & 0xffffffffffffffffn; x ^= x >> 27n; return Number(((x * 0x2545f4914f6cdd1dn) >> 56n) & 0xffn); });
}

const alignUp = (v: number, a: number): number => Math.ceil(v / a) * a;

/**
 * Whether an area of `size` bytes can be had (Linux's __vm_enough_memory
 * for a single request, against the machine's RAM: ../ram.ts): `committed` for what Linux charges (VM_ACCOUNT:
 * private writable memory, and anonymous MAP_SHARED memory, which is shmem).
 */
export function enoughMemory(size: number, committed: boolean): boolean {
  if (!Number.isSafeInteger(size) || size > MAX_AREA) return false;
  return !committed || size <= MACHINE_RAM;
}
/** the stack mapped at exec: it grows on faults below it (growStack) */
const INITIAL_STACK = 128 * 1024;

/** The host's standard streams as character devices (descriptors 0, 1, 2 of the first process). */
export interface HostStreams { stdin: CharDevice; stdout: CharDevice; stderr: CharDevice }

/**
 * The host's stdin/stdout/stderr as character devices. What was read so far
 * is the device's own state (time travel puts it back); writes are not made
 * while `replay.quiet` (time travel re-executing what the host already got).
 */
export function hostStreams(io: UserIo, quietWhen: { readonly quiet: boolean } = { quiet: false }): HostStreams {
  const replay = io.console ? { quiet: false } : quietWhen;
  const stdin = {
    name: 'stdin', tty: io.tty,
    input: null as Uint8Array | null,
    at: 0,
    read(n: number): Uint8Array {
      stdin.input ??= io.stdin?.() ?? new Uint8Array(0);
      const out = stdin.input.slice(stdin.at, stdin.at + n);
      stdin.at += out.length;
      return out;
    },
    write: (b: Uint8Array) => { if (!replay.quiet) io.stdout(b); return b.length; },
  };
  return {
    stdin,
    stdout: { name: 'stdout', tty: io.tty, read: () => new Uint8Array(0), write: b => { if (!replay.quiet) io.stdout(b); return b.length; } },
    stderr: { name: 'stderr', tty: io.tty, read: () => new Uint8Array(0), write: b => { if (!replay.quiet) io.stderr(b); return b.length; } },
  };
}

/** What a program image gives a new address space: where to start, the stack pointer, the heap. */
interface LoadedProgram { mm: Memory; entry: bigint; sp: bigint; brkStart: VAddr; mmapTop: VAddr; stackBase: bigint; stackTop: bigint; args: ArgArea }

/** Where the argv strings lie on the initial stack (mm->arg_start, arg_end): /proc/<pid>/cmdline reads them there. */
export interface ArgArea { start: bigint; end: bigint }

export class UserProcess {
  /** current program break and its start */
  brkStart: VAddr;
  brk: VAddr;
  heap: Region | null = null;
  /** next mmap address (areas are handed out downwards from here) */
  mmapTop: VAddr;
  /** the argv strings on the stack (/proc/<pid>/cmdline) */
  args: ArgArea = { start: 0n, end: 0n };
  /** syscall numbers already reported as unimplemented */
  readonly reported = new Set<number>();
  /** the address set with set_tid_address */
  clearChildTid = 0n;
  /** getrandom's deterministic generator state */
  randomState: bigint;
  /** MAP_SHARED areas: fork shares them instead of copying */
  readonly shared = new Set<Region>();
  fds = new FdTable();
  cwd: Inode;
  exe: Inode | null = null;
  exePath: string;
  umask = 0o022;
  parent: UserProcess | null = null;
  readonly children = new Set<UserProcess>();
  /** wait status once the process has ended (a zombie until reaped) */
  waitStatus: number | null = null;
  /** tasks blocked in wait4 for this process's children */
  readonly waiters = new Set<KTask>();
  signals = new SignalState();
  /** rt_sigsuspend's caller mask, restored when a handler returns */
  suspendMask: bigint | null = null;
  /** the system call this process sleeps in (its pc is rewound to run it again) */
  restart: { pc: bigint; name: SyscallName } | null = null;
  /** vfork: the parent task sleeping until this child execs or ends */
  vforkParent: KTask | null = null;
  pgid = 0;
  sid = 0;
  /** kernel log lines already written for this process */
  readonly reportedText = new Set<string>();
  private trampoline: bigint | null = null;
  task!: KTask;

  constructor(readonly kernel: Kernel, public mm: Memory, public image: ElfImage, readonly io: UserIo,
    brkStart: VAddr, mmapTop: VAddr) {
    this.brkStart = this.brk = brkStart;
    this.mmapTop = mmapTop;
    // getrandom's stream: deterministic, from the machine's seed
    this.randomState = 0x9e3779b97f4a7c15n ^ kernel.randomSeed;
    this.cwd = kernel.fs.root;
    this.exePath = image.path;
  }

  get pid(): number { return this.task.pid; }
  get comm(): string { return this.task.comm; }

  /**
   * What /proc/PID/exe links to: the executable's absolute path in the
   * filesystem; a program file outside the tree (a host file run by
   * `kprobe-run exec`) shows its absolute host path, as Linux shows the
   * file's absolute path whatever path exec was given.
   */
  exeLink(): string {
    const exe = this.exe;
    if (!exe) return this.exePath;
    const p = this.kernel.fs.pathOf(exe);
    if (p !== '(deleted)') return p;
    return exe.hostPath !== undefined ? resolveHostPath(exe.hostPath.toString()) : this.exePath;
  }

  /** vfork: the child exec'd or ended, the parent runs again with the child's pid */
  releaseVforkParent(): void {
    const p = this.vforkParent;
    if (!p) return;
    this.vforkParent = null;
    this.kernel.sched.wake(p, { reg: this.kernel.arch.abi.syscall.ret, value: BigInt(this.pid) });
  }

  /**
   * The signal-return trampoline of this process (a page of the port's
   * rt_sigreturn code, mapped on first use: Linux's vDSO sigtramp), for
   * handlers registered without SA_RESTORER.
   */
  sigTrampoline(): bigint {
    if (this.trampoline !== null) return this.trampoline;
    const code = this.kernel.arch.signalFrames?.trampoline;
    if (!code) return 0n;
    const base = this.placeMapping(0, PAGE_SIZE, false);
    if (base === null) return 0n;
    this.mm.map(base, PAGE_SIZE, PERM_R | PERM_X | PERM_U, '[sigpage]', undefined, guestCopy(code, PAGE_SIZE));
    this.trampoline = fromVAddr(base);
    return this.trampoline;
  }

  /** brk(2): grow or shrink the heap; returns the (possibly unchanged) break. */
  setBrk(want: VAddr): VAddr {
    if (want < this.brkStart) return this.brk;
    const newEnd = alignUp(want, PAGE_SIZE);
    const curEnd = this.heap ? this.heap.end : this.brkStart;
    if (newEnd !== curEnd) {
      const size = newEnd - this.brkStart;
      if (size > 0 && !enoughMemory(size, true)) return this.brk;
      if (size > 0 && this.collides(this.brkStart, size, this.heap)) return this.brk;
      const backing = guestBytes(size);
      if (this.heap) {
        copyWrittenPages(backing.subarray(0, Math.min(size, this.heap.size)), this.heap.bytes.subarray(0, Math.min(size, this.heap.size)));
        this.mm.unmap(this.heap);
        this.heap = null;
      }
      if (size > 0) this.heap = this.mm.map(this.brkStart, size, PERM_R | PERM_W | PERM_U, '[heap]', undefined, backing);
    }
    this.brk = want;
    return this.brk;
  }

  collides(base: VAddr, size: number, except: Region | null): boolean {
    return this.mm.allRegions().some(r => r !== except && base < r.end && r.base < base + size);
  }

  /** Where a new mapping of `size` bytes goes: below the previous ones (or `addr` when fixed, replacing what is there). */
  placeMapping(addr: VAddr, size: number, fixed: boolean): VAddr | null {
    if (fixed) {
      this.unmapRange(addr, size);
      return this.collides(addr, size, null) ? null : addr;
    }
    let base = this.mmapTop - size;
    while (this.collides(base, size, null)) base -= PAGE_SIZE;
    this.mmapTop = base;
    return base;
  }

  /** Anonymous mmap: a fresh zeroed area below the previous ones (or at a fixed address). */
  mmapAnon(addr: VAddr, len: number, perms: number, fixed: boolean, shared = false): VAddr | null {
    const size = alignUp(len, PAGE_SIZE);
    if (!enoughMemory(size, shared || (perms & PERM_W) !== 0)) return null;
    const base = this.placeMapping(addr, size, fixed);
    if (base === null) return null;
    const r = this.mm.map(base, size, perms | PERM_U, '[mmap]');
    if (shared) this.shared.add(r);
    return base;
  }

  /**
   * munmap of [addr, addr+len): areas wholly inside go, areas partly inside
   * are cut (the rest kept at their addresses, same bytes and backing).
   */
  unmapRange(addr: VAddr, len: number): void {
    const end = addr + alignUp(len, PAGE_SIZE);
    for (const r of [...this.mm.allRegions()]) {
      if (r.end <= addr || r.base >= end || r.name === '[stack]') continue;
      const keep: [number, number][] = [];
      if (r.base < addr) keep.push([r.base, addr]);
      if (r.end > end) keep.push([end, r.end]);
      this.mm.unmap(r);
      const wasShared = this.shared.delete(r);
      if (r === this.heap) this.heap = null;
      for (const [lo, hi] of keep) {
        const piece = this.mm.mapBacking(lo, hi - lo, r.perms, r.name, r.backing, r.offset + (lo - r.base));
        if (wasShared) this.shared.add(piece);
      }
    }
  }

  /**
   * A fault at addr below the stack, within its limit (RLIMIT_STACK from
   * the top): the stack grows to cover it (with some room), as Linux's
   * expand_stack; false when addr is no stack address.
   */
  growStack(addr: number): boolean {
    const st = this.mm.allRegions().find(r => r.name === '[stack]');
    if (!st) return false;
    const limit = st.end - this.kernel.arch.kernel.user.stackSize;
    if (addr >= st.base || addr < limit) return false;
    // at least double, and 64 KiB below the fault
    const base = Math.max(limit, Math.min(Math.floor(addr / PAGE_SIZE) * PAGE_SIZE - 64 * 1024, st.end - 2 * st.size));
    if (this.collides(base, st.base - base, null)) return false;
    const bytes = guestBytes(st.end - base);
    bytes.set(st.bytes, st.base - base);
    this.mm.unmap(st);
    this.mm.map(base, st.end - base, st.perms, '[stack]', undefined, bytes);
    return true;
  }

  /** execve: the old address space (and its trampoline page) is gone */
  forgetTrampoline(): void { this.trampoline = null; }

  /** munmap(2) */
  munmap(addr: VAddr, len: number): void { this.unmapRange(addr, len); }

  /** mprotect(2) over whole and partial areas; false when part of the range is unmapped. */
  mprotect(addr: VAddr, len: number, perms: number): boolean {
    const end = addr + alignUp(len, PAGE_SIZE);
    // private memory made writable is committed now (Linux charges it at mprotect): more than the RAM is -ENOMEM
    let newlyCommitted = 0;
    for (let a = addr; a < end;) {
      const r = this.mm.regionAt(a);
      if (!r) return false;
      if ((perms & PERM_W) && !(r.perms & PERM_W) && !this.shared.has(r)) newlyCommitted += Math.min(r.end, end) - a;
      a = r.end;
    }
    if (!enoughMemory(newlyCommitted, true)) return false;
    for (const r of [...this.mm.allRegions()]) {
      if (r.end <= addr || r.base >= end) continue;
      const lo = Math.max(r.base, addr), hi = Math.min(r.end, end);
      // a private mapping of a file made writable gets its own copy of the pages (copy-on-write),
      // so that its writes never reach the page cache other processes and readers see
      const privatize = (perms & PERM_W) !== 0 && r.backing.identity.kind === 'file' && !this.shared.has(r);
      if (lo === r.base && hi === r.end && !privatize) { r.perms = perms | PERM_U; continue; }
      const wasShared = this.shared.delete(r);
      this.mm.unmap(r);
      const parts: [number, number, number][] = [];
      if (r.base < lo) parts.push([r.base, lo, r.perms]);
      parts.push([lo, hi, perms | PERM_U]);
      if (hi < r.end) parts.push([hi, r.end, r.perms]);
      for (const [a, b, p] of parts) {
        const piece = privatize && a === lo
          ? this.mm.map(a, b - a, p, r.name, undefined, r.bytes.slice(a - r.base, b - r.base))
          : this.mm.mapBacking(a, b - a, p, r.name, r.backing, r.offset + (a - r.base));
        // the copied pages are still the file's mapping (/proc/PID/maps)
        const origin = piece.backing === r.backing ? undefined : this.kernel.mapOrigins.get(r) ?? (r.backing.identity.kind === 'file' ? { backing: r.backing, offset: r.offset } : undefined);
        if (origin) this.kernel.mapOrigins.set(piece, { backing: origin.backing, offset: origin.offset + (a - r.base) });
        if (wasShared) this.shared.add(piece);
        if (r === this.heap && a === r.base) this.heap = piece;
      }
    }
    return true;
  }
}

/** Program header table address for AT_PHDR. */
function phdrAddress(image: ElfImage): bigint {
  const phdr = image.segments.find(s => s.type === PT_PHDR);
  if (phdr) return phdr.vaddr;
  const first = image.segments.find(s => s.type === PT_LOAD && s.offset === 0n && s.data.length >= 64);
  if (!first) return 0n;
  const dv = new DataView(first.data.buffer, first.data.byteOffset, first.data.byteLength);
  const phoff = image.elfClass === 64 ? dv.getBigUint64(0x20, true) : BigInt(dv.getUint32(0x1c, true));
  return first.vaddr + phoff;
}

/** An executable this kernel can run (static, its machine's arch, inside the user address space), or a clear error. */
export function checkExecutable(k: Kernel, image: ElfImage): void {
  if (image.type !== 2) {
    throw new ImageError(image.path, `not a static executable (e_type ${image.type}${image.type === 3 ? ', ET_DYN: PIE/shared objects are not supported' : ''})`);
  }
  if (!k.arch.elfMachines.includes(image.machine)) {
    throw new ImageError(image.path, `an ELF for ${image.archName}, and this machine is ${k.arch.name}`);
  }
  const userTop = k.arch.kernel.user.stackTop - BigInt(k.arch.kernel.user.stackSize);
  for (const seg of image.segments) {
    if (seg.type === PT_LOAD && seg.memsz > 0n && seg.vaddr + seg.memsz > userTop) {
      throw new ImageError(image.path, `PT_LOAD segment at 0x${seg.vaddr.toString(16)} is outside the user address space (a kernel image? use 'run')`);
    }
  }
}

/** A fresh address space with the image mapped, the stack built, brk and mmap bases. */
function loadProgram(k: Kernel, image: ElfImage, argv: readonly string[], env: readonly string[], execfn: string, file?: Backing): LoadedProgram {
  checkExecutable(k, image);
  const table = k.arch.kernel;
  const mm = new Memory('user');
  const loaded = mapImage(mm, image, true, file);
  const stackTop = mustVAddr(table.user.stackTop);
  const stackSize = table.user.stackSize;
  // the stack starts small and grows down on demand up to stackSize (RLIMIT_STACK), as Linux's does
  mm.map(stackTop - INITIAL_STACK, INITIAL_STACK, PERM_R | PERM_W | PERM_U, '[stack]');
  const ps = k.arch.abi.pointerSize;
  const stack = buildInitialStack(mm, stackTop, {
    argv, envp: env, execfn, platform: table.user.platform, random: atRandom(k.randomSeed),
    pointerSize: ps,
    auxv: [
      [AT_HWCAP, table.user.hwcap], [AT_PAGESZ, BigInt(PAGE_SIZE)], [AT_CLKTCK, 100n],
      [AT_PHDR, phdrAddress(image)], [AT_PHENT, ps === 8 ? 56n : 32n], [AT_PHNUM, BigInt(image.segments.length)],
      [AT_BASE, 0n], [AT_FLAGS, 0n], [AT_ENTRY, image.entry],
      [AT_UID, 0n], [AT_EUID, 0n], [AT_GID, 0n], [AT_EGID, 0n], [AT_SECURE, 0n],
    ],
  });
  return {
    mm, entry: image.entry, sp: fromVAddr(stack.sp),
    brkStart: alignUp(mustVAddr(loaded.high), PAGE_SIZE), mmapTop: stackTop - stackSize - 0x10000000,
    stackBase: fromVAddr(stackTop - stackSize), stackTop: fromVAddr(stackTop),
    // the strings are laid out argv[0] lowest, each with its NUL
    args: argv.length
      ? { start: stack.argvAddrs[0], end: stack.argvAddrs[argv.length - 1] + BigInt(new TextEncoder().encode(argv[argv.length - 1]).length + 1) }
      : { start: 0n, end: 0n },
  };
}

/** Registers as execve leaves them: all zero, then the entry point and stack. */
function startRegisters(k: Kernel, cpu: Cpu, entry: bigint, sp: bigint): void {
  k.arch.regs.forEach((r, i) => { if (i !== k.arch.abi.pcReg && r.group === 'general') cpu.setReg(i, 0n); });
  k.arch.initUser(cpu, entry, sp);
}

/** The first user process (pid 1 on a user-program machine): descriptors 0/1/2 on the host's streams. */
export function spawnUserProgram(k: Kernel, image: ElfImage, opts: UserProgramOptions, pid?: number): { task: KTask; proc: UserProcess } {
  const argv = opts.argv && opts.argv.length ? [...opts.argv] : [image.path];
  const execPath = opts.execPath ?? image.path;
  const p = loadProgram(k, image, argv, opts.env ?? [], execPath, opts.file);
  const proc = new UserProcess(k, p.mm, image, opts.io, p.brkStart, p.mmapTop);
  proc.exe = opts.exe ?? null;
  proc.exePath = execPath;
  proc.args = p.args;
  if (opts.cwd) proc.cwd = k.fs.mkdirp(opts.cwd);
  const streams = hostStreams(opts.io, k.log.replay);
  addStandardNodes(k.fs, streams.stdin, k.randomSeed);
  const consoleIn = new OpenFile('inode', O_RDONLY, null, null, streams.stdin);
  proc.fds.set(0, consoleIn, false);
  proc.fds.set(1, new OpenFile('inode', O_WRONLY, null, null, streams.stdout), false);
  proc.fds.set(2, new OpenFile('inode', O_WRONLY, null, null, streams.stderr), false);
  const comm = (argv[0].split('/').pop() ?? 'a.out');
  const task = k.createTaskFromContext(comm, opts.cpu ?? 0, true, p.mm,
    s => startRegisters(k, s, p.entry, p.sp),
    { base: p.stackBase, top: p.stackTop }, pid);
  proc.task = task;
  proc.pgid = proc.sid = task.pid;
  k.processes.set(task.pid, proc);
  for (const o of k.mmObservers) o.imageMapped?.(proc);
  k.userTrapHandler = handleUserTrap;
  k.userSignal = (p, sig) => deliverSignal(k, p, sig);
  k.sched.onSwitchIn = (cpu, t) => onUserSwitchIn(k, cpu, t);
  return { task, proc };
}

/** The CPU a new process runs on: the one with the fewest tasks (lowest index on a tie), deterministic. */
export function pickCpu(k: Kernel): number {
  let best = 0, load = Infinity;
  k.sched.rq.forEach((q, i) => {
    if (q.dead) return;
    const n = q.queue.length + (q.current ? 1 : 0);
    if (n < load) { load = n; best = i; }
  });
  return best;
}

/** fork(2) / vfork(2) / clone without CLONE_VM: a child process; returns it (the parent gets its pid). */
export function forkProcess(k: Kernel, parent: UserProcess, cpu: Cpu): UserProcess {
  const mm = new Memory('user');
  let heap: Region | null = null;
  const shared = new Set<Region>();
  const sp = Number(BigInt.asIntN(64, cpu.getReg(k.arch.abi.spReg)));
  for (const r of parent.mm.allRegions()) {
    const sharedFile = r.backing.identity.kind === 'file' && (r.perms & PERM_W) === 0;
    let copy: Region;
    if (sharedFile || parent.shared.has(r)) copy = mm.mapBacking(r.base, r.size, r.perms, r.name, r.backing, r.offset);
    else if (r.name === '[stack]' && sp > r.base && sp <= r.end) {
      // the live part of the stack: from a page below sp (the red zone and more) to the top; below it is dead
      const from = Math.max(r.base, Math.floor(sp / PAGE_SIZE) * PAGE_SIZE - PAGE_SIZE) - r.base;
      const bytes = guestBytes(r.size);
      k.forkCopiedBytes += copyWrittenPages(bytes, r.bytes, from);
      copy = mm.map(r.base, r.size, r.perms, r.name, undefined, bytes);
    } else {
      // private memory: the child gets the pages the parent wrote; the others stay zero pages on both sides
      const bytes = guestBytes(r.size);
      k.forkCopiedBytes += copyWrittenPages(bytes, r.bytes);
      copy = mm.map(r.base, r.size, r.perms, r.name, undefined, bytes);
    }
    if (parent.shared.has(r)) shared.add(copy);
    if (r === parent.heap) heap = copy;
  }
  const child = new UserProcess(k, mm, parent.image, parent.io, parent.brkStart, parent.mmapTop);
  child.brk = parent.brk;
  child.args = parent.args;
  child.heap = heap;
  for (const r of shared) child.shared.add(r);
  child.fds = parent.fds.clone();
  child.cwd = parent.cwd;
  child.exe = parent.exe;
  child.exePath = parent.exePath;
  child.umask = parent.umask;
  child.randomState = parent.randomState ^ 0x5deece66dn;
  child.signals = parent.signals.forFork();
  child.pgid = parent.pgid;
  child.sid = parent.sid;
  child.parent = parent;
  parent.children.add(child);
  const ctx = cpu.saveContext();
  const ret = k.arch.abi.syscall.ret;
  const t = parent.task;
  const task = k.createTaskFromContext(t.comm, pickCpu(k), true, mm, s => { s.restoreContext(ctx); s.setReg(ret, 0n); },
    { base: t.stackBase, top: t.stackTop });
  child.task = task;
  k.processes.set(task.pid, child);
  for (const o of k.mmObservers) o.forked?.(parent, child);
  return child;
}

/**
 * An address space nobody uses any more (exec replaced it, its process
 * ended): its mappings go (exit_mmap), so that the pages they showed -
 * a file's page cache, shared memory - stop counting it among their
 * windows (a file exec'd thousands of times would otherwise carry every
 * dead process's mapping).
 */
function releaseMm(mm: Memory): void {
  for (const r of [...mm.allRegions()]) mm.unmap(r);
}

/**
 * execve(2) of an inode in the filesystem, in place: the new image, a
 * fresh address space, the registers at the entry. Returns an errno name
 * with a message for the kernel log when the file cannot be run (the
 * process keeps running its old image then).
 */
export function execProcess(k: Kernel, proc: UserProcess, cpu: Cpu, inode: Inode, path: string,
  argv: readonly string[], env: readonly string[]): { errno: 'ENOEXEC' | 'EACCES'; why: string } | null {
  if (!inode.isReg) return { errno: 'EACCES', why: `${path}: not a regular file` };
  if ((inode.mode & 0o111) === 0) return { errno: 'EACCES', why: `${path}: not executable (mode ${(inode.mode & 0o7777).toString(8)})` };
  let image: ElfImage, p: LoadedProgram;
  try {
    image = parsedImage(inode, path);
    p = loadProgram(k, image, argv, env, path, inode.pages());
  } catch (e) {
    return { errno: 'ENOEXEC', why: e instanceof Error ? e.message : String(e) };
  }
  const oldMm = proc.mm;
  proc.mm = p.mm;
  proc.image = image;
  proc.brkStart = proc.brk = p.brkStart;
  proc.args = p.args;
  proc.heap = null;
  proc.mmapTop = p.mmapTop;
  proc.shared.clear();
  proc.exe = inode;
  proc.exePath = path;
  proc.fds.closeOnExec();
  proc.signals.onExec();
  proc.clearChildTid = 0n;
  proc.forgetTrampoline();
  const task = proc.task;
  task.mm = p.mm;
  task.comm = (path.split('/').pop() ?? path).slice(0, 15);
  cpu.mem = p.mm;
  startRegisters(k, cpu, p.entry, p.sp);
  for (const o of k.mmObservers) o.mmReleased?.(proc, oldMm);
  releaseMm(oldMm);
  for (const o of k.mmObservers) o.imageMapped?.(proc);
  return null;
}

/** ELF images parsed from inodes, kept while the file is unchanged (a shell execs the same binary again and again) */
const images = new WeakMap<Inode, { mtime: bigint; size: number; path: string; image: ElfImage }>();
export function parsedImage(inode: Inode, path: string): ElfImage {
  const c = images.get(inode);
  if (c && c.mtime === inode.mtimeNs && c.size === inode.size && c.path === path) return c.image;
  const image = parseElf(inode.data().slice(), path);
  images.set(inode, { mtime: inode.mtimeNs, size: inode.size, path, image });
  return image;
}

/** Linux's wait status of an exit code / a fatal signal. */
export const exitedStatus = (code: number): number => (code & 0xff) << 8;
export const signaledStatus = (sig: number): number => sig & 0x7f;

/**
 * The end of a process (exit_group, a fatal signal): descriptors closed,
 * children to init, the parent woken; the task ends with the status a shell
 * reports (the code, or 128 + signal).
 */
export function exitProcess(k: Kernel, proc: UserProcess, status: number): void {
  if (proc.waitStatus !== null) return;
  proc.waitStatus = status;
  for (const o of k.mmObservers) o.mmReleased?.(proc, proc.mm);
  releaseMm(proc.mm);
  proc.fds.closeAll();
  proc.releaseVforkParent();
  const init = k.processes.get(INIT_PID);
  for (const c of proc.children) {
    c.parent = init && init !== proc ? init : null;
    if (c.parent) c.parent.children.add(c);
  }
  proc.children.clear();
  if (proc.parent) {
    for (const w of [...proc.parent.waiters]) { proc.parent.waiters.delete(w); k.sched.wake(w); }
    // the parent learns of it by SIGCHLD (ignored unless it has a handler)
    k.userSignal?.(proc.parent, SIGCHLD);
  }
  const sig = status & 0x7f;
  k.endTask(proc.task, sig ? 128 + sig : (status >> 8) & 0xff);
}
