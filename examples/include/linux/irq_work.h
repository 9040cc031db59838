/*
 * <linux/irq_work.h>: work run from interrupt context (kernel/irq_work.c).
 * The layout is the sample kernel's (examples/kernel/trace.c): flags,
 * the queue link, the function.
 */
#ifndef _KP_LINUX_IRQ_WORK_H
#define _KP_LINUX_IRQ_WORK_H

#include <linux/types.h>

struct irq_work {
	unsigned long flags;
	struct irq_work *next;
	void (*func)(struct irq_work *);
};

static inline void init_irq_work(struct irq_work *work, void (*func)(struct irq_work *))
{
	work->flags = 0;
	work->next = 0;
	work->func = func;
}

#define IRQ_WORK_INIT(_func) { .flags = 0, .next = 0, .func = (_func) }

bool irq_work_queue(struct irq_work *work);
void irq_work_sync(struct irq_work *work);

#endif
