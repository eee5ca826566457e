/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmem-nic: what a module built against Linux 7.2 cannot call. The
 * driver uses the 7.2 queue management ops, memory provider, page pool and
 * netmem APIs directly; only this one is missing for modules.
 */
#ifndef _DEVMEM_NIC_COMPAT_H_
#define _DEVMEM_NIC_COMPAT_H_

#include <linux/netdevice.h>
#include <net/netdev_rx_queue.h>

/*
 * Channels needed to keep every bound memory provider: the highest bound
 * RX queue + 1, 0 if none. Linux 7.2 does not export
 * dev_get_min_mp_channel_count() to modules, so a module (in tree or out of
 * tree) walks the queues itself, as the core does; the caller holds the
 * instance lock.
 */
static inline u32 dmnic_min_mp_channel_count(const struct net_device *netdev)
{
#ifdef MODULE
	int i;

	for (i = netdev->real_num_rx_queues - 1; i >= 0; i--)
		if (netdev->_rx[i].mp_params.mp_priv)
			return i + 1;
	return 0;
#else
	return dev_get_min_mp_channel_count(netdev);
#endif
}

#endif /* _DEVMEM_NIC_COMPAT_H_ */
