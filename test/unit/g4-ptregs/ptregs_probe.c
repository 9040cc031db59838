/*
 * Test module: a kprobe on do_fork whose pre_handler prints the pt_regs
 * fields Linux's trap entry fills from the CPU's mode (x86_64 flags / cs /
 * ss, arm64 pstate, riscv status) and user_mode(regs) as Linux's
 * asm/ptrace.h defines it on each arch. Built by build.sh.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

#if defined(__x86_64__)
#define user_mode(regs) (!!((regs)->cs & 3))
#elif defined(__aarch64__)
#define PSR_MODE_MASK 0x0000000f
#define PSR_MODE_EL0t 0x00000000
#define user_mode(regs) (((regs)->pstate & PSR_MODE_MASK) == PSR_MODE_EL0t)
#elif defined(__riscv)
#define SR_SPP 0x00000100UL
#define user_mode(regs) (((regs)->status & SR_SPP) == 0)
#endif

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
