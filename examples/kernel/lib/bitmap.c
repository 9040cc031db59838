/*
 * lib/bitmap.c, lib/find_bit.c and lib/hweight.c - bitmaps as arrays of
 * unsigned long, bit 0 the least significant bit of word 0; the out-of-line
 * helpers the bitmap_*() / find_*_bit() inlines call, with Linux's rules
 * (bits past nbits in the last word are ignored by the tests, and the find
 * functions return `size` when there is no such bit).
 */
#include "libk.h"

unsigned int __sw_hweight8(unsigned int w)
{
	unsigned int res = w - ((w >> 1) & 0x55);

	res = (res & 0x33) + ((res >> 2) & 0x33);
	return (res + (res >> 4)) & 0x0F;
}

unsigned int __sw_hweight16(unsigned int w)
{
	return __sw_hweight8(w & 0xff) + __sw_hweight8((w >> 8) & 0xff);
}

unsigned int __sw_hweight32(unsigned int w)
{
	w -= (w >> 1) & 0x55555555;
	w = (w & 0x33333333) + ((w >> 2) & 0x33333333);
	w = (w + (w >> 4)) & 0x0f0f0f0f;
	return (w * 0x01010101) >> 24;
}

unsigned long __sw_hweight64(u64 w)
{
	w -= (w >> 1) & 0x5555555555555555ul;
	w = (w & 0x3333333333333333ul) + ((w >> 2) & 0x3333333333333333ul);
	w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0ful;
	return (w * 0x0101010101010101ul) >> 56;
}

bool __bitmap_equal(const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG;

	for (k = 0; k < lim; ++k)
		if (bitmap1[k] != bitmap2[k])
			return false;
	if (bits % BITS_PER_LONG)
		if ((bitmap1[k] ^ bitmap2[k]) & BITMAP_LAST_WORD_MASK(bits))
			return false;
	return true;
}

bool __bitmap_or_equal(const unsigned long *bitmap1, const unsigned long *bitmap2, const unsigned long *bitmap3,
		       unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG;
	unsigned long tmp;

	for (k = 0; k < lim; ++k)
		if ((bitmap1[k] | bitmap2[k]) != bitmap3[k])
			return false;
	if (!(bits % BITS_PER_LONG))
		return true;
	tmp = (bitmap1[k] | bitmap2[k]) ^ bitmap3[k];
	return (tmp & BITMAP_LAST_WORD_MASK(bits)) == 0;
}

void __bitmap_complement(unsigned long *dst, const unsigned long *src, unsigned int bits)
{
	unsigned int k, lim = BITS_TO_LONGS(bits);

	for (k = 0; k < lim; ++k)
		dst[k] = ~src[k];
}

void __bitmap_shift_right(unsigned long *dst, const unsigned long *src, unsigned shift, unsigned nbits)
{
	unsigned k, lim = BITS_TO_LONGS(nbits);
	unsigned off = shift / BITS_PER_LONG, rem = shift % BITS_PER_LONG;
	unsigned long mask = BITMAP_LAST_WORD_MASK(nbits);

	for (k = 0; off + k < lim; ++k) {
		unsigned long upper, lower;

		if (!rem || off + k + 1 >= lim)
			upper = 0;
		else {
			upper = src[off + k + 1];
			if (off + k + 1 == lim - 1)
				upper &= mask;
			upper <<= (BITS_PER_LONG - rem);
		}
		lower = src[off + k];
		if (off + k == lim - 1)
			lower &= mask;
		lower >>= rem;
		dst[k] = lower | upper;
	}
	if (off)
		memset(&dst[lim - off], 0, off * sizeof(unsigned long));
}

void __bitmap_shift_left(unsigned long *dst, const unsigned long *src, unsigned int shift, unsigned int nbits)
{
	int k;
	unsigned int lim = BITS_TO_LONGS(nbits);
	unsigned int off = shift / BITS_PER_LONG, rem = shift % BITS_PER_LONG;

	for (k = (int)(lim - off) - 1; k >= 0; --k) {
		unsigned long upper, lower;

		if (rem && k > 0)
			lower = src[k - 1] >> (BITS_PER_LONG - rem);
		else
			lower = 0;
		upper = src[k] << rem;
		dst[k + off] = lower | upper;
	}
	if (off)
		memset(dst, 0, off * sizeof(unsigned long));
}

bool __bitmap_and(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG;
	unsigned long result = 0;

	for (k = 0; k < lim; k++)
		result |= (dst[k] = bitmap1[k] & bitmap2[k]);
	if (bits % BITS_PER_LONG)
		result |= (dst[k] = bitmap1[k] & bitmap2[k] & BITMAP_LAST_WORD_MASK(bits));
	return result != 0;
}

void __bitmap_or(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, nr = BITS_TO_LONGS(bits);

	for (k = 0; k < nr; k++)
		dst[k] = bitmap1[k] | bitmap2[k];
}

void __bitmap_xor(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, nr = BITS_TO_LONGS(bits);

	for (k = 0; k < nr; k++)
		dst[k] = bitmap1[k] ^ bitmap2[k];
}

bool __bitmap_andnot(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG;
	unsigned long result = 0;

	for (k = 0; k < lim; k++)
		result |= (dst[k] = bitmap1[k] & ~bitmap2[k]);
	if (bits % BITS_PER_LONG)
		result |= (dst[k] = bitmap1[k] & ~bitmap2[k] & BITMAP_LAST_WORD_MASK(bits));
	return result != 0;
}

/* dst = (old & ~mask) | (new & mask) */
void __bitmap_replace(unsigned long *dst, const unsigned long *old, const unsigned long *new, const unsigned long *mask,
		      unsigned int nbits)
{
	unsigned int k, nr = BITS_TO_LONGS(nbits);

	for (k = 0; k < nr; k++)
		dst[k] = (old[k] & ~mask[k]) | (new[k] & mask[k]);
}

bool __bitmap_intersects(const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG;

	for (k = 0; k < lim; ++k)
		if (bitmap1[k] & bitmap2[k])
			return true;
	if (bits % BITS_PER_LONG)
		if ((bitmap1[k] & bitmap2[k]) & BITMAP_LAST_WORD_MASK(bits))
			return true;
	return false;
}

bool __bitmap_subset(const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG;

	for (k = 0; k < lim; ++k)
		if (bitmap1[k] & ~bitmap2[k])
			return false;
	if (bits % BITS_PER_LONG)
		if ((bitmap1[k] & ~bitmap2[k]) & BITMAP_LAST_WORD_MASK(bits))
			return false;
	return true;
}

unsigned int __bitmap_weight(const unsigned long *bitmap, unsigned int bits)
{
	unsigned int k, lim = bits / BITS_PER_LONG, w = 0;

	for (k = 0; k < lim; k++)
		w += (unsigned int)__sw_hweight64(bitmap[k]);
	if (bits % BITS_PER_LONG)
		w += (unsigned int)__sw_hweight64(bitmap[k] & BITMAP_LAST_WORD_MASK(bits));
	return w;
}

void __bitmap_set(unsigned long *map, unsigned int start, int len)
{
	for (; len > 0; len--, start++)
		map[BIT_WORD(start)] |= BIT_MASK(start);
}

void __bitmap_clear(unsigned long *map, unsigned int start, int len)
{
	for (; len > 0; len--, start++)
		map[BIT_WORD(start)] &= ~BIT_MASK(start);
}

static inline bool test_bit_in(const unsigned long *map, unsigned long nr)
{
	return (map[BIT_WORD(nr)] >> (nr % BITS_PER_LONG)) & 1;
}

/* the first `nr` clear bits in a row at or after `start` whose index + align_offset is aligned to align_mask + 1 */
unsigned long bitmap_find_next_zero_area_off(unsigned long *map, unsigned long size, unsigned long start,
					     unsigned int nr, unsigned long align_mask, unsigned long align_offset)
{
	unsigned long index, end, i;
again:
	index = _find_next_zero_bit(map, size, start);
	index = ((index + align_offset + align_mask) & ~align_mask) - align_offset;
	end = index + nr;
	if (end > size)
		return end;
	i = _find_next_bit(map, end, index);
	if (i < end) {
		start = i + 1;
		goto again;
	}
	return index;
}

/* the rank of bit `pos` among the set bits of buf, or -1 when it is not set */
static noinline int bitmap_pos_to_ord(const unsigned long *buf, unsigned int pos, unsigned int nbits)
{
	unsigned int k;
	int ord = 0;

	if (pos >= nbits || !test_bit_in(buf, pos))
		return -1;
	for (k = 0; k < pos; k++)
		ord += test_bit_in(buf, k);
	return ord;
}

/* the set bit of `map` with rank `ord`, or nbits */
unsigned int bitmap_ord_to_pos(const unsigned long *map, unsigned int ord, unsigned int nbits)
{
	unsigned int pos;

	for (pos = 0; pos < nbits; pos++) {
		if (test_bit_in(map, pos)) {
			if (ord == 0)
				return pos;
			ord--;
		}
	}
	return nbits;
}

/* bit oldbit of `old` maps to the same-ranked bit of `new` (ranks modulo the weight of new) */
int bitmap_bitremap(int oldbit, const unsigned long *old, const unsigned long *new, int bits)
{
	int w = (int)__bitmap_weight(new, (unsigned int)bits);
	int n = bitmap_pos_to_ord(old, (unsigned int)oldbit, (unsigned int)bits);

	if (n < 0 || w == 0)
		return oldbit;
	return (int)bitmap_ord_to_pos(new, (unsigned int)(n % w), (unsigned int)bits);
}

void bitmap_from_arr32(unsigned long *bitmap, const u32 *buf, unsigned int nbits)
{
	unsigned int i, halfwords = DIV_ROUND_UP(nbits, 32);

	for (i = 0; i < halfwords; i++) {
		bitmap[i / 2] = (unsigned long)buf[i];
		if (++i < halfwords)
			bitmap[i / 2] |= ((unsigned long)buf[i]) << 32;
	}
	if (nbits % BITS_PER_LONG)
		bitmap[(halfwords - 1) / 2] &= BITMAP_LAST_WORD_MASK(nbits);
}

void bitmap_to_arr32(u32 *buf, const unsigned long *bitmap, unsigned int nbits)
{
	unsigned int i, halfwords = DIV_ROUND_UP(nbits, 32);

	for (i = 0; i < halfwords; i++) {
		buf[i] = (u32)(bitmap[i / 2] & 0xffffffffUL);
		if (++i < halfwords)
			buf[i] = (u32)(bitmap[i / 2] >> 32);
	}
	if (nbits % 32)
		buf[halfwords - 1] &= (u32)((1ULL << (nbits % 32)) - 1);
}

/* region = 2^order bits at pos: free? then take it */
int bitmap_allocate_region(unsigned long *bitmap, unsigned int pos, int order)
{
	unsigned int n = 1U << order;

	if (_find_next_bit(bitmap, pos + n, pos) < pos + n)
		return -EBUSY;
	__bitmap_set(bitmap, pos, (int)n);
	return 0;
}

void bitmap_release_region(unsigned long *bitmap, unsigned int pos, int order)
{
	__bitmap_clear(bitmap, pos, 1 << order);
}

int bitmap_find_free_region(unsigned long *bitmap, unsigned int bits, int order)
{
	unsigned int pos, end;

	for (pos = 0; (end = pos + (1U << order)) <= bits; pos = end) {
		if (bitmap_allocate_region(bitmap, pos, order) == 0)
			return (int)pos;
	}
	return -ENOMEM;
}

/* lib/find_bit.c: `size` when none */
unsigned long _find_first_bit(const unsigned long *addr, unsigned long size)
{
	unsigned long idx;

	for (idx = 0; idx * BITS_PER_LONG < size; idx++) {
		if (addr[idx])
			return min_ul(idx * BITS_PER_LONG + (unsigned long)__builtin_ctzl(addr[idx]), size);
	}
	return size;
}

unsigned long _find_first_and_bit(const unsigned long *addr1, const unsigned long *addr2, unsigned long size)
{
	unsigned long idx;

	for (idx = 0; idx * BITS_PER_LONG < size; idx++) {
		unsigned long v = addr1[idx] & addr2[idx];

		if (v)
			return min_ul(idx * BITS_PER_LONG + (unsigned long)__builtin_ctzl(v), size);
	}
	return size;
}

unsigned long _find_first_zero_bit(const unsigned long *addr, unsigned long size)
{
	unsigned long idx;

	for (idx = 0; idx * BITS_PER_LONG < size; idx++) {
		if (addr[idx] != ~0UL)
			return min_ul(idx * BITS_PER_LONG + (unsigned long)__builtin_ctzl(~addr[idx]), size);
	}
	return size;
}

/* the word at idx of (addr1 op addr2), inverted by `invert`, from bit `start` on */
static noinline unsigned long find_next_in(const unsigned long *addr1, const unsigned long *addr2, int andnot,
					   unsigned long invert, unsigned long size, unsigned long start)
{
	unsigned long tmp, mask;

	if (start >= size)
		return size;
	mask = ~0UL << (start % BITS_PER_LONG);
	start -= start % BITS_PER_LONG;
	for (;;) {
		tmp = addr1[start / BITS_PER_LONG];
		if (addr2)
			tmp = andnot ? tmp & ~addr2[start / BITS_PER_LONG] : tmp & addr2[start / BITS_PER_LONG];
		tmp = (tmp ^ invert) & mask;
		if (tmp)
			return min_ul(start + (unsigned long)__builtin_ctzl(tmp), size);
		mask = ~0UL;
		start += BITS_PER_LONG;
		if (start >= size)
			return size;
	}
}

unsigned long _find_next_bit(const unsigned long *addr, unsigned long size, unsigned long offset)
{
	return find_next_in(addr, NULL, 0, 0UL, size, offset);
}

unsigned long _find_next_and_bit(const unsigned long *addr1, const unsigned long *addr2, unsigned long size,
				 unsigned long offset)
{
	return find_next_in(addr1, addr2, 0, 0UL, size, offset);
}

unsigned long _find_next_andnot_bit(const unsigned long *addr1, const unsigned long *addr2, unsigned long size,
				    unsigned long offset)
{
	return find_next_in(addr1, addr2, 1, 0UL, size, offset);
}

unsigned long _find_next_zero_bit(const unsigned long *addr, unsigned long size, unsigned long offset)
{
	return find_next_in(addr, NULL, 0, ~0UL, size, offset);
}

unsigned long _find_last_bit(const unsigned long *addr, unsigned long size)
{
	if (size) {
		unsigned long val = BITMAP_LAST_WORD_MASK(size);
		unsigned long idx = (size - 1) / BITS_PER_LONG;

		do {
			val &= addr[idx];
			if (val)
				return idx * BITS_PER_LONG + (BITS_PER_LONG - 1 - (unsigned long)__builtin_clzl(val));
			val = ~0UL;
		} while (idx--);
	}
	return size;
}

/* the index of the n-th (from 0) set bit, or size */
unsigned long __find_nth_bit(const unsigned long *addr, unsigned long size, unsigned long n)
{
	unsigned long bit;

	for (bit = _find_first_bit(addr, size); bit < size; bit = _find_next_bit(addr, size, bit + 1)) {
		if (n-- == 0)
			return bit;
	}
	return size;
}

/* the next non-zero 8-bit clump at or after `offset` (a multiple of 8); its value in *clump */
unsigned long find_next_clump8(unsigned long *clump, const unsigned long *addr, unsigned long size, unsigned long offset)
{
	offset = _find_next_bit(addr, size, offset & ~7UL);
	if (offset == size)
		return size;
	offset &= ~7UL;
	*clump = (addr[BIT_WORD(offset)] >> (offset % BITS_PER_LONG)) & 0xff;
	return offset;
}
