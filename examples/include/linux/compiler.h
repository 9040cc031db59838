/*
 * <linux/compiler.h> for kprobe-debug modules: the attribute shorthands
 * kernel code uses. Not included by <linux/kernel.h> (Linux's kbuild
 * forces it into every file): the examples spell
 * __attribute__((noinline)), which the `noinline` macro would break; a
 * file written for Linux's headers gets it through <kunit/test.h>, or
 * includes it.
 */
#ifndef _KP_LINUX_COMPILER_H
#define _KP_LINUX_COMPILER_H

#define noinline __attribute__((__noinline__))
#define __always_inline inline __attribute__((__always_inline__))
#define __noreturn __attribute__((__noreturn__))
#define __used __attribute__((__used__))
#define __maybe_unused __attribute__((__unused__))
#define __always_unused __attribute__((__unused__))
#define __aligned(x) __attribute__((__aligned__(x)))
#define __packed __attribute__((__packed__))
#define __section(s) __attribute__((__section__(s)))
#define __printf(a, b) __attribute__((__format__(printf, a, b)))
#define __must_check __attribute__((__warn_unused_result__))
#define __weak __attribute__((__weak__))
#define notrace __attribute__((__no_instrument_function__))
/* code kprobes (and any instrumentation) must stay out of: .noinstr.text, in the kprobe blacklist */
#define noinstr noinline notrace __section(".noinstr.text")
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define barrier() __asm__ __volatile__("" : : : "memory")
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) do { *(volatile __typeof__(x) *)&(x) = (v); } while (0)

#endif
