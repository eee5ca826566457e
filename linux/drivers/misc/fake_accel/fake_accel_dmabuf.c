// SPDX-License-Identifier: GPL-2.0
/*
 * fake-accel: dma-bufs carved from BAR2, exported as P2P memory.
 *
 * DMA addresses come from dma_buf_phys_vec_to_sgt() against the BAR2
 * p2pdma provider, as vfio-pci gets them (but see allow_static_importers
 * below for where this driver departs from it): bus addresses when the importer
 * shares a PCIe switch with us, host-bridge mappings when the host bridge
 * is on the P2PDMA allowlist, refused otherwise.
 */

#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/genalloc.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include <linux/moduleparam.h>

#include "fake_accel.h"

/*
 * The dma-buf P2P contract (vfio-pci follows it) is to export MMIO only to
 * importers that declare peer2peer and can be revoked (invalidate_mappings).
 * devmem TCP is neither: it attaches statically (dma_buf_attach()) and keeps
 * its mapping until its owner unbinds it. By default they are refused, as
 * vfio-pci refuses them. This lab driver exists to let devmem TCP reach BAR
 * memory, so allow_static_importers=1 (devmem-lab's guests set it on the
 * kernel command line) accepts such importers, a deviation from the
 * contract: a revoke (reset, unbind) then cannot stop their DMA (see the
 * quarantine in fake_accel_main.c).
 */
bool faccel_allow_static_importers;
module_param_named(allow_static_importers, faccel_allow_static_importers, bool,
		   0644);
MODULE_PARM_DESC(allow_static_importers,
		 "Also export BAR2 to importers that are not peer2peer or cannot be revoked, such as devmem TCP (default: N; Y deviates from the dma-buf P2P contract)");

static int faccel_dmabuf_attach(struct dma_buf *dmabuf,
				struct dma_buf_attachment *attach)
{
	struct faccel_buf *buf = dmabuf->priv;
	struct faccel_dev *fdev = buf->fdev;
	int ret = 0;

	mutex_lock(&fdev->lock);
	if (fdev->gone || READ_ONCE(buf->revoked)) {
		ret = -ENODEV;
	} else if (!(attach->peer2peer && dma_buf_attach_revocable(attach)) &&
		   !READ_ONCE(faccel_allow_static_importers)) {
		dev_warn_ratelimited(&fdev->pdev->dev,
				     "refusing dma-buf attach from %s %s: not a revocable peer2peer importer (fake_accel.allow_static_importers=0)\n",
				     dev_driver_string(attach->dev),
				     dev_name(attach->dev));
		ret = -EOPNOTSUPP;
	} else if (pci_p2pdma_distance(fdev->pdev, attach->dev, true) < 0) {
		dev_warn_ratelimited(&fdev->pdev->dev,
				     "refusing dma-buf attach from %s %s: it cannot reach BAR2 by PCI peer-to-peer DMA (put both devices behind one PCIe switch)\n",
				     dev_driver_string(attach->dev),
				     dev_name(attach->dev));
		ret = -EREMOTEIO;
	}
	mutex_unlock(&fdev->lock);
	return ret;
}

static struct sg_table *faccel_dmabuf_map(struct dma_buf_attachment *attach,
					  enum dma_data_direction dir)
{
	struct faccel_buf *buf = attach->dmabuf->priv;
	struct phys_vec vec;
	struct sg_table *sgt;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (buf->revoked)
		return ERR_PTR(-ENODEV);

	vec.paddr = buf->phys;
	vec.len = buf->size;
	sgt = dma_buf_phys_vec_to_sgt(attach, buf->fdev->provider, &vec, 1,
				      buf->size, dir);
	if (IS_ERR(sgt)) {
		dev_warn_ratelimited(&buf->fdev->pdev->dev,
				     "cannot map BAR2 range %#llx+%#zx for %s: %pe\n",
				     buf->offset, buf->size,
				     dev_name(attach->dev), sgt);
		return sgt;
	}
	buf->nr_maps++;
	return sgt;
}

static void faccel_dmabuf_unmap(struct dma_buf_attachment *attach,
				struct sg_table *sgt,
				enum dma_data_direction dir)
{
	struct faccel_buf *buf = attach->dmabuf->priv;

	/*
	 * Only frees the table: no device state, safe after remove(). (Linux
	 * 7.2 leaks the scatterlist array here; the fix is in dma-buf itself,
	 * linux/tools/patches/0004, not a workaround in every exporter.)
	 */
	dma_buf_free_sgt(attach, sgt, dir);
	buf->nr_maps--;
}

static void faccel_dmabuf_release(struct dma_buf *dmabuf)
{
	struct faccel_buf *buf = dmabuf->priv;
	struct faccel_dev *fdev = buf->fdev;

	struct faccel_dev *heir;

	mutex_lock(&fdev->lock);
	list_del(&buf->node);
	fdev->nr_bufs--;
	gen_pool_free(fdev->pool, buf->phys, buf->size);
	mutex_unlock(&fdev->lock);

	/* No importer holds the range any more: a later instance may use it. */
	mutex_lock(&faccel_gone_lock);
	heir = buf->heir;
	if (heir) {
		gen_pool_free(heir->pool, buf->phys, buf->size);
		faccel_dev_put_locked(heir);
	}
	mutex_unlock(&faccel_gone_lock);
	kfree(buf);
	faccel_dev_put(fdev);
}

static vm_fault_t faccel_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct faccel_buf *buf = vma->vm_private_data;
	unsigned long pgoff, pfn;
	vm_fault_t ret;

	pgoff = vma->vm_pgoff + ((vmf->address - vma->vm_start) >> PAGE_SHIFT);
	pfn = faccel_fault_pfn(buf->phys, buf->size, pgoff);
	if (!pfn)
		return VM_FAULT_SIGBUS;

	down_read(&buf->fdev->mem_lock);
	if (buf->revoked)
		ret = VM_FAULT_SIGBUS;
	else
		ret = vmf_insert_pfn(vma, vmf->address, pfn);
	up_read(&buf->fdev->mem_lock);
	return ret;
}

static const struct vm_operations_struct faccel_vm_ops = {
	.fault = faccel_vm_fault,
};

static int faccel_dmabuf_mmap(struct dma_buf *dmabuf,
			      struct vm_area_struct *vma)
{
	struct faccel_buf *buf = dmabuf->priv;

	if (READ_ONCE(buf->revoked))
		return -ENODEV;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	vma->vm_ops = &faccel_vm_ops;
	vma->vm_private_data = buf;
	return 0;
}

static int faccel_dmabuf_cpu_access(struct dma_buf *dmabuf,
				    enum dma_data_direction dir)
{
	struct faccel_buf *buf = dmabuf->priv;

	if (READ_ONCE(buf->revoked))
		return -ENODEV;
	/* BAR2 is not cached by the CPU; order the write-combined stores. */
	mb();
	return 0;
}

static const struct dma_buf_ops faccel_dmabuf_ops = {
	.attach = faccel_dmabuf_attach,
	.map_dma_buf = faccel_dmabuf_map,
	.unmap_dma_buf = faccel_dmabuf_unmap,
	.release = faccel_dmabuf_release,
	.mmap = faccel_dmabuf_mmap,
	.begin_cpu_access = faccel_dmabuf_cpu_access,
	.end_cpu_access = faccel_dmabuf_cpu_access,
};

/*
 * Allocate @size bytes (already page aligned) of BAR2 and export them.
 * Called with fdev->lock held and fdev->gone false.  On success the new
 * dma-buf holds a reference to @fdev.
 */
struct faccel_buf *faccel_buf_create(struct faccel_dev *fdev, size_t size)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct faccel_buf *buf;
	unsigned long phys;

	lockdep_assert_held(&fdev->lock);

	buf = kzalloc_obj(*buf);
	if (!buf)
		return ERR_PTR(-ENOMEM);

	phys = gen_pool_alloc(fdev->pool, size);
	if (!phys) {
		kfree(buf);
		return ERR_PTR(-ENOMEM);
	}
	buf->fdev = fdev;
	buf->phys = phys;
	buf->offset = phys - fdev->mem_phys;
	buf->size = size;

	exp_info.ops = &faccel_dmabuf_ops;
	exp_info.size = size;
	exp_info.flags = O_RDWR | O_CLOEXEC;
	exp_info.priv = buf;
	buf->dmabuf = dma_buf_export(&exp_info);
	if (IS_ERR(buf->dmabuf)) {
		struct dma_buf *err = buf->dmabuf;

		gen_pool_free(fdev->pool, phys, size);
		kfree(buf);
		return ERR_CAST(err);
	}

	kref_get(&fdev->ref);
	list_add_tail(&buf->node, &fdev->bufs);
	fdev->nr_bufs++;
	return buf;
}

/*
 * The buffer of @fdev that dma-buf @fd is, with [@off, @off + @len) inside
 * it: returns the dma-buf (a reference the caller drops with dma_buf_put()
 * once the device is done with the range, so the range cannot be freed and
 * handed out meanwhile) and the range's BAR2 offset in @bar_off. -EBADF
 * for a bad fd, -EINVAL for a dma-buf of another exporter or device, or a
 * range outside the buffer, -ENODEV for a revoked buffer.
 */
struct dma_buf *faccel_buf_range(struct faccel_dev *fdev, int fd, u64 off,
				 u32 len, u64 *bar_off)
{
	struct faccel_buf *buf;
	struct dma_buf *dmabuf;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return dmabuf;
	buf = dmabuf->priv;
	if (dmabuf->ops != &faccel_dmabuf_ops || buf->fdev != fdev ||
	    !faccel_range_ok(off, len, buf->size)) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	if (READ_ONCE(buf->revoked)) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-ENODEV);
	}
	*bar_off = buf->offset + off;
	return dmabuf;
}

/*
 * Revoke every buffer of @fdev: no new attach, map, mmap or CPU access,
 * CPU mappings are zapped, dynamic importers are told to drop theirs.
 * Static importers (devmem TCP) cannot be told; their mappings stay until
 * they unmap.  Called with fdev->lock held.  Returns the number of buffers
 * revoked by this call and, in @maps, the mappings still held.
 */
unsigned int faccel_revoke_all(struct faccel_dev *fdev, unsigned int *maps)
{
	struct faccel_buf *buf;
	unsigned int n = 0;
	struct file *file;

	lockdep_assert_held(&fdev->lock);
	*maps = 0;

	down_write(&fdev->mem_lock);
	list_for_each_entry(buf, &fdev->bufs, node) {
		if (buf->revoked)
			continue;
		file = get_file_active(&buf->dmabuf->file);
		if (!file) {
			/* being released, no importer left */
			WRITE_ONCE(buf->revoked, true);
			continue;
		}
		dma_resv_lock(buf->dmabuf->resv, NULL);
		WRITE_ONCE(buf->revoked, true);
		*maps += buf->nr_maps;
		dma_buf_invalidate_mappings(buf->dmabuf);
		dma_resv_unlock(buf->dmabuf->resv);
		unmap_mapping_range(file->f_mapping, 0, 0, 1);
		fput(file);
		n++;
	}
	up_write(&fdev->mem_lock);
	return n;
}
