/* recursion.c - ackermann, fib, hanoi, mutual recursion, tak. */
#include "rt.h"

static NOINLINE u64 ackermann(u64 m, u64 n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

static NOINLINE u64 fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static u64 moves;
static u64 move_hash;

static NOINLINE void hanoi(int n, int from, int to, int via)
{
	if (n == 0)
		return;
	hanoi(n - 1, from, via, to);
	moves++;
	move_hash = ck(move_hash, (u64)(n * 100 + from * 10 + to));
	if (moves <= 7)
		printf("hanoi: move disk %d from %c to %c\n", n, 'A' + from, 'A' + to);
	hanoi(n - 1, via, to, from);
}

static NOINLINE int is_odd(unsigned n);
static NOINLINE int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static NOINLINE int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static NOINLINE int tak(int x, int y, int z)
{
	if (y < x)
		return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y));
	return z;
}

/* recursion with a large frame */
static NOINLINE u64 deep(int n, u64 seed)
{
	volatile u64 frame[16];
	for (int i = 0; i < 16; i++)
		frame[i] = seed * (u64)(i + 1) + (u64)n;
	if (n == 0)
		return frame[3];
	u64 r = deep(n - 1, seed ^ frame[n & 15]);
	return r + frame[(n * 7) & 15];
}

int main(void)
{
	for (u64 m = 0; m <= 3; m++)
		for (u64 n = 0; n <= 4; n++)
			printf("ackermann(%lu, %lu) = %lu\n", m, n, ackermann(OPAQUE(m), OPAQUE(n)));
	for (unsigned n = 0; n <= 24; n += 3)
		printf("fib(%u) = %lu\n", n, fib(OPAQUE(n)));
	hanoi(OPAQUE(12), 0, 2, 1);
	printf("hanoi(12): %lu moves, hash %016lx\n", moves, move_hash);
	printf("is_even(1001) = %d, is_odd(777) = %d\n", is_even(OPAQUE(1001)), is_odd(OPAQUE(777)));
	printf("tak(18, 12, 6) = %d\n", tak(OPAQUE(18), OPAQUE(12), OPAQUE(6)));
	printf("deep(200) = %016lx\n", deep(OPAQUE(200), 0x9e3779b97f4a7c15UL));
	return 0;
}
