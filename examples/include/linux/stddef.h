/* <linux/stddef.h> for kprobe-debug modules: offsetof and sizeof_field as Linux spells them. */
#ifndef _KP_LINUX_STDDEF_H
#define _KP_LINUX_STDDEF_H

#include <linux/types.h>

#undef offsetof
#define offsetof(TYPE, MEMBER) __builtin_offsetof(TYPE, MEMBER)
#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))
#define offsetofend(TYPE, MEMBER) (offsetof(TYPE, MEMBER) + sizeof_field(TYPE, MEMBER))

#endif
