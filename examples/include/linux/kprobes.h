/*
 * <linux/kprobes.h> for kprobe-debug modules: the kprobes structures and
 * functions as a module of the emulated kernel sees them (Linux 2.6's API:
 * struct kprobe with fault_handler, kretprobes). The layouts are what the
 * engine reads (emulator/kprobes/cApi.ts LAYOUT): keep them in step.
 * x86_64, aarch64 and riscv64 (struct pt_regs as Linux lays it out on each,
 * with Linux's accessors: <asm/ptrace.h>).
 */
#ifndef _KP_LINUX_KPROBES_H
#define _KP_LINUX_KPROBES_H

#include <linux/kernel.h>
#include <linux/kallsyms.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>

#include <linux/ptrace.h>

#if defined(__x86_64__)
typedef unsigned char kprobe_opcode_t;
#elif defined(__aarch64__)
typedef unsigned int kprobe_opcode_t;
#elif defined(__riscv)
typedef unsigned short kprobe_opcode_t;
#else
#error "the kprobes API for modules: x86_64, aarch64 or riscv64"
#endif

/*
 * __kprobes: Linux's attribute for functions kprobes must not probe (its
 * own handlers): they go into .kprobes.text. A module's .kprobes.text,
 * .noinstr.text (noinstr, <linux/compiler.h>) and NOKPROBE_SYMBOL(fn)
 * entries (section _kprobe_blacklist, <kprobe_image.h>) join the kprobe
 * blacklist while the module is loaded, as in Linux: register_kprobe
 * there returns -EINVAL, debugfs kprobes/blacklist lists them as
 * "fn [module]".
 */
#define __kprobes __attribute__((__section__(".kprobes.text")))
#define nokprobe_inline inline __attribute__((__always_inline__))

struct kprobe;
struct kretprobe_instance;
typedef int (*kprobe_pre_handler_t)(struct kprobe *, struct pt_regs *);
typedef void (*kprobe_post_handler_t)(struct kprobe *, struct pt_regs *, unsigned long flags);
typedef int (*kprobe_fault_handler_t)(struct kprobe *, struct pt_regs *, int trapnr);
typedef int (*kretprobe_handler_t)(struct kretprobe_instance *, struct pt_regs *);

struct kprobe {
	void *__engine[4];                     /* hlist and list: the engine's */
	unsigned long nmissed;                 /* hits that ran no handler */
	kprobe_opcode_t *addr;                 /* probe address (set by register_kprobe from symbol_name) */
	const char *symbol_name;
	unsigned int offset;
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	kprobe_fault_handler_t fault_handler;
	unsigned int opcode;
	unsigned int flags;                    /* KPROBE_FLAG_* */
};

#define KPROBE_FLAG_GONE 1
#define KPROBE_FLAG_DISABLED 2

struct kretprobe {
	struct kprobe kp;
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	int maxactive;
	int nmissed;
	size_t data_size;
};

struct kretprobe_instance {
	struct kretprobe *rp;
	kprobe_opcode_t *ret_addr;
	struct task_struct *task;
	char *data;                            /* data_size private bytes (Linux: char data[]) */
};

struct jprobe {
	struct kprobe kp;
	void *entry;                           /* the probed function's signature; ends with jprobe_return() */
};

int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
int enable_kprobe(struct kprobe *p);
int disable_kprobe(struct kprobe *p);
int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
/* several at once: all registered, or none (the first error; those already registered are unregistered) */
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);
int register_jprobe(struct jprobe *jp);
void unregister_jprobe(struct jprobe *jp);
void jprobe_return(void);

/*
 * Kernel watchpoint probes (the early kprobes interface text): a debug
 * register watching [addr, addr + length) on every CPU. register_kwatch
 * returns the debug register number, or -EINVAL (length / alignment / type
 * the registers cannot hold), -EFAULT (not kernel memory), -ENOSPC (no free
 * register), -ENODEV (no debug registers). The handler runs after the
 * access, with the registers of the instruction after it.
 * struct kwatch and the handler type are kprobe-debug's reconstruction.
 */
#define KWATCH_TYPE_EXECUTE 0
#define KWATCH_TYPE_WRITE 1
#define KWATCH_TYPE_READWRITE 3
#define HW_BREAKPOINT_R 1
#define HW_BREAKPOINT_W 2
#define HW_BREAKPOINT_X 4
struct kwatch;
typedef void (*kwatch_handler_t)(struct kwatch *, struct pt_regs *);
struct kwatch {
	unsigned long addr;
	unsigned char length;
	unsigned char type;
	int debugreg;
	kwatch_handler_t handler;
	unsigned long access_addr; /* the address the access used */
	int access;                /* HW_BREAKPOINT_R / _W / _X */
};
int register_kwatch(unsigned long addr, unsigned char length, unsigned char type, kwatch_handler_t handler);
void unregister_kwatch(int debugreg);

#endif
