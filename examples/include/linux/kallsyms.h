/* <linux/kallsyms.h> for kprobe-debug modules: the longest symbol name (Linux 6.1: 512, NUL included) and the lookup. */
#ifndef _KP_LINUX_KALLSYMS_H
#define _KP_LINUX_KALLSYMS_H

#define KSYM_NAME_LEN 512

unsigned long kallsyms_lookup_name(const char *name);

#endif
