/*
 * rootfs.c - a program reading what a fuzzed rootfs and initramfs left:
 * /a from an archive that also held "a/b" (skipped: a is a file), a host
 * file of 3 GiB (/big: read in pieces, its last bytes at 3 GiB - 16), a
 * host file whose name is not UTF-8 (/caf\xe9.txt), and a file grown past
 * what the machine can hold (-EFBIG).
 */
#include "sys.h"

#define PROT_READ 1
#define MAP_PRIVATE 2
#define MAP_SHARED 1
#if defined(__x86_64__)
#define NR_pwrite64 18
#else
#define NR_pwrite64 68
#endif

static char buf[64];

static void show(const char *what, const char *path)
{
	long fd = sys4(NR_openat, AT_FDCWD, path, O_RDONLY, 0);
	long n = fd < 0 ? fd : sys3(NR_read, fd, buf, sizeof(buf) - 1);
	out(what);
	if (n < 0) { kv(" error", n); return; }
	buf[n] = 0;
	out(" ["); out(buf); out("]\n");
	sys1(NR_close, fd);
}

void cstart(long *sp)
{
	(void)sp;
	show("/a", "/a");
	kv("open /a/b", sys4(NR_openat, AT_FDCWD, "/a/b", O_RDONLY, 0));
	show("/caf\\xe9.txt", "/caf\xe9.txt");

	long fd = sys4(NR_openat, AT_FDCWD, "/big", O_RDONLY, 0);
	kv("open /big ok", fd >= 0);
	unsigned char st[STAT_SIZE];
	sys2(NR_fstat, fd, st);
	kv("/big size", *(long *)(st + STAT_SIZE_OFF));
	long big = 3L << 30;
	long n = sys4(NR_pread64, fd, buf, 16, big - 16);
	buf[n > 0 ? n : 0] = 0;
	out("pread at 3 GiB - 16: "); outn(n); out(" ["); out(buf); out("]\n");
	n = sys3(NR_read, fd, buf, 16);
	int zero = 1;
	for (int i = 0; i < 16; i++) zero &= buf[i] == 0;
	kv("read at 0", n);
	kv("zero", zero);
	kv("lseek to 2 GiB", sys3(NR_lseek, fd, 2L << 30, 0) == (2L << 30));
	kv("read at 2 GiB", sys3(NR_read, fd, buf, 16));
	long m = sys6(NR_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, fd, big - 4096);
	kv("mmap private last page ok", m > 0);
	if (m > 0) {
		for (int i = 0; i < 16; i++) buf[i] = ((char *)m)[4096 - 16 + i];
		buf[16] = 0;
		out("its last bytes ["); out(buf); out("]\n");
	}
	kv("mmap shared", sys6(NR_mmap, 0, 4096, PROT_READ, MAP_SHARED, fd, 0));
	sys1(NR_close, fd);

	fd = sys4(NR_openat, AT_FDCWD, "/tmp/grow", O_RDWR | O_CREAT, 0644);
	kv("pwrite at 4 GiB", sys4(NR_pwrite64, fd, "x", 1, 4L << 30));
	kv("ftruncate 2 GiB", sys2(NR_ftruncate, fd, 2L << 30));
	kv("ftruncate 1 MiB", sys2(NR_ftruncate, fd, 1L << 20));
	out("done\n");
	sys1(NR_exit_group, 0);
}
