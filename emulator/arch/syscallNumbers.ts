/**
 * The generic Linux system call table (include/uapi/asm-generic/unistd.h),
 * shared by the ports that use it (aarch64, riscv64). A port with its own
 * table keeps it in its info part (x86_64: emulator/arch/x86_64/info.ts,
 * from arch/x86/entry/syscalls/syscall_64.tbl). Only calls the emulated
 * kernel implements (or knowingly stubs) are named.
 */
import type { SyscallName } from './types';

export type { SyscallName };

export const GENERIC_SYSCALLS: Readonly<Record<number, SyscallName>> = {
  17: 'getcwd', 23: 'dup', 24: 'dup3', 25: 'fcntl', 29: 'ioctl', 34: 'mkdirat', 35: 'unlinkat', 36: 'symlinkat',
  37: 'linkat', 38: 'renameat', 45: 'truncate', 46: 'ftruncate', 48: 'faccessat', 49: 'chdir', 50: 'fchdir', 52: 'fchmod',
  53: 'fchmodat', 54: 'fchownat', 55: 'fchown', 56: 'openat', 57: 'close', 59: 'pipe2', 61: 'getdents64', 62: 'lseek',
  63: 'read', 64: 'write', 65: 'readv', 66: 'writev', 67: 'pread64', 68: 'pwrite64', 78: 'readlinkat', 79: 'newfstatat',
  80: 'fstat', 82: 'fsync', 83: 'fdatasync', 93: 'exit', 94: 'exit_group', 96: 'set_tid_address', 98: 'futex',
  99: 'set_robust_list', 101: 'nanosleep', 113: 'clock_gettime', 114: 'clock_getres', 115: 'clock_nanosleep',
  124: 'sched_yield', 129: 'kill', 130: 'tkill', 131: 'tgkill', 132: 'sigaltstack', 133: 'rt_sigsuspend',
  134: 'rt_sigaction', 135: 'rt_sigprocmask', 139: 'rt_sigreturn', 154: 'setpgid', 155: 'getpgid', 156: 'getsid',
  157: 'setsid', 158: 'getgroups', 160: 'uname', 163: 'getrlimit', 166: 'umask', 169: 'gettimeofday', 172: 'getpid',
  173: 'getppid', 174: 'getuid', 175: 'geteuid', 176: 'getgid', 177: 'getegid', 178: 'gettid', 214: 'brk',
  215: 'munmap', 220: 'clone', 221: 'execve', 222: 'mmap', 226: 'mprotect', 233: 'madvise', 260: 'wait4',
  261: 'prlimit64', 276: 'renameat2', 278: 'getrandom', 291: 'statx', 439: 'faccessat2',
  293: 'rseq', 227: 'msync', 167: 'prctl', 123: 'sched_getaffinity', 179: 'sysinfo', 153: 'times', 165: 'getrusage', 73: 'ppoll',
  39: 'umount2', 40: 'mount', 105: 'init_module', 106: 'delete_module', 273: 'finit_module',
};
