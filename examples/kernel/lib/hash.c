/*
 * lib/siphash.c and lib/xxhash.c - SipHash-2-4 with a 128-bit key (and
 * hsiphash, which on 64-bit machines is SipHash-1-3), over little-endian
 * words as Linux's siphash_Nu64() / hsiphash_Nu32() feed them; xxHash32
 * and xxHash64 with their published primes.
 */
#include "libk.h"

static inline u64 rol64(u64 w, unsigned int s) { return (w << s) | (w >> (64 - s)); }
static inline u32 rol32(u32 w, unsigned int s) { return (w << s) | (w >> (32 - s)); }

#define SIPROUND                                                  \
	do {                                                      \
		v0 += v1; v1 = rol64(v1, 13); v1 ^= v0; v0 = rol64(v0, 32); \
		v2 += v3; v3 = rol64(v3, 16); v3 ^= v2;             \
		v0 += v3; v3 = rol64(v3, 21); v3 ^= v0;             \
		v2 += v1; v1 = rol64(v1, 17); v1 ^= v2; v2 = rol64(v2, 32); \
	} while (0)

static inline u64 le64_at(const u8 *p)
{
	u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* SipHash-c-d of the little-endian words at m[0..n) then the final word `last` (length byte in its top) */
static noinline u64 sip_words(const siphash_key_t *key, const void *m, size_t n, u64 last, int c, int d)
{
	u64 v0 = 0x736f6d6570736575ULL, v1 = 0x646f72616e646f6dULL;
	u64 v2 = 0x6c7967656e657261ULL, v3 = 0x7465646279746573ULL;
	size_t i;
	int r;

	v3 ^= key->key[1];
	v2 ^= key->key[0];
	v1 ^= key->key[1];
	v0 ^= key->key[0];
	for (i = 0; i <= n; i++) {
		u64 w = i < n ? le64_at((const u8 *)m + 8 * i) : last;

		v3 ^= w;
		for (r = 0; r < c; r++)
			SIPROUND;
		v0 ^= w;
	}
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		SIPROUND;
	return (v0 ^ v1) ^ (v2 ^ v3);
}

/* the final word: the tail bytes, the length's low byte in the top */
static u64 sip_last(const u8 *p, size_t len)
{
	u64 last = (u64)len << 56;
	size_t i, n = len / 8;

	for (i = 0; i < (len & 7); i++)
		last |= (u64)p[8 * n + i] << (8 * i);
	return last;
}

/* SipHash-2-4 of len bytes of data */
u64 __siphash_aligned(const void *data, size_t len, const siphash_key_t *key)
{
	return sip_words(key, data, len / 8, sip_last(data, len), 2, 4);
}

u64 siphash_1u64(u64 first, const siphash_key_t *key)
{
	return sip_words(key, &first, 1, 8ULL << 56, 2, 4);
}

u64 siphash_2u64(u64 first, u64 second, const siphash_key_t *key)
{
	u64 m[2] = {first, second};

	return sip_words(key, m, 2, 16ULL << 56, 2, 4);
}

u64 siphash_3u64(u64 first, u64 second, u64 third, const siphash_key_t *key)
{
	u64 m[3] = {first, second, third};

	return sip_words(key, m, 3, 24ULL << 56, 2, 4);
}

u64 siphash_4u64(u64 first, u64 second, u64 third, u64 forth, const siphash_key_t *key)
{
	u64 m[4] = {first, second, third, forth};

	return sip_words(key, m, 4, 32ULL << 56, 2, 4);
}

u64 siphash_1u32(u32 first, const siphash_key_t *key)
{
	return sip_words(key, NULL, 0, (4ULL << 56) | first, 2, 4);
}

u64 siphash_3u32(u32 first, u32 second, u32 third, const siphash_key_t *key)
{
	u64 m = ((u64)second << 32) | first;

	return sip_words(key, &m, 1, (12ULL << 56) | third, 2, 4);
}

/* hsiphash: SipHash-1-3 on 64-bit machines, the low 32 bits of its result */
u32 __hsiphash_aligned(const void *data, size_t len, const hsiphash_key_t *key)
{
	siphash_key_t k = {{key->key[0], key->key[1]}};

	return (u32)sip_words(&k, data, len / 8, sip_last(data, len), 1, 3);
}

u32 hsiphash_1u32(u32 first, const hsiphash_key_t *key)
{
	return __hsiphash_aligned(&first, 4, key);
}

u32 hsiphash_2u32(u32 first, u32 second, const hsiphash_key_t *key)
{
	u32 m[2] = {first, second};

	return __hsiphash_aligned(m, 8, key);
}

u32 hsiphash_3u32(u32 first, u32 second, u32 third, const hsiphash_key_t *key)
{
	u32 m[3] = {first, second, third};

	return __hsiphash_aligned(m, 12, key);
}

u32 hsiphash_4u32(u32 first, u32 second, u32 third, u32 forth, const hsiphash_key_t *key)
{
	u32 m[4] = {first, second, third, forth};

	return __hsiphash_aligned(m, 16, key);
}

#define PRIME32_1 2654435761U
#define PRIME32_2 2246822519U
#define PRIME32_3 3266489917U
#define PRIME32_4 668265263U
#define PRIME32_5 374761393U
#define PRIME64_1 11400714785074694791ULL
#define PRIME64_2 14029467366897019727ULL
#define PRIME64_3 1609587929392839161ULL
#define PRIME64_4 9650029242287828579ULL
#define PRIME64_5 2870177450012600261ULL

static inline u32 le32_at(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static noinline u32 xxh32_round(u32 seed, u32 input)
{
	seed += input * PRIME32_2;
	seed = rol32(seed, 13);
	return seed * PRIME32_1;
}

u32 xxh32(const void *input, size_t len, u32 seed)
{
	const u8 *p = input, *b_end = p + len;
	u32 h32;

	if (len >= 16) {
		const u8 *limit = b_end - 16;
		u32 v1 = seed + PRIME32_1 + PRIME32_2, v2 = seed + PRIME32_2, v3 = seed, v4 = seed - PRIME32_1;

		do {
			v1 = xxh32_round(v1, le32_at(p));
			v2 = xxh32_round(v2, le32_at(p + 4));
			v3 = xxh32_round(v3, le32_at(p + 8));
			v4 = xxh32_round(v4, le32_at(p + 12));
			p += 16;
		} while (p <= limit);
		h32 = rol32(v1, 1) + rol32(v2, 7) + rol32(v3, 12) + rol32(v4, 18);
	} else {
		h32 = seed + PRIME32_5;
	}
	h32 += (u32)len;
	while (p + 4 <= b_end) {
		h32 += le32_at(p) * PRIME32_3;
		h32 = rol32(h32, 17) * PRIME32_4;
		p += 4;
	}
	while (p < b_end) {
		h32 += (*p) * PRIME32_5;
		h32 = rol32(h32, 11) * PRIME32_1;
		p++;
	}
	h32 ^= h32 >> 15;
	h32 *= PRIME32_2;
	h32 ^= h32 >> 13;
	h32 *= PRIME32_3;
	h32 ^= h32 >> 16;
	return h32;
}

static noinline u64 xxh64_round(u64 acc, u64 input)
{
	acc += input * PRIME64_2;
	acc = rol64(acc, 31);
	return acc * PRIME64_1;
}

static noinline u64 xxh64_merge_round(u64 acc, u64 val)
{
	val = xxh64_round(0, val);
	acc ^= val;
	return acc * PRIME64_1 + PRIME64_4;
}

u64 xxh64(const void *input, size_t len, u64 seed)
{
	const u8 *p = input, *b_end = p + len;
	u64 h64;

	if (len >= 32) {
		const u8 *limit = b_end - 32;
		u64 v1 = seed + PRIME64_1 + PRIME64_2, v2 = seed + PRIME64_2, v3 = seed, v4 = seed - PRIME64_1;

		do {
			v1 = xxh64_round(v1, le64_at(p));
			v2 = xxh64_round(v2, le64_at(p + 8));
			v3 = xxh64_round(v3, le64_at(p + 16));
			v4 = xxh64_round(v4, le64_at(p + 24));
			p += 32;
		} while (p <= limit);
		h64 = rol64(v1, 1) + rol64(v2, 7) + rol64(v3, 12) + rol64(v4, 18);
		h64 = xxh64_merge_round(h64, v1);
		h64 = xxh64_merge_round(h64, v2);
		h64 = xxh64_merge_round(h64, v3);
		h64 = xxh64_merge_round(h64, v4);
	} else {
		h64 = seed + PRIME64_5;
	}
	h64 += (u64)len;
	while (p + 8 <= b_end) {
		h64 ^= xxh64_round(0, le64_at(p));
		h64 = rol64(h64, 27) * PRIME64_1 + PRIME64_4;
		p += 8;
	}
	if (p + 4 <= b_end) {
		h64 ^= (u64)le32_at(p) * PRIME64_1;
		h64 = rol64(h64, 23) * PRIME64_2 + PRIME64_3;
		p += 4;
	}
	while (p < b_end) {
		h64 ^= (*p) * PRIME64_5;
		h64 = rol64(h64, 11) * PRIME64_1;
		p++;
	}
	h64 ^= h64 >> 33;
	h64 *= PRIME64_2;
	h64 ^= h64 >> 29;
	h64 *= PRIME64_3;
	h64 ^= h64 >> 32;
	return h64;
}
