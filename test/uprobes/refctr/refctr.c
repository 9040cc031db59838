/*
 * refctr.c - a program with an SDT-style semaphore (a USDT marker's
 * reference counter): it reads its own counter, as code behind a
 * <sys/sdt.h> probe does, prints it, and calls the probed functions only
 * while someone traces them. After each printed read it spins, so that a
 * test running the machine in slices can register and unregister probes
 * before the next read. Then it execs itself once ("again"), and the new
 * image prints its counter too. Run as "refctr map" it maps its own file
 * privately and writably and prints the 2-byte field at file offset 18
 * (e_machine) as that mapping shows it: a counter there is found only in
 * such a mapping, made after the probe's breakpoint went in.
 */
#include "sys.h"

/* the semaphore: a short of the data segment, in the section <sys/sdt.h> gives it */
volatile unsigned short probe_sem __attribute__((section(".probes")));
volatile long hits;

__attribute__((noinline)) void probed(long x) { hits += x; }
__attribute__((noinline)) void probed2(long x) { hits += 100 * x; }

static void spin(void)
{
	for (volatile long i = 0; i < 30000; i++)
		;
}

void cstart(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	if (argc >= 2 && argv[1][0] == 'm') {
		/* "map": the ELF header's e_machine as a private writable mapping of the file shows it */
		long fd = sys4(NR_openat, -100, "/proc/self/exe", 0, 0);
		char *p = (char *)sys6(NR_mmap, 0, 4096, 3 /* PROT_READ|PROT_WRITE */, 2 /* MAP_PRIVATE */, fd, 0);
		kv("mapped e_machine", *(volatile unsigned short *)(p + 18));
		probed(1);
		sys1(NR_exit_group, 0);
	}
	if (argc >= 2) {
		kv("exec sem", probe_sem);
		if (probe_sem)
			probed(1);
		sys1(NR_exit_group, 0);
	}
	for (long i = 0; i < 6; i++) {
		kv("sem", probe_sem);
		spin();
		if (probe_sem) {
			probed(i);
			probed2(i);
		}
	}
	kv("hits", hits);
	char *av[] = { argv[0], "again", 0 };
	sys3(NR_execve, "/proc/self/exe", av, envp);
	sys1(NR_exit_group, 99);
}
