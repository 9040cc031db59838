/*
 * trace_printk / trace_puts (Linux's include/linux/kernel.h, 6.1): text
 * into the trace buffer, shown by tracefs `trace` as "FUNC: text". As in
 * Linux a call with no arguments goes to trace_puts (its string is not a
 * format), the others to __trace_printk; __trace_bputs / __trace_bprintk
 * are what Linux's binary forms call, and print the same.
 */
#ifndef _KP_LINUX_TRACE_PRINTK_H
#define _KP_LINUX_TRACE_PRINTK_H

#include <linux/moduleparam.h>

#define _THIS_IP_ ({ __label__ __here; __here: (unsigned long)&&__here; })

int __trace_puts(unsigned long ip, const char *str, int size);
int __trace_bputs(unsigned long ip, const char *str);
int __trace_printk(unsigned long ip, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int __trace_bprintk(unsigned long ip, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
unsigned long strlen(const char *s);

#define trace_puts(str) ({						\
	__builtin_constant_p(str) ? __trace_bputs(_THIS_IP_, (str))	\
				  : __trace_puts(_THIS_IP_, (str), strlen(str)); \
})

#define do_trace_printk(fmt, args...) __trace_printk(_THIS_IP_, fmt, ##args)

#define trace_printk(fmt, ...)					\
do {								\
	char _______STR[] = __stringify((__VA_ARGS__));		\
	if (sizeof(_______STR) > 3)				\
		do_trace_printk(fmt, ##__VA_ARGS__);		\
	else							\
		trace_puts(fmt);				\
} while (0)

#endif
