/*
 * rt.h for the v86 peer build (scripts/bench/v86): the conformance programs'
 * runtime API (test/conformance/programs/rt.h) for a 32-bit x86 multiboot
 * image. v86 has no long mode, so the same C runs as i386 code; u64 is
 * `unsigned long long` here (long is 32 bits) and printf's `l` means 64
 * bits, so the programs compute and print exactly what their x86_64 builds
 * do. Output goes to the first serial port.
 */
#ifndef RT_H
#define RT_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef unsigned int size_t;
typedef int ssize_t;
typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define NULL ((void *)0)
#define NOINLINE __attribute__((noinline))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Hide a value from the optimizer so results are computed at run time. */
#define OPAQUE(x) ({ __auto_type __v = (x); __asm__ volatile("" : "+r"(__v)); __v; })

/* no format attribute: `l` means 64 bits here (u64), which the compiler would call a mismatch */
int printf(const char *fmt, ...);
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *s, int c, size_t n);

/* FNV-1a style running checksum used by every program (as in the x86_64 rt.h). */
static inline u64 ck(u64 h, u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 31);
}

int main(void);

#endif
