/*
 * kprobe_image.h - the interface between a kernel image and kprobe-debug's
 * emulated kernel.
 *
 * This header is the C side of emulator/kernel/abi.ts; the numbers and the
 * register conventions below must stay identical to that file.
 *
 * HOW TO WRITE YOUR OWN IMAGE
 * ---------------------------
 * - Build a freestanding, statically linked ELF64 executable for x86_64,
 *   aarch64 or riscv64 (no libc; see examples/kernel/build.sh for flags).
 *   Keep debug info (-g) so that breakpoints by source line work.
 * - The entry point (e_entry) is called on CPU 0 as
 *       void start_kernel(void);
 *   with a valid stack aligned as the ABI requires at a call (16 bytes at the
 *   call site; on x86_64 the return address is already pushed). Returning from
 *   start_kernel powers the machine off with exit code 0.
 * - The other CPUs idle until threads are created for them. A thread created
 *   with kp_thread_create(fn, arg, cpu, comm) starts on CPU `cpu` (and stays
 *   bound to it) as a call fn(arg); it ends when fn returns or when it calls
 *   kp_thread_exit(code). kp_thread_join(pid) waits for it and returns its
 *   exit code (0 when fn returned).
 * - Everything written with kp_console_write becomes kernel log (printk)
 *   records, one per line.
 * - Functions that kprobes must never probe are listed with
 *   NOKPROBE_SYMBOL(fn), exactly as in Linux (section _kprobe_blacklist).
 * - Instructions allowed to fault (a guarded load, copy_from_user style)
 *   are listed in __ex_table as (instruction address, fixup address) pairs;
 *   the emulated kernel resumes at the fixup address on a fault there.
 * - A kernel image's .kprobes.text section is not read: mark its
 *   functions NOKPROBE_SYMBOL instead (modern Linux does the same). A
 *   module's __kprobes (.kprobes.text) and noinstr (.noinstr.text)
 *   functions are blacklisted while it is loaded, as Linux does.
 *
 * Hypercalls ("calls into the layer below the kernel"):
 *   x86_64 : vmcall   nr in rax, args rdi rsi rdx rcx, result in rax
 *   aarch64: hvc #0   nr in x8,  args x0  x1  x2  x3,  result in x0
 *   riscv64: ecall    nr in a7,  args a0  a1  a2  a3,  result in a0
 * A negative result is -errno (Linux numbering). All other registers are
 * preserved.
 */
#ifndef KPROBE_IMAGE_H
#define KPROBE_IMAGE_H

/* Hypercall numbers (emulator/kernel/abi.ts, enum Hypercall). */
#define KP_HC_CONSOLE_WRITE 1  /* (const char *buf, unsigned long len) -> len */
#define KP_HC_POWER_OFF     2  /* (long code): stop every CPU, machine exits with code */
#define KP_HC_THREAD_CREATE 3  /* (void (*fn)(void *), void *arg, long cpu, const char *comm) -> pid */
#define KP_HC_YIELD         4  /* (): run the next runnable task on this CPU */
#define KP_HC_THREAD_EXIT   5  /* (long code): end the current thread */
#define KP_HC_CPU_ID        6  /* () -> smp_processor_id() */
#define KP_HC_CURRENT_PID   7  /* () -> pid of current */
#define KP_HC_TIME_NS       8  /* () -> virtual ns since boot */
#define KP_HC_JIFFIES       9  /* () -> ticks since boot (HZ = 1000 virtual) */
#define KP_HC_THREAD_JOIN   10 /* (long pid) -> exit code of that thread (blocks) */
#define KP_HC_NR_CPUS       11 /* () -> number of emulated CPUs */
#define KP_HC_USER_INIT     12 /* (long wait) -> programs started, or (wait) the first one's exit status */
#define KP_HC_DELETE_MODULE 13 /* (const char *name, unsigned flags) -> 0 or -errno: unload a module (rmmod) */
#define KP_HC_TRACE_PRINTK  14 /* (unsigned long ip, const char *buf, unsigned long len) -> len: into the trace buffer */

/* Section names (emulator/kernel/abi.ts). */
#define KP_BLACKLIST_SECTION "_kprobe_blacklist"
#define KP_EXTABLE_SECTION   "__ex_table"

#ifdef KP_HYPERCALL_HOOK
/* Hosted testing: define KP_HYPERCALL_HOOK to the name of a function
 * long f(long nr, long a0, long a1, long a2, long a3) to run an image's C code
 * as an ordinary program (no trap instruction is emitted then). */
long KP_HYPERCALL_HOOK(long nr, long a0, long a1, long a2, long a3);
#endif

static inline long kp_hypercall4(long nr, long a0, long a1, long a2, long a3)
{
#if defined(KP_HYPERCALL_HOOK)
	return KP_HYPERCALL_HOOK(nr, a0, a1, a2, a3);
#elif defined(__x86_64__)
	long ret;
	__asm__ __volatile__("vmcall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "c"(a3)
			     : "memory", "cc");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;
	register long x3 __asm__("x3") = a3;
	__asm__ __volatile__("hvc #0"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
			     : "memory", "cc");
	return x0;
#elif defined(__riscv) && __riscv_xlen == 64
	register long a7 __asm__("a7") = nr;
	register long r0 __asm__("a0") = a0;
	register long r1 __asm__("a1") = a1;
	register long r2 __asm__("a2") = a2;
	register long r3 __asm__("a3") = a3;
	__asm__ __volatile__("ecall"
			     : "+r"(r0)
			     : "r"(a7), "r"(r1), "r"(r2), "r"(r3)
			     : "memory");
	return r0;
#else
#error "kprobe_image.h: unsupported architecture (x86_64, aarch64, riscv64)"
#endif
}

static inline long kp_hypercall0(long nr) { return kp_hypercall4(nr, 0, 0, 0, 0); }
static inline long kp_hypercall1(long nr, long a0) { return kp_hypercall4(nr, a0, 0, 0, 0); }

/* Write len bytes to the console; complete lines become printk records. */
static inline long kp_console_write(const char *buf, unsigned long len)
{
	return kp_hypercall4(KP_HC_CONSOLE_WRITE, (long)buf, (long)len, 0, 0);
}

/* Stop every CPU; the machine exits with `code`. Does not return. */
static inline __attribute__((noreturn)) void kp_power_off(long code)
{
	kp_hypercall1(KP_HC_POWER_OFF, code);
	for (;;)
		;
}

/* Start fn(arg) as a kernel thread bound to `cpu`, named `comm` (<= 15 chars
 * kept, like task->comm). Returns its pid, or -errno. */
static inline long kp_thread_create(void (*fn)(void *), void *arg, long cpu, const char *comm)
{
	return kp_hypercall4(KP_HC_THREAD_CREATE, (long)fn, (long)arg, cpu, (long)comm);
}

/* Let the next runnable task on this CPU run (schedule()). */
static inline void kp_yield(void) { kp_hypercall0(KP_HC_YIELD); }

/* End the current thread with `code`. Does not return. */
static inline __attribute__((noreturn)) void kp_thread_exit(long code)
{
	kp_hypercall1(KP_HC_THREAD_EXIT, code);
	for (;;)
		;
}

/* smp_processor_id() */
static inline long kp_cpu_id(void) { return kp_hypercall0(KP_HC_CPU_ID); }
/* current->pid */
static inline long kp_current_pid(void) { return kp_hypercall0(KP_HC_CURRENT_PID); }
/* ktime_get(): virtual nanoseconds since boot */
static inline unsigned long kp_time_ns(void) { return (unsigned long)kp_hypercall0(KP_HC_TIME_NS); }
/* jiffies (HZ = 1000 virtual) */
static inline unsigned long kp_jiffies(void) { return (unsigned long)kp_hypercall0(KP_HC_JIFFIES); }
/* Wait for thread `pid` to end; returns its exit code, or -errno. */
static inline long kp_thread_join(long pid) { return kp_hypercall1(KP_HC_THREAD_JOIN, pid); }
/* Number of emulated CPUs. */
static inline long kp_nr_cpus(void) { return kp_hypercall0(KP_HC_NR_CPUS); }

/*
 * Start user space, as Linux's kernel_init runs init: every program the
 * machine was given (kprobe-run run --exec "/bin/prog args", the launch
 * attribute `exec`) becomes a user process, from the machine's filesystem
 * (--rootfs / --initramfs / `rootfs`), its output on the console. Returns
 * how many started (0: none given), or -errno when one cannot start (the
 * reason in the kernel log). With `wait`, blocks until they have all ended
 * and returns the first one's exit status as a shell reports it (128 + N
 * when killed by signal N). Start first and wait later: kp_user_init(0),
 * then kp_user_init(1) waits for the programs the first call started; any
 * other further call returns -EBUSY. A kernel given programs that powers
 * off without calling it is reported: they never ran.
 */
static inline long kp_user_init(long wait) { return kp_hypercall1(KP_HC_USER_INIT, wait); }

/*
 * NOKPROBE_SYMBOL(fn): kprobes refuses to probe fn (register_kprobe returns
 * -EINVAL), as Linux does: the address of fn goes into _kprobe_blacklist.
 */
#define __KP_PASTE2(a, b) a##b
#define __KP_PASTE(a, b) __KP_PASTE2(a, b)
#define NOKPROBE_SYMBOL(fname)                                                 \
	static unsigned long __attribute__((__used__, __aligned__(8),         \
					    __section__(KP_BLACKLIST_SECTION)))  \
	__KP_PASTE(_kbl_addr_, fname) = (unsigned long)(fname)

/*
 * Exception table, for use inside inline asm: KP_EXTABLE(insn, fixup) emits
 * one 16-byte entry (8-byte absolute address of the instruction that may
 * fault, 8-byte absolute address to resume at). Labels are assembler labels,
 * typically local numeric ones:
 *
 *     asm volatile("1: ldr %0, [%2]\n"
 *                  "   mov %1, #0\n"
 *                  "   b 3f\n"
 *                  "2: mov %1, #-14\n"
 *                  "3:\n"
 *                  KP_EXTABLE(1b, 2b) ...);
 */
#define KP_EXTABLE(insn, fixup)                                                \
	".pushsection " KP_EXTABLE_SECTION ", \"a\"\n"                         \
	".balign 8\n"                                                          \
	".quad " #insn ", " #fixup "\n"                                        \
	".popsection\n"

/* Linux spelling of the same thing. */
#define _ASM_EXTABLE(insn, fixup) KP_EXTABLE(insn, fixup)

#endif /* KPROBE_IMAGE_H */
