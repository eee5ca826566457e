// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic PSP offload (docs/specs/devmem-nic.rst, "PSP inline crypto"):
 * psp_dev_ops on the device's PSP registers, and the TX/RX steps the data
 * path calls. The kernel writes the UDP and PSP headers
 * (psp_dev_encapsulate()); the device fills the IV, encrypts and appends
 * the ICV, and on receive decrypts, checks and strips the ICV, leaving the
 * headers for psp_dev_rcv().
 */

#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/etherdevice.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/unaligned.h>
#include <net/psp.h>

#include "devmem_nic.h"

/* devmem_nic.psp=0 (kernel command line or modprobe) leaves PSP off */
static bool psp_enable = true;
module_param_named(psp, psp_enable, bool, 0444);
MODULE_PARM_DESC(psp, "Register the device's PSP offload (default: on)");

/*
 * Locking: the psp_dev_ops run under psd->lock (the PSP core takes it);
 * a device reset takes it too (rtnl -> psd->lock is the core's order),
 * so no command straddles a reset. Between dmnic_psp_reset_prepare()
 * and dmnic_psp_restore() the device is being reset: commands fail with
 * -EBUSY and get_stats reads no register.
 */
struct dmnic_psp {
	struct dmnic *dm;
	struct psp_dev *psd;		/* its drv_priv: this */
	struct psp_dev_caps caps;
	/*
	 * The id part of the last receive SPI handed out under the current
	 * kernel generation. A device reset does not restart it: a new
	 * device key under the same generation must not hand out an SPI
	 * that a pre-reset association holds (spec, "PSP inline crypto").
	 */
	u32 spi_id;
	/* the kernel's generation of the current device key */
	u8 cur_gen;
	/*
	 * The kernel's generation of each device key slot (SPI bit 31) and
	 * its 3-bit device generation: the device counts generations per
	 * slot, so both slots can show the same value.
	 */
	u8 gen_map[2][DMNIC_PSP_STATUS_GEN_MASK + 1];
	/* a device reset is under way; under psd->lock */
	bool resetting;
	/* TX SAs in use; under psd->lock */
	unsigned long *sa_used;
	/* the counters before the last device reset (it clears them) */
	struct psp_dev_stats base;
	/* PSP frames the driver dropped before the device saw them */
	atomic64_t tx_drop;
};

/* Runs a PSP command; the arguments are written already. */
static int dmnic_psp_cmd(struct dmnic *dm, u32 cmd,
			 struct netlink_ext_ack *extack)
{
	u32 res;

	dmnic_wr32(dm, DMNIC_REG_PSP_CMD, cmd);
	res = dmnic_rd32(dm, DMNIC_REG_PSP_STATUS) >> DMNIC_PSP_STATUS_RES_SHIFT;
	switch (res) {
	case DMNIC_PSP_RES_OK:
		return 0;
	case DMNIC_PSP_RES_NO_KEY:
		NL_SET_ERR_MSG(extack, "device key not valid (rotate first)");
		return -ENOKEY;
	case DMNIC_PSP_RES_BAD_ARG:
		NL_SET_ERR_MSG(extack, "device refused the arguments");
		return -EINVAL;
	default:
		NL_SET_ERR_MSG(extack, "device PSP command failed");
		return -EIO;
	}
}

static unsigned int dmnic_psp_key_len(u32 version)
{
	return version & 1 ? 32 : 16;	/* v1, v3: AES-256 */
}

/*
 * The current device key (the slot of the current phase) and its device
 * generation, recorded as the kernel's @gen.
 */
static void dmnic_psp_map_gen(struct dmnic_psp *psp, u8 gen)
{
	u32 st = dmnic_rd32(psp->dm, DMNIC_REG_PSP_STATUS);
	unsigned int slot = st & DMNIC_PSP_STATUS_PHASE ? 1 : 0;
	unsigned int shift = slot ? DMNIC_PSP_STATUS_GEN1_SHIFT :
				    DMNIC_PSP_STATUS_GEN0_SHIFT;

	psp->gen_map[slot][(st >> shift) & DMNIC_PSP_STATUS_GEN_MASK] = gen;
	psp->cur_gen = gen;
}

static int dmnic_psp_busy(struct dmnic_psp *psp,
			  struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&psp->psd->lock);
	if (!psp->resetting)
		return 0;
	NL_SET_ERR_MSG(extack, "device reset in progress, try again");
	return -EBUSY;
}

static int dmnic_psp_set_config(struct psp_dev *psd,
				struct psp_dev_config *conf,
				struct netlink_ext_ack *extack)
{
	struct dmnic_psp *psp = psd->drv_priv;
	struct dmnic *dm = psp->dm;

	/* during a reset dmnic_psp_restore() writes the new config */
	if (!psp->resetting)
		dmnic_wr32(dm, DMNIC_REG_PSP_CTRL,
			   conf->versions & DMNIC_PSP_CTRL_VERSIONS);
	return 0;
}

static int dmnic_psp_key_rotate(struct psp_dev *psd,
				struct netlink_ext_ack *extack)
{
	struct dmnic_psp *psp = psd->drv_priv;
	struct dmnic *dm = psp->dm;
	int err;

	err = dmnic_psp_busy(psp, extack);
	if (!err)
		err = dmnic_psp_cmd(dm, DMNIC_PSP_CMD_ROTATE, extack);
	if (err) {
		/*
		 * The core has set the next generation already and keeps it
		 * on failure: new associations would get a generation no
		 * device key maps to. Back to the current key's.
		 */
		psd->generation = psp->cur_gen;
		return err;
	}
	/* new SPIs carry the new phase; ids restart */
	psp->spi_id = 0;
	dmnic_psp_map_gen(psp, psd->generation);
	return 0;
}

static int dmnic_psp_rx_spi_alloc(struct psp_dev *psd, u32 version,
				  struct psp_key_parsed *assoc,
				  struct netlink_ext_ack *extack)
{
	struct dmnic_psp *psp = psd->drv_priv;
	struct dmnic *dm = psp->dm;
	unsigned int i, klen = dmnic_psp_key_len(version);
	u32 spi, phase;
	int err;

	err = dmnic_psp_busy(psp, extack);
	if (err)
		return err;
	if (psp->spi_id == DMNIC_PSP_SPI_ID_MASK) {
		NL_SET_ERR_MSG(extack, "SPI space exhausted");
		return -ENOSPC;
	}
	phase = dmnic_rd32(dm, DMNIC_REG_PSP_STATUS) & DMNIC_PSP_STATUS_PHASE;
	spi = (phase ? DMNIC_PSP_SPI_PHASE : 0) | (psp->spi_id + 1);
	dmnic_wr32(dm, DMNIC_REG_PSP_SPI, spi);
	dmnic_wr32(dm, DMNIC_REG_PSP_VERSION, version);
	err = dmnic_psp_cmd(dm, DMNIC_PSP_CMD_DERIVE, extack);
	if (!err) {
		psp->spi_id++;
		assoc->spi = cpu_to_be32(spi);
		for (i = 0; i < klen / 4; i++)
			put_unaligned_le32(dmnic_rd32(dm, DMNIC_REG_PSP_KEY +
						      4 * i),
					   assoc->key + 4 * i);
	}
	/* the derived key does not stay in the register file */
	for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++)
		dmnic_wr32(dm, DMNIC_REG_PSP_KEY + 4 * i, 0);
	return err;
}

static int dmnic_psp_tx_key_add(struct psp_dev *psd, struct psp_assoc *pas,
				struct netlink_ext_ack *extack)
{
	struct dmnic_psp *psp = psd->drv_priv;
	struct dmnic *dm = psp->dm;
	unsigned int i, klen = dmnic_psp_key_len(pas->version);
	u32 *sa = psp_assoc_drv_data(pas);
	unsigned long idx;
	int err;

	err = dmnic_psp_busy(psp, extack);
	if (err)
		return err;
	idx = find_first_zero_bit(psp->sa_used, DMNIC_PSP_TX_SA_NUM);
	if (idx >= DMNIC_PSP_TX_SA_NUM) {
		NL_SET_ERR_MSG(extack, "no free TX SA in the device");
		return -ENOSPC;
	}
	dmnic_wr32(dm, DMNIC_REG_PSP_SPI, be32_to_cpu(pas->tx.spi));
	dmnic_wr32(dm, DMNIC_REG_PSP_VERSION, pas->version);
	dmnic_wr32(dm, DMNIC_REG_PSP_SA_INDEX, idx);
	/* the key last, right before the command */
	for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++)
		dmnic_wr32(dm, DMNIC_REG_PSP_KEY + 4 * i, 4 * i < klen ?
			   get_unaligned_le32(pas->tx.key + 4 * i) : 0);
	err = dmnic_psp_cmd(dm, DMNIC_PSP_CMD_SA_WRITE, extack);
	/* the key does not stay in the register file */
	for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++)
		dmnic_wr32(dm, DMNIC_REG_PSP_KEY + 4 * i, 0);
	if (err)
		return err;
	__set_bit(idx, psp->sa_used);
	*sa = idx;
	return 0;
}

static void dmnic_psp_tx_key_del(struct psp_dev *psd, struct psp_assoc *pas)
{
	struct dmnic_psp *psp = psd->drv_priv;
	struct dmnic *dm = psp->dm;
	u32 *sa = psp_assoc_drv_data(pas);

	/* (a device reset clears every SA) */
	if (!psp->resetting) {
		dmnic_wr32(dm, DMNIC_REG_PSP_SA_INDEX, *sa);
		if (dmnic_psp_cmd(dm, DMNIC_PSP_CMD_SA_CLEAR, NULL))
			netdev_warn(dm->netdev,
				    "PSP: clearing TX SA %u failed\n", *sa);
	}
	__clear_bit(*sa, psp->sa_used);
}

static u64 dmnic_psp_rd64(struct dmnic *dm, u32 reg)
{
	return readq(dm->regs + reg);
}

/* The device's PSP counters (since its last reset) */
static void dmnic_psp_hw_stats(struct dmnic *dm, struct psp_dev_stats *stats)
{
	u64 rxp = 0, rxb = 0, txp = 0, txb = 0;
	unsigned int q;

	for (q = 0; q < dm->max_queues; q++) {
		rxp += dmnic_psp_rd64(dm, DMNIC_QREG(q, DMNIC_Q_PSP_RX_PACKETS));
		rxb += dmnic_psp_rd64(dm, DMNIC_QREG(q, DMNIC_Q_PSP_RX_BYTES));
		txp += dmnic_psp_rd64(dm, DMNIC_QREG(q, DMNIC_Q_PSP_TX_PACKETS));
		txb += dmnic_psp_rd64(dm, DMNIC_QREG(q, DMNIC_Q_PSP_TX_BYTES));
	}
	stats->rx_packets = rxp;
	stats->rx_bytes = rxb;
	stats->rx_auth_fail = dmnic_psp_rd64(dm, DMNIC_REG_G_PSP_RX_AUTH_FAIL);
	stats->rx_error = dmnic_psp_rd64(dm, DMNIC_REG_G_PSP_RX_ERROR);
	stats->rx_bad = dmnic_psp_rd64(dm, DMNIC_REG_G_PSP_RX_BAD);
	stats->tx_packets = txp;
	stats->tx_bytes = txb;
	stats->tx_error = dmnic_psp_rd64(dm, DMNIC_REG_G_PSP_TX_ERROR);
}

/*
 * The counters since the driver bound: the device's plus what it counted
 * before its resets (which clear them); during a reset, that base only.
 */
static void dmnic_psp_get_stats(struct psp_dev *psd,
				struct psp_dev_stats *stats)
{
	struct dmnic_psp *psp = psd->drv_priv;
	struct dmnic *dm = psp->dm;
	unsigned int i;

	if (psp->resetting)
		memset(stats, 0, sizeof(*stats));
	else
		dmnic_psp_hw_stats(dm, stats);
	for (i = 0; i < sizeof(*stats) / sizeof(u64); i++)
		stats->required[i] += psp->base.required[i];
	stats->tx_error += atomic64_read(&psp->tx_drop);
}

static struct psp_dev_ops dmnic_psp_ops = {
	.set_config	= dmnic_psp_set_config,
	.key_rotate	= dmnic_psp_key_rotate,
	.rx_spi_alloc	= dmnic_psp_rx_spi_alloc,
	.tx_key_add	= dmnic_psp_tx_key_add,
	.tx_key_del	= dmnic_psp_tx_key_del,
	.get_stats	= dmnic_psp_get_stats,
};

/*
 * After register_netdev(): a device with CAPS_PSP becomes a PSP device.
 * Failure leaves the netdev without PSP (not a probe failure).
 */
void dmnic_psp_init(struct dmnic *dm)
{
	struct dmnic_psp *psp;
	struct psp_dev *psd;

	if (!psp_enable || !(dmnic_rd32(dm, DMNIC_REG_CAPS) & DMNIC_CAPS_PSP))
		return;
	psp = kzalloc_obj(*psp, GFP_KERNEL);
	if (!psp)
		goto err;
	psp->sa_used = bitmap_zalloc(DMNIC_PSP_TX_SA_NUM, GFP_KERNEL);
	if (!psp->sa_used)
		goto err_free;
	psp->caps.versions = BIT(PSP_VERSION_HDR0_AES_GCM_128) |
			     BIT(PSP_VERSION_HDR0_AES_GCM_256) |
			     BIT(PSP_VERSION_HDR0_AES_GMAC_128) |
			     BIT(PSP_VERSION_HDR0_AES_GMAC_256);
	psp->caps.assoc_drv_spc = sizeof(u32);
	psp->dm = dm;

	/* a valid device key to allocate SPIs under, generation 0 */
	if (dmnic_psp_cmd(dm, DMNIC_PSP_CMD_ROTATE, NULL))
		goto err_bitmap;
	dmnic_psp_map_gen(psp, 0);

	psd = psp_dev_create(dm->netdev, &dmnic_psp_ops, &psp->caps, psp);
	if (IS_ERR(psd))
		goto err_bitmap;
	psp->psd = psd;
	/* complete: for the data path and the reset paths */
	smp_store_release(&dm->psp, psp);
	/* a PSP super-frame grows by the encapsulation and the ICV */
	netif_set_tso_max_size(dm->netdev, DMNIC_TX_MAX_FRAME -
			       DMNIC_PSP_ENCAP_LEN - DMNIC_PSP_ICV_LEN);
	return;

err_bitmap:
	bitmap_free(psp->sa_used);
err_free:
	kfree(psp);
err:
	netdev_warn(dm->netdev, "PSP offload not available\n");
}

/*
 * Before a device reset (PCI reset_prepare, or the driver's own reset):
 * waits for a PSP command under way, then keeps new ones off the device
 * until dmnic_psp_restore(), and saves the counters the reset clears.
 */
void dmnic_psp_reset_prepare(struct dmnic *dm)
{
	struct dmnic_psp *psp = dm->psp;
	struct psp_dev_stats hw;
	unsigned int i;

	if (!psp)
		return;
	mutex_lock(&psp->psd->lock);
	if (!psp->resetting) {
		dmnic_psp_hw_stats(dm, &hw);
		for (i = 0; i < sizeof(hw) / sizeof(u64); i++)
			psp->base.required[i] += hw.required[i];
		psp->resetting = true;
	}
	mutex_unlock(&psp->psd->lock);
}

/*
 * After a device reset, which clears the device keys, TX SAs and enabled
 * versions: the versions come back and a new device key is made under
 * the kernel's current generation, so new associations work. Existing
 * ones do not survive: their receive keys derive from a lost device key
 * (their packets fail the ICV, rx-auth-fail, or name a slot with no key,
 * rx-bad) and their TX SAs are gone (their packets are TX errors); a
 * device reset is a loss of PSP state, as on hardware. SPI ids go on
 * from where they were: under the same generation a new association
 * never gets the SPI of a pre-reset one, whose peer could otherwise
 * send into it with the new association's key.
 */
void dmnic_psp_restore(struct dmnic *dm)
{
	struct dmnic_psp *psp = dm->psp;

	if (!psp)
		return;
	mutex_lock(&psp->psd->lock);
	psp->resetting = false;
	dmnic_wr32(dm, DMNIC_REG_PSP_CTRL,
		   psp->psd->config.versions & DMNIC_PSP_CTRL_VERSIONS);
	if (dmnic_psp_cmd(dm, DMNIC_PSP_CMD_ROTATE, NULL)) {
		mutex_unlock(&psp->psd->lock);
		netdev_warn(dm->netdev, "PSP: no device key after reset\n");
		return;
	}
	dmnic_psp_map_gen(psp, psp->psd->generation);
	mutex_unlock(&psp->psd->lock);
	netdev_info(dm->netdev,
		    "PSP: device reset, existing associations lost\n");
}

/*
 * After unregister_netdev(): no xmit and no NAPI poll can still read
 * dm->psp; psp_dev_unregister() waits for a PSP command under way.
 */
void dmnic_psp_fini(struct dmnic *dm)
{
	struct dmnic_psp *psp = dm->psp;

	if (!psp)
		return;
	psp_dev_unregister(psp->psd);
	dm->psp = NULL;
	bitmap_free(psp->sa_used);
	kfree(psp);
}

/*
 * TX: a packet of a PSP socket gets its UDP and PSP headers here.
 * Returns 0 for a packet without PSP, TX SA index + 1 for the descriptor,
 * or a negative error: drop the packet.
 */
int dmnic_psp_xmit(struct dmnic *dm, struct sk_buff *skb)
{
	struct net *net = skb->sk ? sock_net(skb->sk) : dev_net(dm->netdev);
	struct dmnic_psp *psp = READ_ONCE(dm->psp);
	struct psp_assoc *pas;
	int ret = 0;

	rcu_read_lock();
	pas = psp_skb_get_assoc_rcu(skb);
	if (!pas)
		goto out;
	if (!psp || pas->psd != psp->psd ||
	    !psp_dev_encapsulate(net, skb, pas->tx.spi, pas->version, 0) ||
	    skb->len + DMNIC_PSP_ICV_LEN > DMNIC_TX_MAX_FRAME) {
		if (psp)
			atomic64_inc(&psp->tx_drop);
		ret = -EINVAL;
		goto out;
	}
	ret = *(u32 *)psp_assoc_drv_data(pas) + 1;
out:
	rcu_read_unlock();
	return ret;
}

/* A packet dmnic_psp_xmit() encapsulated was dropped before the device */
void dmnic_psp_tx_dropped(struct dmnic *dm)
{
	atomic64_inc(&dm->psp->tx_drop);
}

void dmnic_psp_desc(struct dmnic_tx_desc *d, int psp)
{
	d->psp_flags = cpu_to_le16(DMNIC_TXD_PSP_F_EN);
	d->psp_sa = cpu_to_le32(psp - 1);
}

/*
 * RX: a completion with F_PSP. The device decrypted the frame and removed
 * the ICV; psp_dev_rcv() strips the UDP and PSP headers. skb->data is the
 * MAC header. Returns false to drop the packet.
 */
bool dmnic_psp_rcv(struct dmnic *dm, struct sk_buff *skb, u32 flags)
{
	struct dmnic_psp *psp = READ_ONCE(dm->psp);
	struct psp_skb_ext *pse;

	if (unlikely(!psp))
		return false;
	skb->mac_len = ETH_HLEN;
	if (psp_dev_rcv(skb, psp->psd->id, 0, false))
		return false;
	/*
	 * The generation is the one of the key slot the SPI names (bit 31),
	 * as the device keeps one per slot.
	 */
	pse = skb_ext_find(skb, SKB_EXT_PSP);
	if (unlikely(!pse))
		return false;
	pse->generation = psp->gen_map[be32_to_cpu(pse->spi) >> 31]
				      [FIELD_GET(DMNIC_RXC_F_PSP_GEN_MASK, flags)];
	skb->decrypted = 1;
	return true;
}
