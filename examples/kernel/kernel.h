/* kernel.h - types and helpers shared by the sample kernel's files. */
#ifndef SAMPLE_KERNEL_H
#define SAMPLE_KERNEL_H

#include "kprobe_image.h"

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long s64;
typedef unsigned long size_t;
typedef long ssize_t;
typedef long loff_t;
typedef unsigned long uintptr_t;
typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)

#define NULL ((void *)0)
#define noinline __attribute__((__noinline__))
/* not instrumented by -pg (include/linux/compiler_types.h): no `call __fentry__` at entry */
#define notrace __attribute__((__no_instrument_function__))
#define __used __attribute__((__used__))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/*
 * EXPORT_SYMBOL(sym) / EXPORT_SYMBOL_GPL(sym): sym may be used by modules,
 * as in Linux. Each puts a struct kernel_symbol {address, name} in __ksymtab
 * (__ksymtab_gpl: only for modules whose MODULE_LICENSE is GPL-compatible)
 * and the name in __ksymtab_strings. The module loader resolves a module's
 * undefined symbols against these (and the kprobes API); any other global
 * of the image is "Unknown symbol X (err -2)". An image with no __ksymtab
 * at all lets modules use every global symbol (emulator/kernel/modules/exports.ts).
 * The linker scripts place these sections after everything else, so that
 * exporting a symbol never moves code or data. Exports are listed at the end
 * of each file (so that adding one never moves a line either), and they
 * carry no debug info (nodebug: the images' DWARF stays as it was).
 */
struct kernel_symbol {
	unsigned long value;
	const char *name;
};
#define KSYMTAB_SECTION "__ksymtab"
#define KSYMTAB_GPL_SECTION "__ksymtab_gpl"
#define KSYMTAB_STRINGS_SECTION "__ksymtab_strings"
#define __EXPORT_SYMBOL(sym, sec)                                              \
	static const char __kstrtab_##sym[]                                    \
		__attribute__((__used__, __nodebug__,                          \
			       __section__(KSYMTAB_STRINGS_SECTION),           \
			       __aligned__(1))) = #sym;                        \
	static const struct kernel_symbol __ksymtab_##sym                      \
		__attribute__((__used__, __nodebug__, __section__(sec),        \
			       __aligned__(8))) =                              \
			{ (unsigned long)&sym, __kstrtab_##sym }
#define EXPORT_SYMBOL(sym) __EXPORT_SYMBOL(sym, KSYMTAB_SECTION)
#define EXPORT_SYMBOL_GPL(sym) __EXPORT_SYMBOL(sym, KSYMTAB_GPL_SECTION)

#define ENOENT 2
#define EBADF 9
#define ENOMEM 12
#define ENAMETOOLONG 36
#define EFAULT 14
#define EACCES 13
#define EINVAL 22
#define EMFILE 24

#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100

#define __user
#define MAX_ERRNO 4095
#define IS_ERR_VALUE(x) ((unsigned long)(x) >= (unsigned long)-MAX_ERRNO)
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline int IS_ERR(const void *ptr) { return IS_ERR_VALUE((unsigned long)ptr); }

#define CLONE_VM 0x00000100UL
#define CLONE_FS 0x00000200UL
#define CLONE_FILES 0x00000400UL
#define SIGCHLD 17UL

/* lib.c */
void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strncpy(char *d, const char *s, size_t n);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
unsigned long atomic_add_return(long delta, long *v);
/* lib/test_lib.c: checks the lib/ helpers (lib/libk.h) once at boot; the number of failed checks */
int lib_selftest(void);

/* a sysfs attribute and its show method (include/linux/kobject.h, sysfs.h) */
struct kobject {
	const char *name;
};
struct kobj_attribute {
	const char *name;
	ssize_t (*show)(struct kobject *kobj, struct kobj_attribute *attr, char *buf);
};

/* fork.c */
struct pt_regs;
long do_fork(unsigned long clone_flags, unsigned long stack_start, struct pt_regs *regs,
	     unsigned long stack_size, int *parent_tidptr, int *child_tidptr);
/* Linux 5.10+'s fork arguments (include/linux/sched/task.h) */
struct kernel_clone_args {
	u64 flags;
	int *pidfd;
	int *child_tid;
	int *parent_tid;
	int exit_signal;
	unsigned long stack;
	unsigned long stack_size;
	unsigned long tls;
};
long kernel_clone(struct kernel_clone_args *args);
void do_exit(long code);

/* fs.c */
struct file {
	const char *name;
	const char *data;
	size_t size;
	int fd;
	int mode;
};
long sys_open(const char *filename, int flags, int mode);
ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos);
struct file *fget(int fd);
long sys_close(int fd);

/* net.c */
struct sk_buff {
	unsigned int len;
	u16 protocol;
	u16 sport, dport;
	u16 check;
	const u8 *data;
};
int tcp_v4_rcv(struct sk_buff *skb);
u16 csum_fold_bytes(const u8 *data, unsigned int len);

/* test_kprobes.c */
extern u32 (*target)(u32 value);
extern u32 (*target2)(u32 value);
extern u32 (*recursed_target)(u32 value);
extern unsigned long (*stacktrace_driver)(void);
void init_test_kprobes(void);
u32 kprobe_target(u32 value);
u32 kprobe_target2(u32 value);
u32 kprobe_recursed_target(u32 value);
unsigned long kprobe_stacktrace_target(void);
unsigned long kprobe_stacktrace_internal_target(void);
unsigned long kprobe_stacktrace_driver(void);

/* usersvc.c */
long prepare_user_service(void);
long start_user_service(void);
/* the user_init hypercall's forms the image's thread uses (emulator/kernel/user/kernelService.ts, imageWork.ts) */
#define KP_USER_SERVE 2
#define KP_USER_USE_MM 3
#define KP_USER_UNUSE_MM 4
#define KP_USER_STRNCPY 5
#define KP_USER_OPEN 6
#define KP_USER_SYMLINK 7
#define KP_USER_DONE 8
#define KP_USER_WILL_SERVE 9
/* a directory entry (include/linux/dcache.h's names): tracefs's directories, a new name's place */
struct qstr {
	const char *name;
	unsigned int len;
};
struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	int d_dfd; /* a path-named entry: where its lookup starts (a descriptor or AT_FDCWD) */
	char d_iname[64];
};

/* open.c */
struct mm_struct;
struct open_how {
	u64 flags;
	u64 mode;
	u64 resolve;
};
void kthread_use_mm(struct mm_struct *mm);
void kthread_unuse_mm(struct mm_struct *mm);
long do_sys_open(int dfd, const char __user *filename, int flags, unsigned short mode);
long ksys_symlinkat(const char __user *oldname, int newdfd, const char __user *newname);

/* misc.c */
unsigned long fib(unsigned int n);
long syscall_dispatch(unsigned int nr, long a, long b);
unsigned long read_boot_counter(void);
unsigned long traced_function(unsigned long x);
void __fentry__(void);
int notify_die(unsigned long val, const char *str, long err);
long probe_kernel_read_long(long *dst, const long *src);

#endif
