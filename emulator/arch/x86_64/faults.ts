/**
 * Signals thrown by executors and caught by the run loop (never escape
 * X86Cpu.run). GuestFault: the instruction did not complete (rip is reset
 * to it). GuestStop: the instruction completed and stops the run.
 */
import { Trap } from '../types';

export class GuestFault {
  constructor(readonly kind: 'undefined' | 'divide' | 'generalProtection', readonly reason = '') {}
}

export class GuestStop {
  constructor(readonly kind: 'breakpoint' | 'syscall' | 'hypercall' | 'halt') {}
  toTrap(pc: bigint): Trap { return { kind: this.kind, pc }; }
}

export const STOP_BREAKPOINT = new GuestStop('breakpoint');
export const STOP_SYSCALL = new GuestStop('syscall');
export const STOP_HYPERCALL = new GuestStop('hypercall');
export const STOP_HALT = new GuestStop('halt');
export const FAULT_UD = new GuestFault('undefined');
export const FAULT_DE = new GuestFault('divide');
