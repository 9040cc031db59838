/**
 * Why an instruction stops the run loop (never escape X86Cpu.run).
 * GuestFault: the instruction did not complete (rip is reset to it).
 * GuestStop: the instruction completed and stops the run.
 *
 * Trap-style instructions (int3, int n, ud*, hlt, syscall, vmcall) do not
 * throw: their executor records the signal with X86Cpu.stop() and returns,
 * and the run loop ends after the instruction (no JS exception, which
 * costs several hundred ns per trap). Faults found deeper inside an
 * instruction (#GP on an address, #DE, a decode #UD) are thrown.
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
