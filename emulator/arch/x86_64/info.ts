/**
 * The x86_64 port's info part (loads without the CPU): pt_regs register
 * file, ABI, instruction facts, kernel layout and oops style, system call
 * numbers (arch/x86/entry/syscalls/syscall_64.tbl).
 */
import type { ArchInfo, SyscallName } from '../types';
import { EXEC_AREA_SIZE, KERNEL_STACK_SIZE, USER_STACK_SIZE } from '../../kernel/archKernel';
import { X86_REGS } from './regs';

/** ELF e_machine EM_X86_64 */
export const EM_X86_64 = 62;

const R = (name: string): number => {
  const i = X86_REGS.findIndex(r => r.name === name);
  if (i < 0) throw new Error(`x86_64: no register ${name}`);
  return i;
};

const X86_GPRS = new Set(['ax', 'bx', 'cx', 'dx', 'si', 'di', 'bp', 'sp']);
/** register labels as x86's show_regs prints them (RAX, R08, EFLAGS, ORIG_RAX) */
const x86RegLabel = (name: string): string => {
  if (name === 'flags') return 'EFLAGS';
  if (name === 'orig_ax') return 'ORIG_RAX';
  const m = /^r(\d+)$/.exec(name);
  if (m) return 'R' + m[1].padStart(2, '0');
  if (X86_GPRS.has(name)) return 'R' + name.toUpperCase();
  return name.toUpperCase();
};

const SYSCALLS: Readonly<Record<number, SyscallName>> = {
  0: 'read', 1: 'write', 3: 'close', 9: 'mmap', 10: 'mprotect', 11: 'munmap', 12: 'brk',
  13: 'rt_sigaction', 14: 'rt_sigprocmask', 16: 'ioctl', 20: 'writev', 24: 'sched_yield', 35: 'nanosleep',
  39: 'getpid', 60: 'exit', 63: 'uname', 102: 'getuid', 104: 'getgid', 107: 'geteuid', 108: 'getegid',
  110: 'getppid', 158: 'arch_prctl', 186: 'gettid', 218: 'set_tid_address', 228: 'clock_gettime',
  231: 'exit_group', 273: 'set_robust_list', 318: 'getrandom',
};

export const x86_64Info: ArchInfo = {
  name: 'x86_64',
  aliases: ['x86-64', 'amd64', 'x64'],
  elfMachines: [EM_X86_64],
  hasCpu: true,
  regs: X86_REGS,
  abi: {
    argRegs: [R('di'), R('si'), R('dx'), R('cx'), R('r8'), R('r9')],
    retReg: R('ax'),
    spReg: R('sp'),
    pcReg: R('ip'),
    fpReg: R('bp'),
    returnAddress: { kind: 'stack', offset: 0 },
    flagsReg: R('flags'),
    hypercall: { nr: R('ax'), args: [R('di'), R('si'), R('dx'), R('cx')], ret: R('ax') },
    syscall: { nr: R('ax'), args: [R('di'), R('si'), R('dx'), R('r10'), R('r8'), R('r9')], ret: R('ax') },
    pointerSize: 8,
    charSigned: true,
    trapNumbers: { divide: 0, singleStep: 1, breakpoint: 3, undefined: 6, generalProtection: 13, pageFault: 14 },
  },
  breakpointInsn: Uint8Array.of(0xcc),
  breakpointPcOffset: 1,
  maxInsnLength: 15,
  minInsnLength: 1,
  returnInsn: Uint8Array.of(0xc3),
  frameRecord: { savedFpOffset: 0, returnAddressOffset: 8, callerSpOffset: 16, pushFp: { bytes: Uint8Array.of(0x55), spAdjust: 8 } },
  // x86_64 psABI DWARF numbers 0-16: rax rdx rcx rbx rsi rdi rbp rsp r8-r15, return address (rip)
  dwarfRegs: ['ax', 'dx', 'cx', 'bx', 'si', 'di', 'bp', 'sp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'ip'].map(R),
  optprobes: true,
  kernel: {
    layout: {
      // Linux's module area: within +-2 GiB of the kernel text at 0xffffffff81000000
      execArea: 0xffffffffa0000000n,
      execAreaSize: EXEC_AREA_SIZE,
      // Linux's vmalloc area, where VMAP_STACK thread stacks live
      stackArea: 0xffffc90000000000n,
      stackSize: KERNEL_STACK_SIZE,
    },
    branchReach: 0x7fff0000,
    oops: { pcLabel: 'RIP', regLabel: x86RegLabel, regsPerLine: 3, codeBefore: 43, codeAfter: 21, codeUnit: 1, codeMark: ['<', '>'] },
    user: { stackTop: 0x7ffffffff000n, stackSize: USER_STACK_SIZE, platform: 'x86_64', hwcap: 0x178bfbffn },
  },
  syscalls: SYSCALLS,
  unameMachine: 'x86_64',
  regAliases: {
    rax: 'ax', rbx: 'bx', rcx: 'cx', rdx: 'dx', rsi: 'si', rdi: 'di', rbp: 'bp', rsp: 'sp', rip: 'ip',
    eflags: 'flags', rflags: 'flags', orig_rax: 'orig_ax',
  },
};
