/* rt.c - _start, exit_group, buffered write(1), printf subset, string functions. */
#include "rt.h"

#if defined(__aarch64__)
__asm__(".text\n"
	".globl _start\n"
	".type _start, %function\n"
	"_start:\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x16, sp\n"
	"	and x16, x16, #-16\n"
	"	mov sp, x16\n"
	"	bl rt_start\n"
	"	brk #0x3e8\n"
	".size _start, .-_start\n");

long rt_syscall3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
#define RT_SYS_WRITE 64
#define RT_SYS_EXIT_GROUP 94
#else
__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	xorl %ebp, %ebp\n"
	"	andq $-16, %rsp\n"
	"	call rt_start\n"
	"	hlt\n"
	".size _start, .-_start\n");

long rt_syscall3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}
#define RT_SYS_WRITE 1
#define RT_SYS_EXIT_GROUP 231
#endif

static char outbuf[4096];
static size_t outlen;

void rt_flush(void)
{
	size_t off = 0;
	while (off < outlen) {
		long n = rt_syscall3(RT_SYS_WRITE, 1, (long)(outbuf + off), (long)(outlen - off));
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	outlen = 0;
}

void rt_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (outlen == sizeof(outbuf))
			rt_flush();
		outbuf[outlen++] = s[i];
	}
}

void rt_exit(int code)
{
	rt_flush();
	for (;;)
		rt_syscall3(RT_SYS_EXIT_GROUP, code, 0, 0);
}

void rt_start(void)
{
	rt_exit(main());
}

/* ---- string functions (the compilers may call these for struct copies) ---- */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_IDIOM __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_IDIOM
#endif

NO_IDIOM void *memcpy(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

NO_IDIOM void *memmove(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;
	if (dp < sp)
		while (n--)
			*dp++ = *sp++;
	else
		while (n--)
			dp[n] = sp[n];
	return d;
}

NO_IDIOM void *memset(void *s, int c, size_t n)
{
	u8 *p = s;
	while (n--)
		*p++ = (u8)c;
	return s;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (u8)*a - (u8)*b;
}

/* libgcc helper gcc calls for __builtin_popcount without -mpopcnt */
int __popcountdi2(long x)
{
	unsigned long v = (unsigned long)x;
	int n = 0;
	while (v) {
		v &= v - 1;
		n++;
	}
	return n;
}

/* ---- printf subset: %d %i %u %x %X %o %s %c %p %% ; flags - 0 ; width / * ; h hh l ll z ---- */
struct out {
	char *buf;
	size_t size, len;
};

static void oc(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void onum(struct out *o, unsigned long long v, unsigned base, int upper, int neg, int width,
		 int zero, int left)
{
	char tmp[24];
	const char *dg = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int n = 0, pad;
	do {
		tmp[n++] = dg[v % base];
		v /= base;
	} while (v);
	pad = width - n - (neg ? 1 : 0);
	if (!left && !zero)
		for (; pad > 0; pad--)
			oc(o, ' ');
	if (neg)
		oc(o, '-');
	if (!left && zero)
		for (; pad > 0; pad--)
			oc(o, '0');
	while (n)
		oc(o, tmp[--n]);
	for (; left && pad > 0; pad--)
		oc(o, ' ');
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	for (; *fmt; fmt++) {
		int left = 0, zero = 0, width = 0, lng = 0;
		char c;
		if (*fmt != '%') {
			oc(&o, *fmt);
			continue;
		}
		for (fmt++;; fmt++) {
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
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		for (;; fmt++) {
			if (*fmt == 'l' || *fmt == 'z')
				lng++;
			else if (*fmt != 'h')
				break;
		}
		c = *fmt;
		if (c == 'd' || c == 'i') {
			long long v = lng ? va_arg(ap, long) : va_arg(ap, int);
			onum(&o, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, 10, 0, v < 0,
			     width, zero, left);
		} else if (c == 'u' || c == 'x' || c == 'X' || c == 'o') {
			unsigned long long v = lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			onum(&o, v, c == 'u' ? 10 : c == 'o' ? 8 : 16, c == 'X', 0, width, zero, left);
		} else if (c == 'p') {
			oc(&o, '0');
			oc(&o, 'x');
			onum(&o, (unsigned long)va_arg(ap, void *), 16, 0, 0, 0, 0, 0);
		} else if (c == 's') {
			const char *s = va_arg(ap, const char *);
			int len;
			if (!s)
				s = "(null)";
			len = (int)strlen(s);
			for (int p = width - len; !left && p > 0; p--)
				oc(&o, ' ');
			for (int i = 0; i < len; i++)
				oc(&o, s[i]);
			for (int p = width - len; left && p > 0; p--)
				oc(&o, ' ');
		} else if (c == 'c') {
			oc(&o, (char)va_arg(ap, int));
		} else if (c == '%') {
			oc(&o, '%');
		} else if (c == 0) {
			break;
		} else {
			oc(&o, '%');
			oc(&o, c);
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

int printf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rt_write(buf, (size_t)(n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1));
	return n;
}
