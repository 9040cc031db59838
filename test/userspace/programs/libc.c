/*
 * libc.c - an ordinary C program against the distribution's C library
 * (glibc or musl, linked statically at default flags), run by the emulator
 * and by qemu-user (same output): stdio with floating-point formatting,
 * strtod, qsort, malloc, files and directories through stdio / dirent,
 * fork + pipe + waitpid, exec of itself, signals through signal() and
 * sigaction(), setjmp/longjmp, mmap of a file. Prints nothing that
 * differs between hosts (no pids, inodes or times).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <setjmp.h>
#include <errno.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/mman.h>

static volatile sig_atomic_t got;
static void on_usr1(int s) { got = s; }
static jmp_buf jb;
static void on_segv(int s) { (void)s; longjmp(jb, 7); }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static int cmps(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		printf("child: argc=%d arg2=%s env=%s\n", argc, argc > 2 ? argv[2] : "-", getenv("KP") ? getenv("KP") : "(unset)");
		return 9;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* floating point formatting and parsing */
	double v[] = { 3.14159265358979, -2.5e-8, 1e300, 0.1 + 0.2, 1.0 / 3, -0.0, 123456789.125 };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) printf("%.17g %e %f %g %a\n", v[i], v[i], v[i], v[i], v[i]);
	printf("%.3f %.0f %.0f %.0f\n", 2.0005, 0.5, 1.5, 2.5);
	printf("strtod %.17g %.17g %.17g\n", strtod("0.1", NULL), strtod("1e-310", NULL), strtod("-inf", NULL));
	printf("math %.15g %.15g %.15g %.15g\n", sqrt(2.0), floor(-2.5), fmod(10.5, 3.0), ldexp(1.0, -1074));
	printf("float %.9g %.9g\n", (float)(1.0f / 3.0f), (float)16777217.0);
	/* long double: the x87 unit on x86_64, 128-bit soft float on aarch64 */
	volatile long double third = 1.0L / 3, big = 1e4000L;
	long double sum = 0;
	for (int i = 1; i <= 50; i++) sum += 1.0L / ((long double)i * i);
	printf("long double %.21Lg %.21Lg %Le %.30Lf\n", third, sum, big, (long double)0.1);
	printf("strtold %.21Lg %d\n", strtold("3.14159265358979323846264338", NULL), (int)(third * 3 == 1.0L));
	/* qsort, strings, malloc */
	double d[] = { 5.5, -1, 3.25, 1e-3, -7.75, 2 };
	qsort(d, 6, sizeof d[0], cmpd);
	for (int i = 0; i < 6; i++) printf("%g%c", d[i], i == 5 ? '\n' : ' ');
	char *words[] = { "pear", "apple", "fig", "banana", "cherry" };
	qsort(words, 5, sizeof words[0], cmps);
	for (int i = 0; i < 5; i++) printf("%s%c", words[i], i == 4 ? '\n' : ' ');
	size_t total = 0;
	for (int i = 1; i <= 200; i++) { char *p = malloc(i * 37); memset(p, i, i * 37); total += p[i * 37 - 1] & 0xff; free(p); }
	printf("malloc sum %zu\n", total);
	char buf[256];
	snprintf(buf, sizeof buf, "%08.3f|%-6s|%+d|%x|%lld", 3.14159, "ab", 42, 255u, -9000000000LL);
	printf("snprintf %s (%zu)\n", buf, strlen(buf));
	/* files and directories */
	mkdir("t", 0755);
	FILE *f = fopen("t/data.txt", "w");
	for (int i = 0; i < 5; i++) fprintf(f, "line %d %.2f\n", i, i * 1.5);
	fclose(f);
	f = fopen("t/data.txt", "r");
	int lines = 0;
	while (fgets(buf, sizeof buf, f)) lines++;
	printf("lines %d eof %d\n", lines, feof(f));
	fclose(f);
	struct stat st;
	stat("t/data.txt", &st);
	printf("size %lld mode %o\n", (long long)st.st_size, st.st_mode & 07777);
	symlink("data.txt", "t/link");
	rename("t/data.txt", "t/moved.txt");
	printf("open missing: %s\n", fopen("t/data.txt", "r") ? "yes" : strerror(errno));
	DIR *dir = opendir("t");
	char *names[8];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) && n < 8) if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
	closedir(dir);
	qsort(names, n, sizeof names[0], cmps);
	for (int i = 0; i < n; i++) printf("entry %s\n", names[i]);
	int fd = open("t/moved.txt", O_RDWR);
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	m[0] = 'L';
	msync(m, 4096, MS_SYNC);
	munmap(m, 4096);
	close(fd);
	f = fopen("t/moved.txt", "r");
	printf("after mmap: %s", fgets(buf, sizeof buf, f));
	fclose(f);
	/* processes: a pipe from a child, waitpid, exec of itself */
	int p[2];
	pipe(p);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dprintf(p[1], "hello from the child %d\n", 42);
		_exit(3);
	}
	close(p[1]);
	ssize_t r = read(p[0], buf, sizeof buf - 1);
	buf[r > 0 ? r : 0] = 0;
	int status;
	waitpid(pid, &status, 0);
	printf("pipe: %s", buf);
	printf("child exited %d status %d\n", WIFEXITED(status), WEXITSTATUS(status));
	pid = fork();
	if (pid == 0) {
		char *args[] = { argv[0], "child", "two words", NULL };
		char *env[] = { "KP=yes", NULL };
		execve("/proc/self/exe", args, env);
		_exit(99);
	}
	waitpid(pid, &status, 0);
	printf("exec child status %d\n", WEXITSTATUS(status));
	/* signals */
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	printf("signal handler got %d\n", (int)got);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	int j = setjmp(jb);
	if (j == 0) { volatile int *bad = (int *)16; *bad = 1; }
	printf("recovered from SIGSEGV via longjmp: %d\n", j);
	pid = fork();
	if (pid == 0) { pause(); _exit(0); }
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	printf("killed: %d by %d\n", WIFSIGNALED(status), WTERMSIG(status));
	return 0;
}
