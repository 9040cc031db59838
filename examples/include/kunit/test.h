/*
 * <kunit/test.h> for kprobe-debug modules: a minimal KUnit, written for
 * this project from KUnit's documented interface (not Linux's lib/kunit):
 * struct kunit, kunit_case and kunit_suite, KUNIT_CASE(), the EXPECT and
 * ASSERT families (booleans, integers, pointers, strings, each with a _MSG
 * form), and kunit_test_suites(), which makes the module's init run the
 * suites and print KTAP in the kernel log as KUnit does:
 *
 *   KTAP version 1
 *   1..1
 *       KTAP version 1
 *       # Subtest: kprobes_test
 *       # module: test_kprobes
 *       1..7
 *       ok 1 test_kprobe
 *       # test_kprobes: EXPECTATION FAILED at lib/test_kprobes.c:138
 *       Expected posth_val != 0, but
 *           posth_val == 0 (0x0)
 *       not ok 2 test_kprobes
 *       ...
 *   # kprobes_test: pass:6 fail:1 skip:0 total:7
 *   # Totals: pass:6 fail:1 skip:0 total:7
 *   not ok 1 kprobes_test
 *
 * Each case runs between the suite's init and exit; an EXPECT that fails
 * marks the case failed and goes on; an ASSERT that fails ends the case
 * at once (KUnit runs a case in a kthread of its own and ends the thread;
 * here the case runs in the module's init thread, and a setjmp/longjmp
 * pair per arch, below, plays that try/catch: an ASSERT must not fail
 * inside a probe handler, which KUnit does not allow either). The exit
 * runs whether the case passed or not. The init returns 0 whatever the
 * results (KUnit's module notifier does not refuse a module whose tests
 * fail): the KTAP lines are the verdict.
 * x86_64, aarch64, riscv64 (modules are built -mgeneral-regs-only /
 * without floating point, so only the integer callee-saved registers are
 * kept across the longjmp).
 */
#ifndef _KP_KUNIT_TEST_H
#define _KP_KUNIT_TEST_H

#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/types.h>

enum kunit_status {
	KUNIT_SUCCESS,
	KUNIT_FAILURE,
	KUNIT_SKIPPED,
};

enum kunit_assert_type {
	KUNIT_ASSERTION,
	KUNIT_EXPECTATION,
};

/* the try/catch of one case: callee-saved registers, stack pointer, resume address */
struct __kunit_jmp_buf {
	unsigned long regs[16];
};

struct kunit {
	/* the case running */
	const char *name;
	enum kunit_status status;
	/* why it was skipped */
	const char *status_comment;
	void *priv;
	/* private: the case's try/catch, armed while the case runs */
	struct __kunit_jmp_buf __catch;
	int __can_throw;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	/* private: its result */
	enum kunit_status status;
};

#define KUNIT_CASE(test_name) { .run_case = test_name, .name = #test_name }

struct kunit_suite {
	const char name[256];
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

/* ------------------------------------------------------------ try/catch */

__attribute__((__naked__, __noinline__, __returns_twice__, __unused__)) static int __kunit_setjmp(struct __kunit_jmp_buf *b)
{
#if defined(__x86_64__)
	__asm__ volatile(
		"movq %rbx, 0(%rdi)\n\t"
		"movq %rbp, 8(%rdi)\n\t"
		"movq %r12, 16(%rdi)\n\t"
		"movq %r13, 24(%rdi)\n\t"
		"movq %r14, 32(%rdi)\n\t"
		"movq %r15, 40(%rdi)\n\t"
		"leaq 8(%rsp), %rdx\n\t"        /* the caller's stack pointer after this returns */
		"movq %rdx, 48(%rdi)\n\t"
		"movq (%rsp), %rdx\n\t"         /* where this returns to */
		"movq %rdx, 56(%rdi)\n\t"
		"xorl %eax, %eax\n\t"
		"ret\n\t");
#elif defined(__aarch64__)
	__asm__ volatile(
		"stp x19, x20, [x0, #0]\n\t"
		"stp x21, x22, [x0, #16]\n\t"
		"stp x23, x24, [x0, #32]\n\t"
		"stp x25, x26, [x0, #48]\n\t"
		"stp x27, x28, [x0, #64]\n\t"
		"stp x29, x30, [x0, #80]\n\t"   /* frame pointer, and where this returns to */
		"mov x2, sp\n\t"
		"str x2, [x0, #96]\n\t"
		"mov w0, #0\n\t"
		"ret\n\t");
#elif defined(__riscv)
	__asm__ volatile(
		"sd ra, 0(a0)\n\t"
		"sd sp, 8(a0)\n\t"
		"sd s0, 16(a0)\n\t"
		"sd s1, 24(a0)\n\t"
		"sd s2, 32(a0)\n\t"
		"sd s3, 40(a0)\n\t"
		"sd s4, 48(a0)\n\t"
		"sd s5, 56(a0)\n\t"
		"sd s6, 64(a0)\n\t"
		"sd s7, 72(a0)\n\t"
		"sd s8, 80(a0)\n\t"
		"sd s9, 88(a0)\n\t"
		"sd s10, 96(a0)\n\t"
		"sd s11, 104(a0)\n\t"
		"li a0, 0\n\t"
		"ret\n\t");
#else
#error "<kunit/test.h>: x86_64, aarch64 or riscv64"
#endif
}

/* back to the __kunit_setjmp that filled b, which then returns val (1 if val is 0) */
__attribute__((__naked__, __noinline__, __noreturn__, __unused__)) static void __kunit_longjmp(struct __kunit_jmp_buf *b, int val)
{
#if defined(__x86_64__)
	__asm__ volatile(
		"movq 0(%rdi), %rbx\n\t"
		"movq 8(%rdi), %rbp\n\t"
		"movq 16(%rdi), %r12\n\t"
		"movq 24(%rdi), %r13\n\t"
		"movq 32(%rdi), %r14\n\t"
		"movq 40(%rdi), %r15\n\t"
		"movq 48(%rdi), %rsp\n\t"
		"movl %esi, %eax\n\t"
		"testl %eax, %eax\n\t"
		"jnz 1f\n\t"
		"movl $1, %eax\n"
		"1:\n\t"
		"jmpq *56(%rdi)\n\t");
#elif defined(__aarch64__)
	__asm__ volatile(
		"ldp x19, x20, [x0, #0]\n\t"
		"ldp x21, x22, [x0, #16]\n\t"
		"ldp x23, x24, [x0, #32]\n\t"
		"ldp x25, x26, [x0, #48]\n\t"
		"ldp x27, x28, [x0, #64]\n\t"
		"ldp x29, x30, [x0, #80]\n\t"
		"ldr x2, [x0, #96]\n\t"
		"mov sp, x2\n\t"
		"cmp w1, #0\n\t"
		"csinc w0, w1, wzr, ne\n\t"
		"ret\n\t");
#elif defined(__riscv)
	__asm__ volatile(
		"ld ra, 0(a0)\n\t"
		"ld sp, 8(a0)\n\t"
		"ld s0, 16(a0)\n\t"
		"ld s1, 24(a0)\n\t"
		"ld s2, 32(a0)\n\t"
		"ld s3, 40(a0)\n\t"
		"ld s4, 48(a0)\n\t"
		"ld s5, 56(a0)\n\t"
		"ld s6, 64(a0)\n\t"
		"ld s7, 72(a0)\n\t"
		"ld s8, 80(a0)\n\t"
		"ld s9, 88(a0)\n\t"
		"ld s10, 96(a0)\n\t"
		"ld s11, 104(a0)\n\t"
		"mv a0, a1\n\t"
		"bnez a0, 1f\n\t"
		"li a0, 1\n"
		"1:\n\t"
		"ret\n\t");
#endif
}

/* ------------------------------------------------------------ reporting */

#define KUNIT_SUBTEST_INDENT "    "

#define kunit_log_line(test, fmt, ...) \
	printk(KERN_INFO KUNIT_SUBTEST_INDENT "# %s: " fmt "\n", (test)->name, ##__VA_ARGS__)
#define kunit_info(test, fmt, ...) printk(KERN_INFO KUNIT_SUBTEST_INDENT "# %s: " fmt, (test)->name, ##__VA_ARGS__)
#define kunit_warn(test, fmt, ...) printk(KERN_WARNING KUNIT_SUBTEST_INDENT "# %s: " fmt, (test)->name, ##__VA_ARGS__)
#define kunit_err(test, fmt, ...) printk(KERN_ERR KUNIT_SUBTEST_INDENT "# %s: " fmt, (test)->name, ##__VA_ARGS__)

/* end the case now (an ASSERT failed, or kunit_skip); outside a case, nothing to end */
__attribute__((unused)) static void __kunit_abort(struct kunit *test)
{
	if (test->__can_throw)
		__kunit_longjmp(&test->__catch, 1);
}

__attribute__((unused)) static void __kunit_fail_header(struct kunit *test, enum kunit_assert_type type,
							 const char *file, int line)
{
	test->status = KUNIT_FAILURE;
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "# %s: %s FAILED at %s:%d\n", test->name,
	       type == KUNIT_ASSERTION ? "ASSERTION" : "EXPECTATION", file, line);
}

/* whether an operand's text is the integer it evaluated to (then its value is not repeated) */
__attribute__((unused)) static int __kunit_is_literal(const char *text, long long value)
{
	unsigned long long v = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
	char digits[24];
	int n = 0;

	if (value < 0) {
		if (*text != '-')
			return 0;
		text++;
	}
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n > 0)
		if (*text++ != digits[--n])
			return 0;
	return *text == 0;
}

__attribute__((unused)) static void __kunit_binary_int_fail(struct kunit *test, enum kunit_assert_type type,
							     const char *file, int line, const char *left, const char *op,
							     const char *right, long long lv, long long rv)
{
	__kunit_fail_header(test, type, file, line);
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "Expected %s %s %s, but\n", left, op, right);
	if (!__kunit_is_literal(left, lv))
		printk(KERN_ERR KUNIT_SUBTEST_INDENT "    %s == %lld (0x%llx)\n", left, lv, (unsigned long long)lv);
	if (!__kunit_is_literal(right, rv))
		printk(KERN_ERR KUNIT_SUBTEST_INDENT "    %s == %lld (0x%llx)\n", right, rv, (unsigned long long)rv);
}

__attribute__((unused)) static void __kunit_binary_ptr_fail(struct kunit *test, enum kunit_assert_type type,
							     const char *file, int line, const char *left, const char *op,
							     const char *right, const void *lv, const void *rv)
{
	__kunit_fail_header(test, type, file, line);
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "Expected %s %s %s, but\n", left, op, right);
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "    %s == %p\n", left, lv);
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "    %s == %p\n", right, rv);
}

__attribute__((unused)) static int __kunit_strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

__attribute__((unused)) static void __kunit_binary_str_fail(struct kunit *test, enum kunit_assert_type type,
							     const char *file, int line, const char *left, const char *op,
							     const char *right, const char *lv, const char *rv)
{
	__kunit_fail_header(test, type, file, line);
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "Expected %s %s %s, but\n", left, op, right);
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "    %s == \"%s\"\n", left, lv ? lv : "(null)");
	printk(KERN_ERR KUNIT_SUBTEST_INDENT "    %s == \"%s\"\n", right, rv ? rv : "(null)");
}

/* ------------------------------------------------------------ assertions */

/* `msg`: a statement printing the _MSG forms' message; an ASSERTION then ends the case */
#define __KUNIT_FAILED(test, type, msg) \
	do { \
		msg; \
		if ((type) == KUNIT_ASSERTION) \
			__kunit_abort(test); \
	} while (0)

#define __KUNIT_MSG(fmt, ...) printk(KERN_ERR KUNIT_SUBTEST_INDENT fmt "\n", ##__VA_ARGS__)
#define __KUNIT_NO_MSG (void)0

#define __KUNIT_BOOL(test, type, cond, expected, msg) \
	do { \
		if (!!(cond) != (expected)) { \
			__kunit_fail_header(test, type, __FILE__, __LINE__); \
			printk(KERN_ERR KUNIT_SUBTEST_INDENT "Expected %s to be %s, but is %s\n", #cond, \
			       (expected) ? "true" : "false", (expected) ? "false" : "true"); \
			__KUNIT_FAILED(test, type, msg); \
		} \
	} while (0)

#define __KUNIT_INT(test, type, left, op, right, msg) \
	do { \
		const __typeof__(left) __kunit_left = (left); \
		const __typeof__(right) __kunit_right = (right); \
		if (!(__kunit_left op __kunit_right)) { \
			__kunit_binary_int_fail(test, type, __FILE__, __LINE__, #left, #op, #right, \
						(long long)__kunit_left, (long long)__kunit_right); \
			__KUNIT_FAILED(test, type, msg); \
		} \
	} while (0)

#define __KUNIT_PTR(test, type, left, op, right, msg) \
	do { \
		const void *__kunit_left = (const void *)(left); \
		const void *__kunit_right = (const void *)(right); \
		if (!(__kunit_left op __kunit_right)) { \
			__kunit_binary_ptr_fail(test, type, __FILE__, __LINE__, #left, #op, #right, __kunit_left, __kunit_right); \
			__KUNIT_FAILED(test, type, msg); \
		} \
	} while (0)

#define __KUNIT_STR(test, type, left, op, right, msg) \
	do { \
		const char *__kunit_left = (left); \
		const char *__kunit_right = (right); \
		if (!(__kunit_left && __kunit_right && __kunit_strcmp(__kunit_left, __kunit_right) op 0)) { \
			__kunit_binary_str_fail(test, type, __FILE__, __LINE__, #left, #op, #right, __kunit_left, __kunit_right); \
			__KUNIT_FAILED(test, type, msg); \
		} \
	} while (0)

#define __KUNIT_ERR_PTR(x) ((unsigned long)(const void *)(x) >= (unsigned long)-4095)

#define KUNIT_FAIL(test, fmt, ...) \
	do { \
		__kunit_fail_header(test, KUNIT_EXPECTATION, __FILE__, __LINE__); \
		__KUNIT_MSG(fmt, ##__VA_ARGS__); \
	} while (0)

#define KUNIT_EXPECT_TRUE(test, c) __KUNIT_BOOL(test, KUNIT_EXPECTATION, c, 1, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_FALSE(test, c) __KUNIT_BOOL(test, KUNIT_EXPECTATION, c, 0, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_EQ(test, l, r) __KUNIT_INT(test, KUNIT_EXPECTATION, l, ==, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_NE(test, l, r) __KUNIT_INT(test, KUNIT_EXPECTATION, l, !=, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_LT(test, l, r) __KUNIT_INT(test, KUNIT_EXPECTATION, l, <, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_LE(test, l, r) __KUNIT_INT(test, KUNIT_EXPECTATION, l, <=, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_GT(test, l, r) __KUNIT_INT(test, KUNIT_EXPECTATION, l, >, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_GE(test, l, r) __KUNIT_INT(test, KUNIT_EXPECTATION, l, >=, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_PTR_EQ(test, l, r) __KUNIT_PTR(test, KUNIT_EXPECTATION, l, ==, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_PTR_NE(test, l, r) __KUNIT_PTR(test, KUNIT_EXPECTATION, l, !=, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_NULL(test, p) __KUNIT_PTR(test, KUNIT_EXPECTATION, p, ==, NULL, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_NOT_NULL(test, p) __KUNIT_PTR(test, KUNIT_EXPECTATION, p, !=, NULL, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_NOT_ERR_OR_NULL(test, p) \
	__KUNIT_BOOL(test, KUNIT_EXPECTATION, (p) && !__KUNIT_ERR_PTR(p), 1, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_STREQ(test, l, r) __KUNIT_STR(test, KUNIT_EXPECTATION, l, ==, r, __KUNIT_NO_MSG)
#define KUNIT_EXPECT_STRNEQ(test, l, r) __KUNIT_STR(test, KUNIT_EXPECTATION, l, !=, r, __KUNIT_NO_MSG)

#define KUNIT_EXPECT_TRUE_MSG(test, c, fmt, ...) __KUNIT_BOOL(test, KUNIT_EXPECTATION, c, 1, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_FALSE_MSG(test, c, fmt, ...) __KUNIT_BOOL(test, KUNIT_EXPECTATION, c, 0, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_EQ_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_EXPECTATION, l, ==, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_NE_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_EXPECTATION, l, !=, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_LT_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_EXPECTATION, l, <, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_LE_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_EXPECTATION, l, <=, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_GT_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_EXPECTATION, l, >, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_EXPECT_GE_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_EXPECTATION, l, >=, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))

#define KUNIT_ASSERT_TRUE(test, c) __KUNIT_BOOL(test, KUNIT_ASSERTION, c, 1, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_FALSE(test, c) __KUNIT_BOOL(test, KUNIT_ASSERTION, c, 0, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_EQ(test, l, r) __KUNIT_INT(test, KUNIT_ASSERTION, l, ==, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_NE(test, l, r) __KUNIT_INT(test, KUNIT_ASSERTION, l, !=, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_LT(test, l, r) __KUNIT_INT(test, KUNIT_ASSERTION, l, <, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_LE(test, l, r) __KUNIT_INT(test, KUNIT_ASSERTION, l, <=, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_GT(test, l, r) __KUNIT_INT(test, KUNIT_ASSERTION, l, >, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_GE(test, l, r) __KUNIT_INT(test, KUNIT_ASSERTION, l, >=, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_PTR_EQ(test, l, r) __KUNIT_PTR(test, KUNIT_ASSERTION, l, ==, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_PTR_NE(test, l, r) __KUNIT_PTR(test, KUNIT_ASSERTION, l, !=, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_NULL(test, p) __KUNIT_PTR(test, KUNIT_ASSERTION, p, ==, NULL, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_NOT_NULL(test, p) __KUNIT_PTR(test, KUNIT_ASSERTION, p, !=, NULL, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p) \
	__KUNIT_BOOL(test, KUNIT_ASSERTION, (p) && !__KUNIT_ERR_PTR(p), 1, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_STREQ(test, l, r) __KUNIT_STR(test, KUNIT_ASSERTION, l, ==, r, __KUNIT_NO_MSG)
#define KUNIT_ASSERT_STRNEQ(test, l, r) __KUNIT_STR(test, KUNIT_ASSERTION, l, !=, r, __KUNIT_NO_MSG)

#define KUNIT_ASSERT_TRUE_MSG(test, c, fmt, ...) __KUNIT_BOOL(test, KUNIT_ASSERTION, c, 1, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_ASSERT_FALSE_MSG(test, c, fmt, ...) __KUNIT_BOOL(test, KUNIT_ASSERTION, c, 0, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_ASSERT_EQ_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_ASSERTION, l, ==, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))
#define KUNIT_ASSERT_NE_MSG(test, l, r, fmt, ...) __KUNIT_INT(test, KUNIT_ASSERTION, l, !=, r, __KUNIT_MSG(fmt, ##__VA_ARGS__))

/* skip the case: marked skipped with `fmt` as its reason (kunit_skip also ends it) */
#define kunit_mark_skipped(test, fmt, ...) \
	do { \
		(test)->status = KUNIT_SKIPPED; \
		(test)->status_comment = fmt; \
		kunit_log_line(test, fmt, ##__VA_ARGS__); \
	} while (0)
#define kunit_skip(test, fmt, ...) \
	do { \
		kunit_mark_skipped(test, fmt, ##__VA_ARGS__); \
		__kunit_abort(test); \
	} while (0)

/* ------------------------------------------------------------ the runner */

/* one case: init, the case, exit, each under the case's try/catch */
__attribute__((unused)) static void __kunit_run_case(struct kunit_suite *suite, struct kunit_case *c, struct kunit *test)
{
	int init_failed = 0;

	if (__kunit_setjmp(&test->__catch) == 0) {
		test->__can_throw = 1;
		if (suite->init) {
			int r = suite->init(test);

			if (r) {
				init_failed = 1;
				test->status = KUNIT_FAILURE;
				kunit_log_line(test, "failed to initialize: %d", r);
			}
		}
		if (!init_failed)
			c->run_case(test);
	}
	test->__can_throw = 0;
	if (suite->exit && __kunit_setjmp(&test->__catch) == 0) {
		test->__can_throw = 1;
		suite->exit(test);
	}
	test->__can_throw = 0;
}

/* a suite as KTAP: its cases as a subtest, their results, the counts; its own result line is number `index` */
__attribute__((unused)) static enum kunit_status __kunit_run_suite(struct kunit_suite *suite, int index)
{
	unsigned long pass = 0, fail = 0, skip = 0, total = 0;
	struct kunit_case *c;
	enum kunit_status status;
	int init_err = 0;

	for (c = suite->test_cases; c->run_case; c++)
		total++;
	printk(KERN_INFO KUNIT_SUBTEST_INDENT "KTAP version 1\n");
	printk(KERN_INFO KUNIT_SUBTEST_INDENT "# Subtest: %s\n", suite->name);
#ifdef KBUILD_MODNAME
	printk(KERN_INFO KUNIT_SUBTEST_INDENT "# module: %s\n", KBUILD_MODNAME);
#endif
	printk(KERN_INFO KUNIT_SUBTEST_INDENT "1..%lu\n", total);
	if (suite->suite_init) {
		init_err = suite->suite_init(suite);
		if (init_err)
			printk(KERN_ERR KUNIT_SUBTEST_INDENT "# failed to initialize (%d)\n", init_err);
	}
	if (!init_err) {
		int n = 0;

		for (c = suite->test_cases; c->run_case; c++) {
			struct kunit test = { .name = c->name, .status = KUNIT_SUCCESS };

			__kunit_run_case(suite, c, &test);
			c->status = test.status;
			n++;
			if (test.status == KUNIT_SKIPPED) {
				skip++;
				printk(KERN_INFO KUNIT_SUBTEST_INDENT "ok %d %s # SKIP %s\n", n, c->name,
				       test.status_comment ? test.status_comment : "");
			} else if (test.status == KUNIT_FAILURE) {
				fail++;
				printk(KERN_INFO KUNIT_SUBTEST_INDENT "not ok %d %s\n", n, c->name);
			} else {
				pass++;
				printk(KERN_INFO KUNIT_SUBTEST_INDENT "ok %d %s\n", n, c->name);
			}
		}
		if (suite->suite_exit)
			suite->suite_exit(suite);
	}
	status = init_err || fail ? KUNIT_FAILURE : total && skip == total ? KUNIT_SKIPPED : KUNIT_SUCCESS;
	printk(KERN_INFO "# %s: pass:%lu fail:%lu skip:%lu total:%lu\n", suite->name, pass, fail, skip, total);
	printk(KERN_INFO "# Totals: pass:%lu fail:%lu skip:%lu total:%lu\n", pass, fail, skip, total);
	printk(KERN_INFO "%s %d %s%s\n", status == KUNIT_FAILURE ? "not ok" : "ok", index, suite->name,
	       status == KUNIT_SKIPPED ? " # SKIP" : "");
	return status;
}

/* the module's suites: the KTAP header, then each suite */
__attribute__((unused)) static int __kunit_run_suites(struct kunit_suite *const *suites, int n)
{
	int i;

	printk(KERN_INFO "KTAP version 1\n");
	printk(KERN_INFO "1..%d\n", n);
	for (i = 0; i < n; i++)
		__kunit_run_suite(suites[i], i + 1);
	return 0;
}

/* the module's suites, run by its init (loading the module runs its tests, as KUnit's module notifier does) */
#define kunit_test_suites(...) \
	static struct kunit_suite *const __kunit_suites[] = { __VA_ARGS__ }; \
	static int __init __kunit_module_init(void) \
	{ \
		return __kunit_run_suites(__kunit_suites, (int)ARRAY_SIZE(__kunit_suites)); \
	} \
	static void __exit __kunit_module_exit(void) { } \
	module_init(__kunit_module_init) \
	module_exit(__kunit_module_exit)
#define kunit_test_suite(suite) kunit_test_suites(&(suite))

#endif
