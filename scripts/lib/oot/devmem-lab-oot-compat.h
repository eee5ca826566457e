/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmem-lab out-of-tree build (scripts/build-oot-modules): force-included into both
 * drivers when they are built as external modules. It stands in for kernel helpers the
 * drivers call that the kernel does not export to modules. Built in, the drivers use the
 * kernel's own.
 */
#ifndef DEVMEM_LAB_OOT_COMPAT_H
#define DEVMEM_LAB_OOT_COMPAT_H

#include <linux/netdevice.h>
#include <net/netdev_rx_queue.h>

/*
 * dev_get_min_mp_channel_count() (net/core/dev.c) has no EXPORT_SYMBOL in Linux 7.2:
 * the same walk over the RX queues, for the caller that holds the instance lock.
 */
static inline u32 devmem_lab_min_mp_channel_count(const struct net_device *dev)
{
	int i;

	for (i = dev->real_num_rx_queues - 1; i >= 0; i--)
		if (dev->_rx[i].mp_params.mp_priv)
			return i + 1;
	return 0;
}
#define dev_get_min_mp_channel_count devmem_lab_min_mp_channel_count

#endif /* DEVMEM_LAB_OOT_COMPAT_H */
