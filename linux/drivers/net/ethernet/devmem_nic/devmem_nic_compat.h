/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmem-nic: the kernel interfaces that change from one release to the
 * next, in one place. The driver is written against Linux 7.2; when a new
 * kernel changes one of these, this header changes and the driver does not:
 *  - queue management ops (ndo_queue_*): the per-queue config argument and
 *    the ops around it are new and still moving (queue leasing);
 *  - memory providers bound to RX queues (devmem TCP, io_uring zcrx) and
 *    the unreadable netmem they hand out through the page pool;
 *  - netmem: page pool allocation, DMA sync and skb frag helpers; netmem TX.
 */
#ifndef _DEVMEM_NIC_COMPAT_H_
#define _DEVMEM_NIC_COMPAT_H_

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>
#include <net/netmem.h>
#include <net/page_pool/helpers.h>

/* ---- queue management ops ---- */

/*
 * The driver's side of the ops, without the per-queue config (the driver
 * takes no per-queue parameters, so the core refuses any).
 */
int dmnic_queue_mem_alloc(struct net_device *netdev, void *qmem, int idx);
void dmnic_queue_mem_free(struct net_device *netdev, void *qmem);
int dmnic_queue_start(struct net_device *netdev, void *qmem, int idx);
int dmnic_queue_stop(struct net_device *netdev, void *qmem, int idx);

static inline int dmnic_qops_mem_alloc(struct net_device *netdev,
				       struct netdev_queue_config *qcfg,
				       void *qmem, int idx)
{
	return dmnic_queue_mem_alloc(netdev, qmem, idx);
}

static inline int dmnic_qops_start(struct net_device *netdev,
				   struct netdev_queue_config *qcfg,
				   void *qmem, int idx)
{
	return dmnic_queue_start(netdev, qmem, idx);
}

/* Initializer of the driver's struct netdev_queue_mgmt_ops. */
#define DMNIC_QUEUE_MGMT_OPS(qmem_size) {			\
	.ndo_queue_mem_size	= (qmem_size),			\
	.ndo_queue_mem_alloc	= dmnic_qops_mem_alloc,		\
	.ndo_queue_mem_free	= dmnic_queue_mem_free,		\
	.ndo_queue_start	= dmnic_qops_start,		\
	.ndo_queue_stop		= dmnic_queue_stop,		\
}

/* Restart RX queue @q through the ops above (instance lock held). */
static inline int dmnic_rx_queue_restart(struct net_device *netdev,
					 unsigned int q)
{
	return netdev_rx_queue_restart(netdev, q);
}

/* ---- memory providers ---- */

/* Page pool flag: this pool may hand out a memory provider's net_iovs. */
#define DMNIC_PP_FLAG_UNREADABLE	PP_FLAG_ALLOW_UNREADABLE_NETMEM

/* Whether RX queue @q has a provider of unreadable memory bound. */
static inline bool dmnic_rxq_unreadable(struct net_device *netdev,
					unsigned int q)
{
	return netif_rxq_has_unreadable_mp(netdev, q);
}

/*
 * Channels needed to keep every bound provider: the highest bound RX queue
 * + 1, 0 if none. Linux 7.2 does not export dev_get_min_mp_channel_count()
 * to modules, so a module (in tree or out of tree) walks the queues itself,
 * as the core does; the caller holds the instance lock.
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

/* ---- netmem ---- */

/* TX: frags may be net_iovs; skb_frag_dma_map() gives their DMA address. */
static inline void dmnic_netmem_tx_enable(struct net_device *netdev)
{
	netdev->netmem_tx = NETMEM_TX_DMA;
}

/*
 * One RX buffer of @size bytes: a page pool fragment for sizes below a
 * page (@offset set), else a whole netmem (page or net_iov, @offset 0).
 */
static inline netmem_ref dmnic_pp_alloc(struct page_pool *pool, u32 size,
					unsigned int *offset)
{
	unsigned int len = size;

	*offset = 0;
	if (size < PAGE_SIZE)
		return page_pool_dev_alloc_netmem(pool, offset, &len);
	return page_pool_dev_alloc_netmems(pool);
}

static inline dma_addr_t dmnic_pp_dma_addr(netmem_ref netmem)
{
	return page_pool_get_dma_addr_netmem(netmem);
}

/* For the CPU; a no-op for a provider's memory (the core turns it off). */
static inline void dmnic_pp_sync_for_cpu(struct page_pool *pool,
					 netmem_ref netmem, u32 offset,
					 u32 len)
{
	page_pool_dma_sync_netmem_for_cpu(pool, netmem, offset, len);
}

/* Attach a received buffer as the skb's next frag (may be unreadable). */
static inline void dmnic_skb_add_netmem(struct sk_buff *skb, netmem_ref netmem,
					u32 offset, u32 len, u32 truesize)
{
	skb_add_rx_frag_netmem(skb, skb_shinfo(skb)->nr_frags, netmem, offset,
			       len, truesize);
}

#endif /* _DEVMEM_NIC_COMPAT_H_ */
