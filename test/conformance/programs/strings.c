/* strings.c - string functions, struct copies, large builtin memcpy/memset, rep string insns. */
#include "rt.h"

struct big {
	u64 words[40];
	u32 tag;
	u8 bytes[77];
};

struct small {
	u16 a;
	u8 b;
	u32 c;
	u64 d;
};

static NOINLINE u64 hash_bytes(const void *p, size_t n)
{
	const u8 *b = p;
	u64 h = 0xcbf29ce484222325UL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3UL;
	return h;
}

static NOINLINE void fill_big(struct big *b, u64 seed)
{
	for (int i = 0; i < 40; i++)
		b->words[i] = seed * (u64)(i + 3) ^ (seed >> i);
	b->tag = (u32)seed;
	for (int i = 0; i < 77; i++)
		b->bytes[i] = (u8)(seed + (u64)i * 31);
}

static NOINLINE struct big copy_big(const struct big *src)
{
	struct big tmp = *src; /* struct copy */
	tmp.tag ^= 0xffff;
	return tmp;
}

static NOINLINE void builtin_ops(struct big *dst, const struct big *src)
{
	__builtin_memcpy(dst, src, sizeof(*dst));
	__builtin_memset(dst->bytes + 10, 0xab, 50);
	__builtin_memset(&dst->words[20], 0, 8 * 12);
}

#if defined(__x86_64__)
/* explicit string instructions, independent of what the compiler chooses */
static NOINLINE void rep_movsb(void *d, const void *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static NOINLINE void rep_stosq(void *d, u64 v, size_t n)
{
	__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}

static NOINLINE void rep_movsb_backwards(void *d, const void *s, size_t n)
{
	/* copy from the last byte down with the direction flag set */
	u8 *de = (u8 *)d + n - 1;
	const u8 *se = (const u8 *)s + n - 1;
	__asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(de), "+S"(se), "+c"(n) : : "memory");
}

static NOINLINE long repe_cmpsb(const void *a, const void *b, size_t n)
{
	/* returns the index of the first difference, or n */
	size_t left = n;
	__asm__ volatile("test %%rcx, %%rcx\n\t"
			 "jz 1f\n\t"
			 "repe cmpsb\n\t"
			 "je 1f\n\t"
			 "inc %%rcx\n"
			 "1:"
			 : "+D"(a), "+S"(b), "+c"(left)
			 :
			 : "memory", "cc");
	return (long)(n - left);
}

static NOINLINE long repne_scasb(const char *s, char c, size_t n)
{
	size_t left = n;
	const char *p = s;
	__asm__ volatile("repne scasb" : "+D"(p), "+c"(left) : "a"(c) : "memory", "cc");
	return (long)(p - s);
}

static NOINLINE u64 lodsq_sum(const u64 *p, size_t n)
{
	u64 sum = 0, v;
	while (n--) {
		__asm__ volatile("lodsq" : "=a"(v), "+S"(p) : : "memory");
		sum += v;
	}
	return sum;
}
#else
/* other architectures: the same semantics in C (volatile so the compiler keeps the loops) */
static NOINLINE void rep_movsb(void *d, const void *s, size_t n)
{
	volatile u8 *dp = d;
	const volatile u8 *sp = s;
	while (n--)
		*dp++ = *sp++;
}

static NOINLINE void rep_stosq(void *d, u64 v, size_t n)
{
	volatile u64 *dp = d;
	while (n--)
		*dp++ = v;
}

static NOINLINE void rep_movsb_backwards(void *d, const void *s, size_t n)
{
	volatile u8 *de = (u8 *)d + n;
	const volatile u8 *se = (const u8 *)s + n;
	while (n--)
		*--de = *--se;
}

static NOINLINE long repe_cmpsb(const void *a, const void *b, size_t n)
{
	const volatile u8 *pa = a, *pb = b;
	size_t i = 0;
	while (i < n && pa[i] == pb[i])
		i++;
	return (long)i;
}

static NOINLINE long repne_scasb(const char *s, char c, size_t n)
{
	/* x86 semantics: p ends one past the match (or after n bytes) */
	const volatile char *p = s;
	while (n--)
		if (*p++ == c)
			break;
	return (long)(p - s);
}

static NOINLINE u64 lodsq_sum(const u64 *p, size_t n)
{
	u64 sum = 0;
	const volatile u64 *vp = p;
	while (n--)
		sum += *vp++;
	return sum;
}
#endif

int main(void)
{
	static const char *words[] = { "", "a", "kprobe", "kprobes", "kretprobe", "jprobe", "Kprobe",
				       "kprobe\x80", "zebra", "abc", "abd" };
	static struct big b1, b2, b3;
	static u8 buf[300], buf2[300];
	u64 h = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(words); i++) {
		printf("strlen(\"%s\") = %lu\n", words[i], strlen(words[i]));
		for (unsigned j = 0; j < ARRAY_SIZE(words); j++) {
			int c = strcmp(words[i], words[j]);
			h = ck(h, (u64)(c < 0 ? -1 : c > 0));
		}
	}
	printf("strcmp sign checksum %016lx\n", h);

	fill_big(&b1, OPAQUE(0x1234567890abcdefUL));
	b2 = copy_big(&b1);
	printf("struct copy: tag %x hash %016lx\n", b2.tag, hash_bytes(&b2, sizeof(b2)));
	builtin_ops(&b3, &b2);
	printf("builtin memcpy/memset: hash %016lx\n", hash_bytes(&b3, sizeof(b3)));
	memset(&b3, 0x5c, sizeof(b3));
	memcpy(&b3.words[5], &b1.words[0], 8 * 10);
	printf("own memcpy/memset: hash %016lx\n", hash_bytes(&b3, sizeof(b3)));
	memmove(&b3.words[1], &b3.words[0], 8 * 30);
	memmove(&b3.bytes[0], &b3.bytes[5], 60);
	printf("memmove: hash %016lx cmp %d\n", hash_bytes(&b3, sizeof(b3)),
	       memcmp(&b1, &b3, sizeof(b1)) < 0 ? -1 : 1);

	struct small s1 = { OPAQUE(0x1234), 0x56, 0x789abcde, 0x1122334455667788UL }, s2, s3[4];
	s2 = s1;
	for (int i = 0; i < 4; i++) {
		s3[i] = s2;
		s3[i].c += (u32)i;
	}
	printf("small struct: %x %x %x %lx\n", s3[3].a, s3[3].b, s3[3].c, s3[3].d);

	for (int i = 0; i < 300; i++)
		buf[i] = (u8)(i * 7 + 1);
	rep_movsb(buf2, buf, 300);
	printf("rep movsb: hash %016lx\n", hash_bytes(buf2, 300));
	rep_stosq(buf2 + 8, 0x0102030405060708UL, 20);
	printf("rep stosq: hash %016lx\n", hash_bytes(buf2, 300));
	rep_movsb_backwards(buf + 10, buf, 200); /* overlapping, backwards */
	printf("std; rep movsb: hash %016lx\n", hash_bytes(buf, 300));
	rep_movsb(buf2, buf, 300);
	buf2[123] ^= 1;
	printf("repe cmpsb: first difference at %ld, equal prefix of 50: %ld\n", repe_cmpsb(buf, buf2, 300),
	       repe_cmpsb(buf, buf2, 50));
	printf("repne scasb: 'q' found after %ld bytes\n", repne_scasb("the quick brown fox", 'q', 19));
	printf("lodsq sum: %016lx\n", lodsq_sum(b1.words, 40));
	return 0;
}
