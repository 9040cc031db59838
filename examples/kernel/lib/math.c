/*
 * lib/math/ (gcd, lcm, int_pow, int_sqrt, reciprocal_div, div64,
 * rational), lib/bcd.c, lib/math/int_log.c and lib/win_minmax.c, with the
 * results Linux's kernel-doc gives them.
 */
#include "libk.h"

unsigned long gcd(unsigned long a, unsigned long b)
{
	while (b) {
		unsigned long t = a % b;

		a = b;
		b = t;
	}
	return a;
}

unsigned long lcm(unsigned long a, unsigned long b)
{
	if (a && b)
		return (a / gcd(a, b)) * b;
	return 0;
}

unsigned long lcm_not_zero(unsigned long a, unsigned long b)
{
	unsigned long l = lcm(a, b);

	if (l)
		return l;
	return b ? b : a;
}

u64 int_pow(u64 base, unsigned int exp)
{
	u64 result = 1;

	while (exp) {
		if (exp & 1)
			result *= base;
		exp >>= 1;
		base *= base;
	}
	return result;
}

/* floor(sqrt(x)) */
unsigned long int_sqrt(unsigned long x)
{
	unsigned long b, m, y = 0;

	if (x <= 1)
		return x;
	m = 1UL << ((BITS_PER_LONG - 1 - (unsigned long)__builtin_clzl(x)) & ~1UL);
	while (m != 0) {
		b = y + m;
		y >>= 1;
		if (x >= b) {
			x -= b;
			y += m;
		}
		m >>= 2;
	}
	return y;
}

u32 int_sqrt64(u64 x)
{
	return (u32)int_sqrt(x);
}

/* lib/math/reciprocal_div.c: m and shifts so that a / d == reciprocal_divide(a, R) for every u32 a */
struct reciprocal_value reciprocal_value(u32 d)
{
	struct reciprocal_value R;
	u64 m;
	int l = d > 1 ? 32 - __builtin_clz(d - 1) : 0;

	m = ((1ULL << 32) * ((1ULL << l) - d));
	m = m / d + 1;
	R.m = (u32)m;
	R.sh1 = (u8)(l < 1 ? l : 1);
	R.sh2 = (u8)(l - 1 > 0 ? l - 1 : 0);
	return R;
}

u32 reciprocal_divide(u32 a, struct reciprocal_value R)
{
	u32 t = (u32)(((u64)a * R.m) >> 32);

	return (t + ((a - t) >> R.sh1)) >> R.sh2;
}

u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

s64 div64_s64(s64 dividend, s64 divisor)
{
	return dividend / divisor;
}

/* a * b / c with a 128-bit product (the quotient must fit 64 bits), by shift and subtract */
u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	unsigned __int128 n = (unsigned __int128)a * b, r = 0;
	u64 q = 0;
	int i;

	for (i = 127; i >= 0; i--) {
		r = (r << 1) | (unsigned __int128)((n >> i) & 1);
		q <<= 1;
		if (r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return q;
}

u32 iter_div_u64_rem(u64 dividend, u32 divisor, u64 *remainder)
{
	u32 ret = 0;

	while (dividend >= divisor) {
		dividend -= divisor;
		ret++;
	}
	*remainder = dividend;
	return ret;
}

/*
 * lib/math/rational.c: the closest fraction to given_numerator /
 * given_denominator whose terms fit max_numerator and max_denominator
 * (continued fractions, with the semiconvergent when it is closer).
 */
void rational_best_approximation(unsigned long given_numerator, unsigned long given_denominator,
				 unsigned long max_numerator, unsigned long max_denominator,
				 unsigned long *best_numerator, unsigned long *best_denominator)
{
	unsigned long n = given_numerator, d = given_denominator;
	unsigned long n0 = 0, d0 = 1, n1 = 1, d1 = 0, n2, d2;

	for (;;) {
		unsigned long dp, a;

		if (d == 0)
			break;
		dp = d;
		a = n / d;
		d = n % d;
		n = dp;
		n2 = n0 + a * n1;
		d2 = d0 + a * d1;
		if (n2 > max_numerator || d2 > max_denominator) {
			unsigned long t = ~0UL;

			if (d1)
				t = (max_denominator - d0) / d1;
			if (n1)
				t = min_ul(t, (max_numerator - n0) / n1);
			if (!d1 || 2u * t > a || (2u * t == a && d0 * dp > d1 * d)) {
				n1 = n0 + t * n1;
				d1 = d0 + t * d1;
			}
			break;
		}
		n0 = n1;
		n1 = n2;
		d0 = d1;
		d1 = d2;
	}
	*best_numerator = n1;
	*best_denominator = d1;
}

unsigned _bcd2bin(unsigned char val)
{
	return (val & 0x0f) + (val >> 4) * 10;
}

unsigned char _bin2bcd(unsigned val)
{
	return (unsigned char)(((val / 10) << 4) + val % 10);
}

/* lib/math/int_log.c: log2(value) in 8.24 fixed point (0 for 0) */
unsigned int intlog2(u32 value)
{
	unsigned int msb, i;
	u64 x;
	unsigned int frac = 0;

	if (!value)
		return 0;
	msb = 31 - (unsigned int)__builtin_clz(value);
	x = (u64)value << 32 >> msb; /* 1.32 fixed point in [1, 2) */
	for (i = 0; i < 24; i++) {
		x = (u64)(((unsigned __int128)x * x) >> 32);
		frac <<= 1;
		if (x >= (2ULL << 32)) {
			x >>= 1;
			frac |= 1;
		}
	}
	return (msb << 24) + frac;
}

/* log10(value) in 8.24 fixed point: log2(value) / log2(10) */
unsigned int intlog10(u32 value)
{
	/* 1 / log2(10) in 0.32 fixed point */
	const u64 inv_log2_10 = 1292913986ULL;

	if (!value)
		return 0;
	return (unsigned int)(((u64)intlog2(value) * inv_log2_10) >> 32);
}

/* lib/win_minmax.c: the running maximum / minimum of samples within a window of `win` time units */
static noinline u32 minmax_subwin_update(struct minmax *m, u32 win, const struct minmax_sample *val)
{
	u32 dt = val->t - m->s[0].t;

	if (dt > win) {
		m->s[0] = m->s[1];
		m->s[1] = m->s[2];
		m->s[2] = *val;
		if (val->t - m->s[0].t > win) {
			m->s[0] = m->s[1];
			m->s[1] = m->s[2];
			m->s[2] = *val;
		}
	} else if (m->s[1].t == m->s[0].t && dt > win / 4) {
		m->s[2] = m->s[1] = *val;
	} else if (m->s[2].t == m->s[1].t && dt > win / 2) {
		m->s[2] = *val;
	}
	return m->s[0].v;
}

static void minmax_reset_to(struct minmax *m, const struct minmax_sample *val)
{
	m->s[2] = m->s[1] = m->s[0] = *val;
}

u32 minmax_running_max(struct minmax *m, u32 win, u32 t, u32 meas)
{
	struct minmax_sample val = { .t = t, .v = meas };

	if (val.v >= m->s[0].v || val.t - m->s[2].t > win) {
		minmax_reset_to(m, &val);
		return m->s[0].v;
	}
	if (val.v >= m->s[1].v)
		m->s[2] = m->s[1] = val;
	else if (val.v >= m->s[2].v)
		m->s[2] = val;
	return minmax_subwin_update(m, win, &val);
}

u32 minmax_running_min(struct minmax *m, u32 win, u32 t, u32 meas)
{
	struct minmax_sample val = { .t = t, .v = meas };

	if (val.v <= m->s[0].v || val.t - m->s[2].t > win) {
		minmax_reset_to(m, &val);
		return m->s[0].v;
	}
	if (val.v <= m->s[1].v)
		m->s[2] = m->s[1] = val;
	else if (val.v <= m->s[2].v)
		m->s[2] = val;
	return minmax_subwin_update(m, win, &val);
}
