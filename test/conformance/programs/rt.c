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
#elif defined(__riscv)
__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	li fp, 0\n"
	"	andi sp, sp, -16\n"
	"	call rt_start\n"
	"	unimp\n"
	".size _start, .-_start\n");

long rt_syscall3(long nr, long a, long b, long c)
{
	register long a7 __asm__("a7") = nr;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2) : "memory");
	return a0;
}
#define RT_SYS_WRITE 64
#define RT_SYS_EXIT_GROUP 94

/* libgcc helpers gcc calls for rv64imac (the cross libgcc is built for lp64d) */
int __paritysi2(unsigned a);
int __paritydi2(unsigned long a);
int __paritysi2(unsigned a)
{
	a ^= a >> 16;
	a ^= a >> 8;
	a ^= a >> 4;
	return (0x6996 >> (a & 15)) & 1;
}
int __paritydi2(unsigned long a)
{
	return __paritysi2((unsigned)(a ^ (a >> 32)));
}

int __clzdi2(unsigned long a);
int __ctzdi2(unsigned long a);
int __clzsi2(unsigned a);
int __ctzsi2(unsigned a);
int __popcountsi2(unsigned a);
int __popcountdi2(long x);
unsigned long __bswapdi2(unsigned long a);
unsigned __bswapsi2(unsigned a);
int __clzdi2(unsigned long a)
{
	int n = 0;
	for (int s = 32; s; s >>= 1)
		if (!(a >> (64 - s))) {
			n += s;
			a <<= s;
		}
	return n;
}
int __ctzdi2(unsigned long a)
{
	int n = 0;
	for (int s = 32; s; s >>= 1)
		if (!(a << (64 - s))) {
			n += s;
			a >>= s;
		}
	return n;
}
int __clzsi2(unsigned a) { return __clzdi2(a) - 32; }
int __ctzsi2(unsigned a) { return __ctzdi2(a | (1UL << 32)); }
int __popcountsi2(unsigned a) { return __popcountdi2((long)a); }
unsigned long __bswapdi2(unsigned long a)
{
	unsigned long r = 0;
	for (int i = 0; i < 8; i++, a >>= 8)
		r = (r << 8) | (a & 0xff);
	return r;
}
unsigned __bswapsi2(unsigned a) { return (unsigned)(__bswapdi2(a) >> 32); }

typedef union {
	unsigned __int128 v;
	struct { unsigned long lo, hi; } h;
} rt_ti;
unsigned __int128 __ashlti3(unsigned __int128 a, int b);
unsigned __int128 __lshrti3(unsigned __int128 a, int b);
__int128 __ashrti3(__int128 a, int b);
unsigned __int128 __multi3(unsigned __int128 a, unsigned __int128 b);
unsigned __int128 __ashlti3(unsigned __int128 a, int b)
{
	rt_ti x = { .v = a }, r;
	if (b == 0)
		return a;
	if (b >= 64) {
		r.h.lo = 0;
		r.h.hi = x.h.lo << (b - 64);
	} else {
		r.h.lo = x.h.lo << b;
		r.h.hi = (x.h.hi << b) | (x.h.lo >> (64 - b));
	}
	return r.v;
}
unsigned __int128 __lshrti3(unsigned __int128 a, int b)
{
	rt_ti x = { .v = a }, r;
	if (b == 0)
		return a;
	if (b >= 64) {
		r.h.hi = 0;
		r.h.lo = x.h.hi >> (b - 64);
	} else {
		r.h.hi = x.h.hi >> b;
		r.h.lo = (x.h.lo >> b) | (x.h.hi << (64 - b));
	}
	return r.v;
}
__int128 __ashrti3(__int128 a, int b)
{
	rt_ti x = { .v = (unsigned __int128)a }, r;
	if (b == 0)
		return a;
	if (b >= 64) {
		r.h.hi = (unsigned long)((long)x.h.hi >> 63);
		r.h.lo = (unsigned long)((long)x.h.hi >> (b - 64));
	} else {
		r.h.hi = (unsigned long)((long)x.h.hi >> b);
		r.h.lo = (x.h.lo >> b) | (x.h.hi << (64 - b));
	}
	return (__int128)r.v;
}
static unsigned long rt_mulhu(unsigned long a, unsigned long b)
{
	unsigned long a0 = a & 0xffffffff, a1 = a >> 32, b0 = b & 0xffffffff, b1 = b >> 32;
	unsigned long p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	unsigned long mid = (p00 >> 32) + (p01 & 0xffffffff) + (p10 & 0xffffffff);
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
unsigned __int128 __multi3(unsigned __int128 a, unsigned __int128 b)
{
	rt_ti x = { .v = a }, y = { .v = b }, r;
	r.h.lo = x.h.lo * y.h.lo;
	r.h.hi = rt_mulhu(x.h.lo, y.h.lo) + x.h.lo * y.h.hi + x.h.hi * y.h.lo;
	return r.v;
}
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
