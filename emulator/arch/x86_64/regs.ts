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

/** [pt_regs name, debugger group, GPR number or pseudo code], in pt_regs order */
const PT_LAYOUT: readonly (readonly [string, RegInfo['group'], number])[] = [
  ['r15', 'general', 15], ['r14', 'general', 14], ['r13', 'general', 13], ['r12', 'general', 12],
  ['bp', 'general', 5], ['bx', 'general', 3], ['r11', 'general', 11], ['r10', 'general', 10],
  ['r9', 'general', 9], ['r8', 'general', 8], ['ax', 'general', 0], ['cx', 'general', 1],
  ['dx', 'general', 2], ['si', 'general', 6], ['di', 'general', 7], ['orig_ax', 'general', PT_ORIG_AX],
  ['ip', 'control', PT_IP], ['cs', 'segment', PT_CS], ['flags', 'control', PT_FLAGS], ['sp', 'general', 4],
  ['ss', 'segment', PT_SS], ['fs_base', 'segment', PT_FS_BASE], ['gs_base', 'segment', PT_GS_BASE],
];

export const X86_REGS: RegInfo[] = PT_LAYOUT.map(([name, group]) => ({ name, bits: 64, group }));

/** ArchOps.regs index -> GPR number or pseudo code */
export const PT_REGS: readonly number[] = PT_LAYOUT.map(r => r[2]);
