/*
 * Kprobes that the kernel hits without a breakpoint, as a module of the
 * sample kernel: an optimized probe on fib (a pre_handler only, so that
 * the probe can be optimized into a jump to a detour buffer) and an
 * ftrace-based probe on traced_function's `call __fentry__` ([FTRACE] on
 * x86_64; an ordinary kprobe on the other arches). Build:
 * examples/modules/build.sh; run:
 *   node dist/cli.js run --module examples/modules/build/fast_kprobe_example-x86_64.ko
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

static struct kprobe fib_kp;
static struct kprobe traced_kp;

/* fib runs thousands of times: its handler counts instead of printing */
unsigned long fib_hits;
/* where the last hit stood, from the probed address */
unsigned long fib_last_off;
/* post_handler calls */
unsigned long traced_posts;

int fib_pre(struct kprobe *p, struct pt_regs *regs)
{
	fib_hits++;
	fib_last_off = instruction_pointer(regs) - (unsigned long)p->addr;
	return 0;
}

int traced_pre(struct kprobe *p, struct pt_regs *regs)
{
	printk("traced_pre: p->addr=%p, ip=%lx\n", p->addr, instruction_pointer(regs));
	return 0;
}

void traced_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	printk("traced_post: p->addr=%p\n", p->addr);
	traced_posts++;
}

static int __init fast_kprobe_init(void)
{
	int ret;
	fib_kp.pre_handler = fib_pre;
	fib_kp.symbol_name = "fib";
	ret = register_kprobe(&fib_kp);
	if (ret < 0) {
		printk("register_kprobe(fib) failed, returned %d\n", ret);
		return ret;
	}
	traced_kp.pre_handler = traced_pre;
	traced_kp.post_handler = traced_post;
	traced_kp.symbol_name = "traced_function";
	ret = register_kprobe(&traced_kp);
	if (ret < 0) {
		unregister_kprobe(&fib_kp);
		printk("register_kprobe(traced_function) failed, returned %d\n", ret);
		return ret;
	}
	printk("Planted kprobes at %p and %p\n", fib_kp.addr, traced_kp.addr);
	return 0;
}

static void __exit fast_kprobe_exit(void)
{
	unregister_kprobe(&traced_kp);
	unregister_kprobe(&fib_kp);
	printk("fib hit %lu times\n", fib_hits);
}

module_init(fast_kprobe_init)
module_exit(fast_kprobe_exit)
MODULE_LICENSE("GPL")
MODULE_NAME("fast_kprobe_example")
