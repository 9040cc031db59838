/**
 * The image <-> emulated-kernel interface ("hypercalls"). The C side lives in
 * examples/include/kprobe_image.h and must agree with these numbers.
 *
 * A kernel image calls the emulated kernel with each arch's natural trap into
 * the layer below it:
 *   x86_64  : vmcall          nr in rax, args rdi rsi rdx rcx, result in rax
 *   aarch64 : hvc #0          nr in x8,  args x0  x1  x2  x3,  result in x0
 *   riscv64 : ecall (S-mode)  nr in a7,  args a0  a1  a2  a3,  result in a0
 * Negative results are -errno.
 */
export const enum Hypercall {
  /** console_write(const char *buf, unsigned long len) -> len. Lines become printk records. */
  ConsoleWrite = 1,
  /** power_off(long code): stops every CPU, the machine exits with code */
  PowerOff = 2,
  /** thread_create(void (*fn)(void *), void *arg, long cpu, const char *comm) -> pid.
   *  The thread starts on `cpu` (bound) as fn(arg); returning from fn ends the thread. */
  ThreadCreate = 3,
  /** yield(): let the next runnable task on this CPU run */
  Yield = 4,
  /** thread_exit(long code): end the current thread */
  ThreadExit = 5,
  /** cpu_id() -> the CPU this code runs on (smp_processor_id) */
  CpuId = 6,
  /** current_pid() -> pid of the current task */
  CurrentPid = 7,
  /** time_ns() -> virtual nanoseconds since boot (ktime_get) */
  TimeNs = 8,
  /** jiffies() -> timer ticks since boot (HZ = 1000 virtual) */
  Jiffies = 9,
  /** thread_join(pid) -> exit code of the thread once it has ended (blocks) */
  ThreadJoin = 10,
  /** nr_cpus() -> number of emulated CPUs */
  NrCpus = 11,
  /** user_init(long wait) -> user programs started (the machine's `exec` list), or with wait the first one's exit status once all ended */
  UserInit = 12,
  /** delete_module(const char *name, unsigned flags) -> 0 / -ENOENT / -EWOULDBLOCK / -EBUSY / -EFAULT: rmmod from a kernel thread (the exit runs after, in an rmmod thread) */
  DeleteModule = 13,
  /** trace_printk(unsigned long ip, const char *buf, unsigned long len) -> len: the text into the trace buffer (Kernel.tracePrintk) */
  TracePrintk = 14,
}

/** Section an image fills with addresses of functions kprobes must refuse (Linux NOKPROBE_SYMBOL). */
export const KPROBE_BLACKLIST_SECTION = '_kprobe_blacklist';
/** Section of (faulting insn address, fixup address) pairs, 2 x 8 bytes each (Linux __ex_table). */
export const EXCEPTION_TABLE_SECTION = '__ex_table';

/** Errno values used by the kernel model (Linux numbering). */
export const Errno = {
  EPERM: 1, ENOENT: 2, ESRCH: 3, EINTR: 4, EIO: 5, ENXIO: 6, E2BIG: 7, ENOEXEC: 8, EBADF: 9, ECHILD: 10, EAGAIN: 11, ENOMEM: 12,
  EACCES: 13, EFAULT: 14, EBUSY: 16, EEXIST: 17, EXDEV: 18, ENODEV: 19, ENOTDIR: 20, EISDIR: 21, EINVAL: 22, EMFILE: 24,
  ENOTTY: 25, ETXTBSY: 26, EFBIG: 27, ENOSPC: 28, ESPIPE: 29, EROFS: 30, EMLINK: 31, EPIPE: 32, ERANGE: 34, EDEADLK: 35,
  ENAMETOOLONG: 36, ENOSYS: 38, ENOTEMPTY: 39, ELOOP: 40, EILSEQ: 84, EOPNOTSUPP: 95,
} as const;
export type ErrnoName = keyof typeof Errno;
export function errnoName(n: number): string {
  const e = Math.abs(n);
  for (const [k, v] of Object.entries(Errno)) if (v === e) return k;
  return `E${e}`;
}
