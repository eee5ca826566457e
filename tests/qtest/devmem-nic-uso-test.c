/*
 * QTest for devmem-nic UDP segmentation and the segmentation counters
 * (docs/specs/devmem-nic.rst, "USO" and "Segmentation counters"): the
 * datagrams on the wire are checked field by field against the rules of
 * Linux __udp_gso_segment(), the refusals, link down and migration.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "devmem-lab-pkt.h"
#include "devmem-lab-util.h"
#include "devmem-lab-nic.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"

#define UDP_CSUM_OFF    6

static void uso_start(DnState *s)
{
    memset(s, 0, sizeof(*s));
    dn_boot(s, -1, "-device devmem-nic,id=nic,netdev=n0,"
            "mac=52:54:00:12:34:56,queues=4");
    g_assert_cmphex(dn_rd(s, DMNIC_REG_VERSION), >=, 0x00010003);
    g_assert_true(dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_USO);
    dn_tx_setup(s, 0);
}

/* Posts @frame in @ndesc descriptors, the first with @flags and @mss */
static void post_frame(DnState *s, uint64_t buf, const uint8_t *frame,
                       size_t len, unsigned ndesc, uint16_t flags,
                       uint16_t cstart, uint16_t coff, uint16_t mss)
{
    size_t chunk = len / ndesc;
    uint64_t d0 = s->q[0].ring[DN_TXD] +
                  s->q[0].txd_tail * DMNIC_TXD_SIZE;
    unsigned i;

    qtest_memwrite(s->qts, buf, frame, len);
    for (i = 0; i < ndesc; i++) {
        size_t off = i * chunk;
        size_t n = i == ndesc - 1 ? len - off : chunk;

        dn_post_txd(s, 0, buf + off, n, i ? 0 : 0x55,
                    (i ? 0 : flags) | (i == ndesc - 1 ? DMNIC_TXD_F_EOP : 0),
                    i ? 0 : cstart, i ? 0 : coff);
    }
    qtest_writew(s->qts, d0 + DMNIC_TXD_MSS, mss);
}

typedef struct UsoCase {
    int l3;
    size_t pay;
    size_t mss;
    int vlan_tags;
    int ip6_ext;
    uint16_t ip_id;         /* IPv4: the super-frame's ID */
} UsoCase;

/* One super-frame: every datagram on the wire, its TXC and the counters */
static void check_uso(const void *opaque)
{
    const UsoCase *c = opaque;
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    DlPktSpec spec;
    size_t len, hlen, l3_off, l4_off, got_pay = 0;
    unsigned i, nseg = c->pay ? DIV_ROUND_UP(c->pay, c->mss) : 1;
    uint64_t buf, wire = 0;
    DnTxc t;
    DnState s;

    uso_start(&s);
    dl_pkt_default(&spec, c->l3, DL_PROTO_UDP, c->pay);
    spec.vlan_tags = c->vlan_tags;
    spec.ip6_ext_hdrs = c->ip6_ext;
    len = dl_pkt_build(&spec, frame, &hlen);
    l4_off = hlen - 8;
    l3_off = 14 + 4 * c->vlan_tags;
    if (c->l3 == 4) {
        stw_be_p(frame + l3_off + 4, c->ip_id);     /* checksum now stale */
    }
    /* the posted checksum field is ignored: leave garbage there */
    stw_be_p(frame + l4_off + UDP_CSUM_OFF, 0xdead);

    buf = dn_galloc(&s, len);
    post_frame(&s, buf, frame, len, 3, DMNIC_TXD_F_USO | DMNIC_TXD_F_CSUM,
               l4_off, UDP_CSUM_OFF, c->mss);
    dn_ring_doorbell(&s, 0, DN_TXD);

    for (i = 0; i < nseg; i++) {
        ssize_t got = dn_wire_recv(&s, out, DN_FRAME_MAX);
        size_t seg = MIN(c->mss, c->pay - got_pay);
        const uint8_t *ip = out + l3_off;
        size_t sent = MAX(hlen + seg, 60);

        g_assert_cmpint(got, ==, sent);
        g_assert_true(dl_pkt_l4_csum_ok(out, hlen + seg));
        g_assert_cmphex(lduw_be_p(out + l4_off + UDP_CSUM_OFF), !=, 0);
        g_assert_cmpuint(lduw_be_p(out + l4_off + 4), ==, 8 + seg);
        if (c->l3 == 4) {
            g_assert_cmphex(dl_csum_fold(dl_csum_add(0, ip, 20)), ==, 0xffff);
            g_assert_cmpuint(lduw_be_p(ip + 2), ==, hlen + seg - l3_off);
            g_assert_cmphex(lduw_be_p(ip + 4), ==, (uint16_t)(c->ip_id + i));
            /* the rest of the IPv4 header is copied */
            g_assert_cmpmem(ip + 6, 4, frame + l3_off + 6, 4);
            g_assert_cmpmem(ip + 12, 8, frame + l3_off + 12, 8);
        } else {
            g_assert_cmpuint(lduw_be_p(ip + 4), ==, hlen + seg - l3_off - 40);
            g_assert_cmpmem(ip, 4, frame + l3_off, 4);
            g_assert_cmpmem(ip + 6, l4_off - l3_off - 6, frame + l3_off + 6,
                            l4_off - l3_off - 6);
        }
        g_assert_cmpmem(out, l3_off, frame, l3_off);
        g_assert_cmpmem(out + l4_off, 4, frame + l4_off, 4);    /* ports */
        g_assert_cmpmem(out + hlen, seg, frame + hlen + got_pay, seg);
        got_pay += seg;
        wire += hlen + seg;
    }
    g_assert_cmpuint(got_pay, ==, c->pay);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, DN_FRAME_MAX, 100), ==, -1);

    dn_read_txc(&s, 0, 0, &t);
    g_assert_cmphex(t.id, ==, 0x55);
    g_assert_cmpuint(t.ndesc, ==, 3);
    g_assert_cmpuint(t.len, ==, len);
    g_assert_cmpuint(t.status, ==, DMNIC_TXC_S_OK);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, nseg);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_BYTES), ==, wire);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_TSO), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_BYTES), ==, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, nseg);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_BYTES), ==, wire);
    dn_stop(&s);
}

/* uso.py's two datagrams (partial last segment, exact), and edge cases */
static const UsoCase uso_cases[] = {
    { 4, 1400 * 10 + 500, 1400, 0, 0, 0x1234 },
    { 4, 1400 * 5, 1400, 0, 0, 0x1234 },
    { 6, 1400 * 10 + 500, 1400, 0, 0, 0 },
    { 6, 1400 * 5, 1400, 0, 0, 0 },
    /* the ID wraps; two VLAN tags */
    { 4, 1000, DMNIC_TSO_MSS_MIN, 2, 0, 0xfff0 },
    /* extension headers; a 1-byte last segment */
    { 6, 2 * 1000 + 1, 1000, 1, 2, 0 },
    /* an empty datagram is sent as it is, padded */
    { 4, 0, 1400, 0, 0, 7 },
    /* the largest IPv4 datagram */
    { 4, 65535 - 28, 8000, 0, 0, 1 },
};
static const char *const uso_names[] = {
    "ipv4-partial", "ipv4-exact", "ipv6-partial", "ipv6-exact",
    "ipv4-id-wrap-vlan", "ipv6-ext-short-last", "ipv4-empty", "ipv4-max",
};

/*
 * A segment whose checksum comes out 0 is sent with 0xffff (0 means "no
 * checksum" in UDP): the last segment's first payload word is tuned, from
 * the checksum the device sent for it, so that its sum is 0xffff
 */
static void test_uso_csum_zero(void)
{
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    uint8_t out[2048];
    DlPktSpec spec;
    size_t len, hlen, word;
    uint32_t w;
    uint64_t buf;
    uint16_t c;
    unsigned i, round;
    DnState s;

    uso_start(&s);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 300);
    len = dl_pkt_build(&spec, frame, &hlen);
    word = hlen + 2 * 128;      /* first payload word of segment 3 */
    buf = dn_galloc(&s, len);
    for (round = 0; round < 2; round++) {
        post_frame(&s, buf, frame, len, 1, DMNIC_TXD_F_USO, hlen - 8,
                   UDP_CSUM_OFF, 128);
        dn_ring_doorbell(&s, 0, DN_TXD);
        for (i = 0; i < 3; i++) {
            g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==,
                            hlen + (i < 2 ? 128 : 44));
            g_assert_true(dl_pkt_l4_csum_ok(out, hlen + (i < 2 ? 128 : 44)));
        }
        c = lduw_be_p(out + hlen - 2);
        if (!round) {
            /* add the complement to the sum: it becomes 0xffff */
            w = lduw_be_p(frame + word) + c;
            stw_be_p(frame + word, (w & 0xffff) + (w >> 16));
        }
    }
    g_assert_cmphex(c, ==, 0xffff);
    dn_stop(&s);
}

/* A TSO super-frame is in the segmentation counters too */
static void test_tso_counted(void)
{
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    uint8_t out[2048];
    DlPktSpec spec;
    size_t len, hlen;
    uint64_t buf;
    unsigned i;
    DnState s;

    uso_start(&s);
    dl_pkt_default(&spec, 6, DL_PROTO_TCP, 5000);
    len = dl_pkt_build(&spec, frame, &hlen);
    buf = dn_galloc(&s, len);
    post_frame(&s, buf, frame, len, 2, DMNIC_TXD_F_TSO | DMNIC_TXD_F_CSUM,
               hlen - 20, 16, 1440);
    dn_ring_doorbell(&s, 0, DN_TXD);
    for (i = 0; i < 4; i++) {
        g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==,
                        hlen + (i < 3 ? 1440 : 5000 - 3 * 1440));
    }
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_TSO), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_BYTES), ==, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, 4);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_BYTES), ==,
                     len + 3 * hlen);
    /* an ordinary frame is not */
    post_frame(&s, buf, frame, 100, 1, 0, 0, 0, 0);
    dn_ring_doorbell(&s, 0, DN_TXD);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 5);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, 4);
    dn_stop(&s);
}

/*
 * 1.3 CAPS_TSO_IPXIP: TSO of IPv4/IPv6 in IPv4/IPv6 (ipip, sit, ip6tnl with
 * its encapsulation limit option): both IP headers fixed per segment.
 * CAPS_TSO_TNL: in VXLAN (UDP) and GRE, with and without the outer UDP or
 * GRE checksum: also the outer UDP length and the checksum, as Linux's
 * __skb_udp_tunnel_segment() and gre_gso_segment() make them.
 */
typedef enum {
    TNL_IPXIP,
    TNL_VXLAN,          /* outer UDP, VXLAN header, inner Ethernet */
    TNL_GRE,            /* GRE (with csum: checksum and key) */
} TnlKind;

typedef enum {
    TNL_OK,
    TNL_BAD_UDP_LEN,    /* outer UDP length not the frame's */
    TNL_BAD_INNER,      /* TXD_TNL_INNER inside the GRE header */
    TNL_BAD_CSUM_FLAG,  /* TXD_F_TNL_CSUM on a GRE tunnel */
} TnlBad;

typedef struct TnlCase {
    int outer;
    int inner;
    int l4;             /* DL_PROTO_TCP; UDP: refused */
    TnlKind kind;
    bool csum;          /* VXLAN: TXD_F_TNL_CSUM; GRE: the C bit */
    TnlBad bad;
} TnlCase;

#define TNL_SPORT       0xc123
#define TNL_VXLAN_PORT  4789
#define TNL_GRE_KEY     0x0a0b0c0d

/*
 * Outer headers for @inner, an Ethernet frame of @ilen bytes, into @f: the
 * offset of the inner IP header (*@l4o: the outer UDP or GRE header's)
 */
static size_t build_tnl(uint8_t *f, const TnlCase *c, const uint8_t *inner,
                        size_t ilen, size_t *l4o)
{
    static const uint8_t proto[] = {
        [TNL_IPXIP] = 0, [TNL_VXLAN] = 17, [TNL_GRE] = 47,
    };
    size_t tl = c->kind == TNL_VXLAN ? 16 + 14 :
                c->kind == TNL_GRE ? (c->csum ? 12 : 4) : 0;
    size_t plen = tl + ilen - 14;   /* the outer IP payload */
    uint8_t p = proto[c->kind] ? proto[c->kind] : c->inner == 4 ? 4 : 41;
    bool ext = c->outer == 6 && c->kind != TNL_VXLAN;
    size_t o = 14;

    memcpy(f, (uint8_t[]){ 0x52, 0x54, 0x00, 0x12, 0x34, 0x57,
                           0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, 12);
    stw_be_p(f + 12, c->outer == 4 ? 0x0800 : 0x86dd);
    if (c->outer == 4) {
        memset(f + o, 0, 20);
        f[o] = 0x45;
        stw_be_p(f + o + 2, 20 + plen);
        stw_be_p(f + o + 4, 0x1111);
        stw_be_p(f + o + 6, 0x4000);            /* DF */
        f[o + 8] = 64;
        f[o + 9] = p;
        memcpy(f + o + 12, (uint8_t[]){ 10, 9, 0, 1, 10, 9, 0, 2 }, 8);
        o += 20;
    } else {
        memset(f + o, 0, 40);
        f[o] = 0x60;
        stw_be_p(f + o + 4, plen + (ext ? 8 : 0));
        f[o + 6] = ext ? 60 : p;                /* Destination Options */
        f[o + 7] = 64;
        f[o + 8 + 15] = 1;
        f[o + 24 + 15] = 2;
        o += 40;
        if (ext) {
            /* tunnel encapsulation limit 4, PadN (ip6tnl, ip6gre) */
            memcpy(f + o, (uint8_t[]){ p, 0, 4, 1, 4, 1, 1, 0 }, 8);
            o += 8;
        }
    }
    *l4o = o;
    if (c->kind == TNL_VXLAN) {
        stw_be_p(f + o, TNL_SPORT);
        stw_be_p(f + o + 2, TNL_VXLAN_PORT);
        stw_be_p(f + o + 4, plen + (c->bad == TNL_BAD_UDP_LEN ? 1 : 0));
        stw_be_p(f + o + 6, 0xbeef);            /* ignored, either way */
        memcpy(f + o + 8, (uint8_t[]){ 0x08, 0, 0, 0, 0, 0, 100, 0 }, 8);
        memcpy(f + o + 16, inner, 14);          /* inner Ethernet */
    } else if (c->kind == TNL_GRE) {
        stw_be_p(f + o, c->csum ? 0xa000 : 0);  /* C, K */
        stw_be_p(f + o + 2, c->inner == 4 ? 0x0800 : 0x86dd);
        if (c->csum) {
            stl_be_p(f + o + 4, 0xbeef0000);    /* checksum ignored */
            stl_be_p(f + o + 8, TNL_GRE_KEY);
        }
    }
    o += tl;
    memcpy(f + o, inner + 14, ilen - 14);
    return o;
}

static void check_tso_tnl(const void *opaque)
{
    const TnlCase *c = opaque;
    g_autofree uint8_t *in = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *plain = g_malloc0(DN_FRAME_MAX);
    const size_t pay = 3500, mss = 1000;
    size_t ilen, ihlen, io, lo, len, h, l4, got = 0;
    unsigned i, nseg = DIV_ROUND_UP(pay, mss);
    uint16_t flags = DMNIC_TXD_F_TSO | DMNIC_TXD_F_CSUM;
    DlPktSpec spec;
    uint64_t buf, d0;
    DnState s;

    uso_start(&s);
    g_assert_true(dn_rd(&s, DMNIC_REG_CAPS) & DMNIC_CAPS_TSO_IPXIP);
    g_assert_true(dn_rd(&s, DMNIC_REG_CAPS) & DMNIC_CAPS_TSO_TNL);
    dl_pkt_default(&spec, c->inner, c->l4, pay);
    ilen = dl_pkt_build(&spec, in, &ihlen);
    io = build_tnl(frame, c, in, ilen, &lo);
    len = io + ilen - 14;
    h = io + ihlen - 14;                        /* first payload byte */
    l4 = h - (c->l4 == DL_PROTO_TCP ? 20 : 8);
    if ((c->kind == TNL_VXLAN && c->csum) || c->bad == TNL_BAD_CSUM_FLAG) {
        flags |= DMNIC_TXD_F_TNL_CSUM;
    }
    buf = dn_galloc(&s, len);
    d0 = s.q[0].ring[DN_TXD] + s.q[0].txd_tail * DMNIC_TXD_SIZE;
    post_frame(&s, buf, frame, len, 2, flags, l4, 16, mss);
    if (c->kind != TNL_IPXIP) {
        qtest_writew(s.qts, d0 + DMNIC_TXD_TNL_INNER,
                     c->bad == TNL_BAD_INNER ? lo + 2 : io);
    }
    dn_ring_doorbell(&s, 0, DN_TXD);
    if (c->l4 != DL_PROTO_TCP || c->bad != TNL_OK) {
        dn_expect_qerr(&s, 0, true, DMNIC_QERR_BAD_DESC);
        g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 0);
        dn_stop(&s);
        return;
    }
    for (i = 0; i < nseg; i++) {
        size_t seg = MIN(mss, pay - got);
        ssize_t n = dn_wire_recv(&s, out, DN_FRAME_MAX);

        g_assert_cmpint(n, ==, h + seg);
        if (c->outer == 4) {
            g_assert_cmpuint(lduw_be_p(out + 16), ==, n - 14);
            g_assert_cmphex(lduw_be_p(out + 18), ==, 0x1111 + i);
            g_assert_cmphex(dl_csum_fold(dl_csum_add(0, out + 14, 20)), ==,
                            0xffff);
        } else {
            g_assert_cmpuint(lduw_be_p(out + 18), ==, n - 14 - 40);
        }
        /* the tunnel's headers are copied but for the fields fixed */
        if (c->kind == TNL_VXLAN) {
            g_assert_cmpmem(out + lo, 4, frame + lo, 4);    /* ports */
            g_assert_cmpuint(lduw_be_p(out + lo + 4), ==, n - lo);
            if (c->csum) {
                g_assert_cmphex(lduw_be_p(out + lo + 6), !=, 0);
                g_assert_true(dl_pkt_l4_csum_ok(out, n));
            } else {
                g_assert_cmphex(lduw_be_p(out + lo + 6), ==, 0);
            }
            g_assert_cmpmem(out + lo + 8, io - lo - 8, frame + lo + 8,
                            io - lo - 8);
        } else if (c->kind == TNL_GRE) {
            g_assert_cmpmem(out + lo, 4, frame + lo, 4);
            if (c->csum) {
                g_assert_cmphex(dl_csum_fold(dl_csum_add(0, out + lo,
                                                         n - lo)), ==, 0xffff);
                g_assert_cmpmem(out + lo + 6, 6, frame + lo + 6, 6);
            }
        }
        g_assert_cmpmem(out, 14, frame, 14);
        if (c->outer == 6 && c->kind != TNL_VXLAN) {
            g_assert_cmpmem(out + 54, 8, frame + 54, 8);    /* option */
        }
        if (c->inner == 4) {
            g_assert_cmpuint(lduw_be_p(out + io + 2), ==, n - io);
            g_assert_cmphex(lduw_be_p(out + io + 4), ==, 0x1234 + i);
            g_assert_cmphex(dl_csum_fold(dl_csum_add(0, out + io, 20)), ==,
                            0xffff);
        } else {
            g_assert_cmpuint(lduw_be_p(out + io + 4), ==, n - io - 40);
        }
        /* the inner packet alone, on Ethernet: its TCP checksum */
        memcpy(plain, in, 14);
        memcpy(plain + 14, out + io, n - io);
        g_assert_true(dl_pkt_l4_csum_ok(plain, n - io + 14));
        g_assert_cmphex(ldl_be_p(out + l4 + 4), ==, 0x01020304 + got);
        g_assert_cmpmem(out + h, seg, frame + h + got, seg);
        got += seg;
    }
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_TSO), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, nseg);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_BYTES), ==,
                     len + (nseg - 1) * h);
    dn_stop(&s);
}

static const TnlCase tnl_cases[] = {
    { 4, 4, DL_PROTO_TCP }, { 4, 6, DL_PROTO_TCP },
    { 6, 4, DL_PROTO_TCP }, { 6, 6, DL_PROTO_TCP },
    { 4, 4, DL_PROTO_UDP },
    { 4, 4, DL_PROTO_TCP, TNL_VXLAN }, { 4, 6, DL_PROTO_TCP, TNL_VXLAN },
    { 6, 4, DL_PROTO_TCP, TNL_VXLAN }, { 6, 6, DL_PROTO_TCP, TNL_VXLAN },
    { 4, 4, DL_PROTO_TCP, TNL_VXLAN, true },
    { 4, 6, DL_PROTO_TCP, TNL_VXLAN, true },
    { 6, 4, DL_PROTO_TCP, TNL_VXLAN, true },
    { 6, 6, DL_PROTO_TCP, TNL_VXLAN, true },
    { 4, 4, DL_PROTO_TCP, TNL_GRE }, { 4, 6, DL_PROTO_TCP, TNL_GRE },
    { 6, 4, DL_PROTO_TCP, TNL_GRE }, { 6, 6, DL_PROTO_TCP, TNL_GRE },
    { 4, 4, DL_PROTO_TCP, TNL_GRE, true },
    { 6, 6, DL_PROTO_TCP, TNL_GRE, true },
    { 4, 4, DL_PROTO_TCP, TNL_VXLAN, false, TNL_BAD_UDP_LEN },
    { 4, 4, DL_PROTO_TCP, TNL_GRE, true, TNL_BAD_INNER },
    { 4, 4, DL_PROTO_TCP, TNL_GRE, false, TNL_BAD_CSUM_FLAG },
};
static const char *const tnl_names[] = {
    "tso-ipip", "tso-sit", "tso-ip6tnl-ipv4", "tso-ip6tnl-ipv6",
    "refused/tso-ipip-udp",
    "tso-vxlan4-ipv4", "tso-vxlan4-ipv6", "tso-vxlan6-ipv4", "tso-vxlan6-ipv6",
    "tso-vxlan-csum4-ipv4", "tso-vxlan-csum4-ipv6", "tso-vxlan-csum6-ipv4",
    "tso-vxlan-csum6-ipv6",
    "tso-gre4-ipv4", "tso-gre4-ipv6", "tso-ip6gre-ipv4", "tso-ip6gre-ipv6",
    "tso-gre-csum4-ipv4", "tso-ip6gre-csum-ipv6",
    "refused/tso-vxlan-udp-len", "refused/tso-gre-inner",
    "refused/tso-gre-tnl-csum-flag",
};

typedef enum {
    BAD_TCP,            /* USO on a TCP frame */
    BAD_WITH_TSO,       /* USO and TSO */
    BAD_CSUM_OFFSET,    /* CSUM_OFFSET 16 */
    BAD_CSUM_START,     /* CSUM_START not the UDP header */
    BAD_MSS,            /* MSS below the floor */
    BAD_UDP_LEN,        /* UDP length not the datagram's */
    BAD_IP_LEN,         /* IP length short of the frame */
    BAD_FRAG,           /* an IPv4 fragment */
    BAD_PSP,            /* with a PSP request */
    BAD_NUM,
} UsoBad;

static const char *const bad_names[BAD_NUM] = {
    "tcp", "with-tso", "csum-offset", "csum-start", "mss", "udp-len",
    "ip-len", "fragment", "psp",
};

/* A USO frame that breaks a rule: QERR_BAD_DESC, nothing sent or counted */
static void test_uso_refused(const void *opaque)
{
    UsoBad bad = GPOINTER_TO_INT(opaque);
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    uint8_t out[2048];
    uint16_t flags = DMNIC_TXD_F_USO | DMNIC_TXD_F_CSUM, coff = UDP_CSUM_OFF;
    uint16_t mss = 500;
    DlPktSpec spec;
    size_t len, hlen, cstart;
    uint64_t buf;
    DnState s;

    uso_start(&s);
    dl_pkt_default(&spec, 4, bad == BAD_TCP ? DL_PROTO_TCP : DL_PROTO_UDP,
                   3000);
    spec.ip4_frag = bad == BAD_FRAG;
    len = dl_pkt_build(&spec, frame, &hlen);
    cstart = bad == BAD_TCP ? hlen - 20 : hlen - 8;
    switch (bad) {
    case BAD_WITH_TSO:
        flags |= DMNIC_TXD_F_TSO;
        break;
    case BAD_CSUM_OFFSET:
        coff = 16;
        break;
    case BAD_CSUM_START:
        cstart -= 20;
        break;
    case BAD_MSS:
        mss = DMNIC_TSO_MSS_MIN - 1;
        break;
    case BAD_UDP_LEN:
        stw_be_p(frame + hlen - 4, 3000);
        break;
    case BAD_IP_LEN:
        stw_be_p(frame + 16, len - 14 - 1);
        break;
    default:
        break;
    }
    buf = dn_galloc(&s, len);
    post_frame(&s, buf, frame, len, 1, flags, cstart, coff, mss);
    if (bad == BAD_PSP) {
        qtest_writew(s.qts, s.q[0].ring[DN_TXD] + DMNIC_TXD_PSP_FLAGS,
                     DMNIC_TXD_PSP_F_EN);
    }
    dn_ring_doorbell(&s, 0, DN_TXD);
    dn_expect_qerr(&s, 0, true, DMNIC_QERR_BAD_DESC);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 100), ==, -1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_ERRORS), ==, 1);

    /* the same queue sends a good USO frame after recovery */
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 1000);
    len = dl_pkt_build(&spec, frame, &hlen);
    dn_tx_setup(&s, 0);
    post_frame(&s, buf, frame, len, 1, DMNIC_TXD_F_USO, hlen - 8,
               UDP_CSUM_OFF, 500);
    dn_ring_doorbell(&s, 0, DN_TXD);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, hlen + 500);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, hlen + 500);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 1);
    dn_stop(&s);
}

/* Link down: checked, completed LINK_DOWN, not segmented or counted */
static void test_uso_link_down(void)
{
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    uint8_t out[2048];
    DlPktSpec spec;
    size_t len, hlen;
    uint64_t buf;
    DnTxc t;
    DnState s;

    uso_start(&s);
    qtest_qmp_assert_success(s.qts, "{'execute': 'set_link', 'arguments': "
                             "{'name': 'n0', 'up': false}}");
    dl_pkt_default(&spec, 6, DL_PROTO_UDP, 3000);
    len = dl_pkt_build(&spec, frame, &hlen);
    buf = dn_galloc(&s, len);
    post_frame(&s, buf, frame, len, 2, DMNIC_TXD_F_USO, hlen - 8,
               UDP_CSUM_OFF, 1000);
    dn_ring_doorbell(&s, 0, DN_TXD);
    dn_read_txc(&s, 0, 0, &t);
    g_assert_cmpuint(t.status, ==, DMNIC_TXC_S_LINK_DOWN);
    g_assert_cmpuint(t.len, ==, len);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 100), ==, -1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 0);

    /* a bad one is refused while the link is down too */
    post_frame(&s, buf, frame, len, 1, DMNIC_TXD_F_USO, hlen - 8, 16, 1000);
    dn_ring_doorbell(&s, 0, DN_TXD);
    dn_expect_qerr(&s, 0, true, DMNIC_QERR_BAD_DESC);
    dn_stop(&s);
}

/* The counters travel in devmem-nic-core/lso and go on counting */
static void test_uso_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/dmnic-uso-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    uint8_t out[2048];
    DlPktSpec spec;
    size_t len, hlen;
    uint64_t buf;
    unsigned i;
    DnState s, d;

    uso_start(&s);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 2000);
    len = dl_pkt_build(&spec, frame, &hlen);
    buf = dn_galloc(&s, len);
    post_frame(&s, buf, frame, len, 1, DMNIC_TXD_F_USO, hlen - 8,
               UDP_CSUM_OFF, 1000);
    dn_ring_doorbell(&s, 0, DN_TXD);
    for (i = 0; i < 2; i++) {
        g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, hlen + 1000);
    }

    dn_boot_incoming(&d, &s, uri);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_TX_LSO_BYTES), ==, len);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, 2);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_TX_LSO_WIRE_BYTES), ==,
                     len + hlen);

    post_frame(&d, buf, frame, len, 1, DMNIC_TXD_F_USO, hlen - 8,
               UDP_CSUM_OFF, 1000);
    dn_ring_doorbell(&d, 0, DN_TXD);
    for (i = 0; i < 2; i++) {
        g_assert_cmpint(dn_wire_recv(&d, out, sizeof(out)), ==, hlen + 1000);
    }
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_TX_LSO_PACKETS), ==, 2);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_TX_LSO_WIRE_PACKETS), ==, 4);
    dn_stop(&d);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    unsigned i;

    g_test_init(&argc, &argv, NULL);
    QEMU_BUILD_BUG_ON(ARRAY_SIZE(uso_names) != ARRAY_SIZE(uso_cases));
    for (i = 0; i < ARRAY_SIZE(uso_cases); i++) {
        g_autofree char *name = g_strdup_printf("/devmem-nic-uso/%s",
                                                uso_names[i]);

        qtest_add_data_func(name, &uso_cases[i], check_uso);
    }
    qtest_add_func("/devmem-nic-uso/csum-zero", test_uso_csum_zero);
    qtest_add_func("/devmem-nic-uso/tso-counted", test_tso_counted);
    for (i = 0; i < BAD_NUM; i++) {
        g_autofree char *name = g_strdup_printf("/devmem-nic-uso/refused/%s",
                                                bad_names[i]);

        qtest_add_data_func(name, GINT_TO_POINTER(i), test_uso_refused);
    }
    QEMU_BUILD_BUG_ON(ARRAY_SIZE(tnl_names) != ARRAY_SIZE(tnl_cases));
    for (i = 0; i < ARRAY_SIZE(tnl_cases); i++) {
        g_autofree char *name = g_strdup_printf("/devmem-nic-uso/%s",
                                                tnl_names[i]);

        qtest_add_data_func(name, &tnl_cases[i], check_tso_tnl);
    }
    qtest_add_func("/devmem-nic-uso/link-down", test_uso_link_down);
    qtest_add_func("/devmem-nic-uso/migration", test_uso_migration);
    return g_test_run();
}
