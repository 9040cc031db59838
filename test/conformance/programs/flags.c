/* flags.c - flag-sensitive code: overflow builtins, carry chains, setcc, cmov. */
#include "rt.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

static const u64 vals[] = {
	0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000UL, 0x7fffffffffffffffUL, 0x8000000000000000UL, 0xffffffffffffffffUL,
	0xfffffffffffffff0UL, 0x0000000100000001UL, 0xdeadbeef12345678UL, 3, 0x55, 0xaaaa,
};
#define NV ARRAY_SIZE(vals)

#define OVF(h, T, a, b)                                                                     \
	do {                                                                                \
		T r;                                                                        \
		int o;                                                                      \
		o = __builtin_add_overflow((T)(a), (T)(b), &r);                             \
		h = ck(h, (u64)r ^ ((u64)o << 63));                                        \
		o = __builtin_sub_overflow((T)(a), (T)(b), &r);                             \
		h = ck(h, (u64)r ^ ((u64)o << 62));                                        \
		o = __builtin_mul_overflow((T)(a), (T)(b), &r);                             \
		h = ck(h, (u64)r ^ ((u64)o << 61));                                        \
	} while (0)

static NOINLINE u64 overflow_checks(void)
{
	u64 h = 1;
	int count = 0;
	for (unsigned i = 0; i < NV; i++) {
		for (unsigned j = 0; j < NV; j++) {
			u64 a = OPAQUE(vals[i]), b = OPAQUE(vals[j]);
			int r32;
			OVF(h, s8, a, b);
			OVF(h, u8, a, b);
			OVF(h, s16, a, b);
			OVF(h, u16, a, b);
			OVF(h, s32, a, b);
			OVF(h, u32, a, b);
			OVF(h, s64, a, b);
			OVF(h, u64, a, b);
			count += __builtin_add_overflow((s32)a, (s32)b, &r32);
		}
	}
	printf("overflow: signed 32-bit add overflows %d of %u\n", count, (unsigned)(NV * NV));
	return h;
}

/* 256-bit addition/subtraction built from 128-bit halves: adc/sbb chains. */
static NOINLINE u64 carry_chains(void)
{
	u64 h = 2;
	u128 acc_lo = 0, acc_hi = 0;
	for (unsigned i = 0; i < NV; i++) {
		for (unsigned j = 0; j < NV; j++) {
			u128 a = ((u128)OPAQUE(vals[i]) << 64) | OPAQUE(vals[j]);
			u128 b = ((u128)OPAQUE(vals[j]) << 64) | OPAQUE(vals[(i + j) % NV]);
			u128 s = a + b, d = a - b;
			u128 p = (u128)OPAQUE(vals[i]) * OPAQUE(vals[j]);
			s128 sp = (s128)(s64)OPAQUE(vals[i]) * (s64)OPAQUE(vals[j]);
			u128 old = acc_lo;
			acc_lo += s;
			acc_hi += (acc_lo < old);
			h = ck(h, (u64)s);
			h = ck(h, (u64)(s >> 64));
			h = ck(h, (u64)d ^ (u64)(d >> 64));
			h = ck(h, (u64)p ^ (u64)(p >> 64));
			h = ck(h, (u64)sp ^ (u64)(sp >> 64));
			h = ck(h, (u64)(a >> (i + 1)) ^ (u64)(b << (j + 3)));
			h = ck(h, (u64)((s128)a >> 70));
		}
	}
	printf("carry: acc %016lx %016lx %016lx\n", (u64)acc_hi, (u64)(acc_lo >> 64), (u64)acc_lo);
	return h;
}

static NOINLINE int sel_min(s64 a, s64 b) { return a < b ? (int)a : (int)b; }
static NOINLINE u64 sel_umax(u64 a, u64 b) { return a > b ? a : b; }
static NOINLINE s64 sel_abs(s64 a) { return a < 0 ? (s64)(0 - (u64)a) : a; }
static NOINLINE int sign3(s64 a) { return (a > 0) - (a < 0); }

static NOINLINE u64 setcc_cmov(void)
{
	u64 h = 3;
	for (unsigned i = 0; i < NV; i++) {
		for (unsigned j = 0; j < NV; j++) {
			u64 a = OPAQUE(vals[i]), b = OPAQUE(vals[j]);
			s32 a32 = (s32)a, b32 = (s32)b;
			u32 ua32 = (u32)a, ub32 = (u32)b;
			u64 bits = 0;
			bits |= (u64)((s64)a < (s64)b) << 0;
			bits |= (u64)(a < b) << 1;
			bits |= (u64)((s64)a <= (s64)b) << 2;
			bits |= (u64)(a <= b) << 3;
			bits |= (u64)(a32 > b32) << 4;
			bits |= (u64)(ua32 >= ub32) << 5;
			bits |= (u64)((u8)a == (u8)b) << 6;
			bits |= (u64)((s16)a < (s16)b) << 7;
			bits |= (u64)(((a + b) & 0xff) == 0) << 8;
			bits |= (u64)__builtin_parityll(a & 0xff) << 9;
			bits |= (u64)((s64)(a - b) < 0) << 10;
			bits |= (u64)((a & b) != 0) << 11;
			h = ck(h, bits);
			h = ck(h, (u64)sel_min((s64)a, (s64)b));
			h = ck(h, sel_umax(a, b));
			h = ck(h, (u64)sel_abs((s64)a));
			h = ck(h, (u64)(s64)sign3((s64)(a - b)));
			h = ck(h, a32 < b32 ? (u64)ua32 : (u64)ub32 * 3);
			h = ck(h, (a & 1) ? a : b);
		}
	}
	return h;
}

int main(void)
{
	printf("overflow checksum %016lx\n", overflow_checks());
	printf("carry checksum %016lx\n", carry_chains());
	printf("setcc/cmov checksum %016lx\n", setcc_cmov());
	for (int i = 0; i < 8; i++) {
		s32 r;
		int o = __builtin_mul_overflow((s32)OPAQUE(0x10000 + i), (s32)OPAQUE(0x7fff + i), &r);
		u64 ur;
		int uo = __builtin_add_overflow(OPAQUE(0xffffffffffffff00UL), OPAQUE((u64)i * 0x40), &ur);
		printf("mul %d: %d overflow=%d; add %lx overflow=%d\n", i, r, o, ur, uo);
	}
	return 0;
}
