/*
 * limits.c - memory and signal-mask requests at the edges, as a fuzzer made
 * them: a large untouched anonymous mapping and a large heap shared by
 * fork (copy-on-write: each side keeps its own writes, the untouched pages
 * cost nothing), mappings and a heap beyond the machine's RAM (-ENOMEM,
 * brk unchanged), and the rt_sig* calls with a wrong sigsetsize (-EINVAL,
 * not a sleep).
 */
#include "sys.h"

#if defined(__x86_64__)
#define NR_brk 12
#define NR_mprotect 10
#else
#define NR_brk 214
#define NR_mprotect 226
#endif
#define PROT_RW 3
#define MAP_PRIVATE_ANON 0x22
#define MAP_SHARED_ANON 0x21
#define GIB (1L << 30)

static long forkp(void) { return sys5(NR_clone, SIGCHLD, 0, 0, 0, 0); }

static long mmap_anon(long len, long flags) { return sys6(NR_mmap, 0, len, PROT_RW, flags, -1, 0); }

/* the child's and the parent's writes after fork stay their own */
static void fork_big(volatile char *p, long len, const char *what)
{
	p[4096] = 'P';
	p[len - 1] = 'p';
	long pid = forkp();
	if (pid == 0) {
		int ok = p[4096] == 'P' && p[len - 1] == 'p' && p[len / 2] == 0;
		p[4096] = 'C';
		p[len / 2] = 'c';
		sys1(NR_exit_group, ok ? 7 : 8);
	}
	int st = 0;
	sys4(NR_wait4, pid, &st, 0, 0);
	out(what); kv(": child saw the parent's pages, exit", (st >> 8) & 0xff);
	out(what); kv(": parent kept its own pages", p[4096] == 'P' && p[len / 2] == 0 && p[len - 1] == 'p');
}

void cstart(long *sp)
{
	(void)sp;
	/* 1 GiB, the machine's RAM: granted, touched in two pages only */
	long m = mmap_anon(GIB, MAP_PRIVATE_ANON);
	kv("mmap 1 GiB ok", m > 0);
	if (m > 0) fork_big((volatile char *)m, GIB, "mmap 1 GiB");
	sys2(NR_munmap, m, GIB);
	/* a heap of 512 MiB: the same */
	long b0 = sys1(NR_brk, 0);
	long b1 = sys1(NR_brk, b0 + GIB / 2);
	kv("brk +512 MiB", b1 == b0 + GIB / 2);
	if (b1 == b0 + GIB / 2) fork_big((volatile char *)b0, GIB / 2, "brk 512 MiB");
	sys1(NR_brk, b0);
	/* more than the machine has: refused */
	kv("mmap 5000 MiB", mmap_anon(5000L << 20, MAP_PRIVATE_ANON));
	kv("mmap 2 GiB", mmap_anon(2 * GIB, MAP_PRIVATE_ANON));
	kv("mmap shared 2 GiB", mmap_anon(2 * GIB, MAP_SHARED_ANON));
	kv("mmap 16 GiB", mmap_anon(16 * GIB, MAP_PRIVATE_ANON));
	/* reserved without access (not committed), then made writable: committed then, refused */
	long r = sys6(NR_mmap, 0, 2 * GIB, 0, MAP_PRIVATE_ANON, -1, 0);
	kv("mmap PROT_NONE 2 GiB ok", r > 0);
	kv("mprotect it writable", sys3(NR_mprotect, r, 2 * GIB, PROT_RW));
	kv("mprotect 1 MiB of it writable", sys3(NR_mprotect, r, 1L << 20, PROT_RW));
	((volatile char *)r)[4096] = 1;
	sys2(NR_munmap, r, 2 * GIB);
	kv("brk +4 GiB unchanged", sys1(NR_brk, b0 + 4 * GIB) == b0);
	kv("brk +5000 MiB unchanged", sys1(NR_brk, b0 + (5000L << 20)) == b0);
	/* a wrong sigsetsize */
	u64 set = 0;
	kv("rt_sigsuspend size 4", sys2(NR_pause_or_suspend, &set, 4));
	kv("rt_sigsuspend size 16", sys2(NR_pause_or_suspend, &set, 16));
	kv("rt_sigprocmask size 4", sys4(NR_rt_sigprocmask, 0, &set, 0, 4));
	kv("rt_sigaction size 0", sys4(NR_rt_sigaction, SIGUSR1, 0, 0, 0));
	out("done\n");
	sys1(NR_exit_group, 0);
}
