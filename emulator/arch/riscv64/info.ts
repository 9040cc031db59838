/**
 * The riscv64 port's info part (loads without the CPU): riscv pt_regs
 * (arch/riscv/include/asm/ptrace.h: epc, then x1..x31 by ABI name, status,
 * badaddr, cause, orig_a0), LP64 ABI, instruction facts (RVC: 2-byte
 * alignment), kernel layout and oops style, the generic system call table.
 */
import type { ArchInfo, RegInfo } from '../types';
import { EXEC_AREA_SIZE, KERNEL_STACK_SIZE, USER_STACK_SIZE, wordRegLabel } from '../archKernel';
import { GENERIC_SYSCALLS } from '../syscallNumbers';

/** ELF e_machine EM_RISCV */
export const EM_RISCV = 243;

/** x0..x31 by ABI name (x0 = zero is not in pt_regs) */
const ABI_NAMES = ['zero', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7',
  's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10', 's11', 't3', 't4', 't5', 't6'];

export const RISCV64_REGS: RegInfo[] = [
  { name: 'epc', bits: 64, group: 'control' },
  ...ABI_NAMES.slice(1).map((name): RegInfo => ({ name, bits: 64, group: 'general' })),
  { name: 'status', bits: 64, group: 'control' },
  { name: 'badaddr', bits: 64, group: 'control' },
  { name: 'cause', bits: 64, group: 'control' },
  { name: 'orig_a0', bits: 64, group: 'general' },
];
/** pt_regs index of xN (N >= 1) */
const X = (n: number): number => n;
const EPC = 0, STATUS = 32;

/** sstatus bits of a trap frame (arch/riscv/include/asm/csr.h) */
export const SR_SIE = 0x2n;
export const SR_SPIE = 0x20n;
export const SR_SPP = 0x100n;

/**
 * regs->status as Linux's trap entry saves it: the trap moved SIE into SPIE
 * and cleared SIE, and SPP says where the trap came from (set: S-mode, the
 * kernel; clear: U-mode). Linux always returns to user space with SPIE set
 * (start_thread's SR_PIE), so a trap from user mode shows SPIE set.
 */
export function trapFrameStatus(live: bigint, userMode: boolean): bigint {
  const spie = userMode || (live & SR_SIE) !== 0n ? SR_SPIE : 0n;
  return (live & ~(SR_SIE | SR_SPIE | SR_SPP)) | spie | (userMode ? 0n : SR_SPP);
}

/** The live sstatus after a handler's regs->status (as sret: SIE from SPIE); SPP and SPIE stay as the CPU has them. */
export function statusFromTrapFrame(frame: bigint, live: bigint): bigint {
  return (frame & ~(SR_SIE | SR_SPIE | SR_SPP)) | ((frame & SR_SPIE) !== 0n ? SR_SIE : 0n) | (live & (SR_SPIE | SR_SPP));
}
const A = (n: number): number => X(10 + n);

export const riscv64Info: ArchInfo = {
  name: 'riscv64',
  aliases: ['riscv'],
  elfMachines: [EM_RISCV],
  hasCpu: true,
  regs: RISCV64_REGS,
  abi: {
    argRegs: [0, 1, 2, 3, 4, 5, 6, 7].map(A),
    retReg: A(0),
    spReg: X(2),
    pcReg: EPC,
    fpReg: X(8),
    returnAddress: { kind: 'reg', reg: X(1) },
    flagsReg: STATUS,
    hypercall: { nr: A(7), args: [A(0), A(1), A(2), A(3)], ret: A(0) },
    syscall: { nr: A(7), args: [0, 1, 2, 3, 4, 5].map(A), ret: A(0), insnSize: 4 },
    pointerSize: 8,
    charSigned: false,
    // scause exception codes: breakpoint 3, illegal instruction 2, load/store/fetch page faults 13/15/12
    trapNumbers: { breakpoint: 3, undefined: 2, pageFault: 13 },
  },
  // ebreak (the uncompressed form; c.ebreak is 0x9002)
  breakpointInsn: Uint8Array.of(0x73, 0x00, 0x10, 0x00),
  // c.ebreak over a compressed instruction (the original 2 bytes are kept and put back)
  shortBreakpoint: { bytes: Uint8Array.of(0x02, 0x90), mnemonic: 'c.ebreak' },
  breakpointPcOffset: 0,
  maxInsnLength: 4,
  minInsnLength: 2,
  // ret = jalr x0, 0(ra)
  returnInsn: Uint8Array.of(0x67, 0x80, 0x00, 0x00),
  frameRecord: { savedFpOffset: -16, returnAddressOffset: -8, callerSpOffset: 0 },
  // DWARF 0-31 = x0-x31 (x0 has no pt_regs slot)
  dwarfRegs: [-1, ...Array.from({ length: 31 }, (_, i) => X(i + 1))],
  // struct pt_regs: epc, ra .. t6, status, badaddr, cause, orig_a0 (the port's register order)
  ptRegsFrame: ['epc', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7',
    's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10', 's11', 't3', 't4', 't5', 't6', 'status', 'badaddr', 'cause', 'orig_a0'],
  optprobes: false,
  kernel: {
    layout: {
      // 16 MiB below the kernel image (auipc+jalr reach +-2 GiB)
      execArea: 0xffffffff7f000000n,
      execAreaSize: EXEC_AREA_SIZE,
      stackArea: 0xffffffc800000000n,
      stackSize: KERNEL_STACK_SIZE,
    },
    branchReach: 0x7fff0000,
    oops: { pcLabel: 'epc', regLabel: wordRegLabel, regsPerLine: 3, codeBefore: 16, codeAfter: 4, codeUnit: 2, codeMark: ['(', ')'] },
    user: { stackTop: 0x3ffffff000n, stackSize: USER_STACK_SIZE, platform: 'riscv64', hwcap: 0n,
      stat: 'generic', openFlags: { directory: 0o200000, nofollow: 0o400000 },
      cloneChildTidArg: 4, sigactionRestorer: false },
  },
  syscalls: GENERIC_SYSCALLS,
  // riscv_hwprobe (Linux 6.4): glibc 2.39+ asks it at start-up and goes on without it
  absentSyscalls: new Set([258]),
  unameMachine: 'riscv64',
  regAliases: { pc: 'epc', fp: 's0', x1: 'ra', x2: 'sp', x10: 'a0', x11: 'a1' },
};
