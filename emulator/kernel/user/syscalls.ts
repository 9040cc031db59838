/**
 * System call implementations, by name (the number -> name mapping is per
 * architecture in syscallNumbers.ts). A handler returns the value for the
 * return register, or NO_RESULT when the task no longer runs (exit).
 *
 * Deliberate simplifications (documented): mprotect, rt_sigaction,
 * rt_sigprocmask and set_robust_list succeed without effect (signals are
 * never delivered); nanosleep returns at once; getrandom returns a
 * deterministic byte stream; uid/gid are 0; stdin is empty.
 */
import { Cpu, regIndex } from '../../arch/types';
import { PERM_R, PERM_W, PERM_X } from '../../memory/memory';
import { fromVAddr, toVAddr } from '../../memory/address';
import { Errno } from '../abi';
import { NO_RESULT } from '../hypercalls';
import { KTask } from '../task';
import { UserProcess } from './process';
import type { SyscallName } from '../../arch/types';
import { copyFromUser, copyToUser, words } from './uaccess';

export type SyscallResult = bigint | typeof NO_RESULT;
export interface SyscallCtx { proc: UserProcess; cpu: Cpu; task: KTask }
export type SyscallHandler = (c: SyscallCtx, a: readonly bigint[]) => SyscallResult;

const E = (name: keyof typeof Errno): bigint => BigInt(-Errno[name]);
const int = (v: bigint): number => Number(BigInt.asIntN(64, v));
/** sizes are clamped: a process never writes more than this in one call */
const IO_MAX = 1 << 24;

const MAP_FIXED = 0x10, MAP_ANONYMOUS = 0x20;
const ARCH_SET_GS = 0x1001, ARCH_SET_FS = 0x1002, ARCH_GET_FS = 0x1003, ARCH_GET_GS = 0x1004;

function sink(c: SyscallCtx, fd: number): ((b: Uint8Array) => void) | null {
  if (fd === 1) return b => c.proc.io.stdout(b);
  if (fd === 2) return b => c.proc.io.stderr(b);
  return null;
}

function exitProcess(c: SyscallCtx, status: bigint): SyscallResult {
  c.proc.kernel.exitCurrent(c.cpu.id, Number(status & 0xffn));
  return NO_RESULT;
}

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

export const SYSCALLS: Readonly<Record<SyscallName, SyscallHandler>> = {
  read: (_c, [fd]) => (int(fd) === 0 ? 0n : E('EBADF')),
  write: (c, [fd, buf, count]) => {
    const out = sink(c, int(fd));
    if (!out) return E('EBADF');
    const u = BigInt.asUintN(64, count);
    const n = u > BigInt(IO_MAX) ? IO_MAX : Number(u);
    if (n === 0) return 0n;
    const bytes = copyFromUser(c.proc.mm, buf, n);
    if (!bytes) return E('EFAULT');
    out(bytes);
    return BigInt(n);
  },
  writev: (c, [fd, iov, cnt]) => {
    const out = sink(c, int(fd));
    if (!out) return E('EBADF');
    const n = int(cnt);
    if (n < 0 || n > 1024) return E('EINVAL');
    const ps = c.proc.kernel.arch.abi.pointerSize;
    const vec = copyFromUser(c.proc.mm, iov, n * 2 * ps);
    if (!vec) return E('EFAULT');
    const dv = new DataView(vec.buffer, vec.byteOffset, vec.byteLength);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const base = ps === 8 ? dv.getBigUint64(i * 16, true) : BigInt(dv.getUint32(i * 8, true));
      const len = ps === 8 ? Number(dv.getBigUint64(i * 16 + 8, true) & 0xffffffn) : dv.getUint32(i * 8 + 4, true);
      if (len === 0) continue;
      const bytes = copyFromUser(c.proc.mm, base, len);
      if (!bytes) return total ? BigInt(total) : E('EFAULT');
      out(bytes);
      total += len;
    }
    return BigInt(total);
  },
  close: (_c, [fd]) => (int(fd) >= 0 && int(fd) <= 2 ? 0n : E('EBADF')),
  exit: (c, [status]) => exitProcess(c, status),
  exit_group: (c, [status]) => exitProcess(c, status),
  getpid: c => BigInt(c.task.pid),
  gettid: c => BigInt(c.task.pid),
  getppid: () => 0n,
  brk: (c, [addr]) => {
    const a = toVAddr(addr);
    if (addr === 0n || a === null) return fromVAddr(c.proc.brk);
    return fromVAddr(c.proc.setBrk(a));
  },
  mmap: (c, [addr, len, prot, flags]) => {
    const f = int(flags);
    if ((f & MAP_ANONYMOUS) === 0) return E('ENODEV');
    const n = Number(BigInt.asUintN(64, len) > 1n << 32n ? 0n : len);
    if (n === 0) return E(BigInt.asUintN(64, len) === 0n ? 'EINVAL' : 'ENOMEM');
    const p = int(prot);
    const perms = (p & 1 ? PERM_R : 0) | (p & 2 ? PERM_W : 0) | (p & 4 ? PERM_X : 0);
    const a = toVAddr(addr);
    if ((f & MAP_FIXED) && (a === null || a % 4096 !== 0)) return E('EINVAL');
    const base = c.proc.mmapAnon(a ?? 0, n, perms, (f & MAP_FIXED) !== 0);
    return base === null ? E('ENOMEM') : fromVAddr(base);
  },
  munmap: (c, [addr, len]) => {
    const a = toVAddr(addr);
    if (a === null || a % 4096 !== 0) return E('EINVAL');
    c.proc.munmap(a, Number(BigInt.asUintN(64, len) & 0xffffffffffn));
    return 0n;
  },
  mprotect: () => 0n,
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
  getrandom: (c, [buf, len]) => {
    const n = Math.min(Number(BigInt.asUintN(64, len) & 0xffffffn), 256);
    return copyToUser(c.proc.mm, buf, randomBytes(c.proc, n)) ? BigInt(n) : E('EFAULT');
  },
  ioctl: () => E('ENOTTY'),
  getuid: () => 0n,
  geteuid: () => 0n,
  getgid: () => 0n,
  getegid: () => 0n,
  rt_sigaction: () => 0n,
  rt_sigprocmask: () => 0n,
  sched_yield: c => {
    c.cpu.setReg(c.proc.kernel.arch.abi.syscall.ret, 0n);
    c.proc.kernel.sched.schedule(c.cpu.id);
    return NO_RESULT;
  },
  nanosleep: () => 0n,
};
