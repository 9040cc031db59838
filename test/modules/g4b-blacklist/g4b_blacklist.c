/*
 * Test module: functions a module keeps out of kprobes' reach as Linux
 * lets it (NOKPROBE_SYMBOL, __kprobes, noinstr) beside one it does not, and
 * its init registering a kprobe on each, printing register_kprobe's
 * result, then the plain function's address with %p (hashed, or raw with
 * no_hash_pointers on the kernel command line) and %px.
 * Built at test time with make -C examples/include M=<this dir>.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

noinline int g4b_nokprobe(int x) { return x * 3 + 1; }
NOKPROBE_SYMBOL(g4b_nokprobe);

noinline int __kprobes g4b_kprobes_a(int x) { return x ^ 5; }
noinline int __kprobes g4b_kprobes_b(int x) { return (x ^ 9) * 7; }

noinstr int g4b_noinstr(int x) { return x - 2; }

noinline int g4b_plain(int x) { return x * 2 + 11; }

static int g4b_pre(struct kprobe *p, struct pt_regs *regs) { return 0; }

static struct kprobe kps[5];

static void try_probe(int i, const char *what, void *addr)
{
	int ret;

	kps[i].addr = addr;
	kps[i].pre_handler = g4b_pre;
	ret = register_kprobe(&kps[i]);
	pr_info("%s: register_kprobe %d\n", what, ret);
	if (ret == 0)
		unregister_kprobe(&kps[i]);
}

static int __init g4b_init(void)
{
	try_probe(0, "g4b_nokprobe", g4b_nokprobe);
	try_probe(1, "g4b_kprobes_a", g4b_kprobes_a);
	try_probe(2, "g4b_kprobes_b", (char *)g4b_kprobes_b + 2);
	try_probe(3, "g4b_noinstr", g4b_noinstr);
	try_probe(4, "g4b_plain", g4b_plain);
	pr_info("g4b_plain at %p (%px)\n", g4b_plain, g4b_plain);
	return 0;
}

static void __exit g4b_exit(void)
{
}

module_init(g4b_init);
module_exit(g4b_exit);
MODULE_LICENSE("GPL");
