/*
 * <linux/preempt.h>, <linux/irqflags.h> for kprobe-debug modules: whether
 * the code running may be preempted. Both are kernel functions (Linux
 * reads per-CPU state inline):
 *   preempt_count()         the preemption-disable depth of this CPU: a
 *                           probe handler runs with preemption disabled
 *                           (each handler call the engine makes counts one)
 *   arch_irqs_disabled()    1 between a probe's hit and the end of its
 *                           single-step, when Linux has interrupts off
 */
#ifndef _KP_LINUX_PREEMPT_H
#define _KP_LINUX_PREEMPT_H

int preempt_count(void);
int arch_irqs_disabled(void);
#define irqs_disabled() (arch_irqs_disabled() != 0)
#define preemptible() (preempt_count() == 0 && !irqs_disabled())

#endif
