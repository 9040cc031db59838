/*
 * A kernel watchpoint probe as a module of the sample kernel: a debug
 * register watching boot_counter (written by read_boot_counter on every
 * worker iteration), with a C handler that reports the first writes.
 * register_kwatch returns the debug register it took (or -errno);
 * unregister_kwatch gives it back. Build: examples/modules/build.sh; run:
 *   node dist/cli.js run --module examples/modules/build/kwatch_example-x86_64.ko
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

static int debugreg = -1;
static unsigned long hits;

/* runs after each write to the watched bytes, regs at the instruction after it */
static void handler(struct kwatch *kw, struct pt_regs *regs)
{
	hits++;
	if (hits <= 3)
		printk("kwatch_example: DR%d %s at %lx, ip %lx, value now %lu\n", kw->debugreg,
		       kw->access == HW_BREAKPOINT_W ? "write" : "access", kw->access_addr,
		       instruction_pointer(regs), *(unsigned long *)kw->addr);
}

static int __init kwatch_init(void)
{
	unsigned long addr = kallsyms_lookup_name("boot_counter");

	if (!addr)
		return -2;
	debugreg = register_kwatch(addr, sizeof(unsigned long), KWATCH_TYPE_WRITE, handler);
	if (debugreg < 0) {
		printk("register_kwatch failed, returned %d\n", debugreg);
		return debugreg;
	}
	printk("kwatch_example: watching boot_counter at %lx with debug register %d\n", addr, debugreg);
	return 0;
}

static void __exit kwatch_exit(void)
{
	unregister_kwatch(debugreg);
	printk("kwatch_example: debug register %d released after %lu writes\n", debugreg, hits);
}

module_init(kwatch_init)
module_exit(kwatch_exit)
MODULE_LICENSE("GPL")
