/*
 * <linux/sched.h>, <asm/current.h> for kprobe-debug modules: `current`,
 * the task running on this CPU (NULL on an idle CPU), and the fields of its
 * struct task_struct the emulated kernel keeps, named and typed as Linux's
 * (Linux's struct has many more, at offsets that depend on its
 * configuration; these are this kernel's): the kernel writes them when it
 * hands out the task's address (get_current(), kretprobe_instance.task),
 * so they are current then. emulator/kernel/task.ts TASK_STRUCT must match.
 *   mm         the task's address space: NULL for a kernel thread
 *   active_mm  the one it runs on (a kernel thread: NULL here, it has no lazy mm)
 *   flags      PF_KTHREAD for a kernel thread
 *   pid, tgid  its ids
 *   comm       its name (TASK_COMM_LEN bytes, NUL-terminated)
 */
#ifndef _KP_LINUX_SCHED_H
#define _KP_LINUX_SCHED_H

#include <linux/types.h>

typedef int pid_t;
struct mm_struct;

#define TASK_COMM_LEN 16
#define PF_KTHREAD 0x00200000

struct task_struct {
	unsigned int flags;
	pid_t pid;
	pid_t tgid;
	struct mm_struct *mm;
	struct mm_struct *active_mm;
	char comm[TASK_COMM_LEN];
};

struct task_struct *get_current(void);
#define current get_current()

static inline pid_t task_pid_nr(struct task_struct *tsk) { return tsk->pid; }
static inline pid_t task_tgid_nr(struct task_struct *tsk) { return tsk->tgid; }

#endif
