/* <linux/kernel.h>, <linux/module.h> for kprobe-debug modules: printk and the module macros. */
#ifndef _KP_LINUX_KERNEL_H
#define _KP_LINUX_KERNEL_H

#include <linux/types.h>
struct task_struct;

int printk(const char *fmt, ...);
void dump_stack(void);
/* the log levels: the sample kernel's printk has none, so they add nothing to the line */
#define KERN_EMERG ""
#define KERN_ALERT ""
#define KERN_CRIT ""
#define KERN_ERR ""
#define KERN_WARNING ""
#define KERN_NOTICE ""
#define KERN_INFO ""
#define KERN_DEBUG ""
#define KERN_CONT ""
#define pr_info(...) printk(__VA_ARGS__)
#define pr_err(...) printk(__VA_ARGS__)
#define pr_warn(...) printk(__VA_ARGS__)
#define pr_notice(...) printk(__VA_ARGS__)
#define pr_cont(...) printk(__VA_ARGS__)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define __init __attribute__((section(".init.text")))
#define __exit
/* module_init / module_exit: the init_module / cleanup_module the loader calls */
#define module_init(fn) int init_module(void) __attribute__((alias(#fn)));
#define module_exit(fn) void cleanup_module(void) __attribute__((alias(#fn)));
/* module_param(var, type, perm): a __param entry the loader fills from "name=value" (type: int, uint, long, ulong, bool, charp) */
struct kernel_param { const char *name; void *arg; unsigned int type; unsigned int size; };
#define __KP_PARAM_int 0
#define __KP_PARAM_uint 0
#define __KP_PARAM_long 1
#define __KP_PARAM_ulong 1
#define __KP_PARAM_bool 2
#define __KP_PARAM_charp 3
#define module_param(var, type, perm) \
	static const struct kernel_param __param_##var __attribute__((section("__param"), used, aligned(8))) = \
		{ #var, &var, __KP_PARAM_##type, sizeof(var) };
#define MODULE_PARM_DESC(var, desc)
#define MODULE_LICENSE(s) __attribute__((section(".modinfo"), used)) static const char __mod_license[] = "license=" s;
#define MODULE_DESCRIPTION(s) __attribute__((section(".modinfo"), used)) static const char __mod_description[] = "description=" s;
#define MODULE_AUTHOR(s) __attribute__((section(".modinfo"), used)) static const char __mod_author[] = "author=" s;
#define MODULE_NAME(s) __attribute__((section(".modinfo"), used)) static const char __mod_name[] = "name=" s;

#endif
