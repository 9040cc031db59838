/*
 * lib/sort.c and lib/list_sort.c - an in-place heapsort of an array (not
 * stable, O(n log n), no allocation) with a caller's compare and optional
 * swap; and a stable merge sort of a list_head list by a compare that
 * returns > 0 when a must go after b.
 */
#include "libk.h"

static bool is_aligned(const void *base, size_t size, unsigned char align)
{
	unsigned char lsbits = (unsigned char)size;

	(void)base;
	lsbits |= (unsigned char)(uintptr_t)base;
	return (lsbits & (align - 1)) == 0;
}

static noinline void swap_words_32(void *a, void *b, size_t n)
{
	do {
		u32 t = *(u32 *)((char *)a + (n -= 4));
		*(u32 *)((char *)a + n) = *(u32 *)((char *)b + n);
		*(u32 *)((char *)b + n) = t;
	} while (n);
}

static noinline void swap_words_64(void *a, void *b, size_t n)
{
	do {
		u64 t = *(u64 *)((char *)a + (n -= 8));
		*(u64 *)((char *)a + n) = *(u64 *)((char *)b + n);
		*(u64 *)((char *)b + n) = t;
	} while (n);
}

static noinline void swap_bytes(void *a, void *b, size_t n)
{
	do {
		char t = ((char *)a)[--n];
		((char *)a)[n] = ((char *)b)[n];
		((char *)b)[n] = t;
	} while (n);
}

/* the built-in swaps, and sort()'s: call the wrapper's swap_func_t */
#define SWAP_WORDS_64 ((swap_r_func_t)0)
#define SWAP_WORDS_32 ((swap_r_func_t)1)
#define SWAP_BYTES ((swap_r_func_t)2)
#define SWAP_WRAPPER ((swap_r_func_t)3)

struct wrapper {
	cmp_func_t cmp;
	swap_func_t swap;
};

static noinline void do_swap(void *a, void *b, size_t size, swap_r_func_t swap_func, const void *priv)
{
	if (swap_func == SWAP_WORDS_64)
		swap_words_64(a, b, size);
	else if (swap_func == SWAP_WORDS_32)
		swap_words_32(a, b, size);
	else if (swap_func == SWAP_BYTES)
		swap_bytes(a, b, size);
	else if (swap_func == SWAP_WRAPPER)
		((const struct wrapper *)priv)->swap(a, b, (int)size);
	else
		swap_func(a, b, (int)size, priv);
}

static noinline int do_cmp(const void *a, const void *b, cmp_r_func_t cmp, const void *priv)
{
	if (cmp == (cmp_r_func_t)0)
		return ((const struct wrapper *)priv)->cmp(a, b);
	return cmp(a, b, priv);
}

/* the parent of element i (byte offset) in a heap of n bytes of elements of `size` */
static size_t parent(size_t i, unsigned int lsbit, size_t size)
{
	i -= size;
	i -= size & -(i & lsbit);
	return i / 2;
}

void sort_r(void *base, size_t num, size_t size, cmp_r_func_t cmp_func, swap_r_func_t swap_func, const void *priv)
{
	size_t n = num * size, a = (num / 2) * size;
	const unsigned int lsbit = (unsigned int)(size & -size);

	if (!a)
		return;
	if (!swap_func) {
		if (is_aligned(base, size, 8))
			swap_func = SWAP_WORDS_64;
		else if (is_aligned(base, size, 4))
			swap_func = SWAP_WORDS_32;
		else
			swap_func = SWAP_BYTES;
	}
	for (;;) {
		size_t b, c, d;

		if (a)
			a -= size;
		else if (n -= size)
			do_swap(base, (char *)base + n, size, swap_func, priv);
		else
			break;
		for (b = a; c = 2 * b + size, (d = c + size) < n;)
			b = do_cmp((char *)base + c, (char *)base + d, cmp_func, priv) >= 0 ? c : d;
		if (d == n)
			b = c;
		while (b != a && do_cmp((char *)base + a, (char *)base + b, cmp_func, priv) >= 0)
			b = parent(b, lsbit, size);
		c = b;
		while (b != a) {
			b = parent(b, lsbit, size);
			do_swap((char *)base + b, (char *)base + c, size, swap_func, priv);
		}
	}
}

void sort(void *base, size_t num, size_t size, cmp_func_t cmp_func, swap_func_t swap_func)
{
	struct wrapper w = { .cmp = cmp_func, .swap = swap_func };

	sort_r(base, num, size, (cmp_r_func_t)0, swap_func ? SWAP_WRAPPER : (swap_r_func_t)0, &w);
}

/* lib/list_sort.c: merge two NULL-terminated singly linked runs */
static noinline struct list_head *merge(void *priv, list_cmp_func_t cmp, struct list_head *a, struct list_head *b)
{
	struct list_head *head = NULL, **tail = &head;

	for (;;) {
		if (cmp(priv, a, b) <= 0) {
			*tail = a;
			tail = &a->next;
			a = a->next;
			if (!a) {
				*tail = b;
				break;
			}
		} else {
			*tail = b;
			tail = &b->next;
			b = b->next;
			if (!b) {
				*tail = a;
				break;
			}
		}
	}
	return head;
}

/* the last merge, which also restores the prev links and the circular list */
static noinline void merge_final(void *priv, list_cmp_func_t cmp, struct list_head *head, struct list_head *a,
				 struct list_head *b)
{
	struct list_head *tail = head;

	for (;;) {
		if (cmp(priv, a, b) <= 0) {
			tail->next = a;
			a->prev = tail;
			tail = a;
			a = a->next;
			if (!a)
				break;
		} else {
			tail->next = b;
			b->prev = tail;
			tail = b;
			b = b->next;
			if (!b) {
				b = a;
				break;
			}
		}
	}
	tail->next = b;
	do {
		b->prev = tail;
		tail = b;
		b = b->next;
	} while (b);
	tail->next = head;
	head->prev = tail;
}

void list_sort(void *priv, struct list_head *head, list_cmp_func_t cmp)
{
	struct list_head *list = head->next, *pending = NULL;
	size_t count = 0;

	if (list == head->prev)
		return;
	head->prev->next = NULL;
	do {
		size_t bits;
		struct list_head **tail = &pending;

		for (bits = count; bits & 1; bits >>= 1)
			tail = &(*tail)->prev;
		if (bits) {
			struct list_head *a = *tail, *b = a->prev;

			a = merge(priv, cmp, b, a);
			a->prev = b->prev;
			*tail = a;
		}
		list->prev = pending;
		pending = list;
		list = list->next;
		pending->next = NULL;
		count++;
	} while (list);
	list = pending;
	pending = pending->prev;
	for (;;) {
		struct list_head *next = pending->prev;

		if (!next)
			break;
		list = merge(priv, cmp, pending, list);
		pending = next;
	}
	merge_final(priv, cmp, head, pending, list);
}

/* lib/bsearch.c: a sorted array's element equal to key, or NULL */
void *bsearch(const void *key, const void *base, size_t num, size_t size, cmp_func_t cmp)
{
	const char *pivot;
	int result;

	while (num > 0) {
		pivot = (const char *)base + (num >> 1) * size;
		result = cmp(key, pivot);
		if (result == 0)
			return (void *)pivot;
		if (result > 0) {
			base = pivot + size;
			num--;
		}
		num >>= 1;
	}
	return NULL;
}
