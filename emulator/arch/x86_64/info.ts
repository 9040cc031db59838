/**
 * The x86_64 port's info part (loads without the CPU): pt_regs register
 * file, ABI, instruction facts, kernel layout and oops style, system call
 * numbers (arch/x86/entry/syscalls/syscall_64.tbl).
 */
import type { ArchInfo, SyscallName } from '../types';
import { EXEC_AREA_SIZE, KERNEL_STACK_SIZE, USER_STACK_SIZE } from '../archKernel';
import { X86_REGS } from './regs';

/** ELF e_machine EM_X86_64 */
export const EM_X86_64 = 62;

/** X86_EFLAGS_IF: interrupts enabled */
export const X86_EFLAGS_IF = 0x200n;

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
  0: 'read', 1: 'write', 2: 'open', 3: 'close', 4: 'stat', 5: 'fstat', 6: 'lstat', 8: 'lseek', 9: 'mmap', 10: 'mprotect',
  11: 'munmap', 12: 'brk', 13: 'rt_sigaction', 14: 'rt_sigprocmask', 15: 'rt_sigreturn', 16: 'ioctl', 17: 'pread64',
  18: 'pwrite64', 19: 'readv', 20: 'writev', 21: 'access', 22: 'pipe', 24: 'sched_yield', 28: 'madvise', 32: 'dup',
  33: 'dup2', 34: 'pause', 35: 'nanosleep', 39: 'getpid', 56: 'clone', 57: 'fork', 58: 'vfork', 59: 'execve', 60: 'exit',
  61: 'wait4', 62: 'kill', 63: 'uname', 72: 'fcntl', 74: 'fsync', 75: 'fdatasync', 76: 'truncate', 77: 'ftruncate',
  79: 'getcwd', 80: 'chdir', 81: 'fchdir', 82: 'rename', 83: 'mkdir', 84: 'rmdir', 85: 'creat', 86: 'link', 87: 'unlink',
  88: 'symlink', 89: 'readlink', 90: 'chmod', 91: 'fchmod', 92: 'chown', 93: 'fchown', 94: 'lchown', 95: 'umask',
  96: 'gettimeofday', 97: 'getrlimit', 102: 'getuid', 104: 'getgid', 107: 'geteuid', 108: 'getegid', 109: 'setpgid',
  110: 'getppid', 111: 'getpgrp', 112: 'setsid', 115: 'getgroups', 121: 'getpgid', 124: 'getsid', 130: 'rt_sigsuspend',
  131: 'sigaltstack', 158: 'arch_prctl', 186: 'gettid', 200: 'tkill', 202: 'futex', 217: 'getdents64',
  218: 'set_tid_address', 228: 'clock_gettime', 229: 'clock_getres', 230: 'clock_nanosleep', 231: 'exit_group',
  234: 'tgkill', 257: 'openat', 258: 'mkdirat', 260: 'fchownat', 262: 'newfstatat', 263: 'unlinkat', 264: 'renameat',
  265: 'linkat', 266: 'symlinkat', 267: 'readlinkat', 268: 'fchmodat', 269: 'faccessat', 273: 'set_robust_list',
  292: 'dup3', 293: 'pipe2', 302: 'prlimit64', 316: 'renameat2', 318: 'getrandom', 332: 'statx', 439: 'faccessat2',
  334: 'rseq', 26: 'msync', 201: 'time', 157: 'prctl', 204: 'sched_getaffinity', 99: 'sysinfo', 100: 'times', 98: 'getrusage', 7: 'poll', 271: 'ppoll',
  165: 'mount', 166: 'umount2', 175: 'init_module', 176: 'delete_module', 313: 'finit_module',
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
    syscall: { nr: R('ax'), args: [R('di'), R('si'), R('dx'), R('r10'), R('r8'), R('r9')], ret: R('ax'), insnSize: 2 },
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
  // struct pt_regs: r15 .. di, orig_ax, ip, cs, flags, sp, ss
  ptRegsFrame: ['r15', 'r14', 'r13', 'r12', 'bp', 'bx', 'r11', 'r10', 'r9', 'r8', 'ax', 'cx', 'dx', 'si', 'di',
    { name: 'orig_ax', value: -1n }, 'ip', { name: 'cs', value: 0x10n }, 'flags', 'sp', { name: 'ss', value: 0x18n }],
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
    user: { stackTop: 0x7ffffffff000n, stackSize: USER_STACK_SIZE, platform: 'x86_64', hwcap: 0x7008111n, // cpuid leaf 1 edx (exec/system.ts CPUID1_EDX)
      stat: 'x86_64', openFlags: { directory: 0o200000, nofollow: 0o400000 },
      cloneChildTidArg: 3, sigactionRestorer: true },
  },
  syscalls: SYSCALLS,
  unameMachine: 'x86_64',
  regAliases: {
    rax: 'ax', rbx: 'bx', rcx: 'cx', rdx: 'dx', rsi: 'si', rdi: 'di', rbp: 'bp', rsp: 'sp', rip: 'ip',
    eflags: 'flags', rflags: 'flags', orig_rax: 'orig_ax',
  },
};
