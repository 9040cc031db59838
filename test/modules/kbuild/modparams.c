// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters of every kind <linux/moduleparam.h> offers, printed by
 * init (test/modules/kbuildParams.test.ts sets them at load), and the %p
 * family printed for a function of the module. The first pr_info passes
 * more arguments than the argument registers hold (x86_64 6, arm64 and
 * riscv64 8): the rest are on the stack, where _printk must find them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/ktime.h>

static int count = 1;
module_param(count, int, 0644);
MODULE_PARM_DESC(count, "how many");
static unsigned long big;
module_param(big, ulong, 0444);
static short small = -1;
module_param(small, short, 0);
static bool verbose;
module_param(verbose, bool, 0644);
static bool loud = true;
module_param_named(quiet, loud, invbool, 0644);
static char *who = "nobody";
module_param(who, charp, 0644);
static char name[8] = "none";
module_param_string(name, name, sizeof(name), 0644);
static unsigned int mask;
module_param(mask, hexint, 0644);
static unsigned char level = 3;
module_param(level, byte, 0644);

__attribute__((__noinline__)) int modparams_target(int x)
{
	return x * 3 + count;
}

static int __init modparams_init(void)
{
	pr_info("count=%d big=%lu small=%hd verbose=%d loud=%d who=%s name=%s mask=%#x level=%u\n",
		count, big, small, verbose, loud, who, name, mask, level);
	pr_info("%p|%px|%pS|%ps|%-6d|%06d|%c%c\n", modparams_target, modparams_target, modparams_target,
		modparams_target, modparams_target(1), -42, 'o', 'k');
	/* init runs in the loader's "insmod" kernel thread */
	pr_info("current: comm=%s mm=%p active_mm=%p kthread=%d pid>0=%d\n", current->comm, current->mm,
		current->active_mm, !!(current->flags & PF_KTHREAD), current->pid > 0);
	pr_info("ktime_get=%lld\n", (long long)ktime_to_ns(ktime_get()));
	pr_cont("");
	printk(KERN_INFO "no newline");
	pr_cont(" continued\n");
	return 0;
}

static void __exit modparams_exit(void)
{
}

module_init(modparams_init)
module_exit(modparams_exit)
MODULE_LICENSE("GPL");
