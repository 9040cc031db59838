/*
 * rt.h - a tiny freestanding runtime for the x86_64 conformance programs:
 * raw Linux syscalls, buffered stdout, a printf subset, string functions.
 * No libc (a static glibc uses SSE), so the programs use only integer
 * registers when built with -mno-sse -mno-mmx.
 */
#ifndef RT_H
#define RT_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef signed char s8;
typedef short s16;
typedef int s32;
#if defined(__i386__)
/*
 * The bench's v86 peer build (scripts/bench/v86: rt.c there, a multiboot
 * image; v86 has no long mode): long is 32 bits, so the 64-bit types are
 * long long, and that printf reads `l` as 64 bits (no format attribute:
 * the compiler would call %lx with a u64 a mismatch).
 */
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int size_t;
typedef int ssize_t;
#define RT_PRINTF_FORMAT
#else
typedef unsigned long u64;
typedef long s64;
typedef unsigned long size_t;
typedef long ssize_t;
#define RT_PRINTF_FORMAT __attribute__((format(printf, 1, 2)))
#endif
typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define NULL ((void *)0)
#define NOINLINE __attribute__((noinline))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Hide a value from the optimizer so results are computed at run time. */
#define OPAQUE(x) ({ __auto_type __v = (x); __asm__ volatile("" : "+r"(__v)); __v; })

long rt_syscall3(long nr, long a, long b, long c);
void rt_exit(int code) __attribute__((noreturn));
void rt_flush(void);
void rt_write(const char *s, size_t n);
int printf(const char *fmt, ...) RT_PRINTF_FORMAT;
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *s, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);

/* FNV-1a style running checksum used by every program. */
static inline u64 ck(u64 h, u64 v)
{
	h ^= v;
	h *= 0x100000001b3UL;
	return h ^ (h >> 31);
}

int main(void);

#endif
