// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: net_device ops, queue management ops and queue stats.
 *
 * The driver sets queue_mgmt_ops, so it is "ops locked": ndo_open/ndo_stop,
 * ethtool ops and the queue management ops all run with the netdev
 * instance lock held, and use the *_locked NAPI helpers.
 *
 * Also native XDP setup (ndo_bpf) and the recovery of queues the device
 * stopped on an error.
 */

#include <linux/bpf.h>
#include <linux/error-injection.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/unaligned.h>
#include <net/netdev_lock.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>
#include <net/netmem.h>
#include <net/page_pool/helpers.h>

#include "devmem_nic.h"

static void dmnic_irq_enable(struct dmnic *dm, unsigned int q)
{
	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_INT_MASK), 0);
}

static void dmnic_irq_disable(struct dmnic *dm, unsigned int q)
{
	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_INT_MASK),
		   DMNIC_Q_INT_RX | DMNIC_Q_INT_TX);
}

/* Default RSS: spread over all active queues unless the user set a table. */
void dmnic_rss_default(struct dmnic *dm)
{
	unsigned int i;

	if (netif_is_rxfh_configured(dm->netdev))
		return;
	for (i = 0; i < dm->rss_indir_size; i++)
		dm->rss_indir[i] = ethtool_rxfh_indir_default(i, dm->num_queues);
}

void dmnic_rss_key_write(struct dmnic *dm)
{
	unsigned int i;

	for (i = 0; i < dm->rss_key_size; i += 4)
		dmnic_wr32(dm, DMNIC_REG_RSS_KEY + i,
			   get_unaligned_le32(&dm->rss_key[i]));
}

/*
 * The table of RSS context @ctx: spec, a table of rss_indir_size entries
 * written repeated into every entry the device looks up. With
 * CAPS_RSS_TBL512 all 512 at RSS_TBL (dmnic_rss_hash_write() sets
 * RSS_CTRL_TBL512), else 128 in the 1.1 windows.
 */
void dmnic_rss_tbl_write(struct dmnic *dm, u32 ctx, const u32 *tbl)
{
	unsigned int i;

	for (i = 0; i < dm->rss_tbl_max; i++) {
		u32 reg;

		if (dm->rss_tbl_max > DMNIC_RSS_INDIR_SIZE)
			reg = DMNIC_RSS_TBL(ctx, i);
		else if (ctx)
			reg = DMNIC_RSS_CTX_INDIR(ctx, i);
		else
			reg = DMNIC_REG_RSS_INDIR + 4 * i;
		dmnic_wr32(dm, reg, tbl[i % dm->rss_indir_size]);
	}
}

void dmnic_rss_write(struct dmnic *dm)
{
	dmnic_rss_key_write(dm);
	dmnic_rss_tbl_write(dm, 0, dm->rss_indir);
	dmnic_wr32(dm, DMNIC_REG_DEFAULT_QUEUE, 0);
	dmnic_rss_hash_write(dm);
}

/* The threshold applies from the next frame; no queue restart needed. */
void dmnic_hds_thresh_write(struct dmnic *dm)
{
	unsigned int q;

	for (q = 0; q < dm->num_queues; q++)
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_HDS_THRESH), dm->hds_thresh);
}

/*
 * Free the queue pairs in @qvs[0..@n-1] (NULLs skipped) that are not live
 * (stopped, or never started). netif_napi_del_locked() waits for an RCU
 * grace period per NAPI instance, which made a reconfiguration of 16
 * queues on a debug kernel take 38-77 s: delete them all, then wait once.
 */
static void dmnic_qvs_release(struct dmnic *dm, struct dmnic_napi **qvs,
			      unsigned int n)
{
	bool any = false;
	unsigned int q;

	for (q = 0; q < n; q++) {
		if (!qvs[q])
			continue;
		timer_shutdown_sync(&qvs[q]->refill_timer);
		__netif_napi_del_locked(&qvs[q]->napi);
		any = true;
	}
	if (!any)
		return;
	synchronize_net();
	for (q = 0; q < n; q++) {
		if (!qvs[q])
			continue;
		dmnic_rx_free(dm, &qvs[q]->rx);
		dmnic_tx_free(dm, &qvs[q]->tx);
		/* ndo_get_stats64 may still be reading it under RCU */
		kfree_rcu(qvs[q], rcu);
		qvs[q] = NULL;
	}
}

static void dmnic_qv_free(struct dmnic *dm, struct dmnic_napi *qv)
{
	dmnic_qvs_release(dm, &qv, 1);
}

/*
 * Build queue pair @q for the current ring sizes, header split and XDP
 * program. It is not live: no device register is touched, so this runs
 * while the old queue set still carries traffic.
 */
static struct dmnic_napi *dmnic_qv_alloc(struct dmnic *dm, unsigned int q)
{
	struct netdev_queue_config qcfg;
	struct dmnic_napi *qv;
	int err;

	qv = kzalloc_obj(*qv, GFP_KERNEL);
	if (!qv)
		return ERR_PTR(-ENOMEM);
	qv->dm = dm;
	qv->idx = q;
	scnprintf(qv->irq_name, sizeof(qv->irq_name), "%s-q%u",
		  netdev_name(dm->netdev), q);

	timer_setup(&qv->refill_timer, dmnic_refill_timer, 0);
	netif_napi_add_config_locked(dm->netdev, &qv->napi, dmnic_poll, q);

	qv->tx.idx = q;
	err = dmnic_tx_alloc(dm, &qv->tx);
	if (err)
		goto err_free;
	/* the queue's config: a memory provider may ask for larger buffers */
	netdev_queue_config(dm->netdev, q, &qcfg);
	err = dmnic_rx_alloc(dm, &qv->rx, q, &qv->napi, qcfg.rx_page_size);
	if (err)
		goto err_free;
	return qv;

err_free:
	dmnic_qv_free(dm, qv);
	return ERR_PTR(err);
}

/* Queue pairs 0..@n-1 into @qvs; on failure none is left allocated. */
static int dmnic_qvs_alloc(struct dmnic *dm, unsigned int n,
			   struct dmnic_napi **qvs)
{
	unsigned int q;

	for (q = 0; q < n; q++) {
		qvs[q] = dmnic_qv_alloc(dm, q);
		if (IS_ERR(qvs[q])) {
			int err = PTR_ERR(qvs[q]);

			qvs[q] = NULL;
			dmnic_qvs_release(dm, qvs, q);
			return err;
		}
	}
	return 0;
}

/*
 * NAPI and the interrupt of a halted queue pair on again, and one poll:
 * completions may have arrived before the unmask.
 */
static void dmnic_qv_resume(struct dmnic *dm, struct dmnic_napi *qv)
{
	napi_enable_locked(&qv->napi);
	dmnic_irq_enable(dm, qv->idx);
	napi_schedule(&qv->napi);
}

/* Make queue pair @qv live: rings into the device, NAPI and IRQ on. */
static void dmnic_qv_start(struct dmnic *dm, struct dmnic_napi *qv)
{
	unsigned int q = qv->idx;

	qv->tx.xsk_pool = qv->rx.xsk_pool;
	dmnic_tx_hw_start(dm, &qv->tx);
	dmnic_rx_hw_start(dm, &qv->rx);
	netif_queue_set_napi(dm->netdev, q, NETDEV_QUEUE_TYPE_RX, &qv->napi);
	netif_queue_set_napi(dm->netdev, q, NETDEV_QUEUE_TYPE_TX, &qv->napi);
	dmnic_qv_resume(dm, qv);
}

static void dmnic_qv_free_irq(struct dmnic *dm, struct dmnic_napi *qv)
{
	netif_napi_set_irq_locked(&qv->napi, -1);
	free_irq(dmnic_queue_irq_nr(dm, qv->idx), qv);
}

/* No more interrupts, NAPI polls or refills on queue pair @qv. */
static void dmnic_qv_quiesce(struct dmnic *dm, struct dmnic_napi *qv)
{
	unsigned int q = qv->idx;

	dmnic_irq_disable(dm, q);
	synchronize_irq(dmnic_queue_irq_nr(dm, q));
	napi_disable_locked(&qv->napi);
	timer_delete_sync(&qv->refill_timer);
	netif_queue_set_napi(dm->netdev, q, NETDEV_QUEUE_TYPE_RX, NULL);
	netif_queue_set_napi(dm->netdev, q, NETDEV_QUEUE_TYPE_TX, NULL);
}

/*
 * No completion or XDP_TX (NAPI), then no xmit on queue pair @qv: in this
 * order, as NAPI's completions wake the TX queue. The rings stay with the
 * device (dmnic_queue_hw_stop() takes them back).
 */
static void dmnic_qv_halt(struct dmnic *dm, struct dmnic_napi *qv)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, qv->idx);

	dmnic_irq_disable(dm, qv->idx);
	synchronize_irq(dmnic_queue_irq_nr(dm, qv->idx));
	napi_disable_locked(&qv->napi);
	__netif_tx_lock_bh(txq);
	netif_tx_stop_queue(txq);
	__netif_tx_unlock_bh(txq);
}

/*
 * Quiesced and no xmit any more: take the rings back from the device.
 * Returns an error if a direction did not quiesce: its memory may still be
 * a DMA target until the device is reset.
 */
static int dmnic_qv_hw_stop(struct dmnic *dm, struct dmnic_napi *qv)
{
	int err_tx = dmnic_queue_hw_stop(dm, qv->idx, true);
	int err_rx = dmnic_queue_hw_stop(dm, qv->idx, false);

	return err_tx ?: err_rx;
}

/*
 * The quiesce of one queue pair that restarts while the others run (TX
 * recovery, the queue management ops, leaving AF_XDP zero-copy): halt it
 * (dmnic_qv_halt()), no refill timer, and take the TX ring, with @rx the
 * RX rings too, back from the device. 0: the device no longer touches
 * them. Otherwise a direction did not stop and its buffers may still be DMA
 * targets: the caller leaves them alone until a device reset.
 */
static int dmnic_qv_stop(struct dmnic *dm, struct dmnic_napi *qv, bool rx)
{
	dmnic_qv_halt(dm, qv);
	timer_delete_sync(&qv->refill_timer);
	if (rx)
		return dmnic_qv_hw_stop(dm, qv);
	return dmnic_queue_hw_stop(dm, qv->idx, true);
}

/*
 * dmnic_qv_stop() failed: NAPI goes on taking completions, TX stays
 * stopped, and the device reset rebuilds every queue.
 */
static void dmnic_qv_stuck(struct dmnic *dm, struct dmnic_napi *qv)
{
	dmnic_qv_resume(dm, qv);
	dmnic_schedule_reset(dm);
}

/*
 * Move a stopped queue pair's counters into the base counters, so that the
 * device totals do not change when the queue set is replaced.
 */
static void dmnic_stats_fold(struct dmnic *dm, struct dmnic_napi *qv)
{
	struct dmnic_rx_stats *rx = &qv->rx.stats;
	struct dmnic_tx_stats *tx = &qv->tx.stats;

	write_seqlock_bh(&dm->stats_lock);
	dm->base_rx.packets += rx->packets;
	dm->base_rx.bytes += rx->bytes;
	dm->base_rx.alloc_fail += rx->alloc_fail;
	dm->base_rx.drops += rx->drops;
	dm->base_rx.csum_unnecessary += rx->csum_unnecessary;
	dm->base_rx.csum_none += rx->csum_none;
	dm->base_rx.hds_split += rx->hds_split;
	dm->base_rx.hw_gro_packets += rx->hw_gro_packets;
	dm->base_rx.hw_gro_bytes += rx->hw_gro_bytes;
	dm->base_rx.hw_gro_wire_packets += rx->hw_gro_wire_packets;
	dm->base_rx.hw_gro_wire_bytes += rx->hw_gro_wire_bytes;
	dm->base_rx.xdp_drops += rx->xdp_drops;
	dm->base_rx.xdp_tx += rx->xdp_tx;
	dm->base_rx.xdp_tx_errors += rx->xdp_tx_errors;
	dm->base_rx.xdp_redirect += rx->xdp_redirect;
	dm->base_tx.packets += tx->packets;
	dm->base_tx.bytes += tx->bytes;
	dm->base_tx.csum_offload += tx->csum_offload;
	dm->base_tx.stop += tx->stop;
	dm->base_tx.wake += tx->wake;
	dm->base_tx.dropped += tx->dropped;
	dm->base_tx.xdp_tx += tx->xdp_tx;

	/* A queue pair that is started again must not count them twice. */
	u64_stats_update_begin(&rx->syncp);
	memset(rx, 0, offsetof(struct dmnic_rx_stats, syncp));
	u64_stats_update_end(&rx->syncp);
	u64_stats_update_begin(&tx->syncp);
	memset(tx, 0, offsetof(struct dmnic_tx_stats, syncp));
	u64_stats_update_end(&tx->syncp);
	write_sequnlock_bh(&dm->stats_lock);
}

/* Stop the live queue pairs; they stay in dm->qv, their counters folded. */
static void dmnic_qvs_stop(struct dmnic *dm)
{
	bool stuck = false;
	unsigned int q;

	/*
	 * NAPI before the TX queues: a TX completion wakes its queue, so a
	 * queue stopped while its NAPI still ran could be woken and take
	 * packets onto a ring that is about to be dropped, skbs and all.
	 */
	for (q = 0; q < dm->num_queues; q++)
		if (dm->qv[q])
			dmnic_qv_quiesce(dm, dm->qv[q]);
	netif_tx_disable(dm->netdev);
	for (q = 0; q < dm->num_queues; q++)
		if (dm->qv[q] && dmnic_qv_hw_stop(dm, dm->qv[q]))
			stuck = true;
	/* Nothing the device may still use is freed or reposted. */
	if (stuck)
		dmnic_reset_dma(dm);
	for (q = 0; q < dm->num_queues; q++) {
		if (!dm->qv[q])
			continue;
		dmnic_tx_clean_all(dm, &dm->qv[q]->tx);
		dmnic_qv_free_irq(dm, dm->qv[q]);
	}
	for (q = 0; q < dm->num_queues; q++)
		if (dm->qv[q])
			dmnic_stats_fold(dm, dm->qv[q]);
}

/*
 * XPS: CPU c sends on queue c % num_queues only, as drivers with a channel
 * per CPU do, so the packets of a single-threaded sender leave in the order
 * it sent them (without XPS each flow hashes to its own queue and the
 * device serves the queues in turn: receivers that check the order of
 * several flows, such as gro_hw.py test_gro_order, see them reordered).
 */
static void dmnic_set_xps(struct dmnic *dm)
{
	cpumask_var_t mask;
	unsigned int q, cpu;

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return;
	for (q = 0; q < dm->num_queues; q++) {
		cpumask_clear(mask);
		for_each_possible_cpu(cpu)
			if (cpu % dm->num_queues == q)
				cpumask_set_cpu(cpu, mask);
		netif_set_xps_queue(dm->netdev, mask, q);
	}
	free_cpumask_var(mask);
}

/*
 * Make the queue pairs in dm->qv[0..num_queues-1] live: queue counts, IRQs,
 * RSS and rules, rings into the device. On failure nothing is live and the
 * pairs are still in dm->qv for the caller to free or start again.
 */
static int dmnic_qvs_start(struct dmnic *dm)
{
	unsigned int q;
	int err;

	err = netif_set_real_num_queues(dm->netdev, dm->num_queues,
					dm->num_queues);
	if (err)
		return err;
	/* the core dropped the shapers of TX queues beyond the count */
	dmnic_shaper_trim(dm, dm->num_queues);
	dmnic_set_xps(dm);

	for (q = 0; q < dm->num_queues; q++) {
		int irq = dmnic_queue_irq_nr(dm, q);

		err = request_irq(irq, dmnic_queue_irq, 0, dm->qv[q]->irq_name,
				  dm->qv[q]);
		if (err) {
			while (q--)
				dmnic_qv_free_irq(dm, dm->qv[q]);
			return err;
		}
		/* NAPI netlink reports the IRQ; affinity follows it */
		netif_napi_set_irq_locked(&dm->qv[q]->napi, irq);
	}

	dmnic_rss_default(dm);
	dmnic_rss_write(dm);
	dmnic_rules_write_all(dm);

	for (q = 0; q < dm->num_queues; q++)
		dmnic_qv_start(dm, dm->qv[q]);

	/* Wake, not just start: after a reconfiguration the qdiscs may hold a
	 * backlog that needs a kick. A queue beyond the channel count has no
	 * queue pair and nothing selects it, but it is started all the same:
	 * the TX watchdog looks at every allocated queue and would time out
	 * one left stopped by netif_tx_disable() (every 10 s after a
	 * channel-count decrease).
	 */
	for (q = 0; q < dm->netdev->num_tx_queues; q++) {
		struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, q);

		if (q < dm->num_queues)
			netif_tx_wake_queue(txq);
		else
			netif_tx_start_queue(txq);
	}
	dmnic_update_link(dm);
	return 0;
}

/* Take the queue pairs out of dm->qv and free them. */
static void dmnic_qvs_free(struct dmnic *dm, unsigned int n)
{
	struct dmnic_napi *qvs[DMNIC_MAX_QUEUES];
	unsigned int q;

	for (q = 0; q < n; q++) {
		qvs[q] = dm->qv[q];
		WRITE_ONCE(dm->qv[q], NULL);
	}
	dmnic_qvs_release(dm, qvs, n);
}

/* Exchange dm->qv[0..@n-1] with @qvs (one side may be shorter: NULLs). */
static void dmnic_qvs_swap(struct dmnic *dm, struct dmnic_napi **qvs,
			   unsigned int n)
{
	unsigned int q;

	for (q = 0; q < n; q++) {
		struct dmnic_napi *qv = dm->qv[q];

		WRITE_ONCE(dm->qv[q], qvs[q]);
		qvs[q] = qv;
	}
}

static void dmnic_down(struct dmnic *dm)
{
	dmnic_qvs_stop(dm);
	dmnic_qvs_free(dm, dm->num_queues);
}

static int dmnic_up(struct dmnic *dm)
{
	unsigned int q;
	int err;

	/* Queues already there would be overwritten: leaked, IRQs busy. */
	for (q = 0; q < DMNIC_MAX_QUEUES; q++)
		if (WARN_ON(dm->qv[q]))
			return -EBUSY;

	for (q = 0; q < dm->num_queues; q++) {
		struct dmnic_napi *qv = dmnic_qv_alloc(dm, q);

		if (IS_ERR(qv)) {
			err = PTR_ERR(qv);
			goto err_free;
		}
		WRITE_ONCE(dm->qv[q], qv);
	}
	err = dmnic_qvs_start(dm);
	if (err)
		goto err_free;
	return 0;

err_free:
	dmnic_qvs_free(dm, dm->num_queues);
	return err;
}

/*
 * Around a PCI function reset (the device loses every register): tear the
 * queues down as ndo_stop does, and build them again afterwards. Memory
 * providers stay on their RX queues, as in dmnic_reconfigure(). Both with
 * rtnl and the instance lock held.
 */
void dmnic_quiesce(struct dmnic *dm)
{
	if (netif_running(dm->netdev))
		dmnic_down(dm);
}

/*
 * Rebuild the queues after a reset (dmnic_quiesce() before it). Error-
 * injectable: dbg-nic-fail-inject makes it fail (fail_function).
 */
int dmnic_restore(struct dmnic *dm)
{
	if (!netif_running(dm->netdev)) {
		dmnic_rss_write(dm);
		dmnic_rules_write_all(dm);
		return 0;
	}
	return dmnic_up(dm);
}
ALLOW_ERROR_INJECTION(dmnic_restore, ERRNO);

static int dmnic_open(struct net_device *netdev)
{
	struct dmnic *dm = netdev_priv(netdev);

	dmnic_gro_program(dm, netdev->features);
	dmnic_mac_program(dm);
	return dmnic_up(dm);
}

static int dmnic_stop(struct net_device *netdev)
{
	struct dmnic *dm = netdev_priv(netdev);

	dmnic_down(dm);
	return 0;
}

/*
 * Apply new queue count, ring sizes or header split (also used when an XDP
 * program is attached or removed). While the interface runs, the new queue
 * set is allocated first, with the old one still carrying traffic; only then
 * are the old queues stopped and the new ones started, so the outage is the
 * swap, not the allocation, and a failed allocation leaves the old queues
 * running untouched. Memory providers stay on their queues because the new
 * page pools are created with the queue's netdev and index.
 */
int dmnic_reconfigure(struct dmnic *dm, unsigned int num_queues,
		      u32 rx_ring_size, u32 tx_ring_size, bool hds)
{
	unsigned int old_q = dm->num_queues, n = max(old_q, num_queues);
	u32 old_rx = dm->rx_ring_size, old_tx = dm->tx_ring_size;
	bool old_hds = dm->hds_enabled;
	struct dmnic_napi **qvs;
	bool swapped = false, closed = false;
	int err;

	/*
	 * Around a PCI reset (between reset_prepare and reset_done) the
	 * device is detached and has no queues while the interface counts as
	 * running. The core does not keep every caller out (an XDP attach
	 * gets here): record the settings, which the rebuild after the reset
	 * (dmnic_restore()) applies, and touch neither the queues nor the
	 * device in the middle of its reset.
	 */
	if (!netif_device_present(dm->netdev)) {
		dm->num_queues = num_queues;
		dm->rx_ring_size = rx_ring_size;
		dm->tx_ring_size = tx_ring_size;
		dm->hds_enabled = hds;
		return 0;
	}

	if (!netif_running(dm->netdev)) {
		err = netif_set_real_num_queues(dm->netdev, num_queues,
						num_queues);
		if (err)
			return err;
		dmnic_shaper_trim(dm, num_queues);
		dm->num_queues = num_queues;
		dm->rx_ring_size = rx_ring_size;
		dm->tx_ring_size = tx_ring_size;
		dm->hds_enabled = hds;
		dmnic_rss_default(dm);
		dmnic_rss_write(dm);
		return 0;
	}

	qvs = kcalloc(n, sizeof(*qvs), GFP_KERNEL);
	if (!qvs)
		return -ENOMEM;

	/* The live queues keep the settings they were built with. */
	dm->rx_ring_size = rx_ring_size;
	dm->tx_ring_size = tx_ring_size;
	dm->hds_enabled = hds;
	err = dmnic_qvs_alloc(dm, num_queues, qvs);
	if (!err) {
		dmnic_qvs_stop(dm);
		dmnic_qvs_swap(dm, qvs, n);
		swapped = true;
		dm->num_queues = num_queues;
		err = dmnic_qvs_start(dm);
	}
	if (err && swapped) {
		/* Start the old queues again: the stop reclaimed their TX,
		 * and the RX start reposts what they still held.
		 */
		netdev_warn(dm->netdev,
			    "reconfiguration failed (%d), restoring\n", err);
		dmnic_qvs_swap(dm, qvs, n);
		dm->num_queues = old_q;
		if (dmnic_qvs_start(dm)) {
			/* Not up with no queues (xmit dropping everything):
			 * closed, as after a failed reset; it can be opened
			 * again.
			 */
			netdev_err(dm->netdev,
				   "could not restore the old queues: closing\n");
			dmnic_qvs_free(dm, old_q);
			closed = true;
		}
	}

	/* What is in qvs now is not live. */
	dmnic_qvs_release(dm, qvs, n);
	kfree(qvs);

	if (err) {
		dm->rx_ring_size = old_rx;
		dm->tx_ring_size = old_tx;
		dm->hds_enabled = old_hds;
	}
	if (closed)
		netif_close(dm->netdev);
	return err;
}

static void dmnic_get_stats64(struct net_device *netdev,
			      struct rtnl_link_stats64 *s)
{
	struct dmnic *dm = netdev_priv(netdev);
	unsigned int q, start, seq;
	struct dmnic_hw_gstats hg;
	struct dmnic_hw_qstats hq;
	u64 rx_dropped, tx_dropped;

	/*
	 * The device's counters: errors (a stopped queue direction loses the
	 * packet in progress), frames it dropped for want of buffers
	 * (missed) and for other reasons (dropped, with the driver's drops).
	 * A reset adds them to the base (stats_lock), so they are summed in
	 * the same read section.
	 */
	do {
		seq = read_seqbegin(&dm->stats_lock);
		dmnic_hw_gstats_get(dm, &hg);
		s->rx_errors = hg.rx_runt;
		s->rx_length_errors = hg.rx_runt;
		s->rx_missed_errors = 0;
		s->tx_errors = 0;
		s->rx_dropped = hg.rx_drop_rule + hg.rx_drop_badq +
				hg.rx_drop_link;
		for (q = 0; q < dm->max_queues; q++) {
			dmnic_hw_qstats_get(dm, q, &hq);
			s->rx_errors += hq.rx_errors;
			s->tx_errors += hq.tx_errors;
			s->rx_missed_errors += hq.rx_drop_nobuf;
			s->rx_dropped += hq.rx_drop_disabled;
		}
	} while (read_seqretry(&dm->stats_lock, seq));
	s->tx_dropped = 0;

	/*
	 * Not under the instance lock: queue pairs are read under RCU, and a
	 * fold of a queue's counters into the base (stats_lock) makes the
	 * whole sum be taken again.
	 */
	rcu_read_lock();
	do {
		seq = read_seqbegin(&dm->stats_lock);
		s->rx_packets = dm->base_rx.packets;
		s->rx_bytes = dm->base_rx.bytes;
		rx_dropped = dm->base_rx.drops;
		s->tx_packets = dm->base_tx.packets;
		s->tx_bytes = dm->base_tx.bytes;
		tx_dropped = dm->base_tx.dropped;
		for (q = 0; q < DMNIC_MAX_QUEUES; q++) {
			struct dmnic_napi *qv = READ_ONCE(dm->qv[q]);
			u64 rp, rb, rd, tp, tb, td;

			if (!qv)
				continue;
			do {
				start = u64_stats_fetch_begin(&qv->rx.stats.syncp);
				rp = qv->rx.stats.packets;
				rb = qv->rx.stats.bytes;
				rd = qv->rx.stats.drops;
			} while (u64_stats_fetch_retry(&qv->rx.stats.syncp,
						       start));
			do {
				start = u64_stats_fetch_begin(&qv->tx.stats.syncp);
				tp = qv->tx.stats.packets;
				tb = qv->tx.stats.bytes;
				td = qv->tx.stats.dropped;
			} while (u64_stats_fetch_retry(&qv->tx.stats.syncp,
						       start));
			s->rx_packets += rp;
			s->rx_bytes += rb;
			rx_dropped += rd;
			s->tx_packets += tp;
			s->tx_bytes += tb;
			tx_dropped += td;
		}
	} while (read_seqretry(&dm->stats_lock, seq));
	rcu_read_unlock();
	s->rx_dropped += rx_dropped;
	s->tx_dropped += tx_dropped;
}

static int dmnic_set_mac(struct net_device *netdev, void *p)
{
	/* The MAC is fixed by the device; the model has no address filter. */
	return eth_mac_addr(netdev, p);
}

static int dmnic_change_mtu(struct net_device *netdev, int new_mtu)
{
	struct dmnic *dm = netdev_priv(netdev);
	unsigned int q;

	/* Single buffer XDP needs every frame in one header buffer. */
	if (dm->xdp_prog &&
	    new_mtu > dmnic_xdp_max_mtu(dm->xdp_prog->aux->xdp_has_frags)) {
		netdev_warn(netdev, "MTU %d too large for single buffer XDP (max %u)\n",
			    new_mtu, (u32)DMNIC_XDP_MAX_MTU);
		return -EINVAL;
	}
	/* AF_XDP zero-copy: every frame in one UMEM frame */
	for (q = 0; q < DMNIC_MAX_QUEUES; q++) {
		struct xsk_buff_pool *pool = dm->xsk_pools[q];

		if (pool && !dmnic_xsk_frame_ok(xsk_pool_get_rx_frame_size(pool),
						new_mtu)) {
			netdev_warn(netdev, "MTU %d too large for the AF_XDP frames of queue %u\n",
				    new_mtu, q);
			return -EINVAL;
		}
	}
	WRITE_ONCE(netdev->mtu, new_mtu);
	return 0;
}

static int dmnic_xdp_setup(struct dmnic *dm, struct bpf_prog *prog,
			   struct netlink_ext_ack *extack)
{
	struct net_device *netdev = dm->netdev;
	bool frags = prog && prog->aux->xdp_has_frags;
	bool old_hds = dmnic_hds_active(dm);
	struct bpf_prog *old;
	unsigned int q;
	int err;

	if (prog) {
		if (netdev->mtu > dmnic_xdp_max_mtu(frags)) {
			NL_SET_ERR_MSG_FMT_MOD(extack,
					       "MTU %u too large for single buffer XDP (max %u)",
					       netdev->mtu, (u32)DMNIC_XDP_MAX_MTU);
			return -EINVAL;
		}
		/* The core checks this too: single buffer XDP runs on the
		 * header buffer and needs the whole frame there.
		 */
		if (!frags &&
		    netdev->cfg->hds_config == ETHTOOL_TCP_DATA_SPLIT_ENABLED) {
			NL_SET_ERR_MSG_MOD(extack,
					   "single buffer XDP needs tcp-data-split off");
			return -EBUSY;
		}
		/* XDP reads the payload buffers (frags) too. */
		for (q = 0; q < netdev->real_num_rx_queues; q++) {
			if (netif_rxq_has_unreadable_mp(netdev, q)) {
				NL_SET_ERR_MSG_FMT_MOD(extack,
						       "RX queue %u is bound to unreadable memory",
						       q);
				return -EBUSY;
			}
		}
	}

	old = xchg(&dm->xdp_prog, prog);

	/* Same buffer layout and header split (single and multi-buffer
	 * programs share the layout): just swap the program.
	 */
	if (!!prog == !!old && dmnic_hds_active(dm) == old_hds) {
		if (old)
			bpf_prog_put(old);
		return 0;
	}

	/* Attach or detach, or header split changes: the queues are rebuilt
	 * (they read dm->xdp_prog).
	 */
	err = dmnic_reconfigure(dm, dm->num_queues, dm->rx_ring_size,
				dm->tx_ring_size, dm->hds_enabled);
	if (err) {
		xchg(&dm->xdp_prog, old);
		NL_SET_ERR_MSG_MOD(extack, "could not rebuild the queues");
		return err;
	}
	if (old)
		bpf_prog_put(old);
	/* GRO_HW and LRO follow the program (dmnic_fix_features()) */
	netdev_update_features(dm->netdev);
	return 0;
}

/* TX watchdog: a stopped TX queue made no progress (lost completions,
 * stalled device). Restart that queue's TX.
 */
static void dmnic_tx_timeout(struct net_device *netdev, unsigned int txqueue)
{
	struct dmnic *dm = netdev_priv(netdev);

	/* Only a queue with a queue pair can be restarted. */
	if (txqueue >= dm->num_queues)
		return;
	dmnic_queue_bad(dm, txqueue, true, "TX timeout");
}

/* The pool queue pair @q runs AF_XDP zero-copy with, or NULL. */
struct xsk_buff_pool *dmnic_xsk_pool(struct dmnic *dm, unsigned int q)
{
	if (q >= DMNIC_MAX_QUEUES || !dm->xdp_prog)
		return NULL;
	return dm->xsk_pools[q];
}

/*
 * A restart that was to take a UMEM off queue pair @q failed: the queue
 * still has UMEM frames posted and in flight, and the pool is about to be
 * unmapped and freed. Take the queue pair out of the device (no more DMA),
 * give every frame back to the pool, and leave it without a pool, RX off,
 * for the device reset that rebuilds every queue.
 */
static void dmnic_xsk_queue_kill(struct dmnic *dm, unsigned int q)
{
	struct dmnic_napi *qv = dm->qv[q];

	/* a device that does not stop is reset before anything is reused */
	if (dmnic_qv_stop(dm, qv, true))
		dmnic_reset_dma(dm);
	dmnic_tx_clean_all(dm, &qv->tx);
	dmnic_xsk_rx_release(&qv->rx);
	qv->tx.xsk_pool = NULL;
	WRITE_ONCE(qv->rx.xsk_pool, NULL);
	dmnic_qv_resume(dm, qv);
	netdev_err(dm->netdev, "queue %u: could not leave AF_XDP zero-copy; resetting\n",
		   q);
	dmnic_schedule_reset(dm);
}

/*
 * XDP_SETUP_XSK_POOL: map (or unmap) an AF_XDP socket's UMEM for queue
 * @qid and restart that queue pair through the queue management ops if it
 * changes mode (only while an XDP program runs: without one the queues
 * never use the pool). Pools are kept by queue index, so a reconfiguration
 * (rings, channels, a reset) builds the queue with its pool again.
 */
static int dmnic_xsk_pool_setup(struct dmnic *dm, struct xsk_buff_pool *pool,
				u16 qid)
{
	struct net_device *netdev = dm->netdev;
	struct xsk_buff_pool *old;
	bool live;
	int err;

	if (qid >= dm->max_queues)
		return -EINVAL;
	live = netif_running(netdev) && netif_device_present(netdev) &&
	       dm->xdp_prog && qid < dm->num_queues && dm->qv[qid];

	if (pool) {
		if (dm->xsk_pools[qid])
			return -EBUSY;
		if (!dmnic_xsk_frame_ok(xsk_pool_get_rx_frame_size(pool),
					netdev->mtu)) {
			netdev_warn(netdev, "AF_XDP frames of %u bytes cannot hold MTU %u frames\n",
				    xsk_pool_get_rx_frame_size(pool),
				    netdev->mtu);
			return -EINVAL;
		}
		err = xsk_pool_dma_map(pool, &dm->pdev->dev, 0);
		if (err)
			return err;
		dm->xsk_pools[qid] = pool;
		if (live) {
			err = netdev_rx_queue_restart(netdev, qid);
			if (err) {
				/* the old queue runs on, without the pool */
				dm->xsk_pools[qid] = NULL;
				xsk_pool_dma_unmap(pool, 0);
				return err;
			}
		}
		return 0;
	}

	old = dm->xsk_pools[qid];
	if (!old)
		return 0;
	dm->xsk_pools[qid] = NULL;
	if (live && dm->qv[qid]->rx.xsk_pool == old &&
	    netdev_rx_queue_restart(netdev, qid))
		dmnic_xsk_queue_kill(dm, qid);
	/* No UMEM frame is posted or in flight any more. */
	xsk_pool_dma_unmap(old, 0);
	return 0;
}

static int dmnic_bpf(struct net_device *netdev, struct netdev_bpf *bpf)
{
	struct dmnic *dm = netdev_priv(netdev);

	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return dmnic_xdp_setup(dm, bpf->prog, bpf->extack);
	case XDP_SETUP_XSK_POOL:
		return dmnic_xsk_pool_setup(dm, bpf->xsk.pool,
					    bpf->xsk.queue_id);
	default:
		return -EINVAL;
	}
}

/*
 * 1.3 tunnel TSO (spec: TSO): one tunnel, IP-in-IP or a UDP or GRE tunnel
 * (not both: nested tunnels stay with the stack), around IPv4 or IPv6 TCP.
 */
static bool dmnic_tnl_gso_ok(const struct sk_buff *skb)
{
	u32 t = skb_shinfo(skb)->gso_type;
	u8 ver;

	if (!skb->encapsulation)
		return true;
	if ((t & DMNIC_GSO_TNL) && (t & (SKB_GSO_IPXIP4 | SKB_GSO_IPXIP6)))
		return false;
	if (!(t & (SKB_GSO_TCPV4 | SKB_GSO_TCPV6)) ||
	    skb_inner_network_offset(skb) > U16_MAX)
		return false;
	ver = skb_inner_network_header(skb)[0] >> 4;
	return ver == 4 || ver == 6;
}

/* The device refuses TSO with an MSS under DMNIC_TSO_MSS_MIN (it bounds the
 * segments one descriptor can make); the stack segments such packets itself
 * (tcp_min_snd_mss may be as low as 48).
 */
static netdev_features_t dmnic_features_check(struct sk_buff *skb,
					      struct net_device *dev,
					      netdev_features_t features)
{
	features = vlan_features_check(skb, features);
	if (skb_is_gso(skb) && (skb_shinfo(skb)->gso_size < DMNIC_TSO_MSS_MIN ||
				!dmnic_tnl_gso_ok(skb)))
		features &= ~NETIF_F_GSO_MASK;
	return features;
}

/*
 * The stack cannot checksum a memory provider's unreadable payload: with
 * RX checksum offload off every such packet would be dropped. Keep it on
 * while a provider is bound (dmnic_queue_mem_alloc() refuses a binding
 * while it is off).
 */
static netdev_features_t dmnic_fix_features(struct net_device *netdev,
					    netdev_features_t features)
{
	struct dmnic *dm = netdev_priv(netdev);

	/* An XDP program must see the frames of the wire, not merged ones. */
	if (rcu_access_pointer(dm->xdp_prog))
		features &= ~(NETIF_F_GRO_HW | NETIF_F_LRO);
	if (!(features & NETIF_F_RXCSUM) &&
	    dmnic_min_mp_channel_count(netdev)) {
		if (net_ratelimit())
			netdev_warn(netdev,
				    "rx-checksumming stays on: a memory provider of unreadable memory is bound\n");
		features |= NETIF_F_RXCSUM;
	}
	return features;
}

/*
 * The core does not recompute the features when a memory provider goes
 * away, so a "rx off" that dmnic_fix_features() overrode would stay
 * pending (and a repeated request is a no-op: it is already wanted).
 * Recompute them once the last provider is gone. Needs the RTNL, which
 * the unbinding path does not hold, so from a work item.
 */
void dmnic_features_work(struct work_struct *work)
{
	struct dmnic *dm = container_of(work, struct dmnic, features_work);
	struct net_device *netdev = dm->netdev;

	rtnl_lock();
	netdev_lock(netdev);
	if (netdev->reg_state == NETREG_REGISTERED)
		netdev_update_features(netdev);
	netdev_unlock(netdev);
	rtnl_unlock();
}

/* Hardware GRO and LRO: the device coalesces while the feature is on. */
void dmnic_gro_program(struct dmnic *dm, netdev_features_t features)
{
	if (!(dm->caps & (DMNIC_CAPS_HW_GRO | DMNIC_CAPS_LRO)))
		return;
	dmnic_wr32(dm, DMNIC_REG_GRO_TIMEOUT, DMNIC_GRO_TIMEOUT_US);
	dmnic_wr32(dm, DMNIC_REG_GRO_MAX_AGE, DMNIC_GRO_MAX_AGE_US);
	dmnic_wr32(dm, DMNIC_REG_GRO_CTRL, dmnic_gro_ctrl(features));
}

/*
 * Around a PCI reset (detached) the device is not touched: reset_done
 * programs what netdev->features then holds.
 */
static int dmnic_set_features(struct net_device *netdev,
			      netdev_features_t features)
{
	if (netif_device_present(netdev))
		dmnic_gro_program(netdev_priv(netdev), features);
	return 0;
}

static const struct net_device_ops dmnic_netdev_ops = {
	.ndo_open		= dmnic_open,
	.ndo_stop		= dmnic_stop,
	.ndo_start_xmit		= dmnic_xmit,
	.ndo_features_check	= dmnic_features_check,
	.ndo_fix_features	= dmnic_fix_features,
	.ndo_set_features	= dmnic_set_features,
	.ndo_get_stats64	= dmnic_get_stats64,
	.ndo_set_mac_address	= dmnic_set_mac,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= dmnic_change_mtu,
	.ndo_tx_timeout		= dmnic_tx_timeout,
	.ndo_bpf		= dmnic_bpf,
	.ndo_xsk_wakeup		= dmnic_xsk_wakeup,
	.ndo_hwtstamp_get	= dmnic_hwtstamp_get,
	.ndo_hwtstamp_set	= dmnic_hwtstamp_set,
	.net_shaper_ops		= &dmnic_shaper_ops,
};

/* ---- queue management ops: restart one RX queue while the device runs ---- */

static struct dmnic_napi *dmnic_rxq_qv(struct dmnic *dm, int idx)
{
	if (idx < 0 || idx >= dm->num_queues)
		return NULL;
	return dm->qv[idx];
}

/* @qcfg: rx_page_size, the payload buffer size (validated) */
static int dmnic_queue_mem_alloc(struct net_device *netdev,
				 struct netdev_queue_config *qcfg, void *qmem,
				 int idx)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_rx_queue *rx = qmem;

	/*
	 * Called while the interface may be down, too: the core then only
	 * checks that a pool for this queue picks up the memory provider, so
	 * the pools must be created in any case. They belong to no NAPI until
	 * dmnic_queue_start() hands them over: if the old queue does not stop,
	 * the core frees them while the (shared) NAPI instance still runs.
	 */
	if (netif_running(netdev) && !dmnic_rxq_qv(dm, idx))
		return -ENETDOWN;
	/* Unreadable payload needs the device's checksum (fix_features). */
	if (!(netdev->features & NETIF_F_RXCSUM) &&
	    netif_rxq_has_unreadable_mp(netdev, idx)) {
		netdev_err(netdev,
			   "RX queue %d: turn rx-checksumming on before binding unreadable memory\n",
			   idx);
		return -EOPNOTSUPP;
	}
	/* The last provider is going away: a held-back rx off can apply. */
	if ((netdev->features & ~netdev->wanted_features & NETIF_F_RXCSUM) &&
	    !dmnic_min_mp_channel_count(netdev))
		schedule_work(&dm->features_work);
	return dmnic_rx_alloc(dm, rx, idx, NULL, qcfg->rx_page_size);
}

static void dmnic_default_qcfg(struct net_device *netdev,
			       struct netdev_queue_config *qcfg)
{
	qcfg->rx_page_size = PAGE_SIZE;
}

/* Payload buffers of a power of two from a page up to what RXD_LEN allows */
static int dmnic_validate_qcfg(struct net_device *netdev,
			       struct netdev_queue_config *qcfg,
			       struct netlink_ext_ack *extack)
{
	if (dmnic_rx_buf_size_check(qcfg->rx_page_size)) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "rx-buf-len %u: a power of two from %lu to %u",
				       qcfg->rx_page_size, PAGE_SIZE,
				       (u32)DMNIC_RX_BUF_MAX);
		return -ERANGE;
	}
	return 0;
}

static void dmnic_queue_mem_free(struct net_device *netdev, void *qmem)
{
	struct dmnic *dm = netdev_priv(netdev);

	dmnic_rx_free(dm, qmem);
}

/*
 * The queue management ops restart one RX queue, but its NAPI vector is
 * the whole queue pair: the TX ring carries XDP_TX frames in the RX page
 * pools' buffers, and ndo_queue_mem_free() destroys those pools (their
 * scrub DMA-unmaps every buffer still out). So stop and start the pair's
 * TX as well, as fbnic does; TX packets still on the ring are dropped.
 */
static int dmnic_queue_start(struct net_device *netdev,
			     struct netdev_queue_config *qcfg, void *qmem,
			     int idx)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_napi *qv = dmnic_rxq_qv(dm, idx);

	if (!qv)
		return -ENETDOWN;

	/*
	 * Everything but the counters: they stay live across the restart
	 * (ndo_get_stats64 reads them locklessly; a copy of the new queue's
	 * zeroes, even restored afterwards, would show them going back).
	 */
	memcpy(&qv->rx, qmem, offsetof(struct dmnic_rx_queue, stats));
	/* The new pools join the NAPI instance now (see queue_mem_alloc). */
	page_pool_enable_direct_recycling(qv->rx.hdr.pool, &qv->napi);
	page_pool_enable_direct_recycling(qv->rx.pay.pool, &qv->napi);

	/* AF_XDP TX follows the RX queue's pool (the old one's TX is clean) */
	dmnic_qv_start(dm, qv);
	netif_tx_wake_queue(netdev_get_tx_queue(netdev, idx));
	return 0;
}

static int dmnic_queue_stop(struct net_device *netdev, void *qmem, int idx)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_napi *qv = dmnic_rxq_qv(dm, idx);
	int err;

	if (!qv)
		return -ENETDOWN;

	/* Wait until the device does no more DMA from or into the buffers. */
	err = dmnic_qv_stop(dm, qv, true);
	if (err) {
		/*
		 * The device may still write the posted buffers and read the
		 * TX ring: reposting or freeing them now risks DMA into
		 * recycled memory. Leave the rings as they are.
		 */
		dmnic_qv_stuck(dm, qv);
		return err;
	}
	netif_queue_set_napi(netdev, idx, NETDEV_QUEUE_TYPE_RX, NULL);
	netif_queue_set_napi(netdev, idx, NETDEV_QUEUE_TYPE_TX, NULL);

	/* XDP_TX buffers go back to the old pools before they are freed. */
	dmnic_tx_clean_all(dm, &qv->tx);
	page_pool_disable_direct_recycling(qv->rx.hdr.pool);
	page_pool_disable_direct_recycling(qv->rx.pay.pool);
	memcpy(qmem, &qv->rx, sizeof(qv->rx));
	return 0;
}

const struct netdev_queue_mgmt_ops dmnic_queue_mgmt_ops = {
	.ndo_queue_mem_size	= sizeof(struct dmnic_rx_queue),
	.ndo_queue_mem_alloc	= dmnic_queue_mem_alloc,
	.ndo_queue_mem_free	= dmnic_queue_mem_free,
	.ndo_queue_start	= dmnic_queue_start,
	.ndo_queue_stop		= dmnic_queue_stop,
	.ndo_default_qcfg	= dmnic_default_qcfg,
	.ndo_validate_qcfg	= dmnic_validate_qcfg,
	.supported_params	= QCFG_RX_PAGE_SIZE,
};

/* ---- recovery of queues the device stopped ---- */

/*
 * Delay before the next recovery: none after a quiet second, then doubling
 * from 10 ms up to @max while a queue keeps failing (a faulting peer BAR
 * would otherwise have the queue restarted for every packet).
 */
unsigned long dmnic_qerr_backoff(unsigned long prev, bool recent,
				 unsigned long max)
{
	unsigned long min = max / 100 + 1;

	if (!recent)
		return 0;
	if (prev >= max / 2)
		return max;
	return prev * 2 < min ? min : prev * 2;
}

/* TX of queue pair @qv is in the error state: drain and restart it. */
static void dmnic_tx_recover(struct dmnic *dm, struct dmnic_napi *qv)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, qv->idx);

	/* Spec: clear the enable bit, reprogram, enable. Descriptors the
	 * device did not complete are ours again: their packets are lost.
	 */
	if (dmnic_qv_stop(dm, qv, false)) {
		/* Still reading the ring: nothing may be unmapped or freed. */
		dmnic_qv_stuck(dm, qv);
		return;
	}
	dmnic_tx_clean_all(dm, &qv->tx);
	dmnic_tx_hw_start(dm, &qv->tx);
	dmnic_qv_resume(dm, qv);
	netif_tx_wake_queue(txq);
}

/*
 * The device stops one direction of a queue on a DMA fault or a programming
 * mistake (spec: Errors); every buffer it did not complete is the driver's
 * again. RX is restarted through the queue management ops, as the core does
 * for a memory provider, so a devmem binding stays on the queue. Runs from
 * a work item because it sleeps and takes the instance lock; repeated
 * errors (e.g. a faulting peer BAR) back off up to a second.
 */
/*
 * The driver itself found a queue direction broken: completions naming
 * buffers that are not posted (lost or corrupted completions) or a TX queue
 * that stopped moving. Restart it as for a device error. Any context.
 */
void dmnic_queue_bad(struct dmnic *dm, unsigned int q, bool tx,
		     const char *why)
{
	if (test_and_set_bit(q, tx ? dm->qerr_sw_tx : dm->qerr_sw_rx))
		return;
	if (net_ratelimit())
		netdev_warn(dm->netdev, "queue %u: %s; restarting it\n", q,
			    why);
	queue_delayed_work(system_dfl_wq, &dm->qerr_work,
			   READ_ONCE(dm->qerr_delay));
}

void dmnic_qerr_work(struct work_struct *work)
{
	struct dmnic *dm = container_of(to_delayed_work(work), struct dmnic,
					qerr_work);
	struct net_device *netdev = dm->netdev;
	DECLARE_BITMAP(map, DMNIC_MAX_QUEUES);
	u32 words[3] = {};
	bool found = false;
	unsigned int q;

	netdev_lock(netdev);
	if (!netif_running(netdev)) {
		/* the next ndo_open builds fresh queues anyway */
		bitmap_zero(dm->qerr_sw_rx, DMNIC_MAX_QUEUES);
		bitmap_zero(dm->qerr_sw_tx, DMNIC_MAX_QUEUES);
		goto unlock;
	}

	/* 32 queues a word; ERR_QMAP_X (1.3) only on a device that has it */
	static_assert(DMNIC_MAX_QUEUES <= 32 * ARRAY_SIZE(words));
	words[0] = dmnic_rd32(dm, DMNIC_REG_ERR_QMAP_LO);
	words[1] = dmnic_rd32(dm, DMNIC_REG_ERR_QMAP_HI);
	if (dm->max_queues > 64)
		words[2] = dmnic_rd32(dm, DMNIC_REG_ERR_QMAP_X);
	bitmap_from_arr32(map, words, DMNIC_MAX_QUEUES);
	for (q = 0; q < dm->num_queues; q++) {
		bool sw_rx = test_and_clear_bit(q, dm->qerr_sw_rx);
		bool sw_tx = test_and_clear_bit(q, dm->qerr_sw_tx);
		struct dmnic_napi *qv = dm->qv[q];
		u32 st;
		int err;

		if (!qv || (!test_bit(q, map) && !sw_rx && !sw_tx))
			continue;
		found = true;
		st = dmnic_rd32(dm, DMNIC_QREG(q, DMNIC_Q_STATUS));
		if (test_bit(q, map) && net_ratelimit())
			netdev_warn(netdev,
				    "queue %u stopped by the device: rx error %u, tx error %u; restarting it\n",
				    q,
				    (st >> DMNIC_Q_STATUS_RX_ERR_SHIFT) &
				    DMNIC_Q_STATUS_ERR_MASK,
				    (st >> DMNIC_Q_STATUS_TX_ERR_SHIFT) &
				    DMNIC_Q_STATUS_ERR_MASK);

		if ((st & DMNIC_Q_STATUS_TX_ERROR) || sw_tx) {
			dmnic_tx_recover(dm, qv);
			WRITE_ONCE(dm->qerr_tx, dm->qerr_tx + 1);
		}
		if ((st & DMNIC_Q_STATUS_RX_ERROR) || sw_rx) {
			err = netdev_rx_queue_restart(netdev, q);
			if (err)
				netdev_err(netdev,
					   "queue %u: RX restart failed: %d\n",
					   q, err);
			else
				WRITE_ONCE(dm->qerr_rx, dm->qerr_rx + 1);
		}
	}

	if (found) {
		bool recent = time_before(jiffies, dm->qerr_last + HZ);

		WRITE_ONCE(dm->qerr_delay,
			   dmnic_qerr_backoff(dm->qerr_delay, recent, HZ));
		dm->qerr_last = jiffies;
	}
unlock:
	netdev_unlock(netdev);
}

/* ---- the device's own counters ---- */

static void dmnic_hw_qstats_read(struct dmnic *dm, unsigned int q,
				 struct dmnic_hw_qstats *hq)
{
	memset(hq, 0, sizeof(*hq));
	hq->rx_drop_nobuf = dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_RX_DROP_NOBUF));
	hq->rx_drop_disabled =
		dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_RX_DROP_DISABLED));
	hq->rx_csum_bad = dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_RX_CSUM_BAD));
	hq->rx_errors = dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_RX_ERRORS));
	hq->tx_errors = dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_TX_ERRORS));
	if (!(dm->caps & DMNIC_CAPS_USO))
		return;
	hq->tx_lso_packets =
		dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_TX_LSO_PACKETS));
	hq->tx_lso_bytes = dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_TX_LSO_BYTES));
	hq->tx_lso_wire_packets =
		dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_TX_LSO_WIRE_PACKETS));
	hq->tx_lso_wire_bytes =
		dmnic_rd64(dm, DMNIC_QREG(q, DMNIC_Q_TX_LSO_WIRE_BYTES));
}

/* Adds the device counters @hq to @sum. */
static void dmnic_hw_qstats_add(struct dmnic_hw_qstats *sum,
				const struct dmnic_hw_qstats *hq)
{
	sum->rx_drop_nobuf += hq->rx_drop_nobuf;
	sum->rx_drop_disabled += hq->rx_drop_disabled;
	sum->rx_csum_bad += hq->rx_csum_bad;
	sum->rx_errors += hq->rx_errors;
	sum->tx_errors += hq->tx_errors;
	sum->tx_lso_packets += hq->tx_lso_packets;
	sum->tx_lso_bytes += hq->tx_lso_bytes;
	sum->tx_lso_wire_packets += hq->tx_lso_wire_packets;
	sum->tx_lso_wire_bytes += hq->tx_lso_wire_bytes;
}

static void dmnic_hw_gstats_read(struct dmnic *dm, struct dmnic_hw_gstats *hg)
{
	hg->rx_drop_rule = dmnic_rd64(dm, DMNIC_REG_G_RX_DROP_RULE);
	hg->rx_drop_badq = dmnic_rd64(dm, DMNIC_REG_G_RX_DROP_BADQ);
	hg->rx_drop_link = dmnic_rd64(dm, DMNIC_REG_G_RX_DROP_LINK);
	hg->rx_runt = dmnic_rd64(dm, DMNIC_REG_G_RX_RUNT);
}

/*
 * Queue @q's device counters since probe: the sum kept across resets plus
 * what the device counts now. Under the instance lock, or in a
 * @stats_lock read section (the base changes under both).
 */
void dmnic_hw_qstats_get(struct dmnic *dm, unsigned int q,
			 struct dmnic_hw_qstats *hq)
{
	const struct dmnic_hw_qstats *b = &dm->hw_base_q[q];

	memset(hq, 0, sizeof(*hq));
	if (!READ_ONCE(dm->hw_stats_frozen))
		dmnic_hw_qstats_read(dm, q, hq);
	dmnic_hw_qstats_add(hq, b);
}

void dmnic_hw_gstats_get(struct dmnic *dm, struct dmnic_hw_gstats *hg)
{
	const struct dmnic_hw_gstats *b = &dm->hw_base_g;

	memset(hg, 0, sizeof(*hg));
	if (!READ_ONCE(dm->hw_stats_frozen))
		dmnic_hw_gstats_read(dm, hg);
	hg->rx_drop_rule += b->rx_drop_rule;
	hg->rx_drop_badq += b->rx_drop_badq;
	hg->rx_drop_link += b->rx_drop_link;
	hg->rx_runt += b->rx_runt;
}

/*
 * Before a device reset (which clears the counters): add them to the base.
 * Until dmnic_hw_stats_thaw() (after the reset) the counters are not read,
 * only the base: a reader in between would count them twice, or read a
 * device in the middle of a PCI reset. Instance lock held.
 */
void dmnic_hw_stats_freeze(struct dmnic *dm)
{
	struct dmnic_hw_gstats hg;
	unsigned int q;

	if (dm->hw_stats_frozen)
		return;
	/*
	 * Some 650 MMIO reads (each a VM exit) before the seqlock, with BHs
	 * on and readers running; the write section only adds them.
	 */
	for (q = 0; q < dm->max_queues; q++)
		dmnic_hw_qstats_read(dm, q, &dm->hw_freeze_q[q]);
	dmnic_hw_gstats_read(dm, &hg);
	dmnic_hw_mstats_freeze(dm);
	write_seqlock_bh(&dm->stats_lock);
	for (q = 0; q < dm->max_queues; q++)
		dmnic_hw_qstats_add(&dm->hw_base_q[q], &dm->hw_freeze_q[q]);
	dm->hw_base_g.rx_drop_rule += hg.rx_drop_rule;
	dm->hw_base_g.rx_drop_badq += hg.rx_drop_badq;
	dm->hw_base_g.rx_drop_link += hg.rx_drop_link;
	dm->hw_base_g.rx_runt += hg.rx_runt;
	WRITE_ONCE(dm->hw_stats_frozen, true);
	write_sequnlock_bh(&dm->stats_lock);
}

/* After a PCI reset: the device counts from 0 again. */
void dmnic_hw_stats_thaw(struct dmnic *dm)
{
	write_seqlock_bh(&dm->stats_lock);
	WRITE_ONCE(dm->hw_stats_frozen, false);
	write_sequnlock_bh(&dm->stats_lock);
}

/* ---- per queue stats of the netdev netlink family ---- */

static void dmnic_get_queue_stats_rx(struct net_device *netdev, int idx,
				     struct netdev_queue_stats_rx *rx)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_napi *qv = dm->qv[idx];
	struct dmnic_hw_qstats hq;
	struct dmnic_rx_stats *s;
	unsigned int start;

	/* The device counts per queue whether or not the queue is live. */
	dmnic_hw_qstats_get(dm, idx, &hq);
	rx->hw_drops = hq.rx_drop_nobuf + hq.rx_drop_disabled;
	rx->hw_drop_overruns = hq.rx_drop_nobuf;
	rx->csum_bad = hq.rx_csum_bad;
	if (!qv)
		return;
	s = &qv->rx.stats;
	do {
		start = u64_stats_fetch_begin(&s->syncp);
		rx->packets = s->packets;
		rx->bytes = s->bytes;
		rx->alloc_fail = s->alloc_fail;
		rx->csum_unnecessary = s->csum_unnecessary;
		rx->csum_none = s->csum_none;
		rx->hw_gro_packets = s->hw_gro_packets;
		rx->hw_gro_bytes = s->hw_gro_bytes;
		rx->hw_gro_wire_packets = s->hw_gro_wire_packets;
		rx->hw_gro_wire_bytes = s->hw_gro_wire_bytes;
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

static void dmnic_get_queue_stats_tx(struct net_device *netdev, int idx,
				     struct netdev_queue_stats_tx *tx)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_napi *qv = dm->qv[idx];
	struct dmnic_hw_qstats hq;
	struct dmnic_tx_stats *s;
	unsigned int start;

	/* A TX error (a malformed descriptor) loses the packet on it. */
	dmnic_hw_qstats_get(dm, idx, &hq);
	tx->hw_drops = hq.tx_errors;
	tx->hw_drop_errors = hq.tx_errors;
	if (dm->caps & DMNIC_CAPS_USO) {
		tx->hw_gso_packets = hq.tx_lso_packets;
		tx->hw_gso_bytes = hq.tx_lso_bytes;
		tx->hw_gso_wire_packets = hq.tx_lso_wire_packets;
		tx->hw_gso_wire_bytes = hq.tx_lso_wire_bytes;
	}
	if (!qv)
		return;
	s = &qv->tx.stats;
	do {
		start = u64_stats_fetch_begin(&s->syncp);
		tx->packets = s->packets;
		tx->bytes = s->bytes;
		tx->needs_csum = s->csum_offload;
		tx->stop = s->stop;
		tx->wake = s->wake;
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

static void dmnic_get_base_stats(struct net_device *netdev,
				 struct netdev_queue_stats_rx *rx,
				 struct netdev_queue_stats_tx *tx)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_hw_gstats hg;
	struct dmnic_hw_qstats hq;
	unsigned int q;

	rx->packets = dm->base_rx.packets;
	rx->bytes = dm->base_rx.bytes;
	rx->alloc_fail = dm->base_rx.alloc_fail;
	rx->csum_unnecessary = dm->base_rx.csum_unnecessary;
	rx->csum_none = dm->base_rx.csum_none;
	rx->hw_gro_packets = dm->base_rx.hw_gro_packets;
	rx->hw_gro_bytes = dm->base_rx.hw_gro_bytes;
	rx->hw_gro_wire_packets = dm->base_rx.hw_gro_wire_packets;
	rx->hw_gro_wire_bytes = dm->base_rx.hw_gro_wire_bytes;

	/*
	 * Frames the device dropped before choosing a queue (a drop rule, a
	 * rule or table naming a queue it does not have, link down, runts),
	 * and the counters of queues beyond the channel count.
	 */
	dmnic_hw_gstats_get(dm, &hg);
	rx->hw_drops = hg.rx_drop_rule + hg.rx_drop_badq + hg.rx_drop_link +
		       hg.rx_runt;
	rx->hw_drop_overruns = 0;
	rx->csum_bad = 0;
	tx->hw_drops = 0;
	tx->hw_drop_errors = 0;
	if (dm->caps & DMNIC_CAPS_USO) {
		tx->hw_gso_packets = 0;
		tx->hw_gso_bytes = 0;
		tx->hw_gso_wire_packets = 0;
		tx->hw_gso_wire_bytes = 0;
	}
	for (q = netdev->real_num_rx_queues; q < dm->max_queues; q++) {
		dmnic_hw_qstats_get(dm, q, &hq);
		rx->hw_drops += hq.rx_drop_nobuf + hq.rx_drop_disabled;
		rx->hw_drop_overruns += hq.rx_drop_nobuf;
		rx->csum_bad += hq.rx_csum_bad;
	}
	for (q = netdev->real_num_tx_queues; q < dm->max_queues; q++) {
		dmnic_hw_qstats_get(dm, q, &hq);
		tx->hw_drops += hq.tx_errors;
		tx->hw_drop_errors += hq.tx_errors;
		if (dm->caps & DMNIC_CAPS_USO) {
			tx->hw_gso_packets += hq.tx_lso_packets;
			tx->hw_gso_bytes += hq.tx_lso_bytes;
			tx->hw_gso_wire_packets += hq.tx_lso_wire_packets;
			tx->hw_gso_wire_bytes += hq.tx_lso_wire_bytes;
		}
	}

	tx->packets = dm->base_tx.packets;
	tx->bytes = dm->base_tx.bytes;
	tx->needs_csum = dm->base_tx.csum_offload;
	tx->stop = dm->base_tx.stop;
	tx->wake = dm->base_tx.wake;
}

const struct netdev_stat_ops dmnic_stat_ops = {
	.get_queue_stats_rx	= dmnic_get_queue_stats_rx,
	.get_queue_stats_tx	= dmnic_get_queue_stats_tx,
	.get_base_stats		= dmnic_get_base_stats,
};

void dmnic_netdev_init(struct dmnic *dm)
{
	struct net_device *netdev = dm->netdev;

	netdev->netdev_ops = &dmnic_netdev_ops;
	netdev->xdp_metadata_ops = &dmnic_xdp_metadata_ops;
	netdev->ethtool_ops = &dmnic_ethtool_ops;
	netdev->queue_mgmt_ops = &dmnic_queue_mgmt_ops;
	netdev->stat_ops = &dmnic_stat_ops;
	seqlock_init(&dm->stats_lock);
	/* TX frags may be net_iovs: skb_frag_dma_map() gives their address */
	netdev->netmem_tx = NETMEM_TX_DMA;
	/*
	 * PASS, DROP, ABORTED, TX, REDIRECT (not into this device: no
	 * ndo_xdp_xmit), also multi-buffer; AF_XDP zero-copy, one UMEM frame
	 * per packet.
	 */
	netdev->xdp_features = NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT |
			       NETDEV_XDP_ACT_RX_SG |
			       NETDEV_XDP_ACT_XSK_ZEROCOPY;

	netdev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_RXCSUM |
			      NETIF_F_RXHASH;
	dm->caps = dmnic_rd32(dm, DMNIC_REG_CAPS);
	/*
	 * 1.3, CAPS_RSS_TBL512: 33 RSS contexts with 512-entry tables at
	 * RSS_TBL; before, 8 contexts of 128 entries in the 1.1 windows
	 */
	dm->rss_tbl_max = DMNIC_RSS_INDIR_SIZE;
	if ((dm->caps & DMNIC_CAPS_RSS_TBL512) &&
	    dmnic_rd32(dm, DMNIC_REG_RSS_TBL_SIZE) == DMNIC_RSS_TBL_SIZE)
		dm->rss_tbl_max = DMNIC_RSS_TBL_SIZE;
	dm->rss_num_ctx = min_t(u32, dmnic_rd32(dm, DMNIC_REG_RSS_NUM_CTX),
				dm->rss_tbl_max > DMNIC_RSS_INDIR_SIZE ?
				DMNIC_RSS_NUM_CTX : DMNIC_RSS_NUM_CTX_V11);
	dm->fec_mode = DMNIC_FEC_RS;	/* 1.3: the device's reset value */
	if (dm->caps & DMNIC_CAPS_TSO) {
		/* Default GSO limits fit: IP length <= 64K, no BIG TCP. */
		netdev->hw_features |= NETIF_F_TSO | NETIF_F_TSO6;
	}
	/*
	 * 1.3: UDP segmentation. Not inside tunnels (not in hw_enc_features):
	 * the device fixes only the outermost IP and the one UDP header.
	 */
	if (dm->caps & DMNIC_CAPS_USO)
		netdev->hw_features |= NETIF_F_GSO_UDP_L4;
	/*
	 * 1.3: TCP segmentation inside IP-in-IP, UDP (VXLAN, GENEVE) and GRE
	 * tunnels, with the outer UDP or GRE checksum; checksums of the inner
	 * packet (CSUM_START is generic) for any encapsulation.
	 */
	netdev->hw_enc_features = NETIF_F_SG | NETIF_F_HW_CSUM;
	if (dm->caps & DMNIC_CAPS_TSO)
		netdev->hw_enc_features |= NETIF_F_TSO | NETIF_F_TSO6;
	if ((dm->caps & DMNIC_CAPS_TSO) && (dm->caps & DMNIC_CAPS_TSO_IPXIP))
		netdev->hw_features |= NETIF_F_GSO_IPXIP4 | NETIF_F_GSO_IPXIP6;
	if ((dm->caps & DMNIC_CAPS_TSO) && (dm->caps & DMNIC_CAPS_TSO_TNL))
		netdev->hw_features |= NETIF_F_GSO_UDP_TUNNEL |
				       NETIF_F_GSO_UDP_TUNNEL_CSUM |
				       NETIF_F_GSO_GRE | NETIF_F_GSO_GRE_CSUM;
	netdev->hw_enc_features |= netdev->hw_features & NETIF_F_GSO_ENCAP_ALL;
	/* Off by default, as the stack's own GRO does the same work. */
	if (dm->caps & DMNIC_CAPS_HW_GRO)
		netdev->hw_features |= NETIF_F_GRO_HW;
	if (dm->caps & DMNIC_CAPS_LRO)
		netdev->hw_features |= NETIF_F_LRO;
	/* Flow steering is always on (as in fbnic); the selftests rely on it. */
	netdev->features = (netdev->hw_features & ~(NETIF_F_GRO_HW |
						    NETIF_F_LRO)) |
			   NETIF_F_NTUPLE;
	netdev->vlan_features = netdev->features & ~NETIF_F_NTUPLE;
	/* TCG guests can be slow: only a queue stuck this long is broken */
	netdev->watchdog_timeo = 10 * HZ;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = DMNIC_MAX_MTU;

	dm->num_queues = min_t(u32, dm->max_queues, DMNIC_DEFAULT_QUEUES);
	dm->rx_ring_size = DMNIC_RING_DEFAULT;
	dm->tx_ring_size = DMNIC_RING_DEFAULT;
	dm->hds_enabled = true;
	dmnic_rss_hash_init(dm);
	/* 1.2: a 52-byte key, and the IPv6 flow label as a hash input */
	dm->rss_flow_label = dm->caps & DMNIC_CAPS_RSS_FLOW_LABEL;
	dm->rss_key_size = DMNIC_RSS_KEY_SIZE;
	if (dm->rss_flow_label)
		dm->rss_key_size = clamp_t(u32,
					   dmnic_rd32(dm, DMNIC_REG_RSS_KEY_SIZE),
					   DMNIC_RSS_KEY_SIZE,
					   DMNIC_RSS_KEY_SIZE_MAX) & ~3u;
	netdev_rss_key_fill(dm->rss_key, dm->rss_key_size);
	dm->rss_indir_size = dmnic_rss_indir_size(dm->num_queues,
						  dm->rss_tbl_max);
	dmnic_rss_default(dm);

	netif_set_real_num_queues(netdev, dm->num_queues, dm->num_queues);
	/*
	 * Each queue's IRQ on one CPU (spread from the device's node), kept
	 * by the core across queue rebuilds, a user's setting included.
	 */
	netif_set_affinity_auto(netdev);
	netif_carrier_off(netdev);
}
