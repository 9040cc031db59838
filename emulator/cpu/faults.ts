/**
 * Why an instruction stops the run loop (never escapes InterpCpu.run), for
 * every architecture.
 *
 * GuestFault: the instruction did not complete (the pc is reset to it and
 * it is not counted). GuestStop: the instruction completed and stops the
 * run (x86 int3/syscall/vmcall/hlt, arm64 brk/svc/hvc/wfi, riscv
 * ebreak/ecall/wfi).
 *
 * Trap-style instructions do not throw: their executor records the signal
 * with InterpCpu.stop() and returns, and the run loop ends after the
 * instruction (no JS exception, which costs several hundred ns per trap).
 * Faults found deeper inside an instruction (#GP on an address, #DE, a
 * decode #UD) are thrown.
 */
import type { Trap } from '../arch/types';

export class GuestFault {
  constructor(readonly kind: 'undefined' | 'divide' | 'generalProtection', readonly reason = '') {}
  toTrap(pc: bigint): Trap {
    return this.kind === 'generalProtection' ? { kind: 'generalProtection', pc, reason: this.reason } : { kind: this.kind, pc };
  }
}

export class GuestStop {
  constructor(readonly kind: 'breakpoint' | 'syscall' | 'hypercall' | 'halt' | 'hwBreakpoint') {}
  toTrap(pc: bigint): Trap {
    // 'hwBreakpoint' stops carry the debug registers' hits: InterpCpu.run builds that trap itself
    return this.kind === 'hwBreakpoint' ? { kind: 'hwBreakpoint', pc, hits: 0, addr: pc, access: 'exec' } : { kind: this.kind, pc };
  }
}

export const STOP_BREAKPOINT = new GuestStop('breakpoint');
export const STOP_SYSCALL = new GuestStop('syscall');
export const STOP_HYPERCALL = new GuestStop('hypercall');
export const STOP_HALT = new GuestStop('halt');
export const FAULT_UD = new GuestFault('undefined');
export const FAULT_DE = new GuestFault('divide');
