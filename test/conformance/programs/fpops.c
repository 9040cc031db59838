/*
 * fpops.c - the floating-point unit against qemu-user, bit for bit: every
 * arithmetic, fused, compare, min/max, sign, class and conversion
 * instruction of RISC-V F and D on a table of edge operands (signed zeros,
 * subnormals, the largest and smallest normals, infinities, quiet and
 * signaling NaNs, values that round differently in each mode), under each
 * of the five rounding modes, with the accrued exception flags read after
 * every instruction. Each (operation, mode) prints one checksum of the
 * result bits and flags; build with -DVERBOSE to print every result.
 * riscv64 only (rv64gc): the instructions are written as inline asm so that
 * the compiler cannot fold or reorder them. A C section at the end
 * (fp_program) is ordinary double/float code as compilers emit it.
 */
#include "rt.h"

#if !defined(__riscv)
#error "fpops.c: riscv64 only"
#endif

static const u64 D[] = {
	0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
	0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff4000000000001,
	0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff, 0x0010000000000000,
	0x7fefffffffffffff, 0xffefffffffffffff, 0x3fd5555555555555, 0x3fb999999999999a,
	0x4004000000000000, 0xc004000000000000, 0x4340000000000001, 0x41e0000000000000,
	0xc3e0000000000000, 0x43f0000000000000, 0x3ff0000000000001, 0x0008000000000000,
	0x7fe0000000000000, 0x4000000000000000, 0x3fe0000000000000, 0xc1e0000000200000,
};
static const u32 S[] = {
	0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001,
	0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x3eaaaaab, 0x3dcccccd,
	0x40200000, 0xc0200000, 0x4b800001, 0x4f000000, 0xdf000000, 0x5f800000, 0x3f800001, 0x00400000,
};
#define ND ARRAY_SIZE(D)
#define NS ARRAY_SIZE(S)
static const char *const RM[] = { "rne", "rtz", "rdn", "rup", "rmm" };

static inline void set_rm(int rm) { __asm__ volatile("fsrm %0" : : "r"(rm)); }
static inline u64 take_flags(void)
{
	u64 f;
	__asm__ volatile("frflags %0\n\tfsflags zero" : "=r"(f));
	return f;
}

typedef union { u64 u; double d; } du;
typedef union { u32 u; float f; } su;
static inline double dv(u64 b) { du x; x.u = b; return x.d; }
static inline float sv(u32 b) { su x; x.u = b; return x.f; }
/* f register bits of a double / float result */
static inline u64 db(double d) { u64 r; __asm__ volatile("fmv.x.d %0, %1" : "=r"(r) : "f"(d)); return r; }
static inline u64 sb(float f) { u64 r; __asm__ volatile("fmv.x.w %0, %1" : "=r"(r) : "f"(f)); return r & 0xffffffffUL; }

static u64 hash, count;
static void rec(u64 bits, const char *what, u64 a, u64 b)
{
	u64 fl = take_flags();
#ifdef VERBOSE
	printf("  %s %lx %lx -> %lx fl=%lx\n", what, a, b, bits, fl);
#else
	(void)what; (void)a; (void)b;
#endif
	hash = ck(hash, bits);
	hash = ck(hash, fl);
	count++;
}
static void report(const char *op, int rm)
{
	printf("%-10s %s  n=%lu  %016lx\n", op, rm >= 0 ? RM[rm] : "-", count, hash);
	hash = 0xcbf29ce484222325UL;
	count = 0;
}

#define BIN_D(name, insn) \
	static u64 name(u64 a, u64 b) { double r, x = dv(a), y = dv(b); \
		__asm__ volatile(insn " %0, %1, %2" : "=f"(r) : "f"(x), "f"(y)); return db(r); }
#define BIN_S(name, insn) \
	static u64 name(u64 a, u64 b) { float r, x = sv((u32)a), y = sv((u32)b); \
		__asm__ volatile(insn " %0, %1, %2" : "=f"(r) : "f"(x), "f"(y)); return sb(r); }
#define CMP_D(name, insn) \
	static u64 name(u64 a, u64 b) { u64 r; double x = dv(a), y = dv(b); \
		__asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "f"(x), "f"(y)); return r; }
#define CMP_S(name, insn) \
	static u64 name(u64 a, u64 b) { u64 r; float x = sv((u32)a), y = sv((u32)b); \
		__asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "f"(x), "f"(y)); return r; }

BIN_D(add_d, "fadd.d") BIN_D(sub_d, "fsub.d") BIN_D(mul_d, "fmul.d") BIN_D(div_d, "fdiv.d")
BIN_D(min_d, "fmin.d") BIN_D(max_d, "fmax.d") BIN_D(sgnj_d, "fsgnj.d") BIN_D(sgnjn_d, "fsgnjn.d") BIN_D(sgnjx_d, "fsgnjx.d")
BIN_S(add_s, "fadd.s") BIN_S(sub_s, "fsub.s") BIN_S(mul_s, "fmul.s") BIN_S(div_s, "fdiv.s")
BIN_S(min_s, "fmin.s") BIN_S(max_s, "fmax.s") BIN_S(sgnjx_s, "fsgnjx.s")
CMP_D(eq_d, "feq.d") CMP_D(lt_d, "flt.d") CMP_D(le_d, "fle.d")
CMP_S(eq_s, "feq.s") CMP_S(lt_s, "flt.s") CMP_S(le_s, "fle.s")

struct bin { const char *name; u64 (*fn)(u64, u64); int dbl; int rounds; };
static const struct bin BINS[] = {
	{ "fadd.d", add_d, 1, 1 }, { "fsub.d", sub_d, 1, 1 }, { "fmul.d", mul_d, 1, 1 }, { "fdiv.d", div_d, 1, 1 },
	{ "fmin.d", min_d, 1, 0 }, { "fmax.d", max_d, 1, 0 }, { "fsgnj.d", sgnj_d, 1, 0 }, { "fsgnjn.d", sgnjn_d, 1, 0 },
	{ "fsgnjx.d", sgnjx_d, 1, 0 }, { "feq.d", eq_d, 1, 0 }, { "flt.d", lt_d, 1, 0 }, { "fle.d", le_d, 1, 0 },
	{ "fadd.s", add_s, 0, 1 }, { "fsub.s", sub_s, 0, 1 }, { "fmul.s", mul_s, 0, 1 }, { "fdiv.s", div_s, 0, 1 },
	{ "fmin.s", min_s, 0, 0 }, { "fmax.s", max_s, 0, 0 }, { "fsgnjx.s", sgnjx_s, 0, 0 },
	{ "feq.s", eq_s, 0, 0 }, { "flt.s", lt_s, 0, 0 }, { "fle.s", le_s, 0, 0 },
};

static void binaries(void)
{
	for (unsigned k = 0; k < ARRAY_SIZE(BINS); k++) {
		const struct bin *op = &BINS[k];
		for (int rm = 0; rm < (op->rounds ? 5 : 1); rm++) {
			set_rm(rm);
			unsigned n = op->dbl ? ND : NS;
			for (unsigned i = 0; i < n; i++)
				for (unsigned j = 0; j < n; j++) {
					u64 a = op->dbl ? D[i] : S[i], b = op->dbl ? D[j] : S[j];
					rec(op->fn(a, b), op->name, a, b);
				}
			report(op->name, op->rounds ? rm : -1);
		}
	}
}

static void unaries(void)
{
	for (int rm = 0; rm < 5; rm++) {
		set_rm(rm);
		for (unsigned i = 0; i < ND; i++) {
			double x = dv(D[i]), r;
			u64 v;
			__asm__ volatile("fsqrt.d %0, %1" : "=f"(r) : "f"(x)); rec(db(r), "fsqrt.d", D[i], 0);
			float f;
			__asm__ volatile("fcvt.s.d %0, %1" : "=f"(f) : "f"(x)); rec(sb(f), "fcvt.s.d", D[i], 0);
			__asm__ volatile("fcvt.w.d %0, %1" : "=r"(v) : "f"(x)); rec(v, "fcvt.w.d", D[i], 0);
			__asm__ volatile("fcvt.wu.d %0, %1" : "=r"(v) : "f"(x)); rec(v, "fcvt.wu.d", D[i], 0);
			__asm__ volatile("fcvt.l.d %0, %1" : "=r"(v) : "f"(x)); rec(v, "fcvt.l.d", D[i], 0);
			__asm__ volatile("fcvt.lu.d %0, %1" : "=r"(v) : "f"(x)); rec(v, "fcvt.lu.d", D[i], 0);
			/* the bits as an integer, converted back */
			__asm__ volatile("fcvt.d.l %0, %1" : "=f"(r) : "r"(D[i])); rec(db(r), "fcvt.d.l", D[i], 0);
			__asm__ volatile("fcvt.d.lu %0, %1" : "=f"(r) : "r"(D[i])); rec(db(r), "fcvt.d.lu", D[i], 0);
			__asm__ volatile("fcvt.s.l %0, %1" : "=f"(f) : "r"(D[i])); rec(sb(f), "fcvt.s.l", D[i], 0);
			__asm__ volatile("fcvt.s.wu %0, %1" : "=f"(f) : "r"(D[i])); rec(sb(f), "fcvt.s.wu", D[i], 0);
		}
		for (unsigned i = 0; i < NS; i++) {
			float x = sv(S[i]), f;
			double r;
			u64 v;
			__asm__ volatile("fsqrt.s %0, %1" : "=f"(f) : "f"(x)); rec(sb(f), "fsqrt.s", S[i], 0);
			__asm__ volatile("fcvt.d.s %0, %1" : "=f"(r) : "f"(x)); rec(db(r), "fcvt.d.s", S[i], 0);
			__asm__ volatile("fcvt.w.s %0, %1" : "=r"(v) : "f"(x)); rec(v, "fcvt.w.s", S[i], 0);
			__asm__ volatile("fcvt.lu.s %0, %1" : "=r"(v) : "f"(x)); rec(v, "fcvt.lu.s", S[i], 0);
			__asm__ volatile("fcvt.s.w %0, %1" : "=f"(f) : "r"((u64)S[i])); rec(sb(f), "fcvt.s.w", S[i], 0);
			__asm__ volatile("fcvt.d.wu %0, %1" : "=f"(r) : "r"((u64)S[i])); rec(db(r), "fcvt.d.wu", S[i], 0);
		}
		report("unary", rm);
	}
	for (unsigned i = 0; i < ND; i++) {
		u64 v;
		__asm__ volatile("fclass.d %0, %1" : "=r"(v) : "f"(dv(D[i]))); rec(v, "fclass.d", D[i], 0);
	}
	for (unsigned i = 0; i < NS; i++) {
		u64 v;
		__asm__ volatile("fclass.s %0, %1" : "=r"(v) : "f"(sv(S[i]))); rec(v, "fclass.s", S[i], 0);
	}
	/* a single that is not NaN-boxed reads as the canonical NaN */
	{
		u64 v, raw = 0x123456783f800000UL;
		double t;
		float f;
		__asm__ volatile("fmv.d.x %1, %2\n\tfadd.s %0, %1, %1" : "=f"(f), "=&f"(t) : "r"(raw));
		rec(sb(f), "unboxed", raw, 0);
		__asm__ volatile("fmv.d.x %1, %2\n\tfclass.s %0, %1" : "=r"(v), "=&f"(t) : "r"(raw));
		rec(v, "unboxed-class", raw, 0);
	}
	report("class", -1);
}

static void fused(void)
{
	for (int rm = 0; rm < 5; rm++) {
		set_rm(rm);
		for (unsigned i = 0; i < 16; i++)
			for (unsigned j = 0; j < 16; j++)
				for (unsigned k = 0; k < 16; k++) {
					double a = dv(D[i]), b = dv(D[j + 8 < ND ? j + 8 : j]), c = dv(D[(k + 3) % ND]), r;
					__asm__ volatile("fmadd.d %0, %1, %2, %3" : "=f"(r) : "f"(a), "f"(b), "f"(c)); rec(db(r), "fmadd.d", D[i], D[j]);
					__asm__ volatile("fnmsub.d %0, %1, %2, %3" : "=f"(r) : "f"(a), "f"(b), "f"(c)); rec(db(r), "fnmsub.d", D[i], D[j]);
					float x = sv(S[i]), y = sv(S[j + 4]), z = sv(S[(k + 5) % NS]), f;
					__asm__ volatile("fmsub.s %0, %1, %2, %3" : "=f"(f) : "f"(x), "f"(y), "f"(z)); rec(sb(f), "fmsub.s", S[i], S[j]);
					__asm__ volatile("fnmadd.s %0, %1, %2, %3" : "=f"(f) : "f"(x), "f"(y), "f"(z)); rec(sb(f), "fnmadd.s", S[i], S[j]);
				}
		report("fused", rm);
	}
}

/* ordinary C floating-point code, compiled as the compilers do it (rne) */
static NOINLINE double horner(const double *c, int n, double x)
{
	double r = 0;
	for (int i = n - 1; i >= 0; i--)
		r = r * x + c[i];
	return r;
}
static NOINLINE float mean(const float *v, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += v[i];
	return s / (float)n;
}
static void fp_program(void)
{
	set_rm(0);
	take_flags();
	static const double coef[] = { 1.0, -0.5, 0.25, 1.0 / 3.0, -1e-3, 7.0 };
	float v[37];
	for (int i = 0; i < 37; i++)
		v[i] = (float)OPAQUE(i) * 0.37f - 3.0f;
	for (int i = -20; i <= 20; i++) {
		double x = OPAQUE(i) * 0.125;
		double y = horner(coef, 6, x);
		long l = (long)(y * 1000.0);
		rec(db(y), "horner", (u64)i, 0);
		rec((u64)l, "trunc", (u64)i, 0);
	}
	rec(sb(mean(v, 37)), "mean", 0, 0);
	report("c-code", -1);
}

int main(void)
{
	hash = 0xcbf29ce484222325UL;
	binaries();
	unaries();
	fused();
	fp_program();
	return 0;
}
