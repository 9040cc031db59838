/**
 * Traps raised in user mode: system calls are dispatched through the
 * per-arch number table; every other trap kills the process with the signal
 * Linux would send (SIGSEGV, SIGILL, SIGTRAP, SIGFPE), a message on its
 * stderr, and exit status 128 + signal, as a shell reports it.
 */
import { Cpu, Trap } from '../../arch/types';
import { hex } from '../../memory/address';
import { Errno } from '../abi';
import { NO_RESULT } from '../hypercalls';
import type { Kernel } from '../kernel';
import { KTask } from '../task';
import { SYSCALLS } from './syscalls';

export const SIGILL = 4, SIGTRAP = 5, SIGFPE = 8, SIGSEGV = 11;
const SIGNAL_TEXT: Record<number, string> = {
  [SIGILL]: 'Illegal instruction', [SIGTRAP]: 'Trace/breakpoint trap', [SIGFPE]: 'Floating point exception',
  [SIGSEGV]: 'Segmentation fault',
};

const enc = new TextEncoder();

function signalFor(trap: Trap): { sig: number; detail: string } {
  switch (trap.kind) {
    case 'pageFault': return { sig: SIGSEGV, detail: `${trap.present ? 'protection' : 'unmapped'} ${trap.access} at ${hex(trap.addr)}` };
    case 'generalProtection': return { sig: SIGSEGV, detail: `general protection: ${trap.reason}` };
    case 'halt': return { sig: SIGSEGV, detail: 'privileged instruction hlt' };
    case 'undefined': return { sig: SIGILL, detail: 'invalid opcode' };
    case 'hypercall': return { sig: SIGILL, detail: 'hypercall from user mode' };
    case 'breakpoint': return { sig: SIGTRAP, detail: 'breakpoint' };
    case 'singleStep': return { sig: SIGTRAP, detail: 'single step' };
    case 'divide': return { sig: SIGFPE, detail: 'divide error' };
    case 'syscall': return { sig: SIGSEGV, detail: 'syscall' };
  }
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
    if (!name) {
      if (!proc.reported.has(nr)) {
        proc.reported.add(nr);
        proc.io.stderr(enc.encode(`kprobe-run: ${task.comm}: unimplemented syscall ${nr} at pc ${hex(trap.pc)}: returning -ENOSYS\n`));
      }
      cpu.setReg(abi.ret, BigInt(-Errno.ENOSYS));
      return;
    }
    const r = SYSCALLS[name]({ proc, cpu, task }, abi.args.map(i => cpu.getReg(i)));
    if (r !== NO_RESULT) cpu.setReg(abi.ret, r);
    return;
  }
  const { sig, detail } = signalFor(trap);
  proc.io.stderr(enc.encode(`kprobe-run: ${task.comm}: ${SIGNAL_TEXT[sig]} (${detail}) at pc ${hex(trap.pc)}\n`));
  k.exitCurrent(cpu.id, 128 + sig);
}
