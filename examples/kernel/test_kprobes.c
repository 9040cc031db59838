/*
 * test_kprobes.c - the targets Linux's lib/test_kprobes.c probes, reached
 * through function pointers so the calls stay real calls.
 */
#include "kernel.h"

#define div_factor 3

u32 (*target)(u32 value);
u32 (*target2)(u32 value);
u32 (*recursed_target)(u32 value);
static unsigned long (*internal_target)(void);
static unsigned long (*stacktrace_target)(void);
unsigned long (*stacktrace_driver)(void);
static unsigned long target_return_address[2];

noinline u32 kprobe_target(u32 value)
{
	return (value / div_factor); /* #BP kprobe_target */
}

noinline u32 kprobe_target2(u32 value)
{
	return (value / div_factor) + 1;
}

noinline u32 kprobe_recursed_target(u32 value)
{
	return (value / div_factor);
}

/* The stack-trace chain: driver -> target -> internal_target. */
noinline unsigned long kprobe_stacktrace_internal_target(void)
{
	if (!target_return_address[0])
		target_return_address[0] = (unsigned long)__builtin_return_address(0);
	return target_return_address[0];
}

noinline unsigned long kprobe_stacktrace_target(void)
{
	if (!target_return_address[1])
		target_return_address[1] = (unsigned long)__builtin_return_address(0);
	if (internal_target)
		internal_target();
	return target_return_address[1];
}

noinline unsigned long kprobe_stacktrace_driver(void)
{
	if (stacktrace_target)
		stacktrace_target();
	/* keeps this function from being inlined or tail-called */
	return (unsigned long)__builtin_return_address(0);
}

void init_test_kprobes(void)
{
	target = kprobe_target;
	target2 = kprobe_target2;
	recursed_target = kprobe_recursed_target;
	internal_target = kprobe_stacktrace_internal_target;
	stacktrace_target = kprobe_stacktrace_target;
	stacktrace_driver = kprobe_stacktrace_driver;
}
