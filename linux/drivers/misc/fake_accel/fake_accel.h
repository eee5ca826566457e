/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fake-accel driver internals.
 */
#ifndef _FAKE_ACCEL_H
#define _FAKE_ACCEL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/rwsem.h>
#include <linux/types.h>
#include <uapi/misc/fake_accel.h>

#include "fake_accel_regs.h"

struct dma_buf;
struct gen_pool;
struct p2pdma_provider;
struct pci_dev;

/*
 * One accelerator.  Reference counted: the PCI driver holds one reference
 * while bound, every open file and every exported dma-buf holds one, so
 * importers that release their mappings after remove() still find it.
 * Everything that needs the bound device (@regs, @provider) is used only
 * under @lock with @gone false, or by map_dma_buf on a buffer that is not
 * revoked (buffers are revoked before @gone is set).
 */
struct faccel_dev {
	struct kref ref;
	struct pci_dev *pdev;		/* pci_dev_get() reference */
	void __iomem *regs;
	struct p2pdma_provider *provider;
	phys_addr_t mem_phys;
	u64 mem_size;
	struct gen_pool *pool;		/* BAR2 allocator, by CPU phys address */
	struct mutex lock;		/* buffer list, registers, @gone */
	struct rw_semaphore mem_lock;	/* CPU faults vs. revoke */
	struct list_head bufs;
	unsigned int nr_bufs;
	bool gone;
	/* between PCI reset_prepare and reset_done: no new work, no MMIO */
	bool resetting;
	/*
	 * In faccel_gone once removed, until the last reference goes: its
	 * buffers may still be mapped by static importers (devmem TCP), so
	 * a later instance on the same device keeps their BAR2 ranges out of
	 * its pool. Under faccel_gone_lock.
	 */
	struct list_head gone_node;
	int id;
	char name[32];
	struct miscdevice misc;
};

/* One exported dma-buf: a contiguous range of BAR2. */
struct faccel_buf {
	struct faccel_dev *fdev;
	struct dma_buf *dmabuf;
	struct list_head node;		/* in fdev->bufs, under fdev->lock */
	phys_addr_t phys;
	u64 offset;			/* in BAR2 */
	size_t size;
	bool revoked;			/* set under resv + mem_lock */
	unsigned int nr_maps;		/* under dmabuf->resv */
	/*
	 * The later instance of the device whose pool holds this buffer's
	 * range reserved (quarantined) until the buffer is released; with a
	 * reference. Under faccel_gone_lock.
	 */
	struct faccel_dev *heir;
};

extern struct mutex faccel_gone_lock;
/* module parameter allow_static_importers (fake_accel_dmabuf.c) */
extern bool faccel_allow_static_importers;

/* dma-buf exporter (fake_accel_dmabuf.c) */
struct faccel_buf *faccel_buf_create(struct faccel_dev *fdev, size_t size);
unsigned int faccel_revoke_all(struct faccel_dev *fdev, unsigned int *maps);
struct dma_buf *faccel_buf_range(struct faccel_dev *fdev, int fd, u64 off,
				 u32 len, u64 *bar_off);
void faccel_dev_put(struct faccel_dev *fdev);
void faccel_dev_put_locked(struct faccel_dev *fdev);

/*
 * Pure helpers, covered by KUnit (fake_accel_kunit.c).
 */

/* Validate an allocation request and round it to pages. */
static inline int faccel_alloc_size(u64 req, u64 mem_size, size_t *out)
{
	u64 size;

	if (!req || req > mem_size)
		return req ? -ENOMEM : -EINVAL;
	if (check_add_overflow(req, (u64)PAGE_SIZE - 1, &size))
		return -EINVAL;
	size &= ~((u64)PAGE_SIZE - 1);
	if (size > mem_size || size > SIZE_MAX)
		return -ENOMEM;
	*out = size;
	return 0;
}

/* Whether [@off, @off + @len) lies in a buffer of @size bytes. */
static inline bool faccel_range_ok(u64 off, u32 len, size_t size)
{
	u64 end;

	return !check_add_overflow(off, (u64)len, &end) && end <= size;
}

/* Engine command for FACCEL_IOCTL_ENGINE: BAR2 operands only. */
static inline int faccel_engine_cmd(u32 uapi_cmd, u32 *reg_cmd)
{
	switch (uapi_cmd) {
	case FACCEL_ENGINE_COPY:
		*reg_cmd = FACCEL_ENG_OP_COPY;
		return 0;
	case FACCEL_ENGINE_CRC:
		*reg_cmd = FACCEL_ENG_OP_CRC;
		return 0;
	case FACCEL_ENGINE_FILL:
		*reg_cmd = FACCEL_ENG_OP_FILL;
		return 0;
	}
	return -EINVAL;
}

/* Page frame for a CPU fault at @pgoff pages into a buffer, or 0. */
static inline unsigned long faccel_fault_pfn(phys_addr_t phys, size_t size,
					     unsigned long pgoff)
{
	if (pgoff >= size >> PAGE_SHIFT)
		return 0;
	return PHYS_PFN(phys) + pgoff;
}

#endif /* _FAKE_ACCEL_H */
