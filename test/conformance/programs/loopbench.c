/* loopbench.c - a deterministic integer workload (~200 million instructions) for benchmarks. */
#include "rt.h"

#define N 4096
static u32 table[N];
static u8 sieve[200000];

static NOINLINE u32 crc32_bitwise(const u8 *p, size_t n, u32 crc)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static NOINLINE u64 primes(u32 limit)
{
	u64 count = 0, sum = 0;
	memset(sieve, 0, limit);
	for (u32 i = 2; i < limit; i++) {
		if (sieve[i])
			continue;
		count++;
		sum += i;
		for (u32 j = i * 2; j < limit; j += i)
			sieve[j] = 1;
	}
	return count << 40 ^ sum;
}

static NOINLINE u64 matmul(int n, u32 seed)
{
	static u32 a[48][48], b[48][48], c[48][48];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			seed = seed * 1103515245u + 12345u;
			a[i][j] = seed >> 16;
			b[j][i] = seed & 0xffff;
		}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			u32 s = 0;
			for (int k = 0; k < n; k++)
				s += a[i][k] * b[k][j];
			c[i][j] = s;
		}
	u64 h = 0;
	for (int i = 0; i < n; i++)
		h = ck(h, c[i][(i * 7) % n]);
	return h;
}

static NOINLINE u64 lcg_mix(u64 rounds)
{
	u64 x = 1, y = 0x9e3779b97f4a7c15UL;
	for (u64 i = 0; i < rounds; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		y ^= x >> 29;
		y = (y << 7) | (y >> 57);
		table[i & (N - 1)] += (u32)y;
	}
	return x ^ y;
}

int main(void)
{
	u64 h = 0;
	for (int round = 0; round < 3; round++) {
		u64 r1 = lcg_mix(OPAQUE(5000000));
		u32 r2 = crc32_bitwise((const u8 *)table, sizeof(table), (u32)round);
		u64 r3 = primes(OPAQUE(200000));
		u64 r4 = matmul(OPAQUE(48), (u32)round + 1);
		h = ck(ck(ck(ck(h, r1), r2), r3), r4);
		printf("round %d: lcg %016lx crc %08x primes %016lx matmul %016lx\n", round, r1, r2, r3, r4);
	}
	printf("loopbench checksum %016lx\n", h);
	return 0;
}
