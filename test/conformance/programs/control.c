/* control.c - branches, loops, dense switches (jump tables), computed goto, calls through tables. */
#include "rt.h"

static NOINLINE long dense_switch(unsigned op, long a, long b)
{
	switch (op) {
	case 0: return a + b;
	case 1: return a - b;
	case 2: return a * b;
	case 3: return b ? a / b : -1;
	case 4: return a & b;
	case 5: return a | b;
	case 6: return a ^ b;
	case 7: return a << (b & 15);
	case 8: return a >> (b & 15);
	case 9: return ~a;
	case 10: return -b;
	case 11: return a > b ? a : b;
	case 12: return a < b ? a : b;
	case 13: return a * 3 + b;
	case 14: return (a + b) * (a - b);
	case 15: return a % 17 + b % 13;
	default: return 0x1234;
	}
}

/* a sparse switch: compare trees */
static NOINLINE int sparse_switch(long v)
{
	switch (v) {
	case -1000: return 1;
	case -7: return 2;
	case 0: return 3;
	case 13: return 4;
	case 100: return 5;
	case 4096: return 6;
	case 65537: return 7;
	case 1000000007: return 8;
	default: return 0;
	}
}

/* a byte-code interpreter with computed goto */
static NOINLINE long interp(const u8 *code, long x)
{
	static const void *labels[] = { &&op_halt, &&op_inc, &&op_dbl, &&op_dec, &&op_jnz, &&op_xor };
	long acc = x, counter = 0;
	const u8 *pc = code;
#define NEXT goto *labels[*pc++]
	NEXT;
op_inc:
	acc++;
	NEXT;
op_dbl:
	acc *= 2;
	NEXT;
op_dec:
	counter--;
	NEXT;
op_jnz: {
	u8 target = *pc++;
	if (counter > 0)
		pc = code + target;
	NEXT;
}
op_xor:
	acc ^= 0x5a;
	counter = acc & 7;
	NEXT;
op_halt:
	return acc;
#undef NEXT
}

static long f_add(long a) { return a + 11; }
static long f_mul(long a) { return a * 7; }
static long f_neg(long a) { return -a; }
static long f_shr(long a) { return a >> 2; }
static long (*const ftab[])(long) = { f_add, f_mul, f_neg, f_shr };

static NOINLINE long collatz_steps(u64 n)
{
	long steps = 0;
	while (n != 1) {
		if (n & 1)
			n = 3 * n + 1;
		else
			n >>= 1;
		steps++;
	}
	return steps;
}

static NOINLINE long nested_loops(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++) {
		for (int j = i; j < n; j++) {
			if ((i ^ j) & 1)
				continue;
			if (i * j > 600)
				break;
			s += i * j - (j >> 1);
		}
	}
	int k = 0;
	do {
		s ^= (long)k << (k & 7);
		k += 3;
	} while (k < 100);
	return s;
}

int main(void)
{
	u64 h = 0;
	static const u8 prog[] = { 1, 2, 5, 2, 3, 4, 3, 1, 0 };
	for (unsigned op = 0; op < 18; op++) {
		long r = dense_switch(OPAQUE(op), OPAQUE(1000 + op), OPAQUE(7 - (long)op));
		printf("switch op %2u -> %ld\n", op, r);
		h = ck(h, (u64)r);
	}
	static const long probes[] = { -1000, -7, 0, 13, 100, 4096, 65537, 1000000007, 5, -1 };
	for (unsigned i = 0; i < ARRAY_SIZE(probes); i++) {
		int r = sparse_switch(OPAQUE(probes[i]));
		printf("sparse %ld -> %d\n", probes[i], r);
		h = ck(h, (u64)r);
	}
	for (long x = 0; x < 6; x++) {
		long r = interp(prog, OPAQUE(x));
		printf("interp(%ld) = %ld\n", x, r);
		h = ck(h, (u64)r);
	}
	long v = 5;
	for (int i = 0; i < 20; i++) {
		v = ftab[OPAQUE(i) & 3](v);
		h = ck(h, (u64)v);
	}
	printf("fn table result %ld\n", v);
	long maxs = 0, maxn = 0;
	for (u64 n = 1; n < 3000; n++) {
		long s = collatz_steps(OPAQUE(n));
		if (s > maxs)
			maxs = s, maxn = (long)n;
		h = ck(h, (u64)s);
	}
	printf("collatz: longest below 3000 is %ld with %ld steps\n", maxn, maxs);
	printf("nested loops %ld\n", nested_loops(OPAQUE(60)));
	printf("control checksum %016lx\n", h);
	return 0;
}
