/* <linux/kernel.h>, <linux/module.h> for kprobe-debug modules: printk and the module macros. */
#ifndef _KP_LINUX_KERNEL_H
#define _KP_LINUX_KERNEL_H

typedef unsigned long size_t;
struct task_struct;

int printk(const char *fmt, ...);
void dump_stack(void);
#define KERN_INFO ""
#define pr_info(...) printk(__VA_ARGS__)
#define pr_err(...) printk(__VA_ARGS__)

#define __init __attribute__((section(".init.text")))
#define __exit
/* module_init / module_exit: the init_module / cleanup_module the loader calls */
#define module_init(fn) int init_module(void) __attribute__((alias(#fn)));
#define module_exit(fn) void cleanup_module(void) __attribute__((alias(#fn)));
#define MODULE_LICENSE(s) __attribute__((section(".modinfo"), used)) static const char __mod_license[] = "license=" s;
#define MODULE_NAME(s) __attribute__((section(".modinfo"), used)) static const char __mod_name[] = "name=" s;

#endif
