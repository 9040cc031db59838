/**
 * The aarch64 port's info part (loads without the CPU): arm64 pt_regs
 * (regs[0..30] named x0..x30, sp, pc, pstate — arch/arm64/include/asm/ptrace.h),
 * AAPCS64 ABI, instruction facts, kernel layout and oops style, the generic
 * system call table.
 */
import type { ArchInfo, RegInfo } from '../types';
import { EXEC_AREA_SIZE, KERNEL_STACK_SIZE, USER_STACK_SIZE, wordRegLabel } from '../archKernel';
import { GENERIC_SYSCALLS } from '../syscallNumbers';

/** ELF e_machine EM_AARCH64 */
export const EM_AARCH64 = 183;

export const AARCH64_REGS: RegInfo[] = [
  ...Array.from({ length: 31 }, (_, i): RegInfo => ({ name: `x${i}`, bits: 64, group: 'general' })),
  { name: 'sp', bits: 64, group: 'general' },
  { name: 'pc', bits: 64, group: 'control' },
  { name: 'pstate', bits: 64, group: 'control' },
];
const SP = 31, PC = 32, PSTATE = 33;
const X = (n: number): number => n;

/** little-endian bytes of an A64 instruction word */
const word = (w: number): Uint8Array => Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);

export const aarch64Info: ArchInfo = {
  name: 'aarch64',
  aliases: ['arm64'],
  elfMachines: [EM_AARCH64],
  hasCpu: true,
  regs: AARCH64_REGS,
  abi: {
    argRegs: [0, 1, 2, 3, 4, 5, 6, 7].map(X),
    retReg: X(0),
    spReg: SP,
    pcReg: PC,
    fpReg: X(29),
    returnAddress: { kind: 'reg', reg: X(30) },
    flagsReg: PSTATE,
    hypercall: { nr: X(8), args: [X(0), X(1), X(2), X(3)], ret: X(0) },
    syscall: { nr: X(8), args: [0, 1, 2, 3, 4, 5].map(X), ret: X(0), insnSize: 4 },
    pointerSize: 8,
    charSigned: false,
    // arm64 has no x86 trap numbers: fault handlers see the ESR exception class (ESR_ELx_EC_*)
    trapNumbers: { breakpoint: 0x3c, singleStep: 0x32, undefined: 0x00, pageFault: 0x25 },
  },
  // brk #0x004 (KPROBES_BRK_IMM)
  breakpointInsn: word(0xd4200080),
  breakpointPcOffset: 0,
  maxInsnLength: 4,
  minInsnLength: 4,
  // ret
  returnInsn: word(0xd65f03c0),
  frameRecord: { savedFpOffset: 0, returnAddressOffset: 8 },
  // AADWARF64: 0-30 x0-x30, 31 sp
  dwarfRegs: [...Array.from({ length: 31 }, (_, i) => X(i)), SP],
  // struct user_pt_regs: regs[31], sp, pc, pstate
  ptRegsFrame: [...Array.from({ length: 31 }, (_, i) => `x${i}`), 'sp', 'pc', 'pstate'],
  optprobes: false,
  kernel: {
    layout: {
      // 64 MiB below the kernel image (arm64 b/bl reach +-128 MiB)
      execArea: 0xffff800004000000n,
      execAreaSize: EXEC_AREA_SIZE,
      stackArea: 0xffff800010000000n,
      stackSize: KERNEL_STACK_SIZE,
    },
    branchReach: 0x07f00000,
    oops: { pcLabel: 'pc', regLabel: wordRegLabel, regsPerLine: 3, codeBefore: 16, codeAfter: 4, codeUnit: 4, codeMark: ['(', ')'] },
    user: { stackTop: 0x7ffffffff000n, stackSize: USER_STACK_SIZE, platform: 'aarch64', hwcap: 3n, // HWCAP_FP | HWCAP_ASIMD
      stat: 'generic', openFlags: { directory: 0o40000, nofollow: 0o100000 },
      cloneChildTidArg: 4, sigactionRestorer: true },
  },
  syscalls: GENERIC_SYSCALLS,
  unameMachine: 'aarch64',
  regAliases: { fp: 'x29', lr: 'x30', cpsr: 'pstate' },
};
