/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fake_accel: the kernel interfaces that change from one release to the
 * next, in one place. The driver is written against Linux 7.2; when a new
 * kernel changes one of these, this header changes and the driver does not:
 *  - PCI P2PDMA providers for MMIO BARs (pcim_p2pdma_*, new in 6.19);
 *  - dma-buf exporting of MMIO: dma_buf_phys_vec_to_sgt() and
 *    dma_buf_free_sgt() (6.19), whose mapping-type negotiation is moving;
 *  - importer capabilities and revocation (dma_buf_attach_revocable(),
 *    dma_buf_invalidate_mappings(), 7.x names);
 *  - dma_buf_fd_install().
 */
#ifndef _FAKE_ACCEL_COMPAT_H_
#define _FAKE_ACCEL_COMPAT_H_

#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>

/* Make BAR @bar of @pdev a P2PDMA provider (device managed); NULL if not. */
static inline struct p2pdma_provider *faccel_p2p_provider(struct pci_dev *pdev,
							  int bar, int *err)
{
	*err = pcim_p2pdma_init(pdev);
	if (*err)
		return NULL;
	return pcim_p2pdma_provider(pdev, bar);
}

/*
 * Whether @attach follows the dma-buf P2P contract for MMIO: the importer
 * accepts peer-to-peer addresses and its mappings can be revoked.
 */
static inline bool faccel_importer_p2p_revocable(struct dma_buf_attachment *attach)
{
	return attach->peer2peer && dma_buf_attach_revocable(attach);
}

/* The DMA mapping of physical range @phys + @len of @provider for @attach. */
static inline struct sg_table *faccel_map_range(struct dma_buf_attachment *attach,
						struct p2pdma_provider *provider,
						phys_addr_t phys, size_t len,
						enum dma_data_direction dir)
{
	struct phys_vec vec = { .paddr = phys, .len = len };

	return dma_buf_phys_vec_to_sgt(attach, provider, &vec, 1, len, dir);
}

/* Undo faccel_map_range(); frees the table. */
static inline void faccel_unmap_range(struct dma_buf_attachment *attach,
				      struct sg_table *sgt,
				      enum dma_data_direction dir)
{
	dma_buf_free_sgt(attach, sgt, dir);
}

/* Tell importers to drop their mappings (resv lock held). */
static inline void faccel_revoke_mappings(struct dma_buf *dmabuf)
{
	dma_buf_invalidate_mappings(dmabuf);
}

/* Publish @dmabuf at the reserved @fd (the fd's reference is the caller's). */
static inline void faccel_fd_install(struct dma_buf *dmabuf, int fd)
{
	dma_buf_fd_install(dmabuf, fd);
}

#endif /* _FAKE_ACCEL_COMPAT_H_ */
