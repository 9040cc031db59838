/**
 * Linux system call numbers per architecture, keyed by ArchOps.name.
 * x86_64 has its own table (arch/x86/entry/syscalls/syscall_64.tbl);
 * aarch64 and riscv64 use the generic one (include/uapi/asm-generic/unistd.h).
 * Only calls the emulated kernel implements (or knowingly stubs) are named.
 */
export type SyscallName =
  | 'read' | 'write' | 'writev' | 'close' | 'exit' | 'exit_group' | 'getpid' | 'gettid' | 'getppid'
  | 'brk' | 'mmap' | 'munmap' | 'mprotect' | 'arch_prctl' | 'set_tid_address' | 'set_robust_list'
  | 'uname' | 'clock_gettime' | 'getrandom' | 'ioctl' | 'getuid' | 'geteuid' | 'getgid' | 'getegid'
  | 'rt_sigaction' | 'rt_sigprocmask' | 'sched_yield' | 'nanosleep';

const X86_64: Record<number, SyscallName> = {
  0: 'read', 1: 'write', 3: 'close', 9: 'mmap', 10: 'mprotect', 11: 'munmap', 12: 'brk',
  13: 'rt_sigaction', 14: 'rt_sigprocmask', 16: 'ioctl', 20: 'writev', 24: 'sched_yield', 35: 'nanosleep',
  39: 'getpid', 60: 'exit', 63: 'uname', 102: 'getuid', 104: 'getgid', 107: 'geteuid', 108: 'getegid',
  110: 'getppid', 158: 'arch_prctl', 186: 'gettid', 218: 'set_tid_address', 228: 'clock_gettime',
  231: 'exit_group', 273: 'set_robust_list', 318: 'getrandom',
};

const GENERIC: Record<number, SyscallName> = {
  29: 'ioctl', 57: 'close', 63: 'read', 64: 'write', 66: 'writev', 93: 'exit', 94: 'exit_group',
  96: 'set_tid_address', 99: 'set_robust_list', 101: 'nanosleep', 113: 'clock_gettime', 124: 'sched_yield',
  134: 'rt_sigaction', 135: 'rt_sigprocmask', 160: 'uname', 172: 'getpid', 173: 'getppid', 174: 'getuid',
  175: 'geteuid', 176: 'getgid', 177: 'getegid', 178: 'gettid', 214: 'brk', 215: 'munmap', 222: 'mmap',
  226: 'mprotect', 278: 'getrandom',
};

export const SYSCALL_NUMBERS: Readonly<Record<string, Readonly<Record<number, SyscallName>>>> = {
  x86_64: X86_64,
  aarch64: GENERIC,
  riscv64: GENERIC,
};

/** `uname -m` of each architecture */
export const UNAME_MACHINE: Readonly<Record<string, string>> = { x86_64: 'x86_64', aarch64: 'aarch64', riscv64: 'riscv64' };
