/*
 * sys.h - raw Linux system calls for the user-space conformance programs
 * (x86_64, aarch64 and riscv64: the generic numbers), freestanding: _start, syscall stubs, a few string
 * and output helpers. Integer only (no libc: the programs test the kernel's
 * system calls, not a C library).
 */
#ifndef SYS_H
#define SYS_H
typedef unsigned long u64;
typedef long s64;
typedef unsigned int u32;
typedef unsigned long size_t;
#define NULL ((void *)0)

#if defined(__x86_64__)
#define NR_read 0
#define NR_write 1
#define NR_close 3
#define NR_fstat 5
#define NR_lseek 8
#define NR_mmap 9
#define NR_munmap 11
#define NR_rt_sigaction 13
#define NR_rt_sigprocmask 14
#define NR_rt_sigreturn 15
#define NR_pread64 17
#define NR_pipe2 293
#define NR_dup3 292
#define NR_getpid 39
#define NR_clone 56
#define NR_execve 59
#define NR_exit_group 231
#define NR_wait4 61
#define NR_kill 62
#define NR_fcntl 72
#define NR_ftruncate 77
#define NR_getcwd 79
#define NR_chdir 80
#define NR_umask 95
#define NR_getppid 110
#define NR_getdents64 217
#define NR_clock_gettime 228
#define NR_openat 257
#define NR_mkdirat 258
#define NR_newfstatat 262
#define NR_unlinkat 263
#define NR_renameat 264
#define NR_symlinkat 266
#define NR_readlinkat 267
#define NR_faccessat 269
#define NR_ppoll_unused 271
#define NR_pause_or_suspend 130 /* rt_sigsuspend */
#define O_DIRECTORY 0200000
#define STAT_SIZE 144
#define STAT_MODE_OFF 24
#define STAT_SIZE_OFF 48
#define STAT_NLINK_32 0
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}
__asm__(".text\n.globl _start\n_start:\n xor %rbp, %rbp\n mov %rsp, %rdi\n and $-16, %rsp\n call cstart\n hlt\n"
	".globl restorer\nrestorer:\n mov $15, %eax\n syscall\n");
#define CLONE_CHILD_ARGS(flags) (flags), 0, 0, 0, 0
#elif defined(__aarch64__) || defined(__riscv)
/* the generic system call numbers (asm-generic/unistd.h) */
#define NR_read 63
#define NR_write 64
#define NR_close 57
#define NR_fstat 80
#define NR_lseek 62
#define NR_mmap 222
#define NR_munmap 215
#define NR_rt_sigaction 134
#define NR_rt_sigprocmask 135
#define NR_rt_sigreturn 139
#define NR_pread64 67
#define NR_pipe2 59
#define NR_dup3 24
#define NR_getpid 172
#define NR_clone 220
#define NR_execve 221
#define NR_exit_group 94
#define NR_wait4 260
#define NR_kill 129
#define NR_fcntl 25
#define NR_ftruncate 46
#define NR_getcwd 17
#define NR_chdir 49
#define NR_umask 166
#define NR_getppid 173
#define NR_getdents64 61
#define NR_clock_gettime 113
#define NR_openat 56
#define NR_mkdirat 34
#define NR_newfstatat 79
#define NR_unlinkat 35
#define NR_renameat 38
#define NR_symlinkat 36
#define NR_readlinkat 78
#define NR_faccessat 48
#define NR_pause_or_suspend 133
#define O_DIRECTORY 040000
#define STAT_SIZE 128
#define STAT_MODE_OFF 16
#define STAT_SIZE_OFF 48
#else
#error "x86_64, aarch64 or riscv64"
#endif

#if defined(__aarch64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	return x0;
}
__asm__(".text\n.globl _start\n_start:\n mov x29, #0\n mov x30, #0\n mov x0, sp\n and sp, x0, #-16\n bl cstart\n brk #0\n"
	".globl restorer\nrestorer:\n mov x8, #139\n svc #0\n");
#elif defined(__riscv)
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long a7 __asm__("a7") = n;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;
	register long a4 __asm__("a4") = e;
	register long a5 __asm__("a5") = f;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5) : "memory");
	return a0;
}
__asm__(".text\n.globl _start\n_start:\n .option push\n .option norelax\n la gp, __global_pointer$\n .option pop\n"
	" li s0, 0\n li ra, 0\n mv a0, sp\n andi sp, a0, -16\n call cstart\n ebreak\n"
	".globl restorer\nrestorer:\n li a7, 139\n ecall\n");
#endif

#define sys0(n) sys6(n, 0, 0, 0, 0, 0, 0)
#define sys1(n, a) sys6(n, (long)(a), 0, 0, 0, 0, 0)
#define sys2(n, a, b) sys6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys4(n, a, b, c, d) sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define sys5(n, a, b, c, d, e) sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

#define AT_FDCWD -100
#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_CREAT 0100
#define O_TRUNC 01000
#define O_APPEND 02000
#define O_CLOEXEC 02000000
#define SIGCHLD 17
#define SIGTERM 15
#define SIGUSR1 10
#define SIGPIPE 13
#define SA_RESTORER 0x04000000

void restorer(void);

/* the compilers may call these for struct copies and initializers */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n) { volatile char *p = d; while (n--) *p++ = (char)c; return d; }
void *memcpy(void *d, const void *s, size_t n) { volatile char *p = d; const char *q = s; while (n--) *p++ = *q++; return d; }

static inline size_t slen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
static inline int seq(const char *a, const char *b) { while (*a && *a == *b) { a++; b++; } return *a == *b; }
static inline void out(const char *s) { sys3(NR_write, 1, s, slen(s)); }
static inline void outn(long v)
{
	char b[24];
	int i = 23, neg = v < 0;
	unsigned long u = neg ? -(unsigned long)v : (unsigned long)v;
	b[i] = 0;
	do { b[--i] = '0' + u % 10; u /= 10; } while (u);
	if (neg) b[--i] = '-';
	out(b + i);
}
static inline void outo(unsigned long v)
{
	char b[24];
	int i = 23;
	b[i] = 0;
	do { b[--i] = '0' + (v & 7); v >>= 3; } while (v);
	out(b + i);
}
/* "label value\n" */
static inline void kv(const char *label, long v) { out(label); out(" "); outn(v); out("\n"); }
#endif
