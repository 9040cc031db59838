/*
 * Test module: a kprobe on do_fork whose pre_handler prints the pt_regs
 * fields Linux's trap entry fills from the CPU's mode (x86_64 flags / cs /
 * ss, arm64 pstate, riscv status) and user_mode(regs) from the headers'
 * <asm/ptrace.h> (Linux's definition on each arch). Built by build.sh.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

static struct kprobe kp;
static int seen;

int ptregs_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (seen++)
		return 0;
#if defined(__x86_64__)
	printk("ptregs: user_mode=%d flags=%lx cs=%lx ss=%lx\n", user_mode(regs), regs->flags, regs->cs, regs->ss);
#elif defined(__aarch64__)
	printk("ptregs: user_mode=%d pstate=%lx\n", user_mode(regs), regs->pstate);
#elif defined(__riscv)
	printk("ptregs: user_mode=%d status=%lx\n", user_mode(regs), regs->status);
#endif
	return 0;
}

static int __init ptregs_init(void)
{
	kp.pre_handler = ptregs_pre;
	kp.symbol_name = "do_fork";
	return register_kprobe(&kp);
}

static void __exit ptregs_exit(void)
{
	unregister_kprobe(&kp);
}

module_init(ptregs_init)
module_exit(ptregs_exit)
MODULE_LICENSE("GPL")
MODULE_NAME("ptregs_probe")
