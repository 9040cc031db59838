/* lib.c - freestanding string functions and a small printk. */
#include "kernel.h"

void *memset(void *s, int c, size_t n)
{
	unsigned char *p = s;
	while (n--)
		*p++ = (unsigned char)c;
	return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	if (dp < sp) {
		while (n--)
			*dp++ = *sp++;
	} else {
		while (n--)
			dp[n] = sp[n];
	}
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return (size_t)(p - s);
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

char *strncpy(char *d, const char *s, size_t n)
{
	size_t i = 0;
	for (; i < n && s[i]; i++)
		d[i] = s[i];
	for (; i < n; i++)
		d[i] = 0;
	return d;
}

struct outbuf {
	char *buf;
	size_t size;
	size_t len; /* would-be length */
};

static void out_char(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/* Emit an unsigned number in `base` honouring width/zero-pad/left-justify. */
static void out_number(struct outbuf *o, unsigned long long v, unsigned base, int upper, int neg,
		       int width, int zero, int left)
{
	char tmp[24];
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int n = 0, len, pad;
	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	len = n + (neg ? 1 : 0);
	pad = width > len ? width - len : 0;
	if (!left && !zero)
		while (pad-- > 0)
			out_char(o, ' ');
	if (neg)
		out_char(o, '-');
	if (!left && zero)
		while (pad-- > 0)
			out_char(o, '0');
	while (n)
		out_char(o, tmp[--n]);
	if (left)
		while (pad-- > 0)
			out_char(o, ' ');
}

static void out_string(struct outbuf *o, const char *s, int width, int left, int prec)
{
	int len = 0, pad;
	if (!s)
		s = "(null)";
	while (s[len] && (prec < 0 || len < prec))
		len++;
	pad = width > len ? width - len : 0;
	if (!left)
		while (pad-- > 0)
			out_char(o, ' ');
	for (int i = 0; i < len; i++)
		out_char(o, s[i]);
	if (left)
		while (pad-- > 0)
			out_char(o, ' ');
}

/* Supports %d %i %u %x %X %o %s %c %p %% with flags '-' '0', a width (or '*'),
 * a precision for %s, and the length modifiers h hh l ll z. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = { buf, size, 0 };
	for (; *fmt; fmt++) {
		int left = 0, zero = 0, width = 0, prec = -1, lng = 0;
		char c;
		if (*fmt != '%') {
			out_char(&o, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = 1;
			else if (*fmt == '0')
				zero = 1;
			else
				break;
		}
		if (*fmt == '*') {
			width = va_arg(ap, int);
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				width = width * 10 + (*fmt++ - '0');
		}
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			while (*fmt >= '0' && *fmt <= '9')
				prec = prec * 10 + (*fmt++ - '0');
		}
		for (;; fmt++) {
			if (*fmt == 'l' || *fmt == 'z')
				lng++;
			else if (*fmt != 'h')
				break;
		}
		c = *fmt;
		switch (c) {
		case 'd':
		case 'i': {
			long long v = lng ? va_arg(ap, long) : va_arg(ap, int);
			unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
			out_number(&o, u, 10, 0, v < 0, width, zero, left);
			break;
		}
		case 'u':
		case 'x':
		case 'X':
		case 'o': {
			unsigned long long v = lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
			unsigned base = c == 'u' ? 10 : c == 'o' ? 8 : 16;
			out_number(&o, v, base, c == 'X', 0, width, zero, left);
			break;
		}
		case 'p': {
			unsigned long v = (unsigned long)va_arg(ap, void *);
			out_char(&o, '0');
			out_char(&o, 'x');
			out_number(&o, v, 16, 0, 0, width > 2 ? width - 2 : 0, 1, left);
			break;
		}
		case 's':
			out_string(&o, va_arg(ap, const char *), width, left, prec);
			break;
		case 'c':
			out_char(&o, (char)va_arg(ap, int));
			break;
		case '%':
			out_char(&o, '%');
			break;
		case 0:
			fmt--;
			break;
		default:
			out_char(&o, '%');
			out_char(&o, c);
			break;
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* printk: format into a stack buffer, one console write per call. */
int printk(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	kp_console_write(buf, (unsigned long)n);
	return n;
}

/* An atomic read-modify-write (lock xadd / ldxr-stxr / amoadd). */
unsigned long atomic_add_return(long delta, long *v)
{
	return (unsigned long)(__atomic_add_fetch(v, delta, __ATOMIC_SEQ_CST));
}

/* Exported to modules (Linux exports all of these from lib/ and kernel/printk/). */
EXPORT_SYMBOL(memset);
EXPORT_SYMBOL(memcpy);
EXPORT_SYMBOL(memmove);
EXPORT_SYMBOL(memcmp);
EXPORT_SYMBOL(strlen);
EXPORT_SYMBOL(strcmp);
EXPORT_SYMBOL(strncmp);
EXPORT_SYMBOL(strncpy);
EXPORT_SYMBOL(vsnprintf);
EXPORT_SYMBOL(snprintf);
EXPORT_SYMBOL(printk);
