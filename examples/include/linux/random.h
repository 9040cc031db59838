/*
 * <linux/random.h> for kprobe-debug modules: the kernel's random numbers
 * (get_random_u32 & co. are kernel functions: a stream seeded by the
 * machine's random seed, so runs are reproducible), and the bounded forms
 * built on them.
 */
#ifndef _KP_LINUX_RANDOM_H
#define _KP_LINUX_RANDOM_H

#include <linux/types.h>

u32 get_random_u32(void);
u64 get_random_u64(void);
void get_random_bytes(void *buf, size_t len);
static inline unsigned long get_random_long(void) { return (unsigned long)get_random_u64(); }

/* uniform in [0, ceil): the draws of the last, partial block of 2^32 are drawn again (ceil 0: any u32) */
static inline u32 get_random_u32_below(u32 ceil)
{
	u64 span = 1ULL << 32, limit;
	u32 r;

	if (!ceil)
		return get_random_u32();
	limit = span - span % ceil;
	do {
		r = get_random_u32();
	} while ((u64)r >= limit);
	return r % ceil;
}

/* uniform in (floor, U32_MAX] */
static inline u32 get_random_u32_above(u32 floor)
{
	return floor + 1 + get_random_u32_below(U32_MAX - floor);
}

/* uniform in [floor, ceil] */
static inline u32 get_random_u32_inclusive(u32 floor, u32 ceil)
{
	return floor + get_random_u32_below(ceil - floor + 1);
}

#endif
