/*
 * <linux/ktime.h>, <linux/timekeeping.h> for kprobe-debug modules: ktime_t
 * (signed nanoseconds) and the monotonic clock. ktime_get() is a kernel
 * function: the CPU's virtual time since boot (the clock printk stamps
 * and KP_HC_TIME_NS read).
 */
#ifndef _KP_LINUX_KTIME_H
#define _KP_LINUX_KTIME_H

#include <linux/types.h>

typedef s64 ktime_t;

#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
#define NSEC_PER_SEC 1000000000L
#define KTIME_MAX ((s64)~((u64)1 << 63))

ktime_t ktime_get(void);
static inline u64 ktime_get_ns(void) { return ktime_get(); }

#define ktime_sub(lhs, rhs) ((lhs) - (rhs))
#define ktime_add(lhs, rhs) ((lhs) + (rhs))
#define ktime_add_ns(kt, nsval) ((kt) + (nsval))
#define ktime_sub_ns(kt, nsval) ((kt) - (nsval))
static inline ktime_t ns_to_ktime(u64 ns) { return ns; }
static inline s64 ktime_to_ns(const ktime_t kt) { return kt; }
static inline s64 ktime_to_us(const ktime_t kt) { return kt / NSEC_PER_USEC; }
static inline s64 ktime_to_ms(const ktime_t kt) { return kt / NSEC_PER_MSEC; }
static inline int ktime_compare(const ktime_t cmp1, const ktime_t cmp2)
{
	if (cmp1 < cmp2)
		return -1;
	if (cmp1 > cmp2)
		return 1;
	return 0;
}
static inline bool ktime_after(const ktime_t cmp1, const ktime_t cmp2) { return ktime_compare(cmp1, cmp2) > 0; }
static inline bool ktime_before(const ktime_t cmp1, const ktime_t cmp2) { return ktime_compare(cmp1, cmp2) < 0; }
static inline s64 ktime_us_delta(const ktime_t later, const ktime_t earlier) { return ktime_to_us(ktime_sub(later, earlier)); }

#endif
