/**
 * Register file as the debugger and handlers see it: Linux arm64 struct
 * pt_regs order and names (regs[0]..regs[30] named x0..x30, then sp, pc,
 * pstate), from the port's info part; tpidr_el0/el1 are CPU fields read with mrs.
 *
 * Inside the CPU the general registers live in two Int32Array halves with
 * 34 slots: 0..30 = x0..x30, 31 = sp, 32 = the zero register as a source
 * (always 0), 33 = the zero register as a destination (a sink, never read).
 * The decoder maps encoding 31 to SP, ZR_READ or ZR_WRITE as the operand's
 * context says, so executors never test for register 31.
 */
import { RegInfo } from '../types';
import { AARCH64_REGS } from './info';

export const SP = 31;
export const ZR_READ = 32;
export const ZR_WRITE = 33;
export const NSLOTS = 34;

/** pseudo-register codes (negative) for the registers that are not GPR slots */
export const PT_PC = -1;
export const PT_PSTATE = -2;
/** not in pt_regs (and not in the register table); kept for the cpu's get/set switch */
export const PT_TPIDR_EL0 = -3;
export const PT_TPIDR_EL1 = -4;

/** the register table of the port's info part (pt_regs order) */
export const A64_REGS: RegInfo[] = AARCH64_REGS;

/** ArchOps.regs index -> GPR slot or pseudo code: x0..x30 and sp are slots 0..31 */
export const PT_REGS: readonly number[] = A64_REGS.map((r, i) => r.name === 'pc' ? PT_PC : r.name === 'pstate' ? PT_PSTATE : i);

/** index into A64_REGS of a pt_regs name */
export function a64Reg(name: string): number {
  const i = A64_REGS.findIndex(r => r.name === name);
  if (i < 0) throw new Error(`aarch64: no register ${name}`);
  return i;
}
