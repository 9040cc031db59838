/*
 * lib/uuid.c (the 36-character text form), lib/ucs2_string.c (UCS-2
 * strings as EFI variables hold them), lib/seq_buf.c (a bounded text
 * buffer that remembers overflow) and lib/kfifo.c (a power-of-two ring of
 * bytes whose in/out counters run free).
 */
#include "libk.h"

static const u8 guid_index[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
static const u8 uuid_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx with hex digits of either case */
bool uuid_is_valid(const char *uuid)
{
	unsigned int i;

	for (i = 0; i < UUID_STRING_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (uuid[i] != '-')
				return false;
		} else if (!isxdigit(uuid[i])) {
			return false;
		}
	}
	return true;
}

static noinline int __uuid_parse(const char *uuid, u8 b[16], const u8 ei[16])
{
	static const u8 si[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
	unsigned int i;

	if (!uuid_is_valid(uuid))
		return -EINVAL;
	for (i = 0; i < 16; i++) {
		int hi = hex_to_bin((unsigned char)uuid[si[i] + 0]);
		int lo = hex_to_bin((unsigned char)uuid[si[i] + 1]);

		b[ei[i]] = (u8)((hi << 4) | lo);
	}
	return 0;
}

/* the GUID form stores the first three groups little-endian */
int guid_parse(const char *uuid, guid_t *u)
{
	return __uuid_parse(uuid, u->b, guid_index);
}

int uuid_parse(const char *uuid, uuid_t *u)
{
	return __uuid_parse(uuid, u->b, uuid_index);
}

unsigned long ucs2_strnlen(const ucs2_char_t *s, size_t maxlength)
{
	unsigned long length = 0;

	while (*s++ != 0 && length < maxlength)
		length++;
	return length;
}

unsigned long ucs2_strlen(const ucs2_char_t *s)
{
	return ucs2_strnlen(s, ~0UL);
}

/* the string's size in bytes, without its terminator */
unsigned long ucs2_strsize(const ucs2_char_t *data, unsigned long maxlength)
{
	return ucs2_strnlen(data, maxlength / sizeof(ucs2_char_t)) * sizeof(ucs2_char_t);
}

int ucs2_strncmp(const ucs2_char_t *a, const ucs2_char_t *b, size_t len)
{
	for (;;) {
		if (len == 0)
			return 0;
		if (*a < *b)
			return -1;
		if (*a > *b)
			return 1;
		if (*a == 0)
			return 0;
		a++;
		b++;
		len--;
	}
}

/* the bytes the string takes as UTF-8 */
unsigned long ucs2_utf8size(const ucs2_char_t *src)
{
	unsigned long i, j = 0;

	for (i = 0; src[i]; i++) {
		u16 c = src[i];

		if (c >= 0x800)
			j += 3;
		else if (c >= 0x80)
			j += 2;
		else
			j += 1;
	}
	return j;
}

/* at most maxlength bytes of UTF-8 (terminator included when it fits); the bytes written before it */
unsigned long ucs2_as_utf8(u8 *dest, const ucs2_char_t *src, unsigned long maxlength)
{
	unsigned int i;
	unsigned long j = 0, limit = ucs2_strnlen(src, maxlength);

	for (i = 0; maxlength && i < limit; i++) {
		u16 c = src[i];

		if (c >= 0x800) {
			if (maxlength < 3)
				break;
			maxlength -= 3;
			dest[j++] = (u8)(0xe0 | (c & 0xf000) >> 12);
			dest[j++] = (u8)(0x80 | (c & 0x0fc0) >> 6);
			dest[j++] = (u8)(0x80 | (c & 0x003f));
		} else if (c >= 0x80) {
			if (maxlength < 2)
				break;
			maxlength -= 2;
			dest[j++] = (u8)(0xc0 | (c & 0x7c0) >> 6);
			dest[j++] = (u8)(0x80 | (c & 0x03f));
		} else {
			maxlength -= 1;
			dest[j++] = (u8)(c & 0x7f);
		}
	}
	if (maxlength)
		dest[j] = '\0';
	return j;
}

/* lib/seq_buf.c: len never passes size; a write that does not fit sets len = size (overflowed) */
static bool seq_buf_can_fit(struct seq_buf *s, size_t len)
{
	return s->len + len <= s->size;
}

static void seq_buf_set_overflow(struct seq_buf *s)
{
	s->len = s->size + 1;
}

bool seq_buf_has_overflowed(struct seq_buf *s)
{
	return s->len > s->size;
}

int seq_buf_putc(struct seq_buf *s, unsigned char c)
{
	if (seq_buf_can_fit(s, 1)) {
		s->buffer[s->len++] = (char)c;
		return 0;
	}
	seq_buf_set_overflow(s);
	return -1;
}

int seq_buf_puts(struct seq_buf *s, const char *str)
{
	size_t len = strlen(str);

	if (seq_buf_can_fit(s, len)) {
		memcpy(s->buffer + s->len, str, len);
		s->len += len;
		return 0;
	}
	seq_buf_set_overflow(s);
	return -1;
}

int seq_buf_putmem(struct seq_buf *s, const void *mem, unsigned int len)
{
	if (seq_buf_can_fit(s, len)) {
		memcpy(s->buffer + s->len, mem, len);
		s->len += len;
		return 0;
	}
	seq_buf_set_overflow(s);
	return -1;
}

int seq_buf_vprintf(struct seq_buf *s, const char *fmt, va_list args)
{
	int len;

	if (s->size > s->len) {
		len = vsnprintf(s->buffer + s->len, s->size - s->len, fmt, args);
		if (s->len + (size_t)len < s->size) {
			s->len += (size_t)len;
			return 0;
		}
	}
	seq_buf_set_overflow(s);
	return -1;
}

int seq_buf_printf(struct seq_buf *s, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = seq_buf_vprintf(s, fmt, ap);
	va_end(ap);
	return ret;
}

/* lib/kfifo.c: size must be a power of two; in/out only grow, masked on use */
int __kfifo_init(struct __kfifo *fifo, void *buffer, unsigned int size, size_t esize)
{
	size /= (unsigned int)esize;
	if (size & (size - 1))
		size = 1U << (31 - __builtin_clz(size)); /* rounddown_pow_of_two */
	fifo->in = 0;
	fifo->out = 0;
	fifo->esize = (unsigned int)esize;
	fifo->data = buffer;
	if (size < 2) {
		fifo->mask = 0;
		return -EINVAL;
	}
	fifo->mask = size - 1;
	return 0;
}

static inline unsigned int kfifo_unused(struct __kfifo *fifo)
{
	return (fifo->mask + 1) - (fifo->in - fifo->out);
}

static noinline void kfifo_copy_in(struct __kfifo *fifo, const void *src, unsigned int len, unsigned int off)
{
	unsigned int size = fifo->mask + 1, esize = fifo->esize, l;

	off &= fifo->mask;
	if (esize != 1) {
		off *= esize;
		size *= esize;
		len *= esize;
	}
	l = len < size - off ? len : size - off;
	memcpy((char *)fifo->data + off, src, l);
	memcpy(fifo->data, (const char *)src + l, len - l);
}

static noinline void kfifo_copy_out(struct __kfifo *fifo, void *dst, unsigned int len, unsigned int off)
{
	unsigned int size = fifo->mask + 1, esize = fifo->esize, l;

	off &= fifo->mask;
	if (esize != 1) {
		off *= esize;
		size *= esize;
		len *= esize;
	}
	l = len < size - off ? len : size - off;
	memcpy(dst, (const char *)fifo->data + off, l);
	memcpy((char *)dst + l, fifo->data, len - l);
}

unsigned int __kfifo_in(struct __kfifo *fifo, const void *buf, unsigned int len)
{
	unsigned int l = kfifo_unused(fifo);

	if (len > l)
		len = l;
	kfifo_copy_in(fifo, buf, len, fifo->in);
	fifo->in += len;
	return len;
}

unsigned int __kfifo_out_peek(struct __kfifo *fifo, void *buf, unsigned int len)
{
	unsigned int l = fifo->in - fifo->out;

	if (len > l)
		len = l;
	kfifo_copy_out(fifo, buf, len, fifo->out);
	return len;
}

unsigned int __kfifo_out(struct __kfifo *fifo, void *buf, unsigned int len)
{
	len = __kfifo_out_peek(fifo, buf, len);
	fifo->out += len;
	return len;
}
