/**
 * System call implementations, by name (the number -> name mapping is per
 * architecture: x86_64's own table in its info part, asm-generic's in
 * arch/syscallNumbers.ts). A handler returns the value for the return register,
 * NO_RESULT when the task no longer runs this call (exit, execve), or
 * RESTART after putting the task to sleep on something (a pipe, a child):
 * the call runs again from the start when the task is woken, as Linux's
 * -ERESTARTSYS restarts it.
 *
 * The groups: memory.ts-like calls here; files in fileSyscalls.ts;
 * processes and signals in procSyscalls.ts.
 *
 * Deliberate simplifications (documented): nanosleep / clock_nanosleep
 * return at once (the virtual clock does not wait); getrandom is a
 * deterministic stream; uid/gid are 0; sigaltstack is accepted but handlers
 * run on the current stack.
 */
import { regIndex } from '../../arch/types';
import { PERM_R, PERM_W, PERM_X } from '../../memory/memory';
import { fromVAddr, toVAddr } from '../../memory/address';
import { guestBytes } from '../../memory/guestRam';
import { NO_RESULT } from '../hypercalls';
import { UserProcess, enoughMemory } from './process';
import { MACHINE_RAM } from '../ram';
import { E, SyscallCtx, SyscallHandler, SyscallResult, i32, int } from './results';
import type { SyscallName } from '../../arch/types';
import { copyFromUser, copyToUser, words } from './uaccess';
import { FILE_SYSCALLS } from './fileSyscalls';
import { NAMEI_SYSCALLS } from './nameiSyscalls';
import { STAT_SYSCALLS } from './statSyscalls';
import { MOUNT_SYSCALLS } from './mountSyscalls';
import { MODULE_SYSCALLS } from './moduleSyscalls';
import { PROC_SYSCALLS } from './procSyscalls';

export { RESTART } from './results';
export type { SyscallCtx, SyscallHandler, SyscallResult } from './results';

const MAP_SHARED = 0x01, MAP_PRIVATE = 0x02, MAP_FIXED = 0x10, MAP_ANONYMOUS = 0x20;
const ARCH_SET_GS = 0x1001, ARCH_SET_FS = 0x1002, ARCH_GET_FS = 0x1003, ARCH_GET_GS = 0x1004;
const RLIMIT_STACK = 3, RLIMIT_NOFILE = 7, RLIM_INFINITY = 0xffffffffffffffffn;

function setSegBase(c: SyscallCtx, name: string, v: bigint): bigint {
  let i: number;
  try { i = regIndex(c.proc.kernel.arch, name); } catch { return E('EINVAL'); }
  if (toVAddr(v) === null) return E('EPERM');
  c.cpu.setReg(i, v);
  return 0n;
}

function getSegBase(c: SyscallCtx, name: string, addr: bigint): bigint {
  let i: number;
  try { i = regIndex(c.proc.kernel.arch, name); } catch { return E('EINVAL'); }
  return copyToUser(c.proc.mm, addr, words([c.cpu.getReg(i)], 8)) ? 0n : E('EFAULT');
}

function utsField(s: string): Uint8Array {
  const b = new Uint8Array(65);
  b.set(new TextEncoder().encode(s).subarray(0, 64));
  return b;
}

/** xorshift64* stream kept per process: getrandom is deterministic so runs are reproducible */
function randomBytes(p: UserProcess, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = p.randomState;
  for (let i = 0; i < n; i++) {
    x ^= x >> 12n; x ^= (x << 25n) & 0xffffffffffffffffn; x ^= x >> 27n;
    out[i] = Number(((x * 0x2545f4914f6cdd1dn) >> 56n) & 0xffn);
  }
  p.randomState = x;
  return out;
}

/** nanosleep / clock_nanosleep: the task sleeps on the virtual clock (ticks of 1 ms, HZ = 1000) */
function sleep(c: SyscallCtx, req: bigint, absolute: boolean): SyscallResult {
  const b = copyFromUser(c.proc.mm, req, 16);
  if (!b) return E('EFAULT');
  const dv = new DataView(b.buffer, b.byteOffset, 16);
  const sec = dv.getBigInt64(0, true), nsec = dv.getBigInt64(8, true);
  if (sec < 0n || nsec < 0n || nsec >= 1_000_000_000n) return E('EINVAL');
  const ns = Number(sec * 1_000_000_000n + nsec);
  const now = c.proc.kernel.clock.nowNs(c.cpu.id);
  const at = absolute ? ns : now + ns;
  if (at <= now) return 0n;
  c.proc.kernel.sleepUntil(c.cpu.id, at, 0n);
  return NO_RESULT;
}

function prlimit(c: SyscallCtx, pid: bigint, res: bigint, old: bigint): bigint {
  if (pid !== 0n && int(pid) !== c.proc.pid) return E('ESRCH');
  if (old === 0n) return 0n;
  const r = int(res);
  const v = r === RLIMIT_NOFILE ? [1024n, 1024n] : r === RLIMIT_STACK ? [8n << 20n, RLIM_INFINITY] : [RLIM_INFINITY, RLIM_INFINITY];
  return copyToUser(c.proc.mm, old, words(v, 8)) ? 0n : E('EFAULT');
}

const protPerms = (prot: number): number => (prot & 1 ? PERM_R : 0) | (prot & 2 ? PERM_W : 0) | (prot & 4 ? PERM_X : 0);
const pageAligned = (a: number | null): a is number => a !== null && a % 4096 === 0;

const MEMORY_SYSCALLS = {
  brk: (c, [addr]) => {
    const a = toVAddr(addr);
    if (addr === 0n || a === null) return fromVAddr(c.proc.brk);
    return fromVAddr(c.proc.setBrk(a));
  },
  mmap: (c, [addr, len, prot, flags, fd, off]) => {
    const f = i32(flags);
    const u = BigInt.asUintN(64, len);
    if (u === 0n) return E('EINVAL');
    if (u > 1n << 36n) return E('ENOMEM');
    const n = Number(u);
    const perms = protPerms(i32(prot));
    // committed memory (private writable, shared anonymous) beyond the machine's RAM is -ENOMEM; so is a private
    // file mapping, whose pages are copied here (Linux shares them until written)
    const committed = (f & 3) === MAP_SHARED ? (f & MAP_ANONYMOUS) !== 0 : (perms & PERM_W) !== 0 || (f & MAP_ANONYMOUS) === 0;
    if (!enoughMemory(Math.ceil(n / 4096) * 4096, committed)) return E('ENOMEM');
    const a = toVAddr(addr);
    const fixed = (f & MAP_FIXED) !== 0;
    if (fixed && !pageAligned(a)) return E('EINVAL');
    const type = f & 3;
    if (type !== MAP_SHARED && type !== MAP_PRIVATE) return E('EINVAL');
    if (f & MAP_ANONYMOUS) {
      const base = c.proc.mmapAnon(a ?? 0, n, perms, fixed, type === MAP_SHARED);
      return base === null ? E('ENOMEM') : fromVAddr(base);
    }
    return mapFile(c, a ?? 0, n, perms, fixed, type === MAP_SHARED, i32(fd), BigInt.asUintN(64, off));
  },
  munmap: (c, [addr, len]) => {
    const a = toVAddr(addr);
    if (!pageAligned(a) || BigInt.asUintN(64, len) === 0n) return E('EINVAL');
    c.proc.munmap(a, Number(BigInt.asUintN(64, len) & 0xfffffffffn));
    return 0n;
  },
  mprotect: (c, [addr, len, prot]) => {
    const a = toVAddr(addr);
    if (!pageAligned(a)) return E('EINVAL');
    const n = Number(BigInt.asUintN(64, len) & 0xfffffffffn);
    if (n === 0) return 0n;
    return c.proc.mprotect(a, n, protPerms(i32(prot))) ? 0n : E('ENOMEM');
  },
  madvise: () => 0n,
  // shared file mappings are the page cache itself: nothing to write back; unmapped ranges are -ENOMEM
  msync: (c, [addr, len]) => {
    const a = toVAddr(addr);
    if (!pageAligned(a)) return E('EINVAL');
    const n = Number(BigInt.asUintN(64, len) & 0xfffffffffn);
    for (let x = a; x < a + n; x += 4096) if (!c.proc.mm.regionAt(x)) return E('ENOMEM');
    return 0n;
  },
  arch_prctl: (c, [code, addr]) => {
    switch (int(code)) {
      case ARCH_SET_FS: return setSegBase(c, 'fs_base', addr);
      case ARCH_SET_GS: return setSegBase(c, 'gs_base', addr);
      case ARCH_GET_FS: return getSegBase(c, 'fs_base', addr);
      case ARCH_GET_GS: return getSegBase(c, 'gs_base', addr);
      default: return E('EINVAL');
    }
  },
  set_tid_address: (c, [ptr]) => { c.proc.clearChildTid = ptr; return BigInt(c.task.pid); },
  set_robust_list: () => 0n,
  uname: (c, [buf]) => {
    const fields = ['Linux', 'kprobe-debug', '6.1.0-kprobe-debug', '#1 SMP', c.proc.kernel.arch.unameMachine, '(none)'];
    const b = new Uint8Array(65 * 6);
    fields.forEach((f, i) => b.set(utsField(f), i * 65));
    return copyToUser(c.proc.mm, buf, b) ? 0n : E('EFAULT');
  },
  clock_gettime: (c, [, ts]) => {
    const ns = c.proc.kernel.clock.now(c.cpu.id);
    return copyToUser(c.proc.mm, ts, words([ns / 1_000_000_000n, ns % 1_000_000_000n], 8)) ? 0n : E('EFAULT');
  },
  clock_getres: (c, [, ts]) => (ts === 0n || copyToUser(c.proc.mm, ts, words([0n, 1n], 8)) ? 0n : E('EFAULT')),
  gettimeofday: (c, [tv]) => {
    const ns = c.proc.kernel.clock.now(c.cpu.id);
    return tv === 0n || copyToUser(c.proc.mm, tv, words([ns / 1_000_000_000n, (ns % 1_000_000_000n) / 1000n], 8)) ? 0n : E('EFAULT');
  },
  time: (c, [ptr]) => {
    const sec = c.proc.kernel.clock.now(c.cpu.id) / 1_000_000_000n;
    return ptr === 0n || copyToUser(c.proc.mm, ptr, words([sec], 8)) ? sec : E('EFAULT');
  },
  getrandom: (c, [buf, len]) => {
    const n = Math.min(Number(BigInt.asUintN(64, len) & 0xffffffn), 1 << 20);
    return copyToUser(c.proc.mm, buf, randomBytes(c.proc, n)) ? BigInt(n) : E('EFAULT');
  },
  getuid: () => 0n,
  geteuid: () => 0n,
  getgid: () => 0n,
  getegid: () => 0n,
  getgroups: () => 0n,
  prlimit64: (c, [pid, res, , old]) => prlimit(c, pid, res, old),
  getrlimit: (c, [res, old]) => prlimit(c, 0n, res, old),
  sched_yield: c => {
    c.cpu.setReg(c.proc.kernel.arch.abi.syscall.ret, 0n);
    c.proc.kernel.sched.schedule(c.cpu.id);
    return NO_RESULT;
  },
  // restartable sequences are not provided (a kernel without CONFIG_RSEQ): the C library falls back
  rseq: () => E('ENOSYS'),
  prctl: (c, [option, arg2]) => {
    const PR_SET_NAME = 15, PR_GET_NAME = 16;
    if (int(option) === PR_SET_NAME) {
      const b = copyFromUser(c.proc.mm, arg2, 16);
      if (!b) return E('EFAULT');
      const end = b.indexOf(0);
      c.task.comm = new TextDecoder().decode(b.subarray(0, end < 0 ? 15 : Math.min(end, 15)));
      return 0n;
    }
    if (int(option) === PR_GET_NAME) {
      const b = new Uint8Array(16);
      b.set(new TextEncoder().encode(c.task.comm).subarray(0, 15));
      return copyToUser(c.proc.mm, arg2, b) ? 0n : E('EFAULT');
    }
    return E('EINVAL');
  },
  sched_getaffinity: (c, [pid, len, mask]) => {
    if (pid !== 0n && int(pid) !== c.proc.pid && !c.proc.kernel.processes.has(int(pid))) return E('ESRCH');
    const n = Math.min(Number(BigInt.asUintN(64, len) & 0xffffn), 128);
    if (n < 8) return E('EINVAL');
    const b = new Uint8Array(8);
    const cpus = c.proc.kernel.cpus.length;
    for (let k = 0; k < cpus; k++) b[k >> 3] |= 1 << (k & 7);
    return copyToUser(c.proc.mm, mask, b) ? 8n : E('EFAULT');
  },
  sysinfo: (c, [info]) => {
    const b = new Uint8Array(112);
    const dv = new DataView(b.buffer);
    dv.setBigInt64(0, c.proc.kernel.clock.now(c.cpu.id) / 1_000_000_000n, true); // uptime
    dv.setBigUint64(32, BigInt(MACHINE_RAM), true); // totalram
    dv.setBigUint64(40, BigInt(MACHINE_RAM / 2), true); // freeram
    dv.setUint16(80, c.proc.kernel.processes.size, true); // procs
    dv.setUint32(104, 1, true); // mem_unit
    return copyToUser(c.proc.mm, info, b) ? 0n : E('EFAULT');
  },
  times: (c, [buf]) => {
    const ticks = c.proc.kernel.clock.now(c.cpu.id) / 10_000_000n;
    if (buf !== 0n && !copyToUser(c.proc.mm, buf, words([BigInt(c.task.instructions) / 10_000_000n, 0n, 0n, 0n], 8))) return E('EFAULT');
    return ticks;
  },
  getrusage: (c, [, ru]) => (copyToUser(c.proc.mm, ru, new Uint8Array(144)) ? 0n : E('EFAULT')),
  nanosleep: (c, [req]) => sleep(c, req, false),
  clock_nanosleep: (c, [, flags, req]) => sleep(c, req, (i32(flags) & 1) !== 0),
  futex: (c, [uaddr, op, val]) => {
    const cmd = i32(op) & 0x7f;
    if (cmd === 1) return 0n; // FUTEX_WAKE: no other thread of this process exists
    if (cmd === 0) {
      const a = toVAddr(uaddr);
      if (a === null || a % 4 !== 0 || !c.proc.mm.isMapped(a, 4)) return E('EFAULT');
      // FUTEX_WAIT on a value that changed returns at once; an unchanged one waits for a waker that cannot come
      return c.proc.mm.read32(a) !== Number(BigInt.asUintN(32, val)) ? E('EAGAIN') : E('EDEADLK');
    }
    return E('ENOSYS');
  },
} satisfies Partial<Record<SyscallName, SyscallHandler>>;

/** mmap of an open file: MAP_SHARED maps the inode's page cache (shared by every mapping), MAP_PRIVATE a copy. */
function mapFile(c: SyscallCtx, addr: number, len: number, perms: number, fixed: boolean, shared: boolean, fd: number, off: bigint): bigint {
  const e = c.proc.fds.get(fd);
  if (!e) return E('EBADF');
  const f = e.file;
  const inode = f.inode;
  if (!inode) return E('ENODEV');
  if (inode.isChr) {
    // /dev/zero: anonymous memory
    if (inode.device?.name !== 'zero') return E('ENODEV');
    const base = c.proc.mmapAnon(addr, len, perms, fixed, shared);
    return base === null ? E('ENOMEM') : fromVAddr(base);
  }
  if (!inode.isReg) return E('EACCES');
  if (off % 4096n !== 0n) return E('EINVAL');
  if (!f.readable || (shared && (perms & PERM_W) && !f.writable)) return E('EACCES');
  const size = Math.ceil(len / 4096) * 4096;
  const base = c.proc.placeMapping(addr, size, fixed);
  if (base === null) return E('ENOMEM');
  const name = inode.fs.pathOf(inode);
  const o = Number(off);
  const pages = shared ? inode.pages() : null;
  if (pages && o + size <= pages.size) {
    const r = c.proc.mm.mapBacking(base, size, perms | 8, name, pages, o);
    c.proc.shared.add(r);
  } else {
    // private (or past the file's pages): the bytes copied; past the end of the file reads zero
    const bytes = guestBytes(size);
    inode.copyOut(o, bytes);
    const r = c.proc.mm.map(base, size, perms | 8, name, undefined, bytes);
    if (shared) c.proc.shared.add(r);
    // a private mapping stays the file's (vm_file): /proc/PID/maps names it, uprobes find a reference counter in it
    // (one too large to hold its pages, read in pieces, is not: it can hold no uprobe's counter either)
    else {
      const backing = inode.pagesIfHeld();
      if (backing) c.proc.kernel.mapOrigins.set(r, { backing, offset: o });
    }
    for (const ob of c.proc.kernel.mmObservers) ob.fileMapped?.(c.proc, r);
  }
  return fromVAddr(base);
}

export const SYSCALLS: Readonly<Record<SyscallName, SyscallHandler>> = { ...MEMORY_SYSCALLS, ...FILE_SYSCALLS, ...STAT_SYSCALLS, ...NAMEI_SYSCALLS, ...PROC_SYSCALLS, ...MOUNT_SYSCALLS, ...MODULE_SYSCALLS };
