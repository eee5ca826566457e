// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zcrx-rx: io_uring zero-copy receive into accelerator memory, for docs/shell.md.
 *
 * Allocates a dma-buf in fake-accel device memory (/dev/fake-accel0) and registers it as
 * the area of an io_uring zero-copy receive queue (IORING_REGISTER_ZCRX_IFQ with
 * IORING_ZCRX_AREA_DMABUF) on one RX queue of a NIC, accepts one TCP connection and
 * receives it with IORING_OP_RECV_ZC: the NIC writes the payload into the accelerator's
 * BAR by peer-to-peer DMA, each completion says where in the area it landed, and the
 * buffer goes back to the kernel through the refill ring. The program reads each piece
 * through the dma-buf's mmap, has the accelerator's CRC engine check the same bytes
 * (FACCEL_IOCTL_ENGINE), and reads the device's own count of bytes peers wrote into its
 * memory (sysfs p2p_write_bytes) before and after.
 *
 * usage: zcrx-rx IFNAME QUEUE PORT [OUTFILE]
 * OUTFILE: also write every byte received, as read back from fake-accel memory, to OUTFILE
 * (compare it with what the peer sent).
 * Steer the flow to QUEUE, keep QUEUE out of RSS and turn header split on explicitly
 * (ethtool -G IFNAME tcp-data-split on; with it only at its automatic default the
 * registration fails with EINVAL). Exit status: 0 when at least one byte arrived, the
 * device checked every piece, and the device counted at least as many bytes written by
 * peers as arrived; 1 otherwise.
 *
 * Build: see Makefile here (kernel UAPI headers with misc/fake_accel.h, liburing 2.10+).
 */
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

#include <liburing.h>
#include <linux/dma-buf.h>
#include <misc/fake_accel.h>

#define AREA_SIZE (4UL << 20)
#define RQ_ENTRIES 1024
#define ACCEPT_TAG 1
#define RECV_TAG 2
#define COUNTER "/sys/class/misc/fake-accel0/device/p2p_write_bytes"

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void die_err(const char *what, int err)
{
	errno = err < 0 ? -err : err;
	die(what);
}

/* The device's P2P_WR_BYTES (docs/specs/fake-accel.rst), or -1 without the attribute. */
static long long p2p_write_bytes(void)
{
	long long val = -1;
	FILE *f = fopen(COUNTER, "r");

	if (f) {
		if (fscanf(f, "%lld", &val) != 1)
			val = -1;
		fclose(f);
	}
	return val;
}

/* Bitwise CRC-32 (IEEE, zlib's), what the accelerator's engine computes. */
static uint32_t crc32_ieee(const unsigned char *p, size_t len)
{
	uint32_t crc = 0xffffffff;
	int b;

	while (len--) {
		crc ^= *p++;
		for (b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return ~crc;
}

static void sync_dmabuf(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags | DMA_BUF_SYNC_READ };

	if (ioctl(fd, DMA_BUF_IOCTL_SYNC, &s))
		die("DMA_BUF_IOCTL_SYNC");
}

int main(int argc, char **argv)
{
	struct faccel_alloc alloc = { .size = AREA_SIZE };
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6 };
	struct io_uring_params params = { 0 };
	struct io_uring_zcrx_rq rq = { 0 };
	uint64_t received = 0, pieces = 0, token;
	int accel, lsock, conn = -1, ifindex, queue, one = 1, ret, done = 0;
	long long before, after;
	struct io_uring ring;
	size_t rq_size;
	FILE *out = NULL;
	unsigned char *area;
	void *rq_mem;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: %s IFNAME QUEUE PORT [OUTFILE]\n", argv[0]);
		return 1;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex)
		die(argv[1]);
	queue = atoi(argv[2]);
	addr.sin6_port = htons(atoi(argv[3]));
	if (argc == 5 && !(out = fopen(argv[4], "w")))
		die(argv[4]);

	/* the area: accelerator memory, a dma-buf the NIC reaches by P2P DMA */
	accel = open("/dev/fake-accel0", O_RDWR);
	if (accel < 0)
		die("/dev/fake-accel0");
	if (ioctl(accel, FACCEL_IOCTL_ALLOC_DMABUF, &alloc))
		die("FACCEL_IOCTL_ALLOC_DMABUF");
	area = mmap(NULL, AREA_SIZE, PROT_READ, MAP_SHARED, alloc.fd, 0);
	if (area == MAP_FAILED)
		die("mmap of the dma-buf");
	printf("area: %lu bytes of fake-accel memory at BAR offset %#llx\n", AREA_SIZE,
	       (unsigned long long)alloc.offset);

	/*
	 * One completion per area buffer can be outstanding, plus the accept and the last
	 * one: a CQ that holds them all cannot overflow (an overflow ends RECV_ZC, -ENOSPC).
	 */
	params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		       IORING_SETUP_CQE32 | IORING_SETUP_CQSIZE;
	params.cq_entries = AREA_SIZE / 4096 + 2;
	ret = io_uring_queue_init_params(64, &ring, &params);
	if (ret)
		die_err("io_uring_queue_init_params", ret);

	/* the refill ring, where buffers go back to the kernel: our memory */
	rq_size = (RQ_ENTRIES * sizeof(struct io_uring_zcrx_rqe) + 2 * 4096) & ~4095UL;
	rq_mem = mmap(NULL, rq_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (rq_mem == MAP_FAILED)
		die("mmap of the refill ring");
	{
		struct io_uring_region_desc region = {
			.user_addr = (uint64_t)(uintptr_t)rq_mem,
			.size = rq_size,
			.flags = IORING_MEM_REGION_TYPE_USER,
		};
		struct io_uring_zcrx_area_reg area_reg = {
			.addr = 0,			/* offset into the dma-buf */
			.len = AREA_SIZE,
			.flags = IORING_ZCRX_AREA_DMABUF,
			.dmabuf_fd = alloc.fd,
		};
		struct io_uring_zcrx_ifq_reg reg = {
			.if_idx = ifindex,
			.if_rxq = queue,
			.rq_entries = RQ_ENTRIES,
			.area_ptr = (uint64_t)(uintptr_t)&area_reg,
			.region_ptr = (uint64_t)(uintptr_t)&region,
		};

		ret = io_uring_register_ifq(&ring, &reg);
		if (ret)
			die_err("io_uring_register_ifq (queue steered, out of RSS, tcp-data-split on?)",
				ret);
		rq.khead = (unsigned int *)((char *)rq_mem + reg.offsets.head);
		rq.ktail = (unsigned int *)((char *)rq_mem + reg.offsets.tail);
		rq.rqes = (struct io_uring_zcrx_rqe *)((char *)rq_mem + reg.offsets.rqes);
		rq.ring_entries = reg.rq_entries;
		token = area_reg.rq_area_token;
	}
	printf("zcrx: %s queue %d, area registered\n", argv[1], queue);

	lsock = socket(AF_INET6, SOCK_STREAM, 0);
	if (lsock < 0 || setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) || listen(lsock, 1))
		die("listening socket");
	before = p2p_write_bytes();
	printf("listening on port %s\n", argv[3]);
	fflush(stdout);
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_accept(sqe, lsock, NULL, NULL, 0);
		io_uring_sqe_set_data64(sqe, ACCEPT_TAG);
	}

	while (!done) {
		struct io_uring_cqe *cqe;
		unsigned int head, n = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die_err("io_uring_submit_and_wait", ret);
		io_uring_for_each_cqe(&ring, head, cqe) {
			n++;
			if (cqe->user_data == ACCEPT_TAG) {
				struct io_uring_sqe *sqe;

				if (cqe->res < 0)
					die_err("accept", cqe->res);
				conn = cqe->res;
				sqe = io_uring_get_sqe(&ring);
				io_uring_prep_rw(IORING_OP_RECV_ZC, sqe, conn, NULL, 0, 0);
				sqe->ioprio |= IORING_RECV_MULTISHOT;
				io_uring_sqe_set_data64(sqe, RECV_TAG);
				continue;
			}
			if (cqe->res < 0)
				die_err("RECV_ZC", cqe->res);
			if (cqe->res == 0 && !(cqe->flags & IORING_CQE_F_MORE)) {
				done = 1;	/* the peer closed */
				continue;
			}
			if (cqe->res > 0) {
				struct io_uring_zcrx_cqe *z = (struct io_uring_zcrx_cqe *)(cqe + 1);
				uint64_t off = z->off & ~IORING_ZCRX_AREA_MASK;
				struct faccel_engine eng = {
					.cmd = FACCEL_ENGINE_CRC,
					.src_fd = alloc.fd,
					.dst_fd = -1,
					.src = off,
					.len = cqe->res,
				};
				struct io_uring_zcrx_rqe *rqe;
				uint32_t crc;

				sync_dmabuf(alloc.fd, DMA_BUF_SYNC_START);
				crc = crc32_ieee(area + off, cqe->res);
				if (out && fwrite(area + off, 1, cqe->res, out) != (size_t)cqe->res)
					die("write OUTFILE");
				sync_dmabuf(alloc.fd, DMA_BUF_SYNC_END);
				if (ioctl(accel, FACCEL_IOCTL_ENGINE, &eng) || eng.crc != crc) {
					fprintf(stderr, "device CRC of %#llx+%d is %#x, the CPU read %#x\n",
						(unsigned long long)off, cqe->res, eng.crc, crc);
					return 1;
				}
				received += cqe->res;
				pieces++;

				/* the buffer goes back to the kernel */
				rqe = &rq.rqes[rq.rq_tail & (rq.ring_entries - 1)];
				rqe->off = off | token;
				rqe->len = cqe->res;
				io_uring_smp_store_release(rq.ktail, ++rq.rq_tail);
			}
			if (!(cqe->flags & IORING_CQE_F_MORE) && !done) {
				/* the multishot request ended early: post it again */
				struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

				io_uring_prep_rw(IORING_OP_RECV_ZC, sqe, conn, NULL, 0, 0);
				sqe->ioprio |= IORING_RECV_MULTISHOT;
				io_uring_sqe_set_data64(sqe, RECV_TAG);
			}
		}
		io_uring_cq_advance(&ring, n);
	}
	after = p2p_write_bytes();

	printf("received %llu bytes in %llu pieces, each checked by the device's CRC engine\n",
	       (unsigned long long)received, (unsigned long long)pieces);
	if (before >= 0 && after >= 0)
		printf("fake-accel counted %lld bytes written into its memory by peers meanwhile\n",
		       after - before);
	if (out && fclose(out))
		die(argv[4]);
	close(conn);
	close(lsock);
	io_uring_queue_exit(&ring);
	munmap(area, AREA_SIZE);
	close(alloc.fd);
	close(accel);
	return received > 0 && (before < 0 || after - before >= (long long)received) ? 0 : 1;
}
