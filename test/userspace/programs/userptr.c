/*
 * userptr.c - pointers a system call must copy from user memory, good and
 * bad: openat and symlinkat with a readable name, with an unmapped address
 * and with a kernel address (each bad one is -EFAULT, as Linux's
 * strncpy_from_user makes it), then the good name again. Prints each result.
 */
#include "sys.h"

#define AT_FDCWD -100
#define O_RDONLY 0

static const char good[] = "/userptr-file";
static const char link_name[] = "/userptr-link";

void cstart(long *sp)
{
	(void)sp;
	kv("open good", sys4(NR_openat, AT_FDCWD, (long)good, O_RDONLY, 0));
	kv("open unmapped", sys4(NR_openat, AT_FDCWD, 0x10, O_RDONLY, 0));
	kv("open kernel", sys4(NR_openat, AT_FDCWD, (long)0xffff888000000000UL, O_RDONLY, 0));
	kv("symlink bad target", sys3(NR_symlinkat, 0x10, AT_FDCWD, (long)link_name));
	kv("symlink good", sys3(NR_symlinkat, (long)good, AT_FDCWD, (long)link_name));
	sys1(NR_exit_group, 0);
}
