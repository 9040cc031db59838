/**
 * An x86 exception raised by the CPU's system half (SDM vol. 3 ch. 6):
 * the vector, the error code pushed with it (-1: none) and, for #PF, the
 * linear address CR2 receives. It is a GuestFault, so the arch-neutral run
 * loop ends the run with the instruction not retired and the pc at it; the
 * trap it reports carries the exception (`x86`) for the system CPU's
 * delivery through the IDT (sysmode/delivery.ts).
 */
import type { Trap } from '../../types';
import { GuestFault } from '../../../cpu/faults';
import type { VAddr } from '../../../memory/address';

export const VEC_DE = 0, VEC_DB = 1, VEC_NMI = 2, VEC_BP = 3, VEC_OF = 4, VEC_BR = 5, VEC_UD = 6, VEC_NM = 7,
  VEC_DF = 8, VEC_TS = 10, VEC_NP = 11, VEC_SS = 12, VEC_GP = 13, VEC_PF = 14, VEC_MF = 16, VEC_AC = 17, VEC_XM = 19;

/** #PF error code bits (SDM vol. 3 4.7) */
export const PF_P = 1, PF_W = 2, PF_U = 4, PF_RSVD = 8, PF_ID = 16;

/** what a trap of the system half carries; `unemulated`: what this CPU does not emulate (the #UD stands in for it, and is logged) */
export interface X86ExceptionInfo { vector: number; errorCode: number; cr2?: VAddr; unemulated?: string }

export class X86Exception extends GuestFault {
  constructor(readonly vector: number, readonly errorCode: number, reason: string, readonly cr2?: VAddr, readonly unemulated?: string) {
    super(vector === VEC_UD ? 'undefined' : vector === VEC_DE ? 'divide' : 'generalProtection', reason);
  }
  override toTrap(pc: bigint): Trap {
    const t = super.toTrap(pc) as Trap & { x86?: X86ExceptionInfo };
    t.x86 = { vector: this.vector, errorCode: this.errorCode, cr2: this.cr2, unemulated: this.unemulated };
    return t;
  }
}

/**
 * #UD for something a real CPU of the kind CPUID claims would do but this
 * one does not emulate (a transfer to compatibility mode, a 16/32-bit
 * IRET): the guest sees #UD, and the run loop logs `what` once with the rip.
 */
export function notEmulated(what: string): X86Exception { return new X86Exception(VEC_UD, -1, `${what} is not emulated`, undefined, what); }

/** #GP(code) */
export function gp(code: number, reason: string): X86Exception { return new X86Exception(VEC_GP, code, reason); }

/** The exception a trap of a system-mode run stands for, when the run loop reported one of its own kinds. */
export function exceptionOf(trap: Trap): X86ExceptionInfo | null {
  const x = (trap as Trap & { x86?: X86ExceptionInfo }).x86;
  if (x !== undefined) return x;
  switch (trap.kind) {
    case 'undefined': return { vector: VEC_UD, errorCode: -1 };
    case 'divide': return { vector: VEC_DE, errorCode: -1 };
    case 'generalProtection': return { vector: VEC_GP, errorCode: 0 };
    default: return null;
  }
}
