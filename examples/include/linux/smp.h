/* <linux/smp.h> for kprobe-debug modules: the CPU the code runs on (a kernel function). */
#ifndef _KP_LINUX_SMP_H
#define _KP_LINUX_SMP_H

int raw_smp_processor_id(void);
#define smp_processor_id() raw_smp_processor_id()

#endif
