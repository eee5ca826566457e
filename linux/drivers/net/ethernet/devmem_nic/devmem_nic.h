/* SPDX-License-Identifier: GPL-2.0 */
/*
 * devmem-nic: driver state shared by the PCI glue, netdev, data path and
 * ethtool parts.
 */
#ifndef _DEVMEM_NIC_H_
#define _DEVMEM_NIC_H_

#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/netdevice.h>
#include <linux/net_tstamp.h>
#include <linux/pci.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/seqlock.h>
#include <linux/timer.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <net/netmem.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>

#include "devmem_nic_compat.h"
#include "devmem_nic_regs.h"

#define DMNIC_DRV_NAME		"devmem_nic"

/* Ring sizes the driver offers (the device takes 8..32768). */
#define DMNIC_RING_MIN		64
#define DMNIC_RING_MAX		4096
#define DMNIC_RING_DEFAULT	512

/* Header buffers are half pages carved from the readable header pool. */
#define DMNIC_HDR_BUF_SIZE	2048
/*
 * Payload buffers: a page, or what a memory provider asks for (io_uring
 * zcrx rx-buf-len, the queue config's rx_page_size), a power of two up to
 * the device's RXD_LEN limit.
 */
#define DMNIC_RX_BUF_MAX	min_t(u32, DMNIC_BUF_LEN_MAX, \
				      PAGE_SIZE << MAX_PAGE_ORDER)
#define DMNIC_MAX_MTU		9000
/*
 * Hardware GRO timing: a queue that held no new segment this long ends
 * its contexts (REG_GRO_TIMEOUT), long enough for the frames of a burst a
 * TCG guest sends one by one, well under the 100 ms pauses that end a
 * burst in the selftests (gro.c data_burst); other frames do not extend
 * it.  A context ends at this age however busy its queue is
 * (REG_GRO_MAX_AGE), long enough for gro.c's capacity test to open 500
 * flows before their second segments come.
 */
#define DMNIC_GRO_TIMEOUT_US	10000
#define DMNIC_GRO_MAX_AGE_US	1000000

/* Worst case descriptors per packet: head + all frags. */
#define DMNIC_TX_DESC_NEEDED	(MAX_SKB_FRAGS + 1)

/*
 * With an XDP program the header buffers are whole pages: XDP headroom in
 * front, room for skb_shared_info behind. A single buffer program needs
 * every frame up to the XDP MTU in the one (header) buffer; a multi-buffer
 * (frags) program gets longer frames as that buffer plus payload buffers
 * as frags.
 */
#define DMNIC_XDP_HEADROOM	XDP_PACKET_HEADROOM
#define DMNIC_XDP_BUF_LEN	(PAGE_SIZE - DMNIC_XDP_HEADROOM - \
				 SKB_DATA_ALIGN(sizeof(struct skb_shared_info)))
#define DMNIC_XDP_MAX_MTU	(DMNIC_XDP_BUF_LEN - ETH_HLEN - 2 * VLAN_HLEN)

#define DMNIC_NUM_RULES		DMNIC_NUM_FS_RULES
/*
 * Channels at probe: what the harness gave the device before it could have
 * 72 (rss_ctx.py's context32 raises them with ethtool -L), so the other
 * tests' queue count and memory stay as they were.
 */
#define DMNIC_DEFAULT_QUEUES	16
/* GSO types of the tunnels whose inner IP header TXD_TNL_INNER names */
#define DMNIC_GSO_TNL		(SKB_GSO_UDP_TUNNEL | SKB_GSO_UDP_TUNNEL_CSUM | \
				 SKB_GSO_GRE | SKB_GSO_GRE_CSUM)

/* In-memory formats, laid out as the DMNIC_RXD_, RXC_, TXD_, TXC_ offsets. */
struct dmnic_rx_buf_desc {
	__le64 addr;
	__le32 len;
	__le16 id;
	__le16 rsvd;
};

struct dmnic_rx_cmpl {
	__le16 hdr_id;
	__le16 hdr_len;
	__le16 pay_id;
	u8 gro_segs;
	u8 rss_type;
	__le32 pay_len;
	__le32 pkt_len;
	__le32 rss_hash;
	__le16 vlan_tci;
	__le16 l4_off;
	__le16 fs_rule;
	__le16 gro_mss;
	__le32 flags;
};

struct dmnic_tx_desc {
	__le64 addr;
	__le32 len;
	__le16 id;
	__le16 flags;
	__le16 csum_start;
	__le16 csum_offset;
	__le16 mss;
	__le16 psp_flags;
	__le32 psp_sa;
	__le16 tnl_inner;
	__le16 rsvd;
};

struct dmnic_tx_cmpl {
	__le16 id;
	__le16 ndesc;
	__le32 len;
	__le32 status;
	__le32 flags;
};

static_assert(sizeof(struct dmnic_rx_buf_desc) == DMNIC_RXD_SIZE);
static_assert(offsetof(struct dmnic_rx_buf_desc, len) == DMNIC_RXD_LEN);
static_assert(offsetof(struct dmnic_rx_buf_desc, id) == DMNIC_RXD_ID);
static_assert(sizeof(struct dmnic_rx_cmpl) == DMNIC_RXC_SIZE);
static_assert(offsetof(struct dmnic_rx_cmpl, hdr_len) == DMNIC_RXC_HDR_LEN);
static_assert(offsetof(struct dmnic_rx_cmpl, pay_id) == DMNIC_RXC_PAY_ID);
static_assert(offsetof(struct dmnic_rx_cmpl, rss_type) == DMNIC_RXC_RSS_TYPE);
static_assert(offsetof(struct dmnic_rx_cmpl, pay_len) == DMNIC_RXC_PAY_LEN);
static_assert(offsetof(struct dmnic_rx_cmpl, pkt_len) == DMNIC_RXC_PKT_LEN);
static_assert(offsetof(struct dmnic_rx_cmpl, rss_hash) == DMNIC_RXC_RSS_HASH);
static_assert(offsetof(struct dmnic_rx_cmpl, vlan_tci) == DMNIC_RXC_VLAN_TCI);
static_assert(offsetof(struct dmnic_rx_cmpl, fs_rule) == DMNIC_RXC_FS_RULE);
static_assert(offsetof(struct dmnic_rx_cmpl, gro_segs) == DMNIC_RXC_GRO_SEGS);
static_assert(offsetof(struct dmnic_rx_cmpl, gro_mss) == DMNIC_RXC_GRO_MSS);
static_assert(offsetof(struct dmnic_rx_cmpl, flags) == DMNIC_RXC_FLAGS);
static_assert(sizeof(struct dmnic_tx_desc) == DMNIC_TXD_SIZE);
static_assert(offsetof(struct dmnic_tx_desc, len) == DMNIC_TXD_LEN);
static_assert(offsetof(struct dmnic_tx_desc, id) == DMNIC_TXD_ID);
static_assert(offsetof(struct dmnic_tx_desc, flags) == DMNIC_TXD_FLAGS);
static_assert(offsetof(struct dmnic_tx_desc, csum_start) == DMNIC_TXD_CSUM_START);
static_assert(offsetof(struct dmnic_tx_desc, csum_offset) == DMNIC_TXD_CSUM_OFFSET);
static_assert(offsetof(struct dmnic_tx_desc, mss) == DMNIC_TXD_MSS);
static_assert(offsetof(struct dmnic_tx_desc, psp_flags) == DMNIC_TXD_PSP_FLAGS);
static_assert(offsetof(struct dmnic_tx_desc, psp_sa) == DMNIC_TXD_PSP_SA);
static_assert(offsetof(struct dmnic_tx_desc, tnl_inner) == DMNIC_TXD_TNL_INNER);
static_assert(offsetof(struct dmnic_tx_desc, rsvd) == DMNIC_TXD_PSP_RSVD);
static_assert(sizeof(struct dmnic_tx_cmpl) == DMNIC_TXC_SIZE);
static_assert(offsetof(struct dmnic_tx_cmpl, ndesc) == DMNIC_TXC_NDESC);
static_assert(offsetof(struct dmnic_tx_cmpl, len) == DMNIC_TXC_LEN);
static_assert(offsetof(struct dmnic_tx_cmpl, status) == DMNIC_TXC_STATUS);
static_assert(offsetof(struct dmnic_tx_cmpl, flags) == DMNIC_TXC_FLAGS);

struct dmnic;

/*
 * The device's own counters (spec: per-queue and global counters), which
 * a device reset clears: what they held before each reset is added up in
 * struct dmnic's hw_base_*, so the driver reports them monotonic.
 */
struct dmnic_hw_qstats {
	u64 rx_drop_nobuf;	/* Q_RX_DROP_NOBUF: no buffers (overruns) */
	u64 rx_drop_disabled;	/* Q_RX_DROP_DISABLED: queue off or in error */
	u64 rx_csum_bad;	/* Q_RX_CSUM_BAD */
	u64 rx_errors;		/* Q_RX_ERRORS: a direction stopped on an error */
	u64 tx_errors;		/* Q_TX_ERRORS */
	/* 1.3, CAPS_USO: Q_TX_LSO_*, TSO and USO super-frames segmented */
	u64 tx_lso_packets;
	u64 tx_lso_bytes;
	u64 tx_lso_wire_packets;
	u64 tx_lso_wire_bytes;
};

struct dmnic_hw_gstats {
	u64 rx_drop_rule;	/* G_RX_DROP_RULE: a drop rule */
	u64 rx_drop_badq;	/* G_RX_DROP_BADQ: steered to a missing queue */
	u64 rx_drop_link;	/* G_RX_DROP_LINK: link down */
	u64 rx_runt;		/* G_RX_RUNT: shorter than 14 bytes */
};

/* 1.3 pause and FEC counters (devmem_nic_mac.c), global */
struct dmnic_hw_mstats {
	u64 pause_rx;		/* G_PAUSE_RX */
	u64 pause_tx;		/* G_PAUSE_TX */
	u64 fec_corrected;	/* G_FEC_CORRECTED */
	u64 fec_uncorr;		/* G_FEC_UNCORR */
	u64 fec_corr_bits;	/* G_FEC_CORR_BITS */
	u64 fec_hist[DMNIC_FEC_HIST_BINS];	/* G_FEC_HIST(k) */
};

struct dmnic_tx_stats {
	u64 packets;
	u64 bytes;
	u64 csum_offload;
	u64 stop;
	u64 wake;
	u64 dropped;
	u64 xdp_tx;		/* frames sent by XDP_TX (also in packets) */
	struct u64_stats_sync syncp;
};

struct dmnic_rx_stats {
	u64 packets;
	u64 bytes;
	u64 csum_unnecessary;
	u64 csum_none;
	u64 hds_split;
	u64 hw_gro_packets;	/* coalesced packets (DMNIC_RXC_F_GRO) */
	u64 hw_gro_bytes;
	u64 hw_gro_wire_packets;	/* the segments they were made of */
	u64 hw_gro_wire_bytes;
	u64 alloc_fail;
	u64 drops;
	u64 xdp_drops;		/* XDP_DROP, XDP_ABORTED, failed XDP_TX */
	u64 xdp_tx;		/* XDP_TX verdicts */
	u64 xdp_tx_errors;	/* XDP_TX frames dropped: TX ring full */
	u64 xdp_redirect;	/* XDP_REDIRECT verdicts redirected */
	struct u64_stats_sync syncp;
};

/* What the TX completion path must do with one descriptor's buffer. */
struct dmnic_tx_buf {
	struct sk_buff *skb;	/* on the packet's last descriptor only */
	DEFINE_DMA_UNMAP_ADDR(dma);	/* 0: nothing to unmap (net_iov) */
	u32 len;
	bool single;		/* mapped with dma_map_single (linear part) */
	netmem_ref xdp_netmem;	/* XDP_TX: page pool buffer to recycle */
	/*
	 * On the packet's first descriptor: what the driver queued, so that a
	 * completion is checked against it and BQL never takes the device's
	 * word for the byte count.
	 */
	u32 pkt_bytes;		/* frame length (skb->len, XDP frame length) */
	u16 pkt_ndesc;		/* descriptors of the packet */
	u16 pkt_segs;		/* TSO/USO: frames on the wire (0: one) */
	u32 pkt_hdr_extra;	/* TSO/USO: header bytes the device adds */
	/* AF_XDP zero-copy: XDP_TX of a UMEM frame, freed on completion */
	struct xdp_buff *xsk_xdp;
	bool xsk_tx;		/* an AF_XDP TX descriptor (xsk_tx_completed) */
};

struct dmnic_tx_ring {
	struct dmnic_tx_desc *desc;
	dma_addr_t desc_dma;
	struct dmnic_tx_buf *bufs;
	struct dmnic_tx_cmpl *cmpl;
	dma_addr_t cmpl_dma;
	u32 size;		/* entries in both rings, power of two */
	u32 tail;		/* next descriptor the driver fills */
	u32 head;		/* next descriptor the driver cleans */
	u32 cmpl_head;		/* next completion to read */
	u32 cmpl_gen;		/* DMNIC_TXC_F_GEN value of a new completion */
	u16 idx;
	/* 1.3 TX timestamps, one per completion (CAPS_PTP), else NULL */
	__le64 *ts;
	dma_addr_t ts_dma;
	/* AF_XDP zero-copy: the queue pair's pool, NULL without */
	struct xsk_buff_pool *xsk_pool;
	struct dmnic_tx_stats stats;
};

/* One posted buffer ring (header or payload buffers). Buffer ID = slot. */
struct dmnic_bufq {
	struct dmnic_rx_buf_desc *desc;
	dma_addr_t desc_dma;
	netmem_ref *netmem;	/* netmem posted in each slot, 0 if empty */
	/* AF_XDP zero-copy (header ring only): UMEM frame of each slot */
	struct xdp_buff **xsk;
	u32 *offset;		/* offset of the buffer in its netmem */
	struct page_pool *pool;
	u32 size;		/* power of two */
	u32 tail;		/* next slot to post */
	u32 head;		/* next slot the device completes */
	u32 buf_size;		/* bytes per buffer (truesize) */
	u32 headroom;		/* the device writes from this offset on */
	u32 post_len;		/* length posted to the device */
	bool dry;		/* the last refill ran out of buffers */
};

/*
 * The xdp_buff a program runs on and the completion of its frame
 * (xdp_metadata_ops). An AF_XDP zero-copy frame is the xdp_buff of a
 * struct xdp_buff_xsk, whose cb holds @cmpl (XSK_CHECK_PRIV_TYPE).
 */
struct dmnic_xdp_buff {
	struct xdp_buff xdp;
	const struct dmnic_rx_cmpl *cmpl;
};

/*
 * Everything a live RX queue owns. This is also the per queue memory of
 * the queue management ops: a new one is built beside the live one and the
 * two are swapped by dmnic_queue_start().
 */
struct dmnic_rx_queue {
	struct dmnic_bufq hdr;
	struct dmnic_bufq pay;
	struct dmnic_rx_cmpl *cmpl;
	dma_addr_t cmpl_dma;
	u32 cmpl_size;
	u32 cmpl_head;		/* next completion to read */
	u32 cmpl_gen;		/* DMNIC_RXC_F_GEN value of a new completion */
	u16 idx;
	bool hds;		/* header split on for this queue */
	bool xdp;		/* buffers laid out for XDP (see XDP_HEADROOM) */
	struct xdp_rxq_info xdp_rxq;
	struct sk_buff *skb;	/* packet being assembled across completions */
	bool skb_bad;		/* drop the packet being assembled at EOP */
	bool skb_nomem;		/* ... for want of an skb (in alloc_fail) */
	/* XDP queues assemble an xdp_buff instead: header buffer + frags */
	struct dmnic_xdp_buff xbuf;
	netmem_ref xbuf_hdr;	/* its header buffer, 0 if none */
	/*
	 * AF_XDP zero-copy (XDP queues only): header buffers are UMEM frames
	 * of this pool, no payload buffer is posted, header split is off.
	 */
	struct xsk_buff_pool *xsk_pool;
	struct xdp_buff *xsk_cur;	/* UMEM frame of the packet being read */
	/* 1.3 RX timestamps, one per completion (CAPS_PTP), else NULL */
	__le64 *ts;
	dma_addr_t ts_dma;
	u64 skb_ts;		/* of the packet being assembled, 0: none */
	struct dmnic_rx_stats stats;	/* last: queue_start keeps it */
};

/* nothing but tail padding after the counters */
static_assert(ALIGN(offsetofend(struct dmnic_rx_queue, stats),
		    __alignof__(struct dmnic_rx_queue)) ==
	      sizeof(struct dmnic_rx_queue));

struct dmnic_napi {
	struct napi_struct napi;
	struct dmnic *dm;
	unsigned int idx;
	char irq_name[IFNAMSIZ + 16];
	struct timer_list refill_timer;	/* retry when the payload pool ran dry */
	struct dmnic_tx_ring tx;
	struct dmnic_rx_queue rx;
	struct rcu_head rcu;
};

/* A flow steering rule as the driver keeps it (network byte order). */
struct dmnic_rule {
	bool valid;
	u32 flow_type;		/* TCP_V4_FLOW, UDP_V4_FLOW, TCP_V6_FLOW, UDP_V6_FLOW */
	__be32 src_ip[4], src_ip_mask[4];
	__be32 dst_ip[4], dst_ip_mask[4];
	__be16 src_port, src_port_mask;
	__be16 dst_port, dst_port_mask;
	u64 ring_cookie;	/* queue index or RX_CLS_FLOW_DISC */
	bool rss;		/* FLOW_RSS: ring_cookie is a base queue */
	u32 rss_ctx;		/* with rss: the RSS context */
};

/* A rule as the device's FS data registers take it. */
struct dmnic_rule_regs {
	u32 ctrl;
	u32 action;
	u32 ports;
	u32 ports_mask;
	u32 src_ip[4], src_ip_mask[4];
	u32 dst_ip[4], dst_ip_mask[4];
};

/* What the driver programmed into a TX queue limiter (spec 1.3) */
struct dmnic_shaper_q {
	u64 rate;			/* bits/s, 0: none */
	u32 group;			/* SHQ_GROUP: 0 device, g + 1 group g */
	u32 weight;
};

/* A device group, taken by a node scope shaper */
struct dmnic_shaper_grp {
	bool used;
	u32 id;				/* the node's handle id */
	u64 rate;
	u32 parent;			/* SHG_PARENT: 0 device, g + 1 group g */
};

/* Transmit shaping state (devmem_nic_shaper.c), under the instance lock */
struct dmnic_shaper {
	u64 net_rate;
	struct dmnic_shaper_grp grp[DMNIC_SHAPER_NUM_GROUPS];
	struct dmnic_shaper_q q[DMNIC_MAX_QUEUES];
};

struct dmnic {
	struct net_device *netdev;
	struct pci_dev *pdev;
	void __iomem *regs;

	u32 caps;			/* DMNIC_REG_CAPS */
	unsigned int max_queues;	/* queue pairs the device offers */
	unsigned int num_queues;	/* queue pairs in use (channels) */
	unsigned int num_vecs;
	char admin_irq_name[32];
	struct work_struct admin_work;
	/* a queue did not quiesce: reset the device before reusing memory */
	struct work_struct reset_work;
	/* a provider went away: apply a wanted rx-checksumming off */
	struct work_struct features_work;

	u32 rx_ring_size;
	u32 tx_ring_size;
	bool hds_enabled;		/* tcp-data-split in effect */
	u32 hds_thresh;

	struct dmnic_napi *qv[DMNIC_MAX_QUEUES];	/* freed with kfree_rcu */

	u32 rss_indir[DMNIC_RSS_TBL_SIZE];
	/*
	 * entries in use, of every table: dmnic_rss_indir_size(num_queues,
	 * rss_tbl_max); rss_tbl_max: the device's, 512 with CAPS_RSS_TBL512
	 * (tables written at RSS_TBL, RSS_CTRL_TBL512 set), else 128
	 */
	u32 rss_indir_size;
	u32 rss_tbl_max;
	u8 rss_key[DMNIC_RSS_KEY_SIZE_MAX];
	u32 rss_key_size;		/* 40, or REG_RSS_KEY_SIZE (1.2) */
	bool rss_flow_label;		/* CAPS_RSS_FLOW_LABEL */
	u8 rss_hfields[DMNIC_RSS_NUM_TYPES];	/* DMNIC_RSS_HF_*, by type - 1 */
	bool rss_sym_xor;		/* input_xfrm RXH_XFRM_SYM_XOR */
	/* tables of RSS contexts 1.. (row 0 unused: rss_indir), live bits */
	u32 rss_ctx_indir[DMNIC_RSS_NUM_CTX][DMNIC_RSS_TBL_SIZE];
	DECLARE_BITMAP(rss_ctx_live, DMNIC_RSS_NUM_CTX);
	u32 rss_num_ctx;		/* REG_RSS_NUM_CTX, <= DMNIC_RSS_NUM_CTX */

	struct dmnic_rule rules[DMNIC_NUM_RULES];

	struct bpf_prog *xdp_prog;	/* native XDP (single or multi-buffer) */
	/*
	 * AF_XDP zero-copy pools by queue index (XDP_SETUP_XSK_POOL), DMA
	 * mapped; a queue pair uses its pool while an XDP program runs.
	 */
	struct xsk_buff_pool *xsk_pools[DMNIC_MAX_QUEUES];
	/* tcp-data-split explicitly ENABLED (not the UNKNOWN default) */
	bool hds_cfg_on;

	/* Queues the device stopped (Q_STATUS error), restarted by qerr_work */
	struct delayed_work qerr_work;
	struct delayed_work health_work;	/* polls for errors (lost MSI) */
	unsigned long qerr_last;	/* jiffies of the last recovery */
	unsigned long qerr_delay;	/* back-off while errors repeat */
	u64 qerr_rx;			/* RX directions recovered */
	u64 qerr_tx;			/* TX directions recovered */
	/* directions the driver found broken (bad completions, TX timeout) */
	DECLARE_BITMAP(qerr_sw_rx, DMNIC_MAX_QUEUES);
	DECLARE_BITMAP(qerr_sw_tx, DMNIC_MAX_QUEUES);

	/*
	 * stats of queues that no longer exist (channels shrunk, restarts).
	 * A queue's counters move into them under @stats_lock, so that a
	 * lockless ndo_get_stats64 sees them either in the queue or in the
	 * base, never in both or neither (u64_stats_sync orders nothing on
	 * 64-bit).
	 */
	seqlock_t stats_lock;
	struct dmnic_rx_stats base_rx;
	struct dmnic_tx_stats base_tx;
	/* device counters before the last reset (under @stats_lock) */
	struct dmnic_hw_qstats hw_base_q[DMNIC_MAX_QUEUES];
	struct dmnic_hw_gstats hw_base_g;
	struct dmnic_hw_mstats hw_base_m;	/* under the instance lock */
	/* dmnic_hw_stats_freeze()'s reads (instance lock) */
	struct dmnic_hw_qstats hw_freeze_q[DMNIC_MAX_QUEUES];
	/* between PCI reset_prepare and reset_done: do not read the device */
	bool hw_stats_frozen;

	struct dmnic_psp *psp;		/* PSP offload, NULL without */

	/* 1.3 pause and FEC settings, restored after a device reset */
	u32 pause_ctrl;			/* DMNIC_PAUSE_CTRL_* */
	u32 fec_mode;			/* DMNIC_FEC_* */
	bool fec_auto;			/* asked for ETHTOOL_FEC_AUTO */

	/* 1.3 PTP clock (devmem_nic_ptp.c); ptp_clock NULL without */
	struct ptp_clock_info ptp_info;
	struct ptp_clock *ptp_clock;
	spinlock_t ptp_lock;		/* PTP_ARG + PTP_CMD, PTP_TIME_* */
	struct kernel_hwtstamp_config hwts;	/* instance lock */

	/* 1.3 transmit shaping, restored after a device reset */
	struct dmnic_shaper shaper;
};

bool dmnic_hds_want(bool hds_enabled, bool hds_cfg_on, bool xdp,
		    bool xdp_frags);

/*
 * Header split as the queues do it: single buffer XDP needs whole frames;
 * multi-buffer XDP splits only if tcp-data-split was asked for explicitly.
 */
static inline bool dmnic_hds_active(const struct dmnic *dm)
{
	const struct bpf_prog *prog = dm->xdp_prog;

	return dmnic_hds_want(dm->hds_enabled, dm->hds_cfg_on, !!prog,
			      prog && prog->aux->xdp_has_frags);
}

static inline u32 dmnic_rd32(struct dmnic *dm, u32 reg)
{
	return readl(dm->regs + reg);
}

static inline void dmnic_wr32(struct dmnic *dm, u32 reg, u32 val)
{
	writel(val, dm->regs + reg);
}

/*
 * A 64-bit register pair in one access (spec: Conventions), how the 64-bit
 * counters are read atomically. Where the CPU has no 64-bit MMIO (32-bit
 * builds) readq is two 32-bit reads, low word first: PTP_TIME_LO latches
 * the time that the TIME_HI read returns, but a counter that carries into
 * its high word between the two accesses reads torn.
 */
static inline u64 dmnic_rd64(struct dmnic *dm, u32 reg)
{
	return readq(dm->regs + reg);
}

static inline void dmnic_wr_ring(struct dmnic *dm, unsigned int q, u32 ring,
				 dma_addr_t base, u32 size)
{
	dmnic_wr32(dm, DMNIC_QREG(q, ring + DMNIC_RING_BASE_LO),
		   lower_32_bits(base));
	dmnic_wr32(dm, DMNIC_QREG(q, ring + DMNIC_RING_BASE_HI),
		   upper_32_bits(base));
	dmnic_wr32(dm, DMNIC_QREG(q, ring + DMNIC_RING_SIZE), size);
}

/* MSI-X: vector q belongs to queue pair q, vector NUM_QUEUES is admin. */
static inline int dmnic_queue_irq_nr(struct dmnic *dm, unsigned int q)
{
	return pci_irq_vector(dm->pdev, q);
}

static inline int dmnic_admin_irq_nr(struct dmnic *dm)
{
	return pci_irq_vector(dm->pdev, dm->max_queues);
}

enum dmnic_rx_csum {
	DMNIC_RX_CSUM_NONE,
	DMNIC_RX_CSUM_OK,
	DMNIC_RX_CSUM_BAD,
};

enum dmnic_rx_verdict {
	DMNIC_RX_PASS,		/* deliver, CHECKSUM_NONE */
	DMNIC_RX_PASS_CSUM_OK,	/* deliver, CHECKSUM_UNNECESSARY */
	DMNIC_RX_DROP,
};

/* Pure helpers (no device access), covered by KUnit. */
unsigned int dmnic_ring_used(u32 head, u32 tail, u32 size);
unsigned int dmnic_ring_space(u32 head, u32 tail, u32 size);
void dmnic_tx_desc_fill(struct dmnic_tx_desc *d, dma_addr_t addr, u32 len,
			u16 id, bool eop, const struct sk_buff *csum_skb);
bool dmnic_rx_cmpl_valid(const struct dmnic_rx_cmpl *c, u32 gen);
bool dmnic_tx_cmpl_valid(const struct dmnic_tx_cmpl *c, u32 gen);
bool dmnic_tx_cmpl_matches(const struct dmnic_tx_cmpl *c, u32 head,
			   unsigned int used, const struct dmnic_tx_buf *first);
u32 dmnic_gso_hdr_len(const struct sk_buff *skb);
enum dmnic_rx_csum dmnic_rx_csum_status(u32 flags);
enum dmnic_rx_verdict dmnic_rx_verdict(u32 flags, unsigned int nr_frags,
				       bool readable, bool rxcsum);
bool dmnic_rx_hdr_len_ok(u32 hdr_len, u32 post_len);
bool dmnic_rx_pkt_len_ok(u32 pkt_len, u32 placed);
u32 dmnic_gro_ctrl(netdev_features_t features);
void dmnic_gro_program(struct dmnic *dm, netdev_features_t features);
u64 dmnic_gro_wire_bytes(u32 bytes, u32 segs, u32 hdr_len);
u32 dmnic_rx_gro_skb(struct sk_buff *skb, const struct dmnic_rx_cmpl *c,
		     u32 flags);
enum pkt_hash_types dmnic_rx_hash_type(u8 rss_type);
enum xdp_rss_hash_type dmnic_xdp_rss_type(u8 rss_type);
unsigned int dmnic_xdp_max_mtu(bool xdp_frags);

/* One TX descriptor's worth of an XDP_TX frame. */
struct dmnic_xdp_seg {
	netmem_ref netmem;
	u32 off;		/* offset of the data in the netmem */
	u32 len;
};

int dmnic_xdp_tx_segs(const struct xdp_buff *xdp, netmem_ref hdr,
		      u32 hdr_off, struct dmnic_xdp_seg *segs,
		      unsigned int max);
unsigned long dmnic_qerr_backoff(unsigned long prev, bool recent,
				 unsigned long max);
int dmnic_rule_from_flow_spec(const struct ethtool_rx_flow_spec *fs,
			      struct dmnic_rule *rule);
void dmnic_rule_to_flow_spec(const struct dmnic_rule *rule,
			     struct ethtool_rx_flow_spec *fs);
void dmnic_rule_encode(const struct dmnic_rule *rule,
		       struct dmnic_rule_regs *regs);
bool dmnic_rule_same_match(const struct dmnic_rule *a,
			   const struct dmnic_rule *b);
int dmnic_rss_rules_conflict(const struct dmnic_rule *rules,
			     unsigned int nrules, u32 ctx, const u32 *indir,
			     unsigned int indir_size, unsigned int num_queues);
int dmnic_rss_hash_type(u32 flow_type);
u32 dmnic_rss_hf_default(int type);
u32 dmnic_rss_indir_size(unsigned int num_queues, u32 tbl_max);
void dmnic_rss_indir_resize(u32 *tbl, u32 old_size, u32 new_size);
u64 dmnic_rss_hf_to_rxh(u32 hf);
int dmnic_rss_rxh_to_hf(u32 flow_type, u64 rxh, bool fl, u32 *hf);

/* devmem_nic_main.c */
void dmnic_update_link(struct dmnic *dm);
void dmnic_reset_dma(struct dmnic *dm);
void dmnic_schedule_reset(struct dmnic *dm);

/* devmem_nic_netdev.c */
void dmnic_netdev_init(struct dmnic *dm);
void dmnic_hw_stats_freeze(struct dmnic *dm);
void dmnic_hw_stats_thaw(struct dmnic *dm);
void dmnic_hw_qstats_get(struct dmnic *dm, unsigned int q,
			 struct dmnic_hw_qstats *hq);
void dmnic_hw_gstats_get(struct dmnic *dm, struct dmnic_hw_gstats *hg);
void dmnic_rss_default(struct dmnic *dm);
void dmnic_rss_key_write(struct dmnic *dm);
void dmnic_rss_write(struct dmnic *dm);
void dmnic_rss_tbl_write(struct dmnic *dm, u32 ctx, const u32 *tbl);
void dmnic_hds_thresh_write(struct dmnic *dm);
int dmnic_reconfigure(struct dmnic *dm, unsigned int num_queues,
		      u32 rx_ring_size, u32 tx_ring_size, bool hds);
void dmnic_qerr_work(struct work_struct *work);
void dmnic_features_work(struct work_struct *work);
void dmnic_queue_bad(struct dmnic *dm, unsigned int q, bool tx,
		     const char *why);
void dmnic_quiesce(struct dmnic *dm);
int dmnic_restore(struct dmnic *dm);
extern const struct netdev_queue_mgmt_ops dmnic_queue_mgmt_ops;
extern const struct netdev_stat_ops dmnic_stat_ops;
extern const struct xdp_metadata_ops dmnic_xdp_metadata_ops;

/* devmem_nic_txrx.c */
netdev_tx_t dmnic_xmit(struct sk_buff *skb, struct net_device *netdev);
int dmnic_poll(struct napi_struct *napi, int budget);
irqreturn_t dmnic_queue_irq(int irq, void *data);
void dmnic_refill_timer(struct timer_list *t);
int dmnic_tx_alloc(struct dmnic *dm, struct dmnic_tx_ring *tx);
void dmnic_tx_free(struct dmnic *dm, struct dmnic_tx_ring *tx);
void dmnic_tx_hw_start(struct dmnic *dm, struct dmnic_tx_ring *tx);
void dmnic_tx_clean_all(struct dmnic *dm, struct dmnic_tx_ring *tx);
int dmnic_rx_alloc(struct dmnic *dm, struct dmnic_rx_queue *rx,
		   unsigned int idx, struct napi_struct *napi, u32 pay_size);
int dmnic_rx_buf_size_check(u32 size);
void dmnic_rx_free(struct dmnic *dm, struct dmnic_rx_queue *rx);
void dmnic_rx_hw_start(struct dmnic *dm, struct dmnic_rx_queue *rx);
struct xsk_buff_pool *dmnic_xsk_pool(struct dmnic *dm, unsigned int q);
u32 dmnic_xsk_post_len(u32 frame_size);
bool dmnic_xsk_frame_ok(u32 frame_size, unsigned int mtu);
void dmnic_xsk_rx_release(struct dmnic_rx_queue *rx);
int dmnic_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags);
int dmnic_queue_hw_stop(struct dmnic *dm, unsigned int q, bool tx);

/* devmem_nic_psp.c */
#if IS_ENABLED(CONFIG_INET_PSP)
void dmnic_psp_init(struct dmnic *dm);
void dmnic_psp_fini(struct dmnic *dm);
void dmnic_psp_reset_prepare(struct dmnic *dm);
void dmnic_psp_restore(struct dmnic *dm);
int dmnic_psp_xmit(struct dmnic *dm, struct sk_buff *skb);
void dmnic_psp_desc(struct dmnic_tx_desc *d, int psp);
void dmnic_psp_tx_dropped(struct dmnic *dm);
bool dmnic_psp_rcv(struct dmnic *dm, struct sk_buff *skb, u32 flags);
#else
static inline void dmnic_psp_init(struct dmnic *dm) {}
static inline void dmnic_psp_fini(struct dmnic *dm) {}
static inline void dmnic_psp_reset_prepare(struct dmnic *dm) {}
static inline void dmnic_psp_restore(struct dmnic *dm) {}
static inline int dmnic_psp_xmit(struct dmnic *dm, struct sk_buff *skb)
{
	return 0;
}

static inline void dmnic_psp_desc(struct dmnic_tx_desc *d, int psp) {}
static inline void dmnic_psp_tx_dropped(struct dmnic *dm) {}
static inline bool dmnic_psp_rcv(struct dmnic *dm, struct sk_buff *skb,
				 u32 flags)
{
	return false;
}
#endif

/* devmem_nic_ethtool.c */
extern const struct ethtool_ops dmnic_ethtool_ops;
void dmnic_get_pauseparam(struct net_device *netdev,
			  struct ethtool_pauseparam *pause);
int dmnic_set_pauseparam(struct net_device *netdev,
			 struct ethtool_pauseparam *pause);
void dmnic_get_pause_stats(struct net_device *netdev,
			   struct ethtool_pause_stats *stats);
int dmnic_get_fecparam(struct net_device *netdev,
		       struct ethtool_fecparam *fec);
int dmnic_set_fecparam(struct net_device *netdev,
		       struct ethtool_fecparam *fec);
void dmnic_get_fec_stats(struct net_device *netdev,
			 struct ethtool_fec_stats *stats,
			 struct ethtool_fec_hist *hist);
void dmnic_mac_program(struct dmnic *dm);
void dmnic_hw_mstats_freeze(struct dmnic *dm);
void dmnic_ptp_init(struct dmnic *dm);
void dmnic_ptp_fini(struct dmnic *dm);
u32 dmnic_ptp_ctrl(const struct dmnic *dm);
int dmnic_hwtstamp_get(struct net_device *netdev,
		       struct kernel_hwtstamp_config *cfg);
int dmnic_hwtstamp_set(struct net_device *netdev,
		       struct kernel_hwtstamp_config *cfg,
		       struct netlink_ext_ack *extack);
int dmnic_get_ts_info(struct net_device *netdev,
		      struct kernel_ethtool_ts_info *info);
void dmnic_rules_write_all(struct dmnic *dm);
/* devmem_nic_shaper.c */
extern const struct net_shaper_ops dmnic_shaper_ops;
void dmnic_shaper_program(struct dmnic *dm);
void dmnic_shaper_trim(struct dmnic *dm, unsigned int num_queues);
void dmnic_rss_hash_init(struct dmnic *dm);
void dmnic_rss_hash_write(struct dmnic *dm);

#endif /* _DEVMEM_NIC_H_ */
