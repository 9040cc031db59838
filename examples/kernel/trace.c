/*
 * trace.c - trace_printk's kernel side (kernel/trace/trace.c: __trace_puts,
 * __trace_bputs, __trace_printk, __trace_bprintk) and irq_work
 * (kernel/irq_work.c) for modules such as Linux's samples/trace_printk.
 * The formatted text goes into the trace buffer (KP_HC_TRACE_PRINTK), which
 * tracefs `trace` / `trace_pipe` show as "FUNC: text".
 *
 * irq_work: Linux raises a self-interrupt and runs the work in its handler;
 * this machine has no interrupt to raise, so irq_work_queue runs the queued
 * work at once (as irq_work_run does on the interrupt), and irq_work_sync
 * finds it done.
 */
#include "kernel.h"

#define TRACE_PRINTK_MAX 1024

static int trace_write(unsigned long ip, const char *buf, size_t len)
{
	return (int)kp_hypercall4(KP_HC_TRACE_PRINTK, (long)ip, (long)buf, (long)len, 0);
}

noinline int __trace_puts(unsigned long ip, const char *str, int size)
{
	return trace_write(ip, str, size < 0 ? 0 : (size_t)size);
}

noinline int __trace_bputs(unsigned long ip, const char *str)
{
	return trace_write(ip, str, strlen(str));
}

static int trace_vprintk(unsigned long ip, const char *fmt, va_list ap)
{
	char buf[TRACE_PRINTK_MAX];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return n;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return trace_write(ip, buf, (size_t)n);
}

noinline int __trace_printk(unsigned long ip, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = trace_vprintk(ip, fmt, ap);
	va_end(ap);
	return n;
}

noinline int __trace_bprintk(unsigned long ip, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = trace_vprintk(ip, fmt, ap);
	va_end(ap);
	return n;
}

/* as examples/include/linux/irq_work.h lays it out */
struct irq_work {
	unsigned long flags;
	struct irq_work *next;
	void (*func)(struct irq_work *);
};
#define IRQ_WORK_PENDING 1UL
#define IRQ_WORK_BUSY 2UL

static struct irq_work *raised_list;

/* the interrupt's handler: run every queued work */
noinline void irq_work_run(void)
{
	struct irq_work *work;

	while ((work = raised_list) != NULL) {
		raised_list = work->next;
		work->next = NULL;
		work->flags = IRQ_WORK_BUSY;
		work->func(work);
		work->flags = 0;
	}
}

noinline int irq_work_queue(struct irq_work *work)
{
	if (work->flags & IRQ_WORK_PENDING)
		return 0;
	work->flags |= IRQ_WORK_PENDING;
	work->next = raised_list;
	raised_list = work;
	irq_work_run();
	return 1;
}

noinline void irq_work_sync(struct irq_work *work)
{
	while (READ_ONCE(work->flags) & IRQ_WORK_BUSY)
		kp_yield();
}

EXPORT_SYMBOL_GPL(__trace_puts);
EXPORT_SYMBOL_GPL(__trace_bputs);
EXPORT_SYMBOL_GPL(__trace_printk);
EXPORT_SYMBOL_GPL(__trace_bprintk);
EXPORT_SYMBOL_GPL(irq_work_queue);
EXPORT_SYMBOL_GPL(irq_work_sync);
