/*
 * devmem-nic hardware GRO and LRO: per-queue coalescing contexts that
 * follow the rules of Linux software GRO (net/core/gro.c,
 * inet_gro_receive(), ipv6_gro_receive(), tcp_gro_receive()).
 * See docs/specs/devmem-nic.rst, "Hardware GRO and LRO".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "hw/pci/pci_device.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "devmem-nic-core.h"
#include "devmem-nic-regs.h"
#include "trace.h"

/* headers of the first segment plus the largest merged payload */
#define DMNIC_GRO_BUF_SIZE      (DMNIC_GRO_HDR_MAX + 65536)
/*
 * A context's buffer holds its first frame; the first merge makes it the
 * full size (one copy of the first frame, not one per doubling).  Full
 * buffers stay with their context while the device holds less than
 * DMNIC_GRO_MEM_KEEP bytes, so a stream does not allocate per packet;
 * smaller ones go when their context ends (dmnic_gro_trim()).
 */
#define DMNIC_GRO_BUF_MIN       2048
#define DMNIC_GRO_MEM_KEEP      (16 * 1024 * 1024)
/* segment data the device holds across all contexts (spec) */
#define DMNIC_GRO_MEM_MAX       (64 * 1024 * 1024)
#define DMNIC_GRO_HDR_MAX       1024
/*
 * Direct placement: a segment with at least this much payload goes straight
 * to the payload buffers; smaller ones are gathered in the context's buffer
 * and written a whole payload buffer at a time (one DMA per buffer)
 */
#define DMNIC_GRO_DIRECT_MIN    2048
#define DMNIC_GRO_IP_MAX        65535
#define DMNIC_GRO_PAD_FRAME     60      /* ETH_ZLEN: padding allowed */
#define DMNIC_GRO_MAX_EXT       8
#define DMNIC_IPPROTO_IPIP      4
#define DMNIC_IPPROTO_IPV6      41
/* TCP header bytes 12..15 as one big-endian word (Linux tcp_flag_word) */
#define DMNIC_TCPW_FIN          0x00010000u
#define DMNIC_TCPW_SYN          0x00020000u
#define DMNIC_TCPW_RST          0x00040000u
#define DMNIC_TCPW_PSH          0x00080000u
#define DMNIC_TCPW_URG          0x00200000u
#define DMNIC_TCPW_WINDOW       0x0000ffffu
#define DMNIC_IP_DF             0x4000u

/* A candidate frame, parsed (spec: Candidates) */
typedef struct DmnicGroSeg {
    const uint8_t *buf;
    size_t size;            /* frame length as received */
    size_t end;             /* end of the outermost datagram */
    size_t l2_len;
    unsigned nip;
    DmnicGroIp ip[2];
    size_t l4_off;
    size_t hdr_len;
    uint32_t len;           /* TCP payload */
    uint32_t seq;
    uint32_t word;          /* TCP bytes 12..15 */
    bool flush;             /* not merged, ends its flow's packet, final */
} DmnicGroSeg;

static bool dmnic_gro_enabled(DevmemNicCore *core)
{
    return core->gro_ctrl & (DMNIC_GRO_CTRL_HW | DMNIC_GRO_CTRL_LRO);
}

static bool dmnic_gro_lro(DevmemNicCore *core)
{
    return !(core->gro_ctrl & DMNIC_GRO_CTRL_HW);
}

static DmnicGroCtx *dmnic_gro_ctx(DevmemNicCore *core, unsigned qi,
                                  int i)
{
    return &core->gro[qi * DMNIC_GRO_NUM_CTX + i];
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

/*
 * One IP header of version @ver (as the EtherType or the protocol before
 * it says: Linux dispatches by those) at @off, datagram within [off,
 * @limit); @exact: it must end at @limit (an encapsulated header).
 * Returns the protocol that follows, or -1 if the frame is no candidate;
 * *@flush: an IPv4 header with the reserved flag (Linux
 * inet_gro_receive() flushes on it).
 */
static int dmnic_gro_parse_ip(const uint8_t *buf, size_t off, size_t limit,
                              int ver, bool exact, DmnicGroIp *ip,
                              size_t *dend, bool *flush)
{
    if (ver == 4 && off + sizeof(struct ip_header) <= limit &&
        buf[off] == 0x45) {
        size_t tot = lduw_be_p(buf + off + 2);

        if (tot < sizeof(struct ip_header) || off + tot > limit ||
            (exact && off + tot != limit) ||
            (lduw_be_p(buf + off + 6) & 0x3fff) ||
            net_raw_checksum((uint8_t *)buf + off, sizeof(struct ip_header))) {
            return -1;
        }
        *flush |= lduw_be_p(buf + off + 6) & 0x8000;
        ip->off = off;
        ip->hlen = sizeof(struct ip_header);
        ip->ver = 4;
        *dend = off + tot;
        return buf[off + 9];
    }
    if (ver == 6 && off + sizeof(struct ip6_header) <= limit &&
        (buf[off] >> 4) == 6) {
        size_t end = off + sizeof(struct ip6_header) +
                     lduw_be_p(buf + off + 4);
        size_t pos = off + sizeof(struct ip6_header);
        uint8_t nh = buf[off + 6];
        int n;

        if (end > limit || (exact && end != limit)) {
            return -1;
        }
        for (n = 0; nh == IP6_HOP_BY_HOP || nh == IP6_ROUTING ||
                    nh == IP6_DESTINATON; n++) {
            if (n == DMNIC_GRO_MAX_EXT || pos + 2 > end) {
                return -1;
            }
            nh = buf[pos];
            pos += (buf[pos + 1] + 1) * IP6_EXT_GRANULARITY;
            if (pos > end) {
                return -1;
            }
        }
        ip->off = off;
        ip->hlen = pos - off;
        ip->ver = 6;
        *dend = end;
        return nh;
    }
    return -1;
}

static bool dmnic_gro_tcp_csum_ok(const DmnicGroSeg *s, const DmnicGroIp *ip,
                                  size_t dend)
{
    const uint8_t *iph = s->buf + ip->off;
    uint32_t tlen = dend - s->l4_off;
    uint32_t sum;

    if (ip->ver == 4) {
        sum = net_checksum_add(8, (uint8_t *)iph + 12);
    } else {
        sum = net_checksum_add(32, (uint8_t *)iph + 8);
    }
    sum += IP_PROTO_TCP + (tlen >> 16) + (tlen & 0xffff);
    sum += net_checksum_add(tlen, (uint8_t *)s->buf + s->l4_off);
    return net_checksum_finish(sum) == 0;
}

/*
 * @pflags: the core parser's completion flags for the frame: its TCP
 * checksum result, when it saw the TCP header (not encapsulated)
 */
static bool dmnic_gro_parse(DmnicGroSeg *s, const uint8_t *buf, size_t size,
                            uint32_t pflags)
{
    size_t off = ETH_HLEN, limit = size, dend = 0;
    uint16_t et;
    int proto = -1;
    size_t doff;

    memset(s, 0, sizeof(*s));
    s->buf = buf;
    s->size = size;
    et = lduw_be_p(buf + 12);
    /* no VLAN tags (spec): the driver finds the IP header at 14 */
    if (et != ETH_P_IP && et != ETH_P_IPV6) {
        return false;
    }
    s->l2_len = off;
    for (s->nip = 0; s->nip < 2; s->nip++) {
        int ver = s->nip ? (proto == DMNIC_IPPROTO_IPIP ? 4 : 6) :
                  (et == ETH_P_IP ? 4 : 6);

        proto = dmnic_gro_parse_ip(buf, off, limit, ver, s->nip > 0,
                                   &s->ip[s->nip], &dend, &s->flush);
        if (proto < 0) {
            return false;
        }
        if (!s->nip) {
            /* bytes after the datagram: only Ethernet padding */
            if (dend != size && size > DMNIC_GRO_PAD_FRAME) {
                return false;
            }
            s->end = dend;
        }
        off = s->ip[s->nip].off + s->ip[s->nip].hlen;
        limit = dend;
        if (proto != DMNIC_IPPROTO_IPIP && proto != DMNIC_IPPROTO_IPV6) {
            s->nip++;
            break;
        }
        if (s->nip == 1) {
            return false;       /* a second encapsulation */
        }
    }
    if (proto != IP_PROTO_TCP || off + sizeof(tcp_header) > dend) {
        return false;
    }
    s->l4_off = off;
    doff = (buf[off + 12] >> 4) * 4;
    if (doff < sizeof(tcp_header) || off + doff > dend ||
        off + doff > DMNIC_GRO_HDR_MAX) {
        return false;
    }
    s->hdr_len = off + doff;
    s->len = dend - s->hdr_len;
    s->seq = ldl_be_p(buf + off + 4);
    s->word = ldl_be_p(buf + off + 12);
    if (s->nip == 1 && (pflags & DMNIC_RXC_F_TCP)) {
        return pflags & DMNIC_RXC_F_L4_CSUM_OK;
    }
    return dmnic_gro_tcp_csum_ok(s, &s->ip[s->nip - 1], dend);
}

/* ------------------------------------------------------------------ */
/* Flows and merge rules                                               */
/* ------------------------------------------------------------------ */

/* Linux gro_list_prepare(), inet/ipv6_gro_receive(), tcp_gro_lookup() */
static bool dmnic_gro_same_flow(const DmnicGroCtx *c, const DmnicGroSeg *s)
{
    const uint8_t *b1 = c->buf;
    unsigned i;

    if (c->nip != s->nip || c->l4_off != s->l4_off ||
        memcmp(b1, s->buf, s->ip[0].off)) {
        return false;
    }
    for (i = 0; i < s->nip; i++) {
        const uint8_t *h1 = b1 + c->ip[i].off, *h = s->buf + s->ip[i].off;

        if (c->ip[i].ver != s->ip[i].ver || c->ip[i].off != s->ip[i].off) {
            return false;
        }
        if (s->ip[i].ver == 4) {
            if (h[9] != h1[9] || memcmp(h + 12, h1 + 12, 8)) {
                return false;
            }
        } else if (((ldl_be_p(h) ^ ldl_be_p(h1)) & 0xf00fffffu) ||
                   h[6] != h1[6] || memcmp(h + 8, h1 + 8, 32) ||
                   c->ip[i].hlen != s->ip[i].hlen ||
                   memcmp(h + 40, h1 + 40, s->ip[i].hlen - 40)) {
            return false;
        }
    }
    return !memcmp(b1 + c->l4_off, s->buf + s->l4_off, 4);
}

/* Linux inet_gro_flush() / ipv6_gro_flush(): nonzero = not merged */
static bool dmnic_gro_ip_flush(DmnicGroCtx *c, const DmnicGroSeg *s,
                               unsigned i)
{
    const uint8_t *h1 = c->buf + c->ip[i].off, *h = s->buf + s->ip[i].off;

    if (s->ip[i].ver == 4) {
        uint16_t d = lduw_be_p(h + 4) - lduw_be_p(h1 + 4);

        if (h[8] != h1[8] || h[1] != h1[1] ||
            ((lduw_be_p(h + 6) ^ lduw_be_p(h1 + 6)) & DMNIC_IP_DF)) {
            return true;
        }
        if (c->nsegs == 1 && !d) {
            c->fixedid |= 1u << i;
        }
        return d != ((c->fixedid & (1u << i)) ? 0 : (uint16_t)c->nsegs);
    }
    return ((ldl_be_p(h) ^ ldl_be_p(h1)) & 0x0ff00000u) || h[7] != h1[7];
}

/* Linux tcp_gro_receive(), before skb_gro_receive(): true = not merged */
static const char *dmnic_gro_flush_reason(DevmemNicCore *core, DmnicGroCtx *c,
                                          const DmnicGroSeg *s)
{
    const uint8_t *th1 = c->buf + c->l4_off, *th = s->buf + s->l4_off;
    uint32_t ign = DMNIC_TCPW_FIN | DMNIC_TCPW_PSH;
    bool lro = dmnic_gro_lro(core);
    size_t doff = s->hdr_len - s->l4_off;
    unsigned i;
    bool ipf = false;

    if (lro) {
        ign |= DMNIC_TCPW_WINDOW;
    }
    if ((s->word ^ ldl_be_p(th1 + 12)) & ~ign) {
        return "flags";
    }
    if (!lro && ldl_be_p(th + 8) != ldl_be_p(th1 + 8)) {
        return "ack";
    }
    if (memcmp(th + sizeof(tcp_header), th1 + sizeof(tcp_header),
               doff - sizeof(tcp_header))) {
        return "options";
    }
    /* both headers are looked at: the fixed-ID state is set by each */
    for (i = 0; i < s->nip; i++) {
        ipf |= dmnic_gro_ip_flush(c, s, i);
    }
    if (ipf) {
        return "ip";
    }
    if (!s->len || s->len > c->mss) {
        return "length";
    }
    if (s->seq != ldl_be_p(th1 + 4) + c->pay_len) {
        return "seq";
    }
    if ((size_t)c->hdr_len - c->ip[0].off + c->pay_len + s->len >
        DMNIC_GRO_IP_MAX) {
        return "size";
    }
    if (c->nsegs >= DMNIC_GRO_MAX_SEGS) {
        return "segments";
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Contexts                                                            */
/* ------------------------------------------------------------------ */

static DmnicGroQueue *dmnic_gro_q(DevmemNicCore *core, unsigned qi)
{
    return &core->gro_q[qi];
}

/* Empty hash chains and open order; every context on the free list */
static void dmnic_gro_q_init(DevmemNicCore *core, unsigned qi)
{
    DmnicGroQueue *gq = dmnic_gro_q(core, qi);
    unsigned i;

    for (i = 0; i < DMNIC_GRO_HASH; i++) {
        gq->bucket[i] = -1;
    }
    gq->lru_head = gq->lru_tail = -1;
    gq->free = 0;
    gq->direct = -1;
    for (i = 0; i < DMNIC_GRO_NUM_CTX; i++) {
        DmnicGroCtx *c = dmnic_gro_ctx(core, qi, i);

        c->used = false;
        c->hnext = i + 1 < DMNIC_GRO_NUM_CTX ? i + 1 : -1;
    }
}

static uint32_t dmnic_gro_hash(const DmnicGroSeg *s)
{
    uint32_t h = 2166136261u;
    unsigned i, j;

#define DMNIC_FNV(b) (h = (h ^ (b)) * 16777619u)
    for (i = 0; i < s->nip; i++) {
        const uint8_t *ip = s->buf + s->ip[i].off;

        if (s->ip[i].ver == 4) {
            DMNIC_FNV(ip[9]);
            for (j = 12; j < 20; j++) {
                DMNIC_FNV(ip[j]);
            }
        } else {
            DMNIC_FNV(ip[1] & 0x0f);
            DMNIC_FNV(ip[2]);
            DMNIC_FNV(ip[3]);
            for (j = 8; j < 40; j++) {
                DMNIC_FNV(ip[j]);
            }
        }
    }
    for (j = 0; j < 4; j++) {
        DMNIC_FNV(s->buf[s->l4_off + j]);
    }
#undef DMNIC_FNV
    return h;
}

/* Reserve @need bytes of buffer for @c within the device's memory */
static bool dmnic_gro_reserve(DevmemNicCore *core, DmnicGroCtx *c,
                              size_t need)
{
    size_t cap;

    if (need <= c->cap) {
        return true;
    }
    cap = c->cap ? DMNIC_GRO_BUF_SIZE : MAX(need, DMNIC_GRO_BUF_MIN);
    if (need > cap || core->gro_mem + cap - c->cap > DMNIC_GRO_MEM_MAX) {
        return false;
    }
    c->buf = g_realloc(c->buf, cap);
    core->gro_mem += cap - c->cap;
    c->cap = cap;
    return true;
}

/*
 * When a context ends its buffer goes back, unless it is a full one and
 * the device holds at most DMNIC_GRO_MEM_KEEP: only full buffers stay
 * with free contexts, so what they pin stays under DMNIC_GRO_MEM_KEEP and
 * the rest of DMNIC_GRO_MEM_MAX is there for the flows of any burst
 */
static void dmnic_gro_trim(DevmemNicCore *core, DmnicGroCtx *c)
{
    if (c->cap && (c->cap < DMNIC_GRO_BUF_SIZE ||
                   core->gro_mem > DMNIC_GRO_MEM_KEEP)) {
        core->gro_mem -= c->cap;
        g_free(c->buf);
        c->buf = NULL;
        c->cap = 0;
    }
}

/* Take context @idx off its hash chain and the open order: free */
static void dmnic_gro_unlink(DevmemNicCore *core, unsigned qi, int idx)
{
    DmnicGroQueue *gq = dmnic_gro_q(core, qi);
    DmnicGroCtx *c = dmnic_gro_ctx(core, qi, idx);
    int32_t *pp = &gq->bucket[c->hash % DMNIC_GRO_HASH];
    unsigned n;

    for (n = 0; n < DMNIC_GRO_NUM_CTX && *pp >= 0; n++) {
        if (*pp == idx) {
            *pp = c->hnext;
            break;
        }
        pp = &dmnic_gro_ctx(core, qi, *pp)->hnext;
    }
    if (c->lprev >= 0) {
        dmnic_gro_ctx(core, qi, c->lprev)->lnext = c->lnext;
    } else {
        gq->lru_head = c->lnext;
    }
    if (c->lnext >= 0) {
        dmnic_gro_ctx(core, qi, c->lnext)->lprev = c->lprev;
    } else {
        gq->lru_tail = c->lprev;
    }
    if (gq->direct == idx) {
        gq->direct = -1;
    }
    c->used = false;
    c->hnext = gq->free;
    gq->free = idx;
}

/*
 * Direct placement (spec: Delivery): one context of a queue at a time, the
 * direct one, writes its payload into the posted payload buffers at the
 * head of PBR, where a split delivery leaves it: payload bytes [0,
 * cur.placed) are there, the rest in its buffer.  Only a context whose
 * first segment is split as it stands (the queue's HDS settings, no
 * tunnel, no padding) starts so.
 */
static bool dmnic_gro_can_place(DevmemNicCore *core, unsigned qi,
                                const DmnicGroSeg *s)
{
    DmnicQueue *q = &core->q[qi];

    return dmnic_gro_q(core, qi)->direct < 0 && s->nip == 1 &&
           s->size == s->end && (q->ctrl & DMNIC_Q_CTRL_HDS_ENABLE) &&
           s->len >= q->hds_thresh;
}

/*
 * The payload context @c placed so far (@len bytes) back into its buffer:
 * the posted buffers are needed by another packet, ran out, or the packet
 * is not split after all.  false: the queue is in error (@c is gone).
 */
static bool dmnic_gro_unplace(DevmemNicCore *core, unsigned qi,
                              DmnicGroCtx *c, uint32_t len)
{
    /* it is the queue's direct context, or was (delivered: unlinked) */
    dmnic_gro_q(core, qi)->direct = -1;
    c->direct = false;
    trace_devmem_nic_gro_unplace(qi, len);
    return devmem_nic_core_rx_get(core, qi, c->buf + c->hdr_len, len);
}

void devmem_nic_gro_evict(DevmemNicCore *core, unsigned qi)
{
    DmnicGroQueue *gq;
    DmnicGroCtx *c;

    if (!core->gro || dmnic_gro_q(core, qi)->direct < 0) {
        return;
    }
    gq = dmnic_gro_q(core, qi);
    c = dmnic_gro_ctx(core, qi, gq->direct);
    dmnic_gro_unplace(core, qi, c, c->cur.placed);
}

static void dmnic_gro_timer_arm(DevmemNicCore *core, int64_t deadline)
{
    if (!timer_pending(core->gro_timer) ||
        deadline < timer_expire_time_ns(core->gro_timer)) {
        timer_mod(core->gro_timer, deadline);
    }
}

/*
 * A segment merged into a context or opening one: the burst goes on, the
 * queue's contexts stay (spec: Delivery).  Other frames (a UDP stream, the
 * ACKs of the guest's own TX, segments delivered at once) do not keep a
 * held segment waiting: Linux flushes at the end of the NAPI poll they
 * are in.
 */
static void dmnic_gro_busy(DevmemNicCore *core, unsigned qi)
{
    dmnic_gro_q(core, qi)->idle = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                  (int64_t)core->gro_timeout *
                                  core->gro_time_scale * SCALE_US;
}

/* Rewrite the lengths of the first segment's IP headers (spec: Delivery) */
static void dmnic_gro_fix_headers(DmnicGroCtx *c)
{
    size_t total = (size_t)c->hdr_len + c->pay_len;
    unsigned i;

    for (i = 0; i < c->nip; i++) {
        uint8_t *h = c->buf + c->ip[i].off;

        if (c->ip[i].ver == 4) {
            stw_be_p(h + 2, total - c->ip[i].off);
            stw_be_p(h + 10, 0);
            stw_be_p(h + 10, net_raw_checksum(h, sizeof(struct ip_header)));
        } else {
            stw_be_p(h + 4, total - c->ip[i].off - sizeof(struct ip6_header));
        }
    }
}

/* Deliver context @idx of queue @qi; it is free afterwards */
static void dmnic_gro_deliver(DevmemNicCore *core, unsigned qi, int idx,
                              const char *why)
{
    DmnicGroCtx *c = dmnic_gro_ctx(core, qi, idx);
    DmnicGroOut o = { 0 };

    /* free first: a queue error while placing discards the others */
    dmnic_gro_unlink(core, qi, idx);
    trace_devmem_nic_gro_flush(qi, c->nsegs, c->pay_len, why);
    if (!devmem_nic_core_rx_running(core, qi)) {
        dmnic_gro_trim(core, c);
        return;
    }
    if (c->nsegs == 1) {
        if (c->direct && c->cur.placed) {
            o.segs = 1;
            o.placed = c->cur.placed;
            o.csum_flags = c->pflags & (DMNIC_RXC_F_L4_CSUM_OK |
                                        DMNIC_RXC_F_L4_CSUM_BAD);
            if (devmem_nic_core_rx_place(core, qi, c->buf, c->first_len,
                                         &c->st, &o) ||
                !dmnic_gro_unplace(core, qi, c, c->cur.placed)) {
                dmnic_gro_trim(core, c);
                return;
            }
        }
        devmem_nic_core_rx_place(core, qi, c->buf, c->first_len, &c->st,
                                 NULL);
        dmnic_gro_trim(core, c);
        return;
    }
    dmnic_gro_fix_headers(c);
    o.segs = c->nsegs;
    o.mss = c->mss;
    o.flags = DMNIC_RXC_F_GRO;
    if (c->fixedid & 1) {
        o.flags |= DMNIC_RXC_F_GRO_FIXEDID;
    }
    if (c->fixedid & 2) {
        o.flags |= DMNIC_RXC_F_GRO_FIXEDID_INNER;
    }
    o.l4_off = c->l4_off;
    o.hdr_len = c->hdr_len;
    o.wire_bytes = c->wire_bytes;
    if (c->direct && c->cur.placed) {
        o.placed = c->cur.placed;
        if (devmem_nic_core_rx_place(core, qi, c->buf,
                                     c->hdr_len + c->pay_len, &c->st, &o) ||
            !dmnic_gro_unplace(core, qi, c, c->cur.placed)) {
            dmnic_gro_trim(core, c);
            return;
        }
        o.placed = 0;
    }
    devmem_nic_core_rx_place(core, qi, c->buf, c->hdr_len + c->pay_len,
                             &c->st, &o);
    dmnic_gro_trim(core, c);
}

/*
 * Lossless receive: would context @idx, with @extra more payload bytes (a
 * final segment it is about to take), be placed if delivered now?  The
 * same packet dmnic_gro_deliver() builds, looked at only.
 */
static bool dmnic_gro_fits(DevmemNicCore *core, unsigned qi, int idx,
                           size_t extra)
{
    DmnicGroCtx *c = dmnic_gro_ctx(core, qi, idx);
    DmnicGroOut o = { 0 };
    uint32_t placed = c->direct ? c->cur.placed : 0;

    if (c->nsegs == 1 && !extra) {
        if (!placed) {
            return devmem_nic_core_rx_fits(core, qi, c->buf, c->first_len,
                                           &c->st, NULL);
        }
        o.segs = 1;
        o.placed = placed;
        return devmem_nic_core_rx_fits(core, qi, c->buf, c->first_len,
                                       &c->st, &o);
    }
    o.segs = c->nsegs + !!extra;
    o.mss = c->mss;
    o.flags = DMNIC_RXC_F_GRO;
    o.l4_off = c->l4_off;
    o.hdr_len = c->hdr_len;
    o.placed = placed;
    return devmem_nic_core_rx_fits(core, qi, c->buf,
                                   c->hdr_len + c->pay_len + extra, &c->st,
                                   &o);
}

/* A free context for @s (the oldest one ends if none is): -1 if none */
static int dmnic_gro_open(DevmemNicCore *core, unsigned qi,
                          const DmnicGroSeg *s, uint32_t hash,
                          const DmnicRxSteer *st, uint32_t pflags,
                          bool may_hold)
{
    DmnicGroQueue *gq = dmnic_gro_q(core, qi);
    DmnicGroCtx *c;
    int idx;

    if (gq->free < 0 && may_hold) {
        bool fits = dmnic_gro_fits(core, qi, gq->lru_head, 0);

        if (!devmem_nic_core_rx_running(core, qi)) {
            return -1;          /* a bad descriptor: contexts gone */
        }
        if (!fits) {
            return -EAGAIN;     /* hold @s, the oldest stays */
        }
    }
    if (gq->free < 0) {
        /* Linux gro_flush_oldest() */
        dmnic_gro_deliver(core, qi, gq->lru_head, "oldest");
        if (!devmem_nic_core_rx_running(core, qi) || gq->free < 0) {
            return -1;
        }
    }
    idx = gq->free;
    c = dmnic_gro_ctx(core, qi, idx);
    if (!dmnic_gro_reserve(core, c, s->size)) {
        return -1;          /* device memory full: no context */
    }
    gq->free = c->hnext;
    c->used = true;
    c->hash = hash;
    c->hnext = gq->bucket[hash % DMNIC_GRO_HASH];
    gq->bucket[hash % DMNIC_GRO_HASH] = idx;
    c->lprev = gq->lru_tail;
    c->lnext = -1;
    if (gq->lru_tail >= 0) {
        dmnic_gro_ctx(core, qi, gq->lru_tail)->lnext = idx;
    } else {
        gq->lru_head = idx;
    }
    gq->lru_tail = idx;
    c->nip = s->nip;
    c->fixedid = 0;
    memcpy(c->ip, s->ip, sizeof(c->ip));
    c->l4_off = s->l4_off;
    c->hdr_len = s->hdr_len;
    c->first_len = s->size;
    c->pay_len = s->len;
    c->mss = s->len;
    c->nsegs = 1;
    c->wire_bytes = s->end;
    c->st = *st;
    c->deadline = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)core->gro_max_age *
                  core->gro_time_scale * SCALE_US;
    dmnic_gro_busy(core, qi);
    dmnic_gro_timer_arm(core, MIN(c->deadline, gq->idle));
    trace_devmem_nic_gro_open(qi, idx, s->len);
    c->pflags = pflags;
    memset(&c->cur, 0, sizeof(c->cur));
    c->direct = dmnic_gro_can_place(core, qi, s);
    if (c->direct) {
        gq->direct = idx;
    }
    if (c->direct && s->len >= DMNIC_GRO_DIRECT_MIN) {
        int r = devmem_nic_core_rx_put(core, qi, &c->cur, s->buf + s->hdr_len,
                                       s->len, false);

        if (r == -EIO) {
            return -1;          /* queue error: the context is gone */
        }
        if (!r) {
            memcpy(c->buf, s->buf, s->hdr_len);
            return idx;
        }
        /* too few buffers posted: gathered, like a small segment */
        memset(&c->cur, 0, sizeof(c->cur));
    }
    memcpy(c->buf, s->buf, s->size);
    return idx;
}

/* false: the queue went into error, @c is gone */
static bool dmnic_gro_merge(DevmemNicCore *core, unsigned qi, DmnicGroCtx *c,
                            const DmnicGroSeg *s)
{
    uint8_t *th1 = c->buf + c->l4_off;
    const uint8_t *th = s->buf + s->l4_off;
    uint8_t *pay = c->buf + c->hdr_len;
    bool copied = false;
    int r = 0;

    if (c->direct && c->cur.placed == c->pay_len &&
        s->len >= DMNIC_GRO_DIRECT_MIN) {
        r = devmem_nic_core_rx_put(core, qi, &c->cur, s->buf + s->hdr_len,
                                   s->len, false);
    } else {
        uint32_t pend = c->pay_len + s->len - c->cur.placed;

        memcpy(pay + c->pay_len, s->buf + s->hdr_len, s->len);
        copied = true;
        /* enough gathered to fill the current (or, none: a new) buffer */
        if (c->direct && pend >= (c->cur.off < c->cur.len ?
                                  c->cur.len - c->cur.off :
                                  DMNIC_GRO_DIRECT_MIN)) {
            r = devmem_nic_core_rx_put(core, qi, &c->cur,
                                       pay + c->cur.placed, pend, true);
        }
    }
    if (r == -EIO) {
        return false;
    }
    if (r == -ENOSPC) {
        /* out of posted buffers: the payload comes back to the context */
        if (!dmnic_gro_unplace(core, qi, c, c->cur.placed)) {
            return false;
        }
        if (!copied) {
            memcpy(pay + c->pay_len, s->buf + s->hdr_len, s->len);
        }
    }
    c->pay_len += s->len;
    c->nsegs++;
    c->wire_bytes += s->end;
    th1[13] |= th[13] & ((DMNIC_TCPW_FIN | DMNIC_TCPW_PSH) >> 16);
    if (dmnic_gro_lro(core)) {
        memcpy(th1 + 8, th + 8, 4);         /* ack */
        memcpy(th1 + 14, th + 14, 2);       /* window */
    }
    return true;
}

DmnicGroResult devmem_nic_gro_receive(DevmemNicCore *core, unsigned qi,
                                      const uint8_t *buf, size_t size,
                                      const DmnicRxSteer *st, uint32_t pflags,
                                      bool may_hold)
{
    DmnicGroQueue *gq;
    DmnicGroCtx *c = NULL;
    const char *why = NULL;
    DmnicGroSeg s;
    uint32_t m = 1, hash;
    bool final;
    int idx;
    unsigned n;

    if (!dmnic_gro_enabled(core) || !core->gro) {
        return DMNIC_GRO_PASS;
    }
    gq = dmnic_gro_q(core, qi);
    if (size > DMNIC_GRO_IP_MAX + DMNIC_GRO_HDR_MAX ||
        (pflags & DMNIC_RXC_F_L4_CSUM_BAD) ||
        !dmnic_gro_parse(&s, buf, size, pflags)) {
        return DMNIC_GRO_PASS;
    }
    hash = dmnic_gro_hash(&s);
    idx = gq->bucket[hash % DMNIC_GRO_HASH];
    for (n = 0; n < DMNIC_GRO_NUM_CTX && idx >= 0; n++) {
        DmnicGroCtx *x = dmnic_gro_ctx(core, qi, idx);

        if (x->hash == hash && dmnic_gro_same_flow(x, &s)) {
            c = x;
            break;
        }
        idx = x->hnext;
    }
    if (c) {
        why = s.flush ? "ip-flags" : dmnic_gro_flush_reason(core, c, &s);
        if (!why && !dmnic_gro_reserve(core, c, (size_t)c->hdr_len +
                                       c->pay_len + s.len)) {
            why = "memory";
        }
        if (!why) {
            m = c->mss;
        }
    }
    final = s.len < m || s.flush ||
            (s.word & (DMNIC_TCPW_URG | DMNIC_TCPW_PSH | DMNIC_TCPW_RST |
                       DMNIC_TCPW_SYN | DMNIC_TCPW_FIN));
    /*
     * Lossless receive: P delivered now (with S merged, or before S) that
     * would find no buffers is kept, and S waits in the RX hold: nothing
     * is lost, as without GRO (spec: Pause frames)
     */
    if (c && (why || final) && may_hold) {
        bool fits = dmnic_gro_fits(core, qi, idx, why ? 0 : s.len);

        if (!devmem_nic_core_rx_running(core, qi)) {
            return DMNIC_GRO_PASS;  /* a bad descriptor: contexts gone */
        }
        if (!fits) {
            trace_devmem_nic_gro_hold(qi, c->nsegs, c->pay_len);
            return DMNIC_GRO_HOLD;
        }
    }
    trace_devmem_nic_gro_rx(qi, s.len, c ? c->nsegs : 0, why ? why : "",
                            final);
    if (c && !why) {
        if (!dmnic_gro_merge(core, qi, c, &s)) {
            return DMNIC_GRO_TAKEN;     /* lost with the queue's contexts */
        }
        dmnic_gro_busy(core, qi);
        if (final) {
            dmnic_gro_deliver(core, qi, idx, "final");
        }
        return DMNIC_GRO_TAKEN;
    }
    if (c) {
        dmnic_gro_deliver(core, qi, idx, why);
    }
    if (final || !devmem_nic_core_rx_running(core, qi)) {
        return DMNIC_GRO_PASS;
    }
    idx = dmnic_gro_open(core, qi, &s, hash, st, pflags, may_hold);
    if (idx == -EAGAIN) {
        trace_devmem_nic_gro_hold(qi, 0, 0);
        return DMNIC_GRO_HOLD;
    }
    return idx >= 0 ? DMNIC_GRO_TAKEN : DMNIC_GRO_PASS;
}

/* Deliver or drop the contexts of one queue, oldest first */
static void dmnic_gro_end_queue(DevmemNicCore *core, unsigned qi,
                                bool deliver, const char *why)
{
    DmnicGroQueue *gq = dmnic_gro_q(core, qi);
    unsigned n;

    /* each pass ends one context */
    for (n = 0; n < DMNIC_GRO_NUM_CTX && gq->lru_head >= 0; n++) {
        if (deliver) {
            dmnic_gro_deliver(core, qi, gq->lru_head, why);
        } else {
            DmnicGroCtx *c = dmnic_gro_ctx(core, qi, gq->lru_head);

            trace_devmem_nic_gro_flush(qi, c->nsegs, c->pay_len, why);
            dmnic_gro_unlink(core, qi, gq->lru_head);
            dmnic_gro_trim(core, c);
        }
    }
}

void devmem_nic_gro_flush(DevmemNicCore *core, int qi)
{
    unsigned q;

    if (!core->gro) {
        return;
    }
    for (q = 0; q < core->num_queues; q++) {
        if (qi < 0 || q == qi) {
            dmnic_gro_end_queue(core, q, true, "flush");
        }
    }
}

void devmem_nic_gro_discard(DevmemNicCore *core, int qi)
{
    unsigned q;

    if (!core->gro) {
        return;
    }
    for (q = 0; q < core->num_queues; q++) {
        if (qi < 0 || q == qi) {
            dmnic_gro_end_queue(core, q, false, "discard");
        }
    }
}

static void dmnic_gro_timer(void *opaque)
{
    DevmemNicCore *core = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t next = INT64_MAX;
    unsigned qi, n;

    for (qi = 0; qi < core->num_queues; qi++) {
        DmnicGroQueue *gq = dmnic_gro_q(core, qi);

        /* idle queue: all, oldest first; else those too old (in front) */
        for (n = 0; n < DMNIC_GRO_NUM_CTX && gq->lru_head >= 0; n++) {
            DmnicGroCtx *c = dmnic_gro_ctx(core, qi, gq->lru_head);

            if (now < gq->idle && now < c->deadline) {
                break;
            }
            dmnic_gro_deliver(core, qi, gq->lru_head,
                              now >= gq->idle ? "idle" : "age");
        }
        if (gq->lru_head >= 0) {
            next = MIN(next, MIN(gq->idle,
                       dmnic_gro_ctx(core, qi, gq->lru_head)->deadline));
        }
    }
    if (next != INT64_MAX) {
        timer_mod(core->gro_timer, next);
    }
}

void devmem_nic_gro_write_ctrl(DevmemNicCore *core, uint32_t val)
{
    uint32_t rw = DMNIC_GRO_CTRL_HW | DMNIC_GRO_CTRL_LRO;

    if (val & ~rw) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: GRO_CTRL reserved bits 0x%x\n", val & ~rw);
    }
    val &= rw;
    /* off, or the other rules (HW wins when both are set): deliver first */
    if (!(val & DMNIC_GRO_CTRL_HW) != !(core->gro_ctrl & DMNIC_GRO_CTRL_HW) ||
        !val != !core->gro_ctrl) {
        devmem_nic_gro_flush(core, -1);
    }
    core->gro_ctrl = val;
}

void devmem_nic_gro_write_timeout(DevmemNicCore *core, uint32_t val)
{
    if (val < DMNIC_GRO_TIMEOUT_MIN || val > DMNIC_GRO_TIMEOUT_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: GRO_TIMEOUT %u out of range\n", val);
        val = MAX(MIN(val, DMNIC_GRO_TIMEOUT_MAX), DMNIC_GRO_TIMEOUT_MIN);
    }
    core->gro_timeout = val;
}

void devmem_nic_gro_write_max_age(DevmemNicCore *core, uint32_t val)
{
    if (val < DMNIC_GRO_MAX_AGE_MIN || val > DMNIC_GRO_MAX_AGE_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: GRO_MAX_AGE %u out of range\n", val);
        val = MAX(MIN(val, DMNIC_GRO_MAX_AGE_MAX), DMNIC_GRO_MAX_AGE_MIN);
    }
    core->gro_max_age = val;
}

void devmem_nic_gro_realize(DevmemNicCore *core)
{
    unsigned qi;

    core->gro = g_new0(DmnicGroCtx, core->num_queues * DMNIC_GRO_NUM_CTX);
    core->gro_q = g_new0(DmnicGroQueue, core->num_queues);
    for (qi = 0; qi < core->num_queues; qi++) {
        dmnic_gro_q_init(core, qi);
    }
    core->gro_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, dmnic_gro_timer, core);
}

void devmem_nic_gro_unrealize(DevmemNicCore *core)
{
    unsigned i;

    if (core->gro_timer) {
        timer_free(core->gro_timer);
        core->gro_timer = NULL;
    }
    if (core->gro) {
        for (i = 0; i < core->num_queues * DMNIC_GRO_NUM_CTX; i++) {
            g_free(core->gro[i].buf);
        }
        g_free(core->gro);
        core->gro = NULL;
        g_free(core->gro_q);
        core->gro_q = NULL;
        core->gro_mem = 0;
    }
}
