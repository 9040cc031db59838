/*
 * <linux/sched.h>, <asm/current.h> for kprobe-debug modules: `current`,
 * the task running on this CPU (NULL on an idle CPU). The task_struct is
 * opaque: its address is the one kretprobe_instance.task holds.
 */
#ifndef _KP_LINUX_SCHED_H
#define _KP_LINUX_SCHED_H

struct task_struct;
struct task_struct *get_current(void);
#define current get_current()

#endif
