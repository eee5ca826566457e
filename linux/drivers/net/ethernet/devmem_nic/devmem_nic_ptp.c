// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: the PTP hardware clock and packet timestamps (spec 1.3, "PTP
 * clock and timestamps"): a ptp_clock_info on the device's clock, the
 * hardware timestamping configuration (ndo_hwtstamp_get/set, netlink and
 * ioctl alike) and get_ts_info. The data path reads the stamps from the
 * per-queue arrays (devmem_nic_txrx.c).
 */

#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/netdevice.h>
#include <linux/ptp_clock_kernel.h>

#include "devmem_nic.h"

static struct dmnic *dmnic_from_ptp(struct ptp_clock_info *info)
{
	return container_of(info, struct dmnic, ptp_info);
}

/* PTP_ARG then PTP_CMD, under ptp_lock. */
static void dmnic_ptp_cmd(struct dmnic *dm, u32 cmd, u64 arg)
{
	dmnic_wr32(dm, DMNIC_REG_PTP_ARG_LO, lower_32_bits(arg));
	dmnic_wr32(dm, DMNIC_REG_PTP_ARG_HI, upper_32_bits(arg));
	dmnic_wr32(dm, DMNIC_REG_PTP_CMD, cmd);
}

static int dmnic_ptp_gettimex64(struct ptp_clock_info *info,
				struct timespec64 *ts,
				struct ptp_system_timestamp *sts)
{
	struct dmnic *dm = dmnic_from_ptp(info);
	unsigned long flags;
	u64 ns;

	spin_lock_irqsave(&dm->ptp_lock, flags);
	ptp_read_system_prets(sts);
	/* one 64-bit read: TIME_LO samples, TIME_HI is the sample's */
	ns = dmnic_rd64(dm, DMNIC_REG_PTP_TIME_LO);
	ptp_read_system_postts(sts);
	spin_unlock_irqrestore(&dm->ptp_lock, flags);
	*ts = ns_to_timespec64(ns);
	return 0;
}

static int dmnic_ptp_settime64(struct ptp_clock_info *info,
			       const struct timespec64 *ts)
{
	struct dmnic *dm = dmnic_from_ptp(info);
	unsigned long flags;

	spin_lock_irqsave(&dm->ptp_lock, flags);
	dmnic_ptp_cmd(dm, DMNIC_PTP_CMD_SET, timespec64_to_ns(ts));
	spin_unlock_irqrestore(&dm->ptp_lock, flags);
	return 0;
}

static int dmnic_ptp_adjtime(struct ptp_clock_info *info, s64 delta)
{
	struct dmnic *dm = dmnic_from_ptp(info);
	unsigned long flags;

	spin_lock_irqsave(&dm->ptp_lock, flags);
	dmnic_ptp_cmd(dm, DMNIC_PTP_CMD_ADJ, (u64)delta);
	spin_unlock_irqrestore(&dm->ptp_lock, flags);
	return 0;
}

static int dmnic_ptp_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct dmnic *dm = dmnic_from_ptp(info);
	s32 ppb = scaled_ppm_to_ppb(scaled_ppm);

	/* the core keeps requests within max_adj */
	dmnic_wr32(dm, DMNIC_REG_PTP_ADJ_PPB, (u32)ppb);
	return 0;
}

static const struct ptp_clock_info dmnic_ptp_info = {
	.owner		= THIS_MODULE,
	.name		= "devmem-nic",
	.max_adj	= DMNIC_PTP_MAX_ADJ,
	.adjfine	= dmnic_ptp_adjfine,
	.adjtime	= dmnic_ptp_adjtime,
	.gettimex64	= dmnic_ptp_gettimex64,
	.settime64	= dmnic_ptp_settime64,
};

/*
 * Before register_netdev() (and dmnic_ptp_fini() after unregister_netdev()):
 * a CAPS_PTP device gets a PHC set to real time.
 */
void dmnic_ptp_init(struct dmnic *dm)
{
	struct timespec64 now;
	struct ptp_clock *clock;

	spin_lock_init(&dm->ptp_lock);
	if (!(dm->caps & DMNIC_CAPS_PTP))
		return;
	dm->ptp_info = dmnic_ptp_info;
	ktime_get_real_ts64(&now);
	dmnic_ptp_settime64(&dm->ptp_info, &now);
	clock = ptp_clock_register(&dm->ptp_info, &dm->pdev->dev);
	if (IS_ERR(clock)) {
		dev_warn(&dm->pdev->dev, "no PTP clock: %pe\n", clock);
		clock = NULL;
	}
	dm->ptp_clock = clock;
}

void dmnic_ptp_fini(struct dmnic *dm)
{
	if (dm->ptp_clock)
		ptp_clock_unregister(dm->ptp_clock);
	dm->ptp_clock = NULL;
}

/* PTP_CTRL for the configuration (after a reset too: the device forgets). */
u32 dmnic_ptp_ctrl(const struct dmnic *dm)
{
	u32 ctrl = 0;

	if (dm->hwts.rx_filter != HWTSTAMP_FILTER_NONE)
		ctrl |= DMNIC_PTP_CTRL_RX_TS;
	if (dm->hwts.tx_type == HWTSTAMP_TX_ON)
		ctrl |= DMNIC_PTP_CTRL_TX_TS;
	return ctrl;
}

int dmnic_hwtstamp_get(struct net_device *netdev,
		       struct kernel_hwtstamp_config *cfg)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (!dm->ptp_clock)
		return -EOPNOTSUPP;
	cfg->flags = 0;
	cfg->tx_type = dm->hwts.tx_type;
	cfg->rx_filter = dm->hwts.rx_filter;
	return 0;
}

/* Every packet or none: a PTP filter is widened to ALL (allowed). */
int dmnic_hwtstamp_set(struct net_device *netdev,
		       struct kernel_hwtstamp_config *cfg,
		       struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (!dm->ptp_clock)
		return -EOPNOTSUPP;
	if (cfg->flags)
		return -EINVAL;
	switch (cfg->tx_type) {
	case HWTSTAMP_TX_OFF:
	case HWTSTAMP_TX_ON:
		break;
	default:
		NL_SET_ERR_MSG_MOD(extack, "only TX timestamps off or on");
		return -ERANGE;
	}
	switch (cfg->rx_filter) {
	case HWTSTAMP_FILTER_NONE:
		break;
	case HWTSTAMP_FILTER_ALL:
	case HWTSTAMP_FILTER_SOME:
	case HWTSTAMP_FILTER_PTP_V1_L4_EVENT ... HWTSTAMP_FILTER_PTP_V2_DELAY_REQ:
	case HWTSTAMP_FILTER_NTP_ALL:
		cfg->rx_filter = HWTSTAMP_FILTER_ALL;
		break;
	default:
		return -ERANGE;
	}
	dm->hwts.tx_type = cfg->tx_type;
	dm->hwts.rx_filter = cfg->rx_filter;
	dmnic_wr32(dm, DMNIC_REG_PTP_CTRL, dmnic_ptp_ctrl(dm));
	return 0;
}

int dmnic_get_ts_info(struct net_device *netdev,
		      struct kernel_ethtool_ts_info *info)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (!dm->ptp_clock)
		return ethtool_op_get_ts_info(netdev, info);
	info->so_timestamping = SOF_TIMESTAMPING_TX_SOFTWARE |
				SOF_TIMESTAMPING_TX_HARDWARE |
				SOF_TIMESTAMPING_RX_HARDWARE |
				SOF_TIMESTAMPING_RAW_HARDWARE;
	info->phc_index = ptp_clock_index(dm->ptp_clock);
	info->tx_types = BIT(HWTSTAMP_TX_OFF) | BIT(HWTSTAMP_TX_ON);
	info->rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_ALL);
	return 0;
}
