/*
 * fpstr.c - floating-point and string code as compilers emit it at default
 * flags (SSE2 on x86_64, FP/AdvSIMD on aarch64, loops vectorised at -O2 /
 * -O3), against qemu-user (bit for bit). Prints the bits of every result in
 * hex, so a one-ulp difference shows. With an argument N it repeats the
 * work N times (the benchmark's floating-point and string workloads).
 */
#include "sys.h"

static void outx(unsigned long v) {
	char b[17];
	for (int i = 15; i >= 0; i--) { b[i] = "0123456789abcdef"[v & 15]; v >>= 4; }
	b[16] = 0;
	out(b);
}
static unsigned long dbits(double d) { unsigned long u; __builtin_memcpy(&u, &d, 8); return u; }
static unsigned fbits(float f) { unsigned u; __builtin_memcpy(&u, &f, 4); return u; }
static void kd(const char *l, double d) { out(l); out(" "); outx(dbits(d)); out("\n"); }
static void kf(const char *l, float f) { out(l); out(" "); outx(fbits(f)); out("\n"); }

#define N 1024
static double da[N], db[N];
static float fa[N], fb[N];
static int ia[N], ib[N];
static unsigned char text[4096];

__attribute__((noinline)) static double leibniz(int n) {
	double s = 0;
	for (int k = 0; k < n; k++) s += (k & 1 ? -4.0 : 4.0) / (2 * k + 1);
	return s;
}
__attribute__((noinline)) static double newton_sqrt(double x) {
	double g = x / 2;
	for (int k = 0; k < 30; k++) g = 0.5 * (g + x / g);
	return g;
}
__attribute__((noinline)) static float poly(float x) { return ((0.5f * x - 1.25f) * x + 3.0f) * x - 0.1f; }
__attribute__((noinline)) static double dot(const double *a, const double *b, int n) {
	double s = 0;
	for (int i = 0; i < n; i++) s += a[i] * b[i];
	return s;
}
__attribute__((noinline)) static void saxpy(float a, const float *x, float *y, int n) {
	for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
__attribute__((noinline)) static long isum(const int *a, const int *b, int n) {
	long s = 0;
	for (int i = 0; i < n; i++) s += (long)(a[i] * 3 + b[i]) ^ (a[i] >> 2);
	return s;
}
__attribute__((noinline)) static size_t my_strlen(const unsigned char *s) { size_t n = 0; while (s[n]) n++; return n; }
__attribute__((noinline)) static long count_byte(const unsigned char *s, size_t n, unsigned char c) {
	long k = 0;
	for (size_t i = 0; i < n; i++) k += s[i] == c;
	return k;
}
__attribute__((noinline)) static void to_upper(unsigned char *s, size_t n) {
	for (size_t i = 0; i < n; i++) s[i] = (s[i] >= 'a' && s[i] <= 'z') ? s[i] - 32 : s[i];
}
__attribute__((noinline)) static unsigned long hash(const unsigned char *s, size_t n) {
	unsigned long h = 1469598103934665603UL;
	for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211UL; }
	return h;
}

static void work(int verbose) {
	for (int i = 0; i < N; i++) {
		da[i] = (double)(i * 7 % 113) / 17.0 - 3.0;
		db[i] = 1.0 / (i + 1) + (i % 5 ? 0.25 : -1.5);
		fa[i] = (float)i * 0.125f - 20.0f;
		fb[i] = (float)(i % 9) / 3.0f;
		ia[i] = i * 2654435761u;
		ib[i] = -i * 40503;
	}
	double pi = leibniz(20000), r2 = newton_sqrt(2.0), dd = dot(da, db, N);
	saxpy(1.75f, fa, fb, N);
	float fs = 0;
	for (int i = 0; i < N; i++) fs += fb[i];
	long is = isum(ia, ib, N);
	for (int i = 0; i < (int)sizeof text - 1; i++) text[i] = "the quick brown fox jumps over the lazy dog, 0123456789 "[i % 56];
	text[sizeof text - 1] = 0;
	size_t len = my_strlen(text);
	long spaces = count_byte(text, len, ' ');
	to_upper(text, len);
	unsigned long h = hash(text, len);
	/* conversions and comparisons */
	long li = (long)(pi * 1e6), lneg = (long)(-r2 * 1e9);
	double back = (double)li / 1e6;
	unsigned long u = (unsigned long)(dd * dd * 1e3);
	float ff = (float)dd;
	double fd = (double)poly(ff);
	int cmp = (pi > 3.14159) + 2 * (r2 < 1.4142135) + 4 * (dd != dd) + 8 * (ff >= (float)dd);
	if (verbose) {
		kd("leibniz", pi); kd("sqrt2", r2); kd("dot", dd); kf("saxpy-sum", fs);
		kv("isum", is); kv("strlen", (long)len); kv("spaces", spaces); out("hash "); outx(h); out("\n");
		kv("long(pi*1e6)", li); kv("long(-sqrt2*1e9)", lneg); kd("back", back); out("ulong "); outx(u); out("\n");
		kf("float(dot)", ff); kd("poly", fd); kv("cmp", cmp);
		kd("div0", 1.0 / (da[5] - da[5])); kd("nan", 0.0 / (da[5] - da[5]) + 1); kd("inf-inf", (1.0 / (da[5] - da[5])) - (1.0 / (da[5] - da[5])));
		kf("fmin-ish", fa[3] < fb[3] ? fa[3] : fb[3]);
	}
}

void cstart(long *sp) {
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	long reps = 0;
	if (argc > 1) for (const char *p = argv[1]; *p; p++) reps = reps * 10 + (*p - '0');
	for (long r = 0; r < reps; r++) work(0);
	work(1);
	sys1(NR_exit_group, 0);
}
