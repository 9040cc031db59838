/*
 * procs.c - the emulated kernel's processes, files, pipes and signals
 * against qemu-user's (as real programs use them): everything it prints is the
 * same on a Linux host, so the output (and exit code) of the emulator must be
 * qemu's byte for byte. Works in a scratch directory "t" under its working
 * directory; prints no pid, inode or time (they differ between hosts).
 */
#include "sys.h"

static char buf[8192];
static volatile int got_usr1;

static void on_usr1(int sig) { got_usr1 = sig; }

struct ksigaction { void (*handler)(int); unsigned long flags; void (*restorer)(void); unsigned long mask; };

static int status_exit(int st) { return (st >> 8) & 0xff; }
static int status_sig(int st) { return st & 0x7f; }

static long forkp(void) { return sys5(NR_clone, SIGCHLD, 0, 0, 0, 0); }

static void files(void)
{
	kv("umask", sys1(NR_umask, 022));
	kv("mkdir", sys3(NR_mkdirat, AT_FDCWD, "t", 0755));
	kv("mkdir again", sys3(NR_mkdirat, AT_FDCWD, "t", 0755));
	long fd = sys4(NR_openat, AT_FDCWD, "t/a", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	kv("open t/a", fd >= 0);
	kv("write", sys3(NR_write, fd, "hello, file\n", 12));
	kv("append more", sys3(NR_write, fd, "second line\n", 12));
	kv("close", sys1(NR_close, fd));
	kv("close again", sys1(NR_close, fd));
	char st[STAT_SIZE];
	kv("stat", sys4(NR_newfstatat, AT_FDCWD, "t/a", st, 0));
	out("mode 0"); outo(*(u32 *)(st + STAT_MODE_OFF)); out("\n");
	kv("size", *(long *)(st + STAT_SIZE_OFF));
	fd = sys4(NR_openat, AT_FDCWD, "t/a", O_RDONLY, 0);
	long n = sys3(NR_read, fd, buf, 5);
	kv("read", n);
	sys3(NR_write, 1, buf, n); out("|\n");
	kv("lseek cur", sys3(NR_lseek, fd, 0, 1));
	kv("lseek end", sys3(NR_lseek, fd, 0, 2));
	kv("read at end", sys3(NR_read, fd, buf, 10));
	n = sys4(NR_pread64, fd, buf, 6, 13);
	kv("pread", n);
	sys3(NR_write, 1, buf, n); out("|\n");
	kv("write to O_RDONLY", sys3(NR_write, fd, "x", 1));
	sys1(NR_close, fd);
	kv("open missing", sys4(NR_openat, AT_FDCWD, "t/nope", O_RDONLY, 0));
	kv("open dir as file for write", sys4(NR_openat, AT_FDCWD, "t", O_WRONLY, 0));
	kv("rename", sys4(NR_renameat, AT_FDCWD, "t/a", AT_FDCWD, "t/b"));
	kv("access old", sys4(NR_faccessat, AT_FDCWD, "t/a", 0, 0));
	kv("access new", sys4(NR_faccessat, AT_FDCWD, "t/b", 0, 0));
	kv("access exec", sys4(NR_faccessat, AT_FDCWD, "t/b", 1, 0));
	kv("symlink", sys3(NR_symlinkat, "b", AT_FDCWD, "t/l"));
	n = sys4(NR_readlinkat, AT_FDCWD, "t/l", buf, sizeof buf);
	kv("readlink", n);
	sys3(NR_write, 1, buf, n); out("|\n");
	kv("lstat", sys4(NR_newfstatat, AT_FDCWD, "t/l", st, 0x100));
	out("link mode 0"); outo(*(u32 *)(st + STAT_MODE_OFF)); out("\n");
	kv("stat via link size", (sys4(NR_newfstatat, AT_FDCWD, "t/l", st, 0), *(long *)(st + STAT_SIZE_OFF)));
	kv("mkdir sub", sys3(NR_mkdirat, AT_FDCWD, "t/sub", 0700));
	kv("rmdir non-empty", sys3(NR_unlinkat, AT_FDCWD, "t", 0x200));
	/* directory listing, sorted */
	fd = sys4(NR_openat, AT_FDCWD, "t", O_RDONLY | O_DIRECTORY, 0);
	n = sys3(NR_getdents64, fd, buf, sizeof buf);
	const char *names[16];
	int k = 0;
	for (long off = 0; off < n && k < 16;) {
		unsigned short reclen = *(unsigned short *)(buf + off + 16);
		names[k++] = buf + off + 19;
		off += reclen;
	}
	for (int i = 0; i < k; i++)
		for (int j = i + 1; j < k; j++) {
			const char *a = names[i], *b = names[j];
			int c = 0;
			while (a[c] && a[c] == b[c]) c++;
			if ((unsigned char)a[c] > (unsigned char)b[c]) { names[i] = b; names[j] = a; }
		}
	out("dir:");
	for (int i = 0; i < k; i++) { out(" "); out(names[i]); }
	out("\n");
	sys1(NR_close, fd);
	kv("unlink link", sys3(NR_unlinkat, AT_FDCWD, "t/l", 0));
	kv("rmdir sub", sys3(NR_unlinkat, AT_FDCWD, "t/sub", 0x200));
	kv("chdir", sys1(NR_chdir, "t"));
	n = sys2(NR_getcwd, buf, sizeof buf);
	const char *base = buf;
	for (const char *p = buf; *p; p++) if (*p == '/') base = p + 1;
	out("cwd ends with "); out(base); out("\n");
	kv("chdir back", sys1(NR_chdir, ".."));
	/* dup3 and close-on-exec */
	fd = sys4(NR_openat, AT_FDCWD, "t/b", O_RDONLY, 0);
	kv("dup3", sys3(NR_dup3, fd, 9, O_CLOEXEC));
	kv("F_GETFD 9", sys3(NR_fcntl, 9, 1, 0));
	kv("F_GETFD fd", sys3(NR_fcntl, fd, 1, 0));
	n = sys3(NR_read, 9, buf, 5);
	kv("read via dup", n);
	kv("shared offset", sys3(NR_lseek, fd, 0, 1));
	sys1(NR_close, 9);
	sys1(NR_close, fd);
	/* devices */
	fd = sys4(NR_openat, AT_FDCWD, "/dev/null", O_WRONLY, 0);
	kv("write /dev/null", sys3(NR_write, fd, "gone", 4));
	kv("read /dev/null", sys3(NR_read, sys4(NR_openat, AT_FDCWD, "/dev/null", O_RDONLY, 0), buf, 4));
	fd = sys4(NR_openat, AT_FDCWD, "/dev/zero", O_RDONLY, 0);
	buf[0] = 1;
	kv("read /dev/zero", sys3(NR_read, fd, buf, 16));
	kv("zero byte", buf[0]);
}

static void shared_mmap(void)
{
	long fd = sys4(NR_openat, AT_FDCWD, "t/m", O_CREAT | O_RDWR | O_TRUNC, 0600);
	kv("ftruncate", sys2(NR_ftruncate, fd, 8192));
	char *p = (char *)sys6(NR_mmap, 0, 8192, 3, 1 /* MAP_SHARED */, fd, 0);
	kv("mmap shared ok", (long)p > 0 || (long)p < -4096);
	p[4096] = 'Q';
	p[4097] = 'Z';
	kv("pread sees the store", (sys4(NR_pread64, fd, buf, 2, 4096), buf[0] == 'Q' && buf[1] == 'Z'));
	char *q = (char *)sys6(NR_mmap, 0, 4096, 3, 2 /* MAP_PRIVATE */, fd, 4096);
	kv("private map sees the file", q[0] == 'Q');
	q[0] = 'P';
	kv("private store stays private", (sys4(NR_pread64, fd, buf, 1, 4096), buf[0] == 'Q'));
	long pid = forkp();
	if (pid == 0) {
		p[0] = 'C';   /* shared: the parent sees it */
		q[1] = 'c';   /* private: it does not */
		sys1(NR_exit_group, 0);
	}
	int st = 0;
	sys4(NR_wait4, pid, &st, 0, 0);
	kv("child's shared store seen", p[0] == 'C');
	kv("child's private store not seen", q[1] == 'Z');
	sys2(NR_munmap, p, 8192);
	sys2(NR_munmap, q, 4096);
	sys1(NR_close, fd);
}

static void pipes_and_children(void)
{
	int fds[2];
	kv("pipe", sys2(NR_pipe2, fds, 0));
	long me = sys0(NR_getpid);
	long pid = forkp();
	if (pid == 0) {
		sys1(NR_close, fds[0]);
		kv("child sees parent", sys0(NR_getppid) == me);
		for (int i = 0; i < 3; i++) sys3(NR_write, fds[1], "from child\n", 11);
		sys1(NR_exit_group, 7);
	}
	sys1(NR_close, fds[1]);
	long total = 0, n;
	while ((n = sys3(NR_read, fds[0], buf + total, 100)) > 0) total += n;
	kv("pipe bytes", total);
	sys3(NR_write, 1, buf, total);
	int st = 0;
	kv("wait4 is the child", sys4(NR_wait4, -1, &st, 0, 0) == pid);
	kv("child exit", status_exit(st));
	kv("wait4 no child", sys4(NR_wait4, -1, &st, 0, 0));
	/* a child killed by SIGTERM while it sleeps on a pipe */
	sys2(NR_pipe2, fds, 0);
	pid = forkp();
	if (pid == 0) {
		sys3(NR_read, fds[0], buf, 1);
		sys1(NR_exit_group, 1);
	}
	kv("kill", sys2(NR_kill, pid, SIGTERM));
	sys4(NR_wait4, pid, &st, 0, 0);
	kv("killed by", status_sig(st));
	sys1(NR_close, fds[0]);
	/* writing to a pipe nobody reads: EPIPE with SIGPIPE ignored */
	struct ksigaction ign = { (void (*)(int))1, 0, 0, 0 };
	sys4(NR_rt_sigaction, SIGPIPE, &ign, 0, 8);
	kv("write to closed pipe", sys3(NR_write, fds[1], "x", 1));
	sys1(NR_close, fds[1]);
	/* and with the default action: the child dies of SIGPIPE */
	sys2(NR_pipe2, fds, 0);
	pid = forkp();
	if (pid == 0) {
		struct ksigaction dfl = { 0, 0, 0, 0 };
		sys4(NR_rt_sigaction, SIGPIPE, &dfl, 0, 8);
		sys1(NR_close, fds[0]);
		sys3(NR_write, fds[1], "x", 1);
		sys1(NR_exit_group, 2);
	}
	sys1(NR_close, fds[0]);
	sys1(NR_close, fds[1]);
	sys4(NR_wait4, pid, &st, 0, 0);
	kv("SIGPIPE default kills", status_sig(st));
}

static void signals(void)
{
	struct ksigaction sa = { on_usr1, SA_RESTORER, restorer, 0 }, old;
	kv("sigaction", sys4(NR_rt_sigaction, SIGUSR1, &sa, 0, 8));
	kv("sigaction read back", (sys4(NR_rt_sigaction, SIGUSR1, 0, &old, 8), old.handler == on_usr1));
	kv("raise", sys2(NR_kill, sys0(NR_getpid), SIGUSR1));
	kv("handler ran", got_usr1);
	/* blocked: pending until unblocked */
	got_usr1 = 0;
	unsigned long set = 1UL << (SIGUSR1 - 1), oldset = 0;
	sys4(NR_rt_sigprocmask, 0 /* SIG_BLOCK */, &set, 0, 8);
	sys2(NR_kill, sys0(NR_getpid), SIGUSR1);
	kv("blocked: not yet", got_usr1);
	sys4(NR_rt_sigprocmask, 1 /* SIG_UNBLOCK */, &set, &oldset, 8);
	kv("unblocked: ran", got_usr1);
	kv("old mask had it", oldset == set);
	/* a signal while the parent reads a pipe, with SA_RESTART: the read goes on and sees the end */
	struct ksigaction rs = { on_usr1, SA_RESTORER | 0x10000000 /* SA_RESTART */, restorer, 0 };
	sys4(NR_rt_sigaction, SIGUSR1, &rs, 0, 8);
	got_usr1 = 0;
	int fds[2];
	sys2(NR_pipe2, fds, 0);
	long pid = forkp();
	if (pid == 0) {
		sys1(NR_close, fds[0]);
		sys2(NR_kill, sys0(NR_getppid), SIGUSR1);
		sys1(NR_exit_group, 0);
	}
	sys1(NR_close, fds[1]);
	kv("read across a handler", sys3(NR_read, fds[0], buf, 1));
	kv("handler ran during the read", got_usr1);
	sys1(NR_close, fds[0]);
	int st = 0;
	sys4(NR_wait4, pid, &st, 0, 0);
}

static void exec_self(const char *self)
{
	long pid = forkp();
	if (pid == 0) {
		const char *argv[] = { "procs-child", "exec-child", "two words", NULL };
		const char *envp[] = { "K=v", NULL };
		sys3(NR_execve, "/proc/self/exe", argv, envp);
		sys1(NR_exit_group, 99);
	}
	int st = 0;
	sys4(NR_wait4, pid, &st, 0, 0);
	kv("exec child exit", status_exit(st));
	kv("execve missing", sys3(NR_execve, "t/none", 0, 0));
	const char *bargv[] = { "b", NULL }, *benv[] = { NULL };
	kv("execve a text file", sys3(NR_execve, "t/b", bargv, benv));
	(void)self;
}

/* 300 frames of 4 KiB: the stack grows far past its first mapping */
__attribute__((noinline)) static long deep(int n)
{
	volatile signed char page[4096];
	page[0] = (signed char)n; page[4095] = (signed char)(n * 3);
	if (n == 0) return page[0] + page[4095];
	return deep(n - 1) + page[0] + page[4095];
}

void cstart(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	if (argc >= 2 && seq(argv[1], "exec-child")) {
		out("exec child: argc "); outn(argc);
		for (long i = 0; i < argc; i++) { out(" ["); out(argv[i]); out("]"); }
		out(" env "); out(envp[0] ? envp[0] : "(none)"); out("\n");
		sys1(NR_exit_group, 3);
	}
	kv("deep stack", deep(300));
	files();
	shared_mmap();
	pipes_and_children();
	signals();
	exec_self(argv[0]);
	out("done\n");
	sys1(NR_exit_group, 5);
}
