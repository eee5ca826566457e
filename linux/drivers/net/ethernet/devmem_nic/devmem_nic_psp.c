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

struct dmnic_psp {
	struct psp_dev *psd;
	struct psp_dev_caps caps;
	/* the id part of the last receive SPI handed out, per phase */
	u32 spi_id;
	/* the kernel's generation of each device generation (3 bits) */
	u8 gen_map[DMNIC_PSP_STATUS_GEN_MASK + 1];
	/* TX SAs in use; under psd->lock */
	unsigned long *sa_used;
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

/* The current phase's device generation, recorded as the kernel's @gen */
static void dmnic_psp_map_gen(struct dmnic *dm, u8 gen)
{
	u32 st = dmnic_rd32(dm, DMNIC_REG_PSP_STATUS);
	unsigned int shift = st & DMNIC_PSP_STATUS_PHASE ?
			     DMNIC_PSP_STATUS_GEN1_SHIFT :
			     DMNIC_PSP_STATUS_GEN0_SHIFT;

	dm->psp->gen_map[(st >> shift) & DMNIC_PSP_STATUS_GEN_MASK] = gen;
}

static int dmnic_psp_set_config(struct psp_dev *psd,
				struct psp_dev_config *conf,
				struct netlink_ext_ack *extack)
{
	struct dmnic *dm = psd->drv_priv;

	dmnic_wr32(dm, DMNIC_REG_PSP_CTRL,
		   conf->versions & DMNIC_PSP_CTRL_VERSIONS);
	return 0;
}

static int dmnic_psp_key_rotate(struct psp_dev *psd,
				struct netlink_ext_ack *extack)
{
	struct dmnic *dm = psd->drv_priv;
	int err;

	err = dmnic_psp_cmd(dm, DMNIC_PSP_CMD_ROTATE, extack);
	if (err)
		return err;
	/* new SPIs carry the new phase; ids restart */
	dm->psp->spi_id = 0;
	dmnic_psp_map_gen(dm, psd->generation);
	return 0;
}

static int dmnic_psp_rx_spi_alloc(struct psp_dev *psd, u32 version,
				  struct psp_key_parsed *assoc,
				  struct netlink_ext_ack *extack)
{
	struct dmnic *dm = psd->drv_priv;
	struct dmnic_psp *psp = dm->psp;
	unsigned int i, klen = dmnic_psp_key_len(version);
	u32 spi, phase;
	int err;

	if (psp->spi_id == DMNIC_PSP_SPI_ID_MASK) {
		NL_SET_ERR_MSG(extack, "SPI space exhausted");
		return -ENOSPC;
	}
	phase = dmnic_rd32(dm, DMNIC_REG_PSP_STATUS) & DMNIC_PSP_STATUS_PHASE;
	spi = (phase ? DMNIC_PSP_SPI_PHASE : 0) | (psp->spi_id + 1);
	dmnic_wr32(dm, DMNIC_REG_PSP_SPI, spi);
	dmnic_wr32(dm, DMNIC_REG_PSP_VERSION, version);
	err = dmnic_psp_cmd(dm, DMNIC_PSP_CMD_DERIVE, extack);
	if (err)
		return err;
	psp->spi_id++;
	assoc->spi = cpu_to_be32(spi);
	for (i = 0; i < klen / 4; i++)
		put_unaligned_le32(dmnic_rd32(dm, DMNIC_REG_PSP_KEY + 4 * i),
				   assoc->key + 4 * i);
	return 0;
}

static int dmnic_psp_tx_key_add(struct psp_dev *psd, struct psp_assoc *pas,
				struct netlink_ext_ack *extack)
{
	struct dmnic *dm = psd->drv_priv;
	struct dmnic_psp *psp = dm->psp;
	unsigned int i, klen = dmnic_psp_key_len(pas->version);
	u32 *sa = psp_assoc_drv_data(pas);
	unsigned long idx;
	int err;

	idx = find_first_zero_bit(psp->sa_used, DMNIC_PSP_TX_SA_NUM);
	if (idx >= DMNIC_PSP_TX_SA_NUM) {
		NL_SET_ERR_MSG(extack, "no free TX SA in the device");
		return -ENOSPC;
	}
	for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++)
		dmnic_wr32(dm, DMNIC_REG_PSP_KEY + 4 * i, 4 * i < klen ?
			   get_unaligned_le32(pas->tx.key + 4 * i) : 0);
	dmnic_wr32(dm, DMNIC_REG_PSP_SPI, be32_to_cpu(pas->tx.spi));
	dmnic_wr32(dm, DMNIC_REG_PSP_VERSION, pas->version);
	dmnic_wr32(dm, DMNIC_REG_PSP_SA_INDEX, idx);
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
	struct dmnic *dm = psd->drv_priv;
	u32 *sa = psp_assoc_drv_data(pas);

	dmnic_wr32(dm, DMNIC_REG_PSP_SA_INDEX, *sa);
	if (dmnic_psp_cmd(dm, DMNIC_PSP_CMD_SA_CLEAR, NULL))
		netdev_warn(dm->netdev, "PSP: clearing TX SA %u failed\n", *sa);
	__clear_bit(*sa, dm->psp->sa_used);
}

static u64 dmnic_psp_rd64(struct dmnic *dm, u32 reg)
{
	return readq(dm->regs + reg);
}

static void dmnic_psp_get_stats(struct psp_dev *psd,
				struct psp_dev_stats *stats)
{
	struct dmnic *dm = psd->drv_priv;
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
	stats->tx_error = dmnic_psp_rd64(dm, DMNIC_REG_G_PSP_TX_ERROR) +
			  atomic64_read(&dm->psp->tx_drop);
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
	dm->psp = psp;

	/* a valid device key to allocate SPIs under, generation 0 */
	if (dmnic_psp_cmd(dm, DMNIC_PSP_CMD_ROTATE, NULL))
		goto err_bitmap;
	dmnic_psp_map_gen(dm, 0);

	psd = psp_dev_create(dm->netdev, &dmnic_psp_ops, &psp->caps, dm);
	if (IS_ERR(psd))
		goto err_bitmap;
	psp->psd = psd;
	/* a PSP super-frame grows by the encapsulation and the ICV */
	netif_set_tso_max_size(dm->netdev, DMNIC_TX_MAX_FRAME -
			       DMNIC_PSP_ENCAP_LEN - DMNIC_PSP_ICV_LEN);
	return;

err_bitmap:
	dm->psp = NULL;
	bitmap_free(psp->sa_used);
err_free:
	kfree(psp);
err:
	netdev_warn(dm->netdev, "PSP offload not available\n");
}

/*
 * After a device reset, which clears the device keys, TX SAs and enabled
 * versions: the versions come back and a new device key is made (under
 * the kernel's current generation), so new associations work. Existing
 * ones do not survive: their receive keys derive from the lost device key
 * (their packets fail the ICV, counted in rx-auth-fail) and their TX SAs
 * are gone (their packets are TX errors); a device reset is a loss of
 * PSP state, as on hardware.
 */
void dmnic_psp_restore(struct dmnic *dm)
{
	struct dmnic_psp *psp = dm->psp;

	if (!psp)
		return;
	dmnic_wr32(dm, DMNIC_REG_PSP_CTRL,
		   psp->psd->config.versions & DMNIC_PSP_CTRL_VERSIONS);
	if (dmnic_psp_cmd(dm, DMNIC_PSP_CMD_ROTATE, NULL)) {
		netdev_warn(dm->netdev, "PSP: no device key after reset\n");
		return;
	}
	psp->spi_id = 0;
	dmnic_psp_map_gen(dm, psp->psd->generation);
	netdev_info(dm->netdev,
		    "PSP: device reset, existing associations lost\n");
}

/* Before unregister_netdev() */
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
	struct dmnic_psp *psp = dm->psp;
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
	struct dmnic_psp *psp = dm->psp;
	u8 gen;

	if (unlikely(!psp))
		return false;
	gen = psp->gen_map[FIELD_GET(DMNIC_RXC_F_PSP_GEN_MASK, flags)];
	skb->mac_len = ETH_HLEN;
	if (psp_dev_rcv(skb, psp->psd->id, gen, false))
		return false;
	skb->decrypted = 1;
	return true;
}
