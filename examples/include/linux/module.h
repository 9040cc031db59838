/* <linux/module.h> for kprobe-debug modules: the module macros (<linux/kernel.h>) and delete_module(). */
#ifndef _KP_LINUX_MODULE_H
#define _KP_LINUX_MODULE_H

#include <linux/kernel.h>
#include <kprobe_image.h>

/* The DeleteModule hypercall (emulator/kernel/hypercalls.ts, HYPERCALL_DELETE_MODULE). */
#ifndef O_NONBLOCK
#define O_NONBLOCK 00004000
#endif
#ifndef O_TRUNC
#define O_TRUNC 00001000
#endif

/*
 * delete_module(name, flags): unload the module `name` from a kernel thread
 * (a module's init or exit, a thread it started), with Linux's
 * delete_module(2) results: 0 (accepted), -ENOENT (not loaded), -EWOULDBLOCK
 * (another module uses it), -EBUSY (its init is still running, it is already
 * being removed, or it has an init and no exit), -EFAULT (bad pointer).
 * It returns at once: the module's exit runs afterwards in an "rmmod"
 * kernel thread, exactly as `rmmod` (kprobe-run --rmmod-at) does, once any
 * insmod / rmmod in progress (the caller's own init, say) has finished.
 * flags (O_NONBLOCK, O_TRUNC) are accepted and ignored.
 */
static inline long delete_module(const char *name, unsigned int flags)
{
	return kp_hypercall4(KP_HC_DELETE_MODULE, (long)name, (long)flags, 0, 0);
}

#endif
