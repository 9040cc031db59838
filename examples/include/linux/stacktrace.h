/*
 * <linux/stacktrace.h> for kprobe-debug modules (kernel/stacktrace.c):
 *   stack_trace_save(store, size, skipnr)   the return addresses of the
 *       calling context, innermost first, starting in the caller of
 *       stack_trace_save, skipnr entries left out; at most size stored;
 *       returns how many. From a probe handler the trace goes on past the
 *       engine's handler call into the probed context (the probed
 *       address, then its callers); kretprobe trampoline entries are
 *       replaced by the real return addresses.
 *   stack_trace_print(entries, nr, spaces)  one line per entry, %pS-style,
 *       indented by `spaces`.
 * stack_trace_save_regs() is declared as Linux declares it, and, as in
 * Linux, not exported to modules (a module using it does not load).
 */
#ifndef _KP_LINUX_STACKTRACE_H
#define _KP_LINUX_STACKTRACE_H

struct pt_regs;
unsigned int stack_trace_save(unsigned long *store, unsigned int size, unsigned int skipnr);
void stack_trace_print(const unsigned long *entries, unsigned int nr_entries, int spaces);
unsigned int stack_trace_save_regs(struct pt_regs *regs, unsigned long *store, unsigned int size, unsigned int skipnr);

#endif
