/*
 * rt.c for the v86 peer build: a multiboot header, _start (stack, then
 * main), a printf subset to the first serial port (COM1, 0x3f8), memset /
 * memcpy and the 64-bit division helpers a 32-bit build calls. Around main
 * it prints "v86-bench: start" and "v86-bench: exit N": the bench times the
 * run between them, leaving out the BIOS and the loader. The header is the
 * conformance programs' rt.h (its i386 branch: u64 is long long, and `l`
 * here means 64 bits).
 */
#include "rt.h"

__asm__(".section .multiboot, \"a\"\n"
	".align 4\n"
	".long 0x1BADB002\n" /* magic */
	".long 0x00000003\n" /* flags: page-align modules, memory map */
	".long -(0x1BADB002 + 0x00000003)\n"
	".bss\n"
	".align 16\n"
	"rt_stack: .space 262144\n"
	"rt_stack_top:\n"
	".text\n"
	".globl _start\n"
	"_start:\n"
	"	mov $rt_stack_top, %esp\n"
	"	call rt_start\n"
	"1:	hlt\n"
	"	jmp 1b\n");

static inline void outb(u16 port, u8 v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static void putc_(char c) { outb(0x3f8, (u8)c); }
static void puts_(const char *s) { while (*s) putc_(*s++); }

void *memset(void *s, int c, size_t n) { u8 *p = s; while (n--) *p++ = (u8)c; return s; }
void *memcpy(void *d, const void *s, size_t n) { u8 *dp = d; const u8 *sp = s; while (n--) *dp++ = *sp++; return d; }

/* unsigned 64-bit division by shift and subtract (what libgcc's __udivmoddi4 does, slowly: printf only) */
static u64 divmod(u64 n, u64 d, u64 *rem)
{
	u64 q = 0, r = 0;
	for (int i = 63; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) { r -= d; q |= 1ULL << i; }
	}
	*rem = r;
	return q;
}
u64 __udivdi3(u64 n, u64 d);
u64 __umoddi3(u64 n, u64 d);
u64 __udivdi3(u64 n, u64 d) { u64 r; return divmod(n, d, &r); }
u64 __umoddi3(u64 n, u64 d) { u64 r; divmod(n, d, &r); return r; }

static void onum(u64 v, unsigned base, int neg, int width, int zero)
{
	char tmp[24];
	int n = 0;
	do { u64 r; v = divmod(v, base, &r); tmp[n++] = "0123456789abcdef"[r]; } while (v);
	for (int pad = width - n - neg; pad > 0; pad--) putc_(zero ? '0' : ' ');
	if (neg) putc_('-');
	while (n) putc_(tmp[--n]);
}

/* %d %u %x %s %c %%, the 0 flag, a width, and `l` / `ll` for 64-bit values */
int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') { putc_(*p); continue; }
		p++;
		int zero = 0, width = 0, wide = 0;
		if (*p == '0') { zero = 1; p++; }
		while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
		while (*p == 'l') { wide = 1; p++; }
		switch (*p) {
		case 'd': {
			s64 v = wide ? va_arg(ap, s64) : va_arg(ap, int);
			onum(v < 0 ? (u64)-v : (u64)v, 10, v < 0, width, zero);
			break;
		}
		case 'u': onum(wide ? va_arg(ap, u64) : va_arg(ap, unsigned), 10, 0, width, zero); break;
		case 'x': onum(wide ? va_arg(ap, u64) : va_arg(ap, unsigned), 16, 0, width, zero); break;
		case 's': puts_(va_arg(ap, const char *)); break;
		case 'c': putc_((char)va_arg(ap, int)); break;
		default: putc_(*p); break;
		}
	}
	va_end(ap);
	return 0;
}

void rt_start(void);
void rt_start(void)
{
	puts_("v86-bench: start\n");
	int code = main();
	printf("v86-bench: exit %d\n", code);
}
