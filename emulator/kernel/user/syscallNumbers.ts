/**
 * The generic Linux system call table (include/uapi/asm-generic/unistd.h),
 * shared by the ports that use it (aarch64, riscv64). A port with its own
 * table keeps it in its info part (x86_64: emulator/arch/x86_64/info.ts,
 * from arch/x86/entry/syscalls/syscall_64.tbl). Only calls the emulated
 * kernel implements (or knowingly stubs) are named.
 */
import type { SyscallName } from '../../arch/types';

export type { SyscallName };

export const GENERIC_SYSCALLS: Readonly<Record<number, SyscallName>> = {
  29: 'ioctl', 57: 'close', 63: 'read', 64: 'write', 66: 'writev', 93: 'exit', 94: 'exit_group',
  96: 'set_tid_address', 99: 'set_robust_list', 101: 'nanosleep', 113: 'clock_gettime', 124: 'sched_yield',
  134: 'rt_sigaction', 135: 'rt_sigprocmask', 160: 'uname', 172: 'getpid', 173: 'getppid', 174: 'getuid',
  175: 'geteuid', 176: 'getgid', 177: 'getegid', 178: 'gettid', 214: 'brk', 215: 'munmap', 222: 'mmap',
  226: 'mprotect', 278: 'getrandom',
};
