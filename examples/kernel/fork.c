/* fork.c - process creation, shaped like Linux 2.6's do_fork(). */
#include "kernel.h"

struct pt_regs {
	unsigned long regs[4];
};

static long last_pid = 100;
static long nr_forks;

static noinline notrace long alloc_pid(void)
{
	return (long)atomic_add_return(1, &last_pid);
}

static noinline notrace int copy_process(unsigned long clone_flags, unsigned long stack_size)
{
	if ((clone_flags & CLONE_VM) && stack_size == 0)
		return -EINVAL; /* a thread needs its own stack */
	return 0;
}

/*
 * do_fork: the jprobe example's function. Arguments: clone flags, user stack
 * start, the parent's registers, the stack size and the two tid pointers.
 * Returns the new pid or -errno.
 */
noinline notrace long do_fork(unsigned long clone_flags, unsigned long stack_start, struct pt_regs *regs,
		      unsigned long stack_size, int *parent_tidptr, int *child_tidptr)
{
	long pid;
	int err = copy_process(clone_flags, stack_size); /* #BP do_fork_body */

	if (err)
		return err;
	pid = alloc_pid();
	if (parent_tidptr)
		*parent_tidptr = (int)pid;
	if (child_tidptr)
		*child_tidptr = (int)pid;
	if (regs)
		regs->regs[0] = stack_start;
	atomic_add_return(1, &nr_forks);
	return pid;
}

notrace long forks_done(void)
{
	return READ_ONCE(nr_forks);
}

/*
 * kernel_clone: Linux 5.10+'s name for the fork path (kernel/fork.c), taking
 * its arguments in a struct kernel_clone_args. The kernel's side of a user
 * fork / vfork / clone: the flags are checked as copy_process checks them
 * and a pid is allocated. Returns the pid or -errno. (do_fork above is the
 * 2.6 form the kernel's own workers call.)
 *
 * On x86_64 this file is built -pg -mfentry, as Linux builds kernel/fork.c,
 * so kernel_clone starts with `call __fentry__` (the function tracer's and
 * kprobes-on-ftrace's site, which ftracetest's FUNCTION_FORK needs); the
 * rest of the file is notrace, so the 2.6-era do_fork and its helpers,
 * which the kprobes tests probe at entry, keep their plain prologue.
 */
static long nr_clones;

noinline long kernel_clone(struct kernel_clone_args *args)
{
	int err = copy_process(args->flags, args->stack_size);
	long pid;

	if (err)
		return err;
	pid = alloc_pid();
	if (args->parent_tid)
		*args->parent_tid = (int)pid;
	atomic_add_return(1, &nr_clones);
	return pid;
}

/*
 * do_exit: the end of a task (kernel/exit.c): its exit code is accounted.
 * The workers that end with kp_thread_exit pass through it, and so does
 * every user process that ends.
 */
static long nr_exits;
long last_exit_code;

noinline notrace void do_exit(long code)
{
	WRITE_ONCE(last_exit_code, code);
	atomic_add_return(1, &nr_exits);
}
