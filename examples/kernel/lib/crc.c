/*
 * lib/crc32.c, crc16.c, crc-ccitt.c, crc-itu-t.c, crc8.c, crc7.c, crc4.c -
 * cyclic redundancy checks bit by bit, with Linux's polynomials and bit
 * orders (the caller passes the seed; no pre- or post-inversion inside,
 * except where Linux's wrappers do it), and lib/checksum.c's Internet
 * checksum.
 */
#include "libk.h"

#define CRC32_POLY_LE 0xedb88320
#define CRC32_POLY_BE 0x04c11db7
#define CRC32C_POLY_LE 0x82f63b78

static noinline u32 crc32_le_generic(u32 crc, const unsigned char *p, size_t len, u32 polynomial)
{
	int i;

	while (len--) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ ((crc & 1) ? polynomial : 0);
	}
	return crc;
}

u32 crc32_le(u32 crc, const unsigned char *p, size_t len)
{
	return crc32_le_generic(crc, p, len, CRC32_POLY_LE);
}

u32 __crc32c_le(u32 crc, const unsigned char *p, size_t len)
{
	return crc32_le_generic(crc, p, len, CRC32C_POLY_LE);
}

u32 crc32_be(u32 crc, const unsigned char *p, size_t len)
{
	int i;

	while (len--) {
		crc ^= (u32)*p++ << 24;
		for (i = 0; i < 8; i++)
			crc = (crc << 1) ^ ((crc & 0x80000000) ? CRC32_POLY_BE : 0);
	}
	return crc;
}

/* x^16 + x^15 + x^2 + 1, bits in reflected order */
u16 crc16(u16 crc, const u8 *buffer, size_t len)
{
	int i;

	while (len--) {
		crc ^= *buffer++;
		for (i = 0; i < 8; i++)
			crc = (u16)((crc >> 1) ^ ((crc & 1) ? 0xa001 : 0));
	}
	return crc;
}

/* x^16 + x^12 + x^5 + 1, reflected (the CCITT CRC as HDLC sends it) */
u16 crc_ccitt(u16 crc, const u8 *buffer, size_t len)
{
	int i;

	while (len--) {
		crc ^= *buffer++;
		for (i = 0; i < 8; i++)
			crc = (u16)((crc >> 1) ^ ((crc & 1) ? 0x8408 : 0));
	}
	return crc;
}

/* x^16 + x^12 + x^5 + 1, most significant bit first (ITU-T V.41) */
u16 crc_itu_t(u16 crc, const u8 *buffer, size_t len)
{
	int i;

	while (len--) {
		crc ^= (u16)(*buffer++ << 8);
		for (i = 0; i < 8; i++)
			crc = (u16)((crc << 1) ^ ((crc & 0x8000) ? 0x1021 : 0));
	}
	return crc;
}

/* lib/crc8.c: the 256-entry table for `polynomial`, most significant bit first */
void crc8_populate_msb(u8 table[CRC8_TABLE_SIZE], u8 polynomial)
{
	int i, j;
	const u8 msbit = 0x80;
	u8 t = msbit;

	table[0] = 0;
	for (i = 1; i < CRC8_TABLE_SIZE; i *= 2) {
		t = (u8)((t << 1) ^ (t & msbit ? polynomial : 0));
		for (j = 0; j < i; j++)
			table[i + j] = table[j] ^ t;
	}
}

/* the same for a reflected polynomial, least significant bit first */
void crc8_populate_lsb(u8 table[CRC8_TABLE_SIZE], u8 polynomial)
{
	int i, j;
	u8 t = 1;

	table[0] = 0;
	for (i = CRC8_TABLE_SIZE >> 1; i; i >>= 1) {
		t = (u8)((t >> 1) ^ (t & 1 ? polynomial : 0));
		for (j = 0; j < CRC8_TABLE_SIZE; j += 2 * i)
			table[i + j] = table[j] ^ t;
	}
}

u8 crc8(const u8 table[CRC8_TABLE_SIZE], const u8 *pdata, size_t nbytes, u8 crc)
{
	while (nbytes-- > 0)
		crc = table[(crc ^ *pdata++) & 0xff];
	return crc;
}

/* x^7 + x^3 + 1, the CRC in the top 7 bits of the byte (as MMC/SD commands carry it) */
u8 crc7_be(u8 crc, const u8 *buffer, size_t len)
{
	int i;

	while (len--) {
		crc ^= *buffer++;
		for (i = 0; i < 8; i++)
			crc = (u8)((crc << 1) ^ ((crc & 0x80) ? 0x12 : 0));
	}
	return crc;
}

/* x^4 + x + 1 over the low `bits` bits of data, most significant first */
u8 crc4(u8 c, u64 x, int bits)
{
	int i;

	c &= 0xf;
	for (i = bits - 1; i >= 0; i--) {
		u8 in = (u8)((x >> i) & 1);
		u8 top = (u8)((c >> 3) & 1);

		c = (u8)(((c << 1) & 0xf) ^ ((top ^ in) ? 0x3 : 0));
	}
	return c;
}

/* lib/checksum.c: the 16-bit ones'-complement sum of buff, folded, not inverted */
static noinline unsigned int do_csum(const unsigned char *buff, int len)
{
	unsigned long result = 0;
	int i;

	for (i = 0; i + 1 < len; i += 2)
		result += (unsigned long)(buff[i] << 8 | buff[i + 1]);
	if (len & 1)
		result += (unsigned long)buff[len - 1] << 8;
	while (result >> 16)
		result = (result & 0xffff) + (result >> 16);
	return (unsigned int)result;
}

/* big-endian 16-bit words summed; Linux's result is in network byte order in memory, ours by value */
u16 ip_compute_csum(const void *buff, int len)
{
	return (u16)~do_csum(buff, len);
}

/* the partial sum of buff added to wsum, 32 bits with end-around carry */
u32 csum_partial(const void *buff, int len, u32 wsum)
{
	u64 s = (u64)wsum + do_csum(buff, len);

	return (u32)((s & 0xffffffff) + (s >> 32));
}

u16 csum_fold(u32 csum)
{
	u32 sum = (csum & 0xffff) + (csum >> 16);

	sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

/*
 * A clone of csum_fold as GCC names one after IPA-SRA (the .isra.N suffix;
 * clang makes none): kallsyms lists it as a local text symbol, the function
 * tracer as one of its functions, and kprobe_events names an event on it
 * with the dots made underscores (p_csum_fold_isra_0_0).
 */
static unsigned int csum_fold_isra(unsigned int sum) __asm__("csum_fold.isra.0");
static noinline __used unsigned int csum_fold_isra(unsigned int sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

static const u8 crc_zeros[64];

/* crc times x^(8 * len) mod the polynomial: what len zero bytes do to the register */
u32 crc32_le_shift(u32 crc, size_t len)
{
	while (len) {
		size_t n = len < sizeof(crc_zeros) ? len : sizeof(crc_zeros);

		crc = crc32_le(crc, crc_zeros, n);
		len -= n;
	}
	return crc;
}

u32 __crc32c_le_shift(u32 crc, size_t len)
{
	while (len) {
		size_t n = len < sizeof(crc_zeros) ? len : sizeof(crc_zeros);

		crc = __crc32c_le(crc, crc_zeros, n);
		len -= n;
	}
	return crc;
}

/* the T10 DIF CRC: x^16 + x^15 + x^11 + x^9 + x^8 + x^7 + x^5 + x^4 + x^2 + x + 1, MSB first */
u16 crc_t10dif_generic(u16 crc, const unsigned char *buffer, size_t len)
{
	int i;

	while (len--) {
		crc ^= (u16)(*buffer++ << 8);
		for (i = 0; i < 8; i++)
			crc = (u16)((crc << 1) ^ ((crc & 0x8000) ? 0x8bb7 : 0));
	}
	return crc;
}

/* ECMA-182's 64-bit CRC, MSB first */
u64 crc64_be(u64 crc, const void *p, size_t len)
{
	const u8 *b = p;
	int i;

	while (len--) {
		crc ^= (u64)*b++ << 56;
		for (i = 0; i < 8; i++)
			crc = (crc << 1) ^ ((crc >> 63) ? 0x42f0e1eba9ea3693ULL : 0);
	}
	return crc;
}
