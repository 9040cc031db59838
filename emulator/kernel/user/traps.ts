/**
 * Traps raised in user mode: system calls are dispatched through the
 * per-arch number table; every other trap is the signal Linux would send
 * (SIGSEGV, SIGILL, SIGTRAP, SIGFPE): the process's handler runs if it has
 * one, else the process is killed with a message on its stderr (the
 * instruction named for SIGILL) and exit status 128 + signal, as a shell
 * reports it.
 *
 * After a system call (and when a process is switched in) its pending
 * signals are acted on. A call that put the task to sleep (RESTART) has
 * its pc rewound to the system call instruction, so it runs again when the
 * task is woken (or returns -EINTR when a handler without SA_RESTART runs
 * first: procSyscalls.ts dispatchSignals).
 */
import { Cpu, SyscallName, Trap } from '../../arch/types';
import { hex } from '../../memory/address';
import { Errno } from '../abi';
import { NO_RESULT } from '../hypercalls';
import type { Kernel } from '../kernel';
import { KTask } from '../task';
import { SYSCALLS } from './syscalls';
import { RESTART, SyscallCtx, SyscallResult } from './results';
import { FsErrno } from '../fs/vfs';
import { deliverSignal, dispatchSignals } from './procSyscalls';
import { SIGFPE, SIGILL, SIGSEGV, SIGTRAP } from './signals';
import { exitProcess, signaledStatus } from './process';

export { SIGFPE, SIGILL, SIGSEGV, SIGTRAP };
const SIGNAL_TEXT: Record<number, string> = {
  [SIGILL]: 'Illegal instruction', [SIGTRAP]: 'Trace/breakpoint trap', [SIGFPE]: 'Floating point exception',
  [SIGSEGV]: 'Segmentation fault',
};

const enc = new TextEncoder();

function signalFor(k: Kernel, cpu: Cpu, trap: Trap): { sig: number; detail: string } {
  switch (trap.kind) {
    case 'pageFault': return { sig: SIGSEGV, detail: `${trap.present ? 'protection' : 'unmapped'} ${trap.access} at ${hex(trap.addr)}` };
    case 'generalProtection': return { sig: SIGSEGV, detail: `general protection: ${trap.reason}` };
    case 'halt': return { sig: SIGSEGV, detail: 'privileged instruction hlt' };
    case 'undefined': return { sig: SIGILL, detail: `invalid opcode${undefinedInsn(k, cpu, trap.pc)}` };
    case 'hypercall': return { sig: SIGILL, detail: 'hypercall from user mode' };
    case 'breakpoint': return { sig: SIGTRAP, detail: 'breakpoint' };
    case 'singleStep': return { sig: SIGTRAP, detail: 'single step' };
    case 'hwBreakpoint': return { sig: SIGTRAP, detail: `hardware ${trap.access === 'exec' ? 'breakpoint' : 'watchpoint'} at ${hex(trap.addr)}` };
    case 'divide': return { sig: SIGFPE, detail: 'divide error' };
    case 'syscall': return { sig: SIGSEGV, detail: 'syscall' };
  }
}

/** ": <bytes> (<the decoder's reading>)" of the instruction at pc, as far as it can be read. */
function undefinedInsn(k: Kernel, cpu: Cpu, pc: bigint): string {
  let bytes = '';
  try {
    const b = cpu.mem.readBytes(Number(pc), k.arch.maxInsnLength);
    bytes = [...b.subarray(0, Math.min(b.length, 8))].map(x => x.toString(16).padStart(2, '0')).join(' ');
  } catch { return ''; }
  let text = '';
  try {
    const d = k.arch.decode(cpu.mem, pc);
    text = d?.mnemonic ? ` ${d.mnemonic}${d.operands ? ' ' + d.operands : ''}` : '';
  } catch { text = ''; }
  return `: ${bytes}${text ? ` (${text.trim()})` : ''}`;
}

export function handleUserTrap(k: Kernel, cpu: Cpu, task: KTask, trap: Trap): void {
  const proc = k.processes.get(task.pid);
  if (!proc) {
    k.oops(cpu, trap, `user task ${task.pid} has no process`);
    return;
  }
  if (trap.kind === 'syscall') {
    const abi = k.arch.abi.syscall;
    const nr = Number(BigInt.asIntN(64, cpu.getReg(abi.nr)));
    const name = k.arch.syscalls[nr];
    // a call run again after a sleep (RESTART) entered once: its sys_enter event is not traced twice
    const again = proc.restart !== null && proc.restart.name === name && proc.restart.pc === trap.pc - BigInt(abi.insnSize);
    proc.restart = null;
    if (!name) {
      if (!proc.reported.has(nr) && !k.arch.absentSyscalls?.has(nr)) {
        // once per process, in the kernel log (the program's own stderr stays its own)
        proc.reported.add(nr);
        k.warn(cpu.id, `kprobe-debug: ${task.comm}[${task.pid}]: unimplemented syscall ${nr} at pc ${hex(trap.pc)}: returning -ENOSYS`);
      }
      cpu.setReg(abi.ret, BigInt(-Errno.ENOSYS));
    } else {
      const args = abi.args.map(i => cpu.getReg(i));
      if (k.traceSyscall && !again) k.traceSyscall(cpu.id, name, args);
      const r = syscallOrErrno(k, name, { proc, cpu, task }, args);
      if (r !== RESTART && r !== NO_RESULT) k.traceSyscall?.(cpu.id, name, args, r);
      if (r === RESTART) {
        // sleep; the call runs again from its instruction when the task is woken
        const at = trap.pc - BigInt(abi.insnSize);
        cpu.setPc(at);
        proc.restart = { pc: at, name };
        if (task.state !== 'exited') task.state = 'blocked';
        // a signal already pending interrupts the sleep at once
        if (proc.signals.hasDeliverable()) { k.sched.wake(task); dispatchSignals(k, proc, cpu); return; }
        k.sched.deschedule(cpu.id);
        return;
      }
      if (r !== NO_RESULT) cpu.setReg(abi.ret, r);
    }
    if (k.currentTask(cpu.id) === task && proc.signals.hasDeliverable()) dispatchSignals(k, proc, cpu);
    return;
  }
  // below the stack, within its limit: the stack grows and the instruction runs again
  if (trap.kind === 'pageFault' && !trap.present && trap.access !== 'exec' && proc.growStack(Number(BigInt.asIntN(64, trap.addr)))) return;
  const { sig, detail } = signalFor(k, cpu, trap);
  const a = proc.signals.action(sig);
  const blocked = (proc.signals.blocked >> BigInt(sig - 1)) & 1n;
  if (a.handler > 1n && !blocked && k.arch.signalFrames) {
    deliverSignal(k, proc, sig);
    dispatchSignals(k, proc, cpu);
    return;
  }
  proc.io.stderr(enc.encode(`kprobe-run: ${task.comm}: ${SIGNAL_TEXT[sig]} (${detail}) at pc ${hex(trap.pc)}\n`));
  exitProcess(k, proc, signaledStatus(sig));
}

/** A user task switched in: act on the signals that arrived while it was off the CPU. */
export function onUserSwitchIn(k: Kernel, cpu: Cpu, task: KTask): void {
  const proc = k.processes.get(task.pid);
  if (proc && proc.signals.hasDeliverable()) dispatchSignals(k, proc, cpu);
}

/**
 * Run a system call; a file operation the machine cannot do for the file
 * (FsErrno: a host file too large to hold, one that cannot be read) is the
 * call's -errno, and its reason one line in the kernel log per process.
 */
function syscallOrErrno(k: Kernel, name: SyscallName, c: SyscallCtx, args: readonly bigint[]): SyscallResult {
  try {
    return SYSCALLS[name](c, args);
  } catch (e) {
    if (!(e instanceof FsErrno)) throw e;
    const line = `kprobe-debug: ${c.task.comm}[${c.task.pid}]: ${name}: ${e.message}: -${e.errno}`;
    if (!c.proc.reportedText.has(line)) { c.proc.reportedText.add(line); k.warn(c.cpu.id, line); }
    return BigInt(-Errno[e.errno]);
  }
}
