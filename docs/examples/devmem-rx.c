// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * devmem-rx: the smallest devmem TCP receiver, for docs/shell.md.
 *
 * Allocates a dma-buf in fake-accel device memory (/dev/fake-accel0), binds it to one RX
 * queue of a NIC (netdev generic netlink, NETDEV_CMD_BIND_RX), accepts one TCP connection
 * and receives with MSG_SOCK_DEVMEM: the payload never reaches host memory, the kernel
 * hands back (offset, size, token) fragments of the dma-buf. The program reads each
 * fragment through the dma-buf's mmap (the CPU reading the accelerator's BAR), prints where
 * it landed and what it says, and returns the tokens (SO_DEVMEM_DONTNEED).
 *
 * usage: devmem-rx IFNAME QUEUE PORT [OUTFILE]
 * OUTFILE: also write every byte received, as read back from fake-accel memory, to OUTFILE
 * (compare it with what the peer sent).
 * Steer the flow to QUEUE first and keep QUEUE out of RSS (docs/shell.md does it with
 * ethtool). Exit status: 0 when at least one byte arrived in device memory and none in
 * host memory, 1 otherwise.
 *
 * Build (kernel UAPI headers of 6.12 or later, and misc/fake_accel.h): see Makefile here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/genetlink.h>
#include <linux/netdev.h>
#include <linux/netlink.h>
/* linux/uio.h (struct dmabuf_cmsg, dmabuf_token) has its own struct iovec: renamed away */
#define iovec linux_uapi_iovec
#include <linux/uio.h>
#undef iovec
#include <misc/fake_accel.h>

#ifndef MSG_SOCK_DEVMEM
#define MSG_SOCK_DEVMEM 0x2000000	/* include/linux/socket.h, not in older libcs */
#endif
#ifndef SO_DEVMEM_LINEAR
#define SO_DEVMEM_LINEAR 78
#define SCM_DEVMEM_LINEAR SO_DEVMEM_LINEAR
#define SO_DEVMEM_DMABUF 79
#define SCM_DEVMEM_DMABUF SO_DEVMEM_DMABUF
#define SO_DEVMEM_DONTNEED 80
#endif

#define DMABUF_SIZE (4UL << 20)

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Netlink: one request buffer, attributes appended in place. */
struct nlbuf {
	char data[512];
	struct nlmsghdr *nh;
};

static struct nlattr *nla_put(struct nlbuf *b, int type, const void *val, int len)
{
	struct nlattr *a = (struct nlattr *)(b->data + NLMSG_ALIGN(b->nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, val, len);
	b->nh->nlmsg_len = NLMSG_ALIGN(b->nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

static void nla_nest_end(struct nlbuf *b, struct nlattr *start)
{
	start->nla_len = (char *)b->nh + b->nh->nlmsg_len - (char *)start;
}

static void genl_start(struct nlbuf *b, int family, int cmd)
{
	struct genlmsghdr *g;

	memset(b->data, 0, sizeof(b->data));
	b->nh = (struct nlmsghdr *)b->data;
	b->nh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	b->nh->nlmsg_type = family;
	b->nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = NLMSG_DATA(b->nh);
	g->cmd = cmd;
	g->version = 1;
}

/* The kernel's reason for an error (extended ACK), printed to stderr. */
static void print_extack(struct nlmsghdr *h)
{
	struct nlmsgerr *e = NLMSG_DATA(h);
	struct nlattr *a = (struct nlattr *)(e + 1);	/* NETLINK_CAP_ACK: no request copy */
	int len = (char *)h + h->nlmsg_len - (char *)a;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			fprintf(stderr, "kernel: %.*s\n", a->nla_len - NLA_HDRLEN,
				(char *)a + NLA_HDRLEN);
}

/*
 * Send the request, read the answer: the first attribute of type want_attr of the reply
 * (its payload copied to out, out_len bytes), then the ACK. Returns 0 or -errno.
 */
static int genl_call(int nl, struct nlbuf *b, int want_attr, void *out, int out_len)
{
	char rbuf[8192];
	int found = 0;

	if (send(nl, b->data, b->nh->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		int len = recv(nl, rbuf, sizeof(rbuf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -errno;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct nlattr *a;
			int alen;

			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error) {
					print_extack(h);
					return e->error;
				}
				return found || !want_attr ? 0 : -ENOENT;
			}
			a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
			alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			for (; alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= alen;
			     alen -= NLA_ALIGN(a->nla_len),
			     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
				if ((a->nla_type & NLA_TYPE_MASK) != want_attr || found)
					continue;
				if (a->nla_len - NLA_HDRLEN < out_len)
					return -EPROTO;
				memcpy(out, (char *)a + NLA_HDRLEN, out_len);
				found = 1;
			}
		}
	}
}

/* The binding lives as long as the returned netlink socket stays open. */
static int bind_rx(int ifindex, int queue, int dmabuf_fd, uint32_t *binding_id)
{
	uint32_t qid = queue, qtype = NETDEV_QUEUE_TYPE_RX, ifi = ifindex, fd = dmabuf_fd;
	int one = 1;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlattr *nest;
	struct nlbuf b;
	uint16_t family;
	int nl, err;

	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl < 0 || bind(nl, (struct sockaddr *)&sa, sizeof(sa)))
		die("netlink socket");
	/* errors with the kernel's message, without a copy of the request */
	setsockopt(nl, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	genl_start(&b, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	nla_put(&b, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME, sizeof(NETDEV_FAMILY_NAME));
	err = genl_call(nl, &b, CTRL_ATTR_FAMILY_ID, &family, sizeof(family));
	if (err) {
		errno = -err;
		die("resolving the netdev genetlink family");
	}

	genl_start(&b, family, NETDEV_CMD_BIND_RX);
	nla_put(&b, NETDEV_A_DMABUF_IFINDEX, &ifi, sizeof(ifi));
	nla_put(&b, NETDEV_A_DMABUF_FD, &fd, sizeof(fd));
	nest = nla_put(&b, NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED, NULL, 0);
	nla_put(&b, NETDEV_A_QUEUE_ID, &qid, sizeof(qid));
	nla_put(&b, NETDEV_A_QUEUE_TYPE, &qtype, sizeof(qtype));
	nla_nest_end(&b, nest);
	err = genl_call(nl, &b, NETDEV_A_DMABUF_ID, binding_id, sizeof(*binding_id));
	if (err) {
		errno = -err;
		die("NETDEV_CMD_BIND_RX (is the queue steered, out of RSS, header split on?)");
	}
	return nl;
}

/* Up to 64 bytes of a fragment as text, anything unprintable as '.'. */
static void print_bytes(const char *p, uint32_t len)
{
	uint32_t i;

	putchar('"');
	for (i = 0; i < len && i < 64; i++)
		putchar(p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.');
	printf("\"%s\n", len > 64 ? "..." : "");
}

static void sync_dmabuf(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };

	if (ioctl(fd, DMA_BUF_IOCTL_SYNC, &s))
		die("DMA_BUF_IOCTL_SYNC");
}

int main(int argc, char **argv)
{
	struct faccel_alloc alloc = { .size = DMABUF_SIZE };
	uint64_t in_devmem = 0, in_linear = 0, frags = 0;
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6 };
	int accel, nl, lsock, sock, ifindex, queue, one = 1;
	uint32_t binding;
	FILE *out = NULL;
	char *mem;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s IFNAME QUEUE PORT [OUTFILE] (docs/shell.md)\n", argv[0]);
		return 2;
	}
	if (argc == 5) {
		out = fopen(argv[4], "w");
		if (!out)
			die(argv[4]);
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex)
		die(argv[1]);
	queue = atoi(argv[2]);
	addr.sin6_port = htons(atoi(argv[3]));

	accel = open("/dev/fake-accel0", O_RDWR | O_CLOEXEC);
	if (accel < 0)
		die("/dev/fake-accel0");
	if (ioctl(accel, FACCEL_IOCTL_ALLOC_DMABUF, &alloc))
		die("FACCEL_IOCTL_ALLOC_DMABUF");
	mem = mmap(NULL, DMABUF_SIZE, PROT_READ, MAP_SHARED, alloc.fd, 0);
	if (mem == MAP_FAILED)
		die("mmap of the dma-buf");
	nl = bind_rx(ifindex, queue, alloc.fd, &binding);
	printf("dma-buf of %lu KiB in fake-accel BAR2 at offset 0x%llx, bound to %s rx queue %d (binding %u)\n",
	       DMABUF_SIZE >> 10, (unsigned long long)alloc.offset, argv[1], queue, binding);

	lsock = socket(AF_INET6, SOCK_STREAM, 0);
	if (lsock < 0)
		die("socket");
	setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) || listen(lsock, 1))
		die("bind/listen");
	printf("listening on port %s\n", argv[3]);
	fflush(stdout);
	sock = accept(lsock, NULL, NULL);
	if (sock < 0)
		die("accept");

	for (;;) {
		char ctrl[CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 64];
		char linear[4096];
		struct iovec iov = { .iov_base = linear, .iov_len = sizeof(linear) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
		};
		struct cmsghdr *cm;
		ssize_t n;

		n = recvmsg(sock, &msg, MSG_SOCK_DEVMEM);
		if (n < 0)
			die("recvmsg(MSG_SOCK_DEVMEM)");
		if (n == 0)
			break;
		sync_dmabuf(alloc.fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct dmabuf_cmsg *d = (struct dmabuf_cmsg *)CMSG_DATA(cm);
			struct dmabuf_token tok;

			if (cm->cmsg_level != SOL_SOCKET)
				continue;
			if (cm->cmsg_type == SCM_DEVMEM_LINEAR) {
				/* header split did not apply: these bytes are in host memory */
				in_linear += d->frag_size;
				printf("linear: %u bytes in host memory (header split off?)\n",
				       d->frag_size);
				continue;
			}
			if (cm->cmsg_type != SCM_DEVMEM_DMABUF)
				continue;
			if (d->frag_offset + d->frag_size > DMABUF_SIZE) {
				fprintf(stderr, "frag outside the dma-buf\n");
				return 1;
			}
			printf("frag %llu: %u bytes at dma-buf offset 0x%llx = BAR2 offset 0x%llx: ",
			       (unsigned long long)frags, d->frag_size,
			       (unsigned long long)d->frag_offset,
			       (unsigned long long)(alloc.offset + d->frag_offset));
			print_bytes(mem + d->frag_offset, d->frag_size);
			if (out && fwrite(mem + d->frag_offset, 1, d->frag_size, out) != d->frag_size)
				die(argv[4]);
			frags++;
			in_devmem += d->frag_size;
			tok.token_start = d->frag_token;
			tok.token_count = 1;
			if (setsockopt(sock, SOL_SOCKET, SO_DEVMEM_DONTNEED, &tok, sizeof(tok)) != 1)
				die("SO_DEVMEM_DONTNEED");
		}
		sync_dmabuf(alloc.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		if (msg.msg_flags & MSG_CTRUNC)
			fprintf(stderr, "control data truncated\n");
	}
	printf("received %llu bytes in fake-accel memory (%llu frags), %llu in host memory\n",
	       (unsigned long long)in_devmem, (unsigned long long)frags,
	       (unsigned long long)in_linear);
	if (out && fclose(out))
		die(argv[4]);
	close(sock);
	close(lsock);
	close(nl);	/* unbinds the queue */
	munmap(mem, DMABUF_SIZE);
	close(alloc.fd);
	close(accel);
	return in_devmem && !in_linear ? 0 : 1;
}
