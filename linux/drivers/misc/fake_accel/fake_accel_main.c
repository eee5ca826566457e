// SPDX-License-Identifier: GPL-2.0
/*
 * fake-accel: driver for devmem-lab's emulated PCIe accelerator (QEMU
 * -device fake-accel, 1af4:10f1).  BAR2 is device memory; the driver
 * registers it as a PCI P2PDMA provider and hands out dma-bufs carved from
 * it through /dev/fake-accelN, so a NIC doing devmem TCP can DMA payload
 * straight into accelerator memory.  Contract: docs/specs/fake-accel.rst.
 *
 * A misc character device, not DRM accel: the only objects are dma-bufs,
 * and DRM (GEM, PRIME) would pull a lot into the small test kernel.
 */

#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/genalloc.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "fake_accel.h"

static DEFINE_IDA(faccel_ida);

/* Removed instances whose buffers are still alive, by fdev->gone_node. */
static LIST_HEAD(faccel_gone);
/* faccel_gone, every faccel_buf.heir; taken before a faccel_dev.lock */
DEFINE_MUTEX(faccel_gone_lock);

/* The last reference went; faccel_gone_lock held. */
static void faccel_dev_free(struct kref *ref)
{
	struct faccel_dev *fdev = container_of(ref, struct faccel_dev, ref);

	/* every buffer is gone (each held a reference), and so is every
	 * range quarantined in our pool (each held one too)
	 */
	list_del(&fdev->gone_node);
	gen_pool_destroy(fdev->pool);
	pci_dev_put(fdev->pdev);
	kfree(fdev);
}

static void faccel_dev_release(struct kref *ref)
{
	faccel_dev_free(ref);
	mutex_unlock(&faccel_gone_lock);
}

void faccel_dev_put(struct faccel_dev *fdev)
{
	kref_put_mutex(&fdev->ref, faccel_dev_release, &faccel_gone_lock);
}

/* With faccel_gone_lock held. */
void faccel_dev_put_locked(struct faccel_dev *fdev)
{
	lockdep_assert_held(&faccel_gone_lock);
	kref_put(&fdev->ref, faccel_dev_free);
}

/*
 * A new instance (@fdev, its pool filled, not yet visible) on a device an
 * earlier instance was removed from: devmem TCP maps a dma-buf statically
 * and cannot be told to stop, so the NIC may still write the BAR2 range of
 * any buffer of the old instance that is not yet released. Reserve those
 * ranges in the new pool (quarantine) until each buffer's release, so no
 * new buffer hands them to another user. With @undo, give them back (probe
 * failed).
 */
static void faccel_quarantine(struct faccel_dev *fdev, bool undo)
{
	struct faccel_dev *old;
	struct faccel_buf *buf;
	unsigned int n = 0;
	u64 bytes = 0;

	mutex_lock(&faccel_gone_lock);
	list_for_each_entry(old, &faccel_gone, gone_node) {
		if (old->pdev != fdev->pdev)
			continue;
		mutex_lock(&old->lock);
		list_for_each_entry(buf, &old->bufs, node) {
			struct genpool_data_fixed at = {
				.offset = buf->phys - fdev->mem_phys,
			};

			if (undo) {
				if (buf->heir != fdev)
					continue;
				gen_pool_free(fdev->pool, buf->phys, buf->size);
				buf->heir = NULL;
				kref_put(&fdev->ref, faccel_dev_free);
				continue;
			}
			if (buf->phys < fdev->mem_phys ||
			    buf->phys + buf->size > fdev->mem_phys + fdev->mem_size)
				continue;	/* BAR moved: not ours any more */
			if (gen_pool_alloc_algo(fdev->pool, buf->size,
						gen_pool_fixed_alloc, &at) !=
			    buf->phys) {
				dev_warn(&fdev->pdev->dev,
					 "cannot quarantine BAR2 %#lx+%#zx\n",
					 at.offset, buf->size);
				continue;
			}
			/* an earlier heir is gone too: move to the new one */
			if (buf->heir) {
				gen_pool_free(buf->heir->pool, buf->phys,
					      buf->size);
				faccel_dev_put_locked(buf->heir);
			}
			kref_get(&fdev->ref);
			buf->heir = fdev;
			n++;
			bytes += buf->size;
		}
		mutex_unlock(&old->lock);
	}
	mutex_unlock(&faccel_gone_lock);
	if (n)
		dev_warn(&fdev->pdev->dev,
			 "%u buffers (%llu KiB) of the previous driver instance still exist (static importers may still write them): their BAR2 ranges stay unused until released\n",
			 n, bytes >> 10);
}

static void faccel_revoke(struct faccel_dev *fdev, const char *why)
{
	unsigned int n, maps;

	n = faccel_revoke_all(fdev, &maps);
	if (n || maps)
		dev_warn(&fdev->pdev->dev,
			 "%s: revoked %u buffers, %u mappings still held by importers (they keep the BAR2 range until they unmap)\n",
			 why, n, maps);
}

/*
 * Whether the device takes requests now; fdev->lock held. Not once removed
 * (-ENODEV), nor while the PCI core resets it (-EBUSY: a buffer made or a
 * command run then would meet a device that is not there, and the reset
 * revokes nothing made after reset_prepare; try again once it is done).
 */
static int faccel_usable(struct faccel_dev *fdev)
{
	lockdep_assert_held(&fdev->lock);
	if (fdev->gone)
		return -ENODEV;
	if (fdev->resetting)
		return -EBUSY;
	return 0;
}

static int faccel_open(struct inode *inode, struct file *file)
{
	struct faccel_dev *fdev = container_of(file->private_data,
					       struct faccel_dev, misc);

	/* misc_open() holds misc_mtx, so remove() cannot race past us */
	kref_get(&fdev->ref);
	file->private_data = fdev;
	return 0;
}

static int faccel_release(struct inode *inode, struct file *file)
{
	faccel_dev_put(file->private_data);
	return 0;
}

static long faccel_ioctl_info(struct faccel_dev *fdev, void __user *uarg)
{
	struct faccel_info info = {};
	int ret;

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	if (ret) {
		mutex_unlock(&fdev->lock);
		return ret;
	}
	info.mem_size = fdev->mem_size;
	info.mem_free = gen_pool_avail(fdev->pool);
	info.version = readl(fdev->regs + FACCEL_REG_VERSION);
	info.reset_count = readl(fdev->regs + FACCEL_REG_RESET_COUNT);
	info.nr_buffers = fdev->nr_bufs;
	mutex_unlock(&fdev->lock);

	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long faccel_ioctl_alloc(struct faccel_dev *fdev, void __user *uarg)
{
	struct faccel_alloc req;
	struct faccel_buf *buf;
	size_t size;
	int fd, ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;
	ret = faccel_alloc_size(req.size, fdev->mem_size, &size);
	if (ret)
		return ret;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	buf = ret ? ERR_PTR(ret) : faccel_buf_create(fdev, size);
	mutex_unlock(&fdev->lock);
	if (IS_ERR(buf)) {
		put_unused_fd(fd);
		return PTR_ERR(buf);
	}

	req.size = size;
	req.offset = buf->offset;
	req.fd = fd;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		put_unused_fd(fd);
		dma_buf_put(buf->dmabuf);
		return -EFAULT;
	}
	dma_buf_fd_install(buf->dmabuf, fd);
	return 0;
}

static long faccel_ioctl_engine(struct faccel_dev *fdev, void __user *uarg)
{
	struct dma_buf *src_buf = NULL, *dst_buf = NULL;
	struct faccel_engine eng;
	u64 src = 0, dst = 0;
	bool reads, writes;
	u32 cmd;
	int ret;

	if (copy_from_user(&eng, uarg, sizeof(eng)))
		return -EFAULT;
	if (eng.flags || eng.pad)
		return -EINVAL;
	ret = faccel_engine_cmd(eng.cmd, &cmd);
	if (ret)
		return ret;
	reads = eng.cmd != FACCEL_ENGINE_FILL;
	writes = eng.cmd != FACCEL_ENGINE_CRC;

	/* Held until the command is done: the ranges cannot be reused. */
	if (reads) {
		src_buf = faccel_buf_range(fdev, eng.src_fd, eng.src, eng.len,
					   &src);
		if (IS_ERR(src_buf))
			return PTR_ERR(src_buf);
	}
	if (writes) {
		dst_buf = faccel_buf_range(fdev, eng.dst_fd, eng.dst, eng.len,
					   &dst);
		if (IS_ERR(dst_buf)) {
			ret = PTR_ERR(dst_buf);
			dst_buf = NULL;
			goto out_put;
		}
	}

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	if (ret) {
		mutex_unlock(&fdev->lock);
		goto out_put;
	}
	writel(lower_32_bits(src), fdev->regs + FACCEL_REG_ENG_SRC_LO);
	writel(upper_32_bits(src), fdev->regs + FACCEL_REG_ENG_SRC_HI);
	writel(lower_32_bits(dst), fdev->regs + FACCEL_REG_ENG_DST_LO);
	writel(upper_32_bits(dst), fdev->regs + FACCEL_REG_ENG_DST_HI);
	writel(eng.len, fdev->regs + FACCEL_REG_ENG_LEN);
	writel(eng.fill, fdev->regs + FACCEL_REG_ENG_FILL);
	/* the command completes before this write returns */
	writel(cmd, fdev->regs + FACCEL_REG_ENG_CMD);
	eng.status = readl(fdev->regs + FACCEL_REG_ENG_STATUS);
	eng.crc = readl(fdev->regs + FACCEL_REG_ENG_CRC);
	eng.done_len = readl(fdev->regs + FACCEL_REG_ENG_DONE_LEN);
	mutex_unlock(&fdev->lock);

	if (!(eng.status & FACCEL_ENG_STATUS_DONE))
		ret = -EIO;
	else if (copy_to_user(uarg, &eng, sizeof(eng)))
		ret = -EFAULT;
out_put:
	if (dst_buf)
		dma_buf_put(dst_buf);
	if (src_buf && !IS_ERR(src_buf))
		dma_buf_put(src_buf);
	return ret;
}

static long faccel_ioctl_fault(struct faccel_dev *fdev, void __user *uarg)
{
	struct faccel_fault req;
	u32 ctrl;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~FACCEL_FAULT_ENABLE || req.pad)
		return -EINVAL;

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	if (ret) {
		mutex_unlock(&fdev->lock);
		return ret;
	}
	writel(0, fdev->regs + FACCEL_REG_FAULT_CTRL);
	req.hits = readl(fdev->regs + FACCEL_REG_FAULT_HITS);
	writel(0, fdev->regs + FACCEL_REG_FAULT_HITS);
	writel(lower_32_bits(req.offset), fdev->regs + FACCEL_REG_FAULT_OFF_LO);
	writel(upper_32_bits(req.offset), fdev->regs + FACCEL_REG_FAULT_OFF_HI);
	writel(req.len, fdev->regs + FACCEL_REG_FAULT_LEN);
	if (req.flags & FACCEL_FAULT_ENABLE)
		writel(FACCEL_FAULT_CTRL_ENABLE,
		       fdev->regs + FACCEL_REG_FAULT_CTRL);
	ctrl = readl(fdev->regs + FACCEL_REG_FAULT_CTRL);
	mutex_unlock(&fdev->lock);

	/* the device refuses a misaligned or out-of-range window */
	if ((req.flags & FACCEL_FAULT_ENABLE) &&
	    !(ctrl & FACCEL_FAULT_CTRL_ENABLE))
		return -EINVAL;
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long faccel_ioctl_reset(struct faccel_dev *fdev)
{
	int ret;

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	if (ret) {
		mutex_unlock(&fdev->lock);
		return ret;
	}
	faccel_revoke(fdev, "reset requested");
	writel(FACCEL_CTRL_RESET, fdev->regs + FACCEL_REG_CTRL);
	mutex_unlock(&fdev->lock);
	return 0;
}

static long faccel_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct faccel_dev *fdev = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case FACCEL_IOCTL_INFO:
		return faccel_ioctl_info(fdev, uarg);
	case FACCEL_IOCTL_ALLOC_DMABUF:
		return faccel_ioctl_alloc(fdev, uarg);
	case FACCEL_IOCTL_ENGINE:
		return faccel_ioctl_engine(fdev, uarg);
	/*
	 * Device-wide: a reset revokes every user's buffers, a fault window
	 * breaks every user's DMA. Opening the node (mode 0600) is not enough.
	 */
	case FACCEL_IOCTL_RESET:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		return faccel_ioctl_reset(fdev);
	case FACCEL_IOCTL_FAULT:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		return faccel_ioctl_fault(fdev, uarg);
	}
	return -ENOTTY;
}

static const struct file_operations faccel_fops = {
	.owner = THIS_MODULE,
	.open = faccel_open,
	.release = faccel_release,
	.unlocked_ioctl = faccel_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * The device's monotonic counters (docs/specs/fake-accel.rst, Counters),
 * for a test harness: whether peers really wrote into device memory.
 */
static ssize_t p2p_write_bytes_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct faccel_dev *fdev = dev_get_drvdata(dev);
	u32 hi = 0, lo = 0;
	int ret;

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	if (!ret) {
		/* no latch in the device: retry while the high half moves */
		do {
			hi = readl(fdev->regs + FACCEL_REG_P2P_WR_BYTES_HI);
			lo = readl(fdev->regs + FACCEL_REG_P2P_WR_BYTES_LO);
		} while (hi != readl(fdev->regs + FACCEL_REG_P2P_WR_BYTES_HI));
	}
	mutex_unlock(&fdev->lock);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%llu\n", (u64)hi << 32 | lo);
}
static DEVICE_ATTR_RO(p2p_write_bytes);

static ssize_t crc_checks_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct faccel_dev *fdev = dev_get_drvdata(dev);
	u32 val = 0;
	int ret;

	mutex_lock(&fdev->lock);
	ret = faccel_usable(fdev);
	if (!ret)
		val = readl(fdev->regs + FACCEL_REG_CRC_CHECKS);
	mutex_unlock(&fdev->lock);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%u\n", val);
}
static DEVICE_ATTR_RO(crc_checks);

static struct attribute *faccel_attrs[] = {
	&dev_attr_p2p_write_bytes.attr,
	&dev_attr_crc_checks.attr,
	NULL
};
ATTRIBUTE_GROUPS(faccel);

static int faccel_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct faccel_dev *fdev;
	void __iomem *regs;
	u64 reg_size;
	u32 magic;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	regs = pcim_iomap_region(pdev, FACCEL_BAR_REGS, KBUILD_MODNAME);
	if (IS_ERR(regs))
		return PTR_ERR(regs);
	ret = pcim_request_region(pdev, FACCEL_BAR_MEM, KBUILD_MODNAME);
	if (ret)
		return ret;

	magic = readl(regs + FACCEL_REG_ID);
	if (magic != FACCEL_ID_MAGIC) {
		dev_err(&pdev->dev, "bad ID register %#x\n", magic);
		return -ENODEV;
	}
	reg_size = readl(regs + FACCEL_REG_MEM_SIZE_LO) |
		   (u64)readl(regs + FACCEL_REG_MEM_SIZE_HI) << 32;
	if (!(pci_resource_flags(pdev, FACCEL_BAR_MEM) & IORESOURCE_MEM) ||
	    reg_size < PAGE_SIZE ||
	    reg_size > pci_resource_len(pdev, FACCEL_BAR_MEM) ||
	    !PAGE_ALIGNED(pci_resource_start(pdev, FACCEL_BAR_MEM))) {
		dev_err(&pdev->dev, "BAR2 %pR does not hold %llu bytes\n",
			&pdev->resource[FACCEL_BAR_MEM], reg_size);
		return -ENODEV;
	}

	fdev = kzalloc_obj(*fdev);
	if (!fdev)
		return -ENOMEM;
	kref_init(&fdev->ref);
	mutex_init(&fdev->lock);
	init_rwsem(&fdev->mem_lock);
	INIT_LIST_HEAD(&fdev->bufs);
	INIT_LIST_HEAD(&fdev->gone_node);
	fdev->pdev = pci_dev_get(pdev);
	fdev->regs = regs;
	fdev->mem_phys = pci_resource_start(pdev, FACCEL_BAR_MEM);
	fdev->mem_size = reg_size;
	ret = pcim_p2pdma_init(pdev);
	fdev->provider = ret ? NULL : pcim_p2pdma_provider(pdev, FACCEL_BAR_MEM);
	if (!fdev->provider) {
		dev_err(&pdev->dev, "P2PDMA provider for BAR2 failed: %d\n",
			ret);
		ret = ret ?: -ENODEV;
		goto err_put;
	}

	fdev->pool = gen_pool_create(PAGE_SHIFT, dev_to_node(&pdev->dev));
	if (!fdev->pool) {
		ret = -ENOMEM;
		goto err_put;
	}
	ret = gen_pool_add(fdev->pool, fdev->mem_phys, fdev->mem_size,
			   dev_to_node(&pdev->dev));
	if (ret)
		goto err_pool;

	fdev->id = ida_alloc(&faccel_ida, GFP_KERNEL);
	if (fdev->id < 0) {
		ret = fdev->id;
		goto err_pool;
	}
	snprintf(fdev->name, sizeof(fdev->name), "fake-accel%d", fdev->id);
	fdev->misc.minor = MISC_DYNAMIC_MINOR;
	fdev->misc.name = fdev->name;
	fdev->misc.fops = &faccel_fops;
	fdev->misc.parent = &pdev->dev;
	fdev->misc.mode = 0600;
	pci_set_drvdata(pdev, fdev);
	faccel_quarantine(fdev, false);
	ret = misc_register(&fdev->misc);
	if (ret)
		goto err_quarantine;

	dev_info(&pdev->dev, "%s: %llu MiB device memory at %pa, P2P provider ready\n",
		 fdev->name, fdev->mem_size >> 20, &fdev->mem_phys);
	return 0;

err_quarantine:
	faccel_quarantine(fdev, true);
	ida_free(&faccel_ida, fdev->id);
err_pool:
	gen_pool_destroy(fdev->pool);
	fdev->pool = NULL;
err_put:
	pci_dev_put(fdev->pdev);
	kfree(fdev);
	return ret;
}

static void faccel_remove(struct pci_dev *pdev)
{
	struct faccel_dev *fdev = pci_get_drvdata(pdev);

	misc_deregister(&fdev->misc);
	ida_free(&faccel_ida, fdev->id);

	mutex_lock(&fdev->lock);
	faccel_revoke(fdev, "unbind");
	fdev->gone = true;
	fdev->regs = NULL;
	fdev->provider = NULL;
	mutex_unlock(&fdev->lock);

	/* a later instance quarantines what its buffers still cover */
	mutex_lock(&faccel_gone_lock);
	list_add_tail(&fdev->gone_node, &faccel_gone);
	mutex_unlock(&faccel_gone_lock);

	/* pcim/devm release BARs and the p2pdma provider after we return */
	faccel_dev_put(fdev);
}

static void faccel_reset_prepare(struct pci_dev *pdev)
{
	struct faccel_dev *fdev = pci_get_drvdata(pdev);

	mutex_lock(&fdev->lock);
	fdev->resetting = true;
	faccel_revoke(fdev, "device reset");
	mutex_unlock(&fdev->lock);
}

static void faccel_reset_done(struct pci_dev *pdev)
{
	struct faccel_dev *fdev = pci_get_drvdata(pdev);

	mutex_lock(&fdev->lock);
	fdev->resetting = false;
	dev_info(&pdev->dev, "reset done (reset count %u)\n",
		 readl(fdev->regs + FACCEL_REG_RESET_COUNT));
	mutex_unlock(&fdev->lock);
}

static const struct pci_error_handlers faccel_err_handlers = {
	.reset_prepare = faccel_reset_prepare,
	.reset_done = faccel_reset_done,
};

static const struct pci_device_id faccel_ids[] = {
	{ PCI_DEVICE(FACCEL_PCI_VENDOR_ID, FACCEL_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, faccel_ids);

static struct pci_driver faccel_driver = {
	.name = KBUILD_MODNAME,
	.id_table = faccel_ids,
	.probe = faccel_probe,
	.remove = faccel_remove,
	.err_handler = &faccel_err_handlers,
	.dev_groups = faccel_groups,
};
module_pci_driver(faccel_driver);

MODULE_DESCRIPTION("devmem-lab fake accelerator: BAR2 device memory as P2P dma-bufs");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("DMA_BUF");
