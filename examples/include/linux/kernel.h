/*
 * <linux/kernel.h> for kprobe-debug modules: printk (<linux/printk.h>),
 * ARRAY_SIZE, the errno values, trace_printk (<linux/trace_printk.h>). It also pulls in <linux/module.h> (Linux's
 * does not; modules written for the older headers here include only this).
 */
#ifndef _KP_LINUX_KERNEL_H
#define _KP_LINUX_KERNEL_H

#include <linux/types.h>
#include <linux/printk.h>
struct task_struct;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#include <linux/module.h>
#include <linux/trace_printk.h>

#endif
