/*
 * A kprobes self-test as a module, in the spirit of Linux's
 * lib/test_kprobes.c (written here, not copied): a kprobe with pre and post
 * handlers, two kprobes at once, a kretprobe with entry data and the return
 * value, and a jprobe seeing the arguments, each on functions of this
 * module called through pointers. Its printk lines say whether it passed.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>

#define DIVISOR 3

static unsigned int seed = 0x1d2c3b4a;
static int tests, failures;
static unsigned int seen_pre, seen_post, seen_pre2, seen_arg, seen_ret;

__attribute__((noinline)) unsigned int tk_target(unsigned int v) { return v / DIVISOR; }
__attribute__((noinline)) unsigned int tk_target2(unsigned int v) { return v / DIVISOR + 1; }
static unsigned int (*volatile call1)(unsigned int) = tk_target;
static unsigned int (*volatile call2)(unsigned int) = tk_target2;

static void check(int ok, const char *what)
{
	tests++;
	if (!ok) {
		failures++;
		printk("test_kprobes: FAIL: %s\n", what);
	}
}

static int pre1(struct kprobe *p, struct pt_regs *regs) { seen_pre = seed / DIVISOR; return 0; }
static void post1(struct kprobe *p, struct pt_regs *regs, unsigned long flags) { seen_post = seen_pre + 1; }
static int pre2(struct kprobe *p, struct pt_regs *regs) { seen_pre2 = seed / DIVISOR + 1; return 0; }

static struct kprobe kp1 = { .symbol_name = "tk_target", .pre_handler = pre1, .post_handler = post1 };
static struct kprobe kp2 = { .symbol_name = "tk_target2", .pre_handler = pre2 };

static int rp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(unsigned int *)ri->data = seed;
	return 0;
}
static int rp_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (*(unsigned int *)ri->data == seed)
		seen_ret = (unsigned int)regs_return_value(regs);
	return 0;
}
static struct kretprobe rp = { .kp = { .symbol_name = "tk_target" }, .handler = rp_return, .entry_handler = rp_entry,
	.data_size = sizeof(unsigned int), .maxactive = 4 };

static unsigned int jp_entry(unsigned int v)
{
	seen_arg = v;
	jprobe_return();
	return 0;
}
static struct jprobe jp = { .kp = { .symbol_name = "tk_target2" }, .entry = jp_entry };

static void one_kprobe(void)
{
	check(register_kprobe(&kp1) == 0, "register_kprobe");
	call1(seed);
	unregister_kprobe(&kp1);
	check(seen_pre == seed / DIVISOR, "the pre_handler ran");
	check(seen_post == seed / DIVISOR + 1, "the post_handler ran after it");
	seen_pre = 0;
	call1(seed);
	check(seen_pre == 0, "no hit once unregistered");
}

static void two_kprobes(void)
{
	kp1.addr = 0;
	kp1.flags = 0;
	check(register_kprobe(&kp1) == 0 && register_kprobe(&kp2) == 0, "register two kprobes");
	call1(seed);
	call2(seed);
	unregister_kprobe(&kp1);
	unregister_kprobe(&kp2);
	check(seen_pre == seed / DIVISOR && seen_pre2 == seed / DIVISOR + 1, "both pre_handlers ran");
}

static void one_kretprobe(void)
{
	check(register_kretprobe(&rp) == 0, "register_kretprobe");
	unsigned int r = call1(seed);
	unregister_kretprobe(&rp);
	check(seen_ret == r && r == seed / DIVISOR, "the return handler saw the return value and its instance data");
}

static void one_jprobe(void)
{
	check(register_jprobe(&jp) == 0, "register_jprobe");
	unsigned int r = call2(seed);
	unregister_jprobe(&jp);
	check(seen_arg == seed, "the jprobe entry saw the argument");
	check(r == seed / DIVISOR + 1, "the probed function ran on unchanged");
}

static int __init test_kprobes_init(void)
{
	printk("test_kprobes: started\n");
	one_kprobe();
	two_kprobes();
	one_kretprobe();
	one_jprobe();
	if (failures)
		printk("test_kprobes: BUG: %d out of %d tests failed\n", failures, tests);
	else
		printk("test_kprobes: passed %d tests with no errors\n", tests);
	return 0;
}

static void __exit test_kprobes_exit(void) { }

module_init(test_kprobes_init)
module_exit(test_kprobes_exit)
MODULE_LICENSE("GPL")
MODULE_NAME("test_kprobes")
