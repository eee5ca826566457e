/*
 * devmem-nic core engine: register file, RX parse/split/steer/RSS/checksum,
 * TX gather/checksum, counters.  See docs/specs/devmem-nic.rst.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/atomic.h"
#include "qemu/cutils.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "system/runstate.h"
#include "devmem-nic-core.h"
#include "devmem-nic-regs.h"
#include "trace.h"

#define DMNIC_MIN_FRAME         ETH_HLEN
#define DMNIC_TX_BUF_SIZE       DMNIC_TSO_MAX_FRAME
#define DMNIC_TCP_CSUM_OFF      offsetof(tcp_header, th_sum)
/* IP protocols of IP-in-IP (RFC 2003, RFC 2473) */
#define DMNIC_PROTO_IPIP        4
#define DMNIC_PROTO_IPV6        41
/* the TCP flags byte (the low byte of th_offset_flags) */
#define DMNIC_TCP_FLAGS_OFF     (offsetof(tcp_header, th_offset_flags) + 1)
/* frames put on the wire per queue and TX bottom-half run (see tx_bh) */
#define DMNIC_TX_BURST          256
/* register bits a write can set (the others read 0) */
#define DMNIC_Q_CTRL_RW         (DMNIC_Q_CTRL_RX_ENABLE | \
                                 DMNIC_Q_CTRL_TX_ENABLE | \
                                 DMNIC_Q_CTRL_HDS_ENABLE)
#define DMNIC_Q_INT_ALL         (DMNIC_Q_INT_RX | DMNIC_Q_INT_TX)
#define DMNIC_INT_ALL           (DMNIC_INT_LINK | DMNIC_INT_QERR)
#define DMNIC_RSS_CTRL_RW       (DMNIC_RSS_CTRL_ENABLE | \
                                 DMNIC_RSS_CTRL_SYM_XOR | \
                                 DMNIC_RSS_CTRL_TBL512)

/* Microsoft's key; 1.2 bytes 40..51 repeat bytes 0..11 */
static const uint8_t dmnic_default_rss_key[DMNIC_RSS_KEY_SIZE_MAX] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
    0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
    0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
    0x41, 0x67, 0x25, 0x3d,
};

static const char *const dmnic_ring_names[DMNIC_NUM_RINGS] = {
    "hbr", "pbr", "rxc", "txd", "txc",
};

/* ------------------------------------------------------------------ */
/* Interrupts and errors                                               */
/* ------------------------------------------------------------------ */

static void dmnic_notify(DevmemNicCore *core, unsigned vec)
{
    if (msix_enabled(core->owner)) {
        trace_devmem_nic_irq(vec);
        msix_notify(core->owner, vec);
    }
}

static void dmnic_admin_event(DevmemNicCore *core, uint32_t cause)
{
    core->int_cause |= cause;
    if (cause & ~core->int_mask) {
        dmnic_notify(core, core->num_queues);
    }
}

static void dmnic_queue_event(DevmemNicCore *core, unsigned qi,
                              uint32_t cause)
{
    DmnicQueue *q = &core->q[qi];

    q->int_cause |= cause;
    if (cause & ~q->int_mask) {
        dmnic_notify(core, qi);
    }
}

static bool dmnic_rx_running(DmnicQueue *q)
{
    return (q->ctrl & DMNIC_Q_CTRL_RX_ENABLE) && !q->rx_err;
}

static bool dmnic_tx_running(DmnicQueue *q)
{
    return (q->ctrl & DMNIC_Q_CTRL_TX_ENABLE) && !q->tx_err;
}

static void G_GNUC_PRINTF(5, 6)
dmnic_queue_error(DevmemNicCore *core, unsigned qi, bool tx, uint8_t code,
                  const char *fmt, ...)
{
    DmnicQueue *q = &core->q[qi];
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u %s error %u: %s\n",
                  qi, tx ? "tx" : "rx", code, msg);
    trace_devmem_nic_queue_error(qi, tx, code);
    if (tx) {
        q->stats[DMNIC_QS_TX_ERRORS]++;
        if (q->tx_err) {
            return;
        }
        q->tx_err = code;
    } else {
        q->stats[DMNIC_QS_RX_ERRORS]++;
        if (q->rx_err) {
            return;
        }
        q->rx_err = code;
        devmem_nic_gro_discard(core, qi);
        /* a frame held for the queue goes, soon (not under our feet) */
        devmem_nic_mac_rx_error(core, qi);
    }
    dmnic_admin_event(core, DMNIC_INT_QERR);
}

/* ------------------------------------------------------------------ */
/* Rings                                                               */
/* ------------------------------------------------------------------ */

static bool dmnic_ring_valid(DmnicRing *r)
{
    return r->size >= DMNIC_RING_SIZE_MIN && r->size <= DMNIC_RING_SIZE_MAX &&
           is_power_of_2(r->size) && !(r->base & (DMNIC_RING_BASE_ALIGN - 1));
}

/* entries posted by the driver in a posting ring */
static uint32_t dmnic_ring_posted(DmnicRing *r)
{
    return (r->drv - r->dev) & (r->size - 1);
}

/* free slots in a completion ring (one slot always stays empty) */
static uint32_t dmnic_ring_free(DmnicRing *r)
{
    return r->size - 1 - ((r->dev - r->drv) & (r->size - 1));
}

static dma_addr_t dmnic_ring_addr(DmnicRing *r, uint32_t idx, unsigned esize)
{
    return r->base + (uint64_t)(idx & (r->size - 1)) * esize;
}

/* check the rings of one direction at enable time; returns error code */
static uint8_t dmnic_check_rings(DevmemNicCore *core, unsigned qi, bool tx)
{
    DmnicQueue *q = &core->q[qi];
    int first = tx ? DMNIC_RING_TXD : DMNIC_RING_HBR;
    int last = tx ? DMNIC_RING_TXC : DMNIC_RING_RXC;
    uint8_t code = devmem_nic_fault_enable(core, qi, tx);
    int i;

    if (code) {
        dmnic_queue_error(core, qi, tx, code, "enable failed (injected)");
        return code;
    }
    for (i = first; i <= last; i++) {
        DmnicRing *r = &q->ring[i];

        if (!dmnic_ring_valid(r)) {
            dmnic_queue_error(core, qi, tx, DMNIC_QERR_BAD_RING,
                              "%s ring base 0x%" PRIx64 " size %u invalid",
                              dmnic_ring_names[i], r->base, r->size);
            return DMNIC_QERR_BAD_RING;
        }
        if ((i == DMNIC_RING_HBR || i == DMNIC_RING_PBR ||
             i == DMNIC_RING_TXD) && r->drv >= r->size) {
            dmnic_queue_error(core, qi, tx, DMNIC_QERR_BAD_INDEX,
                              "%s tail %u >= size %u",
                              dmnic_ring_names[i], r->drv, r->size);
            return DMNIC_QERR_BAD_INDEX;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Checksums and hashing                                               */
/* ------------------------------------------------------------------ */

/*
 * One's complement sum of @p (RFC 1071), 32 bits at a time: folding the
 * 64-bit total gives the same 16-bit result as adding 16-bit words, with a
 * quarter of the host instructions of a byte loop such as QEMU's
 * net_checksum_add_cont() (RX verifies every payload byte, so this is the
 * device's biggest per-byte cost).  scripts/bench --only cost with the
 * payload sum done by net_checksum_add_cont() instead: 58879 instead of
 * 31815 host instructions per 9000-byte frame, 15264 instead of 11000 at
 * 1400 bytes (2026-11-25).  Headers use the library (net_raw_checksum,
 * eth_calc_ip*_pseudo_hdr_csum).
 */
uint64_t devmem_nic_csum_add(uint64_t sum, const uint8_t *p, size_t len)
{
    size_t i = 0;

    for (; i + 4 <= len; i += 4) {
        sum += (uint32_t)ldl_be_p(p + i);
    }
    if (i + 2 <= len) {
        sum += lduw_be_p(p + i);
        i += 2;
    }
    if (i < len) {
        sum += p[i] << 8;
    }
    return sum;
}

uint16_t devmem_nic_csum_fold(uint64_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

/* ------------------------------------------------------------------ */
/* RX parsing                                                          */
/* ------------------------------------------------------------------ */

typedef struct DmnicPkt {
    size_t len;
    uint32_t flags;         /* DMNIC_RXC_F_* packet metadata */
    uint16_t vlan_tci;
    int l3;                 /* 0, 4 or 6 */
    size_t l3_off;
    uint8_t l4;             /* 0, TCP or UDP (parsed) */
    size_t l4_off;
    uint8_t l4_proto;       /* IP protocol / next header at l4_off */
    size_t hdr_len;         /* H: first payload byte */
    size_t pay_len;         /* P */
    size_t ip_end;
    const uint8_t *saddr;
    const uint8_t *daddr;
    unsigned alen;
    uint16_t sport;
    uint16_t dport;
    uint32_t ip6_flow;      /* IPv6 flow label (20 bits), 0 for IPv4 */
    uint32_t hash;
    uint8_t rss_type;
    int rule;
    const DmnicGroOut *gro; /* a coalesced packet (devmem-nic-gro.c) */
    bool no_l4_csum;        /* the L4 checksum is known (GRO): skip it */
    size_t placed;          /* GRO: payload bytes already at head of PBR */
    bool may_hold;          /* no buffers: do nothing, set held (RX hold) */
    bool held;
    bool probe;             /* only find the buffers: may_hold set */
} DmnicPkt;

/*
 * The pseudo-header sum (QEMU's net library) of the L4 segment of @len
 * bytes, protocol @proto, under the IP header at @buf + p->l3_off
 */
static uint32_t dmnic_pseudo_sum(const DmnicPkt *p, const uint8_t *buf,
                                 uint8_t proto, size_t len)
{
    uint32_t cso;

    if (p->l3 == 4) {
        struct ip_header iph;

        memcpy(&iph, buf + p->l3_off, sizeof(iph));
        iph.ip_p = proto;
        return eth_calc_ip4_pseudo_hdr_csum(&iph, len, &cso);
    } else {
        struct ip6_header ip6h;

        memcpy(&ip6h, buf + p->l3_off, sizeof(ip6h));
        return eth_calc_ip6_pseudo_hdr_csum(&ip6h, len, proto, &cso);
    }
}

static void dmnic_parse_l4(DmnicPkt *p, const uint8_t *buf, uint8_t proto)
{
    size_t off = p->l4_off;
    uint64_t sum;
    size_t l4len;
    bool udp4_nocsum = false;

    if (proto == IP_PROTO_TCP && off + sizeof(tcp_header) <= p->ip_end) {
        tcp_header th;
        size_t doff;

        memcpy(&th, buf + off, sizeof(th));
        doff = TCP_HEADER_DATA_OFFSET(&th);
        if (doff < sizeof(th) || off + doff > p->ip_end) {
            return;
        }
        p->l4 = IP_PROTO_TCP;
        p->hdr_len = off + doff;
        p->flags |= DMNIC_RXC_F_TCP;
        p->sport = be16_to_cpu(th.th_sport);
        p->dport = be16_to_cpu(th.th_dport);
    } else if (proto == IP_PROTO_UDP && off + sizeof(udp_header) <= p->ip_end) {
        udp_header uh;

        memcpy(&uh, buf + off, sizeof(uh));
        p->l4 = IP_PROTO_UDP;
        p->hdr_len = off + sizeof(uh);
        p->flags |= DMNIC_RXC_F_UDP;
        p->sport = be16_to_cpu(uh.uh_sport);
        p->dport = be16_to_cpu(uh.uh_dport);
        /* UDP over IPv4 without checksum */
        udp4_nocsum = p->l3 == 4 && !uh.uh_sum;
    } else {
        return;
    }
    p->pay_len = p->ip_end - p->hdr_len;
    if (udp4_nocsum || p->no_l4_csum) {
        return;
    }
    l4len = p->ip_end - off;
    sum = dmnic_pseudo_sum(p, buf, proto, l4len);
    sum = devmem_nic_csum_add(sum, buf + off, l4len);
    p->flags |= devmem_nic_csum_fold(sum) == 0xffff ?
                DMNIC_RXC_F_L4_CSUM_OK : DMNIC_RXC_F_L4_CSUM_BAD;
}

/*
 * The spec's parser (docs/specs/devmem-nic.rst, Parsing) on QEMU's header
 * layouts.  Not eth_get_protocols(): it does not check the IPv4 header and
 * total lengths or the TCP data offset, and its IPv6 walk takes AH's
 * length in 8-byte units (RFC 4302: 4-byte units, plus 2), takes Mobility
 * (135) for an extension header and has no limit on their number.
 */
static void dmnic_parse(DmnicPkt *p, const uint8_t *buf, size_t len,
                        bool l4_csum)
{
    struct eth_header eh;
    size_t off = ETH_HLEN;
    uint16_t et;
    int tags;

    memset(p, 0, sizeof(*p));
    p->no_l4_csum = !l4_csum;
    p->len = len;
    p->rule = -1;

    memcpy(&eh, buf, sizeof(eh));
    et = be16_to_cpu(eh.h_proto);
    for (tags = 0; tags < 2 && (et == ETH_P_VLAN || et == ETH_P_DVLAN) &&
                   off + sizeof(struct vlan_header) <= len; tags++) {
        struct vlan_header vh;

        memcpy(&vh, buf + off, sizeof(vh));
        if (!tags) {
            p->vlan_tci = be16_to_cpu(vh.h_tci);
            p->flags |= DMNIC_RXC_F_VLAN;
        }
        et = be16_to_cpu(vh.h_proto);
        off += sizeof(vh);
    }

    p->l3_off = off;
    if (et == ETH_P_IP && off + sizeof(struct ip_header) <= len) {
        struct ip_header iph;
        size_t ihl = IP_HDR_GET_LEN(buf + off);
        size_t tot;

        memcpy(&iph, buf + off, sizeof(iph));
        tot = be16_to_cpu(iph.ip_len);
        if (IP_HEADER_VERSION(&iph) != IP_HEADER_VERSION_4 ||
            ihl < sizeof(iph) || tot < ihl || off + tot > len) {
            return;
        }
        p->l3 = 4;
        p->flags |= DMNIC_RXC_F_IPV4;
        p->ip_end = off + tot;
        p->flags |= net_raw_checksum((uint8_t *)buf + off, ihl) == 0 ?
                    DMNIC_RXC_F_L3_CSUM_OK : DMNIC_RXC_F_L3_CSUM_BAD;
        p->saddr = buf + off + offsetof(struct ip_header, ip_src);
        p->daddr = buf + off + offsetof(struct ip_header, ip_dst);
        p->alen = sizeof(iph.ip_src);
        p->l4_off = off + ihl;
        if (IP4_IS_FRAGMENT(&iph)) {
            p->flags |= DMNIC_RXC_F_FRAG;
            return;
        }
        p->l4_proto = iph.ip_p;
        dmnic_parse_l4(p, buf, iph.ip_p);
    } else if (et == ETH_P_IPV6 && off + sizeof(struct ip6_header) <= len) {
        struct ip6_header ip6h;
        size_t pos = off + sizeof(ip6h);
        uint8_t nh;
        int n;

        memcpy(&ip6h, buf + off, sizeof(ip6h));
        nh = ip6h.ip6_nxt;
        if ((ip6h.ip6_ctlun.ip6_un2_vfc >> 4) != 6 ||
            pos + be16_to_cpu(ip6h.ip6_plen) > len) {
            return;
        }
        p->l3 = 6;
        p->flags |= DMNIC_RXC_F_IPV6;
        p->ip_end = pos + be16_to_cpu(ip6h.ip6_plen);
        p->saddr = buf + off + offsetof(struct ip6_header, ip6_src);
        p->daddr = buf + off + offsetof(struct ip6_header, ip6_dst);
        p->alen = sizeof(ip6h.ip6_src);
        p->ip6_flow = be32_to_cpu(ip6h.ip6_ctlun.ip6_un1.ip6_un1_flow) &
                      0x000fffff;
        for (n = 0; n < 8; n++) {
            struct ip6_ext_hdr ext;

            if (nh == IP6_FRAGMENT) {
                p->flags |= DMNIC_RXC_F_FRAG;
                return;
            }
            if (nh != IP6_HOP_BY_HOP && nh != IP6_ROUTING &&
                nh != IP6_DESTINATON && nh != IP6_AUTHENTICATION) {
                break;
            }
            if (pos + IP6_EXT_GRANULARITY > p->ip_end) {
                return;
            }
            memcpy(&ext, buf + pos, sizeof(ext));
            /* AH: 4-byte units plus 2 (RFC 4302); others 8, plus 1 */
            pos += nh == IP6_AUTHENTICATION ? (ext.ip6r_len + 2) * 4 :
                   (ext.ip6r_len + 1) * IP6_EXT_GRANULARITY;
            nh = ext.ip6r_nxt;
        }
        if (pos > p->ip_end) {
            return;
        }
        p->l4_off = pos;
        p->l4_proto = nh;
        dmnic_parse_l4(p, buf, nh);
    }
}

/* A decrypted PSP frame: its inner L4 header is the frame's L4 header */
static void dmnic_parse_psp_inner(DmnicPkt *p, const uint8_t *buf,
                                  uint32_t pspf)
{
    size_t ph = p->l4_off + sizeof(udp_header);

    p->flags &= ~(DMNIC_RXC_F_UDP | DMNIC_RXC_F_L4_CSUM_OK |
                  DMNIC_RXC_F_L4_CSUM_BAD);
    p->l4 = 0;
    p->hdr_len = p->pay_len = 0;
    p->sport = p->dport = 0;
    p->l4_off = ph + (buf[ph + 1] + 1) * 8;
    dmnic_parse_l4(p, buf, buf[ph]);
    p->flags |= pspf;
}

/*
 * PSP (devmem-nic-psp.c): a frame to UDP port 1000 is decrypted, then
 * parsed again with the inner L4 header as its L4 header.  Returns false
 * if the frame was dropped.
 */
static bool dmnic_psp_rx(DevmemNicCore *core, DmnicPkt *p, const uint8_t **buf,
                         size_t *size)
{
    uint32_t pspf = 0;

    if (p->l4 != IP_PROTO_UDP || p->dport != DMNIC_PSP_UDP_PORT ||
        (p->flags & DMNIC_RXC_F_L3_CSUM_BAD)) {
        return true;
    }
    switch (devmem_nic_psp_rx(&core->psp, buf, size, p->l3, p->l3_off,
                              p->l4_off, p->ip_end, &pspf)) {
    case DMNIC_PSP_RX_DROP:
        return false;
    case DMNIC_PSP_RX_DECRYPTED:
        dmnic_parse(p, *buf, *size, true);
        dmnic_parse_psp_inner(p, *buf, pspf);
        return true;
    default:
        return true;
    }
}

/* Indirection table of RSS context ctx (< DMNIC_RSS_NUM_CTX) */
static uint32_t *dmnic_rss_table(DevmemNicCore *core, unsigned ctx)
{
    return core->rss_tbl[ctx];
}

/* The table entry a hash selects: hash & 127, or hash & 511 with TBL512 */
static unsigned dmnic_rss_entry(DevmemNicCore *core, uint32_t hash)
{
    if (core->rss_ctrl & DMNIC_RSS_CTRL_TBL512) {
        return hash & (DMNIC_RSS_TBL_SIZE - 1);
    }
    return hash & (DMNIC_RSS_INDIR_SIZE - 1);
}

/* The IP hash type (IPV4 or IPV6) of hash type t */
static unsigned dmnic_hash_type_ip(unsigned t)
{
    return t < DMNIC_RSS_TYPE_IPV6 ? DMNIC_RSS_TYPE_IPV4 : DMNIC_RSS_TYPE_IPV6;
}

static void dmnic_rss_set_hfields(DevmemNicCore *core, unsigned t,
                                  uint32_t val)
{
    uint32_t mask = t == dmnic_hash_type_ip(t) ? DMNIC_RSS_HF_IP :
                                                 DMNIC_RSS_HF_ALL;

    if (dmnic_hash_type_ip(t) == DMNIC_RSS_TYPE_IPV6) {
        mask |= DMNIC_RSS_HF_IP6_FL;
    }

    core->rss_hfields[t - 1] = val & mask;
}

/*
 * REG_RSS_FIELDS (the 1.0 interface): bit t - 1 belongs to hash type t.
 * Writing it sets every HFIELDS register; reading it derives the bits.
 */
static void dmnic_rss_fields_expand(uint32_t val,
                                    uint32_t hfields[DMNIC_RSS_NUM_TYPES])
{
    unsigned t;

    for (t = 1; t <= DMNIC_RSS_NUM_TYPES; t++) {
        unsigned ip = dmnic_hash_type_ip(t);
        uint32_t hf = (val & (1u << (ip - 1))) ? DMNIC_RSS_HF_IP : 0;

        if (t != ip && (val & (1u << (t - 1)))) {
            hf = DMNIC_RSS_HF_ALL;
        }
        hfields[t - 1] = hf;
    }
}

static void dmnic_rss_fields_write(DevmemNicCore *core, uint32_t val)
{
    dmnic_rss_fields_expand(val, core->rss_hfields);
}

static uint32_t dmnic_rss_fields_read(DevmemNicCore *core)
{
    uint32_t val = 0;
    unsigned t;

    for (t = 1; t <= DMNIC_RSS_NUM_TYPES; t++) {
        uint32_t hf = core->rss_hfields[t - 1];

        if (t == dmnic_hash_type_ip(t) ? hf != 0 : (hf & DMNIC_RSS_HF_L4)) {
            val |= 1u << (t - 1);
        }
    }
    return val;
}

/* Hash type of a parsed frame, DMNIC_RSS_TYPE_NONE if it is not IP */
static unsigned dmnic_hash_type(const DmnicPkt *p)
{
    unsigned t;

    if (!p->l3) {
        return DMNIC_RSS_TYPE_NONE;
    }
    t = p->l3 == 4 ? DMNIC_RSS_TYPE_IPV4 : DMNIC_RSS_TYPE_IPV6;
    if (p->l4 == IP_PROTO_TCP) {
        t += DMNIC_RSS_TYPE_IPV4_TCP - DMNIC_RSS_TYPE_IPV4;
    } else if (p->l4 == IP_PROTO_UDP) {
        t += DMNIC_RSS_TYPE_IPV4_UDP - DMNIC_RSS_TYPE_IPV4;
    }
    return t;
}

static void dmnic_rss(DevmemNicCore *core, DmnicPkt *p)
{
    uint8_t in[40], x[16];
    const uint8_t *sa = p->saddr, *da = p->daddr;
    net_toeplitz_key key;
    uint16_t sp = p->sport, dp = p->dport;
    unsigned t = dmnic_hash_type(p);
    size_t n = 0, i;
    uint32_t f;

    if (t == DMNIC_RSS_TYPE_NONE) {
        return;
    }
    f = core->rss_hfields[t - 1];
    if (!f) {
        return;
    }
    if (core->rss_ctrl & DMNIC_RSS_CTRL_SYM_XOR) {
        for (i = 0; i < p->alen; i++) {
            x[i] = p->saddr[i] ^ p->daddr[i];
        }
        sa = da = x;
        sp = dp = p->sport ^ p->dport;
    }
    if (f & DMNIC_RSS_HF_IP_SRC) {
        memcpy(in + n, sa, p->alen);
        n += p->alen;
    }
    if (f & DMNIC_RSS_HF_IP_DST) {
        memcpy(in + n, da, p->alen);
        n += p->alen;
    }
    if (f & DMNIC_RSS_HF_L4_SRC) {
        stw_be_p(in + n, sp);
        n += 2;
    }
    if (f & DMNIC_RSS_HF_L4_DST) {
        stw_be_p(in + n, dp);
        n += 2;
    }
    if (f & DMNIC_RSS_HF_IP6_FL) {
        /* only IPv6 types keep the bit (dmnic_rss_set_hfields) */
        stl_be_p(in + n, p->ip6_flow);
        n += 4;
    }
    net_toeplitz_key_init(&key, core->rss_key);
    net_toeplitz_add(&p->hash, in, n, &key);
    p->rss_type = (f & DMNIC_RSS_HF_L4) ? t : dmnic_hash_type_ip(t);
    p->flags |= DMNIC_RXC_F_RSS;
}

static bool dmnic_rule_match(const uint32_t *w, DmnicPkt *p)
{
    uint32_t ctrl = w[DMNIC_FSW_CTRL];
    unsigned l4 = (ctrl & DMNIC_FS_CTRL_L4_MASK) >> DMNIC_FS_CTRL_L4_SHIFT;
    unsigned i, words;

    if (!(ctrl & DMNIC_FS_CTRL_VALID) || !p->l3) {
        return false;
    }
    if (!!(ctrl & DMNIC_FS_CTRL_IPV6) != (p->l3 == 6)) {
        return false;
    }
    if ((l4 == DMNIC_FS_L4_TCP && p->l4 != IP_PROTO_TCP) ||
        (l4 == DMNIC_FS_L4_UDP && p->l4 != IP_PROTO_UDP) ||
        l4 > DMNIC_FS_L4_UDP) {
        return false;
    }
    words = p->alen / 4;
    for (i = 0; i < words; i++) {
        uint32_t s = ldl_be_p(p->saddr + 4 * i);
        uint32_t d = ldl_be_p(p->daddr + 4 * i);

        if ((s ^ w[DMNIC_FSW_SRC + i]) & w[DMNIC_FSW_SRC_MASK + i]) {
            return false;
        }
        if ((d ^ w[DMNIC_FSW_DST + i]) & w[DMNIC_FSW_DST_MASK + i]) {
            return false;
        }
    }
    if (l4 != DMNIC_FS_L4_ANY) {
        uint32_t ports = p->sport | ((uint32_t)p->dport << 16);

        if ((ports ^ w[DMNIC_FSW_PORTS]) & w[DMNIC_FSW_PORTS_MASK]) {
            return false;
        }
    }
    return true;
}

/* queue for a rule whose action selects an RSS context */
static uint32_t dmnic_rss_ctx_queue(DevmemNicCore *core, const DmnicPkt *p,
                                    uint32_t action, int rule)
{
    unsigned ctx = (action & DMNIC_FS_ACTION_CTX_MASK) >>
                   DMNIC_FS_ACTION_CTX_SHIFT;
    uint32_t hash = (p->flags & DMNIC_RXC_F_RSS) ? p->hash : 0;
    unsigned entry = dmnic_rss_entry(core, hash);
    uint32_t queue;

    if (ctx >= DMNIC_RSS_NUM_CTX) {
        /* refused by FS_CMD_WRITE; only a corrupt incoming state has it */
        return UINT32_MAX;
    }
    /* both 16 bits (post_load masks loaded tables): the sum cannot wrap */
    queue = (action & DMNIC_FS_ACTION_QUEUE_MASK) +
            (dmnic_rss_table(core, ctx)[entry] & DMNIC_RSS_INDIR_QUEUE_MASK);
    trace_devmem_nic_rx_rss_ctx(rule, ctx, hash, entry, queue);
    return queue;
}

/* returns the queue, or -1 to drop (already counted) */
static int dmnic_select_queue(DevmemNicCore *core, DmnicPkt *p)
{
    uint32_t queue;
    int i;

    for (i = 0; i < DMNIC_NUM_FS_RULES; i++) {
        const uint32_t *w = &core->fs_rules[i * DMNIC_FS_WORDS];

        if (dmnic_rule_match(w, p)) {
            p->rule = i;
            p->flags |= DMNIC_RXC_F_FS_MATCH;
            if (w[DMNIC_FSW_ACTION] & DMNIC_FS_ACTION_DROP) {
                core->gstats[DMNIC_GS_RX_DROP_RULE]++;
                trace_devmem_nic_rx_rule_drop(i);
                return -1;
            }
            queue = w[DMNIC_FSW_ACTION] & DMNIC_FS_ACTION_QUEUE_MASK;
            if (w[DMNIC_FSW_ACTION] & DMNIC_FS_ACTION_RSS) {
                queue = dmnic_rss_ctx_queue(core, p, w[DMNIC_FSW_ACTION], i);
            }
            goto out;
        }
    }
    if ((core->rss_ctrl & DMNIC_RSS_CTRL_ENABLE) &&
        (p->flags & DMNIC_RXC_F_RSS)) {
        unsigned entry = dmnic_rss_entry(core, p->hash);

        queue = dmnic_rss_table(core, 0)[entry];
        trace_devmem_nic_rx_rss(p->hash, entry, queue);
    } else {
        queue = core->default_queue;
    }
out:
    if (queue >= core->num_queues) {
        core->gstats[DMNIC_GS_RX_DROP_BADQ]++;
        /* one line per steering setup, not one per frame */
        if (!core->badq_logged) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "devmem-nic: frame steered to queue %u >= %u, "
                          "dropped (not logged again until the steering "
                          "registers change)\n", queue, core->num_queues);
            core->badq_logged = true;
        }
        return -1;
    }
    return queue;
}

/* ------------------------------------------------------------------ */
/* RX placement                                                        */
/* ------------------------------------------------------------------ */

typedef struct DmnicRxBuf {
    uint64_t addr;
    uint32_t len;
    uint16_t id;
    uint32_t used;
} DmnicRxBuf;

/*
 * All device DMA of queue pair @qi goes through these two: they own the
 * fault-injection hook (x-fault-dma-read/-write) and return whether the
 * transfer worked.
 */
static bool dmnic_dma_read(DevmemNicCore *core, unsigned qi, dma_addr_t a,
                           void *buf, dma_addr_t len)
{
    return !devmem_nic_fault_dma(core, qi, false) &&
           pci_dma_read(core->owner, a, buf, len) == MEMTX_OK;
}

static bool dmnic_dma_write(DevmemNicCore *core, unsigned qi, dma_addr_t a,
                            const void *buf, dma_addr_t len)
{
    return !devmem_nic_fault_dma(core, qi, true) &&
           pci_dma_write(core->owner, a, buf, len) == MEMTX_OK;
}

/* Reads and validates the RX descriptor at ring index idx. */
static bool dmnic_read_rxd(DevmemNicCore *core, unsigned qi, int ring,
                           uint32_t idx, DmnicRxBuf *b)
{
    DmnicRing *r = &core->q[qi].ring[ring];
    uint8_t d[DMNIC_RXD_SIZE];
    dma_addr_t a = dmnic_ring_addr(r, idx, DMNIC_RXD_SIZE);

    if (!dmnic_dma_read(core, qi, a, d, sizeof(d))) {
        dmnic_queue_error(core, qi, false, DMNIC_QERR_DMA,
                          "%s descriptor read at 0x%" PRIx64 " failed",
                          dmnic_ring_names[ring], (uint64_t)a);
        return false;
    }
    b->addr = ldq_le_p(d + DMNIC_RXD_ADDR);
    b->len = ldl_le_p(d + DMNIC_RXD_LEN);
    b->id = lduw_le_p(d + DMNIC_RXD_ID);
    b->used = 0;
    if (!b->len || b->len > DMNIC_BUF_LEN_MAX) {
        dmnic_queue_error(core, qi, false, DMNIC_QERR_BAD_DESC,
                          "%s descriptor %u length %u", dmnic_ring_names[ring],
                          idx, b->len);
        return false;
    }
    if (ring == DMNIC_RING_HBR && b->len < DMNIC_RX_HDR_BUF_MIN) {
        dmnic_queue_error(core, qi, false, DMNIC_QERR_BUF_TOO_SMALL,
                          "header buffer %u length %u < %u", idx, b->len,
                          DMNIC_RX_HDR_BUF_MIN);
        return false;
    }
    return true;
}

static bool dmnic_rx_dma_write(DevmemNicCore *core, unsigned qi, uint64_t a,
                               const void *buf, size_t len)
{
    if (!dmnic_dma_write(core, qi, a, buf, len)) {
        dmnic_queue_error(core, qi, false, DMNIC_QERR_DMA,
                          "write of %zu bytes at 0x%" PRIx64 " failed",
                          len, a);
        return false;
    }
    return true;
}

static bool dmnic_write_cpl(DevmemNicCore *core, unsigned qi, bool tx,
                            DmnicRing *r, uint8_t *c, unsigned size,
                            bool gen)
{
    dma_addr_t a = dmnic_ring_addr(r, r->dev, size);
    uint32_t flags = ldl_le_p(c + size - 4);

    if (gen) {
        flags |= DMNIC_RXC_F_GEN;
    }
    if (!devmem_nic_ptp_stamp(core, qi, tx, r->dev, &flags)) {
        dmnic_queue_error(core, qi, tx, DMNIC_QERR_DMA, "timestamp write "
                          "for completion %u failed", r->dev);
        return false;
    }
    stl_le_p(c + size - 4, flags);
    if (devmem_nic_fault_cpl(core, qi, tx, c, size)) {
        return true;        /* lost on purpose (fault injection) */
    }
    /*
     * The flags dword (with GEN) must become visible last: one 32-bit
     * store after the rest (pci_dma_* order their accesses, dma_barrier())
     */
    if (!dmnic_dma_write(core, qi, a, c, size - 4) ||
        stl_le_pci_dma(core->owner, a + size - 4, ldl_le_p(c + size - 4),
                       MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        goto fail;
    }
    r->dev = (r->dev + 1) & (r->size - 1);
    if (!r->dev) {
        /* wrapped: next pass uses the other generation */
        if (tx) {
            core->q[qi].tx_gen = !core->q[qi].tx_gen;
        } else {
            core->q[qi].rx_gen = !core->q[qi].rx_gen;
        }
    }
    return true;

fail:
    dmnic_queue_error(core, qi, tx, DMNIC_QERR_DMA,
                      "completion write at 0x%" PRIx64 " failed", (uint64_t)a);
    return false;
}

/*
 * false only for a packet whose payload is placed (p->placed) and which is
 * not split: nothing was done
 */
static bool dmnic_rx_deliver(DevmemNicCore *core, unsigned qi,
                             const uint8_t *buf, DmnicPkt *p)
{
    DmnicQueue *q = &core->q[qi];
    DmnicRing *hbr = &q->ring[DMNIC_RING_HBR];
    DmnicRing *pbr = &q->ring[DMNIC_RING_PBR];
    DmnicRing *rxc = &q->ring[DMNIC_RING_RXC];
    g_autofree DmnicRxBuf *pbufs = NULL;
    DmnicRxBuf hb;
    size_t hcopy, poff, plen, left, pkt_len;
    uint32_t npay = 0, ncpl, posted, i;
    bool split = false, too_big = false, never = false;
    uint8_t c[DMNIC_RXC_SIZE];

    if (!dmnic_ring_posted(hbr)) {
        goto nobuf;
    }
    if (!dmnic_read_rxd(core, qi, DMNIC_RING_HBR, hbr->dev, &hb)) {
        return true;
    }

    if ((q->ctrl & DMNIC_Q_CTRL_HDS_ENABLE) && p->l4 && p->pay_len &&
        p->pay_len >= q->hds_thresh) {
        if (p->hdr_len <= hb.len) {
            split = true;
        } else if (!p->placed) {
            too_big = true;
        }
    }
    if (too_big && !p->may_hold) {
        q->stats[DMNIC_QS_RX_HDR_TOO_BIG]++;
        too_big = false;
    }
    if (p->placed && !split) {
        return false;
    }
    if (split) {
        hcopy = p->hdr_len;
        poff = p->hdr_len;
        plen = p->pay_len;
    } else {
        hcopy = MIN(MIN(p->len, hb.len), UINT16_MAX);
        poff = hcopy;
        plen = p->len - hcopy;
    }
    pkt_len = hcopy + plen;
    assert(p->placed <= plen);
    if (plen && !p->placed && !p->probe && core->gro_q &&
        core->gro_q[qi].direct >= 0) {
        /* a held GRO packet's payload leaves the buffers this one takes */
        devmem_nic_gro_evict(core, qi);
        if (!dmnic_rx_running(q)) {
            return true;
        }
    }

    /*
     * Payload buffers on a queue whose PBR was never posted (an AF_XDP
     * zero-copy queue): the frame can never be placed, so it is not held
     * (and sends no XOFF): a drop, as a real NIC drops a frame over its
     * buffer size at once
     */
    never = plen > p->placed && !q->pbr_posted;

    /* reserve payload buffers */
    posted = dmnic_ring_posted(pbr);
    left = plen;
    if (left) {
        pbufs = g_new(DmnicRxBuf, MIN(posted, left) + 1);
    }
    while (left) {
        DmnicRxBuf *b;

        if (npay == posted) {
            goto nobuf;
        }
        b = &pbufs[npay];
        if (!dmnic_read_rxd(core, qi, DMNIC_RING_PBR,
                            (pbr->dev + npay) & (pbr->size - 1), b)) {
            return true;
        }
        b->used = MIN(left, b->len);
        left -= b->used;
        npay++;
    }
    ncpl = MAX(npay, 1);
    if (dmnic_ring_free(rxc) < ncpl) {
        goto nobuf;
    }
    if (p->probe) {
        return true;
    }

    /* data; the first p->placed payload bytes are there already */
    if (!dmnic_rx_dma_write(core, qi, hb.addr, buf, hcopy)) {
        return true;
    }
    for (i = 0, left = p->placed; i < npay; i++) {
        size_t skip = MIN(left, pbufs[i].used);

        if (skip < pbufs[i].used &&
            !dmnic_rx_dma_write(core, qi, pbufs[i].addr + skip,
                                buf + poff + skip, pbufs[i].used - skip)) {
            return true;
        }
        left -= skip;
        poff += pbufs[i].used;
    }

    /* completions */
    for (i = 0; i < ncpl; i++) {
        uint32_t flags = p->flags;

        memset(c, 0, sizeof(c));
        if (split) {
            flags |= DMNIC_RXC_F_SPLIT;
        }
        if (i == 0) {
            flags |= DMNIC_RXC_F_SOP | DMNIC_RXC_F_HDR;
            stw_le_p(c + DMNIC_RXC_HDR_ID, hb.id);
            stw_le_p(c + DMNIC_RXC_HDR_LEN, hcopy);
        }
        if (i == ncpl - 1) {
            flags |= DMNIC_RXC_F_EOP;
        }
        if (npay) {
            flags |= DMNIC_RXC_F_PAY;
            stw_le_p(c + DMNIC_RXC_PAY_ID, pbufs[i].id);
            stl_le_p(c + DMNIC_RXC_PAY_LEN, pbufs[i].used);
        }
        c[DMNIC_RXC_RSS_TYPE] = p->rss_type;
        stl_le_p(c + DMNIC_RXC_PKT_LEN, pkt_len);
        stl_le_p(c + DMNIC_RXC_RSS_HASH, p->hash);
        stw_le_p(c + DMNIC_RXC_VLAN_TCI, p->vlan_tci);
        stw_le_p(c + DMNIC_RXC_L4_OFF, p->l4 ? p->l4_off : 0);
        stw_le_p(c + DMNIC_RXC_FS_RULE, p->rule < 0 ? 0xffff : p->rule);
        if (p->gro) {
            c[DMNIC_RXC_GRO_SEGS] = p->gro->segs;
            stw_le_p(c + DMNIC_RXC_GRO_MSS, p->gro->mss);
        }
        stl_le_p(c + DMNIC_RXC_FLAGS, flags);
        if (!dmnic_write_cpl(core, qi, false, rxc, c, DMNIC_RXC_SIZE,
                             q->rx_gen)) {
            return true;
        }
    }

    hbr->dev = (hbr->dev + 1) & (hbr->size - 1);
    pbr->dev = (pbr->dev + npay) & (pbr->size - 1);
    if (too_big) {
        /* a frame that may be held counts once, when it is placed */
        q->stats[DMNIC_QS_RX_HDR_TOO_BIG]++;
    }
    q->stats[DMNIC_QS_RX_PACKETS]++;
    q->stats[DMNIC_QS_RX_BYTES] += pkt_len;
    q->stats[split ? DMNIC_QS_RX_SPLIT : DMNIC_QS_RX_NOSPLIT]++;
    if (p->flags & (DMNIC_RXC_F_L3_CSUM_BAD | DMNIC_RXC_F_L4_CSUM_BAD)) {
        q->stats[DMNIC_QS_RX_CSUM_BAD]++;
    }
    if (p->gro) {
        q->stats[DMNIC_QS_RX_GRO_PACKETS]++;
        q->stats[DMNIC_QS_RX_GRO_SEGS] += p->gro->segs;
        q->stats[DMNIC_QS_RX_GRO_BYTES] += pkt_len;
        q->stats[DMNIC_QS_RX_GRO_WIRE_BYTES] += p->gro->wire_bytes;
    }
    trace_devmem_nic_rx_packet(qi, pkt_len, hcopy, npay, split, p->flags);
    dmnic_queue_event(core, qi, DMNIC_Q_INT_RX);
    return true;

nobuf:
    if (p->may_hold && !never) {
        p->held = true;     /* nothing written, nothing counted */
        return true;
    }
    if (p->probe) {
        return true;        /* it would be dropped: no reason to hold */
    }
    q->stats[DMNIC_QS_RX_DROP_NOBUF]++;
    trace_devmem_nic_rx_nobuf(qi, p->len);
    if (!never) {
        devmem_nic_mac_rx_nobuf(core);
    }
    return true;
}

ssize_t devmem_nic_core_receive(DevmemNicCore *core, const uint8_t *buf,
                                size_t size)
{
    DmnicRxSteer st;
    DmnicPkt p;
    int qi;

    if (devmem_nic_mac_rx_held(core)) {
        /*
         * can_receive() is false, but a flush of the net queue delivers
         * without asking: 0 leaves the frame at the head of the queue
         */
        return 0;
    }
    core->gstats[DMNIC_GS_RX_FRAMES]++;
    if (!devmem_nic_core_link_up(core)) {
        core->gstats[DMNIC_GS_RX_DROP_LINK]++;
        return size;
    }
    if (devmem_nic_mac_rx(core, buf, size)) {
        return size;        /* a pause frame */
    }
    if (size < DMNIC_MIN_FRAME) {
        core->gstats[DMNIC_GS_RX_RUNT]++;
        trace_devmem_nic_rx_drop(size);
        return size;
    }
    dmnic_parse(&p, buf, size, true);
    if (!dmnic_psp_rx(core, &p, &buf, &size)) {
        return size;
    }
    dmnic_rss(core, &p);
    qi = dmnic_select_queue(core, &p);
    if (qi < 0) {
        return size;
    }
    if (!dmnic_rx_running(&core->q[qi])) {
        core->q[qi].stats[DMNIC_QS_RX_DROP_DISABLED]++;
        trace_devmem_nic_rx_disabled(qi, size);
        return size;
    }
    if (p.flags & DMNIC_RXC_F_PSP) {
        devmem_nic_psp_rx_count(&core->psp, qi);
    }
    st.flags = p.flags & (DMNIC_RXC_F_RSS | DMNIC_RXC_F_FS_MATCH |
                          DMNIC_RXC_F_PSP | DMNIC_RXC_F_PSP_GEN_MASK);
    st.hash = p.hash;
    st.rss_type = p.rss_type;
    st.rule = p.rule;
    switch (devmem_nic_fault_rx(core, qi, buf, size, &st)) {
    case DMNIC_FAULT_DROP:
        core->q[qi].stats[DMNIC_QS_RX_DROP_NOBUF]++;
        return size;
    case DMNIC_FAULT_HELD:
        return size;
    default:
        p.may_hold = devmem_nic_mac_rx_may_hold(core);
        switch (devmem_nic_gro_receive(core, qi, buf, size, &st, p.flags,
                                       p.may_hold)) {
        case DMNIC_GRO_HOLD:
            p.held = true;
            break;
        case DMNIC_GRO_PASS:
            /* a held packet placed first may have put the queue in error */
            if (dmnic_rx_running(&core->q[qi])) {
                dmnic_rx_deliver(core, qi, buf, &p);
            }
            break;
        case DMNIC_GRO_TAKEN:
            break;
        }
        if (p.held) {
            devmem_nic_mac_rx_hold(core, qi, buf, size, &st);
        }
        return size;
    }
}

bool devmem_nic_core_rx_running(DevmemNicCore *core, unsigned qi)
{
    return qi < core->num_queues && dmnic_rx_running(&core->q[qi]);
}

/*
 * GRO (devmem-nic-gro.c): place a held frame, or a coalesced packet @o
 * whose header fields are those of its first segment (spec: Delivery)
 */
static bool dmnic_rx_place(DevmemNicCore *core, unsigned qi,
                           const uint8_t *buf, size_t size,
                           const DmnicRxSteer *st, const DmnicGroOut *o,
                           DmnicPkt *pp)
{
    DmnicPkt p;

    dmnic_parse(&p, buf, size, !o && !pp);
    p.flags |= st->flags;
    p.hash = st->hash;
    p.rss_type = st->rss_type;
    p.rule = st->rule;
    if (o && o->segs < 2) {
        /* one segment, payload placed: checksum checked on arrival */
        p.flags |= o->csum_flags;
    } else if (o) {
        /* every segment's checksum was right; the header's is the first */
        p.flags &= ~(DMNIC_RXC_F_L4_CSUM_BAD | DMNIC_RXC_F_UDP);
        p.flags |= DMNIC_RXC_F_TCP | DMNIC_RXC_F_L4_CSUM_OK | o->flags;
        p.l4 = IP_PROTO_TCP;
        p.l4_off = o->l4_off;
        p.hdr_len = o->hdr_len;
        p.pay_len = size - o->hdr_len;
        p.gro = o;
    }
    p.placed = o ? o->placed : 0;
    if (pp) {
        /* a probe: the result in @pp */
        p.may_hold = p.probe = true;
        *pp = p;
        return dmnic_rx_deliver(core, qi, buf, pp);
    }
    return dmnic_rx_deliver(core, qi, buf, &p);
}

bool devmem_nic_core_rx_place(DevmemNicCore *core, unsigned qi,
                              const uint8_t *buf, size_t size,
                              const DmnicRxSteer *st, const DmnicGroOut *o)
{
    return dmnic_rx_place(core, qi, buf, size, st, o, NULL);
}

bool devmem_nic_core_rx_fits(DevmemNicCore *core, unsigned qi,
                             const uint8_t *buf, size_t size,
                             const DmnicRxSteer *st, const DmnicGroOut *o)
{
    DmnicGroOut unsplit;
    DmnicPkt p;

    if (!dmnic_rx_place(core, qi, buf, size, st, o, &p)) {
        /* placed payload, not split: it would be read back, placed whole */
        unsplit = *o;
        unsplit.placed = 0;
        dmnic_rx_place(core, qi, buf, size, st, &unsplit, &p);
    }
    return !p.held;
}

int devmem_nic_core_rx_put(DevmemNicCore *core, unsigned qi,
                           DmnicRxCursor *cur, const uint8_t *data,
                           size_t len, bool whole)
{
    DmnicRing *pbr = &core->q[qi].ring[DMNIC_RING_PBR];

    /* each pass writes at least one byte, or takes a buffer */
    while (len) {
        size_t n;

        if (cur->off == cur->len) {
            DmnicRxBuf b;

            if (cur->nbuf >= dmnic_ring_posted(pbr)) {
                return -ENOSPC;
            }
            if (!dmnic_read_rxd(core, qi, DMNIC_RING_PBR,
                                (pbr->dev + cur->nbuf) & (pbr->size - 1),
                                &b)) {
                return -EIO;
            }
            cur->nbuf++;
            cur->addr = b.addr;
            cur->len = b.len;
            cur->off = 0;
        }
        n = MIN(len, cur->len - cur->off);
        if (whole && n < cur->len - cur->off) {
            break;
        }
        if (!dmnic_rx_dma_write(core, qi, cur->addr + cur->off, data, n)) {
            return -EIO;
        }
        cur->off += n;
        cur->placed += n;
        data += n;
        len -= n;
    }
    return 0;
}

bool devmem_nic_core_rx_get(DevmemNicCore *core, unsigned qi, uint8_t *dst,
                            size_t len)
{
    DmnicRing *pbr = &core->q[qi].ring[DMNIC_RING_PBR];
    uint32_t i;

    /* each pass reads at least one byte (RXD_LEN >= 1) */
    for (i = 0; len; i++) {
        DmnicRxBuf b;
        size_t n;

        if (!dmnic_read_rxd(core, qi, DMNIC_RING_PBR,
                            (pbr->dev + i) & (pbr->size - 1), &b)) {
            return false;
        }
        n = MIN(len, b.len);
        if (!dmnic_dma_read(core, qi, b.addr, dst, n)) {
            dmnic_queue_error(core, qi, false, DMNIC_QERR_DMA,
                              "read back of %zu bytes at 0x%" PRIx64
                              " failed", n, b.addr);
            return false;
        }
        dst += n;
        len -= n;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* TX                                                                  */
/* ------------------------------------------------------------------ */

typedef struct DmnicTxd {
    uint64_t addr;
    uint32_t len;
    uint16_t id;
    uint16_t flags;
    uint16_t csum_start;
    uint16_t csum_offset;
    uint16_t mss;
    uint16_t psp_flags;
    uint32_t psp_sa;
    uint16_t tnl_inner;
} DmnicTxd;

/*
 * QEMU's net queue delivered (or purged) a frame it had queued for us:
 * when none is left, TX goes on
 */
static void dmnic_tx_sent(NetClientState *nc, ssize_t len)
{
    DevmemNicCore *core = devmem_nic_core_of(OBJECT(qemu_get_nic_opaque(nc)));

    if (core->tx_queued && !--core->tx_queued) {
        trace_devmem_nic_tx_resume();
        qemu_bh_schedule(core->tx_bh);
    }
}

/*
 * A frame onto the cable.  A receiver that cannot take it (a full RX hold,
 * a busy socket) makes QEMU queue it, in order, and call dmnic_tx_sent()
 * later: the cable's backpressure.  The packet being sent is finished (its
 * segments queue behind it); no new packet starts until the queue drained
 * (dmnic_tx_process), so what waits there stays bounded instead of being
 * dropped at the queue's limit, as frames sent without a callback are.
 */
static void dmnic_tx_send(DevmemNicCore *core, uint8_t *buf, size_t len)
{
    uint8_t padded[ETH_ZLEN];
    size_t plen = sizeof(padded);

    QEMU_BUILD_BUG_ON(DMNIC_TX_MIN_FRAME != ETH_ZLEN);
    if (eth_pad_short_frame(padded, &plen, buf, len)) {
        buf = padded;
        len = plen;
    }
    devmem_nic_ptp_tx_wire(core);
    if (!qemu_send_packet_async(qemu_get_queue(core->nic), buf, len,
                                dmnic_tx_sent)) {
        if (!core->tx_queued++) {
            trace_devmem_nic_tx_backpressure();
        }
    }
}

/*
 * TCP segmentation of the gathered super-frame in core->tx_buf.
 * Returns false (queue error raised) if the frame cannot be segmented.
 *
 * Not net_tx_pkt's software segmentation (hw/net/net_tx_pkt.c):
 * - net_tx_pkt_tcp_fragment_init() clears FIN and PSH in the one TCP
 *   header copy every segment is sent with, the last one included; the
 *   spec (and Linux's tcp_gso_segment()) keep them on the last segment,
 *   so a FIN sent with data would never reach the peer;
 * - net_tx_pkt_add_raw_fragment_pci() maps each fragment with
 *   pci_dma_map(): payload in MMIO (devmem TX from fake-accel's BAR, P2P
 *   through the switch) gets a bounce buffer, and the address space has
 *   at most DEFAULT_MAX_BOUNCE_BUFFER_SIZE (4096) bytes of them at a time,
 *   so a super-frame with more than 4 KiB of accelerator payload could
 *   not be gathered; dmnic_dma_read() copies any length, and is where the
 *   DMA fault hook sits, which a mapping would bypass;
 * - it sums the payload a byte at a time (see devmem_nic_csum_add());
 * - to a peer with a vnet header it hands the super-frame unsegmented,
 *   so what goes on the wire would depend on the backend.
 */
/*
 * 1.3: the inner IPv4 header (not a fragment) or IPv6 header (no extension
 * headers) at @off of a tunnel frame of @len bytes, whose length field
 * covers the frame to its end, and TCP after it, into @in (l3, l3_off,
 * l4, l4_off, hdr_len, ip_end); false if it is not one the device segments.
 */
static bool dmnic_parse_inner(const uint8_t *buf, size_t len, size_t off,
                              DmnicPkt *in)
{
    size_t tcp;
    tcp_header th;

    memset(in, 0, sizeof(*in));
    in->l3_off = off;
    if (off + sizeof(struct ip_header) <= len &&
        (buf[off] >> 4) == IP_HEADER_VERSION_4) {
        size_t ihl = IP_HDR_GET_LEN(buf + off);
        struct ip_header iph;

        memcpy(&iph, buf + off, sizeof(iph));
        if (ihl < sizeof(iph) || be16_to_cpu(iph.ip_len) != len - off ||
            IP4_IS_FRAGMENT(&iph) || iph.ip_p != IP_PROTO_TCP) {
            return false;
        }
        in->l3 = 4;
        tcp = off + ihl;
    } else if (off + sizeof(struct ip6_header) <= len &&
               (buf[off] >> 4) == 6) {
        struct ip6_header ip6h;

        memcpy(&ip6h, buf + off, sizeof(ip6h));
        if (be16_to_cpu(ip6h.ip6_plen) != len - off - sizeof(ip6h) ||
            ip6h.ip6_nxt != IP_PROTO_TCP) {
            return false;
        }
        in->l3 = 6;
        tcp = off + sizeof(ip6h);
    } else {
        return false;
    }
    if (tcp + sizeof(th) > len) {
        return false;
    }
    memcpy(&th, buf + tcp, sizeof(th));
    if (TCP_HEADER_DATA_OFFSET(&th) < sizeof(th) ||
        tcp + TCP_HEADER_DATA_OFFSET(&th) > len) {
        return false;
    }
    in->l4 = IP_PROTO_TCP;
    in->l4_off = tcp;
    in->hdr_len = tcp + TCP_HEADER_DATA_OFFSET(&th);
    in->ip_end = len;
    return true;
}

/* The tunnel of a TSO frame (spec: TSO): where its outer L4 header is */
typedef struct DmnicTnl {
    uint8_t proto;          /* 0: none; IPIP/IPV6: IP-in-IP; UDP; GRE */
    size_t off;             /* the outer UDP or GRE header */
    bool csum;              /* UDP: TXD_F_TNL_CSUM; GRE: the C bit */
} DmnicTnl;

#define DMNIC_PROTO_GRE         47
#define DMNIC_GRE_F_CSUM        0x8000
#define DMNIC_GRE_F_ROUTING     0x4000
#define DMNIC_GRE_F_KEY         0x2000
#define DMNIC_GRE_F_SEQ         0x1000
#define DMNIC_GRE_F_VERSION     0x0007

/*
 * 1.3: the tunnel of TSO frame @buf of @len bytes whose outer headers are
 * parsed into @o: IP-in-IP (CAPS_TSO_IPXIP, the inner IP header right
 * after the outer ones, @inner 0) or a UDP or GRE tunnel (CAPS_TSO_TNL,
 * the inner IP header at @inner); into @tnl and @in.  False if it is none
 * the device segments.
 */
static bool dmnic_parse_tnl(const DmnicPkt *o, const uint8_t *buf,
                            size_t len, size_t inner, bool udp_csum,
                            DmnicTnl *tnl, DmnicPkt *in)
{
    size_t off = o->l4_off;

    memset(tnl, 0, sizeof(*tnl));
    if (!o->l3 || (o->flags & DMNIC_RXC_F_FRAG) || o->ip_end != len) {
        return false;
    }
    tnl->proto = o->l4_proto;
    tnl->off = off;
    if (!inner) {
        /* IP-in-IP: the inner version is the outer protocol's */
        if (udp_csum ||
            (o->l4_proto != DMNIC_PROTO_IPIP &&
             o->l4_proto != DMNIC_PROTO_IPV6) ||
            !dmnic_parse_inner(buf, len, off, in)) {
            return false;
        }
        return in->l3 == (o->l4_proto == DMNIC_PROTO_IPIP ? 4 : 6);
    }
    if (o->l4_proto == IP_PROTO_UDP) {
        if (off + sizeof(struct udp_header) > inner ||
            lduw_be_p(buf + off + offsetof(struct udp_header, uh_ulen)) !=
            len - off) {
            return false;
        }
        tnl->csum = udp_csum;
    } else if (o->l4_proto == DMNIC_PROTO_GRE && off + 4 <= len) {
        uint16_t f = lduw_be_p(buf + off);
        size_t ghl = 4 + 4 * (!!(f & DMNIC_GRE_F_CSUM) +
                              !!(f & DMNIC_GRE_F_KEY) +
                              !!(f & DMNIC_GRE_F_SEQ));

        if (udp_csum || (f & (DMNIC_GRE_F_ROUTING | DMNIC_GRE_F_VERSION)) ||
            off + ghl > inner) {
            return false;
        }
        tnl->csum = f & DMNIC_GRE_F_CSUM;
    } else {
        return false;
    }
    return dmnic_parse_inner(buf, len, inner, in);
}

/*
 * 1.3: the outer UDP length and checksum or the GRE checksum of segment @sb
 * of @seg_len bytes, once everything inside it is final
 */
static void dmnic_tso_fix_tnl(const DmnicTnl *tnl, const DmnicPkt *o,
                              uint8_t *sb, size_t seg_len)
{
    uint8_t *l4 = sb + tnl->off;
    size_t l4len = seg_len - tnl->off;
    uint64_t sum;

    if (tnl->proto == IP_PROTO_UDP) {
        stw_be_p(l4 + offsetof(struct udp_header, uh_ulen), l4len);
        stw_be_p(l4 + offsetof(struct udp_header, uh_sum), 0);
        if (tnl->csum) {
            /* as Linux: a result of 0 is sent as 0xffff */
            sum = dmnic_pseudo_sum(o, sb, IP_PROTO_UDP, l4len);
            sum = devmem_nic_csum_add(sum, l4, l4len);
            stw_be_p(l4 + offsetof(struct udp_header, uh_sum),
                     net_checksum_finish_nozero(devmem_nic_csum_fold(sum)));
        }
    } else if (tnl->proto == DMNIC_PROTO_GRE && tnl->csum) {
        /* RFC 2784: GRE header and payload, no pseudo-header */
        stw_be_p(l4 + 4, 0);
        sum = devmem_nic_csum_add(0, l4, l4len);
        stw_be_p(l4 + 4, ~devmem_nic_csum_fold(sum));
    }
}

/* An IP header of segment @sb of @seg_len bytes: lengths, ID, checksum */
static void dmnic_tso_fix_ip(uint8_t *sb, int l3, size_t l3_off,
                             size_t seg_len, uint16_t id)
{
    uint8_t *ip = sb + l3_off;

    if (l3 == 4) {
        stw_be_p(ip + offsetof(struct ip_header, ip_len), seg_len - l3_off);
        stw_be_p(ip + offsetof(struct ip_header, ip_id), id);
        stw_be_p(ip + offsetof(struct ip_header, ip_sum), 0);
        stw_be_p(ip + offsetof(struct ip_header, ip_sum),
                 net_raw_checksum(ip, IP_HDR_GET_LEN(ip)));
    } else {
        stw_be_p(ip + offsetof(struct ip6_header, ip6_plen),
                 seg_len - l3_off - sizeof(struct ip6_header));
    }
}

static bool dmnic_tx_tso(DevmemNicCore *core, unsigned qi, size_t len,
                         const DmnicTxd *d0, bool send, uint32_t *nseg,
                         uint64_t *wire)
{
    const uint8_t *buf = core->tx_buf;
    uint8_t *sb = core->tx_seg;
    DmnicPkt o, in = { 0 }, *t = &o;
    DmnicTnl tk = { 0 };
    size_t h, pay, off, mss = d0->mss;
    uint32_t seq;
    uint16_t ip_id = 0, o_id = 0;
    bool tnl = false, udp_csum = d0->flags & DMNIC_TXD_F_TNL_CSUM;
    unsigned i;

    dmnic_parse(&o, buf, len, true);
    if ((d0->tnl_inner || udp_csum || o.l4 != IP_PROTO_TCP) &&
        dmnic_parse_tnl(&o, buf, len, d0->tnl_inner, udp_csum, &tk, &in)) {
        tnl = true;
        t = &in;
    } else if (d0->tnl_inner || udp_csum) {
        t = &in;        /* not a tunnel the device segments: refused */
        in.l4 = 0;
    }
    if (t->l4 != IP_PROTO_TCP || d0->csum_start != t->l4_off ||
        d0->csum_offset != DMNIC_TCP_CSUM_OFF || mss < DMNIC_TSO_MSS_MIN ||
        t->hdr_len + mss > DMNIC_TSO_MAX_SEG || o.ip_end != len) {
        dmnic_queue_error(core, qi, true, DMNIC_QERR_BAD_DESC,
                          "TSO on a frame that is not plain TCP (nor TCP "
                          "in a tunnel; tunnel %u, inner %u, l4 %u, "
                          "csum_start %u/%zu, csum_offset %u, mss %zu, "
                          "ip end %zu/%zu)", tk.proto, d0->tnl_inner, t->l4,
                          d0->csum_start, t->l4_off, d0->csum_offset, mss,
                          o.ip_end, len);
        return false;
    }
    if (!send) {
        /* link down: nothing goes on the wire, nothing to segment */
        *nseg = 1;
        *wire = len;
        return true;
    }
    h = t->hdr_len;
    pay = len - h;
    seq = ldl_be_p(buf + t->l4_off + offsetof(tcp_header, th_seq));
    if (t->l3 == 4) {
        ip_id = lduw_be_p(buf + t->l3_off + offsetof(struct ip_header, ip_id));
    }
    if (tnl && o.l3 == 4) {
        o_id = lduw_be_p(buf + o.l3_off + offsetof(struct ip_header, ip_id));
    }
    *nseg = 0;
    *wire = 0;
    for (off = 0, i = 0; off < pay || (!pay && !i); off += mss, i++) {
        size_t seg = MIN(mss, pay - off);
        uint8_t *tcp = sb + t->l4_off;
        size_t tcplen = h - t->l4_off + seg;
        uint64_t sum;

        memcpy(sb, buf, h);
        memcpy(sb + h, buf + h + off, seg);
        if (tnl) {
            dmnic_tso_fix_ip(sb, o.l3, o.l3_off, h + seg, o_id + i);
        }
        dmnic_tso_fix_ip(sb, t->l3, t->l3_off, h + seg, ip_id + i);
        stl_be_p(tcp + offsetof(tcp_header, th_seq), seq + off);
        if (off + seg < pay) {
            /* last segment only */
            tcp[DMNIC_TCP_FLAGS_OFF] &= ~(TH_FIN | TH_PUSH);
        }
        if (i) {
            tcp[DMNIC_TCP_FLAGS_OFF] &= ~TH_CWR;    /* first segment only */
        }
        stw_be_p(tcp + DMNIC_TCP_CSUM_OFF, 0);
        sum = dmnic_pseudo_sum(t, sb, IP_PROTO_TCP, tcplen);
        sum = devmem_nic_csum_add(sum, tcp, tcplen);
        stw_be_p(tcp + DMNIC_TCP_CSUM_OFF, ~devmem_nic_csum_fold(sum));
        if (tnl) {
            dmnic_tso_fix_tnl(&tk, &o, sb, h + seg);
        }
        if (send) {
            dmnic_tx_send(core, sb, h + seg);
        }
        (*nseg)++;
        *wire += h + seg;
    }
    if (tnl) {
        trace_devmem_nic_tx_tso_tnl(qi, tk.proto, t->l3_off, *nseg);
    }
    return true;
}

static void dmnic_psp_send(void *opaque, uint8_t *buf, size_t len)
{
    dmnic_tx_send(opaque, buf, len);
}

/*
 * UDP segmentation (spec: USO) of the gathered super-frame in core->tx_buf,
 * cut by devmem-nic-uso.c.  Returns false (queue error raised) if the
 * frame breaks a rule.
 */
static bool dmnic_tx_uso(DevmemNicCore *core, unsigned qi, size_t len,
                         const DmnicTxd *d0, bool send, uint32_t *nseg,
                         uint64_t *wire)
{
    const uint8_t *buf = core->tx_buf;
    DmnicSegHdr h;
    DmnicPkt p;
    size_t ulen = 0;

    dmnic_parse(&p, buf, len, false);
    if (p.l4 == IP_PROTO_UDP) {
        ulen = lduw_be_p(buf + p.l4_off + offsetof(struct udp_header,
                                                   uh_ulen));
    }
    if (p.l4 != IP_PROTO_UDP || (d0->flags & DMNIC_TXD_F_TSO) ||
        (d0->psp_flags & DMNIC_TXD_PSP_F_EN) ||
        d0->csum_start != p.l4_off ||
        d0->csum_offset != offsetof(struct udp_header, uh_sum) ||
        d0->mss < DMNIC_TSO_MSS_MIN ||
        p.hdr_len + d0->mss > DMNIC_TSO_MAX_SEG || p.ip_end != len ||
        ulen != len - p.l4_off) {
        dmnic_queue_error(core, qi, true, DMNIC_QERR_BAD_DESC,
                          "USO on a frame that is not plain UDP (l4 %u, "
                          "flags 0x%x, psp 0x%x, csum_start %u/%zu, "
                          "csum_offset %u, mss %u, ip end %zu/%zu, "
                          "udp length %zu)", p.l4, d0->flags, d0->psp_flags,
                          d0->csum_start, p.l4_off, d0->csum_offset, d0->mss,
                          p.ip_end, len, ulen);
        return false;
    }
    if (!send) {
        /* link down: nothing goes on the wire, nothing to segment */
        *nseg = 1;
        *wire = len;
        return true;
    }
    h.l3 = p.l3;
    h.l3_off = p.l3_off;
    h.l4_off = p.l4_off;
    h.mss = d0->mss;
    devmem_nic_uso_segment(buf, len, &h, core->tx_seg, dmnic_psp_send, core,
                           nseg, wire);
    return true;
}

/* A TSO or USO super-frame went out as *@nseg frames of *@wire bytes */
static void dmnic_count_lso(DmnicQueue *q, size_t len, uint32_t nseg,
                            uint64_t wire)
{
    q->lso_stats[DMNIC_LSO_PACKETS]++;
    q->lso_stats[DMNIC_LSO_BYTES] += len;
    q->lso_stats[DMNIC_LSO_WIRE_PACKETS] += nseg;
    q->lso_stats[DMNIC_LSO_WIRE_BYTES] += wire;
}

/*
 * PSP (devmem-nic-psp.c): encrypts, segments and sends the gathered frame;
 * false if it broke a PSP rule (nothing sent, counted in G_PSP_TX_ERROR)
 */
static bool dmnic_psp_tx(DevmemNicCore *core, unsigned qi, const DmnicTxd *d0,
                         size_t len, uint32_t *nseg, uint64_t *wire)
{
    DmnicPkt p;

    dmnic_parse(&p, core->tx_buf, len, true);
    return devmem_nic_psp_tx(&core->psp, qi, core->tx_buf, len,
                             p.l4 == IP_PROTO_UDP ? p.l3 : 0, p.l3_off,
                             p.l4_off, p.ip_end, d0->psp_sa,
                             d0->flags & DMNIC_TXD_F_TSO, d0->mss,
                             dmnic_psp_send, core, nseg, wire);
}

#define DMNIC_TXD_F_DEFINED (DMNIC_TXD_F_EOP | DMNIC_TXD_F_CSUM | \
                             DMNIC_TXD_F_TSO | DMNIC_TXD_F_USO | \
                             DMNIC_TXD_F_TS | DMNIC_TXD_F_TNL_CSUM)
#define DMNIC_TXD_RSVD      DMNIC_TXD_PSP_RSVD      /* reserved, 0 */

/* Reserved TXD flags or bytes are ignored; logged once per TX enable */
static void dmnic_check_txd_rsvd(DevmemNicCore *core, unsigned qi,
                                 uint32_t idx, const uint8_t *raw)
{
    DmnicQueue *q = &core->q[qi];
    uint16_t rsvd = lduw_le_p(raw + DMNIC_TXD_FLAGS) & ~DMNIC_TXD_F_DEFINED;

    if (q->txd_rsvd_logged ||
        (!rsvd && buffer_is_zero(raw + DMNIC_TXD_RSVD,
                                 DMNIC_TXD_SIZE - DMNIC_TXD_RSVD))) {
        return;
    }
    q->txd_rsvd_logged = true;
    qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u txd descriptor %u "
                  "has reserved flags 0x%x or reserved bytes set, ignored "
                  "(logged once per TX enable)\n", qi, idx, rsvd);
}

/*
 * Sends and completes packets of queue @qi until the ring has no complete
 * packet, the completion ring is full, an error stops the queue, or
 * @budget frames went on the wire.  Returns true in the last case: the
 * caller runs it again later.
 */
static bool dmnic_tx_process(DevmemNicCore *core, unsigned qi, int budget)
{
    DmnicQueue *q = &core->q[qi];
    DmnicRing *txd = &q->ring[DMNIC_RING_TXD];
    DmnicRing *txc = &q->ring[DMNIC_RING_TXC];
    DmnicTxd d[DMNIC_TX_MAX_DESC_PER_PKT];

    while (dmnic_tx_running(q) && dmnic_ring_posted(txd) &&
           dmnic_ring_free(txc) && !devmem_nic_fault_tx_hold(core, qi) &&
           !(core->shaper.active && devmem_nic_shaper_hold(core, qi))) {
        uint32_t posted, n = 0, i;
        size_t total = 0, len;
        uint32_t status = DMNIC_TXC_S_OK;
        uint8_t c[DMNIC_TXC_SIZE];
        bool eop = false, link;
        uint32_t nseg;
        uint64_t wire;

        if (core->tx_queued) {
            return true;    /* the cable is busy: dmnic_tx_sent() resumes */
        }
        /*
         * an XOFF that came while this run sent (the peer's receive, in
         * our own qemu_send_packet_async()): no new packet starts
         */
        if (devmem_nic_mac_tx_paused(core)) {
            return true;    /* the pause's end schedules the bottom half */
        }
        posted = dmnic_ring_posted(txd);
        while (!eop && n < posted) {
            uint8_t raw[DMNIC_TXD_SIZE];
            uint32_t idx = (txd->dev + n) & (txd->size - 1);
            dma_addr_t a = dmnic_ring_addr(txd, idx, DMNIC_TXD_SIZE);

            if (n == DMNIC_TX_MAX_DESC_PER_PKT) {
                dmnic_queue_error(core, qi, true, DMNIC_QERR_TX_TOO_LONG,
                                  "packet at %u has more than %u descriptors",
                                  txd->dev, DMNIC_TX_MAX_DESC_PER_PKT);
                return false;
            }
            if (!dmnic_dma_read(core, qi, a, raw, sizeof(raw))) {
                dmnic_queue_error(core, qi, true, DMNIC_QERR_DMA,
                                  "descriptor read at 0x%" PRIx64 " failed",
                                  (uint64_t)a);
                return false;
            }
            d[n].addr = ldq_le_p(raw + DMNIC_TXD_ADDR);
            d[n].len = ldl_le_p(raw + DMNIC_TXD_LEN);
            d[n].id = lduw_le_p(raw + DMNIC_TXD_ID);
            d[n].flags = lduw_le_p(raw + DMNIC_TXD_FLAGS);
            d[n].csum_start = lduw_le_p(raw + DMNIC_TXD_CSUM_START);
            d[n].csum_offset = lduw_le_p(raw + DMNIC_TXD_CSUM_OFFSET);
            d[n].mss = lduw_le_p(raw + DMNIC_TXD_MSS);
            d[n].psp_flags = lduw_le_p(raw + DMNIC_TXD_PSP_FLAGS);
            d[n].psp_sa = ldl_le_p(raw + DMNIC_TXD_PSP_SA);
            d[n].tnl_inner = lduw_le_p(raw + DMNIC_TXD_TNL_INNER);
            dmnic_check_txd_rsvd(core, qi, idx, raw);
            if (!d[n].len || d[n].len > DMNIC_BUF_LEN_MAX) {
                dmnic_queue_error(core, qi, true, DMNIC_QERR_BAD_DESC,
                                  "descriptor %u length %u flags 0x%x", idx,
                                  d[n].len, d[n].flags);
                return false;
            }
            total += d[n].len;
            eop = d[n].flags & DMNIC_TXD_F_EOP;
            n++;
        }
        if (!eop) {
            return false;     /* wait for the rest of the packet */
        }
        if (total > DMNIC_TSO_MAX_FRAME) {
            dmnic_queue_error(core, qi, true, DMNIC_QERR_TX_TOO_LONG,
                              "packet at %u is %zu bytes", txd->dev, total);
            return false;
        }
        len = 0;
        for (i = 0; i < n; i++) {
            if (!dmnic_dma_read(core, qi, d[i].addr, core->tx_buf + len,
                                d[i].len)) {
                dmnic_queue_error(core, qi, true, DMNIC_QERR_DMA,
                                  "data read of %u bytes at 0x%" PRIx64
                                  " failed", d[i].len, d[i].addr);
                return false;
            }
            len += d[i].len;
        }
        link = devmem_nic_core_link_up(core);
        if (!link) {
            status = DMNIC_TXC_S_LINK_DOWN;
        }
        if (d[0].flags & DMNIC_TXD_F_USO) {
            if (!dmnic_tx_uso(core, qi, len, &d[0], link, &nseg, &wire)) {
                return false;
            }
            if (link) {
                dmnic_count_lso(q, len, nseg, wire);
            }
        } else if ((d[0].flags & DMNIC_TXD_F_TSO) &&
            !(d[0].psp_flags & DMNIC_TXD_PSP_F_EN)) {
            if (!dmnic_tx_tso(core, qi, len, &d[0], link, &nseg, &wire)) {
                return false;
            }
            if (link) {
                /* segmented and sent; a link-down completion is neither */
                q->stats[DMNIC_QS_TX_TSO]++;
                dmnic_count_lso(q, len, nseg, wire);
            }
        } else {
            if (len > DMNIC_TX_MAX_FRAME) {
                dmnic_queue_error(core, qi, true, DMNIC_QERR_TX_TOO_LONG,
                                  "packet at %u is %zu bytes", txd->dev, len);
                return false;
            }
            if (d[0].flags & DMNIC_TXD_F_CSUM) {
                size_t start = d[0].csum_start;
                size_t field = start + d[0].csum_offset;

                if (field + 2 > len) {
                    dmnic_queue_error(core, qi, true, DMNIC_QERR_TX_TOO_LONG,
                                      "checksum field at %zu outside %zu "
                                      "bytes", field, len);
                    return false;
                }
                /* as Linux: a result of 0 is sent as 0xffff */
                stw_be_p(core->tx_buf + field, net_checksum_finish_nozero(
                         devmem_nic_csum_fold(devmem_nic_csum_add(
                             0, core->tx_buf + start, len - start))));
                if (link) {
                    q->stats[DMNIC_QS_TX_CSUM]++;
                }
            }
            nseg = 1;
            wire = len;
            if (link && (d[0].psp_flags & DMNIC_TXD_PSP_F_EN)) {
                if (!dmnic_psp_tx(core, qi, &d[0], len, &nseg, &wire)) {
                    status = DMNIC_TXC_S_PSP_ERROR;
                }
            } else if (link) {
                dmnic_tx_send(core, core->tx_buf, len);
            }
        }
        trace_devmem_nic_tx_packet(qi, len, n, status);

        memset(c, 0, sizeof(c));
        stw_le_p(c + DMNIC_TXC_ID, d[0].id);
        stw_le_p(c + DMNIC_TXC_NDESC, n);
        stl_le_p(c + DMNIC_TXC_LEN, len);
        stl_le_p(c + DMNIC_TXC_STATUS, status);
        if ((d[0].flags & DMNIC_TXD_F_TS) && status == DMNIC_TXC_S_OK) {
            stl_le_p(c + DMNIC_TXC_FLAGS, DMNIC_TXC_F_TS);  /* if enabled */
        }
        if (!dmnic_write_cpl(core, qi, true, txc, c, DMNIC_TXC_SIZE,
                             q->tx_gen)) {
            return false;
        }
        txd->dev = (txd->dev + n) & (txd->size - 1);
        if (status == DMNIC_TXC_S_OK) {
            q->stats[DMNIC_QS_TX_PACKETS] += nseg;
            q->stats[DMNIC_QS_TX_BYTES] += wire;
            if (core->shaper.active &&
                devmem_nic_shaper_charge(core, qi, wire)) {
                budget = 0;     /* turn over: the bottom half comes back */
            }
        }
        dmnic_queue_event(core, qi, DMNIC_Q_INT_TX);
        budget -= MAX(nseg, 1);
        if (budget <= 0) {
            return true;
        }
    }
    return false;
}

/*
 * TX runs in a bottom half, never in the doorbell's MMIO write: a guest
 * cannot hold the BQL with one register write (a full ring of TSO
 * super-frames is millions of frames).  Each run sends at most
 * DMNIC_TX_BURST frames per queue and re-arms itself while a queue has
 * more; like virtio-net's tx_bh it does nothing while the VM is stopped.
 */
static void dmnic_tx_schedule(DevmemNicCore *core, unsigned qi)
{
    set_bit(qi, core->tx_pending);
    qemu_bh_schedule(core->tx_bh);
}

bool devmem_nic_core_tx_pending(DevmemNicCore *core)
{
    return !bitmap_empty(core->tx_pending, DMNIC_MAX_QUEUES);
}

static void dmnic_tx_bh(void *opaque)
{
    DevmemNicCore *core = opaque;
    DECLARE_BITMAP(todo, DMNIC_MAX_QUEUES);
    unsigned first, n, qi;

    if (!runstate_is_running()) {
        return;     /* dmnic_vm_state_change() schedules us again */
    }
    if (devmem_nic_mac_tx_paused(core)) {
        return;     /* the pause timer schedules us again */
    }
    if (core->tx_queued) {
        return;     /* dmnic_tx_sent() schedules us again */
    }
    bitmap_copy(todo, core->tx_pending, DMNIC_MAX_QUEUES);
    bitmap_zero(core->tx_pending, DMNIC_MAX_QUEUES);
    /* in queue order, from the shaper's round-robin point */
    first = devmem_nic_shaper_first(core);
    for (n = 0; n < core->num_queues; n++) {
        bool more;

        qi = (first + n) % core->num_queues;
        if (!test_bit(qi, todo)) {
            continue;
        }
        more = dmnic_tx_process(core, qi, DMNIC_TX_BURST);
        trace_devmem_nic_tx_bh(qi, more);
        if (more) {
            set_bit(qi, core->tx_pending);
        } else {
            devmem_nic_fault_tx_idle(core, qi);
        }
    }
    if (devmem_nic_core_tx_pending(core) && !core->tx_queued) {
        qemu_bh_schedule(core->tx_bh);
    }
}

static void dmnic_vm_state_change(void *opaque, bool running,
                                  RunState state)
{
    DevmemNicCore *core = opaque;

    if (!running) {
        /* GRO contexts are not migrated: deliver them now (spec) */
        devmem_nic_gro_flush(core, -1);
        return;
    }
    if (core->link_irq_pending) {
        /* INT_LINK from post_load: MSI-X and the machine are loaded now */
        core->link_irq_pending = false;
        dmnic_admin_event(core, DMNIC_INT_LINK);
    }
    if (devmem_nic_core_tx_pending(core)) {
        qemu_bh_schedule(core->tx_bh);
    }
    devmem_nic_mac_vm_running(core);
    devmem_nic_fault_vm_running(core);
}

/* Fault injection (devmem-nic-fault.c): TX after a delay or a stall */
void devmem_nic_core_tx_kick(DevmemNicCore *core, unsigned qi)
{
    if (qi < core->num_queues) {
        dmnic_tx_schedule(core, qi);
    }
}

/*
 * Place a frame that was held back (fault injection, RX hold), as steered
 * then.  false: @may_hold and no buffers, nothing done or counted.
 */
static bool dmnic_rx_steered(DevmemNicCore *core, unsigned qi,
                             const uint8_t *buf, size_t size,
                             const DmnicRxSteer *st, bool may_hold)
{
    DmnicPkt p;

    /* parsing is deterministic; the steering results are restored */
    dmnic_parse(&p, buf, size, true);
    if (st->flags & DMNIC_RXC_F_PSP) {
        dmnic_parse_psp_inner(&p, buf, 0);
    }
    p.flags |= st->flags;
    p.hash = st->hash;
    p.rss_type = st->rss_type;
    p.rule = st->rule;
    if (qi >= core->num_queues || !dmnic_rx_running(&core->q[qi])) {
        if (qi < core->num_queues) {
            core->q[qi].stats[DMNIC_QS_RX_DROP_DISABLED]++;
        }
        trace_devmem_nic_rx_disabled(qi, size);
        return true;
    }
    p.may_hold = may_hold;
    if (may_hold) {
        /* the RX hold: as on arrival, GRO first (spec: Pause frames) */
        switch (devmem_nic_gro_receive(core, qi, buf, size, st, p.flags,
                                       true)) {
        case DMNIC_GRO_HOLD:
            return false;
        case DMNIC_GRO_TAKEN:
            return true;
        case DMNIC_GRO_PASS:
            if (!dmnic_rx_running(&core->q[qi])) {
                return true;
            }
            break;
        }
    }
    dmnic_rx_deliver(core, qi, buf, &p);
    return !p.held;
}

/* Fault injection: place a frame that was held back, as steered then */
void devmem_nic_core_rx_release(DevmemNicCore *core, unsigned qi,
                                const uint8_t *buf, size_t size,
                                const DmnicRxSteer *st)
{
    dmnic_rx_steered(core, qi, buf, size, st, false);
}

bool devmem_nic_core_rx_retry(DevmemNicCore *core, unsigned qi,
                              const uint8_t *buf, size_t size,
                              const DmnicRxSteer *st)
{
    return dmnic_rx_steered(core, qi, buf, size, st, true);
}

/* ------------------------------------------------------------------ */
/* Registers                                                           */
/* ------------------------------------------------------------------ */

static void dmnic_rss_tables_reset(DevmemNicCore *core)
{
    unsigned c, i;

    for (c = 0; c < DMNIC_RSS_NUM_CTX; c++) {
        for (i = 0; i < DMNIC_RSS_TBL_SIZE; i++) {
            dmnic_rss_table(core, c)[i] = i % core->num_queues;
        }
    }
}

static void dmnic_queue_reset(DmnicQueue *q)
{
    memset(q, 0, sizeof(*q));
}

void devmem_nic_core_reset(DevmemNicCore *core)
{
    uint32_t i;

    core->int_cause = 0;
    core->int_mask = 0;
    core->rss_ctrl = DMNIC_RSS_CTRL_ENABLE;
    dmnic_rss_fields_write(core, DMNIC_RSS_F_ALL);
    core->default_queue = 0;
    memcpy(core->rss_key, dmnic_default_rss_key, sizeof(core->rss_key));
    dmnic_rss_tables_reset(core);
    core->fs_index = 0;
    memset(core->fs_data, 0, sizeof(core->fs_data));
    memset(core->fs_rules, 0, sizeof(core->fs_rules));
    memset(core->gstats, 0, sizeof(core->gstats));
    core->badq_logged = false;
    bitmap_zero(core->tx_pending, DMNIC_MAX_QUEUES);
    /* frames the cable still holds for us are lost, as a MAC FIFO's */
    qemu_purge_queued_packets(qemu_get_queue(core->nic));
    core->tx_queued = 0;
    devmem_nic_gro_discard(core, -1);
    core->gro_ctrl = 0;
    core->gro_timeout = DMNIC_GRO_TIMEOUT_RESET;
    core->gro_max_age = DMNIC_GRO_MAX_AGE_RESET;
    for (i = 0; i < DMNIC_MAX_QUEUES; i++) {
        dmnic_queue_reset(&core->q[i]);
    }
    devmem_nic_fault_reset(core);
    devmem_nic_psp_reset(&core->psp);
    devmem_nic_mac_reset(core);
    devmem_nic_ptp_reset(core);
    devmem_nic_shaper_reset(core);
    trace_devmem_nic_reset();
}

bool devmem_nic_core_link_up(DevmemNicCore *core)
{
    return !qemu_get_queue(core->nic)->link_down &&
           !devmem_nic_fault_link_down(core);
}

static uint32_t dmnic_link_status(DevmemNicCore *core)
{
    return devmem_nic_core_link_up(core) ? DMNIC_STATUS_LINK_UP : 0;
}

/*
 * The net layer calls this on every set_link, changed or not, and the
 * injector on each of its own changes: only a change of STATUS_LINK_UP
 * (against what the guest was last told) raises INT_LINK.
 */
void devmem_nic_core_link_changed(DevmemNicCore *core)
{
    uint32_t status = dmnic_link_status(core);

    trace_devmem_nic_link(!!status);
    if (!status) {
        /* nothing more goes on or off the cable */
        qemu_purge_queued_packets(qemu_get_queue(core->nic));
        devmem_nic_mac_link_down(core);
    }
    if (status == core->link_status) {
        return;
    }
    core->link_status = status;
    dmnic_admin_event(core, DMNIC_INT_LINK);
}

static uint32_t dmnic_q_status(DmnicQueue *q)
{
    uint32_t v = 0;

    if (!dmnic_rx_running(q)) {
        v |= DMNIC_Q_STATUS_RX_QUIESCED;
    }
    if (!dmnic_tx_running(q)) {
        v |= DMNIC_Q_STATUS_TX_QUIESCED;
    }
    if (q->rx_err) {
        v |= DMNIC_Q_STATUS_RX_ERROR;
    }
    if (q->tx_err) {
        v |= DMNIC_Q_STATUS_TX_ERROR;
    }
    v |= (uint32_t)q->rx_err << DMNIC_Q_STATUS_RX_ERR_SHIFT;
    v |= (uint32_t)q->tx_err << DMNIC_Q_STATUS_TX_ERR_SHIFT;
    return v;
}

static uint32_t dmnic_read_counter(const uint64_t *c, hwaddr off)
{
    uint64_t v = c[off / 8];

    return (off & 4) ? v >> 32 : (uint32_t)v;
}

static bool dmnic_queue_read(DevmemNicCore *core, unsigned qi, hwaddr off,
                             uint32_t *val)
{
    DmnicQueue *q = &core->q[qi];

    if (devmem_nic_ptp_queue_read(core, qi, off, val)) {
        return true;        /* timestamp arrays */
    }
    if (off >= DMNIC_Q_RX_PACKETS &&
        off < DMNIC_Q_RX_PACKETS + DMNIC_QS_NUM * 8) {
        *val = dmnic_read_counter(q->stats, off - DMNIC_Q_RX_PACKETS);
        return true;
    }
    if (off >= DMNIC_Q_TX_LSO_PACKETS &&
        off < DMNIC_Q_TX_LSO_PACKETS + DMNIC_LSO_NUM * 8) {
        *val = dmnic_read_counter(q->lso_stats, off - DMNIC_Q_TX_LSO_PACKETS);
        return true;
    }
    if (off >= DMNIC_Q_HBR && off < DMNIC_Q_HBR + DMNIC_NUM_RINGS * 0x20) {
        DmnicRing *r = &q->ring[(off - DMNIC_Q_HBR) / 0x20];

        switch ((off - DMNIC_Q_HBR) & 0x1f) {
        case DMNIC_RING_BASE_LO:
            *val = r->base;
            return true;
        case DMNIC_RING_BASE_HI:
            *val = r->base >> 32;
            return true;
        case DMNIC_RING_SIZE:
            *val = r->size;
            return true;
        case DMNIC_RING_DRV:
            *val = r->drv;
            return true;
        case DMNIC_RING_DEV:
            *val = r->dev;
            return true;
        }
        return false;
    }
    switch (off) {
    case DMNIC_Q_CTRL:
        *val = q->ctrl;
        return true;
    case DMNIC_Q_STATUS:
        *val = dmnic_q_status(q);
        return true;
    case DMNIC_Q_HDS_THRESH:
        *val = q->hds_thresh;
        return true;
    case DMNIC_Q_INT_CAUSE:
        *val = q->int_cause;
        return true;
    case DMNIC_Q_INT_MASK:
        *val = q->int_mask;
        return true;
    }
    return false;
}

static uint32_t dmnic_err_qmap(DevmemNicCore *core, unsigned first)
{
    uint32_t v = 0;
    unsigned i;

    for (i = 0; i < 32 && first + i < core->num_queues; i++) {
        if (core->q[first + i].rx_err || core->q[first + i].tx_err) {
            v |= 1u << i;
        }
    }
    return v;
}

/*
 * The indirection table entry behind RSS table register @addr, or NULL:
 * REG_RSS_INDIR (context 0) and REG_RSS_CTX_INDIR (contexts 0..7) are
 * entries 0..127, RSS_TBL has all 512 entries of every context.  The
 * memory core passes only 4-byte aligned accesses.
 */
static uint32_t *dmnic_rss_reg(DevmemNicCore *core, hwaddr addr)
{
    hwaddr off;

    if (addr >= DMNIC_REG_RSS_INDIR &&
        addr < DMNIC_REG_RSS_INDIR + DMNIC_RSS_INDIR_SIZE * 4) {
        return &core->rss_tbl[0][(addr - DMNIC_REG_RSS_INDIR) / 4];
    }
    if (addr >= DMNIC_RSS_CTX_BASE &&
        addr < DMNIC_RSS_CTX_TABLE(DMNIC_RSS_NUM_CTX_V11)) {
        off = addr - DMNIC_RSS_CTX_BASE;
        return &core->rss_tbl[off / DMNIC_RSS_CTX_STRIDE]
                             [off % DMNIC_RSS_CTX_STRIDE / 4];
    }
    if (addr >= DMNIC_RSS_TBL_BASE &&
        addr < DMNIC_RSS_TBL_CTX(DMNIC_RSS_NUM_CTX)) {
        off = addr - DMNIC_RSS_TBL_BASE;
        return &core->rss_tbl[off / DMNIC_RSS_TBL_STRIDE]
                             [off % DMNIC_RSS_TBL_STRIDE / 4];
    }
    return NULL;
}

/*
 * The flow rule data word at @addr, or -1 if @addr is not a rule data
 * register (0x618 and 0x61c, between FS_PORTS_MASK and FS_SRC_IP, are
 * undefined)
 */
static int dmnic_fs_word(hwaddr addr)
{
    int w;

    if (addr < DMNIC_REG_FS_CTRL ||
        addr >= DMNIC_REG_FS_CTRL + DMNIC_FS_WORDS * 4) {
        return -1;
    }
    w = (addr - DMNIC_REG_FS_CTRL) / 4;
    return w > DMNIC_FSW_PORTS_MASK && w < DMNIC_FSW_SRC ? -1 : w;
}

uint64_t devmem_nic_core_read(DevmemNicCore *core, hwaddr addr, unsigned size)
{
    uint32_t val = 0;
    bool ok = true;

    if (devmem_nic_psp_read(&core->psp, core->num_queues, addr, &val)) {
        /* PSP registers and counters */
    } else if (devmem_nic_mac_read(core, addr, &val)) {
        /* pause and FEC registers and counters */
    } else if (devmem_nic_ptp_read(core, addr, &val)) {
        /* PTP clock registers */
    } else if (devmem_nic_shaper_read(core, addr, &val)) {
        /* TX shaping registers and counters */
    } else if (addr >= DMNIC_Q_BASE &&
        addr < DMNIC_Q_BASE + core->num_queues * DMNIC_Q_STRIDE) {
        unsigned qi = (addr - DMNIC_Q_BASE) / DMNIC_Q_STRIDE;

        ok = dmnic_queue_read(core, qi, (addr - DMNIC_Q_BASE) % DMNIC_Q_STRIDE,
                              &val);
    } else if (addr >= DMNIC_REG_G_RX_FRAMES &&
               addr < DMNIC_REG_G_RX_FRAMES + DMNIC_GS_NUM * 8) {
        val = dmnic_read_counter(core->gstats, addr - DMNIC_REG_G_RX_FRAMES);
    } else if (addr >= DMNIC_REG_RSS_KEY &&
               addr < DMNIC_REG_RSS_KEY + DMNIC_RSS_KEY_SIZE_MAX) {
        val = ldl_le_p(core->rss_key + (addr - DMNIC_REG_RSS_KEY));
    } else if (dmnic_rss_reg(core, addr)) {
        val = *dmnic_rss_reg(core, addr);
    } else if (addr >= DMNIC_REG_RSS_HFIELDS(1) &&
               addr < DMNIC_REG_RSS_HFIELDS(DMNIC_RSS_NUM_TYPES + 1)) {
        val = core->rss_hfields[(addr - DMNIC_REG_RSS_HFIELDS(1)) / 4];
    } else if (dmnic_fs_word(addr) >= 0) {
        val = core->fs_data[dmnic_fs_word(addr)];
    } else {
        switch (addr) {
        case DMNIC_REG_ID:
            val = DMNIC_ID_MAGIC;
            break;
        case DMNIC_REG_VERSION:
            val = DMNIC_VERSION;
            break;
        case DMNIC_REG_NUM_QUEUES:
            val = core->num_queues;
            break;
        case DMNIC_REG_CAPS:
            val = DMNIC_CAPS_HDS | DMNIC_CAPS_RX_CSUM | DMNIC_CAPS_TX_CSUM |
                  DMNIC_CAPS_RSS | DMNIC_CAPS_FLOW_STEER | DMNIC_CAPS_TSO |
                  DMNIC_CAPS_RSS_CTX | DMNIC_CAPS_RSS_HFIELDS |
                  DMNIC_CAPS_HW_GRO | DMNIC_CAPS_LRO |
                  DMNIC_CAPS_RSS_FLOW_LABEL | DMNIC_CAPS_USO |
                  DMNIC_CAPS_PAUSE | DMNIC_CAPS_FEC | DMNIC_CAPS_PTP |
                  DMNIC_CAPS_TSO_IPXIP | DMNIC_CAPS_SHAPER |
                  DMNIC_CAPS_TSO_TNL | DMNIC_CAPS_RSS_TBL512;
            val |= devmem_nic_psp_available() ? DMNIC_CAPS_PSP : 0;
            break;
        case DMNIC_REG_CTRL:
            val = 0;        /* CTRL_RESET reads 0 */
            break;
        case DMNIC_REG_STATUS:
            val = dmnic_link_status(core);
            break;
        case DMNIC_REG_INT_CAUSE:
            val = core->int_cause;
            break;
        case DMNIC_REG_INT_MASK:
            val = core->int_mask;
            break;
        case DMNIC_REG_MAC_LO:
            val = ldl_le_p(core->mac);
            break;
        case DMNIC_REG_MAC_HI:
            val = lduw_le_p(core->mac + 4);
            break;
        case DMNIC_REG_ERR_QMAP_LO:
            val = dmnic_err_qmap(core, 0);
            break;
        case DMNIC_REG_ERR_QMAP_HI:
            val = dmnic_err_qmap(core, 32);
            break;
        case DMNIC_REG_ERR_QMAP_X:
            val = dmnic_err_qmap(core, 64);
            break;
        case DMNIC_REG_NUM_FS_RULES:
            val = DMNIC_NUM_FS_RULES;
            break;
        case DMNIC_REG_RSS_INDIR_SIZE:
            val = DMNIC_RSS_INDIR_SIZE;
            break;
        case DMNIC_REG_RSS_TBL_SIZE:
            val = DMNIC_RSS_TBL_SIZE;
            break;
        case DMNIC_REG_RSS_KEY_SIZE:
            val = DMNIC_RSS_KEY_SIZE_MAX;
            break;
        case DMNIC_REG_RSS_NUM_CTX:
            val = DMNIC_RSS_NUM_CTX;
            break;
        case DMNIC_REG_GRO_CTRL:
            val = core->gro_ctrl;
            break;
        case DMNIC_REG_GRO_TIMEOUT:
            val = core->gro_timeout;
            break;
        case DMNIC_REG_GRO_MAX_AGE:
            val = core->gro_max_age;
            break;
        case DMNIC_REG_GRO_NUM_CTX:
            val = DMNIC_GRO_NUM_CTX;
            break;
        case DMNIC_REG_GRO_MAX_SEGS:
            val = DMNIC_GRO_MAX_SEGS;
            break;
        case DMNIC_REG_RSS_CTRL:
            val = core->rss_ctrl;
            break;
        case DMNIC_REG_RSS_FIELDS:
            val = dmnic_rss_fields_read(core);
            break;
        case DMNIC_REG_DEFAULT_QUEUE:
            val = core->default_queue;
            break;
        case DMNIC_REG_FS_INDEX:
            val = core->fs_index;
            break;
        default:
            ok = false;
            break;
        }
    }
    if (!ok) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: read of unknown register 0x%" HWADDR_PRIx
                      "\n", addr);
    }
    trace_devmem_nic_mmio_read(addr, size, val);
    return val;
}

static void dmnic_write_ctrl(DevmemNicCore *core, unsigned qi, uint32_t val)
{
    DmnicQueue *q = &core->q[qi];
    uint32_t old = q->ctrl;

    if (!(val & DMNIC_Q_CTRL_RX_ENABLE)) {
        /* held segments are delivered before RX stops (spec: Delivery) */
        devmem_nic_gro_flush(core, qi);
    }
    q->ctrl = val & DMNIC_Q_CTRL_RW;
    if (!(val & DMNIC_Q_CTRL_RX_ENABLE)) {
        q->rx_err = 0;
        devmem_nic_mac_rx_stopped(core, qi);
    } else if (!(old & DMNIC_Q_CTRL_RX_ENABLE)) {
        q->drv_logged &= ~((1u << DMNIC_RING_HBR) | (1u << DMNIC_RING_PBR) |
                           (1u << DMNIC_RING_RXC));
        if (!dmnic_check_rings(core, qi, false)) {
            q->ring[DMNIC_RING_HBR].dev = 0;
            q->ring[DMNIC_RING_PBR].dev = 0;
            q->ring[DMNIC_RING_RXC].dev = 0;
            q->ring[DMNIC_RING_RXC].drv = 0;
            q->rx_gen = true;
        }
        /* payload buffers posted before the enable count */
        q->pbr_posted = q->ring[DMNIC_RING_PBR].drv !=
                        q->ring[DMNIC_RING_PBR].dev;
    }
    if (!(val & DMNIC_Q_CTRL_TX_ENABLE)) {
        q->tx_err = 0;
    } else if (!(old & DMNIC_Q_CTRL_TX_ENABLE)) {
        q->drv_logged &= ~((1u << DMNIC_RING_TXD) | (1u << DMNIC_RING_TXC));
        q->txd_rsvd_logged = false;
        if (!dmnic_check_rings(core, qi, true)) {
            q->ring[DMNIC_RING_TXD].dev = 0;
            q->ring[DMNIC_RING_TXC].dev = 0;
            q->ring[DMNIC_RING_TXC].drv = 0;
            q->tx_gen = true;
            dmnic_tx_schedule(core, qi);
        }
    }
    trace_devmem_nic_queue_ctrl(qi, old, q->ctrl);
}

/*
 * A posting ring's RING_DRV may only add entries, a completion ring's may
 * only return slots the device has filled.  Anything else (a ring filled
 * with size entries or more, an index moved back, completions returned
 * before they were written) is used as written but logged, once per ring
 * until its direction is enabled again.
 */
static void dmnic_check_drv_move(DmnicQueue *q, unsigned qi, int ri,
                                 uint32_t val)
{
    DmnicRing *r = &q->ring[ri];
    uint32_t mask = r->size - 1;
    bool cpl = ri == DMNIC_RING_RXC || ri == DMNIC_RING_TXC;
    bool bad;

    if (cpl) {
        bad = ((val - r->drv) & mask) > ((r->dev - r->drv) & mask);
    } else {
        bad = ((val - r->dev) & mask) < ((r->drv - r->dev) & mask);
    }
    if (!bad || (q->drv_logged & (1u << ri))) {
        return;
    }
    q->drv_logged |= 1u << ri;
    if (cpl) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u %s index moved "
                      "%u -> %u, past the device index %u\n", qi,
                      dmnic_ring_names[ri], r->drv, val, r->dev);
    } else {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u %s index moved "
                      "%u -> %u with the device at %u: fewer entries posted "
                      "(moved back, or size or more added)\n", qi,
                      dmnic_ring_names[ri], r->drv, val, r->dev);
    }
}

static bool dmnic_write_ring(DevmemNicCore *core, unsigned qi, hwaddr off,
                             uint32_t val)
{
    DmnicQueue *q = &core->q[qi];
    int ri = off / 0x20;
    DmnicRing *r = &q->ring[ri];
    bool tx = ri >= DMNIC_RING_TXD;
    bool enabled = q->ctrl & (tx ? DMNIC_Q_CTRL_TX_ENABLE :
                                   DMNIC_Q_CTRL_RX_ENABLE);

    switch (off & 0x1f) {
    case DMNIC_RING_BASE_LO:
    case DMNIC_RING_BASE_HI:
    case DMNIC_RING_SIZE:
        if (enabled) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u %s ring "
                          "configuration written while enabled\n", qi,
                          dmnic_ring_names[ri]);
            return true;
        }
        if ((off & 0x1f) == DMNIC_RING_BASE_LO) {
            r->base = deposit64(r->base, 0, 32, val);
        } else if ((off & 0x1f) == DMNIC_RING_BASE_HI) {
            r->base = deposit64(r->base, 32, 32, val);
        } else {
            r->size = val;
        }
        return true;
    case DMNIC_RING_DRV:
        if (enabled && (tx ? !q->tx_err : !q->rx_err) && val >= r->size) {
            dmnic_queue_error(core, qi, tx, DMNIC_QERR_BAD_INDEX,
                              "%s index %u >= size %u", dmnic_ring_names[ri],
                              val, r->size);
            return true;
        }
        if (enabled && (tx ? !q->tx_err : !q->rx_err)) {
            dmnic_check_drv_move(q, qi, ri, val);
        }
        if (ri == DMNIC_RING_PBR && enabled && val != r->drv) {
            q->pbr_posted = true;
        }
        r->drv = val;
        if (tx && enabled) {
            dmnic_tx_schedule(core, qi);
        }
        if (ri == DMNIC_RING_HBR || ri == DMNIC_RING_PBR) {
            /* XON after an XOFF, or a retry of the held frame */
            devmem_nic_mac_rx_posted(core, true);
        } else if (ri == DMNIC_RING_RXC) {
            devmem_nic_mac_rx_posted(core, false);
        }
        return true;
    }
    return false;
}

static bool dmnic_queue_write(DevmemNicCore *core, unsigned qi, hwaddr off,
                              uint32_t val)
{
    DmnicQueue *q = &core->q[qi];

    if (off >= DMNIC_Q_HBR && off < DMNIC_Q_HBR + DMNIC_NUM_RINGS * 0x20) {
        return dmnic_write_ring(core, qi, off - DMNIC_Q_HBR, val);
    }
    if (devmem_nic_ptp_queue_write(core, qi, off, val, q->ctrl &
                                   (off >= DMNIC_Q_TXTS_LO ?
                                    DMNIC_Q_CTRL_TX_ENABLE :
                                    DMNIC_Q_CTRL_RX_ENABLE))) {
        return true;        /* timestamp arrays */
    }
    switch (off) {
    case DMNIC_Q_CTRL:
        dmnic_write_ctrl(core, qi, val);
        return true;
    case DMNIC_Q_HDS_THRESH:
        if (val > DMNIC_HDS_THRESH_MAX) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: hds-thresh %u too "
                          "big, using %u\n", val, DMNIC_HDS_THRESH_MAX);
            val = DMNIC_HDS_THRESH_MAX;
        }
        q->hds_thresh = val;
        return true;
    case DMNIC_Q_INT_CAUSE:
        q->int_cause &= ~val;
        return true;
    case DMNIC_Q_INT_MASK: {
        uint32_t old = q->int_mask;

        q->int_mask = val & DMNIC_Q_INT_ALL;
        /* only a mask bit cleared over a pending cause sends */
        if (q->int_cause & old & ~q->int_mask) {
            dmnic_notify(core, qi);
        }
        return true;
    }
    }
    return false;
}

/* A valid rule that selects an RSS context must name an existing one. */
static bool dmnic_rule_action_ok(const uint32_t *w)
{
    uint32_t action = w[DMNIC_FSW_ACTION];

    return !(w[DMNIC_FSW_CTRL] & DMNIC_FS_CTRL_VALID) ||
           !(action & DMNIC_FS_ACTION_RSS) ||
           ((action & DMNIC_FS_ACTION_CTX_MASK) >> DMNIC_FS_ACTION_CTX_SHIFT) <
           DMNIC_RSS_NUM_CTX;
}

/* Bits of FS_CTRL and FS_ACTION the spec defines; the others are reserved */
#define DMNIC_FS_CTRL_DEFINED   (DMNIC_FS_CTRL_VALID | DMNIC_FS_CTRL_IPV6 | \
                                 DMNIC_FS_CTRL_L4_MASK)
#define DMNIC_FS_ACTION_DEFINED (DMNIC_FS_ACTION_QUEUE_MASK | \
                                 DMNIC_FS_ACTION_DROP | DMNIC_FS_ACTION_RSS | \
                                 DMNIC_FS_ACTION_CTX_MASK)

/* A valid rule with reserved bits or L4 protocol 3 is written, but logged */
static void dmnic_rule_check_bits(unsigned idx, const uint32_t *w)
{
    uint32_t ctrl = w[DMNIC_FSW_CTRL];
    uint32_t action = w[DMNIC_FSW_ACTION];
    unsigned l4 = (ctrl & DMNIC_FS_CTRL_L4_MASK) >> DMNIC_FS_CTRL_L4_SHIFT;

    if ((ctrl & DMNIC_FS_CTRL_VALID) &&
        ((ctrl & ~DMNIC_FS_CTRL_DEFINED) ||
         (action & ~DMNIC_FS_ACTION_DEFINED) || l4 > DMNIC_FS_L4_UDP)) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: flow rule %u: reserved "
                      "bits or L4 protocol 3 (FS_CTRL 0x%x, FS_ACTION 0x%x): "
                      "reserved bits ignored, L4 protocol 3 never matches\n",
                      idx, ctrl, action);
    }
}

static void dmnic_fs_cmd(DevmemNicCore *core, uint32_t cmd)
{
    uint32_t *rule;

    if (cmd == DMNIC_FS_CMD_CLEAR_ALL) {
        /* does not use FS_INDEX */
        memset(core->fs_rules, 0, sizeof(core->fs_rules));
        return;
    }
    if (cmd != DMNIC_FS_CMD_WRITE && cmd != DMNIC_FS_CMD_READ) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: unknown flow command "
                      "%u\n", cmd);
        return;
    }
    if (core->fs_index >= DMNIC_NUM_FS_RULES) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: flow rule index %u out "
                      "of range\n", core->fs_index);
        return;
    }
    rule = &core->fs_rules[core->fs_index * DMNIC_FS_WORDS];
    switch (cmd) {
    case DMNIC_FS_CMD_WRITE:
        if (!dmnic_rule_action_ok(core->fs_data)) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: flow rule %u: RSS "
                          "context %u out of range, rule not written\n",
                          core->fs_index,
                          (core->fs_data[DMNIC_FSW_ACTION] &
                           DMNIC_FS_ACTION_CTX_MASK) >>
                          DMNIC_FS_ACTION_CTX_SHIFT);
            break;
        }
        dmnic_rule_check_bits(core->fs_index, core->fs_data);
        memcpy(rule, core->fs_data, sizeof(core->fs_data));
        trace_devmem_nic_fs_write(core->fs_index, rule[DMNIC_FSW_CTRL],
                                  rule[DMNIC_FSW_ACTION]);
        break;
    default:
        memcpy(core->fs_data, rule, sizeof(core->fs_data));
        break;
    }
}

void devmem_nic_core_write(DevmemNicCore *core, hwaddr addr, uint64_t val64,
                           unsigned size)
{
    uint32_t val = val64;
    bool qreg = addr >= DMNIC_Q_BASE &&
                addr < DMNIC_Q_BASE + core->num_queues * DMNIC_Q_STRIDE;
    bool ok = true;

    trace_devmem_nic_mmio_write(addr, size, val);
    /* a global register may change steering: log a bad queue again */
    core->badq_logged = core->badq_logged && qreg;
    if (devmem_nic_psp_write(&core->psp, core->num_queues, addr, val)) {
        /* PSP registers */
    } else if (devmem_nic_mac_write(core, addr, val)) {
        /* pause and FEC registers */
    } else if (devmem_nic_ptp_write(core, addr, val)) {
        /* PTP clock registers */
    } else if (devmem_nic_shaper_write(core, addr, val)) {
        /* TX shaping registers */
    } else if (qreg) {
        unsigned qi = (addr - DMNIC_Q_BASE) / DMNIC_Q_STRIDE;

        ok = dmnic_queue_write(core, qi,
                               (addr - DMNIC_Q_BASE) % DMNIC_Q_STRIDE, val);
    } else if (addr >= DMNIC_REG_RSS_KEY &&
               addr < DMNIC_REG_RSS_KEY + DMNIC_RSS_KEY_SIZE_MAX) {
        stl_le_p(core->rss_key + (addr - DMNIC_REG_RSS_KEY), val);
    } else if (dmnic_rss_reg(core, addr)) {
        *dmnic_rss_reg(core, addr) = val & DMNIC_RSS_INDIR_QUEUE_MASK;
    } else if (addr >= DMNIC_REG_RSS_HFIELDS(1) &&
               addr < DMNIC_REG_RSS_HFIELDS(DMNIC_RSS_NUM_TYPES + 1)) {
        dmnic_rss_set_hfields(core, (addr - DMNIC_REG_RSS_HFIELDS(1)) / 4 + 1,
                              val);
    } else if (dmnic_fs_word(addr) >= 0) {
        core->fs_data[dmnic_fs_word(addr)] = val;
    } else {
        switch (addr) {
        case DMNIC_REG_CTRL:
            if (val & DMNIC_CTRL_RESET) {
                devmem_nic_core_reset(core);
            }
            break;
        case DMNIC_REG_INT_CAUSE:
            core->int_cause &= ~val;
            break;
        case DMNIC_REG_INT_MASK: {
            uint32_t old = core->int_mask;

            core->int_mask = val & DMNIC_INT_ALL;
            if (core->int_cause & old & ~core->int_mask) {
                dmnic_notify(core, core->num_queues);
            }
            break;
        }
        case DMNIC_REG_RSS_CTRL:
            core->rss_ctrl = val & DMNIC_RSS_CTRL_RW;
            break;
        case DMNIC_REG_RSS_FIELDS:
            dmnic_rss_fields_write(core, val);
            break;
        case DMNIC_REG_DEFAULT_QUEUE:
            core->default_queue = val & 0xffff;
            break;
        case DMNIC_REG_FS_INDEX:
            core->fs_index = val;
            break;
        case DMNIC_REG_FS_CMD:
            dmnic_fs_cmd(core, val);
            break;
        case DMNIC_REG_GRO_CTRL:
            devmem_nic_gro_write_ctrl(core, val);
            break;
        case DMNIC_REG_GRO_TIMEOUT:
            devmem_nic_gro_write_timeout(core, val);
            break;
        case DMNIC_REG_GRO_MAX_AGE:
            devmem_nic_gro_write_max_age(core, val);
            break;
        default:
            ok = false;
            break;
        }
    }
    if (!ok) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: write to unknown or read-only register 0x%"
                      HWADDR_PRIx "\n", addr);
    }
}

/* ------------------------------------------------------------------ */
/* Lifecycle and migration                                             */
/* ------------------------------------------------------------------ */

void devmem_nic_core_realize(DevmemNicCore *core)
{
    DeviceState *dev = DEVICE(core->owner);

    /* the queue blocks end where the 1.1 RSS context window starts */
    QEMU_BUILD_BUG_ON(DMNIC_QREG(DMNIC_MAX_QUEUES, 0) > DMNIC_RSS_CTX_BASE);
    /* that window: 128 entries of contexts 0..7, below SHAPER_Q */
    QEMU_BUILD_BUG_ON(DMNIC_RSS_CTX_STRIDE != DMNIC_RSS_INDIR_SIZE * 4);
    QEMU_BUILD_BUG_ON(DMNIC_RSS_CTX_TABLE(DMNIC_RSS_NUM_CTX_V11) >
                      DMNIC_SHAPER_Q_BASE);
    /* RSS_TBL: 512 entries of every context, above SHAPER_Q, in BAR0 */
    QEMU_BUILD_BUG_ON(DMNIC_RSS_TBL_STRIDE != DMNIC_RSS_TBL_SIZE * 4);
    QEMU_BUILD_BUG_ON(DMNIC_SHAPER_Q(128) > DMNIC_RSS_TBL_BASE);
    QEMU_BUILD_BUG_ON(DMNIC_RSS_TBL_CTX(DMNIC_RSS_NUM_CTX) >
                      DMNIC_BAR_REGS_SIZE);
    QEMU_BUILD_BUG_ON(DMNIC_RSS_NUM_CTX > 256);     /* FS_ACTION_CTX */
    /* vmstate_devmem_nic_core lists the tables of contexts 0..7 */
    QEMU_BUILD_BUG_ON(DMNIC_MIG_RSS_CTX_V1 != 8);
    QEMU_BUILD_BUG_ON(DMNIC_MAX_QUEUES > 96);   /* three ERR_QMAP words */
    core->tx_buf = g_malloc0(DMNIC_TX_BUF_SIZE);
    core->tx_seg = g_malloc0(DMNIC_TSO_MAX_SEG + 1);
    devmem_nic_psp_realize(&core->psp);
    core->tx_bh = qemu_bh_new_guarded(dmnic_tx_bh, core,
                                      &dev->mem_reentrancy_guard);
    core->vmse = qemu_add_vm_change_state_handler(dmnic_vm_state_change,
                                                  core);
    devmem_nic_gro_realize(core);
    devmem_nic_mac_realize(core);
    devmem_nic_shaper_realize(core);
}

/* After devmem_nic_fault_realize(): what the guest finds at first */
void devmem_nic_core_link_init(DevmemNicCore *core)
{
    core->link_status = dmnic_link_status(core);
}

void devmem_nic_core_unrealize(DevmemNicCore *core)
{
    if (core->vmse) {
        qemu_del_vm_change_state_handler(core->vmse);
        core->vmse = NULL;
    }
    if (core->tx_bh) {
        qemu_bh_delete(core->tx_bh);
        core->tx_bh = NULL;
    }
    g_free(core->tx_buf);
    core->tx_buf = NULL;
    g_free(core->tx_seg);
    core->tx_seg = NULL;
    devmem_nic_gro_unrealize(core);
    devmem_nic_psp_unrealize(&core->psp);
    devmem_nic_mac_unrealize(core);
    devmem_nic_shaper_unrealize(core);
}

static const VMStateDescription vmstate_dmnic_ring = {
    .name = "devmem-nic-ring",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(base, DmnicRing),
        VMSTATE_UINT32(size, DmnicRing),
        VMSTATE_UINT32(drv, DmnicRing),
        VMSTATE_UINT32(dev, DmnicRing),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_dmnic_queue = {
    .name = "devmem-nic-queue",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(ctrl, DmnicQueue),
        VMSTATE_UINT32(hds_thresh, DmnicQueue),
        VMSTATE_UINT32(int_cause, DmnicQueue),
        VMSTATE_UINT32(int_mask, DmnicQueue),
        VMSTATE_UINT8(rx_err, DmnicQueue),
        VMSTATE_UINT8(tx_err, DmnicQueue),
        VMSTATE_BOOL(rx_gen, DmnicQueue),
        VMSTATE_BOOL(tx_gen, DmnicQueue),
        VMSTATE_STRUCT_ARRAY(ring, DmnicQueue, DMNIC_NUM_RINGS, 1,
                             vmstate_dmnic_ring, DmnicRing),
        VMSTATE_UINT64_SUB_ARRAY(stats, DmnicQueue, 0, DMNIC_QS_NUM_V1),
        VMSTATE_END_OF_LIST()
    },
};

/* the GRO counters of a queue (subsection devmem-nic-core/gro) */
static const VMStateDescription vmstate_dmnic_queue_gro = {
    .name = "devmem-nic-queue-gro",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64_SUB_ARRAY(stats, DmnicQueue, DMNIC_QS_NUM_V1,
                                 DMNIC_QS_NUM_GRO),
        VMSTATE_END_OF_LIST()
    },
};

/* the segmentation counters of a queue (subsection devmem-nic-core/lso) */
static const VMStateDescription vmstate_dmnic_queue_lso = {
    .name = "devmem-nic-queue-lso",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64_ARRAY(lso_stats, DmnicQueue, DMNIC_LSO_NUM),
        VMSTATE_END_OF_LIST()
    },
};

/* an incoming stream must not make a running ring inconsistent */
static int dmnic_core_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    unsigned qi, c;
    int i;

    /* only values a register write could have produced */
    for (i = 1; i <= DMNIC_RSS_NUM_TYPES; i++) {
        dmnic_rss_set_hfields(core, i, core->rss_hfields[i - 1]);
    }
    for (c = 0; c < DMNIC_RSS_NUM_CTX; c++) {
        for (i = 0; i < DMNIC_RSS_TBL_SIZE; i++) {
            dmnic_rss_table(core, c)[i] &= DMNIC_RSS_INDIR_QUEUE_MASK;
        }
    }
    core->default_queue &= DMNIC_RSS_INDIR_QUEUE_MASK;
    core->rss_ctrl &= DMNIC_RSS_CTRL_RW;
    core->int_mask &= DMNIC_INT_ALL;
    core->int_cause &= DMNIC_INT_ALL;

    for (qi = 0; qi < DMNIC_MAX_QUEUES; qi++) {
        DmnicQueue *q = &core->q[qi];

        q->ctrl &= DMNIC_Q_CTRL_RW;
        q->int_mask &= DMNIC_Q_INT_ALL;
        q->int_cause &= DMNIC_Q_INT_ALL;
        q->hds_thresh = MIN(q->hds_thresh, DMNIC_HDS_THRESH_MAX);
        /* a ring never posted has both indexes at 0 (spec: Pause) */
        q->pbr_posted = q->ring[DMNIC_RING_PBR].drv ||
                        q->ring[DMNIC_RING_PBR].dev;

        for (i = 0; i < DMNIC_NUM_RINGS; i++) {
            DmnicRing *r = &q->ring[i];
            bool running = i < DMNIC_RING_TXD ? dmnic_rx_running(q) :
                                                dmnic_tx_running(q);

            if (running && (qi >= core->num_queues || !dmnic_ring_valid(r) ||
                            r->drv >= r->size || r->dev >= r->size)) {
                return -EINVAL;
            }
        }
    }
    /*
     * The link as restored (set_link and x-fault-link-down from the
     * stream, the flapper's state stays behind): if it is not what the
     * guest was last told, tell it, once the VM runs.
     */
    if (dmnic_link_status(core) != core->link_status) {
        core->link_status = dmnic_link_status(core);
        core->int_cause |= DMNIC_INT_LINK;
    }
    /*
     * INT_LINK pending (raised here, or on a source that had not run since
     * its own incoming migration): the MSI-X once the VM runs.  One the
     * guest already had is harmless: it reads the cause and the status.
     */
    core->link_irq_pending = core->int_cause & DMNIC_INT_LINK;
    trace_devmem_nic_link(!!core->link_status);

    /* TX posted on the source but not yet processed: run it here */
    core->tx_queued = 0;
    bitmap_zero(core->tx_pending, DMNIC_MAX_QUEUES);
    for (qi = 0; qi < core->num_queues; qi++) {
        if (dmnic_tx_running(&core->q[qi])) {
            dmnic_tx_schedule(core, qi);
        }
    }
    return 0;
}

static int dmnic_core_pre_save(void *opaque)
{
    DevmemNicCore *core = opaque;
    unsigned qi;

    core->mig_link_down = 0;
    if (qemu_get_queue(core->nic)->link_down) {
        core->mig_link_down |= DMNIC_LINK_DOWN_NET;
    }
    if (core->fault.link_down) {
        core->mig_link_down |= DMNIC_LINK_DOWN_FAULT;
    }
    for (qi = 0; qi < DMNIC_MAX_QUEUES; qi++) {
        core->mig_held_lost[qi] = devmem_nic_fault_held(core, qi) +
                                  devmem_nic_mac_rx_held_on(core, qi);
    }
    return 0;
}

static int dmnic_core_pre_load(void *opaque)
{
    DevmemNicCore *core = opaque;

    /* a stream without the link subsection had the link up */
    core->link_status = DMNIC_STATUS_LINK_UP;
    memset(core->mig_held_lost, 0, sizeof(core->mig_held_lost));
    return 0;
}

static bool dmnic_link_needed(void *opaque)
{
    DevmemNicCore *core = opaque;

    return core->mig_link_down || core->link_status != DMNIC_STATUS_LINK_UP;
}

/* The net layer does not migrate link_down: restore it as igb does */
static int dmnic_link_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;

    core->link_status &= DMNIC_STATUS_LINK_UP;
    qemu_get_queue(core->nic)->link_down =
        !!(core->mig_link_down & DMNIC_LINK_DOWN_NET);
    core->fault.link_down = !!(core->mig_link_down & DMNIC_LINK_DOWN_FAULT);
    return 0;
}

static const VMStateDescription vmstate_dmnic_link = {
    .name = "devmem-nic-core/link",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_link_needed,
    .post_load = dmnic_link_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(link_status, DevmemNicCore),
        VMSTATE_UINT32(mig_link_down, DevmemNicCore),
        VMSTATE_END_OF_LIST()
    },
};

static bool dmnic_held_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    unsigned qi;

    for (qi = 0; qi < DMNIC_MAX_QUEUES; qi++) {
        if (core->mig_held_lost[qi]) {
            return true;
        }
    }
    return false;
}

/* RX frames a delay knob held on the source are lost: count them */
static int dmnic_held_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    unsigned qi;

    for (qi = 0; qi < core->num_queues; qi++) {
        core->q[qi].stats[DMNIC_QS_RX_DROP_NOBUF] += core->mig_held_lost[qi];
    }
    memset(core->mig_held_lost, 0, sizeof(core->mig_held_lost));
    return 0;
}

static bool dmnic_gro_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    unsigned qi;

    if (core->gro_ctrl || core->gro_timeout != DMNIC_GRO_TIMEOUT_RESET ||
        core->gro_max_age != DMNIC_GRO_MAX_AGE_RESET) {
        return true;
    }
    for (qi = 0; qi < core->num_queues; qi++) {
        if (core->q[qi].stats[DMNIC_QS_RX_GRO_PACKETS]) {
            return true;
        }
    }
    return false;
}

static int dmnic_gro_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;

    /* only values a register write could have produced */
    core->gro_ctrl &= DMNIC_GRO_CTRL_HW | DMNIC_GRO_CTRL_LRO;
    core->gro_timeout = MAX(MIN(core->gro_timeout, DMNIC_GRO_TIMEOUT_MAX),
                            DMNIC_GRO_TIMEOUT_MIN);
    core->gro_max_age = MAX(MIN(core->gro_max_age, DMNIC_GRO_MAX_AGE_MAX),
                            DMNIC_GRO_MAX_AGE_MIN);
    return 0;
}

/* GRO registers and counters; the contexts were delivered at VM stop */
static const VMStateDescription vmstate_dmnic_gro = {
    .name = "devmem-nic-core/gro",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_gro_needed,
    .post_load = dmnic_gro_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(gro_ctrl, DevmemNicCore),
        VMSTATE_UINT32(gro_timeout, DevmemNicCore),
        VMSTATE_UINT32(gro_max_age, DevmemNicCore),
        VMSTATE_STRUCT_SUB_ARRAY(q, DevmemNicCore, 0, DMNIC_MIG_QUEUES_V1, 1,
                                 vmstate_dmnic_queue_gro, DmnicQueue),
        VMSTATE_END_OF_LIST()
    },
};

/* 1.3: sent once a queue segmented something */
static bool dmnic_lso_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    unsigned qi;

    for (qi = 0; qi < core->num_queues; qi++) {
        if (core->q[qi].lso_stats[DMNIC_LSO_PACKETS]) {
            return true;
        }
    }
    return false;
}

static const VMStateDescription vmstate_dmnic_lso = {
    .name = "devmem-nic-core/lso",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_lso_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_SUB_ARRAY(q, DevmemNicCore, 0, DMNIC_MIG_QUEUES_V1, 1,
                                 vmstate_dmnic_queue_lso, DmnicQueue),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_dmnic_held = {
    .name = "devmem-nic-core/held",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_held_needed,
    .post_load = dmnic_held_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_SUB_ARRAY(mig_held_lost, DevmemNicCore, 0,
                                 DMNIC_MIG_QUEUES_V1),
        VMSTATE_END_OF_LIST()
    },
};

/* 1.2: key bytes 40..51, sent only when they differ from reset */
static bool dmnic_rss_key_ext_needed(void *opaque)
{
    DevmemNicCore *core = opaque;

    return memcmp(core->rss_key + DMNIC_RSS_KEY_SIZE,
                  dmnic_default_rss_key + DMNIC_RSS_KEY_SIZE,
                  DMNIC_RSS_KEY_SIZE_MAX - DMNIC_RSS_KEY_SIZE) != 0;
}

static const VMStateDescription vmstate_dmnic_rss_key_ext = {
    .name = "devmem-nic-core/rss-key-ext",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_rss_key_ext_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_SUB_ARRAY(rss_key, DevmemNicCore, DMNIC_RSS_KEY_SIZE,
                                DMNIC_RSS_KEY_SIZE_MAX - DMNIC_RSS_KEY_SIZE),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * 1.3: queue pairs 64..71, sent when the device has them (num_queues must
 * match): all their state of the sections and subsections above, which
 * hold queue pairs 0..63 as devices before had
 */
static bool dmnic_queues_hi_needed(void *opaque)
{
    DevmemNicCore *core = opaque;

    return core->num_queues > DMNIC_MIG_QUEUES_V1;
}

static int dmnic_queues_hi_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    unsigned qi;

    /* as dmnic_held_post_load() and the PTP post_load do for the others */
    for (qi = DMNIC_MIG_QUEUES_V1; qi < DMNIC_MAX_QUEUES; qi++) {
        if (qi < core->num_queues) {
            core->q[qi].stats[DMNIC_QS_RX_DROP_NOBUF] +=
                core->mig_held_lost[qi];
        }
        core->mig_held_lost[qi] = 0;
        core->ptp.rxts[qi] &= ~(uint64_t)(DMNIC_PTP_TS_SIZE - 1);
        core->ptp.txts[qi] &= ~(uint64_t)(DMNIC_PTP_TS_SIZE - 1);
    }
    return 0;
}

static const VMStateDescription vmstate_dmnic_queues_hi = {
    .name = "devmem-nic-core/queues-hi",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_queues_hi_needed,
    .post_load = dmnic_queues_hi_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_SUB_ARRAY(q, DevmemNicCore, DMNIC_MIG_QUEUES_V1,
                                 DMNIC_MIG_QUEUES_HI, 1, vmstate_dmnic_queue,
                                 DmnicQueue),
        VMSTATE_STRUCT_SUB_ARRAY(q, DevmemNicCore, DMNIC_MIG_QUEUES_V1,
                                 DMNIC_MIG_QUEUES_HI, 1,
                                 vmstate_dmnic_queue_gro, DmnicQueue),
        VMSTATE_STRUCT_SUB_ARRAY(q, DevmemNicCore, DMNIC_MIG_QUEUES_V1,
                                 DMNIC_MIG_QUEUES_HI, 1,
                                 vmstate_dmnic_queue_lso, DmnicQueue),
        VMSTATE_UINT32_SUB_ARRAY(mig_held_lost, DevmemNicCore,
                                 DMNIC_MIG_QUEUES_V1, DMNIC_MIG_QUEUES_HI),
        VMSTATE_UINT64_SUB_ARRAY(psp.qstats[DMNIC_MIG_QUEUES_V1],
                                 DevmemNicCore, 0,
                                 DMNIC_MIG_QUEUES_HI * DMNIC_PSP_QS_NUM),
        VMSTATE_UINT64_SUB_ARRAY(ptp.rxts, DevmemNicCore, DMNIC_MIG_QUEUES_V1,
                                 DMNIC_MIG_QUEUES_HI),
        VMSTATE_UINT64_SUB_ARRAY(ptp.txts, DevmemNicCore, DMNIC_MIG_QUEUES_V1,
                                 DMNIC_MIG_QUEUES_HI),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * Entries 0..127 of context c's table: what the sections of the streams
 * before CAPS_RSS_TBL512 held (REG_RSS_INDIR, then REG_RSS_CTX_INDIR of
 * contexts 1..7 as one 2D array: the same bytes as 7 fields)
 */
#define DMNIC_VMSTATE_RSS_TBL_V11(c)                                      \
    VMSTATE_UINT32_SUB_ARRAY(rss_tbl[c], DevmemNicCore, 0,                \
                             DMNIC_RSS_INDIR_SIZE)

/* Entries 128..511 of context c's table (c < DMNIC_MIG_RSS_CTX_V1) */
#define DMNIC_VMSTATE_RSS_TBL_HI(c)                                       \
    VMSTATE_UINT32_SUB_ARRAY(rss_tbl[c], DevmemNicCore,                   \
                             DMNIC_RSS_INDIR_SIZE,                        \
                             DMNIC_RSS_TBL_SIZE - DMNIC_RSS_INDIR_SIZE)

/*
 * CAPS_RSS_TBL512: what the sections above do not hold (entries 128..511
 * of contexts 0..7, contexts 8..32) and RSS_CTRL_TBL512, sent when TBL512
 * is set or one of those entries differs from reset.  A destination
 * without the subsection refuses the stream instead of dropping TBL512.
 */
static bool dmnic_rss_tbl512_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    unsigned c, i;

    if (core->rss_ctrl & DMNIC_RSS_CTRL_TBL512) {
        return true;
    }
    for (c = 0; c < DMNIC_RSS_NUM_CTX; c++) {
        i = c < DMNIC_MIG_RSS_CTX_V1 ? DMNIC_RSS_INDIR_SIZE : 0;
        for (; i < DMNIC_RSS_TBL_SIZE; i++) {
            if (dmnic_rss_table(core, c)[i] != i % core->num_queues) {
                return true;
            }
        }
    }
    return false;
}

static const VMStateDescription vmstate_dmnic_rss_tbl512 = {
    .name = "devmem-nic-core/rss-tbl512",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_rss_tbl512_needed,
    .fields = (const VMStateField[]) {
        DMNIC_VMSTATE_RSS_TBL_HI(0),
        DMNIC_VMSTATE_RSS_TBL_HI(1),
        DMNIC_VMSTATE_RSS_TBL_HI(2),
        DMNIC_VMSTATE_RSS_TBL_HI(3),
        DMNIC_VMSTATE_RSS_TBL_HI(4),
        DMNIC_VMSTATE_RSS_TBL_HI(5),
        DMNIC_VMSTATE_RSS_TBL_HI(6),
        DMNIC_VMSTATE_RSS_TBL_HI(7),
        /* contexts 8..32, whole tables, contiguous */
        VMSTATE_UINT32_SUB_ARRAY(rss_tbl[DMNIC_MIG_RSS_CTX_V1],
                                 DevmemNicCore, 0,
                                 (DMNIC_RSS_NUM_CTX - DMNIC_MIG_RSS_CTX_V1) *
                                 DMNIC_RSS_TBL_SIZE),
        VMSTATE_END_OF_LIST()
    },
};

const VMStateDescription vmstate_devmem_nic_core = {
    .name = "devmem-nic-core",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = dmnic_core_pre_save,
    .pre_load = dmnic_core_pre_load,
    .post_load = dmnic_core_post_load,
    .fields = (const VMStateField[]) {
        /* the destination must have as many queue pairs */
        VMSTATE_UINT32_EQUAL(num_queues, DevmemNicCore, NULL),
        VMSTATE_UINT32(int_cause, DevmemNicCore),
        VMSTATE_UINT32(int_mask, DevmemNicCore),
        VMSTATE_UINT32(rss_ctrl, DevmemNicCore),
        VMSTATE_UINT32(default_queue, DevmemNicCore),
        VMSTATE_UINT8_SUB_ARRAY(rss_key, DevmemNicCore, 0, DMNIC_RSS_KEY_SIZE),
        DMNIC_VMSTATE_RSS_TBL_V11(0),
        VMSTATE_UINT32_ARRAY(rss_hfields, DevmemNicCore, DMNIC_RSS_NUM_TYPES),
        DMNIC_VMSTATE_RSS_TBL_V11(1),
        DMNIC_VMSTATE_RSS_TBL_V11(2),
        DMNIC_VMSTATE_RSS_TBL_V11(3),
        DMNIC_VMSTATE_RSS_TBL_V11(4),
        DMNIC_VMSTATE_RSS_TBL_V11(5),
        DMNIC_VMSTATE_RSS_TBL_V11(6),
        DMNIC_VMSTATE_RSS_TBL_V11(7),
        VMSTATE_UINT32(fs_index, DevmemNicCore),
        VMSTATE_UINT32_ARRAY(fs_data, DevmemNicCore, DMNIC_FS_WORDS),
        VMSTATE_UINT32_ARRAY(fs_rules, DevmemNicCore,
                             DMNIC_NUM_FS_RULES * DMNIC_FS_WORDS),
        VMSTATE_UINT64_ARRAY(gstats, DevmemNicCore, DMNIC_GS_NUM),
        VMSTATE_STRUCT_SUB_ARRAY(q, DevmemNicCore, 0, DMNIC_MIG_QUEUES_V1, 1,
                                 vmstate_dmnic_queue, DmnicQueue),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_dmnic_link,
        &vmstate_dmnic_held,
        &vmstate_dmnic_gro,
        &vmstate_devmem_nic_psp,
        &vmstate_dmnic_rss_key_ext,
        &vmstate_dmnic_lso,
        &vmstate_devmem_nic_mac,
        &vmstate_devmem_nic_ptp,
        &vmstate_devmem_nic_shaper,
        &vmstate_dmnic_queues_hi,
        &vmstate_dmnic_rss_tbl512,
        NULL
    },
};
