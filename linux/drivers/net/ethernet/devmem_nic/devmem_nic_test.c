// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the pure parts of the devmem-nic driver: ring accounting,
 * descriptor and completion encoding, flow rule encoding (also to RSS
 * contexts), RSS hash field mapping; and of the TX completion paths on a
 * queue pair in plain memory (devmem_nic_txpath). They need no device;
 * built into the driver, they run at boot.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/skbuff.h>
#include <linux/unaligned.h>
#include <net/page_pool/helpers.h>
#include <net/psp.h>
#include <net/sch_generic.h>
#include <net/tcp.h>

#include "devmem_nic.h"

/* ---- ring accounting ---- */

struct dmnic_ring_case {
	u32 head, tail, size, used, space;
};

static const struct dmnic_ring_case dmnic_ring_cases[] = {
	{ .head = 0, .tail = 0, .size = 8, .used = 0, .space = 7 },
	{ .head = 0, .tail = 7, .size = 8, .used = 7, .space = 0 },
	{ .head = 5, .tail = 4, .size = 8, .used = 7, .space = 0 },
	{ .head = 6, .tail = 2, .size = 8, .used = 4, .space = 3 },
	{ .head = 4095, .tail = 0, .size = 4096, .used = 1, .space = 4094 },
	{ .head = 3, .tail = 3, .size = 32768, .used = 0, .space = 32767 },
};

static void dmnic_ring_case_desc(const struct dmnic_ring_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "head %u tail %u size %u",
		 c->head, c->tail, c->size);
}

KUNIT_ARRAY_PARAM(dmnic_ring, dmnic_ring_cases, dmnic_ring_case_desc);

static void dmnic_test_ring_accounting(struct kunit *test)
{
	const struct dmnic_ring_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, dmnic_ring_used(c->head, c->tail, c->size),
			c->used);
	KUNIT_EXPECT_EQ(test, dmnic_ring_space(c->head, c->tail, c->size),
			c->space);
	/* used + space is always size - 1: one slot stays empty */
	KUNIT_EXPECT_EQ(test, dmnic_ring_used(c->head, c->tail, c->size) +
			dmnic_ring_space(c->head, c->tail, c->size),
			c->size - 1);
}

/* ---- TX descriptor encoding ---- */

static void dmnic_test_tx_desc_plain(struct kunit *test)
{
	/* all 64 bits where dma_addr_t has them, the low 32 on 32-bit */
	const dma_addr_t addr = (dma_addr_t)0x1122334455667788ULL;
	struct dmnic_tx_desc d;
	const u8 *raw = (const u8 *)&d;

	memset(&d, 0xa5, sizeof(d));
	dmnic_tx_desc_fill(&d, addr, 3, 0x4321, true, NULL);

	/* byte offsets from the shared register header */
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(raw + DMNIC_TXD_ADDR),
			(u64)addr);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(raw + DMNIC_TXD_LEN), 3);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_ID), 0x4321);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_FLAGS),
			DMNIC_TXD_F_EOP);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_CSUM_START), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_MSS), 0);
	/* reserved bytes are zero */
	KUNIT_EXPECT_EQ(test, get_unaligned_le64(raw + 0x16), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + 0x1e), 0);
}

static void dmnic_test_tx_desc_csum(struct kunit *test)
{
	struct sk_buff *skb;
	struct dmnic_tx_desc d;
	const u8 *raw = (const u8 *)&d;

	skb = alloc_skb(128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put(skb, 100);
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb) + 34;	/* eth + ipv4 */
	skb->csum_offset = 16;				/* tcp check */

	dmnic_tx_desc_fill(&d, 0x1000, 100, 7, false, skb);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_FLAGS),
			DMNIC_TXD_F_CSUM);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_CSUM_START),
			34);
	KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_CSUM_OFFSET),
			16);
	kfree_skb(skb);
}

/*
 * A GSO skb: TSO for TCP, USO for UDP_L4 (spec 1.3), MSS = gso_size, and
 * the header bytes the device copies to each segment.
 */
static void dmnic_test_tx_desc_gso(struct kunit *test)
{
	static const struct {
		unsigned int gso_type;
		u16 csum_offset;
		u16 flag;
		u32 hdr_len;
	} cases[] = {
		{ SKB_GSO_TCPV4, 16, DMNIC_TXD_F_TSO, 14 + 20 + 32 },
		{ SKB_GSO_TCPV6, 16, DMNIC_TXD_F_TSO, 14 + 20 + 32 },
		{ SKB_GSO_UDP_L4, 6, DMNIC_TXD_F_USO, 14 + 20 + 8 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dmnic_tx_desc d;
		const u8 *raw = (const u8 *)&d;
		struct sk_buff *skb;
		struct tcphdr *th;

		skb = alloc_skb(256, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_put_zero(skb, 200);
		skb_set_network_header(skb, 14);
		skb_set_transport_header(skb, 34);
		th = tcp_hdr(skb);
		th->doff = 8;			/* 32 bytes, with options */
		skb->ip_summed = CHECKSUM_PARTIAL;
		skb->csum_start = skb_headroom(skb) + 34;
		skb->csum_offset = cases[i].csum_offset;
		skb_shinfo(skb)->gso_size = 1400;
		skb_shinfo(skb)->gso_segs = 3;
		skb_shinfo(skb)->gso_type = cases[i].gso_type;

		dmnic_tx_desc_fill(&d, 0x1000, 200, 7, true, skb);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_FLAGS),
				DMNIC_TXD_F_EOP | DMNIC_TXD_F_CSUM |
				cases[i].flag);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_MSS),
				1400);
		KUNIT_EXPECT_EQ(test,
				get_unaligned_le16(raw + DMNIC_TXD_CSUM_OFFSET),
				cases[i].csum_offset);
		KUNIT_EXPECT_EQ(test, dmnic_gso_hdr_len(skb), cases[i].hdr_len);
		kfree_skb(skb);
	}
}

/*
 * 1.3 tunnel TSO: a UDP or GRE tunnel names its inner IP header
 * (TXD_TNL_INNER), the outer UDP checksum is asked for with TXD_F_TNL_CSUM,
 * IP-in-IP needs neither; the headers copied run to the inner TCP header's
 * end.
 */
static void dmnic_test_tx_desc_tnl(struct kunit *test)
{
	static const struct {
		unsigned int gso_type;
		u16 inner;		/* inner IPv4 header */
		u16 tnl_inner;
		u16 flag;
	} cases[] = {
		/* Ethernet, IPv4, UDP, VXLAN, inner Ethernet */
		{ SKB_GSO_TCPV4 | SKB_GSO_UDP_TUNNEL, 64, 64, 0 },
		{ SKB_GSO_TCPV4 | SKB_GSO_UDP_TUNNEL_CSUM, 64, 64,
		  DMNIC_TXD_F_TNL_CSUM },
		/* Ethernet, IPv4, GRE with checksum */
		{ SKB_GSO_TCPV4 | SKB_GSO_GRE_CSUM, 42, 42, 0 },
		/* Ethernet, IPv4: ipip */
		{ SKB_GSO_TCPV4 | SKB_GSO_IPXIP4, 34, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dmnic_tx_desc d;
		const u8 *raw = (const u8 *)&d;
		struct sk_buff *skb;
		u16 tcp = cases[i].inner + 20;

		skb = alloc_skb(256, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_put_zero(skb, 200);
		skb_set_network_header(skb, 14);
		skb_set_transport_header(skb, 34);
		skb_set_inner_network_header(skb, cases[i].inner);
		skb_set_inner_transport_header(skb, tcp);
		skb->encapsulation = 1;
		inner_tcp_hdr(skb)->doff = 5;
		skb->ip_summed = CHECKSUM_PARTIAL;
		skb->csum_start = skb_headroom(skb) + tcp;
		skb->csum_offset = 16;
		skb_shinfo(skb)->gso_size = 1400;
		skb_shinfo(skb)->gso_segs = 3;
		skb_shinfo(skb)->gso_type = cases[i].gso_type;

		dmnic_tx_desc_fill(&d, 0x1000, 200, 7, true, skb);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_FLAGS),
				DMNIC_TXD_F_EOP | DMNIC_TXD_F_CSUM |
				DMNIC_TXD_F_TSO | cases[i].flag);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_CSUM_START),
				tcp);
		KUNIT_EXPECT_EQ(test, get_unaligned_le16(raw + DMNIC_TXD_TNL_INNER),
				cases[i].tnl_inner);
		KUNIT_EXPECT_EQ(test, dmnic_gso_hdr_len(skb), tcp + 20);
		kfree_skb(skb);
	}
}

/* ---- completion decoding ---- */

static void dmnic_test_cmpl_gen(struct kunit *test)
{
	struct dmnic_rx_cmpl rc = {};
	struct dmnic_tx_cmpl tc = {};

	/* a zeroed ring holds no valid entry for the first pass (GEN = 1) */
	KUNIT_EXPECT_FALSE(test, dmnic_rx_cmpl_valid(&rc, DMNIC_RXC_F_GEN));
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_valid(&tc, DMNIC_TXC_F_GEN));
	/* ... but a stale first-pass entry is not valid in the second pass */
	rc.flags = cpu_to_le32(DMNIC_RXC_F_GEN | DMNIC_RXC_F_SOP);
	tc.flags = cpu_to_le32(DMNIC_TXC_F_GEN);
	KUNIT_EXPECT_TRUE(test, dmnic_rx_cmpl_valid(&rc, DMNIC_RXC_F_GEN));
	KUNIT_EXPECT_FALSE(test, dmnic_rx_cmpl_valid(&rc, 0));
	KUNIT_EXPECT_TRUE(test, dmnic_tx_cmpl_valid(&tc, DMNIC_TXC_F_GEN));
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_valid(&tc, 0));
}

/*
 * A TX completion is taken only if it names the packet the driver queued:
 * ID, descriptor count and length. The length is what BQL is told, so a
 * corrupted TXC_LEN (x-fault-corrupt-cpl Q:N:len ORs 0xffff0000 into it)
 * must be refused, not handed to dql_completed().
 */
static void dmnic_test_tx_cmpl_matches(struct kunit *test)
{
	struct dmnic_tx_buf first = { .pkt_bytes = 1514, .pkt_ndesc = 3 };
	struct dmnic_tx_cmpl c = {
		.id = cpu_to_le16(17),
		.ndesc = cpu_to_le16(3),
		.len = cpu_to_le32(1514),
		.flags = cpu_to_le32(DMNIC_TXC_F_GEN),
	};

	KUNIT_EXPECT_TRUE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
	KUNIT_EXPECT_TRUE(test, dmnic_tx_cmpl_matches(&c, 17, 100, &first));
	/*
	 * the status does not matter: a link-down or PSP-error packet was
	 * still queued
	 */
	c.status = cpu_to_le32(DMNIC_TXC_S_LINK_DOWN);
	KUNIT_EXPECT_TRUE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
	c.status = cpu_to_le32(DMNIC_TXC_S_PSP_ERROR);
	KUNIT_EXPECT_TRUE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));

	/* corrupted length, as the fault knob makes it, or any other one */
	c.len = cpu_to_le32(1514 | 0xffff0000);
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
	c.len = cpu_to_le32(1513);
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
	c.len = cpu_to_le32(1514);

	/* wrong ID (XOR 0x8000 from the knob), head elsewhere */
	c.id = cpu_to_le16(17 ^ 0x8000);
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
	c.id = cpu_to_le16(17);
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 18, 3, &first));

	/* descriptor count: zero, more than posted, not what was queued */
	c.ndesc = 0;
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
	c.ndesc = cpu_to_le16(3);
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 2, &first));
	c.ndesc = cpu_to_le16(2);
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));

	/* a slot that starts no packet (never filled, or mid-packet) */
	first.pkt_ndesc = 0;
	first.pkt_bytes = 0;
	c.ndesc = cpu_to_le16(1);
	c.len = 0;
	KUNIT_EXPECT_FALSE(test, dmnic_tx_cmpl_matches(&c, 17, 3, &first));
}

/* A header buffer shorter than the Ethernet header never starts a packet. */
static void dmnic_test_rx_hdr_len(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, dmnic_rx_hdr_len_ok(0, DMNIC_HDR_BUF_SIZE));
	KUNIT_EXPECT_FALSE(test, dmnic_rx_hdr_len_ok(1, DMNIC_HDR_BUF_SIZE));
	KUNIT_EXPECT_FALSE(test, dmnic_rx_hdr_len_ok(ETH_HLEN - 1,
						     DMNIC_HDR_BUF_SIZE));
	KUNIT_EXPECT_TRUE(test, dmnic_rx_hdr_len_ok(ETH_HLEN,
						    DMNIC_HDR_BUF_SIZE));
	KUNIT_EXPECT_TRUE(test, dmnic_rx_hdr_len_ok(DMNIC_HDR_BUF_SIZE,
						    DMNIC_HDR_BUF_SIZE));
	KUNIT_EXPECT_FALSE(test, dmnic_rx_hdr_len_ok(DMNIC_HDR_BUF_SIZE + 1,
						     DMNIC_HDR_BUF_SIZE));
	/* PKT_LEN must be what was placed; x-fault-corrupt-cpl len ORs in
	 * 0xffff0000, which must never reach the byte counters.
	 */
	KUNIT_EXPECT_TRUE(test, dmnic_rx_pkt_len_ok(1514, 1514));
	KUNIT_EXPECT_FALSE(test, dmnic_rx_pkt_len_ok(1514 | 0xffff0000, 1514));
	KUNIT_EXPECT_FALSE(test, dmnic_rx_pkt_len_ok(1513, 1514));
}

static void dmnic_test_cmpl_layout(struct kunit *test)
{
	u8 raw[DMNIC_RXC_SIZE] = {};
	const struct dmnic_rx_cmpl *c = (const void *)raw;

	put_unaligned_le16(0x0102, raw + DMNIC_RXC_HDR_ID);
	put_unaligned_le16(54, raw + DMNIC_RXC_HDR_LEN);
	put_unaligned_le16(0x0304, raw + DMNIC_RXC_PAY_ID);
	raw[DMNIC_RXC_RSS_TYPE] = DMNIC_RSS_TYPE_IPV6_TCP;
	put_unaligned_le32(4096, raw + DMNIC_RXC_PAY_LEN);
	put_unaligned_le32(4150, raw + DMNIC_RXC_PKT_LEN);
	put_unaligned_le32(0xdeadbeef, raw + DMNIC_RXC_RSS_HASH);
	put_unaligned_le32(DMNIC_RXC_F_SOP | DMNIC_RXC_F_SPLIT,
			   raw + DMNIC_RXC_FLAGS);

	KUNIT_EXPECT_EQ(test, le16_to_cpu(c->hdr_id), 0x0102);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(c->hdr_len), 54);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(c->pay_id), 0x0304);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->pay_len), 4096);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->pkt_len), 4150);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->rss_hash), 0xdeadbeef);
	KUNIT_EXPECT_EQ(test, dmnic_rx_hash_type(c->rss_type), PKT_HASH_TYPE_L4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->flags),
			DMNIC_RXC_F_SOP | DMNIC_RXC_F_SPLIT);
}

struct dmnic_csum_case {
	u32 flags;
	enum dmnic_rx_csum expect;
};

static const struct dmnic_csum_case dmnic_csum_cases[] = {
	{ 0, DMNIC_RX_CSUM_NONE },
	{ DMNIC_RXC_F_L3_CSUM_OK, DMNIC_RX_CSUM_NONE },
	{ DMNIC_RXC_F_L4_CSUM_OK, DMNIC_RX_CSUM_OK },
	{ DMNIC_RXC_F_L3_CSUM_OK | DMNIC_RXC_F_L4_CSUM_OK, DMNIC_RX_CSUM_OK },
	{ DMNIC_RXC_F_L3_CSUM_BAD | DMNIC_RXC_F_L4_CSUM_OK, DMNIC_RX_CSUM_BAD },
	{ DMNIC_RXC_F_L3_CSUM_OK | DMNIC_RXC_F_L4_CSUM_BAD, DMNIC_RX_CSUM_BAD },
};

static void dmnic_csum_case_desc(const struct dmnic_csum_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "flags %#x", c->flags);
}

KUNIT_ARRAY_PARAM(dmnic_csum, dmnic_csum_cases, dmnic_csum_case_desc);

static void dmnic_test_rx_csum(struct kunit *test)
{
	const struct dmnic_csum_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, dmnic_rx_csum_status(c->flags), c->expect);
}

struct dmnic_verdict_case {
	const char *name;
	u32 flags;
	unsigned int nr_frags;
	bool readable, rxcsum;
	enum dmnic_rx_verdict expect;
};

#define OK4	(DMNIC_RXC_F_L3_CSUM_OK | DMNIC_RXC_F_L4_CSUM_OK)

static const struct dmnic_verdict_case dmnic_verdict_cases[] = {
	{ "split devmem csum ok", DMNIC_RXC_F_SPLIT | OK4, 1, false, true,
	  DMNIC_RX_PASS_CSUM_OK },
	{ "split devmem csum bad", DMNIC_RXC_F_SPLIT | DMNIC_RXC_F_L4_CSUM_BAD,
	  1, false, true, DMNIC_RX_DROP },
	{ "split devmem rxcsum off", DMNIC_RXC_F_SPLIT | OK4, 2, false, false,
	  DMNIC_RX_DROP },
	{ "unsplit devmem payload", OK4, 1, false, true, DMNIC_RX_DROP },
	{ "unsplit in header buffer", OK4, 0, true, true,
	  DMNIC_RX_PASS_CSUM_OK },
	{ "unsplit host payload", OK4, 2, true, true, DMNIC_RX_PASS_CSUM_OK },
	{ "host payload csum bad", DMNIC_RXC_F_L4_CSUM_BAD, 1, true, true,
	  DMNIC_RX_PASS },
	{ "arp", 0, 0, true, true, DMNIC_RX_PASS },
	{ "udp4 csum 0", DMNIC_RXC_F_L3_CSUM_OK, 0, true, true, DMNIC_RX_PASS },
};

static void dmnic_verdict_case_desc(const struct dmnic_verdict_case *c,
				    char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dmnic_verdict, dmnic_verdict_cases, dmnic_verdict_case_desc);

static void dmnic_test_rx_verdict(struct kunit *test)
{
	const struct dmnic_verdict_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, dmnic_rx_verdict(c->flags, c->nr_frags,
					       c->readable, c->rxcsum),
			c->expect);
}

/* ---- flow rules ---- */

static void dmnic_test_rule_tcp4_5tuple(struct kunit *test)
{
	struct ethtool_rx_flow_spec fs = {}, back = {};
	struct dmnic_rule_regs o;
	struct dmnic_rule r;

	fs.flow_type = TCP_V4_FLOW;
	fs.h_u.tcp_ip4_spec.ip4src = cpu_to_be32(0xc0a80102);	/* 192.168.1.2 */
	fs.m_u.tcp_ip4_spec.ip4src = cpu_to_be32(0xffffffff);
	fs.h_u.tcp_ip4_spec.ip4dst = cpu_to_be32(0x0a000001);
	fs.m_u.tcp_ip4_spec.ip4dst = cpu_to_be32(0xffffff00);
	fs.h_u.tcp_ip4_spec.psrc = cpu_to_be16(1234);
	fs.m_u.tcp_ip4_spec.psrc = cpu_to_be16(0xffff);
	fs.h_u.tcp_ip4_spec.pdst = cpu_to_be16(5201);
	fs.m_u.tcp_ip4_spec.pdst = cpu_to_be16(0xffff);
	fs.ring_cookie = 3;
	fs.location = 9;

	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), 0);
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.ctrl, DMNIC_FS_CTRL_VALID |
			DMNIC_FS_L4_TCP << DMNIC_FS_CTRL_L4_SHIFT);
	KUNIT_EXPECT_EQ(test, o.action, 3);
	KUNIT_EXPECT_EQ(test, o.ports, 1234 | 5201 << 16);
	KUNIT_EXPECT_EQ(test, o.ports_mask, 0xffffffff);
	KUNIT_EXPECT_EQ(test, o.src_ip[0], 0xc0a80102);	/* spec example */
	KUNIT_EXPECT_EQ(test, o.src_ip_mask[0], 0xffffffff);
	KUNIT_EXPECT_EQ(test, o.dst_ip[0], 0x0a000000);	/* masked value */
	KUNIT_EXPECT_EQ(test, o.dst_ip_mask[0], 0xffffff00);
	KUNIT_EXPECT_EQ(test, o.src_ip[1], 0);

	back.location = 9;
	dmnic_rule_to_flow_spec(&r, &back);
	KUNIT_EXPECT_EQ(test, back.flow_type, TCP_V4_FLOW);
	KUNIT_EXPECT_EQ(test, back.location, 9);
	KUNIT_EXPECT_EQ(test, back.ring_cookie, 3);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(back.h_u.tcp_ip4_spec.pdst), 5201);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(back.m_u.tcp_ip4_spec.ip4dst),
			0xffffff00);
}

static void dmnic_test_rule_tcp6_dport(struct kunit *test)
{
	struct ethtool_rx_flow_spec fs = {};
	struct dmnic_rule_regs o;
	struct dmnic_rule r;

	/* ethtool -N flow-type tcp6 dst-port 9000 action 1 */
	fs.flow_type = TCP_V6_FLOW;
	fs.h_u.tcp_ip6_spec.pdst = cpu_to_be16(9000);
	fs.m_u.tcp_ip6_spec.pdst = cpu_to_be16(0xffff);
	fs.ring_cookie = 1;

	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), 0);
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.ctrl, DMNIC_FS_CTRL_VALID | DMNIC_FS_CTRL_IPV6 |
			DMNIC_FS_L4_TCP << DMNIC_FS_CTRL_L4_SHIFT);
	KUNIT_EXPECT_EQ(test, o.ports, 9000u << 16);
	KUNIT_EXPECT_EQ(test, o.ports_mask, 0xffffu << 16);
	KUNIT_EXPECT_EQ(test, o.src_ip_mask[0] | o.src_ip_mask[3] |
			o.dst_ip_mask[0] | o.dst_ip_mask[3], 0);
}

static void dmnic_test_rule_udp6_addr(struct kunit *test)
{
	struct ethtool_rx_flow_spec fs = {};
	struct dmnic_rule_regs o;
	struct dmnic_rule r;
	int i;

	fs.flow_type = UDP_V6_FLOW;
	/* 2001:db8::1 */
	fs.h_u.tcp_ip6_spec.ip6dst[0] = cpu_to_be32(0x20010db8);
	fs.h_u.tcp_ip6_spec.ip6dst[3] = cpu_to_be32(1);
	for (i = 0; i < 4; i++)
		fs.m_u.tcp_ip6_spec.ip6dst[i] = cpu_to_be32(0xffffffff);
	fs.ring_cookie = RX_CLS_FLOW_DISC;

	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), 0);
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.ctrl, DMNIC_FS_CTRL_VALID | DMNIC_FS_CTRL_IPV6 |
			DMNIC_FS_L4_UDP << DMNIC_FS_CTRL_L4_SHIFT);
	KUNIT_EXPECT_EQ(test, o.action, DMNIC_FS_ACTION_DROP);
	KUNIT_EXPECT_EQ(test, o.dst_ip[0], 0x20010db8);
	KUNIT_EXPECT_EQ(test, o.dst_ip[3], 1);
	KUNIT_EXPECT_EQ(test, o.dst_ip_mask[2], 0xffffffff);
}

static void dmnic_test_rule_rejects(struct kunit *test)
{
	struct ethtool_rx_flow_spec fs = {};
	struct dmnic_rule r;

	fs.flow_type = TCP_V4_FLOW;
	fs.m_u.tcp_ip4_spec.tos = 0xff;		/* TOS match: no */
	KUNIT_EXPECT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), -EOPNOTSUPP);

	memset(&fs, 0, sizeof(fs));
	fs.flow_type = ETHER_FLOW;
	KUNIT_EXPECT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), -EOPNOTSUPP);

	memset(&fs, 0, sizeof(fs));
	fs.flow_type = TCP_V4_FLOW | FLOW_RSS;	/* RSS context and drop: no */
	fs.ring_cookie = RX_CLS_FLOW_DISC;
	KUNIT_EXPECT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), -EINVAL);

	memset(&fs, 0, sizeof(fs));
	fs.flow_type = TCP_V4_FLOW | FLOW_EXT;
	fs.m_ext.vlan_tci = cpu_to_be16(0xfff);
	KUNIT_EXPECT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), -EOPNOTSUPP);
}

static void dmnic_test_rule_invalid_encodes_zero(struct kunit *test)
{
	struct dmnic_rule r = {};
	struct dmnic_rule_regs o;

	memset(&o, 0xff, sizeof(o));
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.ctrl, 0);
	KUNIT_EXPECT_EQ(test, o.action, 0);
}

/* ethtool -N flow-type udp4 dst-port 4789 context 5 action 2 */
static void dmnic_test_rule_rss_context(struct kunit *test)
{
	struct ethtool_rx_flow_spec fs = {}, back = {};
	struct dmnic_rule_regs o;
	struct dmnic_rule r;

	fs.flow_type = UDP_V4_FLOW | FLOW_RSS;
	fs.h_u.udp_ip4_spec.pdst = cpu_to_be16(4789);
	fs.m_u.udp_ip4_spec.pdst = cpu_to_be16(0xffff);
	fs.ring_cookie = 2;

	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &r), 0);
	KUNIT_EXPECT_TRUE(test, r.rss);
	KUNIT_EXPECT_EQ(test, r.flow_type, UDP_V4_FLOW);
	r.rss_ctx = 5;		/* from ethtool_rxnfc::rss_context */
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.ctrl, DMNIC_FS_CTRL_VALID |
			DMNIC_FS_L4_UDP << DMNIC_FS_CTRL_L4_SHIFT);
	/* spec: bit 30, context in 23:16, base queue in 15:0 */
	KUNIT_EXPECT_EQ(test, o.action, BIT(30) | 5u << 16 | 2);
	KUNIT_EXPECT_EQ(test, o.ports, 4789u << 16);

	dmnic_rule_to_flow_spec(&r, &back);
	KUNIT_EXPECT_EQ(test, back.flow_type, UDP_V4_FLOW | FLOW_RSS);
	KUNIT_EXPECT_EQ(test, back.ring_cookie, 2);

	/* the highest context number fits the field; a plain rule has none */
	r.rss_ctx = DMNIC_RSS_NUM_CTX - 1;
	r.ring_cookie = 0;
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.action, BIT(30) | (DMNIC_RSS_NUM_CTX - 1) << 16);
	r.rss = false;
	r.ring_cookie = 1;
	dmnic_rule_encode(&r, &o);
	KUNIT_EXPECT_EQ(test, o.action, 1);
}

/* A rule with the match of an existing one is refused (-EEXIST). */
static void dmnic_test_rule_same_match(struct kunit *test)
{
	struct ethtool_rx_flow_spec fs = {};
	struct dmnic_rule a, b;

	fs.flow_type = TCP_V4_FLOW;
	fs.h_u.tcp_ip4_spec.ip4dst = cpu_to_be32(0x0a000002);
	fs.m_u.tcp_ip4_spec.ip4dst = cpu_to_be32(0xffffffff);
	fs.h_u.tcp_ip4_spec.pdst = cpu_to_be16(8000);
	fs.m_u.tcp_ip4_spec.pdst = cpu_to_be16(0xffff);
	fs.ring_cookie = 0;
	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &a), 0);
	/* another action (context 1, base 1): the same match */
	fs.flow_type |= FLOW_RSS;
	fs.ring_cookie = 1;
	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &b), 0);
	b.rss_ctx = 1;
	KUNIT_EXPECT_TRUE(test, dmnic_rule_same_match(&a, &b));
	/* another port, another mask, another protocol: not */
	fs.h_u.tcp_ip4_spec.pdst = cpu_to_be16(8001);
	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &b), 0);
	KUNIT_EXPECT_FALSE(test, dmnic_rule_same_match(&a, &b));
	fs.h_u.tcp_ip4_spec.pdst = cpu_to_be16(8000);
	fs.m_u.tcp_ip4_spec.ip4dst = cpu_to_be32(0xffffff00);
	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &b), 0);
	KUNIT_EXPECT_FALSE(test, dmnic_rule_same_match(&a, &b));
	fs.m_u.tcp_ip4_spec.ip4dst = cpu_to_be32(0xffffffff);
	fs.flow_type = UDP_V4_FLOW;
	KUNIT_ASSERT_EQ(test, dmnic_rule_from_flow_spec(&fs, &b), 0);
	KUNIT_EXPECT_FALSE(test, dmnic_rule_same_match(&a, &b));
}

/*
 * A new table for an RSS context must keep every rule to that context in
 * range: base queue + largest entry < queues (4 queues: context 1 "equal
 * 2" with a rule "context 1 action 2" is fine, "equal 4" is not).
 */
static int dmnic_test_conflict(const struct dmnic_rule *rules, u32 ctx,
			       const u32 *indir, unsigned int nq)
{
	return dmnic_rss_rules_conflict(rules, 4, ctx, indir,
					DMNIC_RSS_INDIR_SIZE, nq);
}

static void dmnic_test_rss_rules_conflict(struct kunit *test)
{
	struct dmnic_rule rules[4] = {};
	u32 indir[DMNIC_RSS_INDIR_SIZE];
	unsigned int i;

	rules[2].valid = true;
	rules[2].rss = true;
	rules[2].rss_ctx = 1;
	rules[2].ring_cookie = 2;
	/* a plain rule to queue 3 and a drop rule: not RSS, never a conflict */
	rules[0].valid = true;
	rules[0].ring_cookie = 3;
	rules[1].valid = true;
	rules[1].rss = true;
	rules[1].rss_ctx = 1;
	rules[1].ring_cookie = RX_CLS_FLOW_DISC;

	for (i = 0; i < ARRAY_SIZE(indir); i++)
		indir[i] = i % 2;	/* equal 2 */
	KUNIT_EXPECT_EQ(test, dmnic_test_conflict(rules, 1, indir, 4), -1);
	for (i = 0; i < ARRAY_SIZE(indir); i++)
		indir[i] = i % 4;	/* equal 4: queues 2..5 */
	KUNIT_EXPECT_EQ(test, dmnic_test_conflict(rules, 1, indir, 4), 2);
	/* the same table elsewhere: context 0 and context 2 have no rule */
	KUNIT_EXPECT_EQ(test, dmnic_test_conflict(rules, 0, indir, 4), -1);
	KUNIT_EXPECT_EQ(test, dmnic_test_conflict(rules, 2, indir, 4), -1);
	/* one entry out of range is enough */
	for (i = 0; i < ARRAY_SIZE(indir); i++)
		indir[i] = 0;
	indir[ARRAY_SIZE(indir) - 1] = 2;
	KUNIT_EXPECT_EQ(test, dmnic_test_conflict(rules, 1, indir, 4), 2);
	KUNIT_EXPECT_EQ(test, dmnic_test_conflict(rules, 1, indir, 5), -1);
}

/* ---- RSS hash fields ---- */

struct dmnic_hf_case {
	u32 flow_type;
	u64 rxh;
	int err;	/* of dmnic_rss_rxh_to_hf() */
	u32 hf;		/* REG_RSS_HFIELDS value */
};

static const struct dmnic_hf_case dmnic_hf_cases[] = {
	{ TCP_V4_FLOW, RXH_IP_SRC | RXH_IP_DST | RXH_L4_B_0_1 | RXH_L4_B_2_3,
	  0, 0xf },
	{ TCP_V4_FLOW, RXH_IP_SRC, 0, BIT(0) },
	{ UDP_V4_FLOW, RXH_IP_DST, 0, BIT(1) },
	{ TCP_V6_FLOW, RXH_L4_B_0_1, 0, BIT(2) },
	{ UDP_V6_FLOW, RXH_IP_SRC | RXH_L4_B_2_3, 0, BIT(0) | BIT(3) },
	{ IPV4_FLOW, RXH_IP_SRC | RXH_IP_DST, 0, 0x3 },
	{ IPV6_FLOW, 0, 0, 0 },
	/* ports of an IP-only type, fields the device cannot hash */
	{ IPV4_FLOW, RXH_IP_SRC | RXH_L4_B_0_1, -EINVAL, 0 },
	{ TCP_V4_FLOW, RXH_IP_SRC | RXH_L3_PROTO, -EINVAL, 0 },
	/* the IPv6 flow label (1.2), IPv6 types only */
	{ UDP_V6_FLOW, RXH_IP6_FL, 0, BIT(4) },
	{ UDP_V6_FLOW, RXH_IP_SRC | RXH_IP_DST | RXH_L4_B_0_1 | RXH_L4_B_2_3 |
	  RXH_IP6_FL, 0, 0x1f },
	{ IPV6_FLOW, RXH_IP_DST | RXH_IP6_FL, 0, BIT(1) | BIT(4) },
	{ UDP_V4_FLOW, RXH_IP_SRC | RXH_IP6_FL, -EINVAL, 0 },
	{ IPV4_FLOW, RXH_IP6_FL, -EINVAL, 0 },
	{ TCP_V4_FLOW, RXH_DISCARD, -EINVAL, 0 },
	{ SCTP_V4_FLOW, RXH_IP_SRC, -EOPNOTSUPP, 0 },
	{ ETHER_FLOW, RXH_L2DA, -EOPNOTSUPP, 0 },
};

static void dmnic_hf_case_desc(const struct dmnic_hf_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "flow %#x rxh %#llx",
		 c->flow_type, c->rxh);
}

KUNIT_ARRAY_PARAM(dmnic_hf, dmnic_hf_cases, dmnic_hf_case_desc);

static void dmnic_test_rss_hfields(struct kunit *test)
{
	const struct dmnic_hf_case *c = test->param_value;
	u32 hf = 0xdead;

	/* a 1.1 device (no CAPS_RSS_FLOW_LABEL) refuses the flow label */
	if (c->rxh & RXH_IP6_FL)
		KUNIT_EXPECT_EQ(test, dmnic_rss_rxh_to_hf(c->flow_type, c->rxh,
							  false, &hf),
				-EINVAL);
	KUNIT_ASSERT_EQ(test, dmnic_rss_rxh_to_hf(c->flow_type, c->rxh, true,
						  &hf),
			c->err);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, hf, 0xdead);	/* untouched */
		return;
	}
	KUNIT_EXPECT_EQ(test, hf, c->hf);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hf_to_rxh(hf), c->rxh);
}

static void dmnic_test_rss_hash_types(struct kunit *test)
{
	/* flow types map onto the device's hash types (RSS_TYPE_*) */
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(IPV4_FLOW), 1);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(TCP_V4_FLOW), 2);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(UDP_V4_FLOW), 3);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(IPV6_FLOW), 4);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(TCP_V6_FLOW), 5);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(UDP_V6_FLOW), 6);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hash_type(AH_ESP_V4_FLOW), -EOPNOTSUPP);
	/* registers at 0x210 + 4 * (type - 1) */
	KUNIT_EXPECT_EQ(test, DMNIC_REG_RSS_HFIELDS(DMNIC_RSS_TYPE_IPV4), 0x210);
	KUNIT_EXPECT_EQ(test, DMNIC_REG_RSS_HFIELDS(DMNIC_RSS_TYPE_IPV6_UDP),
			0x224);
	KUNIT_EXPECT_EQ(test, DMNIC_RSS_CTX_INDIR(3, 5), 0xa000 + 3 * 0x200 + 20);
	/* 1.3 RSS_TBL: 512 entries of every context, 0x800 apart */
	KUNIT_EXPECT_EQ(test, DMNIC_RSS_TBL(3, 5), 0x20000 + 3 * 0x800 + 20);
	KUNIT_EXPECT_EQ(test, DMNIC_RSS_TBL(DMNIC_RSS_NUM_CTX - 1,
					    DMNIC_RSS_TBL_SIZE - 1) + 4,
			0x30800);
	KUNIT_EXPECT_LE(test, 0x30800, DMNIC_BAR_REGS_SIZE);
	/* defaults match the device's reset values (RSS_FIELDS = 0x3f) */
	KUNIT_EXPECT_EQ(test, dmnic_rss_hf_default(DMNIC_RSS_TYPE_IPV4), 0x3);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hf_default(DMNIC_RSS_TYPE_IPV4_TCP), 0xf);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hf_default(DMNIC_RSS_TYPE_IPV6), 0x3);
	KUNIT_EXPECT_EQ(test, dmnic_rss_hf_default(DMNIC_RSS_TYPE_IPV6_UDP), 0xf);
}

static struct kunit_case dmnic_ring_test_cases[] = {
	KUNIT_CASE_PARAM(dmnic_test_ring_accounting, dmnic_ring_gen_params),
	{}
};

static struct kunit_suite dmnic_ring_test_suite = {
	.name = "devmem_nic_ring",
	.test_cases = dmnic_ring_test_cases,
};

static struct kunit_case dmnic_desc_test_cases[] = {
	KUNIT_CASE(dmnic_test_tx_desc_plain),
	KUNIT_CASE(dmnic_test_tx_desc_csum),
	KUNIT_CASE(dmnic_test_tx_desc_gso),
	KUNIT_CASE(dmnic_test_tx_desc_tnl),
	KUNIT_CASE(dmnic_test_cmpl_gen),
	KUNIT_CASE(dmnic_test_tx_cmpl_matches),
	KUNIT_CASE(dmnic_test_rx_hdr_len),
	KUNIT_CASE(dmnic_test_cmpl_layout),
	KUNIT_CASE_PARAM(dmnic_test_rx_csum, dmnic_csum_gen_params),
	KUNIT_CASE_PARAM(dmnic_test_rx_verdict, dmnic_verdict_gen_params),
	{}
};

static struct kunit_suite dmnic_desc_test_suite = {
	.name = "devmem_nic_desc",
	.test_cases = dmnic_desc_test_cases,
};

/*
 * The table resizes with the channel count: 4 entries a queue (the least
 * power of two with that many), at most the entries the device looks up
 * (512 with CAPS_RSS_TBL512, else 128), dividing them. rss_drv.py's
 * indir_size_4x then holds up to 128 queues (32 without the capability).
 */
static void dmnic_test_rss_indir_size(struct kunit *test)
{
	static const u32 maxes[] = { DMNIC_RSS_INDIR_SIZE, DMNIC_RSS_TBL_SIZE };
	u32 *tbl = kunit_kcalloc(test, DMNIC_RSS_TBL_SIZE, sizeof(*tbl),
				 GFP_KERNEL);
	unsigned int nq, i, m;

	KUNIT_ASSERT_NOT_NULL(test, tbl);
	for (m = 0; m < ARRAY_SIZE(maxes); m++) {
		u32 tbl_max = maxes[m];

		for (nq = 1; nq <= DMNIC_MAX_QUEUES; nq++) {
			u32 n = dmnic_rss_indir_size(nq, tbl_max);

			KUNIT_EXPECT_TRUE(test, is_power_of_2(n));
			KUNIT_EXPECT_EQ(test, tbl_max % n, 0);
			KUNIT_EXPECT_LE(test, n, tbl_max);
			if (nq <= tbl_max / 4) {
				KUNIT_EXPECT_GE(test, n, 4 * nq);
				KUNIT_EXPECT_LT(test, n / 2, 4 * nq);
			} else {
				KUNIT_EXPECT_EQ(test, n, tbl_max);
			}
		}
	}
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(0, 128), 4);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(2, 128), 8);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(3, 128), 16);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(16, 128), 64);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(16, 512), 64);
	KUNIT_EXPECT_NE(test, dmnic_rss_indir_size(2, 128),
			dmnic_rss_indir_size(16, 128));
	/* rss_ctx.py context32: 66 channels; the device's 72: 288 -> 512 */
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(33, 128), 128);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(33, 512), 256);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(66, 512), 512);
	KUNIT_EXPECT_EQ(test, dmnic_rss_indir_size(DMNIC_MAX_QUEUES,
						   DMNIC_RSS_TBL_SIZE), 512);

	/* unfold repeats the period; a fold back keeps the same entries */
	for (i = 0; i < 4; i++)
		tbl[i] = 3 - i;
	dmnic_rss_indir_resize(tbl, 4, 64);
	for (i = 0; i < 64; i++)
		KUNIT_EXPECT_EQ(test, tbl[i], 3 - i % 4);
	dmnic_rss_indir_resize(tbl, 64, 16);
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, tbl[i], 3 - i % 4);
	dmnic_rss_indir_resize(tbl, 16, DMNIC_RSS_TBL_SIZE);
	for (i = 0; i < DMNIC_RSS_TBL_SIZE; i++)
		KUNIT_EXPECT_EQ(test, tbl[i], 3 - i % 4);
}

static struct kunit_case dmnic_rule_test_cases[] = {
	KUNIT_CASE(dmnic_test_rule_tcp4_5tuple),
	KUNIT_CASE(dmnic_test_rule_tcp6_dport),
	KUNIT_CASE(dmnic_test_rule_udp6_addr),
	KUNIT_CASE(dmnic_test_rule_rejects),
	KUNIT_CASE(dmnic_test_rule_invalid_encodes_zero),
	KUNIT_CASE(dmnic_test_rule_rss_context),
	KUNIT_CASE(dmnic_test_rule_same_match),
	KUNIT_CASE(dmnic_test_rss_rules_conflict),
	KUNIT_CASE_PARAM(dmnic_test_rss_hfields, dmnic_hf_gen_params),
	KUNIT_CASE(dmnic_test_rss_hash_types),
	KUNIT_CASE(dmnic_test_rss_indir_size),
	{}
};

static struct kunit_suite dmnic_rule_test_suite = {
	.name = "devmem_nic_rules",
	.test_cases = dmnic_rule_test_cases,
};

kunit_test_suites(&dmnic_ring_test_suite, &dmnic_desc_test_suite,
		  &dmnic_rule_test_suite);

/* ---- native XDP and queue error recovery helpers ---- */

struct dmnic_hds_case {
	bool hds_enabled, hds_cfg_on, xdp, xdp_frags, want;
};

static const struct dmnic_hds_case dmnic_hds_cases[] = {
	/* no XDP: tcp-data-split decides (UNKNOWN counts as on) */
	{ true, false, false, false, true },
	{ true, true, false, false, true },
	{ false, false, false, false, false },
	/* single buffer XDP: never split, it needs whole frames */
	{ true, false, true, false, false },
	{ true, true, true, false, false },
	/* multi-buffer XDP: split only if explicitly enabled */
	{ true, false, true, true, false },
	{ true, true, true, true, true },
	{ false, false, true, true, false },
};

static void dmnic_test_hds_want(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dmnic_hds_cases); i++) {
		const struct dmnic_hds_case *c = &dmnic_hds_cases[i];

		KUNIT_EXPECT_EQ_MSG(test, dmnic_hds_want(c->hds_enabled,
							 c->hds_cfg_on, c->xdp,
							 c->xdp_frags),
				    c->want, "case %u", i);
	}
}

static void dmnic_test_xdp_max_mtu(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, dmnic_xdp_max_mtu(false),
			(unsigned int)DMNIC_XDP_MAX_MTU);
	/* multi-buffer: anything the device takes (ping.py sets 9000) */
	KUNIT_EXPECT_EQ(test, dmnic_xdp_max_mtu(true), DMNIC_MAX_MTU);
	KUNIT_EXPECT_GE(test, dmnic_xdp_max_mtu(true), 9000U);
}

/*
 * An xdp_buff laid out as an XDP queue builds it: a header page with XDP
 * headroom and @hdr_len bytes, plus @nr payload frags of @frag_len bytes.
 * The frags all point at @pay (offset 0, so they never coalesce); nothing
 * is ever returned through the buff. Returns how many frags were added.
 */
static unsigned int dmnic_test_xbuf(struct xdp_buff *xdp,
				    struct xdp_rxq_info *rxq, struct page *hdr,
				    struct page *pay, u32 hdr_len,
				    unsigned int nr, u32 frag_len)
{
	unsigned int i;

	xdp_init_buff(xdp, PAGE_SIZE, rxq);
	xdp_prepare_buff(xdp, page_address(hdr), DMNIC_XDP_HEADROOM, hdr_len,
			 true);
	for (i = 0; i < nr; i++)
		if (!xdp_buff_add_frag(xdp, page_to_netmem(pay), 0, frag_len,
				       PAGE_SIZE))
			break;
	return i;
}

static void dmnic_test_xdp_frags(struct kunit *test)
{
	struct dmnic_xdp_seg segs[DMNIC_TX_DESC_NEEDED];
	struct xdp_rxq_info *rxq;
	struct skb_shared_info *sinfo;
	struct page *hdr, *pay;
	struct xdp_buff xdp;
	unsigned int i;

	rxq = kunit_kzalloc(test, sizeof(*rxq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rxq);
	hdr = alloc_page(GFP_KERNEL);
	pay = alloc_page(GFP_KERNEL);
	if (!hdr || !pay) {
		if (hdr)
			__free_page(hdr);
		if (pay)
			__free_page(pay);
		KUNIT_FAIL(test, "no pages");
		return;
	}

	/* a 9000 MTU frame unsplit: full header buffer + 4096 + rest */
	KUNIT_EXPECT_EQ(test, dmnic_test_xbuf(&xdp, rxq, hdr, pay,
					      DMNIC_XDP_BUF_LEN, 2, 4096), 2U);
	xdp.data_end = xdp.data + DMNIC_XDP_BUF_LEN;
	sinfo = xdp_get_shared_info_from_buff(&xdp);
	skb_frag_size_set(&sinfo->frags[1], 9014 - DMNIC_XDP_BUF_LEN - 4096);
	sinfo->xdp_frags_size = 9014 - DMNIC_XDP_BUF_LEN;
	KUNIT_EXPECT_TRUE(test, xdp_buff_has_frags(&xdp));
	KUNIT_EXPECT_EQ(test, xdp_get_buff_len(&xdp), 9014U);
	KUNIT_EXPECT_EQ(test, sinfo->xdp_frags_truesize, (u32)(2 * PAGE_SIZE));
	/* skb_shared_info sits behind the posted length, in the same page */
	KUNIT_EXPECT_PTR_EQ(test, (void *)sinfo,
			    page_address(hdr) + DMNIC_XDP_HEADROOM +
			    DMNIC_XDP_BUF_LEN);

	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, ARRAY_SIZE(segs)), 3);
	KUNIT_EXPECT_EQ(test, segs[0].netmem, page_to_netmem(hdr));
	KUNIT_EXPECT_EQ(test, segs[0].off, (u32)DMNIC_XDP_HEADROOM);
	KUNIT_EXPECT_EQ(test, segs[0].len, (u32)DMNIC_XDP_BUF_LEN);
	KUNIT_EXPECT_EQ(test, segs[1].netmem, page_to_netmem(pay));
	KUNIT_EXPECT_EQ(test, segs[1].off, 0U);
	KUNIT_EXPECT_EQ(test, segs[1].len, 4096U);
	KUNIT_EXPECT_EQ(test, segs[2].len,
			(u32)(9014 - DMNIC_XDP_BUF_LEN - 4096));
	/* a program moved the start (adjust_head): offset follows */
	xdp.data += 14;
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 64,
						segs, ARRAY_SIZE(segs)), 3);
	KUNIT_EXPECT_EQ(test, segs[0].off, (u32)(64 + DMNIC_XDP_HEADROOM + 14));
	KUNIT_EXPECT_EQ(test, segs[0].len, (u32)(DMNIC_XDP_BUF_LEN - 14));
	/* fewer descriptors than buffers: refused */
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, 2), -E2BIG);
	/* an empty linear part cannot be a descriptor */
	xdp.data_end = xdp.data;
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, ARRAY_SIZE(segs)), -EINVAL);

	/* single buffer frame: one descriptor */
	KUNIT_EXPECT_EQ(test, dmnic_test_xbuf(&xdp, rxq, hdr, pay, 60, 0, 0),
			0U);
	KUNIT_EXPECT_FALSE(test, xdp_buff_has_frags(&xdp));
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, ARRAY_SIZE(segs)), 1);
	KUNIT_EXPECT_EQ(test, segs[0].len, 60U);

	/* MAX_SKB_FRAGS frags fit the descriptor array; one more is refused */
	KUNIT_EXPECT_EQ(test, dmnic_test_xbuf(&xdp, rxq, hdr, pay, 100,
					      MAX_SKB_FRAGS + 1, 3000),
			(unsigned int)MAX_SKB_FRAGS);
	sinfo = xdp_get_shared_info_from_buff(&xdp);
	KUNIT_EXPECT_EQ(test, sinfo->nr_frags, (u8)MAX_SKB_FRAGS);
	KUNIT_EXPECT_EQ(test, xdp_get_buff_len(&xdp),
			100U + MAX_SKB_FRAGS * 3000U);
	i = 100 + MAX_SKB_FRAGS * 3000;
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, ARRAY_SIZE(segs)),
			i > DMNIC_TX_MAX_FRAME ? -E2BIG :
			(int)MAX_SKB_FRAGS + 1);
	/* longer than the device sends in one packet */
	dmnic_test_xbuf(&xdp, rxq, hdr, pay, 100, 16, 4096);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, ARRAY_SIZE(segs)),
			-E2BIG);
	/* an empty frag (the device takes 1..65536 bytes a descriptor) */
	dmnic_test_xbuf(&xdp, rxq, hdr, pay, 100, 2, 1000);
	skb_frag_size_set(&sinfo->frags[1], 0);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_tx_segs(&xdp, page_to_netmem(hdr), 0,
						segs, ARRAY_SIZE(segs)), -EINVAL);

	__free_page(hdr);
	__free_page(pay);
}

static void dmnic_test_xdp_layout(struct kunit *test)
{
	unsigned long shinfo = SKB_DATA_ALIGN(sizeof(struct skb_shared_info));

	/* A frame of the XDP MTU with two VLAN tags fills the posted length
	 * exactly; headroom, buffer and skb_shared_info make one page.
	 */
	KUNIT_EXPECT_EQ(test, (unsigned long)DMNIC_XDP_MAX_MTU + ETH_HLEN +
			2 * VLAN_HLEN, (unsigned long)DMNIC_XDP_BUF_LEN);
	KUNIT_EXPECT_EQ(test, (unsigned long)DMNIC_XDP_HEADROOM +
			DMNIC_XDP_BUF_LEN + shinfo, (unsigned long)PAGE_SIZE);
	KUNIT_EXPECT_GE(test, (unsigned long)DMNIC_XDP_MAX_MTU, 1500UL);
	KUNIT_EXPECT_GE(test, (unsigned long)DMNIC_XDP_BUF_LEN,
			(unsigned long)DMNIC_RX_HDR_BUF_MIN);
}

static void dmnic_test_qerr_backoff(struct kunit *test)
{
	unsigned long max = 1000, d;
	int i;

	/* after a quiet period: at once */
	KUNIT_EXPECT_EQ(test, dmnic_qerr_backoff(0, false, max), 0UL);
	KUNIT_EXPECT_EQ(test, dmnic_qerr_backoff(max, false, max), 0UL);
	/* errors in a row: max / 100 + 1, doubling, capped at max */
	d = dmnic_qerr_backoff(0, true, max);
	KUNIT_EXPECT_EQ(test, d, 11UL);
	for (i = 0; i < 20; i++) {
		unsigned long n = dmnic_qerr_backoff(d, true, max);

		KUNIT_EXPECT_TRUE(test, n == max || n == 2 * d);
		KUNIT_EXPECT_LE(test, n, max);
		d = n;
	}
	KUNIT_EXPECT_EQ(test, d, max);
	/* a small max (HZ=100) never gives 0 while errors repeat */
	KUNIT_EXPECT_EQ(test, dmnic_qerr_backoff(0, true, 100), 2UL);
	KUNIT_EXPECT_EQ(test, dmnic_qerr_backoff(1, true, 1), 1UL);
}

/* ---- hardware GRO (spec: Hardware GRO and LRO) ---- */

static void dmnic_test_gro_ctrl(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, dmnic_gro_ctrl(0), 0);
	KUNIT_EXPECT_EQ(test, dmnic_gro_ctrl(NETIF_F_GRO), 0);
	KUNIT_EXPECT_EQ(test, dmnic_gro_ctrl(NETIF_F_GRO_HW), DMNIC_GRO_CTRL_HW);
	KUNIT_EXPECT_EQ(test, dmnic_gro_ctrl(NETIF_F_LRO), DMNIC_GRO_CTRL_LRO);
	/* the core never sets both; if it did, GRO-HW rules */
	KUNIT_EXPECT_EQ(test, dmnic_gro_ctrl(NETIF_F_GRO_HW | NETIF_F_LRO),
			DMNIC_GRO_CTRL_HW);
}

static void dmnic_test_gro_wire_bytes(struct kunit *test)
{
	/* 3 x 100 bytes behind 54 bytes of headers */
	KUNIT_EXPECT_EQ(test, dmnic_gro_wire_bytes(354, 3, 54), 462ULL);
	KUNIT_EXPECT_EQ(test, dmnic_gro_wire_bytes(65535 + 14, 64, 74),
			65549ULL + 63 * 74);
}

/* A merged IPv4 or IPv6-in-IPv6 packet of 3 x 100 bytes, header only */
static struct sk_buff *dmnic_test_gro_pkt(struct kunit *test, bool v6,
					  bool encap, u32 *thoff)
{
	struct sk_buff *skb = alloc_skb(512, GFP_KERNEL);
	u32 off = ETH_HLEN, i;
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	p = skb_put_zero(skb, 200);
	put_unaligned_be16(v6 ? ETH_P_IPV6 : ETH_P_IP, p + 12);
	for (i = 0; i < (encap ? 2 : 1); i++) {
		bool last = i == (encap ? 1 : 0);

		if (v6) {
			p[off] = 0x60;
			p[off + 6] = last ? IPPROTO_TCP : IPPROTO_IPV6;
			p[off + 7] = 64;
			p[off + 8] = 0xfd;
			p[off + 23] = 2;
			p[off + 24] = 0xfd;
			p[off + 39] = 1;
			off += sizeof(struct ipv6hdr);
		} else {
			p[off] = 0x45;
			p[off + 8] = 64;
			p[off + 9] = last ? IPPROTO_TCP : IPPROTO_IPIP;
			put_unaligned_be32(0xc0a801c8, p + off + 12);
			put_unaligned_be32(0xc0a80164, p + off + 16);
			off += sizeof(struct iphdr);
		}
	}
	p[off + 12] = 5 << 4;
	p[off + 13] = 0x80 | 0x10;	/* CWR, ACK */
	*thoff = off;
	skb_trim(skb, off + sizeof(struct tcphdr));
	/* the payload: 300 bytes as if in frags */
	skb->len += 300;
	skb->data_len += 300;
	/* as eth_type_trans() leaves it */
	skb_reset_mac_header(skb);
	skb_pull(skb, ETH_HLEN);
	skb->protocol = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	return skb;
}

static void dmnic_test_gro_skb(struct kunit *test)
{
	static const struct {
		bool v6, encap;
		u32 flags;
		unsigned int gso_type;
	} cases[] = {
		{ false, false, DMNIC_RXC_F_GRO_FIXEDID,
		  SKB_GSO_TCPV4 | SKB_GSO_TCP_FIXEDID },
		{ true, false, 0, SKB_GSO_TCPV6 },
		{ false, true, DMNIC_RXC_F_GRO_FIXEDID_INNER,
		  SKB_GSO_TCPV4 | SKB_GSO_IPXIP4 | SKB_GSO_TCP_FIXEDID_INNER },
		{ true, true, 0, SKB_GSO_TCPV6 | SKB_GSO_IPXIP6 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dmnic_rx_cmpl c = {};
		struct sk_buff *skb;
		u32 thoff, hlen;

		skb = dmnic_test_gro_pkt(test, cases[i].v6, cases[i].encap,
					 &thoff);
		c.gro_segs = 3;
		c.gro_mss = cpu_to_le16(100);
		c.l4_off = cpu_to_le16(thoff);
		hlen = dmnic_rx_gro_skb(skb, &c, DMNIC_RXC_F_GRO |
					cases[i].flags);
		KUNIT_EXPECT_EQ(test, hlen, thoff + 20);
		KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_size, 100);
		KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_segs, 3);
		/* CWR in the header: the stack's ECN flag too */
		KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_type,
				cases[i].gso_type | SKB_GSO_TCP_ACCECN);
		KUNIT_EXPECT_EQ(test, (int)skb->ip_summed, CHECKSUM_PARTIAL);
		KUNIT_EXPECT_EQ(test, skb_transport_offset(skb),
				(int)(thoff - ETH_HLEN));
		KUNIT_EXPECT_EQ(test, (bool)skb->encapsulation, cases[i].encap);
		/* the pseudo-header sum of the 320-byte TCP segment */
		if (!cases[i].v6) {
			u16 sum = (__force u16)tcp_v4_check(320,
							   htonl(0xc0a801c8),
							   htonl(0xc0a80164), 0);

			KUNIT_EXPECT_EQ(test, (__force u16)tcp_hdr(skb)->check,
					(u16)~sum);
		}
		skb->len -= 300;
		skb->data_len -= 300;
		kfree_skb(skb);
	}
}

static void dmnic_test_gro_skb_bad(struct kunit *test)
{
	struct dmnic_rx_cmpl c = {};
	struct sk_buff *skb;
	u32 thoff;

	/* one segment, or an L4 offset that is not the TCP header's */
	skb = dmnic_test_gro_pkt(test, false, false, &thoff);
	c.gro_segs = 1;
	c.gro_mss = cpu_to_le16(100);
	c.l4_off = cpu_to_le16(thoff);
	KUNIT_EXPECT_EQ(test, dmnic_rx_gro_skb(skb, &c, DMNIC_RXC_F_GRO), 0);
	c.gro_segs = 3;
	c.l4_off = cpu_to_le16(thoff - 4);
	KUNIT_EXPECT_EQ(test, dmnic_rx_gro_skb(skb, &c, DMNIC_RXC_F_GRO), 0);
	skb->len -= 300;
	skb->data_len -= 300;
	kfree_skb(skb);
}

/* rx-buf-len (rx_page_size): powers of two from a page to RXD_LEN's max */
static void dmnic_test_rx_buf_size(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(DMNIC_RX_BUF_MAX), 0);
	KUNIT_EXPECT_LE(test, DMNIC_RX_BUF_MAX, DMNIC_BUF_LEN_MAX);
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(0), -ERANGE);
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(PAGE_SIZE / 2), -ERANGE);
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(3 * PAGE_SIZE), -ERANGE);
	KUNIT_EXPECT_EQ(test, dmnic_rx_buf_size_check(2 * DMNIC_RX_BUF_MAX),
			-ERANGE);
}

/* bpf_xdp_metadata_rx_hash() reads the completion the program runs on */
static void dmnic_test_xdp_rx_hash(struct kunit *test)
{
	struct dmnic_rx_queue *rx = kunit_kzalloc(test, sizeof(*rx),
						  GFP_KERNEL);
	const struct xdp_md *ctx;
	struct dmnic_rx_cmpl c = {};
	enum xdp_rss_hash_type t;
	u32 hash = 0;

	KUNIT_ASSERT_NOT_NULL(test, rx);
	ctx = (const struct xdp_md *)&rx->xbuf.xdp;
	/* outside a program run, and a frame without a hash: no data */
	KUNIT_EXPECT_EQ(test, dmnic_xdp_metadata_ops.xmo_rx_hash(ctx, &hash, &t),
			-ENODATA);
	rx->xbuf.cmpl = &c;
	c.rss_hash = cpu_to_le32(0x51ccc178);
	c.rss_type = DMNIC_RSS_TYPE_IPV6_UDP;
	KUNIT_EXPECT_EQ(test, dmnic_xdp_metadata_ops.xmo_rx_hash(ctx, &hash, &t),
			-ENODATA);
	c.flags = cpu_to_le32(DMNIC_RXC_F_RSS | DMNIC_RXC_F_EOP);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_metadata_ops.xmo_rx_hash(ctx, &hash, &t),
			0);
	KUNIT_EXPECT_EQ(test, hash, 0x51ccc178);
	KUNIT_EXPECT_EQ(test, t, XDP_RSS_TYPE_L4_IPV6_UDP);
	KUNIT_EXPECT_TRUE(test, t & XDP_RSS_L4);
	/* every device hash type maps, L4 types with XDP_RSS_L4 */
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(DMNIC_RSS_TYPE_IPV4),
			XDP_RSS_TYPE_L3_IPV4);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(DMNIC_RSS_TYPE_IPV4_TCP),
			XDP_RSS_TYPE_L4_IPV4_TCP);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(DMNIC_RSS_TYPE_IPV4_UDP),
			XDP_RSS_TYPE_L4_IPV4_UDP);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(DMNIC_RSS_TYPE_IPV6),
			XDP_RSS_TYPE_L3_IPV6);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(DMNIC_RSS_TYPE_IPV6_TCP),
			XDP_RSS_TYPE_L4_IPV6_TCP);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(DMNIC_RSS_TYPE_NONE),
			XDP_RSS_TYPE_NONE);
	KUNIT_EXPECT_EQ(test, dmnic_xdp_rss_type(0xff), XDP_RSS_TYPE_NONE);
	KUNIT_EXPECT_NULL(test, dmnic_xdp_metadata_ops.xmo_rx_vlan_tag);
}

/*
 * AF_XDP zero-copy: a UMEM frame is a header buffer of its frame size (up
 * to what HDR_LEN can say); it must hold a whole frame of the MTU, VLAN
 * tags included, and be a valid header buffer. The program's completion
 * is found through the cb of the socket's xdp_buff, as through rx->xbuf.
 */
static void dmnic_test_xsk_frame(struct kunit *test)
{
	struct dmnic_xdp_buff xb = {};
	struct dmnic_rx_cmpl c = {};
	enum xdp_rss_hash_type t;
	u32 hash = 0;

	KUNIT_EXPECT_EQ(test, dmnic_xsk_post_len(1792), 1792);
	KUNIT_EXPECT_EQ(test, dmnic_xsk_post_len(3840), 3840);
	KUNIT_EXPECT_EQ(test, dmnic_xsk_post_len(65536 - 256), 65280);
	KUNIT_EXPECT_EQ(test, dmnic_xsk_post_len(131072), 65535);
	/* xdp_helper's 2048-byte chunks: 1792 bytes after the headroom */
	KUNIT_EXPECT_TRUE(test, dmnic_xsk_frame_ok(1792, 1500));
	KUNIT_EXPECT_TRUE(test, dmnic_xsk_frame_ok(1522, 1500));
	KUNIT_EXPECT_FALSE(test, dmnic_xsk_frame_ok(1521, 1500));
	KUNIT_EXPECT_FALSE(test, dmnic_xsk_frame_ok(1792, 9000));
	KUNIT_EXPECT_TRUE(test, dmnic_xsk_frame_ok(3840, 3000));
	/* a tiny MTU still needs RX_HDR_BUF_MIN */
	KUNIT_EXPECT_FALSE(test, dmnic_xsk_frame_ok(127, 68));
	KUNIT_EXPECT_TRUE(test, dmnic_xsk_frame_ok(128, 68));

	xb.cmpl = &c;
	c.rss_hash = cpu_to_le32(0x1234);
	c.rss_type = DMNIC_RSS_TYPE_IPV4_TCP;
	c.flags = cpu_to_le32(DMNIC_RXC_F_RSS | DMNIC_RXC_F_EOP);
	KUNIT_EXPECT_EQ(test,
			dmnic_xdp_metadata_ops.xmo_rx_hash((const struct xdp_md *)&xb.xdp,
							   &hash, &t), 0);
	KUNIT_EXPECT_EQ(test, hash, 0x1234);
	KUNIT_EXPECT_EQ(test, t, XDP_RSS_TYPE_L4_IPV4_TCP);
}

static struct kunit_case dmnic_xdp_qerr_test_cases[] = {
	KUNIT_CASE(dmnic_test_hds_want),
	KUNIT_CASE(dmnic_test_xdp_max_mtu),
	KUNIT_CASE(dmnic_test_xdp_frags),
	KUNIT_CASE(dmnic_test_xdp_layout),
	KUNIT_CASE(dmnic_test_xdp_rx_hash),
	KUNIT_CASE(dmnic_test_xsk_frame),
	KUNIT_CASE(dmnic_test_rx_buf_size),
	KUNIT_CASE(dmnic_test_qerr_backoff),
	KUNIT_CASE(dmnic_test_gro_ctrl),
	KUNIT_CASE(dmnic_test_gro_wire_bytes),
	KUNIT_CASE(dmnic_test_gro_skb),
	KUNIT_CASE(dmnic_test_gro_skb_bad),
	{}
};

static struct kunit_suite dmnic_xdp_qerr_test_suite = {
	.name = "devmem_nic_xdp_qerr",
	.test_cases = dmnic_xdp_qerr_test_cases,
};

kunit_test_suite(dmnic_xdp_qerr_test_suite);

/*
 * ---- TX completions on a software queue pair ----
 *
 * The driver's own dmnic_poll() and dmnic_xmit() run on one queue pair
 * whose rings are plain memory: a netdev that is never registered, a page
 * pool without DMA mapping, registers in a kzalloc'd buffer. The tests write
 * the TX completions the device would write.
 */

#define DMNIC_TEST_TX_RING	DMNIC_RING_MIN
#define DMNIC_TEST_RX_RING	4
#define DMNIC_TEST_FRAME	60

struct dmnic_test_nic {
	struct net_device *netdev;
	struct dmnic *dm;
	struct dmnic_napi *qv;
	struct page_pool *pool;
	unsigned int space_calls;	/* dmnic_ring_space() stub */
};

static void dmnic_test_bufq_init(struct kunit *test, struct dmnic_bufq *bq)
{
	bq->size = DMNIC_TEST_RX_RING;
	bq->desc = kunit_kcalloc(test, bq->size, sizeof(*bq->desc), GFP_KERNEL);
	bq->netmem = kunit_kcalloc(test, bq->size, sizeof(*bq->netmem),
				   GFP_KERNEL);
	bq->offset = kunit_kcalloc(test, bq->size, sizeof(*bq->offset),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bq->desc);
	KUNIT_ASSERT_NOT_NULL(test, bq->netmem);
	KUNIT_ASSERT_NOT_NULL(test, bq->offset);
	bq->buf_size = PAGE_SIZE;
	bq->post_len = PAGE_SIZE;
}

static void dmnic_test_bufq_empty(struct dmnic_bufq *bq)
{
	unsigned int i;

	for (i = 0; bq->netmem && i < bq->size; i++) {
		if (bq->netmem[i])
			page_pool_put_full_netmem(bq->pool, bq->netmem[i],
						  false);
		bq->netmem[i] = 0;
	}
}

static void dmnic_test_nic_free(void *data)
{
	struct dmnic_test_nic *n = data;

	/* skbs still on the ring are freed, XDP_TX buffers go to the pool */
	dmnic_tx_clean_all(n->dm, &n->qv->tx);
	dmnic_test_bufq_empty(&n->qv->rx.hdr);
	dmnic_test_bufq_empty(&n->qv->rx.pay);
	page_pool_destroy(n->pool);
	free_netdev(n->netdev);
}

static struct dmnic_test_nic *dmnic_test_nic_alloc(struct kunit *test)
{
	struct page_pool_params pp = {
		.pool_size = 16,
		.nid = NUMA_NO_NODE,
	};
	struct dmnic_test_nic *n;
	struct dmnic_tx_ring *tx;
	struct pci_dev *pdev;
	void *regs;

	/*
	 * Test-managed memory first: KUnit frees in reverse order, and the
	 * cleanup action (added last) still walks the rings.
	 */
	n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, n);
	n->qv = kunit_kzalloc(test, sizeof(*n->qv), GFP_KERNEL);
	pdev = kunit_kzalloc(test, sizeof(*pdev), GFP_KERNEL);
	regs = kunit_kzalloc(test, DMNIC_QREG(1, 0), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, n->qv);
	KUNIT_ASSERT_NOT_NULL(test, pdev);
	KUNIT_ASSERT_NOT_NULL(test, regs);
	/* dma-direct mapping of the skbs xmit maps (no IOMMU in the guest) */
	pdev->dev.coherent_dma_mask = DMA_BIT_MASK(64);
	pdev->dev.dma_mask = &pdev->dev.coherent_dma_mask;

	tx = &n->qv->tx;
	tx->size = DMNIC_TEST_TX_RING;
	tx->cmpl_gen = DMNIC_TXC_F_GEN;
	tx->desc = kunit_kcalloc(test, tx->size, sizeof(*tx->desc), GFP_KERNEL);
	tx->cmpl = kunit_kcalloc(test, tx->size, sizeof(*tx->cmpl), GFP_KERNEL);
	tx->bufs = kunit_kcalloc(test, tx->size, sizeof(*tx->bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tx->desc);
	KUNIT_ASSERT_NOT_NULL(test, tx->cmpl);
	KUNIT_ASSERT_NOT_NULL(test, tx->bufs);
	dmnic_test_bufq_init(test, &n->qv->rx.hdr);
	dmnic_test_bufq_init(test, &n->qv->rx.pay);

	n->netdev = alloc_etherdev_mqs(sizeof(struct dmnic), 1, 1);
	KUNIT_ASSERT_NOT_NULL(test, n->netdev);
	n->pool = page_pool_create(&pp);
	if (IS_ERR(n->pool)) {
		free_netdev(n->netdev);
		KUNIT_FAIL_AND_ABORT(test, "page_pool_create: %pe", n->pool);
	}
	n->qv->rx.hdr.pool = n->pool;
	n->qv->rx.pay.pool = n->pool;
	n->dm = netdev_priv(n->netdev);
	n->dm->netdev = n->netdev;
	n->dm->pdev = pdev;
	n->dm->regs = (void __force __iomem *)regs;
	n->dm->max_queues = 1;
	n->dm->num_queues = 1;
	n->dm->qv[0] = n->qv;
	n->qv->dm = n->dm;
	/* a woken queue schedules its qdisc: the one of a down device */
	rcu_assign_pointer(netdev_get_tx_queue(n->netdev, 0)->qdisc,
			   &noop_qdisc);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, dmnic_test_nic_free, n));
	test->priv = n;
	return n;
}

/* Queue a one-descriptor packet (an skb, or an XDP_TX buffer if @netmem). */
static void dmnic_test_post(struct kunit *test, struct dmnic_test_nic *n,
			    netmem_ref netmem)
{
	struct dmnic_tx_ring *tx = &n->qv->tx;
	struct dmnic_tx_buf *b = &tx->bufs[tx->tail];

	memset(b, 0, sizeof(*b));
	if (netmem) {
		b->xdp_netmem = netmem;
	} else {
		b->skb = alloc_skb(DMNIC_TEST_FRAME, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, b->skb);
		skb_put_zero(b->skb, DMNIC_TEST_FRAME);
		/* as xmit does: BQL counts skb bytes only */
		netdev_tx_sent_queue(netdev_get_tx_queue(n->netdev, 0),
				     DMNIC_TEST_FRAME);
	}
	b->len = DMNIC_TEST_FRAME;
	b->pkt_bytes = DMNIC_TEST_FRAME;
	b->pkt_ndesc = 1;
	tx->tail = (tx->tail + 1) & (tx->size - 1);
}

/* The device's completion of the packet at ring slot @slot (first lap). */
static void dmnic_test_complete(struct dmnic_test_nic *n, u32 slot)
{
	struct dmnic_tx_cmpl *c = &n->qv->tx.cmpl[slot];

	c->id = cpu_to_le16(slot);
	c->ndesc = cpu_to_le16(1);
	c->len = cpu_to_le32(DMNIC_TEST_FRAME);
	c->status = cpu_to_le32(DMNIC_TXC_S_OK);
	/* the GEN bit last, as the device writes it */
	dma_wmb();
	c->flags = cpu_to_le32(DMNIC_TXC_F_GEN);
}

/*
 * Issue 17 item 14 (Documentation/networking/napi.rst): a poll with budget
 * 0 comes from netpoll, with IRQs off, and may reap skb TX completions
 * only. An XDP_TX buffer must not go back to its page pool there and the RX
 * rings must not be refilled from it.
 */
static void dmnic_test_netpoll_xdp_tx(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	struct dmnic_tx_ring *tx = &n->qv->tx;
	struct dmnic_rx_queue *rx = &n->qv->rx;
	unsigned long flags;
	netmem_ref xdp;
	int ret;

	local_bh_disable();
	xdp = page_pool_dev_alloc_netmems(n->pool);
	local_bh_enable();
	KUNIT_ASSERT_NE(test, (__force unsigned long)xdp, 0UL);
	dmnic_test_post(test, n, 0);	/* slot 0: an skb */
	dmnic_test_post(test, n, xdp);	/* slot 1: an XDP_TX frame */
	dmnic_test_complete(n, 0);
	dmnic_test_complete(n, 1);

	/* as netpoll_poll_dev() calls it (poll_one_napi) */
	local_irq_save(flags);
	ret = dmnic_poll(&n->qv->napi, 0);
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, tx->head, 1U,
			    "the skb completion is reaped, nothing after it");
	KUNIT_EXPECT_EQ_MSG(test, (__force unsigned long)tx->bufs[1].xdp_netmem,
			    (__force unsigned long)xdp,
			    "XDP_TX buffer given back to its page pool");
	KUNIT_EXPECT_EQ_MSG(test, tx->cmpl_head, 1U,
			    "the XDP_TX completion waits for a real poll");
	KUNIT_EXPECT_EQ_MSG(test, rx->hdr.tail, 0U,
			    "header ring refilled from its page pool");
	KUNIT_EXPECT_EQ_MSG(test, rx->pay.tail, 0U,
			    "payload ring refilled from its page pool");
}

/*
 * Stands in for dmnic_ring_space(): its first call is xmit's read of the
 * free space (@head and @tail already read). The completions of every
 * queued packet are reaped right then, before xmit can stop the queue;
 * the read value stays the stale one. Later calls compute.
 */
static unsigned int dmnic_test_space_racing(u32 head, u32 tail, u32 size)
{
	struct kunit *test = kunit_get_current_test();
	struct dmnic_test_nic *n = test->priv;

	if (!n->space_calls++)
		dmnic_poll(&n->qv->napi, 0);	/* TX completions only */
	return size - 1 - dmnic_ring_used(head, tail, size);
}

/*
 * Issue 17 item 9: XDP_TX fills the TX ring without stopping the queue, so
 * xmit finds it full and stops the queue. A completion that frees the
 * ring between xmit's read and the stop sees the queue still running and
 * does not wake it; with no completion left, the queue stays stopped until
 * the TX watchdog. netif_txq_maybe_stop() re-reads after the stop.
 */
static void dmnic_test_xmit_stop_race(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	struct netdev_queue *txq = netdev_get_tx_queue(n->netdev, 0);
	struct dmnic_tx_ring *tx = &n->qv->tx;
	struct sk_buff *skb;
	netdev_tx_t ret;
	unsigned int i;

	/* a full ring whose packets the device has all completed */
	for (i = 0; i < tx->size - 1; i++) {
		dmnic_test_post(test, n, 0);
		dmnic_test_complete(n, i);
	}
	KUNIT_ASSERT_EQ(test, dmnic_ring_used(tx->head, tx->tail, tx->size),
			tx->size - 1);
	skb = alloc_skb(DMNIC_TEST_FRAME, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_zero(skb, DMNIC_TEST_FRAME);
	skb_set_queue_mapping(skb, 0);

	kunit_activate_static_stub(test, dmnic_ring_space,
				   dmnic_test_space_racing);
	/* as dev_hard_start_xmit() calls it */
	local_bh_disable();
	__netif_tx_lock(txq, smp_processor_id());
	ret = dmnic_xmit(skb, n->netdev);
	__netif_tx_unlock(txq);
	local_bh_enable();
	kunit_deactivate_static_stub(test, dmnic_ring_space);

	KUNIT_ASSERT_GE_MSG(test, n->space_calls, 1U, "no free space read");
	KUNIT_EXPECT_EQ_MSG(test, tx->head, tx->size - 1,
			    "the completions were not reaped in the race");
	KUNIT_EXPECT_FALSE_MSG(test, netif_tx_queue_stopped(txq),
			       "queue left stopped with %u free descriptors and no completion to wake it",
			       dmnic_ring_space(tx->head, tx->tail, tx->size));
	KUNIT_EXPECT_EQ(test, ret, NETDEV_TX_OK);
	if (ret != NETDEV_TX_OK)
		kfree_skb(skb);		/* the stack would requeue it */
}

static struct kunit_case dmnic_txpath_test_cases[] = {
	KUNIT_CASE(dmnic_test_netpoll_xdp_tx),
	KUNIT_CASE(dmnic_test_xmit_stop_race),
	{}
};

static struct kunit_suite dmnic_txpath_test_suite = {
	.name = "devmem_nic_txpath",
	.test_cases = dmnic_txpath_test_cases,
};

kunit_test_suite(dmnic_txpath_test_suite);

#if IS_ENABLED(CONFIG_INET_PSP)
/*
 * ---- PSP (issue 42) ----
 *
 * The driver's psp_dev_ops, its TX and RX steps, on the software queue
 * pair above. The register file is plain memory, so a test plays the
 * device: it writes PSP_STATUS as hw/net/devmem-nic/devmem-nic-psp.c
 * shows it after each command before the driver reads it (ROTATE makes
 * the key of the slot the phase does not use, adds 1 to that slot's
 * 3-bit generation and flips the phase; a reset clears both keys, both
 * generations and the phase; results are OK).
 */

#define DMNIC_TEST_CASE_NAMED(fn, str)					\
	{ .run_case = fn, .name = str, .module_name = KBUILD_MODNAME }

struct dmnic_test_psp_dev {
	u32 phase, gen[2], valid;
};

static void dmnic_test_psp_status(struct dmnic_test_nic *n,
				  const struct dmnic_test_psp_dev *d)
{
	writel(d->phase | (d->valid & 3) << 1 |
	       d->gen[0] << DMNIC_PSP_STATUS_GEN0_SHIFT |
	       d->gen[1] << DMNIC_PSP_STATUS_GEN1_SHIFT,
	       n->dm->regs + DMNIC_REG_PSP_STATUS);
}

/* The device's ROTATE, ahead of the driver's command */
static void dmnic_test_psp_rotate(struct dmnic_test_nic *n,
				  struct dmnic_test_psp_dev *d)
{
	u32 k = !d->phase;

	d->valid |= BIT(k);
	d->gen[k] = (d->gen[k] + 1) & DMNIC_PSP_STATUS_GEN_MASK;
	d->phase = k;
	dmnic_test_psp_status(n, d);
}

static void dmnic_test_psp_fini(void *data)
{
	dmnic_psp_fini(data);
}

/* dmnic_psp_init() on the software pair (its ROTATE: slot 1, gen 1) */
static struct psp_dev *dmnic_test_psp_init(struct kunit *test,
					   struct dmnic_test_nic *n,
					   struct dmnic_test_psp_dev *d)
{
	struct psp_dev *psd;
	int err;

	memset(d, 0, sizeof(*d));
	writel(DMNIC_CAPS_PSP, n->dm->regs + DMNIC_REG_CAPS);
	dmnic_test_psp_rotate(n, d);
	dmnic_psp_init(n->dm);
	psd = rcu_access_pointer(n->netdev->psp_dev);
	KUNIT_ASSERT_NOT_NULL_MSG(test, psd, "no PSP device");
	err = kunit_add_action_or_reset(test, dmnic_test_psp_fini, n->dm);
	KUNIT_ASSERT_EQ(test, err, 0);
	return psd;
}

/* An rx_spi_alloc op under psd->lock, as the PSP core calls it */
static int dmnic_test_psp_spi(struct psp_dev *psd, struct psp_key_parsed *k)
{
	int err;

	mutex_lock(&psd->lock);
	err = psd->ops->rx_spi_alloc(psd, PSP_VERSION_HDR0_AES_GCM_128, k,
				     NULL);
	mutex_unlock(&psd->lock);
	return err;
}

/* The core's key-rotate: the next generation first, then the op */
static int dmnic_test_psp_key_rotate(struct dmnic_test_nic *n,
				     struct dmnic_test_psp_dev *d,
				     struct psp_dev *psd)
{
	int err;

	mutex_lock(&psd->lock);
	psd->generation = (psd->generation + 1) & PSP_GEN_VALID_MASK;
	dmnic_test_psp_rotate(n, d);
	err = psd->ops->key_rotate(psd, NULL);
	mutex_unlock(&psd->lock);
	return err;
}

/*
 * A frame the device decrypted (ICV stripped): Ethernet, IPv4, UDP to
 * port 1000, the PSP header of @spi, TCP, 16 payload bytes.
 */
static struct sk_buff *dmnic_test_psp_frame(struct kunit *test, __be32 spi)
{
	unsigned int l4 = sizeof(struct udphdr) + sizeof(struct psphdr) +
			  sizeof(struct tcphdr) + 16;
	struct sk_buff *skb;
	struct psphdr *ph;
	struct udphdr *uh;
	struct tcphdr *th;
	struct ethhdr *eth;
	struct iphdr *iph;

	skb = alloc_skb(ETH_HLEN + sizeof(*iph) + l4, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	eth = skb_put_zero(skb, ETH_HLEN);
	eth->h_proto = htons(ETH_P_IP);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(sizeof(*iph) + l4);
	iph->saddr = htonl(0xc0000501);
	iph->daddr = htonl(0xc0000502);
	iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
	uh = skb_put_zero(skb, sizeof(*uh));
	uh->source = htons(40000);
	uh->dest = htons(PSP_DEFAULT_UDP_PORT);
	uh->len = htons(l4);
	ph = skb_put_zero(skb, sizeof(*ph));
	ph->nexthdr = IPPROTO_TCP;
	ph->hdrlen = PSP_HDRLEN_NOOPT;
	ph->verfl = FIELD_PREP(PSPHDR_VERFL_VERSION,
			       PSP_VERSION_HDR0_AES_GCM_128) |
		    PSPHDR_VERFL_ONE;
	ph->spi = spi;
	th = skb_put_zero(skb, sizeof(*th));
	th->source = htons(5201);
	th->dest = htons(5202);
	th->doff = 5;
	memset(skb_put(skb, 16), 0x5a, 16);
	return skb;
}

/*
 * The kernel's generation dmnic_psp_rcv() gives a frame of @spi that the
 * device reports with device generation @dgen (RXC_F_PSP_GEN), or -1 if
 * it drops the frame.
 */
static int dmnic_test_psp_rcv_gen(struct kunit *test, struct dmnic_test_nic *n,
				  __be32 spi, u32 dgen)
{
	struct sk_buff *skb = dmnic_test_psp_frame(test, spi);
	struct psp_skb_ext *pse;
	int gen = -1;

	if (dmnic_psp_rcv(n->dm, skb, DMNIC_RXC_F_PSP |
			  dgen << DMNIC_RXC_F_PSP_GEN_SHIFT)) {
		pse = skb_ext_find(skb, SKB_EXT_PSP);
		KUNIT_EXPECT_NOT_NULL(test, pse);
		KUNIT_EXPECT_EQ(test, pse ? pse->spi : 0, spi);
		gen = pse ? pse->generation : -1;
	}
	kfree_skb(skb);
	return gen;
}

/*
 * Issue 42 H1: the device keeps a generation per key slot, and after a
 * rotation both slots can show the same one. A connection made before one
 * key rotation is a previous-key association: PSP keeps it valid until
 * the next rotation, so its packets must carry the generation it was made
 * under (psp_pse_matches_pas()), not the new key's.
 */
static void dmnic_test_psp_rotate_once(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	struct psp_key_parsed a, b;
	struct dmnic_test_psp_dev d;
	struct psp_dev *psd;

	psd = dmnic_test_psp_init(test, n, &d);
	KUNIT_ASSERT_EQ(test, dmnic_test_psp_spi(psd, &a), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(a.spi), DMNIC_PSP_SPI_PHASE | 1);
	KUNIT_ASSERT_EQ(test, dmnic_test_psp_key_rotate(n, &d, psd), 0);
	KUNIT_ASSERT_EQ(test, psd->generation, 1);
	KUNIT_ASSERT_EQ(test, dmnic_test_psp_spi(psd, &b), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(b.spi), 1U);
	/* both slots at device generation 1 now */
	KUNIT_ASSERT_EQ(test, d.gen[0], d.gen[1]);

	KUNIT_EXPECT_EQ_MSG(test, dmnic_test_psp_rcv_gen(test, n, a.spi,
							 d.gen[1]), 0,
			    "a previous-key connection's packet got the new generation (the kernel drops it)");
	KUNIT_EXPECT_EQ(test, dmnic_test_psp_rcv_gen(test, n, b.spi, d.gen[0]),
			1);

	/* a second rotation: b's key is the previous one, a's is gone */
	KUNIT_ASSERT_EQ(test, dmnic_test_psp_key_rotate(n, &d, psd), 0);
	KUNIT_EXPECT_EQ(test, dmnic_test_psp_rcv_gen(test, n, b.spi, d.gen[0]),
			1);
}

/*
 * Issue 42 M1: a device reset makes a new device key under the kernel's
 * current generation. A new association must not get the (SPI,
 * generation) of one made before the reset: that socket would accept the
 * new association's peer's packets (the outer addresses are not
 * authenticated).
 */
static void dmnic_test_psp_reset_spi(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	struct dmnic_test_psp_dev d;
	struct psp_key_parsed a, b;
	struct psp_dev *psd;
	u8 gen_a;
	int gen_b;

	psd = dmnic_test_psp_init(test, n, &d);
	KUNIT_ASSERT_EQ(test, dmnic_test_psp_spi(psd, &a), 0);
	gen_a = psd->generation;

	dmnic_psp_reset_prepare(n->dm);
	memset(&d, 0, sizeof(d));		/* the reset */
	dmnic_test_psp_rotate(n, &d);		/* restore's ROTATE */
	dmnic_psp_restore(n->dm);

	KUNIT_ASSERT_EQ(test, dmnic_test_psp_spi(psd, &b), 0);
	gen_b = dmnic_test_psp_rcv_gen(test, n, b.spi, d.gen[1]);
	KUNIT_EXPECT_GE(test, gen_b, 0);
	KUNIT_EXPECT_FALSE_MSG(test, b.spi == a.spi && gen_b == gen_a,
			       "SPI %#x reused under generation %u after the reset",
			       be32_to_cpu(b.spi), gen_a);
}

/*
 * Issue 42 M4: a PSP command must not straddle a device reset (a TX SA
 * written after the reset with the key registers the reset cleared has
 * an all-zero key). Between reset_prepare and the restore, commands fail
 * and nothing reaches the device's command register.
 */
static void dmnic_test_psp_ops_vs_reset(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	struct dmnic_test_psp_dev d;
	struct psp_key_parsed k;
	struct psp_assoc *pas;
	struct psp_dev *psd;
	int err;

	psd = dmnic_test_psp_init(test, n, &d);
	pas = kunit_kzalloc(test, sizeof(*pas) + sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pas);
	pas->psd = psd;
	pas->version = PSP_VERSION_HDR0_AES_GCM_128;
	pas->tx.spi = cpu_to_be32(0x12345);
	memset(pas->tx.key, 0x11, sizeof(pas->tx.key));

	dmnic_psp_reset_prepare(n->dm);
	writel(0xdead, n->dm->regs + DMNIC_REG_PSP_CMD);
	mutex_lock(&psd->lock);
	err = psd->ops->tx_key_add(psd, pas, NULL);
	mutex_unlock(&psd->lock);
	KUNIT_EXPECT_EQ_MSG(test, err, -EBUSY, "TX SA written during a reset");
	KUNIT_EXPECT_EQ(test, dmnic_test_psp_spi(psd, &k), -EBUSY);
	KUNIT_EXPECT_EQ_MSG(test, readl(n->dm->regs + DMNIC_REG_PSP_CMD), 0xdead,
			    "a command reached the device during its reset");

	memset(&d, 0, sizeof(d));
	dmnic_test_psp_rotate(n, &d);
	dmnic_psp_restore(n->dm);
	mutex_lock(&psd->lock);
	err = psd->ops->tx_key_add(psd, pas, NULL);
	if (!err)
		psd->ops->tx_key_del(psd, pas);
	mutex_unlock(&psd->lock);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "TX SA after the reset");
}

/*
 * Issue 42 M3: dmnic_xmit() returning NETDEV_TX_BUSY gives the stack
 * back an skb it requeues as it is; a PSP skb must come back without the
 * UDP and PSP headers, else the retry pushes a second pair.
 */
static void dmnic_test_psp_tx_busy(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	struct netdev_queue *txq = netdev_get_tx_queue(n->netdev, 0);
	unsigned int plen = sizeof(struct iphdr) + sizeof(struct tcphdr) + 64;
	struct dmnic_tx_ring *tx = &n->qv->tx;
	struct dmnic_test_psp_dev d;
	struct psp_assoc *pas;
	struct psp_dev *psd;
	struct sk_buff *skb;
	struct iphdr *iph;
	struct tcphdr *th;
	netdev_tx_t ret;
	struct sock *sk;
	unsigned int i;
	u32 first;

	psd = dmnic_test_psp_init(test, n, &d);
	pas = kunit_kzalloc(test, sizeof(*pas) + sizeof(u32), GFP_KERNEL);
	sk = kunit_kzalloc(test, sizeof(struct tcp_sock), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pas);
	KUNIT_ASSERT_NOT_NULL(test, sk);
	pas->psd = psd;
	pas->version = PSP_VERSION_HDR0_AES_GCM_128;
	pas->tx.spi = cpu_to_be32(0x80000007);
	*(u32 *)psp_assoc_drv_data(pas) = 3;	/* its TX SA */
	sk->sk_family = AF_INET;
	sk->sk_state = TCP_ESTABLISHED;
	sock_net_set(sk, &init_net);
	rcu_assign_pointer(sk->psp_assoc, pas);

	/* a TCP segment of the PSP socket, as the stack hands it over */
	skb = alloc_skb(LL_MAX_HEADER + ETH_HLEN + plen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, LL_MAX_HEADER);
	skb_reset_mac_header(skb);
	skb_put_zero(skb, ETH_HLEN);
	skb_set_network_header(skb, ETH_HLEN);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->tot_len = htons(plen);
	skb_set_transport_header(skb, ETH_HLEN + sizeof(*iph));
	th = skb_put_zero(skb, sizeof(*th));
	th->source = htons(5201);
	th->dest = htons(5202);
	th->doff = 5;
	skb_put_zero(skb, 64);
	skb->protocol = htons(ETH_P_IP);
	skb->sk = sk;
	skb->decrypted = 1;
	skb_set_queue_mapping(skb, 0);

	/* a ring full of packets the device has not completed */
	for (i = 0; i < tx->size - 1; i++)
		dmnic_test_post(test, n, 0);
	local_bh_disable();
	__netif_tx_lock(txq, smp_processor_id());
	ret = dmnic_xmit(skb, n->netdev);
	__netif_tx_unlock(txq);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, ret, NETDEV_TX_BUSY);
	KUNIT_EXPECT_EQ_MSG(test, skb->len, ETH_HLEN + plen,
			    "the busy skb came back changed");

	/* the device completes them; the stack sends the skb again */
	for (i = 0; i < tx->size - 1; i++)
		dmnic_test_complete(n, i);
	local_bh_disable();
	dmnic_poll(&n->qv->napi, 0);	/* TX completions only */
	netif_tx_wake_queue(txq);
	local_bh_enable();
	first = tx->tail;
	local_bh_disable();
	__netif_tx_lock(txq, smp_processor_id());
	ret = dmnic_xmit(skb, n->netdev);
	__netif_tx_unlock(txq);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, ret, NETDEV_TX_OK);
	KUNIT_EXPECT_PTR_EQ(test, tx->bufs[first].skb, skb);
	KUNIT_EXPECT_EQ_MSG(test, skb->len, ETH_HLEN + PSP_ENCAP_HLEN + plen,
			    "%u bytes of headers added, one UDP+PSP pair is %zu",
			    skb->len - ETH_HLEN - plen, PSP_ENCAP_HLEN);
	th = (struct tcphdr *)(skb->data + ETH_HLEN + sizeof(*iph) +
			       PSP_ENCAP_HLEN);
	KUNIT_EXPECT_EQ(test, th->source, htons(5201));
	KUNIT_EXPECT_EQ(test, le32_to_cpu(tx->desc[first].psp_sa), 3U);
	/* the ring's cleanup frees it: not a socket's skb any more */
	skb->sk = NULL;
	RCU_INIT_POINTER(sk->psp_assoc, NULL);
}

/*
 * Issue 42 L1: the PSP counters are monotonic across a device reset,
 * which clears the device's; during the reset no register is read (on
 * PCIe a device in reset reads all ones).
 */
static void dmnic_test_psp_stats_reset(struct kunit *test)
{
	struct dmnic_test_nic *n = dmnic_test_nic_alloc(test);
	void __iomem *rxp = n->dm->regs + DMNIC_QREG(0, DMNIC_Q_PSP_RX_PACKETS);
	void __iomem *af = n->dm->regs + DMNIC_REG_G_PSP_RX_AUTH_FAIL;
	struct psp_dev_stats st;
	struct dmnic_test_psp_dev d;
	struct psp_dev *psd;

	psd = dmnic_test_psp_init(test, n, &d);
	writeq(100, rxp);
	writeq(3, af);
	mutex_lock(&psd->lock);
	psd->ops->get_stats(psd, &st);
	mutex_unlock(&psd->lock);
	KUNIT_EXPECT_EQ(test, st.rx_packets, 100);
	KUNIT_EXPECT_EQ(test, st.rx_auth_fail, 3);

	dmnic_psp_reset_prepare(n->dm);
	writeq(~0ULL, rxp);		/* a device in reset */
	writeq(~0ULL, af);
	mutex_lock(&psd->lock);
	psd->ops->get_stats(psd, &st);
	mutex_unlock(&psd->lock);
	KUNIT_EXPECT_EQ_MSG(test, st.rx_packets, 100,
			    "counters read from a device in reset");
	KUNIT_EXPECT_EQ(test, st.rx_auth_fail, 3);

	writeq(5, rxp);			/* counting again from 0 */
	writeq(0, af);
	memset(&d, 0, sizeof(d));
	dmnic_test_psp_rotate(n, &d);
	dmnic_psp_restore(n->dm);
	mutex_lock(&psd->lock);
	psd->ops->get_stats(psd, &st);
	mutex_unlock(&psd->lock);
	KUNIT_EXPECT_EQ_MSG(test, st.rx_packets, 105,
			    "rx-packets went back after the reset");
	KUNIT_EXPECT_EQ(test, st.rx_auth_fail, 3);
}

static struct kunit_case dmnic_psp_test_cases[] = {
	DMNIC_TEST_CASE_NAMED(dmnic_test_psp_rotate_once,
			      "psp-rotate-once-keeps-previous"),
	DMNIC_TEST_CASE_NAMED(dmnic_test_psp_reset_spi,
			      "psp-reset-no-spi-reuse"),
	DMNIC_TEST_CASE_NAMED(dmnic_test_psp_ops_vs_reset,
			      "psp-ops-vs-reset"),
	DMNIC_TEST_CASE_NAMED(dmnic_test_psp_tx_busy,
			      "psp-tx-busy-one-header"),
	DMNIC_TEST_CASE_NAMED(dmnic_test_psp_stats_reset,
			      "psp-stats-across-reset"),
	{}
};

static struct kunit_suite dmnic_psp_test_suite = {
	.name = "devmem_nic_psp",
	.test_cases = dmnic_psp_test_cases,
};

kunit_test_suite(dmnic_psp_test_suite);
#endif
