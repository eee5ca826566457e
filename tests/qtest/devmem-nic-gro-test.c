/*
 * QTest for devmem-nic hardware GRO and LRO (docs/specs/devmem-nic.rst,
 * "Hardware GRO and LRO"): merges, every flush rule of Linux software GRO
 * the spec names, contexts, timeout, delivery format and counters.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "qobject/qdict.h"
#include "devmem-lab-pkt.h"
#include "devmem-lab-util.h"
#include "devmem-lab-nic.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"

#define GRO_TIMEOUT_US  1000
#define MAX_PKTS        80
#define IPPROTO_IPIP_   4
#define IPPROTO_IPV6_   41

#define TH_FIN  0x01
#define TH_SYN  0x02
#define TH_RST  0x04
#define TH_PSH  0x08
#define TH_ACK  0x10
#define TH_URG  0x20
#define TH_CWR  0x80

/* One segment as the gro.c selftest builds them, and what to change */
typedef struct GroSeg {
    int ver;                /* 4 or 6: the (inner) IP version */
    bool encap;             /* IPv4 in IPv4 or IPv6 in IPv6 */
    uint32_t seq;           /* relative to 1000 */
    uint32_t ack;
    uint8_t flags;
    uint16_t win;
    uint16_t sport;
    size_t len;             /* TCP payload */
    uint16_t id;            /* IPv4 ID (every IPv4 header) */
    bool df;
    uint8_t ttl;            /* IPv4 TTL / IPv6 hop limit */
    uint8_t tos;            /* IPv4 TOS / IPv6 traffic class */
    uint32_t flowlabel;
    uint8_t tsval;          /* != 0: a timestamp option with this TSval */
    bool ip6_ext;           /* an 8-byte Destination Options header */
    uint8_t ext_byte;       /* its content */
    bool ip4_opt;           /* a 4-byte IPv4 option (NOP x 4) */
    bool frag;              /* IPv4 MF set */
    bool rb;                /* IPv4 reserved flag (bit 15) set */
    bool et_other;          /* the EtherType of the other IP version */
    bool bad_tcp_csum;
    bool bad_ip_csum;
} GroSeg;

static void seg_default(GroSeg *g, int ver, uint32_t seq, size_t len)
{
    memset(g, 0, sizeof(*g));
    g->ver = ver;
    g->seq = seq;
    g->ack = 100;
    g->flags = TH_ACK;
    g->win = 0xffff;
    g->sport = 1500;
    g->len = len;
    g->df = true;
    g->ttl = 8;
}

static size_t put_ip(uint8_t *b, const GroSeg *g, int ver, uint8_t proto,
                     size_t rest, bool ext)
{
    if (ver == 4) {
        size_t hl = 20 + (g->ip4_opt ? 4 : 0);

        b[0] = 0x40 | (hl / 4);
        b[1] = g->tos;
        stw_be_p(b + 2, hl + rest);
        stw_be_p(b + 4, g->id);
        stw_be_p(b + 6, (g->df ? 0x4000 : 0) | (g->frag ? 0x2000 : 0) |
                        (g->rb ? 0x8000 : 0));
        b[8] = g->ttl;
        b[9] = proto;
        b[10] = b[11] = 0;
        b[12] = 192; b[13] = 168; b[14] = 1; b[15] = 200;
        b[16] = 192; b[17] = 168; b[18] = 1; b[19] = 100;
        if (g->ip4_opt) {
            memset(b + 20, 1, 4);
        }
        stw_be_p(b + 10, ~dl_csum_fold(dl_csum_add(0, b, hl)) &
                         0xffff);
        if (g->bad_ip_csum) {
            b[11] ^= 1;
        }
        return hl;
    } else {
        size_t hl = 40 + (ext ? 8 : 0);

        stl_be_p(b, 0x60000000u | ((uint32_t)g->tos << 20) |
                    (g->flowlabel & 0xfffff));
        stw_be_p(b + 4, hl - 40 + rest);
        b[6] = ext ? 60 : proto;
        b[7] = g->ttl;
        memset(b + 8, 0, 32);
        b[8] = 0xfd; b[9] = 0xaa; b[23] = 2;
        b[24] = 0xfd; b[25] = 0xaa; b[39] = 1;
        if (ext) {
            b[40] = proto;
            b[41] = 0;
            memset(b + 42, g->ext_byte, 6);
        }
        return hl;
    }
}

/* Builds the frame of @g into @f; returns its length (before padding) */
static size_t seg_build(const GroSeg *g, uint8_t *f, size_t *hdr_len)
{
    size_t thl = 20 + (g->tsval ? 12 : 0);
    size_t off = 14, inner, l4, i;
    uint32_t sum;
    int outer_ver = g->ver;

    memcpy(f, "\x52\x54\x00\x12\x34\x56\x52\x54\x00\xaa\xbb\xcc", 12);
    stw_be_p(f + 12, (outer_ver == 4) != g->et_other ? 0x0800 : 0x86dd);
    if (g->encap) {
        size_t ihl = g->ver == 4 ? 20 : 40 + (g->ip6_ext ? 8 : 0);

        off += put_ip(f + off, g, outer_ver,
                      g->ver == 4 ? IPPROTO_IPIP_ : IPPROTO_IPV6_,
                      ihl + thl + g->len, false);
    }
    inner = off;
    off += put_ip(f + off, g, g->ver, DL_PROTO_TCP, thl + g->len, g->ip6_ext);
    l4 = off;
    memset(f + l4, 0, thl);
    stw_be_p(f + l4, g->sport);
    stw_be_p(f + l4 + 2, 8000);
    stl_be_p(f + l4 + 4, 1000 + g->seq);
    stl_be_p(f + l4 + 8, g->ack);
    f[l4 + 12] = (thl / 4) << 4;
    f[l4 + 13] = g->flags;
    stw_be_p(f + l4 + 14, g->win);
    if (g->tsval) {
        f[l4 + 20] = 1;
        f[l4 + 21] = 1;
        f[l4 + 22] = 8;
        f[l4 + 23] = 10;
        f[l4 + 27] = g->tsval;
    }
    for (i = 0; i < g->len; i++) {
        f[l4 + thl + i] = (uint8_t)(g->seq + i);
    }
    /* pseudo-header of the inner IP header */
    if (g->ver == 4) {
        sum = dl_csum_add(0, f + inner + 12, 8);
    } else {
        sum = dl_csum_add(0, f + inner + 8, 32);
    }
    sum += DL_PROTO_TCP + thl + g->len;
    sum = dl_csum_add(sum, f + l4, thl + g->len);
    stw_be_p(f + l4 + 16, ~dl_csum_fold(sum) & 0xffff);
    if (g->bad_tcp_csum) {
        f[l4 + 17] ^= 1;
    }
    if (hdr_len) {
        *hdr_len = l4 + thl;
    }
    return l4 + thl + g->len;
}

/* ------------------------------------------------------------------ */
/* Harness                                                             */
/* ------------------------------------------------------------------ */

typedef struct Rx {
    DnCpl first;
    uint8_t segs;
    uint16_t mss;
    uint8_t hdr[DN_HBUF_LEN];
    size_t hdr_len;
    uint8_t *pay;
    size_t pay_len;
    unsigned npay;
} Rx;

/* Queue 0 with header split, @nh header and @np payload buffers, GRO */
static void gro_start_bufs(DnState *s, uint32_t ctrl, const char *extra,
                           unsigned nh, unsigned np)
{
    g_autofree char *args = g_strdup_printf(
        "-device devmem-nic,id=nic,netdev=n0,mac=52:54:00:12:34:56,"
        "queues=%d%s", DN_NQ, extra ? extra : "");

    memset(s, 0, sizeof(*s));
    dn_boot(s, -1, args);
    dn_steer_all_to(s, 0);
    dn_rx_rings(s, 0, 64);
    dn_qwr(s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE |
           DMNIC_Q_CTRL_HDS_ENABLE);
    dn_post_bufs(s, 0, nh, np, DN_PBUF_LEN);
    dn_wr(s, DMNIC_REG_GRO_TIMEOUT, GRO_TIMEOUT_US);
    dn_wr(s, DMNIC_REG_GRO_CTRL, ctrl);
}

static void gro_start(DnState *s, uint32_t ctrl, const char *extra)
{
    gro_start_bufs(s, ctrl, extra, 32, 32);
}

static void send_seg(DnState *s, const GroSeg *g)
{
    uint8_t f[DN_FRAME_MAX];
    size_t len = seg_build(g, f, NULL);

    if (len < 60) {
        memset(f + len, 0, 60 - len);
        len = 60;
    }
    dn_inject(s, f, len);
}

static void step_timeout(DnState *s)
{
    qtest_clock_step(s->qts, GRO_TIMEOUT_US * 1000LL + 1);
}

/* Consume one packet (header split on): header bytes, payload bytes */
static void rx_one(DnState *s, Rx *r)
{
    DnQueue *d = &s->q[0];
    unsigned n = 0;
    DnCpl c;
    uint8_t b[DMNIC_RXC_SIZE];

    memset(r, 0, sizeof(*r));
    r->pay = g_malloc0(DN_FRAME_MAX);
    g_assert_cmpuint(dn_cpl_pending(s, 0), >, 0);
    for (;;) {
        qtest_memread(s->qts, d->ring[DN_RXC] + d->rxc_head * DMNIC_RXC_SIZE,
                      b, sizeof(b));
        dn_read_cpl(s, 0, d->rxc_head, &c);
        g_assert_cmphex(!!(c.flags & DMNIC_RXC_F_GEN), ==, d->rxc_gen);
        if (!n) {
            g_assert_true(c.flags & DMNIC_RXC_F_SOP);
            r->first = c;
            r->segs = b[DMNIC_RXC_GRO_SEGS];
            r->mss = lduw_le_p(b + DMNIC_RXC_GRO_MSS);
            r->hdr_len = c.hdr_len;
            qtest_memread(s->qts, d->hbuf[c.hdr_id], r->hdr, c.hdr_len);
        } else {
            /* all completions of a packet carry the same GRO fields */
            g_assert_cmpuint(b[DMNIC_RXC_GRO_SEGS], ==, r->segs);
            g_assert_cmpuint(lduw_le_p(b + DMNIC_RXC_GRO_MSS), ==, r->mss);
        }
        if (c.flags & DMNIC_RXC_F_PAY) {
            qtest_memread(s->qts, d->pbuf[c.pay_id], r->pay + r->pay_len,
                          c.pay_len);
            r->pay_len += c.pay_len;
            r->npay++;
        }
        n++;
        d->rxc_head = (d->rxc_head + 1) % d->size[DN_RXC];
        if (!d->rxc_head) {
            d->rxc_gen = !d->rxc_gen;
        }
        if (c.flags & DMNIC_RXC_F_EOP) {
            break;
        }
        g_assert_cmpuint(n, <, 64);
    }
    dn_qwr(s, 0, DMNIC_Q_RXC + DMNIC_RING_DRV, d->rxc_head);
    g_assert_cmpuint(r->first.pkt_len, ==, r->hdr_len + r->pay_len);
    /* give the buffers back */
    dn_post_bufs(s, 0, 1, r->npay, DN_PBUF_LEN);
}

/* TCP payload length of an unsplit frame (the test's own frames only) */
static int frame_payload(const uint8_t *f, size_t len)
{
    size_t off = 14;
    uint8_t proto = 0;
    unsigned n;

    for (n = 0; n < 4 && proto != DL_PROTO_TCP; n++) {
        if ((f[off] >> 4) == 4) {
            proto = f[off + 9];
            len = MIN(len, off + lduw_be_p(f + off + 2));
            off += (f[off] & 15) * 4;
        } else {
            proto = f[off + 6];
            len = MIN(len, off + 40 + lduw_be_p(f + off + 4));
            off += 40;
            if (proto == 60) {
                proto = f[off];
                off += 8;
            }
        }
    }
    g_assert_cmpuint(proto, ==, DL_PROTO_TCP);
    return len - off - (f[off + 12] >> 4) * 4;
}

/*
 * The packets delivered so far, as TCP payload lengths (the FIN-less
 * "correct_payload" lists of gro.c), then nothing more
 */
static void expect_lens(DnState *s, const int *lens, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        Rx r;

        rx_one(s, &r);
        if (!(r.first.flags & DMNIC_RXC_F_SPLIT)) {
            /* not split (no payload, or a tunnel): the whole frame */
            g_autofree uint8_t *f = g_malloc0(r.hdr_len + r.pay_len);

            memcpy(f, r.hdr, r.hdr_len);
            memcpy(f + r.hdr_len, r.pay, r.pay_len);
            g_assert_cmpint(frame_payload(f, r.hdr_len + r.pay_len), ==,
                            lens[i]);
        } else {
            g_assert_cmpint(r.pay_len, ==, lens[i]);
        }
        /* F_GRO exactly when segments were merged */
        g_assert_cmpuint(!!(r.first.flags & DMNIC_RXC_F_GRO), ==,
                         r.segs >= 2);
        if (!(r.first.flags & DMNIC_RXC_F_GRO)) {
            g_assert_cmpuint(r.segs, ==, 0);
            g_assert_cmpuint(r.mss, ==, 0);
        }
        g_free(r.pay);
    }
    g_assert_cmpuint(dn_cpl_pending(s, 0), ==, 0);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void test_regs(void)
{
    DnState s;

    gro_start(&s, 0, NULL);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_CAPS) &
                    (DMNIC_CAPS_HW_GRO | DMNIC_CAPS_LRO), ==,
                    DMNIC_CAPS_HW_GRO | DMNIC_CAPS_LRO);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_NUM_CTX), ==, 512);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_MAX_SEGS), ==, 64);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0xffffffff);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_GRO_CTRL), ==, 3);
    dn_wr(&s, DMNIC_REG_GRO_TIMEOUT, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_TIMEOUT), ==, 1);
    dn_wr(&s, DMNIC_REG_GRO_TIMEOUT, 200000);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_TIMEOUT), ==, 100000);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_MAX_AGE), ==, 1);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 20000000);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_MAX_AGE), ==, 10000000);
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_GRO_CTRL), ==, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_TIMEOUT), ==, 1000);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_GRO_MAX_AGE), ==, 100000);
    dn_stop(&s);
}

/* data_same: the merged packet, its header, completion and counters */
static void check_merge(int ver, bool encap)
{
    uint8_t f[DN_FRAME_MAX];
    size_t hlen, flen;
    GroSeg g;
    DnState s;
    Rx r;
    unsigned i, ipo;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    for (i = 0; i < 3; i++) {
        seg_default(&g, ver, i * 100, 100);
        g.encap = encap;
        g.id = 8 + i;
        send_seg(&s, &g);
    }
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);     /* held */
    /* the FIN (no payload) ends it: the merged packet, then the FIN */
    seg_default(&g, ver, 300, 0);
    g.encap = encap;
    g.id = 11;
    g.flags |= TH_FIN;
    send_seg(&s, &g);
    rx_one(&s, &r);
    g_assert_true(r.first.flags & DMNIC_RXC_F_GRO);
    g_assert_true(r.first.flags & DMNIC_RXC_F_SPLIT);
    g_assert_true(r.first.flags & DMNIC_RXC_F_TCP);
    g_assert_true(r.first.flags & DMNIC_RXC_F_L4_CSUM_OK);
    g_assert_false(r.first.flags & (DMNIC_RXC_F_GRO_FIXEDID |
                                    DMNIC_RXC_F_GRO_FIXEDID_INNER));
    g_assert_cmpuint(r.segs, ==, 3);
    g_assert_cmpuint(r.mss, ==, 100);
    /* payload: the three in order */
    g_assert_cmpuint(r.pay_len, ==, 300);
    for (i = 0; i < 300; i++) {
        g_assert_cmpuint(r.pay[i], ==, (uint8_t)i);
    }
    /* header: the first segment's, lengths of the merged datagram */
    seg_default(&g, ver, 0, 300);
    g.encap = encap;
    g.id = 8;
    flen = seg_build(&g, f, &hlen);
    g_assert_cmpuint(r.hdr_len, ==, hlen);
    g_assert_cmpuint(r.first.l4_off, ==, hlen - 20);
    g_assert_cmpuint(r.first.pkt_len, ==, flen);
    /* all but the TCP checksum, which is the first segment's */
    g_assert_cmpmem(r.hdr, hlen - 20 + 16, f, hlen - 20 + 16);
    for (ipo = 14; ipo < hlen - 20; ipo += (ver == 4 ? 20 : 40)) {
        if (ver == 4) {
            g_assert_cmphex(dl_csum_fold(dl_csum_add(0, r.hdr + ipo, 20)),
                            ==, 0xffff);
        }
    }
    g_free(r.pay);
    expect_lens(&s, (const int[]){ 0 }, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_GRO_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_GRO_SEGS), ==, 3);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_GRO_BYTES), ==, flen);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_GRO_WIRE_BYTES), ==,
                     flen + 2 * hlen);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 2);

    /* GRO off: every segment is a packet of its own, at once */
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    for (i = 0; i < 2; i++) {
        seg_default(&g, ver, i * 100, 100);
        g.encap = encap;
        send_seg(&s, &g);
    }
    expect_lens(&s, (const int[]){ 100, 100 }, 2);
    dn_stop(&s);
}

static void test_merge_v4(void)
{
    check_merge(4, false);
}

static void test_merge_v6(void)
{
    check_merge(6, false);
}

static void test_merge_ipip(void)
{
    check_merge(4, true);
}

static void test_merge_ip6ip6(void)
{
    check_merge(6, true);
}

/*
 * A flush case: segments built by @mk (index -> segment, false: no more),
 * sent in order, then the timeout; the packets must be @lens.
 */
typedef bool (*MkSeg)(int ver, unsigned i, GroSeg *g);

typedef struct FlushCase {
    const char *name;
    MkSeg mk;
    int lens[10];
    unsigned n;
    uint32_t ctrl;          /* 0: GRO_CTRL_HW */
} FlushCase;

/* five segments of 100 bytes; segment 2 (and for CWR 1) with a flag */
static bool mk_flag(int ver, unsigned i, GroSeg *g, uint8_t flag, bool both,
                    size_t flag_len)
{
    if (i >= 5) {
        return false;
    }
    seg_default(g, ver, i * 100, 100);
    if (i == 2 || (both && i == 1)) {
        g->flags |= flag;
        g->len = flag_len;
        g->seq = i * flag_len;
    }
    return true;
}

static bool mk_psh(int ver, unsigned i, GroSeg *g)
{
    return mk_flag(ver, i, g, TH_PSH, false, 100);
}

static bool mk_syn(int ver, unsigned i, GroSeg *g)
{
    return mk_flag(ver, i, g, TH_SYN, false, 0);
}

static bool mk_rst(int ver, unsigned i, GroSeg *g)
{
    return mk_flag(ver, i, g, TH_RST, false, 0);
}

static bool mk_urg(int ver, unsigned i, GroSeg *g)
{
    return mk_flag(ver, i, g, TH_URG, false, 0);
}

static bool mk_cwr(int ver, unsigned i, GroSeg *g)
{
    return mk_flag(ver, i, g, TH_CWR, true, 100);
}

/* two segments, the second changed by @fn */
#define MK2(name, body)                                         \
static bool name(int ver, unsigned i, GroSeg *g)                \
{                                                               \
    if (i >= 2) {                                               \
        return false;                                           \
    }                                                           \
    seg_default(g, ver, i * 100, 100);                          \
    if (i == 1) {                                               \
        body;                                                   \
    }                                                           \
    return true;                                                \
}

MK2(mk_ack, g->ack++)
MK2(mk_win, g->win--)
MK2(mk_seq, g->seq++)
MK2(mk_tos, g->tos = 4)
MK2(mk_ecn, g->tos = 2)
MK2(mk_ttl, g->ttl = 7)
MK2(mk_df0, g->df = false)
MK2(mk_tcp_csum, g->bad_tcp_csum = true)
MK2(mk_flowlabel, g->flowlabel = 1)

/* two back-to-back segments: @len0 bytes, then @len1 */
static bool mk_two(int ver, unsigned i, GroSeg *g, size_t len0, size_t len1)
{
    if (i >= 2) {
        return false;
    }
    seg_default(g, ver, i * len0, i ? len1 : len0);
    return true;
}

/* data: 100, 50 merge (and end); 50, 100 do not */
static bool mk_lrg_sml(int ver, unsigned i, GroSeg *g)
{
    return mk_two(ver, i, g, 100, 50);
}

static bool mk_sml_lrg(int ver, unsigned i, GroSeg *g)
{
    return mk_two(ver, i, g, 50, 100);
}

/* Ethernet padding: 100 then 1 (padded to 60 bytes) merge into 101 */
static bool mk_1byte(int ver, unsigned i, GroSeg *g)
{
    return mk_two(ver, i, g, 100, 1);
}

/* tcp_ts: 2 same, then three each with another timestamp */
static bool mk_ts(int ver, unsigned i, GroSeg *g)
{
    if (i >= 5) {
        return false;
    }
    seg_default(g, ver, i * 100, 100);
    g->tsval = i < 2 ? 1 : i;
    return true;
}

/* IP ID: ids[] for three segments */
static bool mk_ids(int ver, unsigned i, GroSeg *g, const uint16_t *ids,
                   unsigned n)
{
    if (i >= n) {
        return false;
    }
    seg_default(g, ver, i * 100, 100);
    g->id = ids[i];
    return true;
}

static bool mk_id_inc(int ver, unsigned i, GroSeg *g)
{
    return mk_ids(ver, i, g, (const uint16_t[]){ 8, 9 }, 2);
}

static bool mk_id_fixed(int ver, unsigned i, GroSeg *g)
{
    return mk_ids(ver, i, g, (const uint16_t[]){ 8, 8 }, 2);
}

static bool mk_id_inc_fixed(int ver, unsigned i, GroSeg *g)
{
    return mk_ids(ver, i, g, (const uint16_t[]){ 8, 9, 9 }, 3);
}

static bool mk_id_fixed_inc(int ver, unsigned i, GroSeg *g)
{
    return mk_ids(ver, i, g, (const uint16_t[]){ 8, 8, 9 }, 3);
}

static bool mk_id_wrap(int ver, unsigned i, GroSeg *g)
{
    return mk_ids(ver, i, g, (const uint16_t[]){ 0xffff, 0, 1 }, 3);
}

/* ip_csum, ip_opt, ip_frag4: three, the middle one no candidate */
#define MK3(name, body)                                         \
static bool name(int ver, unsigned i, GroSeg *g)                \
{                                                               \
    if (i >= 3) {                                               \
        return false;                                           \
    }                                                           \
    seg_default(g, ver, i * 100, 100);                          \
    if (i == 1) {                                               \
        body;                                                   \
    }                                                           \
    return true;                                                \
}

MK3(mk_ip_csum, g->bad_ip_csum = true)
MK3(mk_ip_opt, g->ip4_opt = true)
MK3(mk_frag, g->frag = true)
/* the reserved flag: not merged, delivered after the held packet */
MK3(mk_rb, g->rb = true)

/* two segments, each after the EtherType of the other IP version */
static bool mk_ethertype(int ver, unsigned i, GroSeg *g)
{
    if (i >= 2) {
        return false;
    }
    seg_default(g, ver, i * 100, 100);
    g->et_other = true;
    return true;
}

/* ip_v6ext: same extension header merges, a different one is a new flow */
static bool mk_ext_same(int ver, unsigned i, GroSeg *g)
{
    if (i >= 2) {
        return false;
    }
    seg_default(g, ver, i * 100, 100);
    g->ip6_ext = true;
    return true;
}

static bool mk_ext_diff(int ver, unsigned i, GroSeg *g)
{
    if (i >= 2) {
        return false;
    }
    seg_default(g, ver, i * 100, 100);
    g->ip6_ext = true;
    g->ext_byte = i ? 0x11 : 0;
    return true;
}

/* large: mss 4056 segments up to 65535 bytes of IP datagram, then more */
static bool mk_large(int ver, unsigned i, GroSeg *g)
{
    size_t hdr = (ver == 4 ? 20 : 40) + 20;
    size_t mss = 4096 - hdr, max = 65535 - hdr;
    unsigned n = max / mss;

    if (i > n + 1) {
        return false;
    }
    seg_default(g, ver, i * mss, i < n ? mss : max % mss);
    if (i == n + 1) {
        g->seq = i * mss;   /* "new_seg" of gro.c send_large() */
    }
    return true;
}

/* 65 segments of 10 bytes: the segment limit ends the first at 64 */
static bool mk_segs(int ver, unsigned i, GroSeg *g)
{
    if (i >= 65) {
        return false;
    }
    seg_default(g, ver, i * 10, 10);
    return true;
}

static const FlushCase flush_cases[] = {
    { "data-lrg-sml", mk_lrg_sml, { 150 }, 1 },
    { "data-sml-lrg", mk_sml_lrg, { 50, 100 }, 2 },
    { "data-lrg-1byte", mk_1byte, { 101 }, 1 },
    { "flags-psh", mk_psh, { 300, 200 }, 2 },
    { "flags-syn", mk_syn, { 200, 0, 200 }, 3 },
    { "flags-rst", mk_rst, { 200, 0, 200 }, 3 },
    { "flags-urg", mk_urg, { 200, 0, 200 }, 3 },
    { "flags-cwr", mk_cwr, { 100, 200, 200 }, 3 },
    { "tcp-ack", mk_ack, { 100, 100 }, 2 },
    { "tcp-window", mk_win, { 100, 100 }, 2 },
    { "tcp-seq", mk_seq, { 100, 100 }, 2 },
    { "tcp-ts", mk_ts, { 200, 100, 100, 100 }, 4 },
    /* a bad checksum passes the held packet, which waits for the timer */
    { "tcp-csum", mk_tcp_csum, { 100, 100 }, 2 },
    { "ip-tos", mk_tos, { 100, 100 }, 2 },
    { "ip-ecn", mk_ecn, { 100, 100 }, 2 },
    { "ip-ttl", mk_ttl, { 100, 100 }, 2 },
    { "ip-id-inc", mk_id_inc, { 200 }, 1 },
    { "ip-id-fixed", mk_id_fixed, { 200 }, 1 },
    { "ip-id-inc-fixed", mk_id_inc_fixed, { 200, 100 }, 2 },
    { "ip-id-fixed-inc", mk_id_fixed_inc, { 200, 100 }, 2 },
    { "ip-id-wrap", mk_id_wrap, { 300 }, 1 },
    { "ip-df", mk_df0, { 100, 100 }, 2 },
    /* no candidates: delivered at once, before the held packet */
    { "ip-csum", mk_ip_csum, { 100, 100, 100 }, 3 },
    { "ip-opt", mk_ip_opt, { 100, 100, 100 }, 3 },
    { "ip-frag4", mk_frag, { 100, 100, 100 }, 3 },
    { "ip-rb", mk_rb, { 100, 100, 100 }, 3 },
    /* IPv4 headers after EtherType 0x86dd: no candidates */
    { "ip-ethertype", mk_ethertype, { 100, 100 }, 2 },
    { "large", mk_large, { 65495, 599 }, 2 },
    { "segments", mk_segs, { 640, 10 }, 2 },
    /* LRO: acknowledgement and window changes merge */
    { "lro-ack", mk_ack, { 200 }, 1, DMNIC_GRO_CTRL_LRO },
    { "lro-window", mk_win, { 200 }, 1, DMNIC_GRO_CTRL_LRO },
    { "lro-ts", mk_ts, { 200, 100, 100, 100 }, 4, DMNIC_GRO_CTRL_LRO },
    /* both bits: the GRO-HW rules */
    { "hw-lro-ack", mk_ack, { 100, 100 }, 2,
      DMNIC_GRO_CTRL_HW | DMNIC_GRO_CTRL_LRO },
};

static const FlushCase flush_cases_v6[] = {
    { "data-sml-lrg", mk_sml_lrg, { 50, 100 }, 2 },
    { "flags-psh", mk_psh, { 300, 200 }, 2 },
    { "flags-cwr", mk_cwr, { 100, 200, 200 }, 3 },
    { "tcp-ack", mk_ack, { 100, 100 }, 2 },
    { "tcp-ts", mk_ts, { 200, 100, 100, 100 }, 4 },
    { "tcp-csum", mk_tcp_csum, { 100, 100 }, 2 },
    { "ip-tclass", mk_tos, { 100, 100 }, 2 },
    { "ip-ecn", mk_ecn, { 100, 100 }, 2 },
    { "ip-hoplimit", mk_ttl, { 100, 100 }, 2 },
    /* another flow label: another flow, both held until the timer */
    { "ip-flowlabel", mk_flowlabel, { 100, 100 }, 2 },
    { "ip-v6ext-same", mk_ext_same, { 200 }, 1 },
    { "ip-v6ext-diff", mk_ext_diff, { 100, 100 }, 2 },
    { "ip-ethertype", mk_ethertype, { 100, 100 }, 2 },
    { "large", mk_large, { 65475, 899 }, 2 },
};

static void run_flush_case(int ver, const FlushCase *fc)
{
    GroSeg g;
    DnState s;
    unsigned i;

    gro_start(&s, fc->ctrl ? fc->ctrl : DMNIC_GRO_CTRL_HW, NULL);
    for (i = 0; fc->mk(ver, i, &g); i++) {
        send_seg(&s, &g);
    }
    step_timeout(&s);
    expect_lens(&s, fc->lens, fc->n);
    dn_stop(&s);
}

static void test_flush_v4(const void *opaque)
{
    run_flush_case(4, opaque);
}

static void test_flush_v6(const void *opaque)
{
    run_flush_case(6, opaque);
}

/* Segment @i of a flow of @len-byte segments from port @sport */
static void send_flow_seg(DnState *s, uint16_t sport, unsigned i, size_t len,
                          uint8_t flags)
{
    GroSeg g;

    seg_default(&g, 4, i * len, len);
    g.sport = sport;
    g.id = i;
    g.flags |= flags;
    send_seg(s, &g);
}

/*
 * Contexts end when the queue held no segment for GRO_TIMEOUT (each one
 * merged or opening a context restarts it), or GRO_MAX_AGE after they
 * were opened
 */
static void test_timeout(void)
{
    GroSeg g;
    DnState s;
    unsigned i;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 3 * GRO_TIMEOUT_US);

    /*
     * a segment of flow 2 every half timeout keeps the queue busy: flow
     * 1's age ends first, then flow 2's (opened half a timeout later)
     */
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    for (i = 0; i < 5; i++) {
        qtest_clock_step(s.qts, GRO_TIMEOUT_US * 500LL);
        send_flow_seg(&s, 2000, i, 100, 0);
    }
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    qtest_clock_step(s.qts, GRO_TIMEOUT_US * 500LL);
    expect_lens(&s, (const int[]){ 100 }, 1);
    qtest_clock_step(s.qts, GRO_TIMEOUT_US * 500LL);
    expect_lens(&s, (const int[]){ 500 }, 1);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 100000);

    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    qtest_clock_step(s.qts, GRO_TIMEOUT_US * 1000LL - 1000);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    seg_default(&g, 4, 100, 100);
    send_seg(&s, &g);
    qtest_clock_step(s.qts, GRO_TIMEOUT_US * 1000LL - 1000);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    qtest_clock_step(s.qts, 1001);
    expect_lens(&s, (const int[]){ 200 }, 1);
    dn_stop(&s);
}

/*
 * gro-hold-flush: with the driver's timing (GRO_TIMEOUT 10 ms, GRO_MAX_AGE
 * 1 s), the last segment of a burst (full size, no PSH: it stays held)
 * is delivered GRO_TIMEOUT after it arrived, the spec's bound, although
 * a UDP frame reaches the queue every 5 ms (8d70579: every frame kept it,
 * up to GRO_MAX_AGE, while its sender waited for the ACK)
 */
static void test_hold_flush(void)
{
    const int64_t ms = 1000000;
    uint8_t f[DN_FRAME_MAX];
    DlPktSpec udp;
    size_t len;
    GroSeg g;
    DnState s;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    dn_wr(&s, DMNIC_REG_GRO_TIMEOUT, 10000);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 1000000);
    dl_pkt_default(&udp, 4, DL_PROTO_UDP, 20);
    len = dl_pkt_build(&udp, f, NULL);

    seg_default(&g, 4, 0, 1000);
    send_seg(&s, &g);
    qtest_clock_step(s.qts, 5 * ms);
    dn_inject(&s, f, len);
    expect_lens(&s, (const int[]){ 20 }, 1);
    qtest_clock_step(s.qts, 5 * ms - 1);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    qtest_clock_step(s.qts, 1);
    expect_lens(&s, (const int[]){ 1000 }, 1);
    dn_inject(&s, f, len);
    expect_lens(&s, (const int[]){ 20 }, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 3);
    dn_stop(&s);
}

/*
 * x-gro-time-scale: both times are that many times longer (the lab's
 * scripts set 5 under TCG, whose senders are that much slower)
 */
static void test_time_scale(void)
{
    const int64_t ms = 1000000;
    GroSeg g;
    DnState s;
    unsigned i;

    gro_start(&s, DMNIC_GRO_CTRL_HW, ",x-gro-time-scale=10");
    dn_wr(&s, DMNIC_REG_GRO_TIMEOUT, 10000);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 30000);

    /* idle: 100 ms, not 10 ms */
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    qtest_clock_step(s.qts, 100 * ms - 1);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    qtest_clock_step(s.qts, 1);
    expect_lens(&s, (const int[]){ 100 }, 1);

    /* age: 300 ms, however busy (a segment every 60 ms) */
    seg_default(&g, 4, 100, 100);
    send_seg(&s, &g);
    for (i = 0; i < 4; i++) {
        qtest_clock_step(s.qts, 60 * ms);
        send_flow_seg(&s, 2000, i, 100, 0);
    }
    qtest_clock_step(s.qts, 60 * ms - 1);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    qtest_clock_step(s.qts, 1);
    expect_lens(&s, (const int[]){ 100 }, 1);
    dn_stop(&s);
}

/* An out-of-range scale is refused at realize */
static void test_time_scale_range(void)
{
    QTestState *qts = qtest_init("-M q35 -nodefaults -device "
                                 "pcie-root-port,id=rp,bus=pcie.0,chassis=1");
    QDict *resp;
    const char *desc;

    resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                     "'driver': 'devmem-nic', 'bus': 'rp', "
                     "'x-gro-time-scale': 0}}");
    g_assert(qdict_haskey(resp, "error"));
    desc = qdict_get_str(qdict_get_qdict(resp, "error"), "desc");
    g_assert(strstr(desc, "x-gro-time-scale must be 1..100"));
    qobject_unref(resp);
    qtest_quit(qts);
}

/* Contexts are delivered by RX disable, GRO off and VM stop; reset drops */
static void test_flush_events(void)
{
    GroSeg g;
    DnState s;
    QDict *rsp;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);

    /* GRO_CTRL = 0 */
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    expect_lens(&s, (const int[]){ 100 }, 1);

    /* VM stop (a migration's first step) */
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW);
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    rsp = qtest_qmp(s.qts, "{ 'execute': 'stop' }");
    g_assert_false(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    expect_lens(&s, (const int[]){ 100 }, 1);
    rsp = qtest_qmp(s.qts, "{ 'execute': 'cont' }");
    g_assert_false(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);

    /* RX disable: delivered before the queue stops */
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    dn_qwr(&s, 0, DMNIC_Q_CTRL, 0);
    expect_lens(&s, (const int[]){ 100 }, 1);

    /* reset: gone, and no DMA */
    dn_qwr(&s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE |
           DMNIC_Q_CTRL_HDS_ENABLE);
    s.q[0].rxc_head = 0;
    s.q[0].rxc_gen = true;
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    step_timeout(&s);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_RXC + DMNIC_RING_DEV), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 0);
    dn_stop(&s);
}

/* 512 contexts a queue: flow 513 takes the oldest one (flow 0's) */
static void test_contexts(void)
{
    GroSeg g;
    DnState s;
    unsigned i;
    Rx r;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    for (i = 0; i < 513; i++) {
        seg_default(&g, 4, 0, 100);
        g.sport = 1000 + i;
        send_seg(&s, &g);
        if (i < 512) {
            g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
        }
    }
    rx_one(&s, &r);
    g_assert_cmpuint(lduw_be_p(r.hdr + 34), ==, 1000);
    g_free(r.pay);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    /* the other 512 end with GRO; the buffers run out on the way */
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS) +
                     dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 513);
    rx_one(&s, &r);
    g_assert_cmpuint(lduw_be_p(r.hdr + 34), ==, 1001);
    g_free(r.pay);
    dn_stop(&s);
}

/* A coalesced packet without the buffers for it is dropped as one */
static void test_nobuf(void)
{
    GroSeg g;
    DnState s;
    unsigned i;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    /* consume all but two payload buffers with big ungrouped frames */
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    for (i = 0; i < 30; i++) {
        seg_default(&g, 4, 0, 4000);
        g.sport = 2000 + i;
        send_seg(&s, &g);
    }
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 30);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW);
    for (i = 0; i < 3; i++) {
        seg_default(&g, 4, i * 4000, 4000);
        send_seg(&s, &g);
    }
    step_timeout(&s);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_GRO_PACKETS), ==, 0);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 30);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* Direct placement (spec: Delivery, "Where the payload waits")        */
/* ------------------------------------------------------------------ */

#define NIC_QOM "/machine/peripheral/nic"

/* The next packet: from @sport, @segs segments, payload from @seq on */
static void expect_flow_pkt(DnState *s, uint16_t sport, unsigned segs,
                            uint32_t seq, size_t len)
{
    Rx r;
    size_t k;

    rx_one(s, &r);
    g_assert_cmpuint(lduw_be_p(r.hdr + 34), ==, sport);
    g_assert_true(r.first.flags & DMNIC_RXC_F_SPLIT);
    g_assert_true(r.first.flags & DMNIC_RXC_F_L4_CSUM_OK);
    g_assert_cmpuint(!!(r.first.flags & DMNIC_RXC_F_GRO), ==, segs >= 2);
    g_assert_cmpuint(r.segs, ==, segs >= 2 ? segs : 0);
    g_assert_cmpuint(r.pay_len, ==, len);
    for (k = 0; k < len; k++) {
        g_assert_cmpuint(r.pay[k], ==, (uint8_t)(seq + k));
    }
    g_free(r.pay);
}

/*
 * Switching between the LRO and GRO-HW rules delivers what was merged
 * under the old ones (a packet of segments whose ACKs differ is never
 * delivered as a GRO-HW packet)
 */
static void test_mode_switch(void)
{
    GroSeg g;
    DnState s;

    gro_start(&s, DMNIC_GRO_CTRL_LRO, NULL);
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    seg_default(&g, 4, 100, 100);
    g.ack++;
    send_seg(&s, &g);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW);
    expect_lens(&s, (const int[]){ 200 }, 1);
    /* both bits are the GRO-HW rules: no change, nothing delivered */
    seg_default(&g, 4, 0, 100);
    send_seg(&s, &g);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW | DMNIC_GRO_CTRL_LRO);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    step_timeout(&s);
    expect_lens(&s, (const int[]){ 100 }, 1);
    dn_stop(&s);
}

/*
 * What the lengths of the flush cases do not show: the merged header
 * carries PSH from its last segment, LRO the last segment's ACK and
 * window, and a fixed IP ID is reported (F_GRO_FIXEDID)
 */
static void test_merged_header(void)
{
    const size_t l4 = 14 + 20;
    GroSeg g;
    DnState s;
    unsigned i;
    Rx r;

    gro_start(&s, DMNIC_GRO_CTRL_LRO, NULL);
    for (i = 0; i < 3; i++) {
        seg_default(&g, 4, i * 100, 100);
        g.id = i;
        g.ack = 100 + i;
        g.win = 1000 - i;
        if (i == 2) {
            g.flags |= TH_PSH;
        }
        send_seg(&s, &g);
    }
    rx_one(&s, &r);
    g_assert_cmpuint(r.segs, ==, 3);
    g_assert_cmpuint(r.pay_len, ==, 300);
    g_assert_cmphex(r.hdr[l4 + 13], ==, TH_ACK | TH_PSH);
    g_assert_cmpuint(ldl_be_p(r.hdr + l4 + 8), ==, 102);
    g_assert_cmpuint(lduw_be_p(r.hdr + l4 + 14), ==, 998);
    g_assert_false(r.first.flags & DMNIC_RXC_F_GRO_FIXEDID);
    g_free(r.pay);

    /* GRO-HW, the same IP ID twice: fixed-ID */
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW);
    for (i = 0; i < 2; i++) {
        seg_default(&g, 4, i * 100, 100);
        g.id = 7;
        g.flags |= i ? TH_PSH : 0;
        send_seg(&s, &g);
    }
    rx_one(&s, &r);
    g_assert_cmpuint(r.segs, ==, 2);
    g_assert_true(r.first.flags & DMNIC_RXC_F_GRO_FIXEDID);
    g_assert_cmphex(r.hdr[l4 + 13], ==, TH_ACK | TH_PSH);
    g_free(r.pay);
    dn_stop(&s);
}

/*
 * gro-context-buffers-freed: a burst of 512 flows of one segment each
 * (the flows of a gro.py capacity test, or of any sender) takes 512
 * context buffers; once delivered they are all returned, so many such
 * bursts on many queues cannot pin the device's 64 MiB and turn merging
 * off for good (8d70579 kept every 2 KiB buffer: 1 MiB a queue).  A full
 * buffer, as a stream uses, stays with its context.
 */
static void test_context_buffers_freed(void)
{
    GroSeg g;
    DnState s;
    unsigned i;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    g_assert_cmpuint(dl_qom_get_uint(s.qts, NIC_QOM, "x-gro-mem"), ==, 0);
    for (i = 0; i < 512; i++) {
        seg_default(&g, 4, 0, 100);
        g.sport = 1000 + i;
        send_seg(&s, &g);
    }
    g_assert_cmpuint(dl_qom_get_uint(s.qts, NIC_QOM, "x-gro-mem"), >=,
                     512 * 2048);
    /* delivered (32 with buffers, the rest dropped): every buffer back */
    step_timeout(&s);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS) +
                     dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 512);
    g_assert_cmpuint(dl_qom_get_uint(s.qts, NIC_QOM, "x-gro-mem"), ==, 0);

    /* a merged packet past 2 KiB: its full buffer (headers + 64 KiB) stays */
    dn_stop(&s);
    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    send_flow_seg(&s, 3000, 0, 1400, 0);
    send_flow_seg(&s, 3000, 1, 1400, TH_PSH);
    expect_flow_pkt(&s, 3000, 2, 0, 2800);
    g_assert_cmpuint(dl_qom_get_uint(s.qts, NIC_QOM, "x-gro-mem"), ==,
                     1024 + 65536);
    dn_stop(&s);
}

/*
 * lossless-holds-coalesced: with PAUSE_CTRL_TX, a coalesced packet that a
 * segment's arrival delivers is held, not dropped, when its buffers are
 * not posted: here two segments merged, the third (PSH) would end the
 * 4200-byte packet, one 4096-byte payload buffer is posted.  The third
 * segment waits in the RX hold (the XOFF), the packet stays in its
 * context; buffers posted: one packet of three segments, nothing lost
 * (8d70579 dropped it: a NOBUF drop of 3 segments).  Then the same when
 * a segment that is not merged (out of sequence) delivers the packet.
 */
static void test_lossless_holds_coalesced(void)
{
    DnState s;

    gro_start_bufs(&s, DMNIC_GRO_CTRL_HW, NULL, 4, 1);
    dn_lossless(&s);
    send_flow_seg(&s, 4000, 0, 1400, 0);
    send_flow_seg(&s, 4000, 1, 1400, 0);
    send_flow_seg(&s, 4000, 2, 1400, TH_PSH);
    dn_expect_pause(&s, 0xffff);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    dn_post_bufs(&s, 0, 0, 3, DN_PBUF_LEN);
    dn_expect_pause(&s, 0);
    expect_flow_pkt(&s, 4000, 3, 0, 4200);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_GRO_SEGS), ==, 3);

    dn_stop(&s);

    /* a segment out of sequence would deliver the 4200-byte packet */
    gro_start_bufs(&s, DMNIC_GRO_CTRL_HW, NULL, 4, 1);
    dn_lossless(&s);
    send_flow_seg(&s, 4001, 0, 1400, 0);
    send_flow_seg(&s, 4001, 1, 1400, 0);
    send_flow_seg(&s, 4001, 2, 1400, 0);
    send_flow_seg(&s, 4001, 4, 1400, 0);
    dn_expect_pause(&s, 0xffff);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    dn_post_bufs(&s, 0, 0, 4, DN_PBUF_LEN);
    dn_expect_pause(&s, 0);
    expect_flow_pkt(&s, 4001, 3, 0, 4200);
    step_timeout(&s);
    expect_flow_pkt(&s, 4001, 1, 5600, 1400);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    dn_stop(&s);
}

/*
 * A held packet's payload is in the posted buffers (large segments at
 * once, small ones a buffer at a time); a packet of another flow that
 * needs those buffers comes first and takes them in ring order, and the
 * held one still arrives whole; a single held segment too
 */
static void test_direct_evict(void)
{
    static const size_t sizes[] = { 1000, 3000 };
    DnState s;
    unsigned i, k;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    for (i = 0; i < ARRAY_SIZE(sizes); i++) {
        for (k = 0; k < 5; k++) {
            send_flow_seg(&s, 1500, k, sizes[i], 0);
        }
        g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
        /* no context for a final segment: delivered now, first */
        send_flow_seg(&s, 1600, 0, 700, TH_PSH);
        send_flow_seg(&s, 1500, 5, sizes[i], TH_PSH);
        expect_flow_pkt(&s, 1600, 1, 0, 700);
        expect_flow_pkt(&s, 1500, 6, 0, 6 * sizes[i]);
        g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    }
    /* one segment, delivered by the timeout as it came */
    send_flow_seg(&s, 1500, 0, 3000, 0);
    step_timeout(&s);
    expect_flow_pkt(&s, 1500, 1, 0, 3000);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    /* held in the buffers when GRO is turned off: delivered from there */
    send_flow_seg(&s, 1500, 0, 3000, 0);
    send_flow_seg(&s, 1500, 1, 3000, 0);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    expect_flow_pkt(&s, 1500, 2, 0, 6000);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    dn_stop(&s);
}

/*
 * The posted buffers run out while a packet is held: it is kept by the
 * device, and delivered whole once the driver has posted more; nothing
 * was consumed in between
 */
static void test_direct_refill(void)
{
    DnState s;
    unsigned i;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    for (i = 0; i < 30; i++) {
        send_flow_seg(&s, 2000 + i, 0, 4000, 0);
    }
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW);
    /* 2 buffers left: the third segment does not fit */
    for (i = 0; i < 3; i++) {
        send_flow_seg(&s, 1500, i, 3000, 0);
    }
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 30);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_PBR + DMNIC_RING_DEV), ==, 30);
    dn_post_bufs(&s, 0, 0, 8, DN_PBUF_LEN);
    send_flow_seg(&s, 1500, 3, 3000, TH_PSH);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 33);
    for (i = 0; i < 30; i++) {
        expect_flow_pkt(&s, 2000 + i, 1, 0, 4000);
    }
    expect_flow_pkt(&s, 1500, 4, 0, 12000);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    dn_stop(&s);
}

/*
 * A held packet whose delivery is not split after all (HDS turned off
 * meanwhile) is placed unsplit: its headers, then its payload
 */
static void test_direct_unsplit(void)
{
    DnState s;
    Rx r;
    unsigned i;
    size_t k;

    gro_start(&s, DMNIC_GRO_CTRL_HW, NULL);
    for (i = 0; i < 3; i++) {
        send_flow_seg(&s, 1500, i, 3000, 0);
    }
    dn_qwr(&s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE);
    send_flow_seg(&s, 1500, 3, 3000, TH_PSH);
    rx_one(&s, &r);
    g_assert_false(r.first.flags & DMNIC_RXC_F_SPLIT);
    g_assert_true(r.first.flags & DMNIC_RXC_F_GRO);
    g_assert_cmpuint(r.segs, ==, 4);
    g_assert_cmpuint(r.hdr_len, ==, DN_HBUF_LEN);
    g_assert_cmpuint(r.hdr_len + r.pay_len, ==, 54 + 12000);
    for (k = 54; k < r.hdr_len + r.pay_len; k++) {
        uint8_t b = k < r.hdr_len ? r.hdr[k] : r.pay[k - r.hdr_len];

        g_assert_cmpuint(b, ==, (uint8_t)(k - 54));
    }
    g_free(r.pay);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_HDR_TOO_BIG), ==, 0);
    dn_stop(&s);
}

/*
 * A DMA write of held payload, or the read that brings it back, fails:
 * the queue goes into error then, the contexts are lost, nothing is
 * completed or consumed, and the device writes no more
 */
static void test_direct_dma_error(const void *opaque)
{
    bool rd = GPOINTER_TO_INT(opaque);
    g_autofree char *log = g_strdup_printf("%s/dmnic-gro-%d.log",
                                           g_get_tmp_dir(), getpid());
    g_autofree char *extra = g_strdup_printf(" -d guest_errors -D %s", log);
    unsigned n = rd ? 31 : 0, i;
    DnState s;

    gro_start(&s, DMNIC_GRO_CTRL_HW, extra);
    s.log = g_strdup(log);
    /* read: one payload buffer left, so that the payload comes back */
    dn_wr(&s, DMNIC_REG_GRO_CTRL, 0);
    for (i = 0; i < n; i++) {
        send_flow_seg(&s, 2000 + i, 0, 4000, 0);
    }
    dn_wr(&s, DMNIC_REG_GRO_CTRL, DMNIC_GRO_CTRL_HW);
    send_flow_seg(&s, 1500, 0, 3000, 0);
    dl_qom_set_str(s.qts, NIC_QOM, rd ? "x-fault-dma-read" :
                   "x-fault-dma-write", "0:1");
    send_flow_seg(&s, 1500, 1, 3000, 0);
    /* at 3000 in the first buffer; read: the buffers to read back */
    dn_expect_log(&s, rd ? "queue 0 rx error 5: pbr descriptor read" :
                  "queue 0 rx error 5: write of 1096 bytes");
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, n);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_PBR + DMNIC_RING_DEV), ==, n);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_HBR + DMNIC_RING_DEV), ==, n);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, n);
    send_flow_seg(&s, 1500, 2, 3000, TH_PSH);
    step_timeout(&s);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, n);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_DISABLED), ==, 1);
    dn_expect_qerr(&s, 0, false, DMNIC_QERR_DMA);
    dn_stop(&s);
}

/*
 * One TCP flow of consecutive segments, the last with PSH, read back and
 * checked: with GRO in 64 KiB packets.  DEVMEM_LAB_GRO_STREAM=
 * "frames,payload,ctrl" sizes it for scripts/bench (callgrind counts the
 * instructions of devmem_nic_core_receive, deliveries included).
 */
static void test_rx_stream(void)
{
    const char *env = getenv("DEVMEM_LAB_GRO_STREAM");
    unsigned frames = 64, payload = 1400, ctrl = DMNIC_GRO_CTRL_HW, i;
    uint64_t got = 0;
    GroSeg g;
    DnState s;

    if (env) {
        g_assert_cmpint(sscanf(env, "%u,%u,%u", &frames, &payload, &ctrl),
                        ==, 3);
        g_assert_cmpuint(payload, <=, 9000);
    }
    gro_start(&s, ctrl, NULL);
    for (i = 0; i < frames; i++) {
        seg_default(&g, 4, i * payload, payload);
        g.id = i;
        if (i == frames - 1) {
            g.flags |= TH_PSH;
        }
        send_seg(&s, &g);
        while (dn_cpl_pending(&s, 0)) {
            Rx r;
            unsigned k;

            rx_one(&s, &r);
            for (k = 0; k < r.pay_len; k++) {
                g_assert_cmpuint(r.pay[k], ==, (uint8_t)(got + k));
            }
            got += r.pay_len;
            g_free(r.pay);
        }
    }
    g_assert_cmpuint(got, ==, (uint64_t)frames * payload);
    dn_stop(&s);
}

/*
 * Migration: registers and counters travel in devmem-nic-core/gro; a held
 * context is delivered on the source when the VM stops, so its completion
 * is in guest memory on the destination
 */
static void test_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/dmnic-gro-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    GroSeg g;
    DnState s, d;
    unsigned i;

    gro_start(&s, DMNIC_GRO_CTRL_LRO, NULL);
    dn_wr(&s, DMNIC_REG_GRO_TIMEOUT, 2345);
    dn_wr(&s, DMNIC_REG_GRO_MAX_AGE, 45678);
    for (i = 0; i < 2; i++) {
        seg_default(&g, 4, i * 100, i ? 50 : 100);
        send_seg(&s, &g);
    }
    expect_lens(&s, (const int[]){ 150 }, 1);
    seg_default(&g, 4, 1000, 100);
    send_seg(&s, &g);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);

    dn_boot_incoming(&d, &s, uri);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    d.frames = dn_rd64(&d, DMNIC_REG_G_RX_FRAMES);

    g_assert_cmphex(dn_rd(&d, DMNIC_REG_GRO_CTRL), ==, DMNIC_GRO_CTRL_LRO);
    g_assert_cmpuint(dn_rd(&d, DMNIC_REG_GRO_TIMEOUT), ==, 2345);
    g_assert_cmpuint(dn_rd(&d, DMNIC_REG_GRO_MAX_AGE), ==, 45678);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_RX_GRO_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_RX_GRO_SEGS), ==, 2);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_RX_GRO_BYTES), ==,
                     dn_qstat(&s, 0, DMNIC_Q_RX_GRO_BYTES));
    /* the held segment was delivered before the source stopped */
    expect_lens(&d, (const int[]){ 100 }, 1);

    /* and coalescing goes on */
    for (i = 0; i < 2; i++) {
        seg_default(&g, 4, 2000 + i * 100, i ? 50 : 100);
        send_seg(&d, &g);
    }
    expect_lens(&d, (const int[]){ 150 }, 1);
    dn_stop(&d);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    unsigned i;

    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic-gro/regs", test_regs);
    qtest_add_func("/devmem-nic-gro/merge/ipv4", test_merge_v4);
    qtest_add_func("/devmem-nic-gro/merge/ipv6", test_merge_v6);
    qtest_add_func("/devmem-nic-gro/merge/ipip", test_merge_ipip);
    qtest_add_func("/devmem-nic-gro/merge/ip6ip6", test_merge_ip6ip6);
    for (i = 0; i < ARRAY_SIZE(flush_cases); i++) {
        g_autofree char *name = g_strdup_printf("/devmem-nic-gro/ipv4/%s",
                                                flush_cases[i].name);

        qtest_add_data_func(name, &flush_cases[i], test_flush_v4);
    }
    for (i = 0; i < ARRAY_SIZE(flush_cases_v6); i++) {
        g_autofree char *name = g_strdup_printf("/devmem-nic-gro/ipv6/%s",
                                                flush_cases_v6[i].name);

        qtest_add_data_func(name, &flush_cases_v6[i], test_flush_v6);
    }
    qtest_add_func("/devmem-nic-gro/timeout", test_timeout);
    qtest_add_func("/devmem-nic-gro/gro-hold-flush", test_hold_flush);
    qtest_add_func("/devmem-nic-gro/time-scale", test_time_scale);
    qtest_add_func("/devmem-nic-gro/time-scale-range", test_time_scale_range);
    qtest_add_func("/devmem-nic-gro/gro-context-buffers-freed",
                   test_context_buffers_freed);
    qtest_add_func("/devmem-nic-gro/flush-events", test_flush_events);
    qtest_add_func("/devmem-nic-gro/mode-switch", test_mode_switch);
    qtest_add_func("/devmem-nic-gro/merged-header", test_merged_header);
    qtest_add_func("/devmem-nic-gro/nobuf", test_nobuf);
    qtest_add_func("/devmem-nic-gro/contexts", test_contexts);
    qtest_add_func("/devmem-nic-gro/lossless-holds-coalesced",
                   test_lossless_holds_coalesced);
    qtest_add_func("/devmem-nic-gro/direct/evict", test_direct_evict);
    qtest_add_func("/devmem-nic-gro/direct/refill", test_direct_refill);
    qtest_add_func("/devmem-nic-gro/direct/unsplit", test_direct_unsplit);
    qtest_add_data_func("/devmem-nic-gro/direct/dma-write-error",
                        GINT_TO_POINTER(0), test_direct_dma_error);
    qtest_add_data_func("/devmem-nic-gro/direct/dma-read-error",
                        GINT_TO_POINTER(1), test_direct_dma_error);
    qtest_add_func("/devmem-nic-gro/rx-stream", test_rx_stream);
    qtest_add_func("/devmem-nic-gro/migration", test_migration);
    return g_test_run();
}
