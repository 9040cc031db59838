/*
 * <linux/kthread.h>: kernel threads. Modules here start threads through
 * kprobe_image.h's kp_thread_create; this header is what a Linux module
 * includes for them (and brings <linux/sched.h>, as Linux's does).
 */
#ifndef _KP_LINUX_KTHREAD_H
#define _KP_LINUX_KTHREAD_H

#include <linux/sched.h>

#endif
