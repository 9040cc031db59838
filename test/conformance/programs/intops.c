/* intops.c - integer arithmetic at every width, signed and unsigned. */
#include "rt.h"

static const u64 seeds[] = {
	0, 1, 2, 3, 7, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x12345678, 0x7fffffff,
	0x80000000, 0xffffffff, 0x100000000UL, 0xdeadbeefcafebabeUL, 0x7fffffffffffffffUL,
	0x8000000000000000UL, 0xffffffffffffffffUL, 0xfffffffffffffffeUL, 0x0123456789abcdefUL,
	0x5555555555555555UL, 0xaaaaaaaaaaaaaaaaUL, 0x00000000ffff0000UL, 37, 1000003,
};
#define NS ARRAY_SIZE(seeds)

/*
 * One function per width and signedness. Signed overflow is avoided by doing
 * wrapping arithmetic in the unsigned type and converting back (gcc and clang
 * both define that conversion as modulo 2^N).
 */
#define DEFINE_OPS(NAME, ST, UT, BITS)                                                          \
	static NOINLINE u64 NAME(u64 ha, u64 hb)                                                 \
	{                                                                                        \
		u64 h = 0x811c9dc5;                                                              \
		for (unsigned i = 0; i < NS; i++) {                                              \
			for (unsigned j = 0; j < NS; j++) {                                      \
				UT ua = (UT)OPAQUE(seeds[i] ^ ha), ub = (UT)OPAQUE(seeds[j] ^ hb); \
				ST sa = (ST)ua, sb = (ST)ub;                                     \
				unsigned sh = (unsigned)(ub % BITS);                             \
				h = ck(h, (UT)(ua + ub));                                        \
				h = ck(h, (UT)(ua - ub));                                        \
				h = ck(h, (UT)(ua * ub));                                        \
				h = ck(h, (UT)(ST)(UT)((UT)sa * (UT)sb));                        \
				h = ck(h, (UT)-ua);                                              \
				h = ck(h, (UT)~ua);                                              \
				h = ck(h, (UT)(ua & ub) ^ (UT)(ua | ub) ^ (UT)(ua ^ ub) << 1);   \
				if (ub != 0) {                                                   \
					h = ck(h, (UT)(ua / ub));                                \
					h = ck(h, (UT)(ua % ub));                                \
				}                                                                \
				if (sb != 0 && !(sb == -1 && sa == (ST)((UT)1 << (BITS - 1)))) { \
					h = ck(h, (UT)(ST)(sa / sb));                            \
					h = ck(h, (UT)(ST)(sa % sb));                            \
				}                                                                \
				h = ck(h, (UT)(ua << sh));                                       \
				h = ck(h, (UT)(ua >> sh));                                       \
				h = ck(h, (UT)(ST)(sa >> sh));                                   \
				if (sh)                                                          \
					h = ck(h, (UT)((UT)(ua << sh) | (UT)(ua >> (BITS - sh)))); \
				if (sh)                                                          \
					h = ck(h, (UT)((UT)(ua >> sh) | (UT)(ua << (BITS - sh)))); \
				h = ck(h, (u64)((ua < ub) | (ua <= ub) << 1 | (ua > ub) << 2 |   \
						(ua >= ub) << 3 | (ua == ub) << 4 | (ua != ub) << 5 | \
						(sa < sb) << 6 | (sa <= sb) << 7 | (sa > sb) << 8 |   \
						(sa >= sb) << 9));                                   \
				h = ck(h, (u64)(s64)sa);                                         \
				h = ck(h, (u64)ua);                                              \
			}                                                                        \
		}                                                                                \
		return h;                                                                        \
	}

DEFINE_OPS(ops8, s8, u8, 8)
DEFINE_OPS(ops16, s16, u16, 16)
DEFINE_OPS(ops32, s32, u32, 32)
DEFINE_OPS(ops64, s64, u64, 64)

/* A few results printed directly, not only as checksums. */
static NOINLINE void samples(void)
{
	u8 a8 = (u8)OPAQUE(200), b8 = (u8)OPAQUE(100);
	s8 c8 = (s8)OPAQUE(-100);
	u16 a16 = (u16)OPAQUE(60000);
	s16 c16 = (s16)OPAQUE(-30000);
	u32 a32 = (u32)OPAQUE(4000000000u);
	s32 c32 = (s32)OPAQUE(-2000000000);
	u64 a64 = OPAQUE(0xfedcba9876543210UL);
	s64 c64 = (s64)OPAQUE(-1234567890123456789L);
	printf("u8: %u+%u=%u %u*%u=%u %u/%u=%u\n", a8, b8, (u8)(a8 + b8), a8, b8, (u8)(a8 * b8), a8, b8,
	       a8 / b8);
	printf("s8: %d>>3=%d %d/7=%d %d%%7=%d neg=%d\n", c8, c8 >> 3, c8, c8 / 7, c8, c8 % 7, (s8)-c8);
	printf("u16: %u<<3=%u rol5=%u\n", a16, (u16)(a16 << 3), (u16)((u16)(a16 << 5) | (a16 >> 11)));
	printf("s16: %d*3=%d %d/-7=%d %d%%-7=%d\n", c16, (s16)(u16)((u16)c16 * 3u), c16, c16 / -7, c16,
	       c16 % -7);
	printf("u32: %u*3=%u %u/7=%u %u%%7=%u %x ror7=%x\n", a32, a32 * 3u, a32, a32 / 7, a32, a32 % 7, a32,
	       (a32 >> 7) | (a32 << 25));
	printf("s32: %d/13=%d %d%%13=%d %d>>9=%d\n", c32, c32 / 13, c32, c32 % 13, c32, c32 >> 9);
	printf("u64: %lx*%lx=%lx /%lu=%lu %%%lu=%lu\n", a64, a64, a64 * a64, 1000003UL, a64 / 1000003UL,
	       1000003UL, a64 % 1000003UL);
	printf("s64: %ld/977=%ld %ld%%977=%ld %ld>>17=%ld\n", c64, c64 / 977, c64, c64 % 977, c64,
	       c64 >> 17);
	printf("mixed: %ld %lu %d %u\n", (s64)c32 * a32, (u64)a32 * a32, (s32)c8 * c16, (u32)a16 * a16);
}

int main(void)
{
	samples();
	for (unsigned r = 0; r < 4; r++) {
		u64 ha = r * 0x9e3779b97f4a7c15UL, hb = r * 0xc2b2ae3d27d4eb4fUL;
		printf("round %u: ops8 %016lx\n", r, ops8(ha, hb));
		printf("round %u: ops16 %016lx\n", r, ops16(ha, hb));
		printf("round %u: ops32 %016lx\n", r, ops32(ha, hb));
		printf("round %u: ops64 %016lx\n", r, ops64(ha, hb));
	}
	return 0;
}
