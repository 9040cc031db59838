/* <linux/types.h> for kprobe-debug modules: the kernel's fixed-size types (LP64), bool, NULL, limits. */
#ifndef _KP_LINUX_TYPES_H
#define _KP_LINUX_TYPES_H

#include <linux/kconfig.h>

typedef signed char s8;
typedef unsigned char u8;
typedef short s16;
typedef unsigned short u16;
typedef int s32;
typedef unsigned int u32;
typedef long long s64;
typedef unsigned long long u64;
typedef unsigned long size_t;
typedef long ssize_t;
typedef unsigned long uintptr_t;
typedef long ptrdiff_t;
typedef _Bool bool;
enum { false = 0, true = 1 };

#define NULL ((void *)0)

#define U8_MAX ((u8)~0U)
#define U16_MAX ((u16)~0U)
#define U32_MAX ((u32)~0U)
#define S32_MAX ((s32)(U32_MAX >> 1))
#define S32_MIN (-S32_MAX - 1)
#define U64_MAX ((u64)~0ULL)
#define S64_MAX ((s64)(U64_MAX >> 1))
#define S64_MIN (-S64_MAX - 1)
#define ULONG_MAX (~0UL)
#define LONG_MAX ((long)(ULONG_MAX >> 1))
#define UINT_MAX (~0U)
#define INT_MAX ((int)(UINT_MAX >> 1))

#endif
