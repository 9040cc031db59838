/**
 * Process and signal system calls real programs make: fork / vfork / clone
 * (process semantics: CLONE_VM threads are not supported and say so;
 * CLONE_VM|CLONE_VFORK as posix_spawn uses it runs the child in a copy of
 * the address space on the stack it was given, the parent waiting until the
 * child execs or exits), execve, exit / exit_group, wait4, the pid / pgid /
 * sid calls, kill / tkill / tgkill, rt_sigaction, rt_sigprocmask,
 * rt_sigreturn, sigaltstack, pause, rt_sigsuspend.
 *
 * Signal delivery (deliverSignal / dispatchSignals): a signal is made
 * pending; pending signals that are not blocked are acted on when the
 * process is about to run user code (after its system call, or when it is
 * switched in): the default action (terminate, ignore), or its handler on a
 * signal frame the port builds. A task asleep in a system call is woken to
 * take the signal: the call restarts after the handler when the handler
 * has SA_RESTART (and the call is restartable), else it returns -EINTR.
 */
import type { Cpu, SyscallName } from '../../arch/types';
import type { Kernel } from '../kernel';
import { hex } from '../../memory/address';
import { copyFromUser, copyToUser, readUserString, readUserStrings, words } from './uaccess';
import { E, NO_RESULT, RESTART, SyscallCtx, SyscallHandler, i32, int, neg } from './results';
import { kernelServiceOf, UserRequestOp } from './kernelService';
import { UserProcess, execProcess, exitProcess, exitedStatus, forkProcess, signaledStatus } from './process';
import {
  NSIG, SA_RESETHAND, SA_RESTART, SA_NODEFER, SIGCHLD, SIGKILL, SIGSTOP, SIG_DFL, SIG_IGN, SigAction, defaultAction, sigBit,
} from './signals';
import { Errno } from '../abi';

const CLONE_VM = 0x100, CLONE_VFORK = 0x4000, CLONE_PARENT_SETTID = 0x100000,
  CLONE_CHILD_CLEARTID = 0x200000, CLONE_CHILD_SETTID = 0x1000000, CLONE_THREAD = 0x10000;
const WNOHANG = 1;
const SIG_BLOCK = 0, SIG_UNBLOCK = 1, SIG_SETMASK = 2;

/** The system calls that never restart after a handler (signal(7): pause, sigsuspend). */
/** sizeof(sigset_t) on every arch here: the rt_sig* calls refuse any other size with -EINVAL, as Linux does */
const SIGSET_SIZE = 8n;

const NEVER_RESTART = new Set<SyscallName>(['pause', 'rt_sigsuspend']);

const enc = new TextEncoder();

/** One line in the kernel log (and so in the run's output), once per process and text. */
function logOnce(k: Kernel, proc: UserProcess, cpu: number, text: string): void {
  if (proc.reportedText.has(text)) return;
  proc.reportedText.add(text);
  k.printk(cpu, text, 'emulator');
}

/**
 * Make a signal pending for a process and wake it if it sleeps in a system
 * call; SIGKILL ends it at once.
 */
export function deliverSignal(k: Kernel, proc: UserProcess, sig: number): void {
  if (proc.waitStatus !== null || sig <= 0 || sig > NSIG) return;
  if (sig === SIGKILL) { exitProcess(k, proc, signaledStatus(SIGKILL)); return; }
  const a = proc.signals.action(sig);
  if (a.handler === SIG_IGN) return;
  if (a.handler === SIG_DFL && defaultAction(sig) !== 'terminate') {
    if (defaultAction(sig) === 'stop') logOnce(k, proc, -1, `kprobe-debug: ${proc.task.comm}[${proc.pid}]: signal ${sig} would stop the process; job control is not modelled (ignored)`);
    return;
  }
  proc.signals.raise(sig);
  // a sleep on the clock ends with -EINTR; a sleep in a restartable call runs it again (or -EINTR, dispatchSignals)
  if (proc.signals.hasDeliverable() && proc.task.state === 'blocked' && !k.cancelSleep(proc.task, BigInt(-Errno.EINTR))) k.sched.wake(proc.task);
}

/**
 * Act on the pending signals of the process running on `cpu` (its user
 * registers are live): default terminations end it; a handler gets a frame.
 * Returns false when the process ended.
 */
export function dispatchSignals(k: Kernel, proc: UserProcess, cpu: Cpu): boolean {
  // uprobe_deny_signal: not while the task steps a probed instruction out of line (acted on after the step)
  if (k.signalDeferrers.some(d => d(proc.pid))) return true;
  for (;;) {
    if (proc.waitStatus !== null) return false;
    const sig = proc.signals.next();
    if (!sig) return true;
    const a = proc.signals.action(sig);
    if (a.handler === SIG_IGN) continue;
    if (a.handler === SIG_DFL) {
      if (defaultAction(sig) !== 'terminate') continue;
      exitProcess(k, proc, signaledStatus(sig));
      return false;
    }
    // a system call this task sleeps in: restart it after the handler, or make it return -EINTR
    const abi = k.arch.abi.syscall;
    const r = proc.restart;
    if (r && r.pc === cpu.getPc()) {
      if (!(a.flags & SA_RESTART) || NEVER_RESTART.has(r.name)) {
        cpu.setPc(r.pc + BigInt(abi.insnSize));
        cpu.setReg(abi.ret, BigInt(-Errno.EINTR));
      }
    }
    proc.restart = null;
    const frames = k.arch.signalFrames;
    if (!frames) {
      logOnce(k, proc, cpu.id, `kprobe-debug: ${proc.task.comm}[${proc.pid}]: signal ${sig} has a handler, and signal frames are not implemented on ${k.arch.name}: the process is terminated`);
      exitProcess(k, proc, signaledStatus(sig));
      return false;
    }
    // sigsuspend's temporary mask is not what the handler's return restores: the mask before it is
    // room for the frame: the stack grows as it would for the handler's own pushes
    proc.growStack(Number(BigInt.asIntN(64, cpu.getReg(k.arch.abi.spReg))) - 8192);
    const oldMask = proc.suspendMask ?? proc.signals.blocked;
    proc.suspendMask = null;
    const ok = frames.push(cpu, proc.mm, { sig, handler: a.handler, flags: a.flags, restorer: a.restorer, mask: oldMask, tramp: () => proc.sigTrampoline() });
    if (!ok) {
      // no room for the frame (a bad stack pointer): SIGSEGV, as Linux's force_sigsegv
      logOnce(k, proc, cpu.id, `kprobe-debug: ${proc.task.comm}[${proc.pid}]: no room for the signal ${sig} frame below sp ${hex(cpu.getReg(k.arch.abi.spReg))}: killed by SIGSEGV`);
      exitProcess(k, proc, signaledStatus(11));
      return false;
    }
    proc.signals.setBlocked(oldMask | a.mask | ((a.flags & SA_NODEFER) ? 0n : sigBit(sig)));
    if (a.flags & SA_RESETHAND) proc.signals.setAction(sig, { handler: SIG_DFL, flags: 0n, restorer: 0n, mask: 0n });
  }
}

function readSigset(c: SyscallCtx, p: bigint): bigint | null {
  const b = copyFromUser(c.proc.mm, p, 8);
  if (!b) return null;
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
}

function waitFor(c: SyscallCtx, pid: number, statusPtr: bigint, options: number, rusage: bigint): ReturnType<SyscallHandler> {
  const me = c.proc;
  const matching = [...me.children].filter(ch => pid <= 0 || ch.pid === pid);
  if (matching.length === 0) return E('ECHILD');
  const done = matching.find(ch => ch.waitStatus !== null);
  if (done) {
    if (statusPtr !== 0n && !copyToUser(me.mm, statusPtr, Uint8Array.from(words([BigInt(done.waitStatus!)], 4)))) return E('EFAULT');
    if (rusage !== 0n && !copyToUser(me.mm, rusage, new Uint8Array(144))) return E('EFAULT');
    me.children.delete(done);
    me.kernel.processes.delete(done.pid);
    return BigInt(done.pid);
  }
  if (options & WNOHANG) return 0n;
  me.waiters.add(c.task);
  return RESTART;
}

function doFork(c: SyscallCtx, flags: number, newsp: bigint, ptid: bigint, ctid: bigint): ReturnType<SyscallHandler> {
  const k = c.proc.kernel;
  if ((flags & CLONE_THREAD) || ((flags & CLONE_VM) && !(flags & CLONE_VFORK))) {
    logOnce(k, c.proc, c.cpu.id, `kprobe-debug: ${c.task.comm}[${c.proc.pid}]: clone with CLONE_VM (threads) is not supported: -ENOSYS`);
    return E('ENOSYS');
  }
  const child = forkProcess(k, c.proc, c.cpu);
  const ct = child.task;
  // the kernel image's kernel_clone runs for it (kernelService.ts)
  kernelServiceOf(k)?.post({ op: UserRequestOp.Clone, args: [BigInt(flags), newsp] });
  const restore = (f: (cpu: Cpu) => void): void => {
    // edit the child's saved registers through the kernel's scratch CPU
    k.editContext(ct, f);
  };
  if (newsp !== 0n) restore(cpu => cpu.setReg(k.arch.abi.spReg, newsp));
  const tidBytes = Uint8Array.from(words([BigInt(ct.pid)], 4));
  if (flags & CLONE_PARENT_SETTID) { copyToUser(c.proc.mm, ptid, tidBytes); copyToUser(child.mm, ptid, tidBytes); }
  if (flags & CLONE_CHILD_SETTID) copyToUser(child.mm, ctid, tidBytes);
  if (flags & CLONE_CHILD_CLEARTID) child.clearChildTid = ctid;
  if (flags & CLONE_VFORK) {
    // the parent sleeps until the child execs or ends
    child.vforkParent = c.task;
    c.task.state = 'blocked';
    k.sched.deschedule(c.cpu.id);
    return NO_RESULT;
  }
  return BigInt(ct.pid);
}

/** The action argument of rt_sigaction as the arch lays it out (with sa_restorer where it has one). */
function readSigaction(c: SyscallCtx, p: bigint): SigAction | null {
  const withRestorer = c.proc.kernel.arch.kernel.user.sigactionRestorer;
  const b = copyFromUser(c.proc.mm, p, withRestorer ? 32 : 24);
  if (!b) return null;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return withRestorer
    ? { handler: dv.getBigUint64(0, true), flags: dv.getBigUint64(8, true), restorer: dv.getBigUint64(16, true), mask: dv.getBigUint64(24, true) }
    : { handler: dv.getBigUint64(0, true), flags: dv.getBigUint64(8, true), restorer: 0n, mask: dv.getBigUint64(16, true) };
}

function sigactionBytes(c: SyscallCtx, a: SigAction): Uint8Array {
  return c.proc.kernel.arch.kernel.user.sigactionRestorer
    ? words([a.handler, a.flags, a.restorer, a.mask], 8)
    : words([a.handler, a.flags, a.mask], 8);
}

function killPid(c: SyscallCtx, pid: number, sig: number): bigint {
  const k = c.proc.kernel;
  if (sig < 0 || sig > NSIG) return E('EINVAL');
  // pid > 0: that process; 0: the caller's process group; -1: every process but init and the caller; < -1: group -pid
  const live = [...k.processes.values()].filter(p => p.waitStatus === null);
  const targets = pid > 0 ? live.filter(p => p.pid === pid)
    : pid === 0 ? live.filter(p => p.pgid === c.proc.pgid)
      : pid === -1 ? live.filter(p => p.pid !== 1 && p !== c.proc)
        : live.filter(p => p.pgid === -pid);
  if (targets.length === 0) return E('ESRCH');
  if (sig === 0) return 0n;
  for (const p of targets) deliverSignal(k, p, sig);
  return 0n;
}

export const PROC_SYSCALLS = {
  fork: c => doFork(c, SIGCHLD, 0n, 0n, 0n),
  vfork: c => doFork(c, CLONE_VFORK | SIGCHLD, 0n, 0n, 0n),
  clone: (c, a) => {
    const ctidArg = c.proc.kernel.arch.kernel.user.cloneChildTidArg;
    // CLONE_SETTLS (the other of args 3 / 4) comes with threads, which doFork refuses
    return doFork(c, i32(a[0]), a[1], a[2], a[ctidArg]);
  },
  execve: (c, [pathPtr, argvPtr, envpPtr]) => {
    const k = c.proc.kernel;
    const path = readUserString(c.proc.mm, pathPtr, 4096);
    if (path === null) return E('EFAULT');
    if (path === '') return E('ENOENT');
    const ps = k.arch.abi.pointerSize;
    const argv = readUserStrings(c.proc.mm, argvPtr, ps);
    const envp = readUserStrings(c.proc.mm, envpPtr, ps);
    if (!argv || !envp) return E('EFAULT');
    const r = path === '/proc/self/exe' && c.proc.exe ? { ok: true as const, inode: c.proc.exe } : k.fs.lookup(path, c.proc.cwd);
    if (!r.ok) return neg(r.errno);
    if (r.inode.isDir) return E('EACCES');
    const fail = execProcess(k, c.proc, c.cpu, r.inode, path, argv, envp);
    if (fail) {
      if (fail.errno === 'ENOEXEC') logOnce(k, c.proc, c.cpu.id, `kprobe-debug: execve ${path}: ${fail.why}`);
      return E(fail.errno);
    }
    c.proc.releaseVforkParent();
    return NO_RESULT;
  },
  exit: (c, [status]) => { exitProcess(c.proc.kernel, c.proc, exitedStatus(int(status))); return NO_RESULT; },
  exit_group: (c, [status]) => { exitProcess(c.proc.kernel, c.proc, exitedStatus(int(status))); return NO_RESULT; },
  wait4: (c, [pid, status, options, rusage]) => waitFor(c, i32(pid), status, i32(options), rusage),
  getpid: c => BigInt(c.proc.pid),
  gettid: c => BigInt(c.proc.pid),
  getppid: c => BigInt(c.proc.parent?.pid ?? 0),
  getpgid: (c, [pid]) => (pid === 0n || c.proc.kernel.processes.has(i32(pid)) ? BigInt(c.proc.pgid) : E('ESRCH')),
  getpgrp: c => BigInt(c.proc.pgid),
  setpgid: (c, [pid, pgid]) => {
    const p = pid === 0n ? c.proc : c.proc.kernel.processes.get(i32(pid));
    if (!p) return E('ESRCH');
    p.pgid = pgid === 0n ? p.pid : i32(pgid);
    return 0n;
  },
  getsid: c => BigInt(c.proc.sid),
  setsid: c => { c.proc.sid = c.proc.pgid = c.proc.pid; return BigInt(c.proc.pid); },
  kill: (c, [pid, sig]) => killPid(c, i32(pid), i32(sig)),
  tkill: (c, [tid, sig]) => killPid(c, Math.max(1, i32(tid)), i32(sig)),
  tgkill: (c, [, tid, sig]) => killPid(c, Math.max(1, i32(tid)), i32(sig)),
  rt_sigaction: (c, [sig, act, oact, size]) => {
    if (size !== SIGSET_SIZE) return E('EINVAL');
    const s = i32(sig);
    if (s < 1 || s > NSIG) return E('EINVAL');
    const old = c.proc.signals.action(s);
    if (act !== 0n) {
      if (s === SIGKILL || s === SIGSTOP) return E('EINVAL');
      const a = readSigaction(c, act);
      if (!a) return E('EFAULT');
      c.proc.signals.setAction(s, a);
    }
    if (oact !== 0n && !copyToUser(c.proc.mm, oact, sigactionBytes(c, old))) return E('EFAULT');
    return 0n;
  },
  rt_sigprocmask: (c, [how, set, oset, size]) => {
    if (size !== SIGSET_SIZE) return E('EINVAL');
    const sigs = c.proc.signals;
    const old = sigs.blocked;
    if (set !== 0n) {
      const m = readSigset(c, set);
      if (m === null) return E('EFAULT');
      switch (i32(how)) {
        case SIG_BLOCK: sigs.setBlocked(old | m); break;
        case SIG_UNBLOCK: sigs.setBlocked(old & ~m); break;
        case SIG_SETMASK: sigs.setBlocked(m); break;
        default: return E('EINVAL');
      }
    }
    if (oset !== 0n && !copyToUser(c.proc.mm, oset, words([old], 8))) return E('EFAULT');
    return 0n;
  },
  rt_sigreturn: c => {
    const k = c.proc.kernel;
    const frames = k.arch.signalFrames;
    const mask = frames?.pop(c.cpu, c.proc.mm);
    if (mask === undefined || mask === null) {
      c.proc.io.stderr(enc.encode(`kprobe-run: ${c.task.comm}: rt_sigreturn with no valid signal frame at sp ${hex(c.cpu.getReg(k.arch.abi.spReg))}: Segmentation fault\n`));
      exitProcess(k, c.proc, signaledStatus(11));
      return NO_RESULT;
    }
    c.proc.signals.setBlocked(mask);
    return NO_RESULT;
  },
  sigaltstack: (c, [, old]) => (old === 0n || copyToUser(c.proc.mm, old, Uint8Array.from([...words([0n], 8), 2, 0, 0, 0, 0, 0, 0, 0, ...words([0n], 8)])) ? 0n : E('EFAULT')),
  pause: c => {
    c.task.state = 'blocked';
    return RESTART;
  },
  rt_sigsuspend: (c, [set, size]) => {
    if (size !== SIGSET_SIZE) return E('EINVAL');
    const m = readSigset(c, set);
    if (m === null) return E('EFAULT');
    if (c.proc.suspendMask === null) c.proc.suspendMask = c.proc.signals.blocked;
    c.proc.signals.setBlocked(m);
    return RESTART;
  },
} satisfies Partial<Record<SyscallName, SyscallHandler>>;

