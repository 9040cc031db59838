/*
 * The kprobes documentation's kretprobe example as a module: the time
 * sys_open takes and its return value, through entry_handler, handler and
 * the per-instance data.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>


static char func_name[] = "sys_open";

/* per-instance private data */
struct my_data {
	unsigned long entry_stamp;
};

/* Here we use the entry_handler to timestamp function entry */
static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct my_data *data = (struct my_data *)ri->data;
	data->entry_stamp = 1;
	return 0;
}

/* Return-probe handler: Log the return value and duration. */
static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	long retval = (long)regs_return_value(regs);
	struct my_data *data = (struct my_data *)ri->data;
	printk("%s returned %ld (entry stamp %lu)\n", func_name, retval, data->entry_stamp);
	return 0;
}

static struct kretprobe my_kretprobe = {
	.handler = ret_handler,
	.entry_handler = entry_handler,
	.data_size = sizeof(struct my_data),
	/* Probe up to 20 instances concurrently. */
	.maxactive = 20,
};

static int __init kretprobe_init(void)
{
	int ret;
	my_kretprobe.kp.symbol_name = func_name;
	ret = register_kretprobe(&my_kretprobe);
	if (ret < 0) {
		printk("register_kretprobe failed, returned %d\n", ret);
		return -1;
	}
	printk("Planted return probe at %s: %p\n", my_kretprobe.kp.symbol_name, my_kretprobe.kp.addr);
	return 0;
}

static void __exit kretprobe_exit(void)
{
	unregister_kretprobe(&my_kretprobe);
	printk("kretprobe at %p unregistered\n", my_kretprobe.kp.addr);
	/* nmissed > 0 suggests that maxactive was set too low. */
	printk("Missed probing %d instances of %s\n", my_kretprobe.nmissed, my_kretprobe.kp.symbol_name);
}

module_init(kretprobe_init)
module_exit(kretprobe_exit)
MODULE_LICENSE("GPL")
MODULE_NAME("kretprobe_example")
