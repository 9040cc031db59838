/*
 * usersvc.c - the kernel's part of what user space asks of it. The user
 * processes' system calls are served by the emulated kernel below this
 * image; what Linux does in kernel functions on their behalf is handed to
 * a kernel thread here, which calls the functions of Linux's names with
 * the same arguments: kernel_clone for a fork / vfork / clone (its flags),
 * do_exit for a process that ends (its exit code), tracefs_create_dir for
 * a directory tracefs makes (an event group or event, by name). So probes
 * on those functions see user space at work, as on Linux.
 *
 * open / openat / creat and symlink / symlinkat are the thread's work
 * (open.c): the process sleeps in its call while the thread, with the
 * process's address space in use (kthread_use_mm), runs do_sys_open /
 * ksys_symlinkat on its user pointers; the result goes back with the
 * request's id (KP_USER_DONE).
 *
 * Each thread (kusersvc/N, one per CPU) asks for the next request with the user_init hypercall's
 * serve form (kp_user_init's argument KP_USER_SERVE, the request buffer as
 * the second argument): it sleeps until one is queued; 0 when user space
 * has ended and nothing is left.
 */
#include "kernel.h"

enum { UREQ_CLONE = 1, UREQ_EXIT = 2, UREQ_TRACEFS_MKDIR = 3, UREQ_OPENAT = 4, UREQ_SYMLINKAT = 5 };

/* as emulator/kernel/user/kernelService.ts writes it */
struct user_request {
	long op;
	long arg[4];
	struct mm_struct *mm; /* the calling process's (a call the thread serves) */
	long id;
	char name[64];
};

/* Linux's banner format (init/version.c), as /proc/version prints it */
const char linux_proc_banner[] = "%s version %s (kprobe-debug@kprobe-debug) (kprobe-debug emulator) %s\n";

/* tracefs's directories as the kernel names them (fs/tracefs/inode.c) */
#define NR_DENTRIES 64
static struct dentry dentries[NR_DENTRIES];
static long nr_dentries;
struct dentry tracefs_root = { NULL, { "tracing", 7 }, 0, "tracing" };

noinline struct dentry *tracefs_create_dir(const char *name, struct dentry *parent)
{
	struct dentry *d = &dentries[nr_dentries % NR_DENTRIES];
	size_t n = strlen(name);

	if (n >= sizeof(d->d_iname))
		return NULL;
	memcpy(d->d_iname, name, n + 1);
	d->d_name.name = d->d_iname;
	d->d_name.len = n;
	d->d_parent = parent ? parent : &tracefs_root;
	nr_dentries++;
	return d;
}

/* a system call the thread serves: run with the caller's address space, answer with its result */
static void serve_call(struct user_request *req)
{
	long ret = -EINVAL;

	kthread_use_mm(req->mm);
	switch (req->op) {
	case UREQ_OPENAT:
		ret = do_sys_open((int)req->arg[0], (const char __user *)req->arg[1], (int)req->arg[2],
				  (unsigned short)req->arg[3]);
		break;
	case UREQ_SYMLINKAT:
		ret = ksys_symlinkat((const char __user *)req->arg[0], (int)req->arg[1],
				     (const char __user *)req->arg[2]);
		break;
	}
	kthread_unuse_mm(req->mm);
	kp_hypercall4(KP_HC_USER_INIT, KP_USER_DONE, req->id, ret, 0);
}

static void user_service(void *unused)
{
	struct user_request req;
	struct kernel_clone_args args;

	while (kp_hypercall4(KP_HC_USER_INIT, KP_USER_SERVE, (long)&req, 0, 0) > 0) {
		switch (req.op) {
		case UREQ_CLONE:
			memset(&args, 0, sizeof(args));
			args.flags = (u64)req.arg[0] & ~0xffUL;
			args.exit_signal = (int)(req.arg[0] & 0xff);
			args.stack = (unsigned long)req.arg[1];
			kernel_clone(&args);
			break;
		case UREQ_EXIT:
			do_exit(req.arg[0]);
			break;
		case UREQ_TRACEFS_MKDIR:
			tracefs_create_dir(req.name, NULL);
			break;
		case UREQ_OPENAT:
		case UREQ_SYMLINKAT:
			serve_call(&req);
			break;
		}
	}
}

/*
 * Before user space starts: threads will serve it, so a program's call
 * that is their work waits for them. Returns how many programs the machine
 * was given (none: no thread is needed).
 */
long prepare_user_service(void)
{
	return kp_hypercall4(KP_HC_USER_INIT, KP_USER_WILL_SERVE, 0, 0, 0);
}

/*
 * Start the threads that serve user space (before it starts, so that each
 * is waiting on its CPU when the first call comes): one per CPU, kusersvc/N on CPU N, as Linux's per-CPU kernel threads. A
 * process's call goes to its own CPU's thread, which runs as soon as the
 * process sleeps in the call.
 */
long start_user_service(void)
{
	static char comms[8][16];
	long nr = kp_nr_cpus(), err = 0;

	for (long cpu = 0; cpu < nr && cpu < (long)ARRAY_SIZE(comms); cpu++) {
		long pid;

		snprintf(comms[cpu], sizeof(comms[cpu]), "kusersvc/%ld", cpu);
		pid = kp_thread_create(user_service, NULL, cpu, comms[cpu]);
		if (pid < 0)
			err = pid;
	}
	return err;
}
