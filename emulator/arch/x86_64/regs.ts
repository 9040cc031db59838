/**
 * Register file as the debugger and handlers see it: Linux x86_64 pt_regs
 * order and names, then fs_base/gs_base. PT_REGS maps an index into
 * ArchOps.regs to a hardware GPR number (rax=0 ... r15=15) or to one of
 * the negative pseudo-register codes below.
 */
import { RegInfo } from '../types';

export const PT_ORIG_AX = -1;
export const PT_IP = -2;
export const PT_CS = -3;
export const PT_FLAGS = -4;
export const PT_SS = -5;
export const PT_FS_BASE = -6;
export const PT_GS_BASE = -7;

export const X86_REGS: RegInfo[] = [
  { name: 'r15', bits: 64, group: 'general' },
  { name: 'r14', bits: 64, group: 'general' },
  { name: 'r13', bits: 64, group: 'general' },
  { name: 'r12', bits: 64, group: 'general' },
  { name: 'bp', bits: 64, group: 'general' },
  { name: 'bx', bits: 64, group: 'general' },
  { name: 'r11', bits: 64, group: 'general' },
  { name: 'r10', bits: 64, group: 'general' },
  { name: 'r9', bits: 64, group: 'general' },
  { name: 'r8', bits: 64, group: 'general' },
  { name: 'ax', bits: 64, group: 'general' },
  { name: 'cx', bits: 64, group: 'general' },
  { name: 'dx', bits: 64, group: 'general' },
  { name: 'si', bits: 64, group: 'general' },
  { name: 'di', bits: 64, group: 'general' },
  { name: 'orig_ax', bits: 64, group: 'general' },
  { name: 'ip', bits: 64, group: 'control' },
  { name: 'cs', bits: 64, group: 'segment' },
  { name: 'flags', bits: 64, group: 'control' },
  { name: 'sp', bits: 64, group: 'general' },
  { name: 'ss', bits: 64, group: 'segment' },
  { name: 'fs_base', bits: 64, group: 'segment' },
  { name: 'gs_base', bits: 64, group: 'segment' },
];

/** ArchOps.regs index -> GPR number or pseudo code */
export const PT_REGS: readonly number[] = [
  15, 14, 13, 12, 5, 3, 11, 10, 9, 8, 0, 1, 2, 6, 7,
  PT_ORIG_AX, PT_IP, PT_CS, PT_FLAGS, 4, PT_SS, PT_FS_BASE, PT_GS_BASE,
];

/** pt_regs index of a hardware GPR */
export function ptIndexOfGpr(gpr: number): number { return PT_REGS.indexOf(gpr); }

export const REG_AX = 0, REG_CX = 1, REG_DX = 2, REG_BX = 3, REG_SP = 4, REG_BP = 5, REG_SI = 6, REG_DI = 7;
export const REG_R8 = 8, REG_R9 = 9, REG_R10 = 10, REG_R11 = 11;
