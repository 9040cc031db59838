/* bitops.c - popcount, clz, ctz, bswap, parity, bit tests and field extraction.
 * Built twice: plain and with -mpopcnt -mlzcnt -mbmi (popcnt/lzcnt/tzcnt/andn/blsr...). */
#include "rt.h"

static const u64 vals[] = {
	1, 2, 3, 0x80, 0xff, 0x100, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000UL, 0x8000000000000000UL, 0xffffffffffffffffUL, 0x0123456789abcdefUL,
	0xfedcba9876543210UL, 0x5555555555555555UL, 0x00f000f000f000f0UL, 0x4000000000000001UL,
};

static NOINLINE u64 bits_of(u64 v)
{
	u32 v32 = (u32)v ? (u32)v : 1;
	u16 v16 = (u16)v;
	u64 h = 0;
	h = ck(h, (u64)__builtin_popcountll(v));
	h = ck(h, (u64)__builtin_popcount((u32)v));
	h = ck(h, (u64)__builtin_clzll(v));
	h = ck(h, (u64)__builtin_ctzll(v));
	h = ck(h, (u64)__builtin_clz(v32));
	h = ck(h, (u64)__builtin_ctz(v32));
	h = ck(h, __builtin_bswap64(v));
	h = ck(h, __builtin_bswap32((u32)v));
	h = ck(h, __builtin_bswap16(v16));
	h = ck(h, (u64)__builtin_parityll(v));
	h = ck(h, v & (v - 1));         /* blsr */
	h = ck(h, v & (0 - v));         /* blsi */
	h = ck(h, v ^ (v - 1));         /* blsmsk */
	h = ck(h, ~v & 0x0f0f0f0f0f0f0f0fUL); /* andn */
	h = ck(h, (v >> 13) & 0x7ff);   /* bextr-able */
	h = ck(h, (u64)((v >> (v & 63)) & 1)); /* bt */
	return h;
}

static NOINLINE int popcount_loop(u64 v)
{
	int n = 0;
	for (; v; v >>= 1)
		n += (int)(v & 1);
	return n;
}

int main(void)
{
	u64 total = 0;
	for (unsigned i = 0; i < ARRAY_SIZE(vals); i++) {
		u64 v = OPAQUE(vals[i]);
		printf("%016lx: pop %2d clz %2d ctz %2d bswap %016lx parity %d\n", v, __builtin_popcountll(v),
		       __builtin_clzll(v), __builtin_ctzll(v), __builtin_bswap64(v), __builtin_parityll(v));
		if (popcount_loop(v) != __builtin_popcountll(v))
			printf("popcount mismatch at %lx\n", v);
		total = ck(total, bits_of(v));
	}
	u64 x = 0x243f6a8885a308d3UL;
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		total = ck(total, bits_of(OPAQUE(x)));
	}
	printf("bitops checksum %016lx\n", total);
	return 0;
}
