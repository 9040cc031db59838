// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe-debug's agent in a Linux guest: registers, unregisters, enables and
 * disables kprobes and kretprobes through the guest kernel's own
 * register_kprobe() / register_kretprobe() when the debugger asks, and
 * tells the debugger of every hit with the guest's struct pt_regs address.
 *
 * The channel is two 32-bit I/O ports at `port` (default 0x7e0; the
 * debugger's emulator/system/devices/agentChannel.ts decodes them):
 *   port+0  read:  the debugger's next request word, 0 when none
 *                  (all ones: no device: the agent stops polling)
 *           write: an event word (reply or hit); it sends the data words
 *                  written before it
 *   port+4  read:  the next data word of the current request
 *           write: a data word of the event that follows
 * A word is (op << 24) | id, id < 2^24 naming a probe slot (< MAX_PROBES).
 * Requests (op, then data words):
 *   1 REGISTER      offset, name length n, ceil(n/4) words of the name (little-endian bytes)
 *   2 REGISTER_RET  maxactive, offset, n, the name's words
 *   3 UNREGISTER    -    4 ENABLE    -    5 DISABLE    -
 *   6 KNOB          which (0: /sys/kernel/debug/kprobes/enabled, 1: the sysctl
 *                   debug.kprobes-optimization), value (0 or 1): the agent
 *                   writes "value" into that file (id: any, echoed back)
 *   7 PROBE_OP      op (3 unregister, 4 enable, 5 disable), struct kprobe address
 *                   low, high, struct kretprobe address low, high (0: a kprobe):
 *                   any probe registered in the guest (the debugger read the
 *                   address out of kprobe_table; id: any, echoed back)
 * Events (data words, then the word):
 *   0x81 REPLY      result (0 or -errno), struct kprobe address low, high
 *   0x82 HIT        pt_regs address low, high, struct kprobe address low, high
 *                   (a kprobe's hit, or a kretprobe's entry)
 *   0x83 RETURN     pt_regs address low, high, struct kprobe address low, high
 * After sending a hit, a handler calls agent_stop_point(id, regs), an empty
 * function the debugger may put a breakpoint on (one the guest cannot see)
 * to stop the machine inside the handler, with the probed context in regs.
 * Requests are taken by a kernel thread that polls port+0 every `poll_ms`
 * milliseconds (process context: register_kprobe may sleep; a probe changes
 * only there, the quiescent point Linux needs). Hits are sent from the
 * kprobe handlers with interrupts off and a lock held, so the data words
 * and the event word of one hit arrive together.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/io.h>
#include <linux/fs.h>
#include <linux/umh.h>

#define MAX_PROBES 64
#define NAME_MAX_LEN 128

enum { REQ_REGISTER = 1, REQ_REGISTER_RET = 2, REQ_UNREGISTER = 3, REQ_ENABLE = 4, REQ_DISABLE = 5, REQ_KNOB = 6, REQ_PROBE_OP = 7 };
enum { EV_REPLY = 0x81, EV_HIT = 0x82, EV_RETURN = 0x83 };

static unsigned int port = 0x7e0;
module_param(port, uint, 0444);
MODULE_PARM_DESC(port, "the debugger channel's first I/O port");
static unsigned int poll_ms = 10;
module_param(poll_ms, uint, 0444);
MODULE_PARM_DESC(poll_ms, "milliseconds between two polls of the channel");

struct agent_probe {
	struct kretprobe rp;	/* rp.kp is the probe of a plain kprobe */
	bool used;
	bool ret;
	char name[NAME_MAX_LEN];
};

static struct agent_probe probes[MAX_PROBES];
static struct task_struct *poller;
static DEFINE_RAW_SPINLOCK(channel_lock);

static void send_event(u32 op, u32 id, const void *regs, const void *kp)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&channel_lock, flags);
	outl((u32)(unsigned long)regs, port + 4);
	outl((u32)((unsigned long)regs >> 32), port + 4);
	outl((u32)(unsigned long)kp, port + 4);
	outl((u32)((unsigned long)kp >> 32), port + 4);
	outl(op << 24 | id, port);
	raw_spin_unlock_irqrestore(&channel_lock, flags);
}
NOKPROBE_SYMBOL(send_event);

/* where the debugger stops a hit it was asked to stop at (its breakpoint writes nothing here) */
noinline notrace void agent_stop_point(u32 id, struct pt_regs *regs)
{
	asm volatile("" : : "r" (id), "r" (regs) : "memory");
}
NOKPROBE_SYMBOL(agent_stop_point);

static int agent_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct agent_probe *a = container_of(p, struct agent_probe, rp.kp);

	send_event(EV_HIT, a - probes, regs, p);
	agent_stop_point(a - probes, regs);
	return 0;
}
NOKPROBE_SYMBOL(agent_pre);

/* a kretprobe's entry: a HIT event with the kretprobe's slot (the debugger times the call) */
static int agent_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct agent_probe *a = container_of(rp, struct agent_probe, rp);

	send_event(EV_HIT, a - probes, regs, &rp->kp);
	return 0;
}
NOKPROBE_SYMBOL(agent_entry);

static int agent_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct agent_probe *a = container_of(rp, struct agent_probe, rp);

	send_event(EV_RETURN, a - probes, regs, &rp->kp);
	agent_stop_point(a - probes, regs);
	return 0;
}
NOKPROBE_SYMBOL(agent_ret);

static void reply(u32 id, int result, const void *kp)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&channel_lock, flags);
	outl((u32)result, port + 4);
	outl((u32)(unsigned long)kp, port + 4);
	outl((u32)((unsigned long)kp >> 32), port + 4);
	outl(EV_REPLY << 24 | id, port);
	raw_spin_unlock_irqrestore(&channel_lock, flags);
}

static int agent_register(struct agent_probe *a, bool ret)
{
	u32 maxactive = ret ? inl(port + 4) : 0;
	u32 offset = inl(port + 4);
	u32 n = inl(port + 4), i;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < n; i += 4) {
		u32 w = inl(port + 4);

		if (i + 4 < NAME_MAX_LEN)
			memcpy(a->name + i, &w, 4);
	}
	a->name[min_t(u32, n, NAME_MAX_LEN - 1)] = '\0';
	a->rp.kp.symbol_name = a->name;
	a->rp.kp.offset = offset;
	a->ret = ret;
	if (ret) {
		a->rp.handler = agent_ret;
		a->rp.entry_handler = agent_entry;
		a->rp.maxactive = maxactive;
		return register_kretprobe(&a->rp);
	}
	a->rp.kp.pre_handler = agent_pre;
	return register_kprobe(&a->rp.kp);
}

static void agent_unregister(struct agent_probe *a)
{
	if (a->ret)
		unregister_kretprobe(&a->rp);
	else
		unregister_kprobe(&a->rp.kp);
	a->used = false;
}

/*
 * "0\n" or "1\n" into a file: kernel_write where the file takes it (the
 * sysctl); else (debugfs's kprobes/enabled has no write_iter) the guest's
 * own shell does it.
 */
static int write_knob(const char *path, u32 value)
{
	char text[2] = { value ? '1' : '0', '\n' };
	char cmd[96];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	char *envp[] = { "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL };
	struct file *f = filp_open(path, O_WRONLY, 0);
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, text, sizeof(text), &pos);
	filp_close(f, NULL);
	if (n == sizeof(text))
		return 0;
	if (n != -EINVAL)
		return n < 0 ? n : -EIO;
	snprintf(cmd, sizeof(cmd), "echo %u > %s", value ? 1 : 0, path);
	n = call_usermodehelper(argv[0], argv, envp, UMH_WAIT_PROC);
	return n > 0 ? -EIO : n;
}

static void agent_knob(u32 id)
{
	u32 which = inl(port + 4), value = inl(port + 4);

	if (which > 1) {
		reply(id, -EINVAL, NULL);
		return;
	}
	reply(id, write_knob(which ? "/proc/sys/debug/kprobes-optimization" : "/sys/kernel/debug/kprobes/enabled", value), NULL);
}

/* enable, disable or unregister any registered probe by its struct kprobe (and struct kretprobe) */
static void agent_probe_op(u32 id)
{
	u32 op = inl(port + 4);
	u32 klo = inl(port + 4), khi = inl(port + 4);
	u32 rlo = inl(port + 4), rhi = inl(port + 4);
	struct kprobe *kp = (struct kprobe *)((unsigned long)khi << 32 | klo);
	struct kretprobe *rp = (struct kretprobe *)((unsigned long)rhi << 32 | rlo);
	int r = -EOPNOTSUPP;

	if (!kp) {
		reply(id, -EINVAL, NULL);
		return;
	}
	if (op == REQ_ENABLE)
		r = enable_kprobe(kp);
	else if (op == REQ_DISABLE)
		r = disable_kprobe(kp);
	else if (op == REQ_UNREGISTER) {
		if (rp)
			unregister_kretprobe(rp);
		else
			unregister_kprobe(kp);
		r = 0;
	}
	reply(id, r, kp);
}

/* one request: the word read from port+0 and its data words */
static void agent_handle(u32 w)
{
	u32 op = w >> 24, id = w & 0xffffff;
	struct agent_probe *a = id < MAX_PROBES ? &probes[id] : NULL;
	int r;

	if (op == REQ_KNOB) {
		agent_knob(id);
		return;
	}
	if (op == REQ_PROBE_OP) {
		agent_probe_op(id);
		return;
	}
	if (!a) {
		reply(id, -EINVAL, NULL);
		return;
	}
	switch (op) {
	case REQ_REGISTER:
	case REQ_REGISTER_RET:
		if (a->used) {
			reply(id, -EBUSY, &a->rp.kp);
			return;
		}
		r = agent_register(a, op == REQ_REGISTER_RET);
		a->used = r == 0;
		reply(id, r, r == 0 ? &a->rp.kp : NULL);
		return;
	case REQ_UNREGISTER:
		if (!a->used) {
			reply(id, -ENOENT, NULL);
			return;
		}
		agent_unregister(a);
		reply(id, 0, NULL);
		return;
	case REQ_ENABLE:
	case REQ_DISABLE:
		if (!a->used) {
			reply(id, -ENOENT, NULL);
			return;
		}
		r = op == REQ_ENABLE ? enable_kprobe(&a->rp.kp) : disable_kprobe(&a->rp.kp);
		reply(id, r, &a->rp.kp);
		return;
	}
	reply(id, -EOPNOTSUPP, NULL);
}

static int agent_poll(void *unused)
{
	while (!kthread_should_stop()) {
		u32 w = inl(port);

		if (w == 0xffffffff) {
			pr_info("kprobe_agent: no debugger channel at port 0x%x\n", port);
			break;
		}
		if (w)
			agent_handle(w);
		else
			msleep_interruptible(poll_ms);
	}
	while (!kthread_should_stop())
		msleep_interruptible(1000);
	return 0;
}

static int __init agent_init(void)
{
	poller = kthread_run(agent_poll, NULL, "kprobe_agent");
	if (IS_ERR(poller))
		return PTR_ERR(poller);
	pr_info("kprobe_agent: polling port 0x%x every %u ms\n", port, poll_ms);
	return 0;
}

static void __exit agent_exit(void)
{
	int i;

	kthread_stop(poller);
	for (i = 0; i < MAX_PROBES; i++)
		if (probes[i].used)
			agent_unregister(&probes[i]);
	pr_info("kprobe_agent: unloaded\n");
}

module_init(agent_init)
module_exit(agent_exit)
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kprobe-debug's agent: kprobes registered on the debugger's request");
