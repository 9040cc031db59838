/*
 * <linux/module.h> for kprobe-debug modules: module_init / module_exit
 * (the init_module / cleanup_module the loader calls), the .modinfo tags
 * (MODULE_LICENSE & co., MODULE_INFO), module parameters
 * (<linux/moduleparam.h>) and delete_module().
 */
#ifndef _KP_LINUX_MODULE_H
#define _KP_LINUX_MODULE_H

#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/moduleparam.h>
#include <kprobe_image.h>

#define MODULE_NAME_LEN (64 - sizeof(unsigned long))
#define THIS_MODULE ((struct module *)0)

/* module_init / module_exit: the init_module / cleanup_module the loader calls */
#define module_init(initfn) int init_module(void) __attribute__((__alias__(#initfn)));
#define module_exit(exitfn) void cleanup_module(void) __attribute__((__alias__(#exitfn)));

#define MODULE_INFO(tag, info) __MODULE_INFO(tag, tag, info)
#define MODULE_LICENSE(_license) MODULE_INFO(license, _license)
#define MODULE_AUTHOR(_author) MODULE_INFO(author, _author)
#define MODULE_DESCRIPTION(_description) MODULE_INFO(description, _description)
#define MODULE_VERSION(_version) MODULE_INFO(version, _version)
#define MODULE_ALIAS(_alias) MODULE_INFO(alias, _alias)
#define MODULE_SOFTDEP(_softdep) MODULE_INFO(softdep, _softdep)
/*
 * The module's name (.modinfo name=): Linux's modpost writes
 * MODULE_INFO(name, KBUILD_MODNAME) into every module's .mod.c (the
 * project's Makefile, examples/include/Makefile, does too); without one
 * the loader names a module after its file. MODULE_NAME() is this
 * project's shorthand for modules built without that step.
 */
#define MODULE_NAME(s) MODULE_INFO(name, s)

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
