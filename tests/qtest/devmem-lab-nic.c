/*
 * devmem-lab qtest helpers for devmem-nic: the test plays the driver
 * through BAR0 and guest memory (docs/specs/devmem-nic.rst), frames go in
 * and out through a socket netdev.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include <sys/socket.h>
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "qobject/qdict.h"
#include "devmem-lab-pkt.h"
#include "devmem-lab-util.h"
#include "devmem-lab-nic.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"

static const uint16_t dn_ring_off[DN_NUM_RINGS] = {
    DMNIC_Q_HBR, DMNIC_Q_PBR, DMNIC_Q_RXC, DMNIC_Q_TXD, DMNIC_Q_TXC,
};
static const uint32_t dn_ring_esize[DN_NUM_RINGS] = {
    DMNIC_RXD_SIZE, DMNIC_RXD_SIZE, DMNIC_RXC_SIZE, DMNIC_TXD_SIZE,
    DMNIC_TXC_SIZE,
};

/* ------------------------------------------------------------------ */
/* Registers and memory                                                */
/* ------------------------------------------------------------------ */

uint32_t dn_rd(DnState *s, uint32_t off)
{
    return qpci_io_readl(s->dev, s->regs, off);
}

void dn_wr(DnState *s, uint32_t off, uint32_t val)
{
    qpci_io_writel(s->dev, s->regs, off, val);
}

uint64_t dn_rd64(DnState *s, uint32_t off)
{
    return qpci_io_readq(s->dev, s->regs, off);
}

uint32_t dn_qrd(DnState *s, unsigned q, uint32_t off)
{
    return dn_rd(s, DMNIC_QREG(q, off));
}

void dn_qwr(DnState *s, unsigned q, uint32_t off, uint32_t val)
{
    dn_wr(s, DMNIC_QREG(q, off), val);
    if (off == DMNIC_Q_CTRL || off == DMNIC_Q_TXD + DMNIC_RING_DRV ||
        off == DMNIC_Q_TXC + DMNIC_RING_DRV) {
        dn_tx_sync(s);
    }
}

uint64_t dn_qstat(DnState *s, unsigned q, uint32_t off)
{
    return dn_rd64(s, DMNIC_QREG(q, off));
}

uint64_t dn_galloc(DnState *s, size_t size)
{
    uint64_t a = guest_alloc(&s->qs->alloc, size);

    g_assert_cmphex(a & 63, ==, 0);
    qtest_memset(s->qts, a, 0, size);
    return a;
}

/* ------------------------------------------------------------------ */
/* Machine                                                             */
/* ------------------------------------------------------------------ */

void dn_map(DnState *s, QPCIDevice *dev)
{
    g_assert_nonnull(dev);
    s->dev = dev;
    qpci_device_enable(dev);
    s->regs = qpci_iomap(dev, DMNIC_BAR_REGS, &s->regs_size);
    g_assert_cmphex(dn_rd(s, DMNIC_REG_ID), ==, DMNIC_ID_MAGIC);
    s->nq = dn_rd(s, DMNIC_REG_NUM_QUEUES);
    QEMU_BUILD_BUG_ON(DN_MAX_QUEUES != DMNIC_MAX_QUEUES);
    g_assert_cmpuint(s->nq, <=, DN_MAX_QUEUES);
    s->frames = dn_rd64(s, DMNIC_REG_G_RX_FRAMES);
}

void dn_boot(DnState *s, int devfn, const char *args)
{
    g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, s->sv), !=, -1);
    s->qs = qtest_pc_boot("-nodefaults -netdev socket,id=n0,fd=%d %s",
                          s->sv[1], args);
    s->qts = s->qs->qts;
    dn_map(s, devfn < 0 ?
           dl_pci_find(s->qs->pcibus, DMNIC_PCI_VENDOR_ID,
                       DMNIC_PCI_DEVICE_ID) :
           qpci_device_find(s->qs->pcibus, devfn));
}

/*
 * The destination of a migration from @s: a copy of it (queues, BAR
 * mapping: they arrive with the migrated state) on a new cable, booted
 * with -incoming @uri.  Not dn_map(): config space comes from the stream.
 */
void dn_boot_incoming(DnState *d, const DnState *s, const char *uri)
{
    *d = *s;
    g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, d->sv), !=, -1);
    d->qs = qtest_pc_boot("-nodefaults -netdev socket,id=n0,fd=%d "
                          "-device devmem-nic,id=nic,netdev=n0,"
                          "mac=52:54:00:12:34:56,queues=%d -incoming %s",
                          d->sv[1], s->nq, uri);
    d->qts = d->qs->qts;
    d->dev = dl_pci_find(d->qs->pcibus, DMNIC_PCI_VENDOR_ID,
                         DMNIC_PCI_DEVICE_ID);
}

void dn_stop(DnState *s)
{
    g_free(s->dev);
    qtest_shutdown(s->qs);
    close(s->sv[0]);
    close(s->sv[1]);
    if (s->log) {
        unlink(s->log);
        g_free(s->log);
    }
}

void dn_steer_all_to(DnState *s, unsigned q)
{
    dn_wr(s, DMNIC_REG_RSS_CTRL, 0);
    dn_wr(s, DMNIC_REG_DEFAULT_QUEUE, q);
}

/* ------------------------------------------------------------------ */
/* Rings                                                               */
/* ------------------------------------------------------------------ */

void dn_ring_setup(DnState *s, unsigned q, int r, uint32_t n)
{
    DnQueue *d = &s->q[q];

    d->size[r] = n;
    d->ring[r] = dn_galloc(s, n * dn_ring_esize[r]);
    dn_qwr(s, q, dn_ring_off[r] + DMNIC_RING_BASE_LO, d->ring[r]);
    dn_qwr(s, q, dn_ring_off[r] + DMNIC_RING_BASE_HI, d->ring[r] >> 32);
    dn_qwr(s, q, dn_ring_off[r] + DMNIC_RING_SIZE, n);
}

void dn_rx_rings(DnState *s, unsigned q, uint32_t nbuf)
{
    DnQueue *d = &s->q[q];

    dn_ring_setup(s, q, DN_HBR, nbuf);
    dn_ring_setup(s, q, DN_PBR, nbuf);
    dn_ring_setup(s, q, DN_RXC, 128);
    d->hbr_tail = d->pbr_tail = d->rxc_head = 0;
    d->rxc_gen = true;
    dn_qwr(s, q, DMNIC_Q_HBR + DMNIC_RING_DRV, 0);
    dn_qwr(s, q, DMNIC_Q_PBR + DMNIC_RING_DRV, 0);
}

void dn_tx_setup(DnState *s, unsigned q)
{
    DnQueue *d = &s->q[q];

    dn_ring_setup(s, q, DN_TXD, 64);
    dn_ring_setup(s, q, DN_TXC, 64);
    d->txd_tail = d->txc_head = 0;
    d->txc_gen = true;
    dn_qwr(s, q, DMNIC_Q_TXD + DMNIC_RING_DRV, 0);
    dn_qwr(s, q, DMNIC_Q_CTRL,
           dn_qrd(s, q, DMNIC_Q_CTRL) | DMNIC_Q_CTRL_TX_ENABLE);
}

void dn_post_rxd(DnState *s, unsigned q, int r, uint64_t addr, uint32_t len,
                 uint16_t id)
{
    DnQueue *d = &s->q[q];
    uint32_t *tail = r == DN_HBR ? &d->hbr_tail : &d->pbr_tail;
    uint8_t desc[DMNIC_RXD_SIZE] = { 0 };

    stq_le_p(desc + DMNIC_RXD_ADDR, addr);
    stl_le_p(desc + DMNIC_RXD_LEN, len);
    stw_le_p(desc + DMNIC_RXD_ID, id);
    qtest_memwrite(s->qts, d->ring[r] + *tail * DMNIC_RXD_SIZE, desc,
                   sizeof(desc));
    *tail = (*tail + 1) % d->size[r];
}

void dn_tx_sync(DnState *s)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    const char *path = s->qom ? s->qom : "/machine/peripheral/nic";

    for (;;) {
        QDict *rsp = qtest_qmp(s->qts, "{'execute': 'qom-get', 'arguments': "
                               "{'path': %s, 'property': 'x-tx-pending'}}",
                               path);
        bool busy;

        if (!qdict_haskey(rsp, "return")) {
            /* a device without the property processes TX synchronously */
            qobject_unref(rsp);
            return;
        }
        busy = qdict_get_bool(rsp, "return");
        qobject_unref(rsp);
        if (!busy) {
            return;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(1000);
    }
}

void dn_ring_doorbell(DnState *s, unsigned q, int r)
{
    DnQueue *d = &s->q[q];

    dn_qwr(s, q, dn_ring_off[r] + DMNIC_RING_DRV,
           r == DN_HBR ? d->hbr_tail :
           r == DN_PBR ? d->pbr_tail : d->txd_tail);
}

void dn_post_bufs(DnState *s, unsigned q, unsigned nh, unsigned np,
                  uint32_t plen)
{
    DnQueue *d = &s->q[q];
    unsigned i;

    for (i = 0; i < nh; i++) {
        uint16_t id = d->hbr_tail;

        if (!d->hbuf[id]) {
            d->hbuf[id] = dn_galloc(s, DN_HBUF_LEN);
        }
        d->hlen[id] = DN_HBUF_LEN;
        dn_post_rxd(s, q, DN_HBR, d->hbuf[id], DN_HBUF_LEN, id);
    }
    for (i = 0; i < np; i++) {
        uint16_t id = d->pbr_tail;

        if (!d->pbuf[id]) {
            d->pbuf[id] = dn_galloc(s, DN_PBUF_LEN);
        }
        d->plen[id] = plen;
        dn_post_rxd(s, q, DN_PBR, d->pbuf[id], plen, id);
    }
    dn_ring_doorbell(s, q, DN_HBR);
    dn_ring_doorbell(s, q, DN_PBR);
}

/* ------------------------------------------------------------------ */
/* RX                                                                  */
/* ------------------------------------------------------------------ */

void dn_inject(DnState *s, const uint8_t *frame, size_t len)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    /* the counter is stable here: every earlier inject waited for it */
    s->frames = dn_rd64(s, DMNIC_REG_G_RX_FRAMES) + 1;
    dl_sock_send(s->sv[0], frame, len);
    while (dn_rd64(s, DMNIC_REG_G_RX_FRAMES) < s->frames) {
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(1000);
    }
}

void dn_read_cpl(DnState *s, unsigned q, uint32_t idx, DnCpl *c)
{
    uint8_t b[DMNIC_RXC_SIZE];

    qtest_memread(s->qts, s->q[q].ring[DN_RXC] + idx * DMNIC_RXC_SIZE, b,
                  sizeof(b));
    c->hdr_id = lduw_le_p(b + DMNIC_RXC_HDR_ID);
    c->hdr_len = lduw_le_p(b + DMNIC_RXC_HDR_LEN);
    c->pay_id = lduw_le_p(b + DMNIC_RXC_PAY_ID);
    c->rss_type = b[DMNIC_RXC_RSS_TYPE];
    c->pay_len = ldl_le_p(b + DMNIC_RXC_PAY_LEN);
    c->pkt_len = ldl_le_p(b + DMNIC_RXC_PKT_LEN);
    c->hash = ldl_le_p(b + DMNIC_RXC_RSS_HASH);
    c->vlan = lduw_le_p(b + DMNIC_RXC_VLAN_TCI);
    c->l4_off = lduw_le_p(b + DMNIC_RXC_L4_OFF);
    c->rule = lduw_le_p(b + DMNIC_RXC_FS_RULE);
    c->flags = ldl_le_p(b + DMNIC_RXC_FLAGS);
}

uint32_t dn_cpl_pending(DnState *s, unsigned q)
{
    DnQueue *d = &s->q[q];
    uint32_t dev;

    if (!d->size[DN_RXC]) {
        return 0;
    }
    dev = dn_qrd(s, q, DMNIC_Q_RXC + DMNIC_RING_DEV);
    return (dev - d->rxc_head) % d->size[DN_RXC];
}

/* ------------------------------------------------------------------ */
/* TX                                                                  */
/* ------------------------------------------------------------------ */

void dn_post_txd(DnState *s, unsigned q, uint64_t addr, uint32_t len,
                 uint16_t id, uint16_t flags, uint16_t cstart,
                 uint16_t coff)
{
    DnQueue *d = &s->q[q];
    uint8_t desc[DMNIC_TXD_SIZE] = { 0 };

    stq_le_p(desc + DMNIC_TXD_ADDR, addr);
    stl_le_p(desc + DMNIC_TXD_LEN, len);
    stw_le_p(desc + DMNIC_TXD_ID, id);
    stw_le_p(desc + DMNIC_TXD_FLAGS, flags);
    stw_le_p(desc + DMNIC_TXD_CSUM_START, cstart);
    stw_le_p(desc + DMNIC_TXD_CSUM_OFFSET, coff);
    qtest_memwrite(s->qts, d->ring[DN_TXD] + d->txd_tail * DMNIC_TXD_SIZE,
                   desc, sizeof(desc));
    d->txd_tail = (d->txd_tail + 1) % d->size[DN_TXD];
}

void dn_read_txc(DnState *s, unsigned q, uint32_t idx, DnTxc *c)
{
    uint8_t b[DMNIC_TXC_SIZE];

    qtest_memread(s->qts, s->q[q].ring[DN_TXC] + idx * DMNIC_TXC_SIZE, b,
                  sizeof(b));
    c->id = lduw_le_p(b + DMNIC_TXC_ID);
    c->ndesc = lduw_le_p(b + DMNIC_TXC_NDESC);
    c->len = ldl_le_p(b + DMNIC_TXC_LEN);
    c->status = ldl_le_p(b + DMNIC_TXC_STATUS);
    c->flags = ldl_le_p(b + DMNIC_TXC_FLAGS);
}

ssize_t dn_wire_recv(DnState *s, uint8_t *out, size_t size)
{
    ssize_t got;

    do {
        got = dl_sock_recv(s->sv[0], out, size, 5000);
    } while (got >= 14 && lduw_be_p(out + 12) == 0x8035);
    return got;
}

void dn_lossless(DnState *s)
{
    g_assert_true(dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_PAUSE);
    dn_wr(s, DMNIC_REG_PAUSE_CTRL, DMNIC_PAUSE_CTRL_TX);
    g_assert_cmphex(dn_rd(s, DMNIC_REG_PAUSE_STATUS), ==, 0);
}

void dn_expect_pause(DnState *s, uint16_t quanta)
{
    static const uint8_t dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
    uint8_t out[256], mac[6];

    stl_le_p(mac, dn_rd(s, DMNIC_REG_MAC_LO));
    stw_le_p(mac + 4, dn_rd(s, DMNIC_REG_MAC_HI));
    g_assert_cmpint(dn_wire_recv(s, out, sizeof(out)), ==, 60);
    g_assert_cmpmem(out, 6, dst, 6);
    g_assert_cmpmem(out + 6, 6, mac, 6);
    g_assert_cmphex(lduw_be_p(out + 12), ==, 0x8808);
    g_assert_cmphex(lduw_be_p(out + 14), ==, 0x0001);
    g_assert_cmphex(lduw_be_p(out + 16), ==, quanta);
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

void dn_expect_qerr(DnState *s, unsigned q, bool tx, uint8_t code)
{
    static const uint32_t qmap[] = {
        DMNIC_REG_ERR_QMAP_LO, DMNIC_REG_ERR_QMAP_HI, DMNIC_REG_ERR_QMAP_X,
    };
    uint32_t st = dn_qrd(s, q, DMNIC_Q_STATUS);
    unsigned i;

    if (tx) {
        g_assert_true(st & DMNIC_Q_STATUS_TX_ERROR);
        g_assert_true(st & DMNIC_Q_STATUS_TX_QUIESCED);
        g_assert_cmpuint((st >> DMNIC_Q_STATUS_TX_ERR_SHIFT) &
                         DMNIC_Q_STATUS_ERR_MASK, ==, code);
        g_assert_cmpuint(dn_qstat(s, q, DMNIC_Q_TX_ERRORS), >=, 1);
    } else {
        g_assert_true(st & DMNIC_Q_STATUS_RX_ERROR);
        g_assert_true(st & DMNIC_Q_STATUS_RX_QUIESCED);
        g_assert_cmpuint((st >> DMNIC_Q_STATUS_RX_ERR_SHIFT) &
                         DMNIC_Q_STATUS_ERR_MASK, ==, code);
        g_assert_cmpuint(dn_qstat(s, q, DMNIC_Q_RX_ERRORS), >=, 1);
    }
    g_assert_true(dn_rd(s, DMNIC_REG_INT_CAUSE) & DMNIC_INT_QERR);
    /* the error map: 32 queues a word, queues 64..71 in ERR_QMAP_X */
    g_assert_cmphex(dn_rd(s, qmap[q / 32]), ==, 1u << (q % 32));
    /* recovery: clearing the enable bits clears the error */
    dn_qwr(s, q, DMNIC_Q_CTRL, 0);
    g_assert_cmphex(dn_qrd(s, q, DMNIC_Q_STATUS), ==,
                    DMNIC_Q_STATUS_RX_QUIESCED | DMNIC_Q_STATUS_TX_QUIESCED);
    for (i = 0; i < ARRAY_SIZE(qmap); i++) {
        g_assert_cmphex(dn_rd(s, qmap[i]), ==, 0);
    }
    dn_wr(s, DMNIC_REG_INT_CAUSE, DMNIC_INT_QERR);
}

void dn_expect_log(DnState *s, const char *needle)
{
    dl_expect_log(s->log, &s->log_seen, needle);
}
