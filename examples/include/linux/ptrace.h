/* <linux/ptrace.h> for kprobe-debug modules: struct pt_regs and its accessors (<asm/ptrace.h>). */
#ifndef _KP_LINUX_PTRACE_H
#define _KP_LINUX_PTRACE_H

#include <asm/ptrace.h>

#endif
