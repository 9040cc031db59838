/**
 * What the image's thread asks while it serves a system call for a process
 * (examples/kernel/open.c): the user_init hypercall's forms past serve.
 *
 *   USE_MM(mm) / UNUSE_MM(mm)  kthread_use_mm / kthread_unuse_mm: the thread's
 *                              user accesses reach that process's memory
 *   STRNCPY(dst, src, count)   strncpy_from_user: Linux's result (the length,
 *                              count when no NUL came first, -EFAULT)
 *   OPEN(dfd, name, how)       the file opened and its descriptor installed in
 *                              the process whose memory is in use (name: the
 *                              kernel's copy; how: struct open_how)
 *   SYMLINK(dfd, name, target) the link made there (both kernel copies)
 *   DONE(id, result)           the call `id` returns `result` to its process
 *
 * The process's descriptors, files and directories are this emulator's
 * (fs/vfs.ts), so the last step of each call is done here, on the image's
 * request, with the names the image copied from user memory.
 */
import type { Cpu } from '../../arch/types';
import { MemoryFault, PERM_R, PERM_U } from '../../memory/memory';
import { toVAddr } from '../../memory/address';
import { Errno } from '../abi';
import type { HypercallResult } from '../hypercalls';
import type { Kernel } from '../kernel';
import { pidOfMmAddress, userMemoryOf } from '../task';
import type { KernelService } from './kernelService';
import type { UserProcess } from './process';
import { openInode } from './fileSyscalls';
import { symlinkNamed } from './nameiSyscalls';

export const USER_USE_MM = 3n;
export const USER_UNUSE_MM = 4n;
export const USER_STRNCPY = 5n;
export const USER_OPEN = 6n;
export const USER_SYMLINK = 7n;
export const USER_DONE = 8n;

const err = (name: keyof typeof Errno): bigint => BigInt(-Errno[name]);
/** PATH_MAX: the longest name the image hands back */
const PATH_MAX = 4096;

/** The hypercall's form `form` with arguments a, b, c; undefined when `form` is none of these. */
export function imageWork(k: Kernel, service: KernelService, cpu: Cpu, form: bigint, a: bigint, b: bigint, c: bigint): HypercallResult | undefined {
  switch (form) {
    case USER_USE_MM: return useMm(k, cpu, a);
    case USER_UNUSE_MM: {
      const t = k.currentTask(cpu.id);
      if (!t || t.user) return err('EINVAL');
      t.usedMm = null;
      return 0n;
    }
    case USER_STRNCPY: return strncpyFromUser(k, cpu, a, b, c);
    case USER_OPEN: return open(k, cpu, a, b, c);
    case USER_SYMLINK: return symlink(k, cpu, a, b, c);
    case USER_DONE: return service.complete(Number(BigInt.asUintN(32, a)), BigInt.asIntN(64, b)) ? 0n : err('ENOENT');
    default: return undefined;
  }
}

function useMm(k: Kernel, cpu: Cpu, mm: bigint): HypercallResult {
  const t = k.currentTask(cpu.id);
  const pid = pidOfMmAddress(mm);
  const proc = pid === null ? undefined : k.processes.get(pid);
  // kthread_use_mm is for kernel threads, with an mm that exists
  if (!t || t.user || !proc || proc.waitStatus !== null) return err('EINVAL');
  t.usedMm = { pid: proc.task.pid, mm: proc.mm };
  return 0n;
}

/** the process whose memory the calling thread uses */
function usedProcess(k: Kernel, cpu: Cpu): UserProcess | undefined {
  const t = k.currentTask(cpu.id);
  const pid = t?.usedMm?.pid;
  return pid === undefined ? undefined : k.processes.get(pid);
}

function strncpyFromUser(k: Kernel, cpu: Cpu, dstArg: bigint, srcArg: bigint, countArg: bigint): HypercallResult {
  const count = Number(BigInt.asIntN(64, countArg));
  if (count <= 0) return 0n;
  const mm = userMemoryOf(k.currentTask(cpu.id));
  const src = toVAddr(srcArg), dst = toVAddr(dstArg);
  if (!mm || src === null || dst === null) return err('EFAULT');
  const bytes: number[] = [];
  for (let i = 0; i < count; i++) {
    const r = mm.regionAt(src + i);
    if (!r || r.device || (r.perms & PERM_U) === 0 || (r.perms & PERM_R) === 0) return err('EFAULT');
    const v = mm.read8(src + i);
    bytes.push(v);
    if (v === 0) break;
  }
  try {
    cpu.mem.writeBytes(dst, Uint8Array.from(bytes));
  } catch (e) {
    if (e instanceof MemoryFault) return err('EFAULT');
    throw e;
  }
  return BigInt(bytes[bytes.length - 1] === 0 ? bytes.length - 1 : bytes.length);
}

/** a NUL-terminated string of kernel memory, or null */
function kernelString(cpu: Cpu, a: bigint): string | null {
  const v = toVAddr(a);
  if (v === null) return null;
  try { return cpu.mem.readCString(v, PATH_MAX); } catch (e) {
    if (e instanceof MemoryFault) return null;
    throw e;
  }
}

function open(k: Kernel, cpu: Cpu, dfd: bigint, nameArg: bigint, howArg: bigint): HypercallResult {
  const proc = usedProcess(k, cpu);
  if (!proc) return err('EINVAL');
  const name = kernelString(cpu, nameArg);
  const how = toVAddr(howArg);
  if (name === null || how === null) return err('EFAULT');
  let flags: number, mode: number;
  try {
    flags = Number(BigInt.asUintN(32, cpu.mem.read64(how)));
    mode = Number(BigInt.asUintN(32, cpu.mem.read64(how + 8)));
  } catch (e) {
    if (e instanceof MemoryFault) return err('EFAULT');
    throw e;
  }
  return openInode({ proc, cpu, task: proc.task }, Number(BigInt.asIntN(32, dfd)), name, flags, mode);
}

function symlink(k: Kernel, cpu: Cpu, dfd: bigint, nameArg: bigint, targetArg: bigint): HypercallResult {
  const proc = usedProcess(k, cpu);
  if (!proc) return err('EINVAL');
  const name = kernelString(cpu, nameArg), target = kernelString(cpu, targetArg);
  if (name === null || target === null) return err('EFAULT');
  return symlinkNamed({ proc, cpu, task: proc.task }, target, Number(BigInt.asIntN(32, dfd)), name);
}
