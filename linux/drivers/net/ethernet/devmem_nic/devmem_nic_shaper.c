// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: transmit shaping (spec 1.3, "Transmit shaping") through the
 * net_shaper API: bw_max of queue, netdev and node scope shapers, the
 * weight of queues, nodes nested in nodes.
 *
 * The device has a rate limiter per TX queue, one for the whole device and
 * DMNIC_SHAPER_NUM_GROUPS group limiters with a parent each; a node scope
 * shaper takes a group. The core keeps the hierarchy and calls these ops
 * with the netdev instance lock held; the driver keeps what it programmed
 * (dm->shaper, under the same lock) to program it again after a device
 * reset, which clears every limiter. On remove the core forgets the
 * hierarchy and the device reset of dmnic_remove() clears the limiters.
 */

#include <linux/netdevice.h>
#include <net/net_shaper.h>
#include <net/netdev_lock.h>

#include "devmem_nic.h"

/*
 * Whether the ops may write the device: not between a PCI reset's prepare
 * and done (the reset paths detach the netdev), after which
 * dmnic_shaper_program() writes what the ops recorded.
 */
static bool dmnic_shaper_hw(struct dmnic *dm)
{
	return netif_device_present(dm->netdev);
}

static void dmnic_shaper_wr_rate(struct dmnic *dm, u32 base, u64 rate)
{
	/* RATE_LO is latched, the RATE_HI write applies the pair */
	dmnic_wr32(dm, base + DMNIC_SHQ_RATE_LO, lower_32_bits(rate));
	dmnic_wr32(dm, base + DMNIC_SHQ_RATE_HI, upper_32_bits(rate));
}

static void dmnic_shaper_wr(struct dmnic *dm, u32 reg, u32 val)
{
	dmnic_wr32(dm, reg, val);
}

static void dmnic_shaper_net_program(struct dmnic *dm)
{
	dmnic_shaper_wr_rate(dm, DMNIC_REG_SHAPER_NET_RATE_LO,
			     dm->shaper.net_rate);
}

static void dmnic_shaper_q_program(struct dmnic *dm, unsigned int q)
{
	const struct dmnic_shaper_q *sq = &dm->shaper.q[q];

	dmnic_shaper_wr(dm, DMNIC_SHAPER_Q(q) + DMNIC_SHQ_GROUP, sq->group);
	dmnic_shaper_wr(dm, DMNIC_SHAPER_Q(q) + DMNIC_SHQ_WEIGHT, sq->weight);
	dmnic_shaper_wr_rate(dm, DMNIC_SHAPER_Q(q), sq->rate);
}

static void dmnic_shaper_grp_program(struct dmnic *dm, unsigned int g)
{
	const struct dmnic_shaper_grp *sg = &dm->shaper.grp[g];

	dmnic_shaper_wr(dm, DMNIC_SHAPER_GRP(g) + DMNIC_SHG_PARENT, sg->parent);
	dmnic_shaper_wr_rate(dm, DMNIC_SHAPER_GRP(g), sg->rate);
}

/**
 * dmnic_shaper_program - write every limiter the driver set up
 * @dm: the device, just reset (every limiter at its reset value)
 *
 * With the instance lock held, after a device reset.
 */
void dmnic_shaper_program(struct dmnic *dm)
{
	unsigned int i;

	if (!(dm->caps & DMNIC_CAPS_SHAPER))
		return;
	netdev_assert_locked(dm->netdev);
	dmnic_shaper_net_program(dm);
	for (i = 0; i < DMNIC_SHAPER_NUM_GROUPS; i++)
		if (dm->shaper.grp[i].used)
			dmnic_shaper_grp_program(dm, i);
	for (i = 0; i < dm->max_queues; i++)
		dmnic_shaper_q_program(dm, i);
}

/**
 * dmnic_shaper_trim - forget the shapers of queues that went away
 * @dm: the device
 * @num_queues: the queues left
 *
 * The core drops the shapers of TX queues beyond a new, lower count
 * without calling the driver (net_shaper_set_real_num_tx_queues()):
 * their limiters go back to the reset state here. Instance lock held.
 */
void dmnic_shaper_trim(struct dmnic *dm, unsigned int num_queues)
{
	unsigned int q;

	if (!(dm->caps & DMNIC_CAPS_SHAPER))
		return;
	for (q = num_queues; q < dm->max_queues; q++) {
		if (!memchr_inv(&dm->shaper.q[q], 0, sizeof(dm->shaper.q[q])))
			continue;
		memset(&dm->shaper.q[q], 0, sizeof(dm->shaper.q[q]));
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_q_program(dm, q);
	}
}

/* The group of node @id, or -1 */
static int dmnic_shaper_grp_find(struct dmnic *dm, u32 id)
{
	unsigned int g;

	for (g = 0; g < DMNIC_SHAPER_NUM_GROUPS; g++)
		if (dm->shaper.grp[g].used && dm->shaper.grp[g].id == id)
			return g;
	return -1;
}

/* The value of a GROUP or PARENT register for the shaper @h: 0 = device */
static int dmnic_shaper_parent_val(struct dmnic *dm,
				   const struct net_shaper_handle *h,
				   struct netlink_ext_ack *extack)
{
	int g;

	if (h->scope != NET_SHAPER_SCOPE_NODE)
		return 0;
	g = dmnic_shaper_grp_find(dm, h->id);
	if (g < 0) {
		NL_SET_ERR_MSG_FMT(extack, "node %u has no device group", h->id);
		return -ENOENT;
	}
	return g + 1;
}

static int dmnic_shaper_check(const struct net_shaper *shaper,
			      struct netlink_ext_ack *extack)
{
	if (shaper->metric != NET_SHAPER_METRIC_BPS) {
		NL_SET_ERR_MSG(extack, "only the bps metric is supported");
		return -EOPNOTSUPP;
	}
	if (shaper->bw_max > DMNIC_SHAPER_RATE_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "bw-max above the device's %llu bps",
				   DMNIC_SHAPER_RATE_MAX);
		return -ERANGE;
	}
	return 0;
}

static struct dmnic *dmnic_shaper_dm(struct net_shaper_binding *binding)
{
	return netdev_priv(binding->netdev);
}

static int dmnic_shaper_set(struct net_shaper_binding *binding,
			    const struct net_shaper *shaper,
			    struct netlink_ext_ack *extack)
{
	struct dmnic *dm = dmnic_shaper_dm(binding);
	u32 id = shaper->handle.id;
	int err, g;

	netdev_assert_locked(dm->netdev);
	err = dmnic_shaper_check(shaper, extack);
	if (err)
		return err;
	switch (shaper->handle.scope) {
	case NET_SHAPER_SCOPE_NETDEV:
		dm->shaper.net_rate = shaper->bw_max;
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_net_program(dm);
		return 0;
	case NET_SHAPER_SCOPE_QUEUE:
		if (id >= dm->max_queues)
			return -ENOENT;
		dm->shaper.q[id].rate = shaper->bw_max;
		dm->shaper.q[id].weight = shaper->weight;
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_q_program(dm, id);
		return 0;
	case NET_SHAPER_SCOPE_NODE:
		/* the core lets set() change existing nodes only */
		g = dmnic_shaper_grp_find(dm, id);
		if (g < 0)
			return -ENOENT;
		dm->shaper.grp[g].rate = shaper->bw_max;
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_grp_program(dm, g);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int dmnic_shaper_delete(struct net_shaper_binding *binding,
			       const struct net_shaper_handle *handle,
			       struct netlink_ext_ack *extack)
{
	struct dmnic *dm = dmnic_shaper_dm(binding);
	int g;

	netdev_assert_locked(dm->netdev);
	switch (handle->scope) {
	case NET_SHAPER_SCOPE_NETDEV:
		dm->shaper.net_rate = 0;
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_net_program(dm);
		return 0;
	case NET_SHAPER_SCOPE_QUEUE:
		if (handle->id >= dm->max_queues)
			return -ENOENT;
		memset(&dm->shaper.q[handle->id], 0, sizeof(dm->shaper.q[0]));
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_q_program(dm, handle->id);
		return 0;
	case NET_SHAPER_SCOPE_NODE:
		/* the core moved the node's leaves to its parent before */
		g = dmnic_shaper_grp_find(dm, handle->id);
		if (g < 0)
			return 0;
		memset(&dm->shaper.grp[g], 0, sizeof(dm->shaper.grp[g]));
		if (dmnic_shaper_hw(dm))
			dmnic_shaper_grp_program(dm, g);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * Nest @leaves (queues, or nodes when the core moves a deleted node's
 * children up) under @node: the device limiter (netdev scope) or a group
 * (node scope, taken when the node is new). Everything is checked before
 * the first register write, so a failure changes nothing.
 */
static int dmnic_shaper_group(struct net_shaper_binding *binding,
			      int leaves_count,
			      const struct net_shaper *leaves,
			      const struct net_shaper *node,
			      struct netlink_ext_ack *extack)
{
	struct dmnic *dm = dmnic_shaper_dm(binding);
	bool hw = dmnic_shaper_hw(dm);
	int i, g, parent, val = 0, err;

	netdev_assert_locked(dm->netdev);
	err = dmnic_shaper_check(node, extack);
	if (err)
		return err;
	for (i = 0; i < leaves_count; i++) {
		const struct net_shaper *l = &leaves[i];

		err = dmnic_shaper_check(l, extack);
		if (err)
			return err;
		if (l->handle.scope == NET_SHAPER_SCOPE_QUEUE &&
		    l->handle.id >= dm->max_queues)
			return -ENOENT;
		if (l->handle.scope == NET_SHAPER_SCOPE_NODE &&
		    dmnic_shaper_grp_find(dm, l->handle.id) < 0)
			return -ENOENT;
	}
	switch (node->handle.scope) {
	case NET_SHAPER_SCOPE_NETDEV:
		dm->shaper.net_rate = node->bw_max;
		if (hw)
			dmnic_shaper_net_program(dm);
		break;
	case NET_SHAPER_SCOPE_NODE:
		parent = dmnic_shaper_parent_val(dm, &node->parent, extack);
		if (parent < 0)
			return parent;
		g = dmnic_shaper_grp_find(dm, node->handle.id);
		if (g < 0) {
			for (g = 0; g < DMNIC_SHAPER_NUM_GROUPS; g++)
				if (!dm->shaper.grp[g].used)
					break;
			if (g == DMNIC_SHAPER_NUM_GROUPS) {
				NL_SET_ERR_MSG_FMT(extack,
						   "all %u device groups in use",
						   DMNIC_SHAPER_NUM_GROUPS);
				return -ENOSPC;
			}
		}
		dm->shaper.grp[g].used = true;
		dm->shaper.grp[g].id = node->handle.id;
		dm->shaper.grp[g].rate = node->bw_max;
		dm->shaper.grp[g].parent = parent;
		if (hw)
			dmnic_shaper_grp_program(dm, g);
		val = g + 1;
		break;
	default:
		return -EOPNOTSUPP;
	}
	for (i = 0; i < leaves_count; i++) {
		const struct net_shaper *l = &leaves[i];
		int lg;

		if (l->handle.scope == NET_SHAPER_SCOPE_NODE) {
			lg = dmnic_shaper_grp_find(dm, l->handle.id);
			dm->shaper.grp[lg].parent = val;
			if (hw)
				dmnic_shaper_grp_program(dm, lg);
			continue;
		}
		dm->shaper.q[l->handle.id].group = val;
		dm->shaper.q[l->handle.id].rate = l->bw_max;
		dm->shaper.q[l->handle.id].weight = l->weight;
		if (hw)
			dmnic_shaper_q_program(dm, l->handle.id);
	}
	return 0;
}

static void dmnic_shaper_capabilities(struct net_shaper_binding *binding,
				      enum net_shaper_scope scope,
				      unsigned long *flags)
{
	struct dmnic *dm = dmnic_shaper_dm(binding);
	unsigned long caps = BIT(NET_SHAPER_A_CAPS_SUPPORT_METRIC_BPS) |
			     BIT(NET_SHAPER_A_CAPS_SUPPORT_BW_MAX);

	*flags = 0;
	if (!(dm->caps & DMNIC_CAPS_SHAPER))
		return;
	switch (scope) {
	case NET_SHAPER_SCOPE_NETDEV:
		*flags = caps;
		break;
	case NET_SHAPER_SCOPE_QUEUE:
		/* weight: packets per turn under a shared limiter */
		*flags = caps | BIT(NET_SHAPER_A_CAPS_SUPPORT_WEIGHT) |
			 BIT(NET_SHAPER_A_CAPS_SUPPORT_NESTING);
		break;
	case NET_SHAPER_SCOPE_NODE:
		/* a group's parent may be another group */
		*flags = caps | BIT(NET_SHAPER_A_CAPS_SUPPORT_NESTING);
		break;
	default:
		break;
	}
}

const struct net_shaper_ops dmnic_shaper_ops = {
	.group		= dmnic_shaper_group,
	.set		= dmnic_shaper_set,
	.delete		= dmnic_shaper_delete,
	.capabilities	= dmnic_shaper_capabilities,
};
