// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: ethtool ops (rings with header split, channels, flow steering,
 * RSS, statistics).
 *
 * The driver is ops locked, so every op here runs with the netdev instance
 * lock held.
 */

#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <net/netdev_lock.h>

#include "devmem_nic.h"

static void dmnic_get_drvinfo(struct net_device *netdev,
			      struct ethtool_drvinfo *info)
{
	struct dmnic *dm = netdev_priv(netdev);
	u32 ver = dmnic_rd32(dm, DMNIC_REG_VERSION);

	strscpy(info->driver, DMNIC_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(dm->pdev), sizeof(info->bus_info));
	snprintf(info->fw_version, sizeof(info->fw_version), "%u.%u",
		 ver >> 16, ver & 0xffff);
}

/* ---- rings and header split ---- */

static void dmnic_get_ringparam(struct net_device *netdev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);

	ring->rx_max_pending = DMNIC_RING_MAX;
	ring->tx_max_pending = DMNIC_RING_MAX;
	ring->rx_pending = dm->rx_ring_size;
	ring->tx_pending = dm->tx_ring_size;

	/* What the queues do: XDP may keep header split off (see
	 * dmnic_hds_active()).
	 */
	kring->tcp_data_split = dmnic_hds_active(dm) ?
				ETHTOOL_TCP_DATA_SPLIT_ENABLED :
				ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	kring->hds_thresh = dm->hds_thresh;
	kring->hds_thresh_max = DMNIC_HDS_THRESH_MAX;
}

static int dmnic_set_ringparam(struct net_device *netdev,
			       struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);
	u32 rx = ring->rx_pending, tx = ring->tx_pending;
	bool hds, old_active, old_cfg_on = dm->hds_cfg_on;
	u32 old_thresh = dm->hds_thresh;
	int err;

	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG_MOD(extack, "mini and jumbo rings not supported");
		return -EINVAL;
	}
	if (rx < DMNIC_RING_MIN || tx < DMNIC_RING_MIN) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "rings must have at least %u entries",
				       DMNIC_RING_MIN);
		return -EINVAL;
	}
	if (kring->hds_thresh > DMNIC_HDS_THRESH_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "hds-thresh too large");
		return -EINVAL;
	}
	if (kring->tcp_data_split == ETHTOOL_TCP_DATA_SPLIT_DISABLED &&
	    dmnic_min_mp_channel_count(netdev)) {
		NL_SET_ERR_MSG_MOD(extack, "a memory provider needs header split");
		return -EINVAL;
	}
	/* The core already checked rx/tx against the maximum. */
	rx = roundup_pow_of_two(rx);
	tx = roundup_pow_of_two(tx);

	/* UNKNOWN means "driver default", which is split on. */
	hds = kring->tcp_data_split != ETHTOOL_TCP_DATA_SPLIT_DISABLED;

	dm->hds_thresh = kring->hds_thresh;
	/* With multi-buffer XDP only an explicit ENABLED splits headers. */
	old_active = dmnic_hds_active(dm);
	dm->hds_cfg_on = kring->tcp_data_split == ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	if (rx == dm->rx_ring_size && tx == dm->tx_ring_size &&
	    hds == dm->hds_enabled && dmnic_hds_active(dm) == old_active) {
		/* Only the threshold may have changed: no queue rebuild. */
		if (netif_running(netdev))
			dmnic_hds_thresh_write(dm);
		return 0;
	}

	/* The new queues program dm->hds_thresh; on failure the old ones,
	 * if restarted, and ethtool -g must see the old value.
	 */
	err = dmnic_reconfigure(dm, dm->num_queues, rx, tx, hds);
	if (err) {
		dm->hds_cfg_on = old_cfg_on;
		dm->hds_thresh = old_thresh;
		/* old queues restarted by the failed rebuild took the new one */
		if (netif_running(netdev) && netif_device_present(netdev))
			dmnic_hds_thresh_write(dm);
	}
	return err;
}

/* ---- channels ---- */

static void dmnic_rss_ctx_write(struct dmnic *dm, u32 ctx);

/*
 * The indirection table the driver shows has 4 entries per queue, rounded
 * up to a power of two (so it divides the @tbl_max entries the device
 * looks up, spec: RSS) and at most @tbl_max (512 with CAPS_RSS_TBL512,
 * else 128): it grows and shrinks with the channel count.
 */
u32 dmnic_rss_indir_size(unsigned int num_queues, u32 tbl_max)
{
	u32 n = roundup_pow_of_two(4 * max(num_queues, 1u));

	return min(n, tbl_max);
}

/* Fold or unfold a periodic table in place, as the ethtool core does. */
void dmnic_rss_indir_resize(u32 *tbl, u32 old_size, u32 new_size)
{
	u32 i;

	for (i = old_size; i < new_size; i++)
		tbl[i] = tbl[i % old_size];
}

static void dmnic_rss_resize_all(struct dmnic *dm, u32 new_size)
{
	u32 old_size = dm->rss_indir_size, ctx;

	/* a user's table of context 0 only: dmnic_rss_default() does the rest */
	ethtool_rxfh_indir_resize(dm->netdev, dm->rss_indir, old_size,
				  new_size);
	for_each_set_bit(ctx, dm->rss_ctx_live, DMNIC_RSS_NUM_CTX)
		dmnic_rss_indir_resize(dm->rss_ctx_indir[ctx], old_size,
				       new_size);
	dm->rss_indir_size = new_size;
}

/*
 * A new channel count resizes the indirection tables (context 0 and every
 * additional context) with it. The core has checked that no table or rule
 * uses a queue that goes away; a table the user set is only folded if it
 * repeats with the new period and is not smaller than what the user gave.
 */
static int dmnic_set_queue_count(struct dmnic *dm, unsigned int nq)
{
	struct net_device *netdev = dm->netdev;
	u32 old_size = dm->rss_indir_size;
	u32 new_size = dmnic_rss_indir_size(nq, dm->rss_tbl_max);
	u32 ctx;
	int err;

	if (new_size != old_size) {
		if (!ethtool_rxfh_indir_can_resize(netdev, dm->rss_indir,
						   old_size, new_size)) {
			netdev_err(netdev,
				   "RSS table of %u entries cannot become %u: reset it first\n",
				   old_size, new_size);
			return -EINVAL;
		}
		err = ethtool_rxfh_ctxs_can_resize(netdev, new_size);
		if (err)
			return err;
		dmnic_rss_resize_all(dm, new_size);
	}

	err = dmnic_reconfigure(dm, nq, dm->rx_ring_size, dm->tx_ring_size,
				dm->hds_enabled);
	if (new_size == old_size)
		return err;
	if (err) {
		/* the old size again: a fold or unfold is undone exactly */
		dmnic_rss_resize_all(dm, old_size);
		dmnic_rss_default(dm);
	} else {
		ethtool_rxfh_ctxs_resize(netdev, new_size);
	}
	/* Around a PCI reset the rebuild after it writes the tables. */
	if (!netif_device_present(netdev))
		return err;
	if (err)
		dmnic_rss_write(dm);
	for_each_set_bit(ctx, dm->rss_ctx_live, DMNIC_RSS_NUM_CTX)
		dmnic_rss_ctx_write(dm, ctx);
	return err;
}

static void dmnic_get_channels(struct net_device *netdev,
			       struct ethtool_channels *ch)
{
	struct dmnic *dm = netdev_priv(netdev);

	ch->max_combined = dm->max_queues;
	ch->combined_count = dm->num_queues;
}

static int dmnic_set_channels(struct net_device *netdev,
			      struct ethtool_channels *ch)
{
	struct dmnic *dm = netdev_priv(netdev);

	/* The core checks the counts against the max and against RSS, ntuple
	 * and memory provider users of the queues that would go away.
	 */
	if (!ch->combined_count || ch->rx_count || ch->tx_count)
		return -EINVAL;
	if (ch->combined_count == dm->num_queues)
		return 0;

	return dmnic_set_queue_count(dm, ch->combined_count);
}

/* ---- flow steering rules ---- */

static bool dmnic_flow_is_v6(u32 flow_type)
{
	return flow_type == TCP_V6_FLOW || flow_type == UDP_V6_FLOW ||
	       flow_type == IPV6_USER_FLOW;
}

/* ethtool flow spec -> driver rule. Masks: set bits are compared. */
int dmnic_rule_from_flow_spec(const struct ethtool_rx_flow_spec *fs,
			      struct dmnic_rule *r)
{
	u32 flow_type = fs->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS);

	memset(r, 0, sizeof(*r));
	/* FLOW_RSS: the caller fills in rss_ctx from ethtool_rxnfc */
	if ((fs->flow_type & FLOW_RSS) && fs->ring_cookie == RX_CLS_FLOW_DISC)
		return -EINVAL;
	r->rss = !!(fs->flow_type & FLOW_RSS);
	if ((fs->flow_type & FLOW_EXT) &&
	    (fs->m_ext.vlan_etype || fs->m_ext.vlan_tci ||
	     fs->m_ext.data[0] || fs->m_ext.data[1]))
		return -EOPNOTSUPP;
	if ((fs->flow_type & FLOW_MAC_EXT) &&
	    !is_zero_ether_addr(fs->m_ext.h_dest))
		return -EOPNOTSUPP;

	switch (flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW: {
		const struct ethtool_tcpip4_spec *v = &fs->h_u.tcp_ip4_spec;
		const struct ethtool_tcpip4_spec *m = &fs->m_u.tcp_ip4_spec;

		if (m->tos)
			return -EOPNOTSUPP;
		r->src_ip[0] = v->ip4src & m->ip4src;
		r->src_ip_mask[0] = m->ip4src;
		r->dst_ip[0] = v->ip4dst & m->ip4dst;
		r->dst_ip_mask[0] = m->ip4dst;
		r->src_port = v->psrc & m->psrc;
		r->src_port_mask = m->psrc;
		r->dst_port = v->pdst & m->pdst;
		r->dst_port_mask = m->pdst;
		break;
	}
	case TCP_V6_FLOW:
	case UDP_V6_FLOW: {
		const struct ethtool_tcpip6_spec *v = &fs->h_u.tcp_ip6_spec;
		const struct ethtool_tcpip6_spec *m = &fs->m_u.tcp_ip6_spec;
		int i;

		if (m->tclass)
			return -EOPNOTSUPP;
		for (i = 0; i < 4; i++) {
			r->src_ip[i] = v->ip6src[i] & m->ip6src[i];
			r->src_ip_mask[i] = m->ip6src[i];
			r->dst_ip[i] = v->ip6dst[i] & m->ip6dst[i];
			r->dst_ip_mask[i] = m->ip6dst[i];
		}
		r->src_port = v->psrc & m->psrc;
		r->src_port_mask = m->psrc;
		r->dst_port = v->pdst & m->pdst;
		r->dst_port_mask = m->pdst;
		break;
	}
	case IPV4_USER_FLOW: {
		const struct ethtool_usrip4_spec *v = &fs->h_u.usr_ip4_spec;
		const struct ethtool_usrip4_spec *m = &fs->m_u.usr_ip4_spec;

		if (m->tos || m->l4_4_bytes || m->proto ||
		    v->ip_ver != ETH_RX_NFC_IP4)
			return -EOPNOTSUPP;
		r->src_ip[0] = v->ip4src & m->ip4src;
		r->src_ip_mask[0] = m->ip4src;
		r->dst_ip[0] = v->ip4dst & m->ip4dst;
		r->dst_ip_mask[0] = m->ip4dst;
		break;
	}
	case IPV6_USER_FLOW: {
		const struct ethtool_usrip6_spec *v = &fs->h_u.usr_ip6_spec;
		const struct ethtool_usrip6_spec *m = &fs->m_u.usr_ip6_spec;
		int i;

		if (m->tclass || m->l4_4_bytes || m->l4_proto)
			return -EOPNOTSUPP;
		for (i = 0; i < 4; i++) {
			r->src_ip[i] = v->ip6src[i] & m->ip6src[i];
			r->src_ip_mask[i] = m->ip6src[i];
			r->dst_ip[i] = v->ip6dst[i] & m->ip6dst[i];
			r->dst_ip_mask[i] = m->ip6dst[i];
		}
		break;
	}
	default:
		return -EOPNOTSUPP;
	}

	r->flow_type = flow_type;
	r->ring_cookie = fs->ring_cookie;
	r->valid = true;
	return 0;
}

void dmnic_rule_to_flow_spec(const struct dmnic_rule *r,
			     struct ethtool_rx_flow_spec *fs)
{
	u32 loc = fs->location;
	int i;

	memset(fs, 0, sizeof(*fs));
	fs->location = loc;
	fs->flow_type = r->flow_type | (r->rss ? FLOW_RSS : 0);
	fs->ring_cookie = r->ring_cookie;

	switch (r->flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
		fs->h_u.tcp_ip4_spec.ip4src = r->src_ip[0];
		fs->m_u.tcp_ip4_spec.ip4src = r->src_ip_mask[0];
		fs->h_u.tcp_ip4_spec.ip4dst = r->dst_ip[0];
		fs->m_u.tcp_ip4_spec.ip4dst = r->dst_ip_mask[0];
		fs->h_u.tcp_ip4_spec.psrc = r->src_port;
		fs->m_u.tcp_ip4_spec.psrc = r->src_port_mask;
		fs->h_u.tcp_ip4_spec.pdst = r->dst_port;
		fs->m_u.tcp_ip4_spec.pdst = r->dst_port_mask;
		break;
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
		for (i = 0; i < 4; i++) {
			fs->h_u.tcp_ip6_spec.ip6src[i] = r->src_ip[i];
			fs->m_u.tcp_ip6_spec.ip6src[i] = r->src_ip_mask[i];
			fs->h_u.tcp_ip6_spec.ip6dst[i] = r->dst_ip[i];
			fs->m_u.tcp_ip6_spec.ip6dst[i] = r->dst_ip_mask[i];
		}
		fs->h_u.tcp_ip6_spec.psrc = r->src_port;
		fs->m_u.tcp_ip6_spec.psrc = r->src_port_mask;
		fs->h_u.tcp_ip6_spec.pdst = r->dst_port;
		fs->m_u.tcp_ip6_spec.pdst = r->dst_port_mask;
		break;
	case IPV4_USER_FLOW:
		fs->h_u.usr_ip4_spec.ip_ver = ETH_RX_NFC_IP4;
		fs->h_u.usr_ip4_spec.ip4src = r->src_ip[0];
		fs->m_u.usr_ip4_spec.ip4src = r->src_ip_mask[0];
		fs->h_u.usr_ip4_spec.ip4dst = r->dst_ip[0];
		fs->m_u.usr_ip4_spec.ip4dst = r->dst_ip_mask[0];
		break;
	case IPV6_USER_FLOW:
		for (i = 0; i < 4; i++) {
			fs->h_u.usr_ip6_spec.ip6src[i] = r->src_ip[i];
			fs->m_u.usr_ip6_spec.ip6src[i] = r->src_ip_mask[i];
			fs->h_u.usr_ip6_spec.ip6dst[i] = r->dst_ip[i];
			fs->m_u.usr_ip6_spec.ip6dst[i] = r->dst_ip_mask[i];
		}
		break;
	}
}

/* Driver rule -> the device's FS data register values. */
void dmnic_rule_encode(const struct dmnic_rule *r, struct dmnic_rule_regs *o)
{
	u32 l4;
	int i;

	memset(o, 0, sizeof(*o));
	if (!r->valid)
		return;

	switch (r->flow_type) {
	case TCP_V4_FLOW:
	case TCP_V6_FLOW:
		l4 = DMNIC_FS_L4_TCP;
		break;
	case UDP_V4_FLOW:
	case UDP_V6_FLOW:
		l4 = DMNIC_FS_L4_UDP;
		break;
	default:
		l4 = DMNIC_FS_L4_ANY;
		break;
	}
	o->ctrl = DMNIC_FS_CTRL_VALID |
		  (dmnic_flow_is_v6(r->flow_type) ? DMNIC_FS_CTRL_IPV6 : 0) |
		  (l4 << DMNIC_FS_CTRL_L4_SHIFT);
	if (r->ring_cookie == RX_CLS_FLOW_DISC)
		o->action = DMNIC_FS_ACTION_DROP;
	else
		o->action = ethtool_get_flow_spec_ring(r->ring_cookie) &
			    DMNIC_FS_ACTION_QUEUE_MASK;
	/* RSS context rule: the queue is a base added to the table entry */
	if (r->rss && r->ring_cookie != RX_CLS_FLOW_DISC)
		o->action |= DMNIC_FS_ACTION_RSS |
			     ((r->rss_ctx << DMNIC_FS_ACTION_CTX_SHIFT) &
			      DMNIC_FS_ACTION_CTX_MASK);
	o->ports = be16_to_cpu(r->src_port) |
		   (u32)be16_to_cpu(r->dst_port) << 16;
	o->ports_mask = be16_to_cpu(r->src_port_mask) |
			(u32)be16_to_cpu(r->dst_port_mask) << 16;
	/* Address word n holds bytes 4n..4n+3, byte 4n in bits 31:24. */
	for (i = 0; i < 4; i++) {
		o->src_ip[i] = be32_to_cpu(r->src_ip[i]);
		o->src_ip_mask[i] = be32_to_cpu(r->src_ip_mask[i]);
		o->dst_ip[i] = be32_to_cpu(r->dst_ip[i]);
		o->dst_ip_mask[i] = be32_to_cpu(r->dst_ip_mask[i]);
	}
}

/* Write rule @loc (or its absence) into the device's rule table. */
static void dmnic_rule_write(struct dmnic *dm, unsigned int loc)
{
	struct dmnic_rule_regs o;
	int i;

	dmnic_rule_encode(&dm->rules[loc], &o);
	dmnic_wr32(dm, DMNIC_REG_FS_INDEX, loc);
	dmnic_wr32(dm, DMNIC_REG_FS_CTRL, o.ctrl);
	dmnic_wr32(dm, DMNIC_REG_FS_ACTION, o.action);
	dmnic_wr32(dm, DMNIC_REG_FS_PORTS, o.ports);
	dmnic_wr32(dm, DMNIC_REG_FS_PORTS_MASK, o.ports_mask);
	for (i = 0; i < 4; i++) {
		dmnic_wr32(dm, DMNIC_REG_FS_SRC_IP + 4 * i, o.src_ip[i]);
		dmnic_wr32(dm, DMNIC_REG_FS_SRC_IP_MASK + 4 * i,
			   o.src_ip_mask[i]);
		dmnic_wr32(dm, DMNIC_REG_FS_DST_IP + 4 * i, o.dst_ip[i]);
		dmnic_wr32(dm, DMNIC_REG_FS_DST_IP_MASK + 4 * i,
			   o.dst_ip_mask[i]);
	}
	/* The whole rule is stored at once: no half rule ever matches. */
	dmnic_wr32(dm, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_WRITE);
}

/* The steering state: RSS context tables, then the rules that use them. */
void dmnic_rules_write_all(struct dmnic *dm)
{
	unsigned int loc;
	u32 ctx;

	for_each_set_bit(ctx, dm->rss_ctx_live, DMNIC_RSS_NUM_CTX)
		dmnic_rss_ctx_write(dm, ctx);
	dmnic_wr32(dm, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_CLEAR_ALL);
	for (loc = 0; loc < DMNIC_NUM_RULES; loc++)
		if (dm->rules[loc].valid)
			dmnic_rule_write(dm, loc);
}

static int dmnic_rule_count(struct dmnic *dm)
{
	unsigned int loc;
	int n = 0;

	for (loc = 0; loc < DMNIC_NUM_RULES; loc++)
		n += dm->rules[loc].valid;
	return n;
}

static int dmnic_get_rule(struct dmnic *dm, struct ethtool_rxnfc *cmd)
{
	struct ethtool_rx_flow_spec *fs = &cmd->fs;
	const struct dmnic_rule *r;

	if (fs->location >= DMNIC_NUM_RULES)
		return -EINVAL;
	r = &dm->rules[fs->location];
	if (!r->valid)
		return -ENOENT;

	dmnic_rule_to_flow_spec(r, fs);
	if (r->rss) {
		/* the core reads the top level flow_type for channel limits */
		cmd->flow_type |= FLOW_RSS;
		cmd->rss_context = r->rss_ctx;
	}
	return 0;
}

static int dmnic_get_rule_locs(struct dmnic *dm, struct ethtool_rxnfc *cmd,
			       u32 *locs)
{
	unsigned int loc, n = 0;

	cmd->data = DMNIC_NUM_RULES;
	for (loc = 0; loc < DMNIC_NUM_RULES; loc++) {
		if (!dm->rules[loc].valid)
			continue;
		if (n == cmd->rule_cnt)
			return -EMSGSIZE;
		locs[n++] = loc;
	}
	cmd->rule_cnt = n;
	return 0;
}

static int dmnic_get_rxnfc(struct net_device *netdev,
			   struct ethtool_rxnfc *cmd, u32 *rule_locs)
{
	struct dmnic *dm = netdev_priv(netdev);

	switch (cmd->cmd) {
	case ETHTOOL_GRXCLSRLCNT:
		cmd->rule_cnt = dmnic_rule_count(dm);
		/* We pick the slot for RX_CLS_LOC_ANY ourselves. */
		cmd->data = DMNIC_NUM_RULES | RX_CLS_LOC_SPECIAL;
		return 0;
	case ETHTOOL_GRXCLSRULE:
		return dmnic_get_rule(dm, cmd);
	case ETHTOOL_GRXCLSRLALL:
		return dmnic_get_rule_locs(dm, cmd, rule_locs);
	default:
		return -EOPNOTSUPP;
	}
}

/* Whether two rules match the same frames (actions aside). */
bool dmnic_rule_same_match(const struct dmnic_rule *a,
			   const struct dmnic_rule *b)
{
	return a->flow_type == b->flow_type &&
	       !memcmp(a->src_ip, b->src_ip, sizeof(a->src_ip)) &&
	       !memcmp(a->src_ip_mask, b->src_ip_mask, sizeof(a->src_ip_mask)) &&
	       !memcmp(a->dst_ip, b->dst_ip, sizeof(a->dst_ip)) &&
	       !memcmp(a->dst_ip_mask, b->dst_ip_mask, sizeof(a->dst_ip_mask)) &&
	       a->src_port == b->src_port &&
	       a->src_port_mask == b->src_port_mask &&
	       a->dst_port == b->dst_port &&
	       a->dst_port_mask == b->dst_port_mask;
}

static u32 dmnic_rss_table_max(struct dmnic *dm, u32 ctx)
{
	const u32 *tbl = ctx ? dm->rss_ctx_indir[ctx] : dm->rss_indir;
	u32 max = 0;
	unsigned int i;

	for (i = 0; i < dm->rss_indir_size; i++)
		max = max(max, tbl[i]);
	return max;
}

/* A rule to RSS context @ctx adds @base to the context's table entries. */
static int dmnic_rule_rss_check(struct dmnic *dm, u32 ctx, u64 base)
{
	if (ctx >= DMNIC_RSS_NUM_CTX ||
	    (ctx && !test_bit(ctx, dm->rss_ctx_live)))
		return -EINVAL;
	if (base + dmnic_rss_table_max(dm, ctx) >= dm->num_queues)
		return -EINVAL;
	return 0;
}

/*
 * Whether indirection table @indir may replace that of RSS context @ctx:
 * every flow rule to the context adds its base queue to the entries, and
 * the sum must stay a queue (the device drops frames to a queue it does
 * not have). Returns the location of the first rule it would break, or -1.
 */
int dmnic_rss_rules_conflict(const struct dmnic_rule *rules,
			     unsigned int nrules, u32 ctx, const u32 *indir,
			     unsigned int indir_size, unsigned int num_queues)
{
	unsigned int i, loc;
	u32 max = 0;

	for (i = 0; i < indir_size; i++)
		max = max(max, indir[i]);
	for (loc = 0; loc < nrules; loc++) {
		const struct dmnic_rule *r = &rules[loc];

		if (!r->valid || !r->rss || r->rss_ctx != ctx ||
		    r->ring_cookie == RX_CLS_FLOW_DISC)
			continue;
		if (ethtool_get_flow_spec_ring(r->ring_cookie) + max >=
		    num_queues)
			return loc;
	}
	return -1;
}

static int dmnic_rss_indir_check(struct dmnic *dm, u32 ctx, const u32 *indir,
				 struct netlink_ext_ack *extack)
{
	int loc;

	if (!indir)
		return 0;
	loc = dmnic_rss_rules_conflict(dm->rules, DMNIC_NUM_RULES, ctx, indir,
				       dm->rss_indir_size, dm->num_queues);
	if (loc < 0)
		return 0;
	NL_SET_ERR_MSG_FMT_MOD(extack,
			       "flow rule %d adds its base queue %llu to this table: queue out of range",
			       loc,
			       ethtool_get_flow_spec_ring(dm->rules[loc].ring_cookie));
	return -EBUSY;
}

static int dmnic_add_rule(struct dmnic *dm, struct ethtool_rxnfc *cmd)
{
	struct ethtool_rx_flow_spec *fs = &cmd->fs;
	struct dmnic_rule rule;
	unsigned int loc;
	int err;

	if (fs->ring_cookie != RX_CLS_FLOW_DISC &&
	    (ethtool_get_flow_spec_ring_vf(fs->ring_cookie) ||
	     ethtool_get_flow_spec_ring(fs->ring_cookie) >= dm->num_queues))
		return -EINVAL;

	err = dmnic_rule_from_flow_spec(fs, &rule);
	if (err)
		return err;
	if (rule.rss) {
		err = dmnic_rule_rss_check(dm, cmd->rss_context,
					   ethtool_get_flow_spec_ring(fs->ring_cookie));
		if (err)
			return err;
		rule.rss_ctx = cmd->rss_context;
	}

	if (fs->location == RX_CLS_LOC_ANY) {
		/* Lowest free slot: rules match in slot order. */
		for (loc = 0; loc < DMNIC_NUM_RULES; loc++)
			if (!dm->rules[loc].valid)
				break;
		if (loc == DMNIC_NUM_RULES)
			return -ENOSPC;
		fs->location = loc;
	} else if (fs->location >= DMNIC_NUM_RULES) {
		return -EINVAL;
	}
	/* The same match in another slot: one of the two could never match
	 * (the lowest slot wins). Refuse it, as bnxt does.
	 */
	for (loc = 0; loc < DMNIC_NUM_RULES; loc++)
		if (loc != fs->location && dm->rules[loc].valid &&
		    dmnic_rule_same_match(&dm->rules[loc], &rule))
			return -EEXIST;

	dm->rules[fs->location] = rule;
	dmnic_rule_write(dm, fs->location);
	return 0;
}

static int dmnic_del_rule(struct dmnic *dm, struct ethtool_rxnfc *cmd)
{
	unsigned int loc = cmd->fs.location;

	if (loc >= DMNIC_NUM_RULES || !dm->rules[loc].valid)
		return -ENOENT;
	memset(&dm->rules[loc], 0, sizeof(dm->rules[loc]));
	dmnic_rule_write(dm, loc);
	return 0;
}

static int dmnic_set_rxnfc(struct net_device *netdev, struct ethtool_rxnfc *cmd)
{
	struct dmnic *dm = netdev_priv(netdev);

	switch (cmd->cmd) {
	case ETHTOOL_SRXCLSRLINS:
		return dmnic_add_rule(dm, cmd);
	case ETHTOOL_SRXCLSRLDEL:
		return dmnic_del_rule(dm, cmd);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---- RSS ---- */

static bool dmnic_has_caps(struct dmnic *dm, u32 caps)
{
	return (dmnic_rd32(dm, DMNIC_REG_CAPS) & caps) == caps;
}

static u32 dmnic_get_rx_ring_count(struct net_device *netdev)
{
	struct dmnic *dm = netdev_priv(netdev);

	return dm->num_queues;
}

static u32 dmnic_get_rxfh_indir_size(struct net_device *netdev)
{
	struct dmnic *dm = netdev_priv(netdev);

	return dm->rss_indir_size;
}

static u32 dmnic_get_rxfh_key_size(struct net_device *netdev)
{
	struct dmnic *dm = netdev_priv(netdev);

	return dm->rss_key_size;
}

/* Hash key, fields and input transformation: shared by all contexts. */
static int dmnic_rss_hash_check(struct dmnic *dm,
				const struct ethtool_rxfh_param *rxfh,
				struct netlink_ext_ack *extack)
{
	if (rxfh->hfunc != ETH_RSS_HASH_NO_CHANGE &&
	    rxfh->hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack, "only Toeplitz hashing is supported");
		return -EOPNOTSUPP;
	}
	if (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE && rxfh->input_xfrm &&
	    (rxfh->input_xfrm != RXH_XFRM_SYM_XOR ||
	     !dmnic_has_caps(dm, DMNIC_CAPS_RSS_HFIELDS))) {
		NL_SET_ERR_MSG_MOD(extack, "input transformation not supported");
		return -EOPNOTSUPP;
	}
	return 0;
}

static int dmnic_get_rxfh(struct net_device *netdev,
			  struct ethtool_rxfh_param *rxfh)
{
	struct dmnic *dm = netdev_priv(netdev);

	rxfh->hfunc = ETH_RSS_HASH_TOP;
	rxfh->input_xfrm = dm->rss_sym_xor ? RXH_XFRM_SYM_XOR : 0;
	if (rxfh->indir)
		memcpy(rxfh->indir, dm->rss_indir,
		       dm->rss_indir_size * sizeof(*rxfh->indir));
	if (rxfh->key)
		memcpy(rxfh->key, dm->rss_key, dm->rss_key_size);
	return 0;
}

/* Context 0; the core sends other contexts to the *_rxfh_context ops. */
static int dmnic_set_rxfh(struct net_device *netdev,
			  struct ethtool_rxfh_param *rxfh,
			  struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);
	int err;

	err = dmnic_rss_hash_check(dm, rxfh, extack);
	if (err)
		return err;
	err = dmnic_rss_indir_check(dm, 0, rxfh->indir, extack);
	if (err)
		return err;
	if (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE)
		dm->rss_sym_xor = rxfh->input_xfrm == RXH_XFRM_SYM_XOR;
	if (rxfh->indir)
		memcpy(dm->rss_indir, rxfh->indir,
		       dm->rss_indir_size * sizeof(*rxfh->indir));
	if (rxfh->key)
		memcpy(dm->rss_key, rxfh->key, dm->rss_key_size);
	/*
	 * Write only what changed: a key alone is REG_RSS_KEY_SIZE / 4
	 * registers, not the whole RSS state, so rehashing under load is
	 * quick (rss_ctx.py hitless_key_update).
	 */
	if (rxfh->indir || rxfh->input_xfrm != RXH_XFRM_NO_CHANGE)
		dmnic_rss_write(dm);
	else if (rxfh->key)
		dmnic_rss_key_write(dm);
	return 0;
}

/* Hash type (DMNIC_RSS_TYPE_*) of an ethtool flow type, or -EOPNOTSUPP. */
int dmnic_rss_hash_type(u32 flow_type)
{
	switch (flow_type) {
	case IPV4_FLOW:
		return DMNIC_RSS_TYPE_IPV4;
	case TCP_V4_FLOW:
		return DMNIC_RSS_TYPE_IPV4_TCP;
	case UDP_V4_FLOW:
		return DMNIC_RSS_TYPE_IPV4_UDP;
	case IPV6_FLOW:
		return DMNIC_RSS_TYPE_IPV6;
	case TCP_V6_FLOW:
		return DMNIC_RSS_TYPE_IPV6_TCP;
	case UDP_V6_FLOW:
		return DMNIC_RSS_TYPE_IPV6_UDP;
	default:
		return -EOPNOTSUPP;
	}
}

static bool dmnic_rss_type_has_ports(int type)
{
	return type != DMNIC_RSS_TYPE_IPV4 && type != DMNIC_RSS_TYPE_IPV6;
}

/* Reset value of REG_RSS_HFIELDS(type): addresses, and ports for L4 types */
u32 dmnic_rss_hf_default(int type)
{
	return dmnic_rss_type_has_ports(type) ? DMNIC_RSS_HF_ALL :
						DMNIC_RSS_HF_IP;
}

u64 dmnic_rss_hf_to_rxh(u32 hf)
{
	return (hf & DMNIC_RSS_HF_IP_SRC ? RXH_IP_SRC : 0) |
	       (hf & DMNIC_RSS_HF_IP_DST ? RXH_IP_DST : 0) |
	       (hf & DMNIC_RSS_HF_L4_SRC ? RXH_L4_B_0_1 : 0) |
	       (hf & DMNIC_RSS_HF_L4_DST ? RXH_L4_B_2_3 : 0) |
	       (hf & DMNIC_RSS_HF_IP6_FL ? RXH_IP6_FL : 0);
}

/*
 * ethtool RXH_* fields of @flow_type -> REG_RSS_HFIELDS value; @fl: the
 * device hashes the IPv6 flow label (CAPS_RSS_FLOW_LABEL)
 */
int dmnic_rss_rxh_to_hf(u32 flow_type, u64 rxh, bool fl, u32 *hf)
{
	int type = dmnic_rss_hash_type(flow_type);
	u64 ok = RXH_IP_SRC | RXH_IP_DST;

	if (type < 0)
		return type;
	if (dmnic_rss_type_has_ports(type))
		ok |= RXH_L4_B_0_1 | RXH_L4_B_2_3;
	if (fl && type >= DMNIC_RSS_TYPE_IPV6)
		ok |= RXH_IP6_FL;
	if (rxh & ~ok)
		return -EINVAL;
	*hf = (rxh & RXH_IP_SRC ? DMNIC_RSS_HF_IP_SRC : 0) |
	      (rxh & RXH_IP_DST ? DMNIC_RSS_HF_IP_DST : 0) |
	      (rxh & RXH_L4_B_0_1 ? DMNIC_RSS_HF_L4_SRC : 0) |
	      (rxh & RXH_L4_B_2_3 ? DMNIC_RSS_HF_L4_DST : 0) |
	      (rxh & RXH_IP6_FL ? DMNIC_RSS_HF_IP6_FL : 0);
	return 0;
}

void dmnic_rss_hash_init(struct dmnic *dm)
{
	int t;

	for (t = DMNIC_RSS_TYPE_IPV4; t <= DMNIC_RSS_NUM_TYPES; t++)
		dm->rss_hfields[t - 1] = dmnic_rss_hf_default(t);
	dm->rss_sym_xor = false;
	bitmap_zero(dm->rss_ctx_live, DMNIC_RSS_NUM_CTX);
}

/* Hash fields and RSS_CTRL; called by dmnic_rss_write() */
void dmnic_rss_hash_write(struct dmnic *dm)
{
	u32 ctrl = DMNIC_RSS_CTRL_ENABLE;
	int t;

	/* the tables were written at RSS_TBL: look up hash & 511 */
	if (dm->rss_tbl_max > DMNIC_RSS_INDIR_SIZE)
		ctrl |= DMNIC_RSS_CTRL_TBL512;

	if (dmnic_has_caps(dm, DMNIC_CAPS_RSS_HFIELDS)) {
		for (t = DMNIC_RSS_TYPE_IPV4; t <= DMNIC_RSS_NUM_TYPES; t++)
			dmnic_wr32(dm, DMNIC_REG_RSS_HFIELDS(t),
				   dm->rss_hfields[t - 1]);
		if (dm->rss_sym_xor)
			ctrl |= DMNIC_RSS_CTRL_SYM_XOR;
	} else {
		/* A 1.0 device: the defaults, which set_rxfh_fields keeps. */
		dmnic_wr32(dm, DMNIC_REG_RSS_FIELDS, DMNIC_RSS_F_ALL);
	}
	dmnic_wr32(dm, DMNIC_REG_RSS_CTRL, ctrl);
}

static int dmnic_get_rxfh_fields(struct net_device *netdev,
				 struct ethtool_rxfh_fields *f)
{
	struct dmnic *dm = netdev_priv(netdev);
	int type = dmnic_rss_hash_type(f->flow_type);

	if (type < 0)
		return type;
	f->data = dmnic_rss_hf_to_rxh(dm->rss_hfields[type - 1]);
	return 0;
}

static int dmnic_set_rxfh_fields(struct net_device *netdev,
				 const struct ethtool_rxfh_fields *f,
				 struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);
	int type = dmnic_rss_hash_type(f->flow_type);
	u32 hf;
	int err;

	err = dmnic_rss_rxh_to_hf(f->flow_type, f->data, dm->rss_flow_label,
				  &hf);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack, "unsupported hash fields for this flow type");
		return err;
	}
	if (hf == dm->rss_hfields[type - 1])
		return 0;
	if (!dmnic_has_caps(dm, DMNIC_CAPS_RSS_HFIELDS)) {
		NL_SET_ERR_MSG_MOD(extack, "device cannot select hash fields");
		return -EOPNOTSUPP;
	}
	dm->rss_hfields[type - 1] = hf;
	dmnic_wr32(dm, DMNIC_REG_RSS_HFIELDS(type), hf);
	return 0;
}

/*
 * Additional RSS contexts 1..DMNIC_RSS_NUM_CTX-1: an indirection table each
 * (key, fields and input_xfrm are device wide). Flow rules with FLOW_RSS
 * select them.
 */
static void dmnic_rss_ctx_write(struct dmnic *dm, u32 ctx)
{
	dmnic_rss_tbl_write(dm, ctx, dm->rss_ctx_indir[ctx]);
}

static int dmnic_create_rxfh_context(struct net_device *netdev,
				     struct ethtool_rxfh_context *ctx,
				     const struct ethtool_rxfh_param *rxfh,
				     struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);
	u32 id = rxfh->rss_context;
	unsigned int i;
	int err;

	if (!dmnic_has_caps(dm, DMNIC_CAPS_RSS_CTX)) {
		NL_SET_ERR_MSG_MOD(extack, "device has no additional RSS contexts");
		return -EOPNOTSUPP;
	}
	if (!id || id >= dm->rss_num_ctx) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "the device has %u RSS contexts",
				       dm->rss_num_ctx);
		return -EINVAL;
	}
	err = dmnic_rss_hash_check(dm, rxfh, extack);
	if (err)
		return err;

	if (rxfh->indir) {
		memcpy(dm->rss_ctx_indir[id], rxfh->indir,
		       dm->rss_indir_size * sizeof(*rxfh->indir));
	} else {
		/* Tell the core which table is in use: the default spread. */
		for (i = 0; i < dm->rss_indir_size; i++)
			dm->rss_ctx_indir[id][i] =
				ethtool_rxfh_indir_default(i, dm->num_queues);
		memcpy(ethtool_rxfh_context_indir(ctx), dm->rss_ctx_indir[id],
		       dm->rss_indir_size * sizeof(u32));
	}
	ctx->hfunc = ETH_RSS_HASH_TOP;
	ctx->input_xfrm = dm->rss_sym_xor ? RXH_XFRM_SYM_XOR : 0;
	set_bit(id, dm->rss_ctx_live);
	dmnic_rss_ctx_write(dm, id);
	return 0;
}

static int dmnic_modify_rxfh_context(struct net_device *netdev,
				     struct ethtool_rxfh_context *ctx,
				     const struct ethtool_rxfh_param *rxfh,
				     struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);
	u32 id = rxfh->rss_context;
	int err;

	if (id >= DMNIC_RSS_NUM_CTX || !test_bit(id, dm->rss_ctx_live))
		return -ENOENT;
	err = dmnic_rss_hash_check(dm, rxfh, extack);
	if (err)
		return err;
	if (rxfh->key || (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE &&
			  !!rxfh->input_xfrm != dm->rss_sym_xor)) {
		NL_SET_ERR_MSG_MOD(extack, "key and input_xfrm are device wide");
		return -EOPNOTSUPP;
	}
	err = dmnic_rss_indir_check(dm, id, rxfh->indir, extack);
	if (err)
		return err;
	if (rxfh->indir) {
		memcpy(dm->rss_ctx_indir[id], rxfh->indir,
		       dm->rss_indir_size * sizeof(*rxfh->indir));
		dmnic_rss_ctx_write(dm, id);
	}
	return 0;
}

static int dmnic_remove_rxfh_context(struct net_device *netdev,
				     struct ethtool_rxfh_context *ctx,
				     u32 rss_context,
				     struct netlink_ext_ack *extack)
{
	struct dmnic *dm = netdev_priv(netdev);
	unsigned int i;

	if (rss_context >= DMNIC_RSS_NUM_CTX ||
	    !test_bit(rss_context, dm->rss_ctx_live))
		return -ENOENT;
	/* The core refuses while a flow rule uses the context. */
	clear_bit(rss_context, dm->rss_ctx_live);
	for (i = 0; i < DMNIC_RSS_TBL_SIZE; i++)
		dm->rss_ctx_indir[rss_context][i] =
			ethtool_rxfh_indir_default(i, dm->num_queues);
	dmnic_rss_ctx_write(dm, rss_context);
	return 0;
}

/* ---- statistics ---- */

static const char dmnic_rx_stat_names[][ETH_GSTRING_LEN] = {
	"packets", "bytes", "csum_unnecessary", "csum_none", "hds_split",
	"alloc_fail", "drops", "xdp_drops", "xdp_tx", "xdp_tx_errors",
	"xdp_redirect",
};

static const char dmnic_tx_stat_names[][ETH_GSTRING_LEN] = {
	"packets", "bytes", "csum_offload", "stop", "wake", "dropped",
	"xdp_tx",
};

/* The device's own counters, kept across resets (struct dmnic_hw_*). */
static const char dmnic_global_stat_names[][ETH_GSTRING_LEN] = {
	"hw_rx_drop_rule", "hw_rx_drop_badq", "hw_rx_drop_link", "hw_rx_runt",
	"rx_queue_restarts", "tx_queue_restarts",
};

/* "rx" or "tx", queue number, then the name */
static const char dmnic_hw_q_stat_names[][ETH_GSTRING_LEN] = {
	"rx_hw_drop_nobuf", "rx_hw_drop_disabled", "rx_hw_csum_bad",
	"rx_hw_errors", "tx_hw_errors",
};

#define DMNIC_RX_NSTATS ARRAY_SIZE(dmnic_rx_stat_names)
#define DMNIC_TX_NSTATS ARRAY_SIZE(dmnic_tx_stat_names)
#define DMNIC_G_NSTATS ARRAY_SIZE(dmnic_global_stat_names)
#define DMNIC_HWQ_NSTATS ARRAY_SIZE(dmnic_hw_q_stat_names)
#define DMNIC_Q_NSTATS (DMNIC_RX_NSTATS + DMNIC_TX_NSTATS + DMNIC_HWQ_NSTATS)

static int dmnic_get_sset_count(struct net_device *netdev, int sset)
{
	struct dmnic *dm = netdev_priv(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return DMNIC_G_NSTATS + dm->max_queues * DMNIC_Q_NSTATS;
}

static void dmnic_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct dmnic *dm = netdev_priv(netdev);
	unsigned int q, i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < DMNIC_G_NSTATS; i++)
		ethtool_puts(&data, dmnic_global_stat_names[i]);
	for (q = 0; q < dm->max_queues; q++) {
		for (i = 0; i < DMNIC_RX_NSTATS; i++)
			ethtool_sprintf(&data, "rx%u_%s", q, dmnic_rx_stat_names[i]);
		for (i = 0; i < DMNIC_TX_NSTATS; i++)
			ethtool_sprintf(&data, "tx%u_%s", q, dmnic_tx_stat_names[i]);
		for (i = 0; i < DMNIC_HWQ_NSTATS; i++)
			ethtool_sprintf(&data, "%.2s%u_%s", dmnic_hw_q_stat_names[i],
					q, dmnic_hw_q_stat_names[i] + 3);
	}
}

static void dmnic_get_ethtool_stats(struct net_device *netdev,
				    struct ethtool_stats *stats, u64 *data)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_hw_gstats hg;
	unsigned int q, start;

	dmnic_hw_gstats_get(dm, &hg);
	*data++ = hg.rx_drop_rule;
	*data++ = hg.rx_drop_badq;
	*data++ = hg.rx_drop_link;
	*data++ = hg.rx_runt;
	*data++ = READ_ONCE(dm->qerr_rx);
	*data++ = READ_ONCE(dm->qerr_tx);

	for (q = 0; q < dm->max_queues; q++) {
		struct dmnic_napi *qv = q < dm->num_queues ? dm->qv[q] : NULL;
		const struct dmnic_rx_stats *rs;
		const struct dmnic_tx_stats *ts;
		struct dmnic_hw_qstats hq;

		if (!qv) {
			memset(data, 0, sizeof(u64) *
			       (DMNIC_RX_NSTATS + DMNIC_TX_NSTATS));
			data += DMNIC_RX_NSTATS + DMNIC_TX_NSTATS;
			goto hw;
		}
		rs = &qv->rx.stats;
		do {
			start = u64_stats_fetch_begin(&rs->syncp);
			data[0] = rs->packets;
			data[1] = rs->bytes;
			data[2] = rs->csum_unnecessary;
			data[3] = rs->csum_none;
			data[4] = rs->hds_split;
			data[5] = rs->alloc_fail;
			data[6] = rs->drops;
			data[7] = rs->xdp_drops;
			data[8] = rs->xdp_tx;
			data[9] = rs->xdp_tx_errors;
			data[10] = rs->xdp_redirect;
		} while (u64_stats_fetch_retry(&rs->syncp, start));
		data += DMNIC_RX_NSTATS;
		ts = &qv->tx.stats;
		do {
			start = u64_stats_fetch_begin(&ts->syncp);
			data[0] = ts->packets;
			data[1] = ts->bytes;
			data[2] = ts->csum_offload;
			data[3] = ts->stop;
			data[4] = ts->wake;
			data[5] = ts->dropped;
			data[6] = ts->xdp_tx;
		} while (u64_stats_fetch_retry(&ts->syncp, start));
		data += DMNIC_TX_NSTATS;
hw:
		dmnic_hw_qstats_get(dm, q, &hq);
		*data++ = hq.rx_drop_nobuf;
		*data++ = hq.rx_drop_disabled;
		*data++ = hq.rx_csum_bad;
		*data++ = hq.rx_errors;
		*data++ = hq.tx_errors;
	}
}

const struct ethtool_ops dmnic_ethtool_ops = {
	.supported_ring_params	= ETHTOOL_RING_USE_TCP_DATA_SPLIT |
				  ETHTOOL_RING_USE_HDS_THRS,
	.supported_input_xfrm	= RXH_XFRM_SYM_XOR,
	.cap_rss_rxnfc_adds	= true,
	.rxfh_max_num_contexts	= DMNIC_RSS_NUM_CTX,
	/* room for the largest table the channel count can ask for */
	.rxfh_indir_space	= DMNIC_RSS_TBL_SIZE,
	/* Rebuilding the queues changes real_num_*_queues (qdiscs): rtnl. */
	.op_needs_rtnl		= ETHTOOL_OP_NEEDS_RTNL_SCHANNELS |
				  ETHTOOL_OP_NEEDS_RTNL_SRINGPARAM,
	.get_drvinfo		= dmnic_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_ringparam		= dmnic_get_ringparam,
	.set_ringparam		= dmnic_set_ringparam,
	.get_channels		= dmnic_get_channels,
	.set_channels		= dmnic_set_channels,
	.get_rxnfc		= dmnic_get_rxnfc,
	.set_rxnfc		= dmnic_set_rxnfc,
	.get_rx_ring_count	= dmnic_get_rx_ring_count,
	.get_rxfh_indir_size	= dmnic_get_rxfh_indir_size,
	.get_rxfh_key_size	= dmnic_get_rxfh_key_size,
	.get_rxfh		= dmnic_get_rxfh,
	.set_rxfh		= dmnic_set_rxfh,
	.get_rxfh_fields	= dmnic_get_rxfh_fields,
	.set_rxfh_fields	= dmnic_set_rxfh_fields,
	.create_rxfh_context	= dmnic_create_rxfh_context,
	.modify_rxfh_context	= dmnic_modify_rxfh_context,
	.remove_rxfh_context	= dmnic_remove_rxfh_context,
	.get_sset_count		= dmnic_get_sset_count,
	.get_strings		= dmnic_get_strings,
	.get_ethtool_stats	= dmnic_get_ethtool_stats,
	/* devmem_nic_mac.c: 1.3 pause frames and FEC */
	.get_pauseparam		= dmnic_get_pauseparam,
	.set_pauseparam		= dmnic_set_pauseparam,
	.get_pause_stats	= dmnic_get_pause_stats,
	.get_fecparam		= dmnic_get_fecparam,
	.set_fecparam		= dmnic_set_fecparam,
	.get_fec_stats		= dmnic_get_fec_stats,
	.get_ts_info		= dmnic_get_ts_info,	/* devmem_nic_ptp.c */
};
