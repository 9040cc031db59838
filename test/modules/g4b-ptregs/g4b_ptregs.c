/*
 * Test module: a kprobe on the sample kernel's do_fork whose pre_handler
 * reads the probed context only through Linux's <asm/ptrace.h> accessors
 * (user_mode, instruction_pointer, kernel_stack_pointer, regs_get_register
 * by offset, regs_get_kernel_argument, regs_get_kernel_stack_nth,
 * regs_within_kernel_stack) and prints them once. do_fork's first call has
 * the arguments (SIGCHLD | CLONE_VM | CLONE_FS | CLONE_FILES, 0x7ff0000,
 * NULL, 0x2000, &ptid, &ctid).
 * Built at test time with make -C examples/include M=<this dir>.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>

#if defined(__x86_64__)
#define IP_OFFSET offsetof(struct pt_regs, ip)
#elif defined(__aarch64__)
#define IP_OFFSET offsetof(struct pt_regs, pc)
#else
#define IP_OFFSET offsetof(struct pt_regs, epc)
#endif

static int seen;

static int g4b_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long sp = kernel_stack_pointer(regs);

	if (seen++)
		return 0;
	pr_info("user_mode=%d ip=%lx ip_by_offset=%lx sp=%lx sp_by_offset=%lx past_max=%lx\n",
		user_mode(regs) ? 1 : 0, instruction_pointer(regs), (unsigned long)regs_get_register(regs, IP_OFFSET),
		sp, (unsigned long)regs_get_register(regs, offsetof(struct pt_regs, sp)),
		(unsigned long)regs_get_register(regs, MAX_REG_OFFSET + sizeof(unsigned long)));
	pr_info("args=%lx,%lx,%lx,%lx\n", regs_get_kernel_argument(regs, 0), regs_get_kernel_argument(regs, 1),
		regs_get_kernel_argument(regs, 2), regs_get_kernel_argument(regs, 3));
	pr_info("stack0=%lx within=%d beyond=%d beyond_nth=%lx\n", regs_get_kernel_stack_nth(regs, 0),
		regs_within_kernel_stack(regs, sp), regs_within_kernel_stack(regs, (sp | (THREAD_SIZE - 1)) + 1),
		regs_get_kernel_stack_nth(regs, THREAD_SIZE / sizeof(unsigned long)));
	return 0;
}

static struct kprobe kp = {
	.symbol_name = "do_fork",
	.pre_handler = g4b_pre,
};

static int __init g4b_ptregs_init(void)
{
	return register_kprobe(&kp);
}

static void __exit g4b_ptregs_exit(void)
{
	unregister_kprobe(&kp);
}

module_init(g4b_ptregs_init);
module_exit(g4b_ptregs_exit);
MODULE_LICENSE("GPL");
