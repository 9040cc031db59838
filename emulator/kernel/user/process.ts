/**
 * A user process running a static Linux ELF executable: its own address
 * space (PERM_U regions: segments, heap, mmap areas, stack), the initial
 * stack as Linux builds it, brk after the highest segment. Program output
 * goes to the UserIo sinks.
 */
import { ElfImage, ImageError } from '../../elf/types';
import { Memory, PERM_R, PERM_U, PERM_W, Region } from '../../memory/memory';
import { VAddr, fromVAddr, mustVAddr } from '../../memory/address';
import type { Backing } from '../../memory/backing';
import { mapImage, PT_LOAD, PT_PHDR } from '../imageLoader';
import { Kernel, PAGE_SIZE, INIT_PID } from '../kernel';
import { KTask } from '../task';
import {
  AT_CLKTCK, AT_EGID, AT_ENTRY, AT_EUID, AT_FLAGS, AT_GID, AT_HWCAP, AT_PAGESZ, AT_PHDR, AT_PHENT, AT_PHNUM,
  AT_SECURE, AT_UID, AT_BASE, buildInitialStack,
} from './initialStack';
import { handleUserTrap } from './traps';

export interface UserIo {
  stdout(bytes: Uint8Array): void;
  stderr(bytes: Uint8Array): void;
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
}

/** Deterministic AT_RANDOM bytes (a real kernel would use get_random_bytes). */
export const AT_RANDOM_BYTES = Uint8Array.from({ length: 16 }, (_, i) => (i * 0x3b + 0x11) & 0xff);

const alignUp = (v: number, a: number): number => Math.ceil(v / a) * a;

export class UserProcess {
  /** current program break and its start */
  brkStart: VAddr;
  brk: VAddr;
  private heap: Region | null = null;
  /** next mmap address (areas are handed out downwards from here) */
  mmapTop: VAddr;
  /** syscall numbers already reported as unimplemented */
  readonly reported = new Set<number>();
  /** the address set with set_tid_address */
  clearChildTid = 0n;
  /** getrandom's deterministic generator state */
  randomState = 0x9e3779b97f4a7c15n;

  constructor(readonly kernel: Kernel, readonly mm: Memory, readonly image: ElfImage, readonly io: UserIo,
    brkStart: VAddr, mmapTop: VAddr) {
    this.brkStart = this.brk = brkStart;
    this.mmapTop = mmapTop;
  }

  /** brk(2): grow or shrink the heap; returns the (possibly unchanged) break. */
  setBrk(want: VAddr): VAddr {
    if (want < this.brkStart) return this.brk;
    const newEnd = alignUp(want, PAGE_SIZE);
    const curEnd = this.heap ? this.heap.end : this.brkStart;
    if (newEnd !== curEnd) {
      const size = newEnd - this.brkStart;
      if (size > 0 && this.collides(this.brkStart, size, this.heap)) return this.brk;
      const backing = new Uint8Array(size);
      if (this.heap) {
        backing.set(this.heap.bytes.subarray(0, Math.min(size, this.heap.size)));
        this.mm.unmap(this.heap);
        this.heap = null;
      }
      if (size > 0) this.heap = this.mm.map(this.brkStart, size, PERM_R | PERM_W | PERM_U, '[heap]', undefined, backing);
    }
    this.brk = want;
    return this.brk;
  }

  private collides(base: VAddr, size: number, except: Region | null): boolean {
    return this.mm.allRegions().some(r => r !== except && base < r.end && r.base < base + size);
  }

  /** Anonymous mmap: a fresh zeroed area below the previous ones (or at a fixed address). */
  mmapAnon(addr: VAddr, len: number, perms: number, fixed: boolean): VAddr | null {
    const size = alignUp(len, PAGE_SIZE);
    let base: VAddr;
    if (fixed) {
      base = addr;
      for (const r of [...this.mm.allRegions()]) {
        if (base <= r.base && r.end <= base + size && r.name === '[mmap]') this.mm.unmap(r);
      }
      if (this.collides(base, size, null)) return null;
    } else {
      base = this.mmapTop - size;
      while (this.collides(base, size, null)) base -= PAGE_SIZE;
      this.mmapTop = base;
    }
    this.mm.map(base, size, perms | PERM_U, '[mmap]');
    return base;
  }

  /** munmap of an area exactly as mapped (partial unmaps are accepted and ignored). */
  munmap(addr: VAddr, len: number): void {
    const size = alignUp(len, PAGE_SIZE);
    for (const r of [...this.mm.allRegions()]) {
      if (r.name === '[mmap]' && addr <= r.base && r.end <= addr + size) this.mm.unmap(r);
    }
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

/** Create the process as task 1 on its CPU; its exit powers the machine off with its exit status. */
export function spawnUserProgram(k: Kernel, image: ElfImage, opts: UserProgramOptions): { task: KTask; proc: UserProcess } {
  if (image.type !== 2) {
    throw new ImageError(image.path, `not a static executable (e_type ${image.type}${image.type === 3 ? ', ET_DYN: PIE/shared objects are not supported' : ''})`);
  }
  const table = k.arch.kernel;
  const userTop = table.user.stackTop - BigInt(table.user.stackSize);
  for (const seg of image.segments) {
    if (seg.type === PT_LOAD && seg.memsz > 0n && seg.vaddr + seg.memsz > userTop) {
      throw new ImageError(image.path, `PT_LOAD segment at 0x${seg.vaddr.toString(16)} is outside the user address space (a kernel image? use 'run')`);
    }
  }
  const mm = new Memory('user');
  const loaded = mapImage(mm, image, true, opts.file);
  const stackTop = mustVAddr(table.user.stackTop);
  const stackSize = table.user.stackSize;
  mm.map(stackTop - stackSize, stackSize, PERM_R | PERM_W | PERM_U, '[stack]');
  const brkStart = alignUp(mustVAddr(loaded.high), PAGE_SIZE);
  const mmapTop = stackTop - stackSize - 0x10000000;
  const argv = opts.argv && opts.argv.length ? [...opts.argv] : [image.path];
  const ps = k.arch.abi.pointerSize;
  const phnum = image.segments.length;
  const stack = buildInitialStack(mm, stackTop, {
    argv, envp: opts.env ?? [], execfn: image.path, platform: table.user.platform, random: AT_RANDOM_BYTES,
    pointerSize: ps,
    auxv: [
      [AT_HWCAP, table.user.hwcap], [AT_PAGESZ, BigInt(PAGE_SIZE)], [AT_CLKTCK, 100n],
      [AT_PHDR, phdrAddress(image)], [AT_PHENT, ps === 8 ? 56n : 32n], [AT_PHNUM, BigInt(phnum)],
      [AT_BASE, 0n], [AT_FLAGS, 0n], [AT_ENTRY, image.entry],
      [AT_UID, 0n], [AT_EUID, 0n], [AT_GID, 0n], [AT_EGID, 0n], [AT_SECURE, 0n],
    ],
  });
  const proc = new UserProcess(k, mm, image, opts.io, brkStart, mmapTop);
  const comm = (argv[0].split('/').pop() ?? 'a.out');
  const task = k.createTaskFromContext(comm, opts.cpu ?? 0, true, mm,
    s => k.arch.initUser(s, image.entry, fromVAddr(stack.sp)),
    { base: fromVAddr(stackTop - stackSize), top: fromVAddr(stackTop) }, INIT_PID);
  k.processes.set(task.pid, proc);
  k.userTrapHandler = handleUserTrap;
  return { task, proc };
}
