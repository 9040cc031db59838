/*
 * main.c - start_kernel(): boot banner, a kprobes self-test pass on CPU 0,
 * then kernel worker threads that exercise the probe targets, and user
 * space (the programs the machine was given) started as kernel_init starts
 * init.
 */
#include "kernel.h"

#define NR_WORKERS 4
#define ITERS 24

#if defined(__x86_64__)
#define ARCH_NAME "x86_64"
#elif defined(__aarch64__)
#define ARCH_NAME "aarch64"
#else
#define ARCH_NAME "riscv64"
#endif

long forks_done(void);
long net_rx_packets(void);
long net_rx_dropped(void);

struct worker {
	int id;
	long cpu;
	long pid;
	char comm[16];
	unsigned long checksum;
	long opened, failed_opens, forks, bytes;
};

static struct worker workers[NR_WORKERS];

static const char *const paths[] = {
	"/etc/hostname", "/proc/version", "/nonexistent", "/etc/motd", "/root/secret", "/tmp/missing",
};

/* A mapped value for the guarded read, and an address nothing maps. */
static long guarded_value = 0x6b70726f6265;
#define UNMAPPED_ADDR ((const long *)0x10)

static unsigned long mix(unsigned long h, unsigned long v)
{
	h ^= v;
	h *= 0x100000001b3UL;
	return h ^ (h >> 29);
}

static noinline unsigned long read_file(struct worker *w, const char *path)
{
	char buf[8];
	unsigned long h = 0;
	loff_t pos = 0;
	ssize_t n;
	long fd = sys_open(path, O_RDONLY, 0);
	if (fd < 0) {
		w->failed_opens++;
		return (unsigned long)-fd;
	}
	w->opened++;
	while ((n = vfs_read(fget((int)fd), buf, sizeof(buf), &pos)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			h = h * 31 + (u8)buf[i];
		w->bytes += n;
	}
	sys_close((int)fd);
	return h;
}

static noinline int send_packet(int i, int id)
{
	u8 payload[12];
	struct sk_buff skb;
	for (int k = 0; k < (int)sizeof(payload); k++)
		payload[k] = (u8)(i * 13 + k * 7 + id);
	skb.len = 10 + (unsigned)(i & 1);
	skb.protocol = 6;
	skb.sport = (u16)(40000 + id);
	skb.dport = (i % 5 == 2) ? 443 : 80;
	skb.data = payload;
	skb.check = csum_fold_bytes(payload, skb.len);
	if (i % 4 == 3)
		skb.check ^= 0x100; /* corrupt */
	return tcp_v4_rcv(&skb);
}

static void worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned long h = 0xcbf29ce484222325UL;
	struct pt_regs *regs = NULL;
	int ptid = 0, ctid = 0;

	printk("%s: started on cpu %ld\n", w->comm, kp_cpu_id());
	for (int i = 0; i < ITERS; i++) {
		unsigned long flags = SIGCHLD;
		unsigned long stack_size = 0x2000;
		long pid, v = 0, err;

		if (i % 3 == 0)
			flags |= CLONE_VM | CLONE_FS | CLONE_FILES;
		if (i % 6 == 3)
			stack_size = 0;
		pid = do_fork(flags, 0x7ff0000UL + (unsigned long)i * 0x1000, regs, stack_size, &ptid,
			      &ctid);
		if (pid > 0)
			w->forks++;
		else
			h = mix(h, (unsigned long)-pid);

		h = mix(h, read_file(w, paths[(i + w->id) % ARRAY_SIZE(paths)]));
		h = mix(h, (unsigned long)send_packet(i, w->id));
		h = mix(h, target((u32)(i * 1000 + w->id)));
		h = mix(h, target2((u32)(i * 77 + 5)));
		stacktrace_driver();
		h = mix(h, fib((unsigned)(6 + (i + w->id) % 7)));
		h = mix(h, (unsigned long)syscall_dispatch((unsigned)((i + w->id) % 12), i, w->id + 3));
		read_boot_counter();
		h = mix(h, traced_function((unsigned long)i));
		h = mix(h, (unsigned long)notify_die((unsigned long)i, w->comm, w->id));
		err = probe_kernel_read_long(&v, i == ITERS / 2 ? UNMAPPED_ADDR : &guarded_value);
		h = mix(h, (unsigned long)(v + err));

		if (i % 8 == 7) {
			printk("%s: iter %2d checksum %016lx opens %ld/%ld forks %ld\n", w->comm, i + 1,
			       h, w->opened, w->failed_opens, w->forks);
			kp_yield();
		}
	}
	w->checksum = h;
	printk("%s: done, read %ld bytes, checksum %016lx\n", w->comm, w->bytes, h);
	if (w->id & 1) {
		do_exit(w->id);
		kp_thread_exit(w->id);
	}
}

/* CPU 0 runs the lib/test_kprobes.c-style targets once before any thread. */
static noinline void kprobes_selftest(void)
{
	const u32 rand1 = 0x2545f491; /* fixed: deterministic output */
	long v = 0;
	long err;
	printk("selftest: kprobe_target(%u) = %u\n", rand1, target(rand1));
	printk("selftest: kprobe_target2(%u) = %u\n", rand1, target2(rand1));
	printk("selftest: kprobe_recursed_target(%u) = %u\n", rand1, recursed_target(rand1));
	stacktrace_driver();
	printk("selftest: fib(20) = %lu\n", fib(20));
	err = probe_kernel_read_long(&v, &guarded_value);
	printk("selftest: guarded read ok: err=%ld value=%lx\n", err, v);
	err = probe_kernel_read_long(&v, UNMAPPED_ADDR);
	printk("selftest: guarded read of %p: err=%ld\n", (void *)UNMAPPED_ADDR, err);
	printk("selftest: sys_open(\"/nonexistent\") = %ld\n", sys_open("/nonexistent", O_RDONLY, 0));
}

/*
 * As Linux's kernel_init runs init once the kernel is up: the programs the
 * machine was given (kprobe-run run --exec, the launch attribute `exec`)
 * start as user processes next to the workers. None given: nothing starts.
 * One that cannot start is fatal, as a failed init is to Linux.
 */
static noinline long start_user_space(void)
{
	long n;

	if (prepare_user_service() > 0)
		start_user_service();
	n = kp_user_init(0);

	if (n < 0) {
		printk("Kernel panic - not syncing: Requested init failed (error %ld).\n", n);
		kp_power_off(1);
	}
	if (n > 0)
		printk("init: started %ld user program%s\n", n, n == 1 ? "" : "s");
	return n;
}

void start_kernel(void)
{
	long nr_cpus = kp_nr_cpus();
	unsigned long total = 0;
	long nr_user, status = 0;

	printk("Linux version 2.6.99-kp (kprobe-debug sample kernel) " ARCH_NAME "\n");
	printk("smp: %ld CPU%s online\n", nr_cpus, nr_cpus == 1 ? "" : "s");
	init_test_kprobes();
	kprobes_selftest();

	for (int i = 0; i < NR_WORKERS; i++) {
		struct worker *w = &workers[i];
		w->id = i;
		w->cpu = nr_cpus > 0 ? i % nr_cpus : 0;
		snprintf(w->comm, sizeof(w->comm), "kworker/%ld:%d", w->cpu, i / (int)(nr_cpus > 0 ? nr_cpus : 1) + 1);
		w->pid = kp_thread_create(worker_fn, w, w->cpu, w->comm);
		if (w->pid < 0) {
			printk("thread_create %s failed: %ld\n", w->comm, w->pid);
			kp_power_off(1);
		}
	}
	nr_user = start_user_space();
	for (int i = 0; i < NR_WORKERS; i++) {
		long code = kp_thread_join(workers[i].pid);
		printk("joined %s: exit code %ld\n", workers[i].comm, code);
		total = mix(total, workers[i].checksum);
	}
	if (nr_user > 0) {
		/* wait for user space; the machine exits with the first program's status */
		status = kp_user_init(1);
		printk("init: user space ended, exit status %ld\n", status);
	}
	/* after the workers and user space: their interleaving is what it was without it */
	lib_selftest();
	printk("summary: forks %ld, rx %ld dropped %ld, checksum %016lx\n", forks_done(),
	       net_rx_packets(), net_rx_dropped(), total);
	printk("Power down.\n");
	if (status != 0)
		kp_power_off(status);
}
