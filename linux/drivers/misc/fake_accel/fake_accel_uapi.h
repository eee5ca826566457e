/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fake-accel character device uAPI (/dev/fake-accelN).
 * Documented in docs/specs/fake-accel.rst, "Linux driver and uAPI".
 * Standalone: userspace may include it as is.
 */
#ifndef _UAPI_FAKE_ACCEL_H
#define _UAPI_FAKE_ACCEL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FACCEL_IOCTL_MAGIC	0xFA

/* FACCEL_IOCTL_INFO: device facts */
struct faccel_info {
	__u64 mem_size;		/* BAR2 bytes */
	__u64 mem_free;		/* BAR2 bytes not allocated */
	__u32 version;		/* VERSION register */
	__u32 reset_count;	/* RESET_COUNT register */
	__u32 nr_buffers;	/* live dma-bufs (including revoked ones) */
	__u32 pad;
};

/* FACCEL_IOCTL_ALLOC_DMABUF: carve a dma-buf out of BAR2 */
struct faccel_alloc {
	__u64 size;		/* in: bytes, rounded up to PAGE_SIZE */
	__u64 offset;		/* out: where the buffer starts in BAR2 */
	__u32 flags;		/* in: must be 0 */
	__s32 fd;		/* out: dma-buf fd, O_RDWR | O_CLOEXEC */
};

/*
 * FACCEL_IOCTL_ENGINE: one copy/CRC/fill command on buffers of this device.
 * Operands are named by dma-buf fd (from FACCEL_IOCTL_ALLOC_DMABUF on the
 * same device) and offset in that buffer; the range must lie inside it
 * (EINVAL otherwise, EBADF for a bad fd, ENODEV for a revoked buffer). A
 * caller reaches only buffers it holds, never raw BAR2 offsets.
 */
#define FACCEL_ENGINE_COPY	1
#define FACCEL_ENGINE_CRC	2
#define FACCEL_ENGINE_FILL	3

struct faccel_engine {
	__s32 src_fd;		/* in: dma-buf read (COPY, CRC), else -1 */
	__s32 dst_fd;		/* in: dma-buf written (COPY, FILL), else -1 */
	__u64 src;		/* in: offset in src_fd's buffer */
	__u64 dst;		/* in: offset in dst_fd's buffer */
	__u32 len;		/* in: bytes */
	__u32 cmd;		/* in: FACCEL_ENGINE_* */
	__u32 fill;		/* in: FILL pattern (little endian) */
	__u32 flags;		/* in: must be 0 */
	__u32 status;		/* out: ENG_STATUS (bit 0 done, 1 error,
				 * 15:8 error code)
				 */
	__u32 crc;		/* out: CRC-32 (zlib) of the bytes read */
	__u32 done_len;		/* out: bytes processed */
	__u32 pad;		/* in: must be 0 */
};

/* FACCEL_IOCTL_FAULT: program the device's fault window (fault tests) */
#define FACCEL_FAULT_ENABLE	0x1

struct faccel_fault {
	__u64 offset;		/* in: BAR2 offset, 4 KiB aligned */
	__u32 len;		/* in: bytes, 4 KiB multiple, > 0 if enabled */
	__u32 flags;		/* in: FACCEL_FAULT_ENABLE or 0 (disable) */
	__u32 hits;		/* out: FAULT_HITS before this call (cleared) */
	__u32 pad;
};

#define FACCEL_IOCTL_INFO \
	_IOR(FACCEL_IOCTL_MAGIC, 0x00, struct faccel_info)
#define FACCEL_IOCTL_ALLOC_DMABUF \
	_IOWR(FACCEL_IOCTL_MAGIC, 0x01, struct faccel_alloc)
#define FACCEL_IOCTL_ENGINE \
	_IOWR(FACCEL_IOCTL_MAGIC, 0x02, struct faccel_engine)
/* revoke every buffer, then reset the device */
#define FACCEL_IOCTL_RESET	_IO(FACCEL_IOCTL_MAGIC, 0x03)
#define FACCEL_IOCTL_FAULT \
	_IOWR(FACCEL_IOCTL_MAGIC, 0x04, struct faccel_fault)

#endif /* _UAPI_FAKE_ACCEL_H */
