// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: PCI glue (probe, remove, interrupts, link state).
 *
 * The device contract is docs/specs/devmem-nic.rst of devmem-lab.
 */

#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <net/netdev_lock.h>

#include "devmem_nic.h"

static const struct pci_device_id dmnic_pci_tbl[] = {
	{ PCI_DEVICE(DMNIC_PCI_VENDOR_ID, DMNIC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, dmnic_pci_tbl);

/* Read the link bit and tell the stack. Runs from the admin work item. */
void dmnic_update_link(struct dmnic *dm)
{
	bool up = dmnic_rd32(dm, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP;

	if (up == netif_carrier_ok(dm->netdev))
		return;

	if (up) {
		netif_carrier_on(dm->netdev);
		netdev_info(dm->netdev, "link up\n");
	} else {
		netif_carrier_off(dm->netdev);
		netdev_info(dm->netdev, "link down\n");
	}
}

static void dmnic_admin_work(struct work_struct *work)
{
	struct dmnic *dm = container_of(work, struct dmnic, admin_work);
	u32 cause;

	cause = dmnic_rd32(dm, DMNIC_REG_INT_CAUSE);
	dmnic_wr32(dm, DMNIC_REG_INT_CAUSE, cause);
	/* A queue direction stopped on an error: restart it (and log) from
	 * the recovery work, which takes the instance lock.
	 */
	if (cause & DMNIC_INT_QERR)
		queue_delayed_work(system_dfl_wq, &dm->qerr_work,
				   READ_ONCE(dm->qerr_delay));
	dmnic_update_link(dm);
}

/*
 * MSI-X messages are DMA writes too: with Bus Master Enable cleared the
 * INT_QERR message is lost, and a queue in error would stay stopped. So
 * look at the error map every few seconds as well.
 */
#define DMNIC_HEALTH_INTERVAL	(2 * HZ)

static void dmnic_health_work(struct work_struct *work)
{
	struct dmnic *dm = container_of(to_delayed_work(work), struct dmnic,
					health_work);

	if (netif_running(dm->netdev) &&
	    (dmnic_rd32(dm, DMNIC_REG_ERR_QMAP_LO) |
	     dmnic_rd32(dm, DMNIC_REG_ERR_QMAP_HI) |
	     (dm->max_queues > 64 ? dmnic_rd32(dm, DMNIC_REG_ERR_QMAP_X) : 0)))
		queue_delayed_work(system_dfl_wq, &dm->qerr_work,
				   READ_ONCE(dm->qerr_delay));
	queue_delayed_work(system_dfl_wq, &dm->health_work,
			   DMNIC_HEALTH_INTERVAL);
}

static irqreturn_t dmnic_admin_irq(int irq, void *data)
{
	struct dmnic *dm = data;

	schedule_work(&dm->admin_work);
	return IRQ_HANDLED;
}

static int dmnic_reset_hw(struct dmnic *dm)
{
	u32 ctrl;
	int err;

	dmnic_wr32(dm, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
	err = readl_poll_timeout(dm->regs + DMNIC_REG_CTRL, ctrl,
				 !(ctrl & DMNIC_CTRL_RESET), 10, 100000);
	if (err)
		dev_err(&dm->pdev->dev, "device reset timed out\n");
	return err;
}

/* Device reset: every queue register is lost, the admin interrupt mask kept. */
static void dmnic_reset_keep_mask(struct dmnic *dm)
{
	u32 mask = dmnic_rd32(dm, DMNIC_REG_INT_MASK);

	/*
	 * The reset clears the device's counters: into the base first, not
	 * read until the reset is done (else base + old counts, then less).
	 */
	dmnic_hw_stats_freeze(dm);
	dmnic_psp_reset_prepare(dm);
	dmnic_reset_hw(dm);
	dmnic_hw_stats_thaw(dm);
	dmnic_wr32(dm, DMNIC_REG_INT_MASK, mask);
	dmnic_gro_program(dm, dm->netdev->features);
	dmnic_psp_restore(dm);
	dmnic_mac_program(dm);
	dmnic_shaper_program(dm);
}

/*
 * A queue did not quiesce, so its buffers may still be DMA targets: stop
 * all DMA with a device reset before that memory is freed or reposted.
 * The caller rebuilds the queues it needs.
 */
void dmnic_reset_dma(struct dmnic *dm)
{
	netdev_warn(dm->netdev, "a queue did not quiesce: resetting the device\n");
	dmnic_reset_keep_mask(dm);
}

/*
 * After a device reset, with rtnl and the instance lock: rebuild the queues
 * of a running interface. If that fails the interface is closed, not left
 * up with no queues (xmit dropping everything, nothing to see but a log
 * line); the user can open it again.
 */
static void dmnic_restart(struct dmnic *dm)
{
	struct net_device *netdev = dm->netdev;
	int err;

	err = dmnic_restore(dm);
	netif_device_attach(netdev);
	if (err) {
		netdev_err(netdev, "could not restart after reset (%d): closing\n",
			   err);
		netif_close(netdev);
	}
}

/*
 * Reset the device and rebuild every queue, as around a PCI function
 * reset but within the driver; from a work item because it takes rtnl.
 */
static void dmnic_reset_work(struct work_struct *work)
{
	struct dmnic *dm = container_of(work, struct dmnic, reset_work);
	struct net_device *netdev = dm->netdev;

	rtnl_lock();
	netdev_lock(netdev);
	netif_device_detach(netdev);
	dmnic_quiesce(dm);
	dmnic_reset_keep_mask(dm);
	dmnic_restart(dm);
	netdev_unlock(netdev);
	rtnl_unlock();
}

/* Any context: a queue could not be stopped; reset the whole device. */
void dmnic_schedule_reset(struct dmnic *dm)
{
	schedule_work(&dm->reset_work);
}

static int dmnic_alloc_irqs(struct dmnic *dm)
{
	struct pci_dev *pdev = dm->pdev;
	int nvec, err;

	/* Vector q for queue pair q, vector NUM_QUEUES for admin events:
	 * the layout is fixed by the device, so take all of them.
	 */
	nvec = pci_alloc_irq_vectors(pdev, dm->max_queues + 1,
				     dm->max_queues + 1, PCI_IRQ_MSIX);
	if (nvec < 0)
		return nvec;
	dm->num_vecs = nvec;

	INIT_WORK(&dm->admin_work, dmnic_admin_work);
	INIT_WORK(&dm->reset_work, dmnic_reset_work);
	INIT_WORK(&dm->features_work, dmnic_features_work);
	INIT_DELAYED_WORK(&dm->qerr_work, dmnic_qerr_work);
	INIT_DELAYED_WORK(&dm->health_work, dmnic_health_work);
	err = request_irq(dmnic_admin_irq_nr(dm), dmnic_admin_irq, 0,
			  dm->admin_irq_name, dm);
	if (err) {
		pci_free_irq_vectors(pdev);
		return err;
	}
	return 0;
}

static void dmnic_free_irqs(struct dmnic *dm)
{
	dmnic_wr32(dm, DMNIC_REG_INT_MASK, ~0u);
	free_irq(dmnic_admin_irq_nr(dm), dm);
	cancel_work_sync(&dm->admin_work);
	pci_free_irq_vectors(dm->pdev);
}

static void dmnic_read_mac(struct dmnic *dm)
{
	u32 lo = dmnic_rd32(dm, DMNIC_REG_MAC_LO);
	u32 hi = dmnic_rd32(dm, DMNIC_REG_MAC_HI);
	u8 addr[ETH_ALEN];

	addr[0] = lo;
	addr[1] = lo >> 8;
	addr[2] = lo >> 16;
	addr[3] = lo >> 24;
	addr[4] = hi;
	addr[5] = hi >> 8;

	if (is_valid_ether_addr(addr)) {
		eth_hw_addr_set(dm->netdev, addr);
	} else {
		dev_warn(&dm->pdev->dev, "invalid MAC %pM, using a random one\n",
			 addr);
		eth_hw_addr_random(dm->netdev);
	}
}

static int dmnic_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct net_device *netdev;
	unsigned int nq;
	struct dmnic *dm;
	void __iomem *regs;
	u32 id, ver;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(&pdev->dev, err, "enable device\n");

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return dev_err_probe(&pdev->dev, err, "no 64-bit DMA\n");
	/* Buffers are described per descriptor, the device has no segment
	 * limit: a devmem binding maps a whole dma-buf (often one huge
	 * segment) against this device.
	 */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);

	regs = pcim_iomap_region(pdev, DMNIC_BAR_REGS, DMNIC_DRV_NAME);
	if (IS_ERR(regs))
		return dev_err_probe(&pdev->dev, PTR_ERR(regs), "map BAR%d\n",
				     DMNIC_BAR_REGS);

	id = readl(regs + DMNIC_REG_ID);
	ver = readl(regs + DMNIC_REG_VERSION);
	if (id != DMNIC_ID_MAGIC || (ver >> 16) != (DMNIC_VERSION >> 16))
		return dev_err_probe(&pdev->dev, -ENODEV,
				     "unknown device id %#x version %#x\n",
				     id, ver);

	nq = readl(regs + DMNIC_REG_NUM_QUEUES);
	if (!nq || nq > DMNIC_MAX_QUEUES)
		return dev_err_probe(&pdev->dev, -ENODEV, "bad queue count %u\n",
				     nq);

	netdev = alloc_etherdev_mqs(sizeof(*dm), nq, nq);
	if (!netdev)
		return -ENOMEM;

	SET_NETDEV_DEV(netdev, &pdev->dev);
	dm = netdev_priv(netdev);
	dm->netdev = netdev;
	dm->pdev = pdev;
	dm->regs = regs;
	dm->max_queues = nq;
	pci_set_drvdata(pdev, dm);
	snprintf(dm->admin_irq_name, sizeof(dm->admin_irq_name),
		 "%s-admin@%s", DMNIC_DRV_NAME, pci_name(pdev));

	pci_set_master(pdev);

	err = dmnic_reset_hw(dm);
	if (err)
		goto err_free_netdev;

	err = dmnic_alloc_irqs(dm);
	if (err) {
		dev_err(&pdev->dev, "MSI-X setup failed: %d\n", err);
		goto err_free_netdev;
	}

	dmnic_read_mac(dm);
	dmnic_netdev_init(dm);
	/* the PHC first: the netdev's hwtstamp and ts_info ops use it */
	dmnic_ptp_init(dm);

	err = register_netdev(netdev);
	if (err)
		goto err_free_ptp;
	dmnic_psp_init(dm);

	/* Admin events on; queue vectors stay unused until ndo_open. */
	dmnic_wr32(dm, DMNIC_REG_INT_MASK, ~(u32)(DMNIC_INT_LINK | DMNIC_INT_QERR));
	schedule_work(&dm->admin_work);
	queue_delayed_work(system_dfl_wq, &dm->health_work,
			   DMNIC_HEALTH_INTERVAL);

	netdev_info(netdev, "devmem-nic %d.%d, %u queue pairs, MAC %pM\n",
		    ver >> 16, ver & 0xffff, dm->max_queues, netdev->dev_addr);
	return 0;

err_free_ptp:
	dmnic_ptp_fini(dm);
	dmnic_free_irqs(dm);
err_free_netdev:
	free_netdev(netdev);
	return err;
}

/*
 * Mask every interrupt and wait out the admin, health and queue-error work.
 * While the interface is up, NAPI (bad completions) and the TX watchdog
 * can queue the queue-error work again: only a closed interface is free
 * of it.
 */
static void dmnic_stop_admin(struct dmnic *dm)
{
	dmnic_wr32(dm, DMNIC_REG_INT_MASK, ~0u);
	synchronize_irq(dmnic_admin_irq_nr(dm));
	cancel_work_sync(&dm->admin_work);
	cancel_delayed_work_sync(&dm->health_work);
	cancel_delayed_work_sync(&dm->qerr_work);
	cancel_work_sync(&dm->reset_work);
}

static void dmnic_remove(struct pci_dev *pdev)
{
	struct dmnic *dm = pci_get_drvdata(pdev);

	/* No more link work once the netdev starts going away. */
	dmnic_stop_admin(dm);

	/* unregister_netdev() closes the device, which quiesces all queues. */
	unregister_netdev(dm->netdev);
	/* after the close: TX and NAPI read dm->psp */
	dmnic_psp_fini(dm);
	/* no ethtool or hwtstamp op can reach the PHC any more */
	dmnic_ptp_fini(dm);
	/*
	 * Until the close, NAPI and ndo_tx_timeout could queue qerr_work
	 * again: wait for it and keep it from being queued before dm is
	 * freed.
	 */
	disable_delayed_work_sync(&dm->qerr_work);
	disable_work_sync(&dm->reset_work);
	/* Unregistered: the work sees that and leaves the features alone. */
	disable_work_sync(&dm->features_work);
	dmnic_free_irqs(dm);
	dmnic_reset_hw(dm);
	pci_clear_master(pdev);
	free_netdev(dm->netdev);
}

static void dmnic_shutdown(struct pci_dev *pdev)
{
	struct dmnic *dm = pci_get_drvdata(pdev);

	dmnic_stop_admin(dm);

	rtnl_lock();
	netif_device_detach(dm->netdev);
	if (netif_running(dm->netdev))
		dev_close(dm->netdev);
	rtnl_unlock();
	dmnic_reset_hw(dm);
	pci_clear_master(pdev);
}

/*
 * Function/bus reset through the PCI core (sysfs reset, FLR): the device
 * comes back in its power-on state, so quiesce before and rebuild after,
 * keeping the netdev, its configuration and devmem bindings.
 */
static void dmnic_reset_prepare(struct pci_dev *pdev)
{
	struct dmnic *dm = pci_get_drvdata(pdev);

	dmnic_stop_admin(dm);
	/* no feature change writes the device while it resets */
	disable_work_sync(&dm->features_work);

	rtnl_lock();
	netdev_lock(dm->netdev);
	netif_device_detach(dm->netdev);
	dmnic_quiesce(dm);
	/* the reset clears the device's counters */
	dmnic_hw_stats_freeze(dm);
	dmnic_psp_reset_prepare(dm);
	netdev_unlock(dm->netdev);
	rtnl_unlock();
}

static void dmnic_reset_done(struct pci_dev *pdev)
{
	struct dmnic *dm = pci_get_drvdata(pdev);

	dmnic_reset_hw(dm);
	dmnic_hw_stats_thaw(dm);
	dmnic_wr32(dm, DMNIC_REG_INT_MASK,
		   ~(u32)(DMNIC_INT_LINK | DMNIC_INT_QERR));
	dmnic_psp_restore(dm);
	dmnic_mac_program(dm);

	rtnl_lock();
	netdev_lock(dm->netdev);
	/* HW GRO/LRO as the features say: the reset turned it off */
	dmnic_gro_program(dm, dm->netdev->features);
	dmnic_shaper_program(dm);
	dmnic_restart(dm);
	netdev_unlock(dm->netdev);
	rtnl_unlock();

	/* a features recompute asked for during the reset was dropped */
	enable_work(&dm->features_work);
	schedule_work(&dm->features_work);
	schedule_work(&dm->admin_work);
	queue_delayed_work(system_dfl_wq, &dm->health_work,
			   DMNIC_HEALTH_INTERVAL);
}

static const struct pci_error_handlers dmnic_err_handler = {
	.reset_prepare	= dmnic_reset_prepare,
	.reset_done	= dmnic_reset_done,
};

static struct pci_driver dmnic_driver = {
	.name		= DMNIC_DRV_NAME,
	.id_table	= dmnic_pci_tbl,
	.probe		= dmnic_probe,
	.remove		= dmnic_remove,
	.shutdown	= dmnic_shutdown,
	.err_handler	= &dmnic_err_handler,
};
module_pci_driver(dmnic_driver);

MODULE_DESCRIPTION("devmem-lab emulated devmem TCP NIC driver");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("NETDEV_INTERNAL");	/* netdev_rx_queue_restart() */
