/**
 * System executors: ecall (S-mode: the hypercall, U-mode: the system call),
 * ebreak / c.ebreak (a breakpoint whose pc is the instruction's own
 * address), wfi (halt), sret, sfence.vma, and the illegal instruction
 * (stval = the encoding, as hardware reports it; scause = 2).
 */
import type { RvCpu } from '../cpu';
import type { RvInsn } from '../insn';
import { FAULT_UD, STOP_BREAKPOINT, STOP_HALT, STOP_HYPERCALL, STOP_SYSCALL } from '../../../cpu/faults';
import { SSTATUS_SIE, SSTATUS_SPIE, SSTATUS_SPP } from '../csr';

/** Illegal instruction: the encoding goes to stval, cause 2, and the run stops with 'undefined' at this pc. */
export function illegal(c: RvCpu, i: RvInsn): void {
  c.csrs.stval = BigInt(i.raw >>> 0);
  c.csrs.scause = 2n;
  c.stop(FAULT_UD);
}

export function ecall(c: RvCpu, _i: RvInsn): void {
  c.stop(c.userMode ? STOP_SYSCALL : STOP_HYPERCALL);
}

export function ebreak(c: RvCpu, i: RvInsn): void {
  const hook = c.inlineBreakpoint;
  if (hook !== null && !c.stepTrap && hook(c, i.addr)) return;
  c.pc = i.addr; // riscv reports the breakpoint at the ebreak itself
  c.stop(STOP_BREAKPOINT);
}

export function wfi(c: RvCpu, i: RvInsn): void {
  if (c.userMode) { illegal(c, i); return; }
  c.stop(STOP_HALT);
}

/** sret: pc = sepc, privilege from SPP, SIE = SPIE */
export function sret(c: RvCpu, i: RvInsn): void {
  if (c.userMode) { illegal(c, i); return; }
  const s = c.csrs;
  const toUser = (s.sstatus & SSTATUS_SPP) === 0n;
  s.sstatus = (s.sstatus & ~(SSTATUS_SPP | SSTATUS_SIE)) | ((s.sstatus & SSTATUS_SPIE) !== 0n ? SSTATUS_SIE : 0n) | SSTATUS_SPIE;
  c.reservations.clear(c);
  c.userMode = toUser;
  c.setPc(s.sepc);
  c.endRun(); // the decode cache is per privilege mode: the next run selects the right one
}

export function sfenceVma(c: RvCpu, i: RvInsn): void {
  if (c.userMode) illegal(c, i);
}
