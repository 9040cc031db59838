/*
 * <linux/moduleparam.h> for kprobe-debug modules, Linux 6.1's: each
 * module_param*() is a struct kernel_param in section __param (its name,
 * its ops: which param_ops_<type> parses the value, its variable or
 * struct kparam_string), and a "parmtype=" .modinfo entry. The module
 * loader (emulator/kernel/modules/params.ts) runs parse_args over them
 * with the "name=value" parameters of insmod / --module, with Linux's
 * messages. The param_ops_* objects are the kernel's; their set / get
 * functions are the loader's (not callable from C here).
 * Types: byte, short, ushort, int, uint, long, ulong, ullong, hexint,
 * charp, bool, invbool, and module_param_string.
 */
#ifndef _KP_LINUX_MODULEPARAM_H
#define _KP_LINUX_MODULEPARAM_H

#include <linux/types.h>

#define __KP_STRINGIFY_1(x...) #x
#define __stringify(x...) __KP_STRINGIFY_1(x)
#define ___PASTE(a, b) a##b
#define __PASTE(a, b) ___PASTE(a, b)
#define __UNIQUE_ID(prefix) __PASTE(__PASTE(__UNIQUE_ID_, prefix), __COUNTER__)

/* every .ko is a module: parameters have no "modname." prefix */
#define MODULE_PARAM_PREFIX /* empty */
#define MAX_PARAM_PREFIX_LEN (64 - sizeof(unsigned long))

/*
 * The trailing ';' lets MODULE_LICENSE("GPL") stand without one, as the
 * project's modules written for the earlier headers do (an extra ';' at
 * file scope is allowed by GNU C).
 */
#define __MODULE_INFO(tag, name, info)                                         \
	static const char __UNIQUE_ID(name)[]                                  \
		__attribute__((__used__, __section__(".modinfo"), __aligned__(1))) \
		= __stringify(tag) "=" info;
#define __MODULE_PARM_TYPE(name, _type) __MODULE_INFO(parmtype, name##type, #name ":" _type)
#define MODULE_PARM_DESC(_parm, desc) __MODULE_INFO(parm, _parm, #_parm ":" desc)

struct module;
struct kernel_param;

enum {
	KERNEL_PARAM_OPS_FL_NOARG = (1 << 0)
};

struct kernel_param_ops {
	unsigned int flags;
	int (*set)(const char *val, const struct kernel_param *kp);
	int (*get)(char *buffer, const struct kernel_param *kp);
	void (*free)(void *arg);
};

enum {
	KERNEL_PARAM_FL_UNSAFE = (1 << 0),
	KERNEL_PARAM_FL_HWPARAM = (1 << 1),
};

struct kernel_param {
	const char *name;
	struct module *mod;
	const struct kernel_param_ops *ops;
	const u16 perm;
	s8 level;
	u8 flags;
	union {
		void *arg;
		const struct kparam_string *str;
		const struct kparam_array *arr;
	};
};

/* a string copied into a char array */
struct kparam_string {
	unsigned int maxlen;
	char *string;
};

struct kparam_array {
	unsigned int max;
	unsigned int elemsize;
	unsigned int *num;
	const struct kernel_param_ops *ops;
	void *elem;
};

#define __module_param_call(prefix, name, ops, arg, perm, level, flags)       \
	static const char __param_str_##name[] = prefix #name;                 \
	static const struct kernel_param __param_##name                        \
		__attribute__((__used__, __section__("__param"),               \
			       __aligned__(__alignof__(struct kernel_param)))) \
		= { __param_str_##name, ((struct module *)0), ops, perm, level, flags, { arg } }

#define module_param_cb(name, ops, arg, perm) __module_param_call(MODULE_PARAM_PREFIX, name, ops, arg, perm, -1, 0)
#define module_param_cb_unsafe(name, ops, arg, perm) \
	__module_param_call(MODULE_PARAM_PREFIX, name, ops, arg, perm, -1, KERNEL_PARAM_FL_UNSAFE)

#define __param_check(name, p, type) static inline type __attribute__((__unused__)) *__check_##name(void) { return (p); }

#define module_param_named(name, value, type, perm)                            \
	param_check_##type(name, &(value));                                    \
	module_param_cb(name, &param_ops_##type, &value, perm);                \
	__MODULE_PARM_TYPE(name, #type)
#define module_param(name, type, perm) module_param_named(name, name, type, perm)
#define module_param_unsafe(name, type, perm) module_param_named_unsafe(name, name, type, perm)
#define module_param_named_unsafe(name, value, type, perm)                     \
	param_check_##type(name, &(value));                                    \
	module_param_cb_unsafe(name, &param_ops_##type, &value, perm);         \
	__MODULE_PARM_TYPE(name, #type)

/* the string is copied into `string` (at most len - 1 characters): "string doesn't fit" otherwise */
#define module_param_string(name, string, len, perm)                           \
	static const struct kparam_string __param_string_##name = { len, string }; \
	__module_param_call(MODULE_PARAM_PREFIX, name, &param_ops_string,      \
			    .str = &__param_string_##name, perm, -1, 0);       \
	__MODULE_PARM_TYPE(name, "string")

extern const struct kernel_param_ops param_ops_byte;
#define param_check_byte(name, p) __param_check(name, p, unsigned char)
extern const struct kernel_param_ops param_ops_short;
#define param_check_short(name, p) __param_check(name, p, short)
extern const struct kernel_param_ops param_ops_ushort;
#define param_check_ushort(name, p) __param_check(name, p, unsigned short)
extern const struct kernel_param_ops param_ops_int;
#define param_check_int(name, p) __param_check(name, p, int)
extern const struct kernel_param_ops param_ops_uint;
#define param_check_uint(name, p) __param_check(name, p, unsigned int)
extern const struct kernel_param_ops param_ops_long;
#define param_check_long(name, p) __param_check(name, p, long)
extern const struct kernel_param_ops param_ops_ulong;
#define param_check_ulong(name, p) __param_check(name, p, unsigned long)
extern const struct kernel_param_ops param_ops_ullong;
#define param_check_ullong(name, p) __param_check(name, p, unsigned long long)
extern const struct kernel_param_ops param_ops_hexint;
#define param_check_hexint(name, p) param_check_uint(name, p)
extern const struct kernel_param_ops param_ops_charp;
#define param_check_charp(name, p) __param_check(name, p, char *)
extern const struct kernel_param_ops param_ops_bool;
#define param_check_bool(name, p) __param_check(name, p, bool)
extern const struct kernel_param_ops param_ops_invbool;
#define param_check_invbool(name, p) __param_check(name, p, bool)
extern const struct kernel_param_ops param_ops_string;

#endif
