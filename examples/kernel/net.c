/* net.c - the receive path's entry point, tcp_v4_rcv(). */
#include "kernel.h"

#define NET_RX_SUCCESS 0
#define NET_RX_DROP 1

static long rx_packets, rx_dropped;
u16 last_bad_sport;

/* Internet checksum of a byte buffer (16-bit one's complement sum, folded). */
noinline u16 csum_fold_bytes(const u8 *data, unsigned int len)
{
	u32 sum = 0;
	for (unsigned int i = 0; i + 1 < len; i += 2)
		sum += (u32)(data[i] << 8 | data[i + 1]);
	if (len & 1)
		sum += (u32)data[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

/* Accept a segment when its checksum matches and its port is open. */
noinline int tcp_v4_rcv(struct sk_buff *skb)
{
	u16 csum;
	if (skb->len < 4 || skb->protocol != 6) {
		atomic_add_return(1, &rx_dropped);
		return NET_RX_DROP;
	}
	csum = csum_fold_bytes(skb->data, skb->len);
	if (csum != skb->check || skb->dport != 80) {
		WRITE_ONCE(last_bad_sport, skb->sport); /* #BP tcp_drop */
		atomic_add_return(1, &rx_dropped);
		return NET_RX_DROP;
	}
	atomic_add_return(1, &rx_packets);
	return NET_RX_SUCCESS;
}

/*
 * The sysfs `name` attribute of the loopback device. Like the many drivers that each
 * have a static name_show of their own, this file's is not the only one:
 * kallsyms lists every copy (kprobe_non_uniq_symbol.tc probes by that name).
 */
static struct kobject net_kobj = { "lo" };

static noinline ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return snprintf(buf, 64, "%s\n", kobj->name);
}

struct kobj_attribute net_name_attr = { "name", name_show };

/* the attribute's text, as a read of the sysfs file shows it */
ssize_t net_name_read(char *buf)
{
	return net_name_attr.show(&net_kobj, &net_name_attr, buf);
}

long net_rx_packets(void) { return READ_ONCE(rx_packets); }
long net_rx_dropped(void) { return READ_ONCE(rx_dropped); }

/*
 * inet_csk_accept: take the first established connection off a listening
 * socket's queue (net/ipv4/inet_connection_sock.c); NULL with *err =
 * -EINVAL when the socket does not listen, -EAGAIN when nothing is queued.
 */
struct sock {
	int listening;
	int backlog;
	struct sock *accept_queue;
};

noinline struct sock *inet_csk_accept(struct sock *sk, int flags, int *err, int kern)
{
	struct sock *child;

	if (!sk->listening) {
		*err = -EINVAL;
		return NULL;
	}
	child = sk->accept_queue;
	if (!child) {
		*err = -11; /* EAGAIN */
		return NULL;
	}
	sk->accept_queue = child->accept_queue;
	sk->backlog--;
	*err = 0;
	return child;
}
EXPORT_SYMBOL(inet_csk_accept);
