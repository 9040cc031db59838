/*
 * uprobed.c - a program to put uprobes and breakpoints on: plain functions,
 * recursion (nested uretprobe instances), a tail call (a chained return
 * instance), a global bumped through a RIP-relative operand at a function's
 * first instruction (x86 XOL fix-up), a longjmp out of a probed function
 * (a stale return instance), fork (breakpoints copied with the memory) and
 * an exec of itself (the new image gets the probes). Every result is
 * printed: the output must be the same with and without probes.
 */
#include "sys.h"

volatile long counter;
static void *jb[5];

__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }
__attribute__((noinline)) long fact(long n) { return n <= 1 ? 1 : n * fact(n - 1); }
__attribute__((noinline)) long tail(long x) { return leaf(x + 1); }
__attribute__((noinline)) void bump(void) { counter++; }
__attribute__((noinline)) void escape(long n)
{
	if (n == 0) __builtin_longjmp(jb, 1);
	escape(n - 1);
	counter += 100; /* not reached */
}
__attribute__((noinline)) long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) { s += leaf(i); bump(); }
	return s;
}

static void child_part(void)
{
	kv("child leaf", leaf(7));
	kv("child work", work(5));
	sys1(NR_exit_group, 0);
}

void cstart(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	if (argc >= 2 && seq(argv[1], "again")) {
		kv("exec leaf", leaf(11));
		kv("exec fact", fact(5));
		sys1(NR_exit_group, 0);
	}
	kv("leaf", leaf(2));
	kv("fact", fact(10));
	kv("tail", tail(4));
	kv("work", work(20));
	if (__builtin_setjmp(jb) == 0) escape(3);
	kv("after longjmp", leaf(5));
	kv("counter", counter);
	long pid = sys2(NR_clone, SIGCHLD, 0);
	if (pid == 0) child_part();
	int status = 0;
	sys4(NR_wait4, pid, &status, 0, 0);
	kv("child status", status);
	long cpid = sys2(NR_clone, SIGCHLD, 0);
	if (cpid == 0) {
		char *av[] = { argv[0], "again", 0 };
		sys3(NR_execve, "/proc/self/exe", av, envp);
		sys1(NR_exit_group, 99);
	}
	sys4(NR_wait4, cpid, &status, 0, 0);
	kv("exec status", status);
	kv("fact again", fact(6));
	out("done\n");
	sys1(NR_exit_group, 0);
}
