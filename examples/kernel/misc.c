/*
 * misc.c - functions with shapes kprobes cares about: recursion, a jump
 * table, PC-relative and call instructions in the first bytes, a
 * blacklisted function and an exception-table entry.
 */
#include "kernel.h"

unsigned int fib_last_leaf;

/* Recursive Fibonacci (kretprobe maxactive / nmissed material). */
noinline unsigned long fib(unsigned int n)
{
	if (n < 2) {
		WRITE_ONCE(fib_last_leaf, n); /* #BP fib_base */
		return n;
	}
	return fib(n - 1) + fib(n - 2);
}

static noinline long sys_getppid_stub(long a) { return a + 1; }
static noinline long sys_umask_stub(long a) { return a & 0777; }

/*
 * A dense switch; the x86_64 build dispatches it with an indirect jmp through
 * a table in .rodata (checked by build.sh).
 */
noinline long syscall_dispatch(unsigned int nr, long a, long b)
{
	long r;
	switch (nr) {
	case 0:
		r = a + b; /* #BP dispatch_case0 */
		break;
	case 1:
		r = a - b * 3;
		break;
	case 2:
		r = sys_getppid_stub(a) ^ b;
		break;
	case 3:
		r = (a << 4) | (b & 15);
		break;
	case 4:
		r = sys_umask_stub(a * b);
		break;
	case 5:
		r = a > b ? a : b;
		break;
	case 6:
		r = (long)fib((unsigned)(a & 7));
		break;
	case 7:
		r = ~a + (b >> 2);
		break;
	case 8:
		r = a * 5 - b;
		break;
	case 9:
		r = (a ^ 0x5a5a) + 7;
		break;
	case 10:
		r = b - a;
		break;
	default:
		r = -38; /* -ENOSYS */
		break;
	}
	return r;
}

/* Counter read by read_boot_counter(); not atomic on purpose (no locking). */
unsigned long boot_counter;

/*
 * read_boot_counter: its FIRST instruction is PC-relative (x86_64 RIP-relative
 * mov, aarch64 adrp, riscv64 auipc), so a probe there must relocate or
 * simulate it. Returns the counter and increments it.
 */
__attribute__((naked)) unsigned long read_boot_counter(void)
{
#if defined(__x86_64__)
	__asm__("movq boot_counter(%rip), %rax\n\t"
		"incq boot_counter(%rip)\n\t"
		"ret");
#elif defined(__aarch64__)
	__asm__("adrp x1, boot_counter\n\t"
		"add x1, x1, :lo12:boot_counter\n\t"
		"ldr x0, [x1]\n\t"
		"add x2, x0, #1\n\t"
		"str x2, [x1]\n\t"
		"ret");
#else
	__asm__("1: auipc a1, %pcrel_hi(boot_counter)\n\t"
		"addi a1, a1, %pcrel_lo(1b)\n\t"
		"ld a0, 0(a1)\n\t"
		"addi a2, a0, 1\n\t"
		"sd a2, 0(a1)\n\t"
		"ret");
#endif
}

/* An ftrace-style hook: does nothing. */
__attribute__((naked)) void __fentry__(void)
{
#if defined(__x86_64__)
	__asm__("ret");
#elif defined(__aarch64__)
	__asm__("ret");
#else
	__asm__("ret");
#endif
}

noinline unsigned long traced_function_body(unsigned long x)
{
	return x * 2 + 1;
}

/*
 * traced_function: starts with a call, like a function compiled with
 * -mfentry (x86_64: `call __fentry__` is the first instruction; aarch64 and
 * riscv64 save the link register first, then call).
 */
__attribute__((naked)) unsigned long traced_function(unsigned long x)
{
#if defined(__x86_64__)
	__asm__("call __fentry__\n\t"
		"jmp traced_function_body");
#elif defined(__aarch64__)
	__asm__("mov x9, x30\n\t"
		"bl __fentry__\n\t"
		"mov x30, x9\n\t"
		"b traced_function_body");
#else
	__asm__("mv t0, ra\n\t"
		"call __fentry__\n\t"
		"mv ra, t0\n\t"
		"tail traced_function_body");
#endif
}

static long die_count;

/* Blacklisted: kprobes must refuse it (register_kprobe -> -EINVAL). */
noinline int notify_die(unsigned long val, const char *str, long err)
{
	atomic_add_return(1, &die_count);
	return (int)((val + (unsigned long)err + str[0]) & 1); /* #BP notify_die */
}
NOKPROBE_SYMBOL(notify_die);

/*
 * Read a long that may not be mapped; a fault on the load resumes at the
 * fixup through __ex_table and the function returns -EFAULT.
 */
noinline long probe_kernel_read_long(long *dst, const long *src)
{
	long val, err;
#if defined(__x86_64__)
	__asm__ __volatile__("1: movq (%[src]), %[val]\n\t"
			     "xorl %k[err], %k[err]\n\t"
			     "jmp 3f\n"
			     "2: movq $-14, %[err]\n\t"
			     "xorl %k[val], %k[val]\n"
			     "3:\n"
			     KP_EXTABLE(1b, 2b)
			     : [val] "=&r"(val), [err] "=&r"(err)
			     : [src] "r"(src)
			     : "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("1: ldr %[val], [%[src]]\n\t"
			     "mov %[err], #0\n\t"
			     "b 3f\n"
			     "2: mov %[err], #-14\n\t"
			     "mov %[val], #0\n"
			     "3:\n"
			     KP_EXTABLE(1b, 2b)
			     : [val] "=&r"(val), [err] "=&r"(err)
			     : [src] "r"(src)
			     : "memory");
#else
	__asm__ __volatile__("1: ld %[val], 0(%[src])\n\t"
			     "li %[err], 0\n\t"
			     "j 3f\n"
			     "2: li %[err], -14\n\t"
			     "li %[val], 0\n"
			     "3:\n"
			     KP_EXTABLE(1b, 2b)
			     : [val] "=&r"(val), [err] "=&r"(err)
			     : [src] "r"(src)
			     : "memory");
#endif
	*dst = val;
	return err; /* #BP probe_read_done */
}

/* Exported to modules: notify_die is GPL-only in Linux (kernel/notifier.c);
 * boot_counter is the sample kernel's counter modules may read (kwatch_example
 * watches it). fib_last_leaf, last_failed_open & co. stay private. */
EXPORT_SYMBOL_GPL(notify_die);
EXPORT_SYMBOL(boot_counter);
