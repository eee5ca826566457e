// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-nic: data path.
 *
 * RX: every queue posts header buffers (readable page_pool, half pages) and
 * payload buffers (a page_pool that may hand out unreadable net_iovs when a
 * memory provider such as devmem is bound to the queue). The device writes
 * one completion per payload buffer; the driver copies the headers into
 * the skb's linear area and attaches the payload buffers as netmem frags.
 *
 * TX: gather descriptors, checksum offload. Frags that are net_iovs
 * (devmem TX) carry DMA addresses owned by the binding: they are never
 * mapped or unmapped here.
 *
 * XDP: with a program attached the header buffers are whole pages with
 * XDP headroom and room for skb_shared_info, and header split is off
 * (unless a multi-buffer program runs and tcp-data-split was explicitly
 * enabled). The header buffer is the xdp_buff's linear part; the payload
 * buffers of a longer frame become its frags. A single buffer program gets
 * only frames without frags (up to the XDP MTU); others are dropped.
 * XDP_PASS builds the skb around the buffers (xdp_build_skb_from_buff),
 * XDP_TX sends the header buffer and frags as one multi-descriptor packet
 * on the TX ring of the same queue pair, XDP_REDIRECT hands them to
 * xdp_do_redirect(). XDP never sees unreadable memory: the core refuses XDP
 * while a memory provider is bound, and vice versa.
 *
 * AF_XDP zero-copy: a queue pair with an XSK pool (and an XDP program)
 * posts UMEM frames as its header buffers, no payload buffer and no
 * header split, so the device writes each frame whole into one UMEM frame
 * (longer ones it drops for want of payload buffers, Q_RX_DROP_NOBUF).
 * XDP_REDIRECT to the socket is then zero-copy, XDP_PASS copies into an
 * skb, XDP_TX sends the UMEM frame. The socket's TX descriptors go on the
 * pair's TX ring (shared with the stack under the TX queue lock) from the
 * NAPI poll, which ndo_xsk_wakeup schedules.
 */

#include <kunit/static_stub.h>
#include <linux/dma-mapping.h>
#include <linux/error-injection.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/gro.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/netdev_queues.h>
#include <net/tcp.h>
#include <net/netmem.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>

#include "devmem_nic.h"

/* ---- pure helpers (KUnit) ---- */

unsigned int dmnic_ring_used(u32 head, u32 tail, u32 size)
{
	return (tail - head) & (size - 1);
}

/*
 * Free entries of a posting ring; one entry always stays empty. A KUnit test
 * can stand in for it (static stub: nothing but a static key test when no
 * test runs) to land a TX completion between xmit's free space read and its
 * queue stop.
 */
unsigned int dmnic_ring_space(u32 head, u32 tail, u32 size)
{
	KUNIT_STATIC_STUB_REDIRECT(dmnic_ring_space, head, tail, size);
	return size - 1 - dmnic_ring_used(head, tail, size);
}

static bool dmnic_skb_is_uso(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->gso_type & SKB_GSO_UDP_L4;
}

void dmnic_tx_desc_fill(struct dmnic_tx_desc *d, dma_addr_t addr, u32 len,
			u16 id, bool eop, const struct sk_buff *csum_skb)
{
	u16 flags = eop ? DMNIC_TXD_F_EOP : 0;

	memset(d, 0, sizeof(*d));
	d->addr = cpu_to_le64(addr);
	d->len = cpu_to_le32(len);
	d->id = cpu_to_le16(id);
	if (csum_skb) {
		flags |= DMNIC_TXD_F_CSUM;
		d->csum_start = cpu_to_le16(skb_checksum_start_offset(csum_skb));
		d->csum_offset = cpu_to_le16(csum_skb->csum_offset);
		/* TSO/USO: the stack's partial csum already points at the
		 * TCP or UDP header and its check field, as the device wants.
		 */
		if (skb_is_gso(csum_skb)) {
			u32 gso_type = skb_shinfo(csum_skb)->gso_type;

			flags |= dmnic_skb_is_uso(csum_skb) ? DMNIC_TXD_F_USO :
							       DMNIC_TXD_F_TSO;
			d->mss = cpu_to_le16(skb_shinfo(csum_skb)->gso_size);
			/* 1.3: a UDP or GRE tunnel names its inner IP header;
			 * IP-in-IP needs nothing (spec: TSO).
			 */
			if (gso_type & DMNIC_GSO_TNL)
				d->tnl_inner = cpu_to_le16(skb_inner_network_offset(csum_skb));
			if (gso_type & SKB_GSO_UDP_TUNNEL_CSUM)
				flags |= DMNIC_TXD_F_TNL_CSUM;
		}
	}
	d->flags = cpu_to_le16(flags);
}

/*
 * Header bytes each segment of GSO skb @skb carries: the device copies them
 * to every segment (spec: TSO, USO).
 */
u32 dmnic_gso_hdr_len(const struct sk_buff *skb)
{
	if (dmnic_skb_is_uso(skb))
		return skb_transport_offset(skb) + sizeof(struct udphdr);
	/* tunnels: through the inner TCP header */
	if (skb->encapsulation)
		return skb_inner_tcp_all_headers(skb);
	return skb_tcp_all_headers(skb);
}

bool dmnic_rx_cmpl_valid(const struct dmnic_rx_cmpl *c, u32 gen)
{
	return (le32_to_cpu(READ_ONCE(c->flags)) & DMNIC_RXC_F_GEN) == gen;
}

bool dmnic_tx_cmpl_valid(const struct dmnic_tx_cmpl *c, u32 gen)
{
	return (le32_to_cpu(READ_ONCE(c->flags)) & DMNIC_TXC_F_GEN) == gen;
}

/*
 * Whether TX completion @c describes the packet the driver queued at ring
 * slot @head (@first, its first descriptor's buffer), with @used
 * descriptors on the ring: same ID, descriptor count and frame length. A
 * completion that does not is lost or corrupted; its length must never
 * reach BQL (dql_completed() BUGs on more bytes than were queued).
 */
bool dmnic_tx_cmpl_matches(const struct dmnic_tx_cmpl *c, u32 head,
			   unsigned int used, const struct dmnic_tx_buf *first)
{
	unsigned int ndesc = le16_to_cpu(c->ndesc);

	return le16_to_cpu(c->id) == head && ndesc && ndesc <= used &&
	       ndesc == first->pkt_ndesc &&
	       le32_to_cpu(c->len) == first->pkt_bytes;
}

enum dmnic_rx_csum dmnic_rx_csum_status(u32 flags)
{
	if (flags & (DMNIC_RXC_F_L3_CSUM_BAD | DMNIC_RXC_F_L4_CSUM_BAD))
		return DMNIC_RX_CSUM_BAD;
	if (flags & DMNIC_RXC_F_L4_CSUM_OK)
		return DMNIC_RX_CSUM_OK;
	return DMNIC_RX_CSUM_NONE;
}

/*
 * What to do with a completed packet. @readable is false when a payload
 * buffer is a net_iov (devmem). The CPU may look only at the header buffer,
 * so an unsplit packet that spilled into unreadable payload buffers has
 * headers or protocol data nobody can parse: drop it (spec rule). The stack
 * cannot checksum unreadable payload either, so those need the device's OK.
 */
enum dmnic_rx_verdict dmnic_rx_verdict(u32 flags, unsigned int nr_frags,
				       bool readable, bool rxcsum)
{
	if (!(flags & DMNIC_RXC_F_SPLIT) && nr_frags && !readable)
		return DMNIC_RX_DROP;
	if (rxcsum && dmnic_rx_csum_status(flags) == DMNIC_RX_CSUM_OK)
		return DMNIC_RX_PASS_CSUM_OK;
	if (!readable)
		return DMNIC_RX_DROP;
	return DMNIC_RX_PASS;
}

/*
 * Whether a header buffer of @hdr_len bytes (posted with @post_len) can
 * start a packet: it must hold the Ethernet header, since eth_type_trans()
 * pulls ETH_HLEN bytes from the linear part and BUGs when payload frags
 * are attached behind a shorter one. A correct device never sends that;
 * a corrupted completion can.
 */
bool dmnic_rx_hdr_len_ok(u32 hdr_len, u32 post_len)
{
	return hdr_len >= ETH_HLEN && hdr_len <= post_len;
}

/*
 * Whether the completion's PKT_LEN agrees with what the driver took from
 * the rings: @placed, the header buffer's HDR_LEN plus every payload
 * buffer's PAY_LEN, each already checked against the length it was posted
 * with. Byte counters add @placed, never the device's PKT_LEN; a packet
 * whose lengths disagree came with a corrupted completion and is dropped.
 */
bool dmnic_rx_pkt_len_ok(u32 pkt_len, u32 placed)
{
	return pkt_len == placed;
}

/* REG_GRO_CTRL for the netdev features: GRO-HW wins over LRO (spec). */
u32 dmnic_gro_ctrl(netdev_features_t features)
{
	if (features & NETIF_F_GRO_HW)
		return DMNIC_GRO_CTRL_HW;
	if (features & NETIF_F_LRO)
		return DMNIC_GRO_CTRL_LRO;
	return 0;
}

/*
 * Bytes on the wire of a coalesced packet of @bytes (as placed) made of
 * @segs segments, each with the first segment's @hdr_len bytes of headers
 * (the device merges only segments with equal headers; padding is not
 * counted, as in the device's Q_RX_GRO_WIRE_BYTES).
 */
u64 dmnic_gro_wire_bytes(u32 bytes, u32 segs, u32 hdr_len)
{
	return bytes + (u64)(segs - 1) * hdr_len;
}

enum pkt_hash_types dmnic_rx_hash_type(u8 rss_type)
{
	switch (rss_type) {
	case DMNIC_RSS_TYPE_IPV4_TCP:
	case DMNIC_RSS_TYPE_IPV4_UDP:
	case DMNIC_RSS_TYPE_IPV6_TCP:
	case DMNIC_RSS_TYPE_IPV6_UDP:
		return PKT_HASH_TYPE_L4;
	case DMNIC_RSS_TYPE_IPV4:
	case DMNIC_RSS_TYPE_IPV6:
		return PKT_HASH_TYPE_L3;
	default:
		return PKT_HASH_TYPE_NONE;
	}
}

/* The XDP hash type of a completion's RSS_TYPE (spec: RSS) */
enum xdp_rss_hash_type dmnic_xdp_rss_type(u8 rss_type)
{
	switch (rss_type) {
	case DMNIC_RSS_TYPE_IPV4:
		return XDP_RSS_TYPE_L3_IPV4;
	case DMNIC_RSS_TYPE_IPV4_TCP:
		return XDP_RSS_TYPE_L4_IPV4_TCP;
	case DMNIC_RSS_TYPE_IPV4_UDP:
		return XDP_RSS_TYPE_L4_IPV4_UDP;
	case DMNIC_RSS_TYPE_IPV6:
		return XDP_RSS_TYPE_L3_IPV6;
	case DMNIC_RSS_TYPE_IPV6_TCP:
		return XDP_RSS_TYPE_L4_IPV6_TCP;
	case DMNIC_RSS_TYPE_IPV6_UDP:
		return XDP_RSS_TYPE_L4_IPV6_UDP;
	default:
		return XDP_RSS_TYPE_NONE;
	}
}

/*
 * bpf_xdp_metadata_rx_hash(): the program runs on rx->xbuf, during
 * dmnic_rx_finish_xdp(), which points xbuf.cmpl at the frame's last
 * completion (every completion of a packet carries its hash, spec: RSS).
 * No VLAN tag kfunc: the device never strips tags, so there would never
 * be one to report.
 */
static int dmnic_xmo_rx_hash(const struct xdp_md *ctx, u32 *hash,
			     enum xdp_rss_hash_type *rss_type)
{
	const struct xdp_buff *xdp = (const struct xdp_buff *)ctx;
	const struct dmnic_rx_cmpl *c;

	/* rx->xbuf, or the cb of an AF_XDP zero-copy frame */
	c = container_of(xdp, struct dmnic_xdp_buff, xdp)->cmpl;
	if (!c || !(le32_to_cpu(c->flags) & DMNIC_RXC_F_RSS))
		return -ENODATA;
	*hash = le32_to_cpu(c->rss_hash);
	*rss_type = dmnic_xdp_rss_type(c->rss_type);
	return 0;
}

const struct xdp_metadata_ops dmnic_xdp_metadata_ops = {
	.xmo_rx_hash	= dmnic_xmo_rx_hash,
};

/*
 * Whether the queues split headers: tcp-data-split on (@hds_enabled, also
 * the UNKNOWN default). With an XDP program only for a multi-buffer program
 * and an explicit ENABLED: a single buffer program needs whole frames in
 * the header buffer, and by default XDP sees frames unsplit.
 */
bool dmnic_hds_want(bool hds_enabled, bool hds_cfg_on, bool xdp,
		    bool xdp_frags)
{
	if (!hds_enabled)
		return false;
	if (!xdp)
		return true;
	return xdp_frags && hds_cfg_on;
}

/*
 * Largest MTU an XDP program allows: a single buffer program must get
 * every frame in one header buffer; a multi-buffer program gets the rest
 * of a longer frame as frags (payload buffers).
 */
unsigned int dmnic_xdp_max_mtu(bool xdp_frags)
{
	return xdp_frags ? DMNIC_MAX_MTU : DMNIC_XDP_MAX_MTU;
}

/*
 * The TX descriptors of an XDP_TX frame: the linear part, in header buffer
 * @hdr (xdp->data_hard_start is at @hdr_off in it), then every frag.
 * Returns the number of segments, -E2BIG if the device cannot send the
 * frame as one packet (more than @max descriptors, or longer than
 * DMNIC_TX_MAX_FRAME), -EINVAL for an empty segment (a descriptor carries
 * 1..65536 bytes).
 */
int dmnic_xdp_tx_segs(const struct xdp_buff *xdp, netmem_ref hdr,
		      u32 hdr_off, struct dmnic_xdp_seg *segs,
		      unsigned int max)
{
	const struct skb_shared_info *sinfo = NULL;
	u32 nr_frags = 0, total, i;

	if (xdp_buff_has_frags(xdp)) {
		sinfo = xdp_get_shared_info_from_buff(xdp);
		nr_frags = sinfo->nr_frags;
	}
	if (!max || nr_frags > max - 1)
		return -E2BIG;

	total = xdp->data_end - xdp->data;
	if (!total)
		return -EINVAL;
	segs[0].netmem = hdr;
	segs[0].off = hdr_off + (xdp->data - xdp->data_hard_start);
	segs[0].len = total;
	for (i = 0; i < nr_frags; i++) {
		const skb_frag_t *frag = &sinfo->frags[i];
		struct dmnic_xdp_seg *seg = &segs[i + 1];

		seg->netmem = skb_frag_netmem(frag);
		seg->off = skb_frag_off(frag);
		seg->len = skb_frag_size(frag);
		if (!seg->len)
			return -EINVAL;
		total += seg->len;
	}
	if (total > DMNIC_TX_MAX_FRAME)
		return -E2BIG;
	return nr_frags + 1;
}

/*
 * AF_XDP zero-copy: the RXD_LEN a UMEM frame of @frame_size bytes (what
 * follows the headroom) is posted with. The device writes at most 65535
 * bytes into a header buffer (HDR_LEN is 16 bits).
 */
u32 dmnic_xsk_post_len(u32 frame_size)
{
	return min_t(u32, frame_size, U16_MAX);
}

/*
 * Whether UMEM frames of @frame_size bytes can be header buffers for an
 * MTU of @mtu: a header buffer takes at least RX_HDR_BUF_MIN bytes, and
 * the whole frame must fit, as nothing else is posted.
 */
bool dmnic_xsk_frame_ok(u32 frame_size, unsigned int mtu)
{
	u32 len = dmnic_xsk_post_len(frame_size);

	return len >= DMNIC_RX_HDR_BUF_MIN &&
	       len >= mtu + ETH_HLEN + 2 * VLAN_HLEN;
}

static u32 dmnic_gen_flip(u32 gen, u32 bit)
{
	return gen ^ bit;
}

/* ---- TX ---- */

int dmnic_tx_alloc(struct dmnic *dm, struct dmnic_tx_ring *tx)
{
	struct device *dev = &dm->pdev->dev;

	tx->size = dm->tx_ring_size;
	tx->desc = dma_alloc_coherent(dev, tx->size * sizeof(*tx->desc),
				      &tx->desc_dma, GFP_KERNEL);
	tx->cmpl = dma_alloc_coherent(dev, tx->size * sizeof(*tx->cmpl),
				      &tx->cmpl_dma, GFP_KERNEL);
	tx->bufs = kvcalloc(tx->size, sizeof(*tx->bufs), GFP_KERNEL);
	if (dm->caps & DMNIC_CAPS_PTP)
		tx->ts = dma_alloc_coherent(dev, tx->size * sizeof(*tx->ts),
					    &tx->ts_dma, GFP_KERNEL);
	if (!tx->desc || !tx->cmpl || !tx->bufs ||
	    (!tx->ts && (dm->caps & DMNIC_CAPS_PTP))) {
		dmnic_tx_free(dm, tx);
		return -ENOMEM;
	}
	u64_stats_init(&tx->stats.syncp);
	return 0;
}

void dmnic_tx_free(struct dmnic *dm, struct dmnic_tx_ring *tx)
{
	struct device *dev = &dm->pdev->dev;

	if (tx->desc)
		dma_free_coherent(dev, tx->size * sizeof(*tx->desc), tx->desc,
				  tx->desc_dma);
	if (tx->cmpl)
		dma_free_coherent(dev, tx->size * sizeof(*tx->cmpl), tx->cmpl,
				  tx->cmpl_dma);
	if (tx->ts)
		dma_free_coherent(dev, tx->size * sizeof(*tx->ts), tx->ts,
				  tx->ts_dma);
	kvfree(tx->bufs);
	tx->ts = NULL;
	tx->desc = NULL;
	tx->cmpl = NULL;
	tx->bufs = NULL;
}

static void dmnic_q_ctrl_set(struct dmnic *dm, unsigned int q, u32 clear,
			     u32 set)
{
	u32 ctrl = dmnic_rd32(dm, DMNIC_QREG(q, DMNIC_Q_CTRL));

	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_CTRL), (ctrl & ~clear) | set);
}

void dmnic_tx_hw_start(struct dmnic *dm, struct dmnic_tx_ring *tx)
{
	unsigned int q = tx->idx;

	memset(tx->cmpl, 0, tx->size * sizeof(*tx->cmpl));
	tx->head = 0;
	tx->tail = 0;
	tx->cmpl_head = 0;
	tx->cmpl_gen = DMNIC_TXC_F_GEN;

	dmnic_wr_ring(dm, q, DMNIC_Q_TXD, tx->desc_dma, tx->size);
	dmnic_wr_ring(dm, q, DMNIC_Q_TXC, tx->cmpl_dma, tx->size);
	if (dm->caps & DMNIC_CAPS_PTP) {
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_TXTS_LO),
			   lower_32_bits(tx->ts_dma));
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_TXTS_HI),
			   upper_32_bits(tx->ts_dma));
	}
	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_TXD + DMNIC_RING_DRV), 0);
	dmnic_q_ctrl_set(dm, q, 0, DMNIC_Q_CTRL_TX_ENABLE);
}

/*
 * Disable one direction of queue pair @q and wait for the device to let go.
 * Error-injectable: dbg-nic-fail-inject makes it fail (fail_function), as
 * for a device that does not quiesce.
 */
int dmnic_queue_hw_stop(struct dmnic *dm, unsigned int q, bool tx)
{
	u32 en = tx ? DMNIC_Q_CTRL_TX_ENABLE : DMNIC_Q_CTRL_RX_ENABLE;
	u32 qsc = tx ? DMNIC_Q_STATUS_TX_QUIESCED : DMNIC_Q_STATUS_RX_QUIESCED;
	u32 status;
	int err;

	dmnic_q_ctrl_set(dm, q, en, 0);
	err = readl_poll_timeout(dm->regs + DMNIC_QREG(q, DMNIC_Q_STATUS),
				 status, status & qsc, 10, 10000);
	if (err)
		netdev_err(dm->netdev, "queue %u %s did not quiesce\n", q,
			   tx ? "TX" : "RX");
	return err;
}
ALLOW_ERROR_INJECTION(dmnic_queue_hw_stop, ERRNO);

/* Address 0: nothing to unmap (a net_iov frag, an XDP_TX page pool buffer). */
static void dmnic_tx_unmap(struct device *dev, struct dmnic_tx_buf *b)
{
	dma_addr_t dma = dma_unmap_addr(b, dma);

	if (b->single)
		dma_unmap_single(dev, dma, b->len, DMA_TO_DEVICE);
	else
		netmem_dma_unmap_page_attrs(dev, dma, b->len, DMA_TO_DEVICE, 0);
	b->single = false;
	dma_unmap_addr_set(b, dma, 0);
}

/*
 * Release descriptors [head, head + n) and the skb they carried. Returns
 * the AF_XDP TX descriptors among them, for xsk_tx_completed().
 */
static unsigned int dmnic_tx_release(struct dmnic *dm,
				     struct dmnic_tx_ring *tx, unsigned int n,
				     int budget)
{
	struct device *dev = &dm->pdev->dev;
	unsigned int xsk = 0;

	while (n--) {
		struct dmnic_tx_buf *b = &tx->bufs[tx->head];

		dmnic_tx_unmap(dev, b);
		if (b->skb) {
			napi_consume_skb(b->skb, budget);
			b->skb = NULL;
		}
		if (b->xdp_netmem) {
			page_pool_put_full_netmem(netmem_get_pp(b->xdp_netmem),
						  b->xdp_netmem, false);
			b->xdp_netmem = 0;
		}
		if (b->xsk_xdp) {
			xsk_buff_free(b->xsk_xdp);
			b->xsk_xdp = NULL;
		}
		if (b->xsk_tx) {
			xsk++;
			b->xsk_tx = false;
		}
		tx->head = (tx->head + 1) & (tx->size - 1);
	}
	return xsk;
}

/* @n AF_XDP TX descriptors are done (sent, or dropped with the ring). */
static void dmnic_xsk_tx_done(struct dmnic_tx_ring *tx, unsigned int n)
{
	if (n && !WARN_ON_ONCE(!tx->xsk_pool))
		xsk_tx_completed(tx->xsk_pool, n);
}

/* Not an skb: no BQL, and nothing netpoll (budget 0) may release. */
static bool dmnic_tx_buf_is_xdp(const struct dmnic_tx_buf *b)
{
	return b->xdp_netmem || b->xsk_xdp || b->xsk_tx;
}

/* A TX timestamp for the skb of the packet at head (ndesc descriptors). */
static void dmnic_tx_tstamp(struct dmnic_tx_ring *tx, unsigned int ndesc,
			    u64 ns)
{
	struct sk_buff *skb = tx->bufs[(tx->head + ndesc - 1) &
				       (tx->size - 1)].skb;
	struct skb_shared_hwtstamps hwts = {};

	if (!skb)
		return;
	hwts.hwtstamp = ns_to_ktime(ns);
	skb_tstamp_tx(skb, &hwts);
}

/* Drop everything still on the ring (queue stopped). */
void dmnic_tx_clean_all(struct dmnic *dm, struct dmnic_tx_ring *tx)
{
	unsigned int n = dmnic_ring_used(tx->head, tx->tail, tx->size);

	if (!tx->bufs)
		return;
	/* The socket gets them back as completed: they were never sent. */
	dmnic_xsk_tx_done(tx, dmnic_tx_release(dm, tx, n, 0));
	netdev_tx_reset_queue(netdev_get_tx_queue(dm->netdev, tx->idx));
}

static bool dmnic_tx_clean(struct dmnic *dm, struct dmnic_tx_ring *tx,
			   int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, tx->idx);
	unsigned int pkts = 0, bytes = 0, dropped = 0, done = 0, bql = 0;
	unsigned int xsk = 0;
	bool woken;

	while (done < tx->size) {
		struct dmnic_tx_cmpl *c = &tx->cmpl[tx->cmpl_head];
		struct dmnic_tx_buf *first;
		unsigned int ndesc;
		u32 len;

		if (!dmnic_tx_cmpl_valid(c, tx->cmpl_gen))
			break;
		dma_rmb();

		first = &tx->bufs[tx->head];
		/* netpoll (budget 0) must not call page pool APIs: an XDP_TX
		 * frame and what follows it wait for the next NAPI poll.
		 */
		if (!budget && dmnic_tx_buf_is_xdp(first))
			break;
		if (unlikely(!dmnic_tx_cmpl_matches(c, tx->head,
						    dmnic_ring_used(tx->head,
								    tx->tail,
								    tx->size),
						    first))) {
			/* Lost or corrupted completions: the ring state is
			 * unknown, so restart TX (it drops what is posted).
			 */
			dmnic_queue_bad(dm, tx->idx, true, "bad TX completion");
			break;
		}
		ndesc = first->pkt_ndesc;
		len = first->pkt_bytes;
		if (unlikely(le32_to_cpu(c->flags) & DMNIC_TXC_F_TS) && tx->ts)
			dmnic_tx_tstamp(tx, ndesc,
					le64_to_cpu(tx->ts[tx->cmpl_head]));
		/* XDP_TX and AF_XDP frames never went through BQL. */
		if (!dmnic_tx_buf_is_xdp(first))
			bql += len;
		if (le32_to_cpu(c->status) == DMNIC_TXC_S_OK) {
			/* what went on the wire: the segments of a GSO skb */
			pkts += first->pkt_segs ?: 1;
			bytes += len + first->pkt_hdr_extra;
		} else {
			dropped++;
		}
		xsk += dmnic_tx_release(dm, tx, ndesc, budget);

		tx->cmpl_head = (tx->cmpl_head + 1) & (tx->size - 1);
		if (!tx->cmpl_head)
			tx->cmpl_gen = dmnic_gen_flip(tx->cmpl_gen,
						      DMNIC_TXC_F_GEN);
		done++;
	}
	if (!done)
		return false;

	dmnic_wr32(dm, DMNIC_QREG(tx->idx, DMNIC_Q_TXC + DMNIC_RING_DRV),
		   tx->cmpl_head);
	dmnic_xsk_tx_done(tx, xsk);

	/*
	 * Every completed packet may free enough room to wake the queue, an
	 * XDP_TX frame too (BQL counts only @bql bytes): a ring left full of
	 * XDP_TX frames must wake it when they complete. BQL's barrier is
	 * skipped when no skb bytes completed: order the new head before the
	 * stopped check.
	 */
	if (!bql)
		smp_mb(); /* pairs with the barrier in netif_txq_try_stop() */
	woken = !netif_txq_completed_wake(txq, done, bql,
					  dmnic_ring_space(tx->head, tx->tail,
							   tx->size),
					  DMNIC_TX_DESC_NEEDED);

	u64_stats_update_begin(&tx->stats.syncp);
	tx->stats.packets += pkts;
	tx->stats.bytes += bytes;
	tx->stats.dropped += dropped;
	if (woken)
		tx->stats.wake++;
	u64_stats_update_end(&tx->stats.syncp);
	return true;
}

static bool dmnic_tx_map(struct dmnic *dm, struct dmnic_tx_ring *tx,
			 struct sk_buff *skb)
{
	struct device *dev = &dm->pdev->dev;
	unsigned int nfrags = skb_shinfo(skb)->nr_frags;
	bool csum = skb->ip_summed == CHECKSUM_PARTIAL;
	u32 mask = tx->size - 1, first = tx->tail, i = tx->tail, eop;
	unsigned int f = 0, headlen = skb_headlen(skb);
	bool is_first = true;

	for (;;) {
		struct dmnic_tx_buf *b = &tx->bufs[i];
		bool last = f == nfrags;
		dma_addr_t dma;
		u32 len;

		b->skb = NULL;
		b->single = false;
		dma_unmap_addr_set(b, dma, 0);
		b->xdp_netmem = 0;
		b->xsk_xdp = NULL;
		b->xsk_tx = false;
		b->pkt_bytes = 0;
		b->pkt_ndesc = 0;
		b->pkt_segs = 0;
		b->pkt_hdr_extra = 0;
		if (is_first && headlen) {
			len = headlen;
			dma = dma_map_single(dev, skb->data, len, DMA_TO_DEVICE);
			if (dma_mapping_error(dev, dma))
				goto err_unmap;
			dma_unmap_addr_set(b, dma, dma);
			b->single = true;
			last = !nfrags;
		} else {
			skb_frag_t *frag = &skb_shinfo(skb)->frags[f++];

			len = skb_frag_size(frag);
			/* For a net_iov this returns the binding's DMA address
			 * and maps nothing: recorded as 0, never unmapped.
			 */
			dma = skb_frag_dma_map(dev, frag, 0, len, DMA_TO_DEVICE);
			if (dma_mapping_error(dev, dma))
				goto err_unmap;
			netmem_dma_unmap_addr_set(skb_frag_netmem(frag), b, dma,
						  dma);
			last = f == nfrags;
		}
		b->len = len;
		dmnic_tx_desc_fill(&tx->desc[i], dma, len, first, last,
				   is_first && csum ? skb : NULL);
		is_first = false;
		eop = i;
		i = (i + 1) & mask;
		if (last)
			break;
	}

	/* Freed with the packet's last descriptor, after all unmaps. */
	tx->bufs[eop].skb = skb;
	tx->bufs[first].pkt_bytes = skb->len;
	tx->bufs[first].pkt_ndesc = ((eop - first) & mask) + 1;
	if (skb_is_gso(skb) && csum) {
		u16 segs = skb_shinfo(skb)->gso_segs ?: 1;

		tx->bufs[first].pkt_segs = segs;
		tx->bufs[first].pkt_hdr_extra = (segs - 1) *
						dmnic_gso_hdr_len(skb);
	}
	tx->tail = i;
	return true;

err_unmap:
	while (i != first) {
		i = (i - 1) & mask;
		dmnic_tx_unmap(dev, &tx->bufs[i]);
	}
	dmnic_tx_unmap(dev, &tx->bufs[first]);
	return false;
}

netdev_tx_t dmnic_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct dmnic *dm = netdev_priv(netdev);
	u16 q = skb_get_queue_mapping(skb);
	struct dmnic_napi *qv = READ_ONCE(dm->qv[q]);
	struct netdev_queue *txq = netdev_get_tx_queue(netdev, q);
	unsigned int len = skb->len;
	struct dmnic_tx_ring *tx;
	u32 first;
	int psp;

	/*
	 * A packet the stack queued on a TX queue just before the channel
	 * count shrank can still be sent from that queue's qdisc; its queue
	 * pair is gone.
	 */
	if (unlikely(!qv)) {
		dev_core_stats_tx_dropped_inc(netdev);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	tx = &qv->tx;

	/*
	 * XDP_TX takes ring space without stopping the queue, so the ring can
	 * be full here. Stop with the re-check against a completion that
	 * freed room meanwhile (it would not wake a queue not yet stopped).
	 * Before the PSP encapsulation: the stack requeues a busy skb as it
	 * is, and must not get it back with its UDP and PSP headers (they
	 * would be pushed twice).
	 */
	if (unlikely(!netif_txq_maybe_stop(txq,
					   dmnic_ring_space(tx->head, tx->tail,
							    tx->size),
					   skb_shinfo(skb)->nr_frags + 1,
					   DMNIC_TX_DESC_NEEDED))) {
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.stop++;
		u64_stats_update_end(&tx->stats.syncp);
		return NETDEV_TX_BUSY;
	}

	psp = dmnic_psp_xmit(dm, skb);
	if (unlikely(psp < 0))
		goto drop;
	len = skb->len;

	/* The device pads short frames itself: never pad or linearize here,
	 * an skb with unreadable (devmem) frags cannot be copied.
	 */
	if (unlikely(skb_shinfo(skb)->nr_frags + 1 > DMNIC_TX_MAX_DESC_PER_PKT ||
		     len > (skb_is_gso(skb) ? DMNIC_TSO_MAX_FRAME :
			    DMNIC_TX_MAX_FRAME) || !len))
		goto drop;

	first = tx->tail;
	if (!dmnic_tx_map(dm, tx, skb))
		goto drop;
	if (psp)
		dmnic_psp_desc(&tx->desc[first], psp);
	if (unlikely(skb_shinfo(skb)->tx_flags & SKBTX_HW_TSTAMP) && tx->ts &&
	    dm->hwts.tx_type == HWTSTAMP_TX_ON) {
		skb_shinfo(skb)->tx_flags |= SKBTX_IN_PROGRESS;
		tx->desc[first].flags |= cpu_to_le16(DMNIC_TXD_F_TS);
	}

	u64_stats_update_begin(&tx->stats.syncp);
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		tx->stats.csum_offload++;
	u64_stats_update_end(&tx->stats.syncp);

	skb_tx_timestamp(skb);

	if (!netif_txq_maybe_stop(txq,
				  dmnic_ring_space(tx->head, tx->tail, tx->size),
				  DMNIC_TX_DESC_NEEDED, DMNIC_TX_DESC_NEEDED)) {
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.stop++;
		u64_stats_update_end(&tx->stats.syncp);
	}

	if (__netdev_tx_sent_queue(txq, len, netdev_xmit_more()))
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_TXD + DMNIC_RING_DRV),
			   tx->tail);
	return NETDEV_TX_OK;

drop:
	/* a PSP packet dropped after its encapsulation: a PSP TX error */
	if (psp > 0)
		dmnic_psp_tx_dropped(dm);
	u64_stats_update_begin(&tx->stats.syncp);
	tx->stats.dropped++;
	u64_stats_update_end(&tx->stats.syncp);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* ---- RX buffers ---- */

static int dmnic_bufq_alloc(struct dmnic *dm, struct dmnic_bufq *bq, u32 size,
			    u32 buf_size, u32 headroom, u32 post_len, bool xsk)
{
	bq->size = size;
	bq->buf_size = buf_size;
	bq->headroom = headroom;
	bq->post_len = post_len;
	bq->desc = dma_alloc_coherent(&dm->pdev->dev, size * sizeof(*bq->desc),
				      &bq->desc_dma, GFP_KERNEL);
	bq->netmem = kvcalloc(size, sizeof(*bq->netmem), GFP_KERNEL);
	bq->offset = kvcalloc(size, sizeof(*bq->offset), GFP_KERNEL);
	if (xsk)
		bq->xsk = kvcalloc(size, sizeof(*bq->xsk), GFP_KERNEL);
	if (!bq->desc || !bq->netmem || !bq->offset || (xsk && !bq->xsk))
		return -ENOMEM;
	return 0;
}

/*
 * AF_XDP zero-copy: give every UMEM frame still on the ring back to the
 * pool (queue disabled, or never started). Before the pool is unmapped.
 */
static void dmnic_xsk_bufq_reset(struct dmnic_bufq *bq)
{
	u32 i;

	if (!bq->xsk)
		return;
	for (i = 0; i < bq->size; i++) {
		if (!bq->xsk[i])
			continue;
		xsk_buff_free(bq->xsk[i]);
		bq->xsk[i] = NULL;
	}
}

static void dmnic_bufq_free(struct dmnic *dm, struct dmnic_bufq *bq)
{
	u32 i;

	if (bq->netmem && bq->pool) {
		for (i = 0; i < bq->size; i++)
			if (bq->netmem[i])
				page_pool_put_netmem(bq->pool, bq->netmem[i],
						     -1, false);
	}
	if (bq->desc)
		dma_free_coherent(&dm->pdev->dev, bq->size * sizeof(*bq->desc),
				  bq->desc, bq->desc_dma);
	dmnic_xsk_bufq_reset(bq);
	kvfree(bq->xsk);
	kvfree(bq->netmem);
	kvfree(bq->offset);
	if (bq->pool)
		page_pool_destroy(bq->pool);
	memset(bq, 0, sizeof(*bq));
}

/* Return every buffer still on the ring to the pool (queue disabled). */
static void dmnic_bufq_reset(struct dmnic_bufq *bq)
{
	u32 i;

	for (i = 0; i < bq->size; i++) {
		if (!bq->netmem[i])
			continue;
		page_pool_put_netmem(bq->pool, bq->netmem[i], -1, false);
		bq->netmem[i] = 0;
	}
	bq->tail = 0;
	bq->head = 0;
	bq->dry = false;
}

/*
 * Give back the frame an XDP queue was assembling: its header buffer and
 * every payload buffer attached as a frag. @napi: in NAPI context.
 */
static void dmnic_rx_xbuf_put(struct dmnic_rx_queue *rx, bool napi)
{
	struct xdp_buff *xdp = &rx->xbuf.xdp;
	struct skb_shared_info *sinfo;
	netmem_ref netmem;
	u32 i;

	if (!rx->xbuf_hdr)
		return;
	if (xdp_buff_has_frags(xdp)) {
		sinfo = xdp_get_shared_info_from_buff(xdp);
		for (i = 0; i < sinfo->nr_frags; i++) {
			netmem = skb_frag_netmem(&sinfo->frags[i]);
			page_pool_put_full_netmem(netmem_get_pp(netmem), netmem,
						  napi);
		}
		xdp_buff_clear_frags_flag(xdp);
	}
	page_pool_put_full_netmem(rx->hdr.pool, rx->xbuf_hdr, napi);
	rx->xbuf_hdr = 0;
}

/* Forget the packet being assembled (queue stopped or freed). */
static void dmnic_rx_pending_free(struct dmnic_rx_queue *rx)
{
	if (rx->skb) {
		dev_kfree_skb_any(rx->skb);
		rx->skb = NULL;
	}
	dmnic_rx_xbuf_put(rx, false);
	if (rx->xsk_cur) {
		xsk_buff_free(rx->xsk_cur);
		rx->xsk_cur = NULL;
	}
	rx->skb_bad = false;
	rx->skb_nomem = false;
}

/*
 * Take the buffer with device ID @id back from the ring. The device uses
 * buffers in ring order, so posted slots between the expected one and @id
 * were consumed by packets whose completion was lost (spec: Errors, a
 * dropped completion): give them back to the pool, or the ring would never
 * be refilled past them. Returns 0 for an ID that is not posted.
 */
static netmem_ref dmnic_bufq_take(struct dmnic_bufq *bq, u16 id, u32 *offset,
				  u32 *lost)
{
	u32 mask = bq->size - 1;
	netmem_ref netmem;

	if (unlikely(id >= bq->size))
		return 0;
	netmem = bq->netmem[id];
	if (unlikely(!netmem))
		return 0;
	while (unlikely(bq->head != id)) {
		if (bq->netmem[bq->head]) {
			page_pool_put_netmem(bq->pool, bq->netmem[bq->head], -1,
					     true);
			bq->netmem[bq->head] = 0;
			(*lost)++;
		}
		bq->head = (bq->head + 1) & mask;
	}
	bq->netmem[id] = 0;
	bq->head = (id + 1) & mask;
	*offset = bq->offset[id];
	return netmem;
}

/*
 * Post buffers at the tail. Buffers are consumed in ring order and named by
 * their slot, so a slot is free again once its completion was handled.
 * Returns false if the pool ran dry (devmem: every net_iov is posted or
 * held by userspace); the caller retries later.
 */
static bool dmnic_bufq_refill(struct dmnic *dm, struct dmnic_rx_queue *rx,
			      struct dmnic_bufq *bq, u32 ring)
{
	u32 mask = bq->size - 1, tail = bq->tail, next;
	bool ok = true;

	for (;;) {
		unsigned int offset;
		netmem_ref netmem;
		dma_addr_t dma;

		next = (tail + 1) & mask;
		/* Keep one slot empty; stop at a buffer not yet completed. */
		if (bq->netmem[tail] || bq->netmem[next])
			break;

		/* Half-page header buffers are page pool fragments; whole
		 * pages are pages or a memory provider's net_iovs.
		 */
		offset = 0;
		if (bq->buf_size < PAGE_SIZE) {
			unsigned int len = bq->buf_size;

			netmem = page_pool_dev_alloc_netmem(bq->pool, &offset,
							    &len);
		} else {
			netmem = page_pool_dev_alloc_netmems(bq->pool);
		}
		if (!netmem) {
			ok = false;
			break;
		}

		dma = page_pool_get_dma_addr_netmem(netmem) + offset +
		      bq->headroom;
		bq->netmem[tail] = netmem;
		bq->offset[tail] = offset;
		bq->desc[tail].addr = cpu_to_le64(dma);
		bq->desc[tail].len = cpu_to_le32(bq->post_len);
		bq->desc[tail].id = cpu_to_le16(tail);
		bq->desc[tail].rsvd = 0;
		tail = next;
	}

	if (tail != bq->tail) {
		bq->tail = tail;
		/* writel orders the descriptor writes before the doorbell */
		dmnic_wr32(dm, DMNIC_QREG(rx->idx, ring + DMNIC_RING_DRV), tail);
	}
	/*
	 * Once per dry spell: while userspace holds every buffer of a memory
	 * provider, the retries (each jiffy) would count HZ failures a
	 * second.
	 */
	if (!ok && !bq->dry) {
		u64_stats_update_begin(&rx->stats.syncp);
		rx->stats.alloc_fail++;
		u64_stats_update_end(&rx->stats.syncp);
	}
	bq->dry = !ok;
	return ok;
}

/*
 * AF_XDP zero-copy: post UMEM frames from the fill ring as header buffers.
 * Returns false if the fill ring ran dry.
 */
static bool dmnic_xsk_refill(struct dmnic *dm, struct dmnic_rx_queue *rx)
{
	struct dmnic_bufq *bq = &rx->hdr;
	u32 mask = bq->size - 1, tail = bq->tail, next;
	bool ok = true;

	for (;;) {
		struct xdp_buff *xdp;
		dma_addr_t dma;

		next = (tail + 1) & mask;
		if (bq->xsk[tail] || bq->xsk[next])
			break;
		xdp = xsk_buff_alloc(rx->xsk_pool);
		if (!xdp) {
			ok = false;
			break;
		}
		dma = xsk_buff_xdp_get_dma(xdp);
		bq->xsk[tail] = xdp;
		bq->desc[tail].addr = cpu_to_le64(dma);
		bq->desc[tail].len = cpu_to_le32(bq->post_len);
		bq->desc[tail].id = cpu_to_le16(tail);
		bq->desc[tail].rsvd = 0;
		tail = next;
	}
	if (tail != bq->tail) {
		bq->tail = tail;
		dmnic_wr32(dm, DMNIC_QREG(rx->idx, DMNIC_Q_HBR + DMNIC_RING_DRV),
			   tail);
	}
	if (!ok && !bq->dry) {
		u64_stats_update_begin(&rx->stats.syncp);
		rx->stats.alloc_fail++;
		u64_stats_update_end(&rx->stats.syncp);
	}
	bq->dry = !ok;
	/* An empty fill ring: the application must kick us (poll, sendto). */
	if (xsk_uses_need_wakeup(rx->xsk_pool)) {
		if (ok)
			xsk_clear_rx_need_wakeup(rx->xsk_pool);
		else
			xsk_set_rx_need_wakeup(rx->xsk_pool);
	}
	return ok;
}

static bool dmnic_rx_refill(struct dmnic *dm, struct dmnic_rx_queue *rx)
{
	bool ok;

	if (rx->xsk_pool)
		return dmnic_xsk_refill(dm, rx);

	ok = dmnic_bufq_refill(dm, rx, &rx->hdr, DMNIC_Q_HBR);
	ok &= dmnic_bufq_refill(dm, rx, &rx->pay, DMNIC_Q_PBR);
	return ok;
}

static struct page_pool *dmnic_create_pool(struct dmnic *dm, unsigned int idx,
					   struct napi_struct *napi, u32 size,
					   bool unreadable, bool xdp_tx,
					   u32 buf_size)
{
	struct page_pool_params pp = {
		/* io_uring zcrx wants order + PAGE_SHIFT = its niov shift */
		.order		= order_base_2(buf_size >> PAGE_SHIFT),
		.flags		= PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.pool_size	= size,
		.nid		= dev_to_node(&dm->pdev->dev),
		.dev		= &dm->pdev->dev,
		.napi		= napi,
		/* XDP_TX sends from the buffer it received into */
		.dma_dir	= xdp_tx ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE,
		.max_len	= buf_size,
		.offset		= 0,
		.netdev		= dm->netdev,
		.queue_idx	= idx,
	};

	/* Only the payload pool may hand out unreadable memory (devmem). */
	if (unreadable)
		pp.flags |= PP_FLAG_ALLOW_UNREADABLE_NETMEM;
	return page_pool_create(&pp);
}

/* An RX payload buffer size (rx_page_size) the driver can use, or -ERANGE */
int dmnic_rx_buf_size_check(u32 size)
{
	if (!is_power_of_2(size) || size < PAGE_SIZE || size > DMNIC_RX_BUF_MAX)
		return -ERANGE;
	return 0;
}

/* @pay_size: payload buffer size, from the queue's config (rx_page_size) */
int dmnic_rx_alloc(struct dmnic *dm, struct dmnic_rx_queue *rx,
		   unsigned int idx, struct napi_struct *napi, u32 pay_size)
{
	struct device *dev = &dm->pdev->dev;
	u32 size = dm->rx_ring_size;
	struct page_pool *pp;
	int err;

	XSK_CHECK_PRIV_TYPE(struct dmnic_xdp_buff);

	memset(rx, 0, sizeof(*rx));
	rx->idx = idx;
	rx->hds = dmnic_hds_active(dm);
	rx->xdp = !!dm->xdp_prog;
	/* AF_XDP zero-copy: whole frames in UMEM frames, never split */
	rx->xsk_pool = dmnic_xsk_pool(dm, idx);
	if (rx->xsk_pool)
		rx->hds = false;
	u64_stats_init(&rx->stats.syncp);

	/* XDP and memory providers (the only ones to ask) exclude each other */
	if (dmnic_rx_buf_size_check(pay_size) || (rx->xdp && pay_size != PAGE_SIZE))
		return -ERANGE;
	pp = dmnic_create_pool(dm, idx, napi, size, false, rx->xdp, PAGE_SIZE);
	if (IS_ERR(pp))
		return PTR_ERR(pp);
	rx->hdr.pool = pp;

	/* XDP_TX also sends frags, straight from the payload buffers. */
	pp = dmnic_create_pool(dm, idx, napi, size, rx->hds, rx->xdp,
			       pay_size);
	if (IS_ERR(pp)) {
		err = PTR_ERR(pp);
		goto err_free;
	}
	rx->pay.pool = pp;

	if (rx->xsk_pool)
		err = dmnic_bufq_alloc(dm, &rx->hdr, size,
				       xsk_pool_get_chunk_size(rx->xsk_pool),
				       0,
				       dmnic_xsk_post_len(xsk_pool_get_rx_frame_size(rx->xsk_pool)),
				       true);
	else if (rx->xdp)
		err = dmnic_bufq_alloc(dm, &rx->hdr, size, PAGE_SIZE,
				       DMNIC_XDP_HEADROOM, DMNIC_XDP_BUF_LEN,
				       false);
	else
		err = dmnic_bufq_alloc(dm, &rx->hdr, size, DMNIC_HDR_BUF_SIZE,
				       0, DMNIC_HDR_BUF_SIZE, false);
	if (err)
		goto err_free;
	/* zero-copy: the payload ring stays empty (the device needs one) */
	err = dmnic_bufq_alloc(dm, &rx->pay, size, pay_size, 0, pay_size,
			       false);
	if (err)
		goto err_free;

	/* The xdp_buff's linear part is a header buffer (rx->hdr.pool); its
	 * frags, payload buffers, are returned to their own pool. frag_size:
	 * a program may grow the last frag up to the end of its page.
	 */
	err = __xdp_rxq_info_reg(&rx->xdp_rxq, dm->netdev, idx,
				 napi ? napi->napi_id : 0,
				 rx->xdp && !rx->xsk_pool ? rx->pay.buf_size : 0);
	if (err)
		goto err_free;
	if (rx->xsk_pool)
		err = xdp_rxq_info_reg_mem_model(&rx->xdp_rxq,
						 MEM_TYPE_XSK_BUFF_POOL, NULL);
	else
		err = xdp_rxq_info_reg_mem_model(&rx->xdp_rxq,
						 MEM_TYPE_PAGE_POOL,
						 rx->hdr.pool);
	if (err)
		goto err_free;

	/* Room for one completion per posted buffer of both rings. */
	rx->cmpl_size = 2 * size;
	rx->cmpl = dma_alloc_coherent(dev, rx->cmpl_size * sizeof(*rx->cmpl),
				      &rx->cmpl_dma, GFP_KERNEL);
	if (dm->caps & DMNIC_CAPS_PTP)
		rx->ts = dma_alloc_coherent(dev, rx->cmpl_size * sizeof(*rx->ts),
					    &rx->ts_dma, GFP_KERNEL);
	if (!rx->cmpl || (!rx->ts && (dm->caps & DMNIC_CAPS_PTP))) {
		err = -ENOMEM;
		goto err_free;
	}
	return 0;

err_free:
	dmnic_rx_free(dm, rx);
	return err;
}

void dmnic_rx_free(struct dmnic *dm, struct dmnic_rx_queue *rx)
{
	dmnic_rx_pending_free(rx);
	if (xdp_rxq_info_is_reg(&rx->xdp_rxq))
		xdp_rxq_info_unreg(&rx->xdp_rxq);
	dmnic_bufq_free(dm, &rx->hdr);
	dmnic_bufq_free(dm, &rx->pay);
	if (rx->cmpl)
		dma_free_coherent(&dm->pdev->dev,
				  rx->cmpl_size * sizeof(*rx->cmpl), rx->cmpl,
				  rx->cmpl_dma);
	if (rx->ts)
		dma_free_coherent(&dm->pdev->dev,
				  rx->cmpl_size * sizeof(*rx->ts), rx->ts,
				  rx->ts_dma);
	rx->ts = NULL;
	rx->cmpl = NULL;
}

void dmnic_rx_hw_start(struct dmnic *dm, struct dmnic_rx_queue *rx)
{
	unsigned int q = rx->idx;

	memset(rx->cmpl, 0, rx->cmpl_size * sizeof(*rx->cmpl));
	rx->cmpl_head = 0;
	rx->cmpl_gen = DMNIC_RXC_F_GEN;

	dmnic_wr_ring(dm, q, DMNIC_Q_HBR, rx->hdr.desc_dma, rx->hdr.size);
	dmnic_wr_ring(dm, q, DMNIC_Q_PBR, rx->pay.desc_dma, rx->pay.size);
	dmnic_wr_ring(dm, q, DMNIC_Q_RXC, rx->cmpl_dma, rx->cmpl_size);
	if (dm->caps & DMNIC_CAPS_PTP) {
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_RXTS_LO),
			   lower_32_bits(rx->ts_dma));
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_RXTS_HI),
			   upper_32_bits(rx->ts_dma));
	}
	/* Buffer rings start empty at index 0 (DEV is reset by the enable).
	 * When an old queue is restarted, reclaim what it still had posted.
	 */
	dmnic_rx_pending_free(rx);
	dmnic_bufq_reset(&rx->hdr);
	dmnic_bufq_reset(&rx->pay);
	dmnic_xsk_bufq_reset(&rx->hdr);
	/* the frames' rxq is where the queue lives now (queue_start copies) */
	if (rx->xsk_pool)
		xsk_pool_set_rxq_info(rx->xsk_pool, &rx->xdp_rxq);
	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_HBR + DMNIC_RING_DRV), 0);
	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_PBR + DMNIC_RING_DRV), 0);
	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_HDS_THRESH), dm->hds_thresh);
	dmnic_q_ctrl_set(dm, q, DMNIC_Q_CTRL_HDS_ENABLE,
			 DMNIC_Q_CTRL_RX_ENABLE |
			 (rx->hds ? DMNIC_Q_CTRL_HDS_ENABLE : 0));
	dmnic_rx_refill(dm, rx);
}

/*
 * AF_XDP zero-copy: give back every UMEM frame the stopped queue holds
 * (posted, or the packet being read); the ring starts empty again.
 */
void dmnic_xsk_rx_release(struct dmnic_rx_queue *rx)
{
	dmnic_rx_pending_free(rx);
	dmnic_xsk_bufq_reset(&rx->hdr);
	rx->hdr.tail = 0;
	rx->hdr.head = 0;
}

/* ---- RX completions ---- */

/*
 * Drop the packet being assembled. One the driver could not allocate an
 * skb for was counted in alloc_fail already (dmnic_rx_alloc_failed()).
 */
static void dmnic_rx_drop(struct dmnic_rx_queue *rx)
{
	bool nomem = rx->skb_nomem;

	if (rx->skb)
		dev_kfree_skb_any(rx->skb);	/* recycles its frags */
	rx->skb = NULL;
	dmnic_rx_xbuf_put(rx, true);
	if (rx->xsk_cur) {
		xsk_buff_free(rx->xsk_cur);
		rx->xsk_cur = NULL;
	}
	rx->skb_bad = false;
	rx->skb_nomem = false;
	if (nomem)
		return;
	u64_stats_update_begin(&rx->stats.syncp);
	rx->stats.drops++;
	u64_stats_update_end(&rx->stats.syncp);
}

/* No skb for a received packet: an allocation failure, not a drop. */
static void dmnic_rx_alloc_failed(struct dmnic_rx_queue *rx)
{
	rx->skb_nomem = true;
	u64_stats_update_begin(&rx->stats.syncp);
	rx->stats.alloc_fail++;
	u64_stats_update_end(&rx->stats.syncp);
}

/*
 * XDP_TX: queue the frame (header buffer @hdr and its frags) on the TX ring
 * of the same queue pair, one descriptor per buffer. The TX completion
 * gives every buffer back to its page pool.
 */
static bool dmnic_xdp_tx(struct dmnic *dm, struct dmnic_napi *qv,
			 const struct xdp_buff *xdp, netmem_ref hdr)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, qv->idx);
	struct dmnic_xdp_seg segs[DMNIC_TX_DESC_NEEDED];
	struct device *dev = &dm->pdev->dev;
	struct dmnic_tx_ring *tx = &qv->tx;
	dma_addr_t dma[DMNIC_TX_DESC_NEEDED];
	u32 mask = tx->size - 1, first, hdr_off, len = 0;
	int i, n;
	bool ok = false;

	hdr_off = xdp->data_hard_start - (void *)netmem_address(hdr);
	n = dmnic_xdp_tx_segs(xdp, hdr, hdr_off, segs, ARRAY_SIZE(segs));
	if (n < 0)
		return false;
	for (i = 0; i < n; i++) {
		dma[i] = page_pool_get_dma_addr_netmem(segs[i].netmem) +
			 segs[i].off;
		dma_sync_single_for_device(dev, dma[i], segs[i].len,
					   DMA_BIDIRECTIONAL);
		len += segs[i].len;
	}

	/* The ring is shared with ndo_start_xmit of this queue. */
	__netif_tx_lock(txq, smp_processor_id());
	if (dmnic_ring_space(tx->head, tx->tail, tx->size) >= n) {
		first = tx->tail;
		for (i = 0; i < n; i++) {
			struct dmnic_tx_buf *b = &tx->bufs[tx->tail];

			b->skb = NULL;
			dma_unmap_addr_set(b, dma, 0);	/* the pool's mapping */
			b->single = false;
			b->len = segs[i].len;
			b->xdp_netmem = segs[i].netmem;
			b->xsk_xdp = NULL;
			b->xsk_tx = false;
			b->pkt_bytes = 0;
			b->pkt_ndesc = 0;
			b->pkt_segs = 0;
			b->pkt_hdr_extra = 0;
			dmnic_tx_desc_fill(&tx->desc[tx->tail], dma[i],
					   segs[i].len, first, i == n - 1, NULL);
			tx->tail = (tx->tail + 1) & mask;
		}
		tx->bufs[first].pkt_bytes = len;
		tx->bufs[first].pkt_ndesc = n;
		txq_trans_cond_update(txq);
		dmnic_wr32(dm, DMNIC_QREG(qv->idx, DMNIC_Q_TXD + DMNIC_RING_DRV),
			   tx->tail);
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.xdp_tx++;
		u64_stats_update_end(&tx->stats.syncp);
		ok = true;
	}
	__netif_tx_unlock(txq);
	return ok;
}

/*
 * Take the header buffer a SOP completion names and check its length.
 * Returns 0 (after recycling the buffer or restarting the queue) if it
 * cannot be used; else the buffer, synced for the CPU.
 */
static netmem_ref dmnic_rx_take_hdr(struct dmnic *dm, struct dmnic_rx_queue *rx,
				    const struct dmnic_rx_cmpl *c, u32 *offset)
{
	u32 hdr_len = le16_to_cpu(c->hdr_len), lost = 0;
	netmem_ref netmem;

	netmem = dmnic_bufq_take(&rx->hdr, le16_to_cpu(c->hdr_id), offset,
				 &lost);
	if (unlikely(lost)) {
		/* one header buffer per packet: these packets were lost */
		u64_stats_update_begin(&rx->stats.syncp);
		rx->stats.drops += lost;
		u64_stats_update_end(&rx->stats.syncp);
	}
	if (unlikely(!netmem)) {
		/* an ID that is not posted: restart RX to reclaim the ring */
		dmnic_queue_bad(dm, rx->idx, false, "bad RX header buffer ID");
		return 0;
	}
	if (unlikely(!dmnic_rx_hdr_len_ok(hdr_len, rx->hdr.post_len))) {
		page_pool_put_netmem(rx->hdr.pool, netmem, -1, true);
		return 0;
	}
	page_pool_dma_sync_netmem_for_cpu(rx->hdr.pool, netmem,
					  *offset + rx->hdr.headroom, hdr_len);
	return netmem;
}

/* SOP: copy the header buffer into a new skb's linear area. */
static struct sk_buff *dmnic_rx_start_skb(struct dmnic *dm,
					  struct dmnic_napi *qv,
					  const struct dmnic_rx_cmpl *c)
{
	struct dmnic_rx_queue *rx = &qv->rx;
	u32 hdr_len = le16_to_cpu(c->hdr_len), offset;
	struct sk_buff *skb;
	netmem_ref netmem;
	void *data;

	netmem = dmnic_rx_take_hdr(dm, rx, c, &offset);
	if (!netmem)
		return NULL;

	/* The header pool never holds unreadable memory. */
	data = netmem_address(netmem) + offset + rx->hdr.headroom;
	skb = napi_alloc_skb(&qv->napi, hdr_len);
	if (skb) {
		skb_put_data(skb, data, hdr_len);
		skb_mark_for_recycle(skb);
	} else {
		dmnic_rx_alloc_failed(rx);
	}
	page_pool_put_netmem(rx->hdr.pool, netmem, -1, true);
	return skb;
}

/*
 * SOP on an XDP queue: the header buffer (a whole page with XDP headroom
 * and room for skb_shared_info) becomes the linear part of an xdp_buff.
 */
static bool dmnic_rx_start_xdp(struct dmnic *dm, struct dmnic_rx_queue *rx,
			       const struct dmnic_rx_cmpl *c)
{
	u32 offset;
	netmem_ref netmem;

	netmem = dmnic_rx_take_hdr(dm, rx, c, &offset);
	if (!netmem)
		return false;
	xdp_init_buff(&rx->xbuf.xdp, rx->hdr.buf_size, &rx->xdp_rxq);
	xdp_prepare_buff(&rx->xbuf.xdp, netmem_address(netmem) + offset,
			 rx->hdr.headroom, le16_to_cpu(c->hdr_len), true);
	rx->xbuf_hdr = netmem;
	return true;
}

static void dmnic_rx_add_payload(struct dmnic *dm, struct dmnic_rx_queue *rx,
				 const struct dmnic_rx_cmpl *c)
{
	u32 len = le32_to_cpu(c->pay_len), offset, lost = 0;
	struct sk_buff *skb = rx->skb;
	netmem_ref netmem;

	netmem = dmnic_bufq_take(&rx->pay, le16_to_cpu(c->pay_id), &offset,
				 &lost);
	if (unlikely(!netmem)) {
		dmnic_queue_bad(dm, rx->idx, false, "bad RX payload buffer ID");
		rx->skb_bad = true;
		return;
	}
	if (rx->xdp) {
		/* XDP reads frags: never attach unreadable memory (the core
		 * keeps XDP and memory providers apart; be sure anyway).
		 */
		if (unlikely(!rx->xbuf_hdr || rx->skb_bad || !len ||
			     len > rx->pay.buf_size ||
			     netmem_is_net_iov(netmem)))
			goto bad;
		page_pool_dma_sync_netmem_for_cpu(rx->pay.pool, netmem, offset,
						  len);
		if (unlikely(!xdp_buff_add_frag(&rx->xbuf.xdp, netmem, offset, len,
						rx->pay.buf_size)))
			goto bad;
		return;
	}
	if (unlikely(!skb || rx->skb_bad || !len || len > rx->pay.buf_size ||
		     skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS))
		goto bad;
	/* No-op for devmem: the binding's memory is never synced. */
	page_pool_dma_sync_netmem_for_cpu(rx->pay.pool, netmem, offset, len);
	skb_add_rx_frag_netmem(skb, skb_shinfo(skb)->nr_frags, netmem, offset,
			       len, rx->pay.buf_size);
	return;

bad:
	page_pool_put_netmem(rx->pay.pool, netmem, -1, true);
	rx->skb_bad = true;
}

/*
 * A coalesced packet (spec: Hardware GRO and LRO, Delivery): make it the
 * skb software GRO would have made (tcp4/6_gro_complete(),
 * ipip_gro_complete(), ip6ip6_gro_complete()). skb->data is at the outer
 * IP header; the device's candidates carry no VLAN tag. Returns the header
 * length of the packet, or 0 if it is not what the device promised.
 */
u32 dmnic_rx_gro_skb(struct sk_buff *skb, const struct dmnic_rx_cmpl *c,
		     u32 flags)
{
	u32 thoff = le16_to_cpu(c->l4_off), segs = c->gro_segs;
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int off = 0, inner = -1, l4;
	struct tcphdr *th;
	__be16 frag_off;
	u8 proto;

	if (segs < 2 || !le16_to_cpu(c->gro_mss) || thoff < ETH_HLEN)
		return 0;
	l4 = thoff - ETH_HLEN;
	if (!pskb_may_pull(skb, l4 + sizeof(*th)))
		return 0;
	skb_reset_network_header(skb);
	/* the IP headers: the outer one, and an encapsulated one (IPXIP) */
	while (off < l4) {
		if ((skb->data[off] >> 4) == 4) {
			proto = ((struct iphdr *)(skb->data + off))->protocol;
			off += sizeof(struct iphdr);
		} else {
			proto = ((struct ipv6hdr *)(skb->data + off))->nexthdr;
			off = ipv6_skip_exthdr(skb, off + sizeof(struct ipv6hdr),
					       &proto, &frag_off);
			if (off < 0)
				return 0;
		}
		if (proto == IPPROTO_TCP)
			break;
		if (inner >= 0 || (proto != IPPROTO_IPIP && proto != IPPROTO_IPV6))
			return 0;
		inner = off;
	}
	if (off != l4)
		return 0;
	th = (struct tcphdr *)(skb->data + l4);
	skb_set_transport_header(skb, l4);

	shinfo->gso_size = le16_to_cpu(c->gro_mss);
	shinfo->gso_type = 0;
	if (inner >= 0) {
		skb->encapsulation = 1;
		skb_set_inner_network_header(skb, inner);
		skb_set_inner_protocol(skb, (skb->data[inner] >> 4) == 4 ?
				       htons(ETH_P_IP) : htons(ETH_P_IPV6));
		shinfo->gso_type |= (skb->data[0] >> 4) == 4 ? SKB_GSO_IPXIP4 :
							       SKB_GSO_IPXIP6;
	}
	off = inner >= 0 ? inner : 0;
	if ((skb->data[off] >> 4) == 4) {
		const struct iphdr *iph = (struct iphdr *)(skb->data + off);

		th->check = ~tcp_v4_check(skb->len - l4, iph->saddr,
					  iph->daddr, 0);
		shinfo->gso_type |= SKB_GSO_TCPV4;
	} else {
		const struct ipv6hdr *ip6h = (struct ipv6hdr *)(skb->data + off);

		th->check = ~tcp_v6_check(skb->len - l4, &ip6h->saddr,
					  &ip6h->daddr, 0);
		shinfo->gso_type |= SKB_GSO_TCPV6;
	}
	if (flags & DMNIC_RXC_F_GRO_FIXEDID)
		shinfo->gso_type |= SKB_GSO_TCP_FIXEDID;
	if (flags & DMNIC_RXC_F_GRO_FIXEDID_INNER)
		shinfo->gso_type |= SKB_GSO_TCP_FIXEDID_INNER;
	NAPI_GRO_CB(skb)->count = segs;
	tcp_gro_complete(skb);
	return thoff + th->doff * 4;
}

/* EOP: checksum, hash, hand to GRO. skb->protocol is already set. */
static void dmnic_rx_deliver(struct dmnic *dm, struct dmnic_rx_queue *rx,
			     struct napi_struct *napi, struct sk_buff *skb,
			     const struct dmnic_rx_cmpl *c, u32 flags,
			     u32 bytes)
{
	enum dmnic_rx_verdict verdict;
	u32 gro_hlen = 0, segs = 1;
	u64 wire = bytes;

	verdict = dmnic_rx_verdict(flags, skb_shinfo(skb)->nr_frags,
				   skb_frags_readable(skb),
				   dm->netdev->features & NETIF_F_RXCSUM);
	if (verdict == DMNIC_RX_DROP) {
		rx->skb = skb;
		dmnic_rx_drop(rx);
		return;
	}
	skb_checksum_none_assert(skb);
	if (verdict == DMNIC_RX_PASS_CSUM_OK)
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	if (flags & DMNIC_RXC_F_GRO) {
		gro_hlen = dmnic_rx_gro_skb(skb, c, flags);
		if (unlikely(!gro_hlen)) {
			rx->skb = skb;
			dmnic_rx_drop(rx);
			return;
		}
		segs = c->gro_segs;
		wire = dmnic_gro_wire_bytes(bytes, segs, gro_hlen);
	}

	if ((flags & DMNIC_RXC_F_RSS) && (dm->netdev->features & NETIF_F_RXHASH))
		skb_set_hash(skb, le32_to_cpu(c->rss_hash),
			     dmnic_rx_hash_type(c->rss_type));

	skb_record_rx_queue(skb, rx->idx);
	if (rx->skb_ts)
		skb_hwtstamps(skb)->hwtstamp = ns_to_ktime(rx->skb_ts);

	/* qstats count wire packets; hw-gro only for GRO-HW, not LRO */
	u64_stats_update_begin(&rx->stats.syncp);
	rx->stats.packets += segs;
	rx->stats.bytes += wire;
	if (skb->ip_summed == CHECKSUM_NONE)
		rx->stats.csum_none++;
	else
		rx->stats.csum_unnecessary++;
	if (gro_hlen && (dm->netdev->features & NETIF_F_GRO_HW)) {
		rx->stats.hw_gro_packets++;
		rx->stats.hw_gro_bytes += bytes;
		rx->stats.hw_gro_wire_packets += segs;
		rx->stats.hw_gro_wire_bytes += wire;
	}
	if (flags & DMNIC_RXC_F_SPLIT)
		rx->stats.hds_split++;
	u64_stats_update_end(&rx->stats.syncp);

	napi_gro_receive(napi, skb);
}

static void dmnic_rx_finish(struct dmnic *dm, struct dmnic_rx_queue *rx,
			    struct napi_struct *napi,
			    const struct dmnic_rx_cmpl *c, u32 flags)
{
	struct sk_buff *skb = rx->skb;
	u32 placed = skb->len;

	if (unlikely(!dmnic_rx_pkt_len_ok(le32_to_cpu(c->pkt_len), placed))) {
		dmnic_rx_drop(rx);
		return;
	}
	rx->skb = NULL;
	if ((flags & DMNIC_RXC_F_PSP) && !dmnic_psp_rcv(dm, skb, flags)) {
		rx->skb = skb;
		dmnic_rx_drop(rx);
		return;
	}
	skb->protocol = eth_type_trans(skb, dm->netdev);
	dmnic_rx_deliver(dm, rx, napi, skb, c, flags, placed);
}

/* An XDP verdict's RX counters: the frame was received, and went @which way */
static void dmnic_rx_xdp_count(struct dmnic_rx_queue *rx, u32 len, u64 *which)
{
	u64_stats_update_begin(&rx->stats.syncp);
	rx->stats.packets++;
	rx->stats.bytes += len;
	(*which)++;
	u64_stats_update_end(&rx->stats.syncp);
}

/*
 * AF_XDP zero-copy XDP_TX: send the UMEM frame from where the program left
 * it; the TX completion gives it back to the pool.
 */
static bool dmnic_xsk_xdp_tx(struct dmnic *dm, struct dmnic_napi *qv,
			     struct xdp_buff *xdp)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, qv->idx);
	struct dmnic_tx_ring *tx = &qv->tx;
	u32 len = xdp->data_end - xdp->data;
	struct dmnic_tx_buf *b;
	dma_addr_t dma;
	bool ok = false;

	if (!len)
		return false;
	dma = xsk_buff_xdp_get_frame_dma(xdp) +
	      (xdp->data - xdp->data_hard_start);
	xsk_buff_raw_dma_sync_for_device(qv->rx.xsk_pool, dma, len);

	__netif_tx_lock(txq, smp_processor_id());
	if (dmnic_ring_space(tx->head, tx->tail, tx->size) >= 1) {
		b = &tx->bufs[tx->tail];
		memset(b, 0, sizeof(*b));
		b->len = len;
		b->xsk_xdp = xdp;
		b->pkt_bytes = len;
		b->pkt_ndesc = 1;
		dmnic_tx_desc_fill(&tx->desc[tx->tail], dma, len, tx->tail, true,
				   NULL);
		tx->tail = (tx->tail + 1) & (tx->size - 1);
		txq_trans_cond_update(txq);
		dmnic_wr32(dm, DMNIC_QREG(qv->idx, DMNIC_Q_TXD + DMNIC_RING_DRV),
			   tx->tail);
		u64_stats_update_begin(&tx->stats.syncp);
		tx->stats.xdp_tx++;
		u64_stats_update_end(&tx->stats.syncp);
		ok = true;
	}
	__netif_tx_unlock(txq);
	return ok;
}

/*
 * The verdict @act of the program on a received frame of @len bytes, for
 * the page-pool (@zc false) and the zero-copy path alike: XDP_TX and
 * XDP_REDIRECT send the frame on, and every verdict is counted. Returns
 * XDP_PASS (the caller builds the skb), XDP_DROP (the caller frees the
 * frame), or XDP_TX / XDP_REDIRECT (the frame is gone).
 *
 * A frame the device decrypted (PSP) leaves by neither: its payload is
 * plaintext, which PSP never puts on a wire; it is dropped (docs/psp.md).
 */
static u32 dmnic_rx_xdp_act(struct dmnic *dm, struct dmnic_napi *qv,
			    struct xdp_buff *xdp, struct bpf_prog *prog,
			    u32 act, u32 len, u32 flags, bool zc, bool *redir)
{
	struct dmnic_rx_queue *rx = &qv->rx;
	bool sent;

	if (unlikely(flags & DMNIC_RXC_F_PSP) &&
	    (act == XDP_TX || act == XDP_REDIRECT)) {
		trace_xdp_exception(dm->netdev, prog, act);
		act = XDP_DROP;
	}
	switch (act) {
	case XDP_PASS:
		return XDP_PASS;
	case XDP_REDIRECT:
		/* The target takes the frame (header page and frags). */
		if (!xdp_do_redirect(dm->netdev, xdp, prog)) {
			if (!zc)
				rx->xbuf_hdr = 0;
			*redir = true;
			dmnic_rx_xdp_count(rx, len, &rx->stats.xdp_redirect);
			return XDP_REDIRECT;
		}
		trace_xdp_exception(dm->netdev, prog, act);
		break;
	case XDP_TX:
		/* the TX completion recycles the buffers */
		sent = zc ? dmnic_xsk_xdp_tx(dm, qv, xdp) :
			    dmnic_xdp_tx(dm, qv, xdp, rx->xbuf_hdr);
		if (sent) {
			if (!zc)
				rx->xbuf_hdr = 0;
			dmnic_rx_xdp_count(rx, len, &rx->stats.xdp_tx);
			return XDP_TX;
		}
		u64_stats_update_begin(&rx->stats.syncp);
		rx->stats.xdp_tx_errors++;
		u64_stats_update_end(&rx->stats.syncp);
		trace_xdp_exception(dm->netdev, prog, act);
		break;
	default:
		bpf_warn_invalid_xdp_action(dm->netdev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(dm->netdev, prog, act);
		fallthrough;
	case XDP_DROP:
		break;
	}
	/* XDP is the first layer of the stack: its drops were received. */
	dmnic_rx_xdp_count(rx, len, &rx->stats.xdp_drops);
	return XDP_DROP;
}

/*
 * XDP_PASS of a frame the device decrypted: psp_dev_rcv() as on the
 * path without XDP (the skb is past eth_type_trans(): back to the MAC
 * header, and again after). False: drop it; a decrypted frame never goes
 * up as the UDP datagram it still looks like.
 */
static bool dmnic_rx_xdp_psp(struct dmnic *dm, struct sk_buff *skb, u32 flags)
{
	if (!(flags & DMNIC_RXC_F_PSP))
		return true;
	/* the program's metadata ends at the MAC header, which moves */
	skb_metadata_clear(skb);
	skb_push(skb, skb->data - skb_mac_header(skb));
	if (!dmnic_psp_rcv(dm, skb, flags))
		return false;
	skb->protocol = eth_type_trans(skb, dm->netdev);
	return true;
}

/*
 * EOP on an XDP queue: run the program on the assembled frame (header
 * buffer plus frags) and act on the verdict. A single buffer program never
 * sees a frame with frags: such frames (longer than the XDP MTU) are
 * dropped. Without a program (it is being detached) the frame passes.
 */
static void dmnic_rx_finish_xdp(struct dmnic *dm, struct dmnic_napi *qv,
				const struct dmnic_rx_cmpl *c, u32 flags,
				struct bpf_prog *prog, bool *redir)
{
	struct dmnic_rx_queue *rx = &qv->rx;
	struct xdp_buff *xdp = &rx->xbuf.xdp;
	u32 pkt_len = xdp_get_buff_len(xdp);
	struct sk_buff *skb;
	u32 act = XDP_PASS;

	if (unlikely(!dmnic_rx_pkt_len_ok(le32_to_cpu(c->pkt_len), pkt_len))) {
		dmnic_rx_drop(rx);
		return;
	}
	if (prog) {
		if (xdp_buff_has_frags(xdp) && !prog->aux->xdp_has_frags) {
			dmnic_rx_drop(rx);
			return;
		}
		rx->xbuf.cmpl = c;
		act = bpf_prog_run_xdp(prog, xdp);
		rx->xbuf.cmpl = NULL;
	}
	act = dmnic_rx_xdp_act(dm, qv, xdp, prog, act, pkt_len, flags, false,
			       redir);
	if (act == XDP_DROP)
		dmnic_rx_xbuf_put(rx, true);
	if (act != XDP_PASS)
		return;
	/* The skb takes over the header page and the frags. */
	skb = xdp_build_skb_from_buff(xdp);
	if (unlikely(!skb)) {
		dmnic_rx_alloc_failed(rx);
		dmnic_rx_drop(rx);
		return;
	}
	rx->xbuf_hdr = 0;
	if (unlikely(!dmnic_rx_xdp_psp(dm, skb, flags))) {
		rx->skb = skb;
		dmnic_rx_drop(rx);
		return;
	}
	dmnic_rx_deliver(dm, rx, &qv->napi, skb, c, flags, pkt_len);
}

/*
 * AF_XDP zero-copy: the socket's TX descriptors onto the pair's TX ring,
 * at most @budget. Returns true if it sent @budget (there may be more).
 */
static bool dmnic_xsk_xmit(struct dmnic *dm, struct dmnic_napi *qv,
			   unsigned int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(dm->netdev, qv->idx);
	struct dmnic_tx_ring *tx = &qv->tx;
	struct xsk_buff_pool *pool = tx->xsk_pool;
	unsigned int n = 0, room;
	struct xdp_desc desc;

	__netif_tx_lock(txq, smp_processor_id());
	/* leave the stack room for one packet, as XDP_TX may not */
	room = dmnic_ring_space(tx->head, tx->tail, tx->size);
	room = room > DMNIC_TX_DESC_NEEDED ? room - DMNIC_TX_DESC_NEEDED : 0;
	while (n < min(room, budget) && xsk_tx_peek_desc(pool, &desc)) {
		struct dmnic_tx_buf *b = &tx->bufs[tx->tail];
		dma_addr_t dma = xsk_buff_raw_get_dma(pool, desc.addr);

		/* the pool checked the length: 1..chunk size */
		xsk_buff_raw_dma_sync_for_device(pool, dma, desc.len);
		memset(b, 0, sizeof(*b));
		b->len = desc.len;
		b->xsk_tx = true;
		b->pkt_bytes = desc.len;
		b->pkt_ndesc = 1;
		dmnic_tx_desc_fill(&tx->desc[tx->tail], dma, desc.len, tx->tail,
				   true, NULL);
		tx->tail = (tx->tail + 1) & (tx->size - 1);
		n++;
	}
	if (n) {
		xsk_tx_release(pool);
		txq_trans_cond_update(txq);
		dmnic_wr32(dm, DMNIC_QREG(qv->idx, DMNIC_Q_TXD + DMNIC_RING_DRV),
			   tx->tail);
	}
	__netif_tx_unlock(txq);
	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);
	return n == budget;
}

/*
 * AF_XDP zero-copy SOP: take the UMEM frame the completion names (slots
 * the device skipped were lost packets, as in dmnic_bufq_take()).
 */
static struct xdp_buff *dmnic_xsk_take(struct dmnic *dm,
				       struct dmnic_rx_queue *rx,
				       const struct dmnic_rx_cmpl *c)
{
	struct dmnic_bufq *bq = &rx->hdr;
	u32 id = le16_to_cpu(c->hdr_id), mask = bq->size - 1, lost = 0;
	u32 hdr_len = le16_to_cpu(c->hdr_len);
	struct xdp_buff *xdp;

	if (unlikely(id >= bq->size || !bq->xsk[id])) {
		dmnic_queue_bad(dm, rx->idx, false, "bad RX header buffer ID");
		return NULL;
	}
	while (unlikely(bq->head != id)) {
		if (bq->xsk[bq->head]) {
			xsk_buff_free(bq->xsk[bq->head]);
			bq->xsk[bq->head] = NULL;
			lost++;
		}
		bq->head = (bq->head + 1) & mask;
	}
	xdp = bq->xsk[id];
	bq->xsk[id] = NULL;
	bq->head = (id + 1) & mask;
	if (unlikely(lost)) {
		u64_stats_update_begin(&rx->stats.syncp);
		rx->stats.drops += lost;
		u64_stats_update_end(&rx->stats.syncp);
	}
	if (unlikely(!dmnic_rx_hdr_len_ok(hdr_len, bq->post_len))) {
		xsk_buff_free(xdp);
		return NULL;
	}
	xsk_buff_set_size(xdp, hdr_len);
	xsk_buff_dma_sync_for_cpu(xdp);
	return xdp;
}

/* AF_XDP zero-copy EOP: run the program on the UMEM frame. */
static void dmnic_xsk_finish(struct dmnic *dm, struct dmnic_napi *qv,
			     const struct dmnic_rx_cmpl *c, u32 flags,
			     struct bpf_prog *prog, bool *redir)
{
	struct dmnic_rx_queue *rx = &qv->rx;
	struct xdp_buff *xdp = rx->xsk_cur;
	u32 len = xdp->data_end - xdp->data;
	struct sk_buff *skb;
	u32 act = XDP_PASS;

	if (unlikely(!dmnic_rx_pkt_len_ok(le32_to_cpu(c->pkt_len), len))) {
		dmnic_rx_drop(rx);
		return;
	}
	rx->xsk_cur = NULL;
	if (prog) {
		struct dmnic_xdp_buff *xb;

		xb = container_of(xdp, struct dmnic_xdp_buff, xdp);
		xb->cmpl = c;
		act = bpf_prog_run_xdp(prog, xdp);
		xb->cmpl = NULL;
	}
	act = dmnic_rx_xdp_act(dm, qv, xdp, prog, act, len, flags, true, redir);
	if (act == XDP_DROP)
		xsk_buff_free(xdp);
	if (act != XDP_PASS)
		return;
	/* copied out: the UMEM frame goes back to the pool */
	skb = xdp_build_skb_from_zc(xdp);
	if (unlikely(!skb)) {
		xsk_buff_free(xdp);
		dmnic_rx_alloc_failed(rx);
		dmnic_rx_drop(rx);
		return;
	}
	if (unlikely(!dmnic_rx_xdp_psp(dm, skb, flags))) {
		rx->skb = skb;
		dmnic_rx_drop(rx);
		return;
	}
	dmnic_rx_deliver(dm, rx, &qv->napi, skb, c, flags, len);
}

static int dmnic_rx_clean(struct dmnic *dm, struct dmnic_napi *qv, int budget)
{
	struct dmnic_rx_queue *rx = &qv->rx;
	struct napi_struct *napi = &qv->napi;
	unsigned int done = 0, seen = 0;
	struct bpf_prog *prog = NULL;
	bool redir = false;

	/* Only queues built for XDP (headroom, whole pages) run it. */
	if (rx->xdp)
		prog = READ_ONCE(dm->xdp_prog);

	while (done < budget && seen < rx->cmpl_size) {
		struct dmnic_rx_cmpl *c = &rx->cmpl[rx->cmpl_head];
		bool started = false;
		u32 flags;

		if (!dmnic_rx_cmpl_valid(c, rx->cmpl_gen))
			break;
		dma_rmb();
		flags = le32_to_cpu(c->flags);

		if (flags & DMNIC_RXC_F_SOP) {
			if (unlikely(rx->skb || rx->xbuf_hdr || rx->xsk_cur ||
				     rx->skb_bad))
				dmnic_rx_drop(rx);	/* EOP never came */
			rx->skb_ts = (flags & DMNIC_RXC_F_TS) && rx->ts ?
				     le64_to_cpu(rx->ts[rx->cmpl_head]) : 0;
			if ((flags & DMNIC_RXC_F_HDR) && rx->xsk_pool) {
				rx->xsk_cur = dmnic_xsk_take(dm, rx, c);
				started = rx->xsk_cur;
			} else if ((flags & DMNIC_RXC_F_HDR) && rx->xdp) {
				started = dmnic_rx_start_xdp(dm, rx, c);
			} else if (flags & DMNIC_RXC_F_HDR) {
				rx->skb = dmnic_rx_start_skb(dm, qv, c);
				started = rx->skb;
			}
			if (!started)
				rx->skb_bad = true;
		}
		/* zero-copy posts no payload buffer: any PAY is bad */
		if ((flags & DMNIC_RXC_F_PAY) && rx->xsk_pool) {
			dmnic_queue_bad(dm, rx->idx, false,
					"RX payload buffer on a zero-copy queue");
			rx->skb_bad = true;
		} else if (flags & DMNIC_RXC_F_PAY) {
			dmnic_rx_add_payload(dm, rx, c);
		}

		if (flags & DMNIC_RXC_F_EOP) {
			if (rx->skb_bad ||
			    (!rx->skb && !rx->xbuf_hdr && !rx->xsk_cur))
				dmnic_rx_drop(rx);
			else if (rx->xsk_cur)
				dmnic_xsk_finish(dm, qv, c, flags, prog, &redir);
			else if (rx->xdp)
				dmnic_rx_finish_xdp(dm, qv, c, flags, prog,
						    &redir);
			else
				dmnic_rx_finish(dm, rx, napi, c, flags);
			done++;
		}

		rx->cmpl_head = (rx->cmpl_head + 1) & (rx->cmpl_size - 1);
		if (!rx->cmpl_head)
			rx->cmpl_gen = dmnic_gen_flip(rx->cmpl_gen,
						      DMNIC_RXC_F_GEN);
		seen++;
	}

	if (seen)
		dmnic_wr32(dm, DMNIC_QREG(rx->idx, DMNIC_Q_RXC + DMNIC_RING_DRV),
			   rx->cmpl_head);
	if (redir)
		xdp_do_flush();
	return done;
}

void dmnic_refill_timer(struct timer_list *t)
{
	struct dmnic_napi *qv = timer_container_of(qv, t, refill_timer);

	napi_schedule(&qv->napi);
}

int dmnic_poll(struct napi_struct *napi, int budget)
{
	struct dmnic_napi *qv = container_of(napi, struct dmnic_napi, napi);
	struct dmnic *dm = qv->dm;
	unsigned int q = qv->idx;
	bool refilled, xsk_more = false;
	int done = 0;

	dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_INT_CAUSE),
		   DMNIC_Q_INT_RX | DMNIC_Q_INT_TX);

	dmnic_tx_clean(dm, &qv->tx, budget);
	/* netpoll (budget 0): TX completions only, no RX, XDP or page pool */
	if (!budget)
		return 0;
	if (qv->tx.xsk_pool)
		xsk_more = dmnic_xsk_xmit(dm, qv, budget);
	done = dmnic_rx_clean(dm, qv, budget);
	refilled = dmnic_rx_refill(dm, &qv->rx);

	if (done == budget || xsk_more)
		return budget;

	if (napi_complete_done(napi, done)) {
		dmnic_wr32(dm, DMNIC_QREG(q, DMNIC_Q_INT_MASK), 0);
		/* Pool ran dry (buffers held by userspace): retry soon. An
		 * AF_XDP socket with need_wakeup kicks us instead.
		 */
		if (!refilled && !(qv->rx.xsk_pool &&
				   xsk_uses_need_wakeup(qv->rx.xsk_pool)))
			mod_timer(&qv->refill_timer, jiffies + 1);
	}
	return done;
}

/*
 * ndo_xsk_wakeup: the application put frames on the fill or TX ring. Runs
 * without the instance lock: the queue pair may be replaced meanwhile
 * (freed after an RCU grace period); a pair without the socket's pool is
 * not in zero-copy mode (no XDP program, or being rebuilt).
 */
int dmnic_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags)
{
	struct dmnic *dm = netdev_priv(netdev);
	struct dmnic_napi *qv;
	int err = 0;

	if (!netif_running(netdev) || !netif_carrier_ok(netdev))
		return -ENETDOWN;
	if (qid >= DMNIC_MAX_QUEUES)
		return -EINVAL;
	rcu_read_lock();
	qv = READ_ONCE(dm->qv[qid]);
	if (!qv || !READ_ONCE(qv->rx.xsk_pool))
		err = -ENXIO;
	else
		napi_schedule(&qv->napi);	/* or mark a running poll missed */
	rcu_read_unlock();
	return err;
}

irqreturn_t dmnic_queue_irq(int irq, void *data)
{
	struct dmnic_napi *qv = data;

	dmnic_wr32(qv->dm, DMNIC_QREG(qv->idx, DMNIC_Q_INT_MASK),
		   DMNIC_Q_INT_RX | DMNIC_Q_INT_TX);
	napi_schedule_irqoff(&qv->napi);
	return IRQ_HANDLED;
}
