/*
 * <linux/kconfig.h> for kprobe-debug modules: the configuration of the
 * emulated kernel as a module sees it (Linux's kbuild forces this header
 * and generated/autoconf.h into every compilation; here <linux/types.h>
 * includes it), and IS_ENABLED() & co., usable in #if and in C:
 *
 *   IS_BUILTIN(CONFIG_FOO)  CONFIG_FOO is 1 (=y)
 *   IS_MODULE(CONFIG_FOO)   CONFIG_FOO_MODULE is 1 (=m: set by the module's build)
 *   IS_ENABLED(CONFIG_FOO)  either
 */
#ifndef _KP_LINUX_KCONFIG_H
#define _KP_LINUX_KCONFIG_H

/* what the emulated kernel provides to modules */
/* the architecture, as its Kconfig names it (arch/x86, arch/arm64, arch/riscv) */
#if defined(__x86_64__)
#define CONFIG_X86 1
#define CONFIG_X86_64 1
#elif defined(__aarch64__)
#define CONFIG_ARM64 1
#elif defined(__riscv) && __riscv_xlen == 64
#define CONFIG_RISCV 1
#endif
#define CONFIG_64BIT 1
#define CONFIG_SMP 1
#define CONFIG_PREEMPT 1                 /* the timer tick preempts kernel threads */
#define CONFIG_PREEMPT_COUNT 1           /* preempt_count(): probe handlers run with preemption disabled */
#define CONFIG_KPROBES 1
#define CONFIG_KRETPROBES 1
#define CONFIG_MODULES 1
#define CONFIG_KALLSYMS 1
#define CONFIG_PRINTK 1
#define CONFIG_STACKTRACE 1              /* stack_trace_save() */
#define CONFIG_FRAME_POINTER 1           /* modules are built with frame pointers: the unwinder follows them through module code */
/* stack traces taken in a kretprobe handler show the real return addresses, not the trampoline */
#define CONFIG_ARCH_CORRECT_STACKTRACE_ON_KRETPROBE 1
#define CONFIG_KUNIT 1                   /* <kunit/test.h>: the runner is compiled into the test module */

/*
 * The test: a marker that turns an option's value 1 into an extra macro
 * argument, so that the second argument picked is 1 exactly when the
 * option is defined as 1, and 0 otherwise (undefined, or anything else).
 */
#define __KP_KCONFIG_ONE_1 ,
#define __kp_kconfig_second(a, b, ...) b
#define __kp_kconfig_pick(marker) __kp_kconfig_second(marker 1, 0, 0)
#define __kp_kconfig_is_one(value) __kp_kconfig_pick(__KP_KCONFIG_ONE_##value)
#define __kp_kconfig_expand(value) __kp_kconfig_is_one(value)

#define IS_BUILTIN(option) __kp_kconfig_expand(option)
#define IS_MODULE(option) __kp_kconfig_expand(option##_MODULE)
#define IS_ENABLED(option) (IS_BUILTIN(option) || IS_MODULE(option))
/* a module can reach built-in code, and code of its own kind */
#define IS_REACHABLE(option) IS_ENABLED(option)

#endif
