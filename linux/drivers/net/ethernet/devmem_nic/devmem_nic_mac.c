// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: pause frames and FEC (spec 1.3, "Pause frames and FEC"):
 * ethtool pause and FEC parameters and their standard statistics.
 *
 * The driver is ops locked: every ethtool op here runs with the netdev
 * instance lock held, as do the reset paths that fold the device's counters
 * into the base.
 */

#include <linux/ethtool.h>
#include <linux/netdevice.h>

#include "devmem_nic.h"

static void dmnic_hw_mstats_read(struct dmnic *dm, struct dmnic_hw_mstats *m)
{
	unsigned int k;

	memset(m, 0, sizeof(*m));
	if (dm->caps & DMNIC_CAPS_PAUSE) {
		m->pause_rx = dmnic_rd64(dm, DMNIC_REG_G_PAUSE_RX);
		m->pause_tx = dmnic_rd64(dm, DMNIC_REG_G_PAUSE_TX);
	}
	if (!(dm->caps & DMNIC_CAPS_FEC))
		return;
	m->fec_corrected = dmnic_rd64(dm, DMNIC_REG_G_FEC_CORRECTED);
	m->fec_uncorr = dmnic_rd64(dm, DMNIC_REG_G_FEC_UNCORR);
	m->fec_corr_bits = dmnic_rd64(dm, DMNIC_REG_G_FEC_CORR_BITS);
	for (k = 0; k < DMNIC_FEC_HIST_BINS; k++)
		m->fec_hist[k] = dmnic_rd64(dm, DMNIC_REG_G_FEC_HIST(k));
}

static void dmnic_hw_mstats_add(struct dmnic_hw_mstats *sum,
				const struct dmnic_hw_mstats *m)
{
	unsigned int k;

	sum->pause_rx += m->pause_rx;
	sum->pause_tx += m->pause_tx;
	sum->fec_corrected += m->fec_corrected;
	sum->fec_uncorr += m->fec_uncorr;
	sum->fec_corr_bits += m->fec_corr_bits;
	for (k = 0; k < DMNIC_FEC_HIST_BINS; k++)
		sum->fec_hist[k] += m->fec_hist[k];
}

/* The counters since probe: the base kept across resets plus the device's. */
static void dmnic_hw_mstats_get(struct dmnic *dm, struct dmnic_hw_mstats *m)
{
	struct dmnic_hw_mstats now;

	*m = dm->hw_base_m;
	if (READ_ONCE(dm->hw_stats_frozen))
		return;
	dmnic_hw_mstats_read(dm, &now);
	dmnic_hw_mstats_add(m, &now);
}

/* Before a device reset (called by dmnic_hw_stats_freeze()). */
void dmnic_hw_mstats_freeze(struct dmnic *dm)
{
	struct dmnic_hw_mstats now;

	dmnic_hw_mstats_read(dm, &now);
	dmnic_hw_mstats_add(&dm->hw_base_m, &now);
}

/*
 * After a reset (the device forgets) and at open: the user's pause, FEC
 * and timestamping settings.
 */
void dmnic_mac_program(struct dmnic *dm)
{
	if (dm->caps & DMNIC_CAPS_PTP)
		dmnic_wr32(dm, DMNIC_REG_PTP_CTRL, dmnic_ptp_ctrl(dm));
	if (dm->caps & DMNIC_CAPS_PAUSE)
		dmnic_wr32(dm, DMNIC_REG_PAUSE_CTRL, dm->pause_ctrl);
	if (dm->caps & DMNIC_CAPS_FEC)
		dmnic_wr32(dm, DMNIC_REG_FEC_CTRL, dm->fec_mode);
}

/* ---- pause ---- */

void dmnic_get_pauseparam(struct net_device *netdev,
			  struct ethtool_pauseparam *pause)
{
	struct dmnic *dm = netdev_priv(netdev);

	pause->autoneg = 0;	/* no link partner negotiation on the cable */
	pause->rx_pause = !!(dm->pause_ctrl & DMNIC_PAUSE_CTRL_RX);
	pause->tx_pause = !!(dm->pause_ctrl & DMNIC_PAUSE_CTRL_TX);
}

int dmnic_set_pauseparam(struct net_device *netdev,
			 struct ethtool_pauseparam *pause)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (!(dm->caps & DMNIC_CAPS_PAUSE) || pause->autoneg)
		return -EOPNOTSUPP;
	dm->pause_ctrl = (pause->rx_pause ? DMNIC_PAUSE_CTRL_RX : 0) |
			 (pause->tx_pause ? DMNIC_PAUSE_CTRL_TX : 0);
	dmnic_mac_program(dm);
	return 0;
}

void dmnic_get_pause_stats(struct net_device *netdev,
			   struct ethtool_pause_stats *stats)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_hw_mstats m;

	/* a device before 1.3 has no counters: nothing is reported */
	if (!(dm->caps & DMNIC_CAPS_PAUSE))
		return;
	dmnic_hw_mstats_get(dm, &m);
	stats->tx_pause_frames = m.pause_tx;
	stats->rx_pause_frames = m.pause_rx;
}

/* ---- FEC ---- */

/* Codewords by corrected symbols: one bin each, 0..15, then the end. */
static const struct ethtool_fec_hist_range dmnic_fec_ranges[] = {
	{ 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 }, { 5, 5 },
	{ 6, 6 }, { 7, 7 }, { 8, 8 }, { 9, 9 }, { 10, 10 }, { 11, 11 },
	{ 12, 12 }, { 13, 13 }, { 14, 14 }, { 15, 15 }, { 0, 0 },
};

static_assert(ARRAY_SIZE(dmnic_fec_ranges) == DMNIC_FEC_HIST_BINS + 1);
static_assert(ARRAY_SIZE(dmnic_fec_ranges) <= ETHTOOL_FEC_HIST_MAX);

int dmnic_get_fecparam(struct net_device *netdev,
		       struct ethtool_fecparam *fec)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (!(dm->caps & DMNIC_CAPS_FEC))
		return -EOPNOTSUPP;
	fec->active_fec = dm->fec_mode == DMNIC_FEC_RS ? ETHTOOL_FEC_RS :
							 ETHTOOL_FEC_OFF;
	/* configured: what was set (the mode AUTO picked, and AUTO) */
	fec->fec = fec->active_fec | (dm->fec_auto ? ETHTOOL_FEC_AUTO : 0);
	return 0;
}

int dmnic_set_fecparam(struct net_device *netdev,
		       struct ethtool_fecparam *fec)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (!(dm->caps & DMNIC_CAPS_FEC))
		return -EOPNOTSUPP;
	switch (fec->fec) {
	case ETHTOOL_FEC_RS:
	case ETHTOOL_FEC_AUTO:
		dm->fec_mode = DMNIC_FEC_RS;
		break;
	case ETHTOOL_FEC_OFF:
		dm->fec_mode = DMNIC_FEC_OFF;
		break;
	default:
		return -EINVAL;
	}
	dm->fec_auto = fec->fec == ETHTOOL_FEC_AUTO;
	dmnic_mac_program(dm);
	return 0;
}

void dmnic_get_fec_stats(struct net_device *netdev,
			 struct ethtool_fec_stats *stats,
			 struct ethtool_fec_hist *hist)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_hw_mstats m;
	unsigned int k;

	/* a device before 1.3 has no counters: nothing is reported */
	if (!(dm->caps & DMNIC_CAPS_FEC))
		return;
	dmnic_hw_mstats_get(dm, &m);
	stats->corrected_blocks.total = m.fec_corrected;
	stats->uncorrectable_blocks.total = m.fec_uncorr;
	stats->corrected_bits.total = m.fec_corr_bits;
	hist->ranges = dmnic_fec_ranges;
	for (k = 0; k < DMNIC_FEC_HIST_BINS; k++)
		hist->values[k].sum = m.fec_hist[k];
}
