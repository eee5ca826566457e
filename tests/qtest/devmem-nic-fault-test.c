/*
 * QTest fault scenarios for devmem-nic: the x-fault-* QOM knobs
 * (docs/fault-injection.md), QEMU's own means (bus master off, reset,
 * hot unplug, stop/cont, migration to a file), and the guest mistakes
 * devmem-nic-test.c does not cover, each checked for its log line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include <sys/socket.h>
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "qobject/qdict.h"
#include "standard-headers/linux/pci_regs.h"
#include "devmem-lab-pkt.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"
#include "../../hw/misc/fake-accel/fake-accel-regs.h"

#define HBUF_LEN        256
#define PBUF_LEN        4096
#define MAX_BUFS        64
#define FRAME_MAX       70000
#define NQ              4
#define NIC_SLOT        4
#define ACC_SLOT        5
#define NIC_QOM         "/machine/peripheral/nic"
#define UNMAPPED_ADDR   0x7f0000000000ULL

enum { HBR, PBR, RXC, TXD, TXC };

static const uint16_t ring_off[5] = {
    DMNIC_Q_HBR, DMNIC_Q_PBR, DMNIC_Q_RXC, DMNIC_Q_TXD, DMNIC_Q_TXC,
};
static const uint32_t ring_esize[5] = {
    DMNIC_RXD_SIZE, DMNIC_RXD_SIZE, DMNIC_RXC_SIZE, DMNIC_TXD_SIZE,
    DMNIC_TXC_SIZE,
};

typedef struct DQ {
    uint64_t ring[5];
    uint32_t size[5];
    uint32_t hbr_tail;
    uint32_t pbr_tail;
    uint32_t rxc_head;
    bool rxc_gen;
    uint32_t txd_tail;
    uint32_t txc_head;
    bool txc_gen;
    uint64_t hbuf[MAX_BUFS];
    uint64_t pbuf[MAX_BUFS];
} DQ;

typedef struct DN {
    QOSState *qs;
    QTestState *qts;
    QPCIDevice *dev;
    QPCIBar regs;
    int sv[2];
    uint64_t frames;
    char *log;
    size_t log_seen;
    DQ q[NQ];
} DN;

typedef struct Cpl {
    uint16_t hdr_id;
    uint16_t hdr_len;
    uint16_t pay_id;
    uint32_t pay_len;
    uint32_t pkt_len;
    uint32_t flags;
} Cpl;

typedef struct Txc {
    uint16_t id;
    uint16_t ndesc;
    uint32_t len;
    uint32_t status;
    uint32_t flags;
} Txc;

/* ------------------------------------------------------------------ */
/* Device helpers                                                      */
/* ------------------------------------------------------------------ */

static uint32_t rd(DN *s, uint32_t off)
{
    return qpci_io_readl(s->dev, s->regs, off);
}

static void wr(DN *s, uint32_t off, uint32_t val)
{
    qpci_io_writel(s->dev, s->regs, off, val);
}

static uint64_t rd64(DN *s, uint32_t off)
{
    return qpci_io_readq(s->dev, s->regs, off);
}

static uint32_t qrd(DN *s, unsigned q, uint32_t off)
{
    return rd(s, DMNIC_QREG(q, off));
}

static void qwr(DN *s, unsigned q, uint32_t off, uint32_t val)
{
    wr(s, DMNIC_QREG(q, off), val);
}

static uint64_t qstat(DN *s, unsigned q, uint32_t off)
{
    return rd64(s, DMNIC_QREG(q, off));
}

static uint64_t galloc(DN *s, size_t size)
{
    uint64_t a = guest_alloc(&s->qs->alloc, size);

    g_assert_cmphex(a & 63, ==, 0);
    qtest_memset(s->qts, a, 0, size);
    return a;
}

static void dn_map(DN *s)
{
    s->dev = qpci_device_find(s->qs->pcibus, QPCI_DEVFN(NIC_SLOT, 0));
    g_assert_nonnull(s->dev);
    qpci_device_enable(s->dev);
    s->regs = qpci_iomap(s->dev, DMNIC_BAR_REGS, NULL);
    g_assert_cmphex(rd(s, DMNIC_REG_ID), ==, DMNIC_ID_MAGIC);
    s->frames = rd64(s, DMNIC_REG_G_RX_FRAMES);
}

/*
 * pc machine, devmem-nic "nic" in slot 4 on a socket netdev, guest errors,
 * invalid accesses and the fault trace events in a log file.
 */
static void dn_start(DN *s, const char *extra)
{
    memset(s, 0, sizeof(*s));
    g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, s->sv), !=, -1);
    s->log = g_strdup_printf("%s/dmnic-fault-%d-%p.log", g_get_tmp_dir(),
                             getpid(), s);
    s->qs = qtest_pc_boot("-nodefaults -d guest_errors,invalid_mem -D %s "
                          "-trace devmem_nic_fault_* "
                          "-netdev socket,id=n0,fd=%d "
                          "-device devmem-nic,id=nic,addr=0x%x,netdev=n0,"
                          "mac=52:54:00:12:34:56,queues=%d %s",
                          s->log, s->sv[1], NIC_SLOT, NQ,
                          extra ? extra : "");
    s->qts = s->qs->qts;
    dn_map(s);
}

static void dn_stop(DN *s)
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

/* the -D log got @needle since the last match */
static void expect_log(DN *s, const char *needle)
{
    g_autofree char *text = NULL;
    gsize len;
    char *hit;

    g_assert_true(g_file_get_contents(s->log, &text, &len, NULL));
    g_assert_cmpuint(len, >=, s->log_seen);
    hit = strstr(text + s->log_seen, needle);
    if (!hit) {
        g_test_message("'%s' not in the log after offset %zu:", needle,
                       s->log_seen);
        g_test_message("%s", text + s->log_seen);
    }
    g_assert_nonnull(hit);
    s->log_seen = hit - text + strlen(needle);
}

static void steer_all_to(DN *s, unsigned q)
{
    wr(s, DMNIC_REG_RSS_CTRL, 0);
    wr(s, DMNIC_REG_DEFAULT_QUEUE, q);
}

static void ring_setup(DN *s, unsigned q, int r, uint32_t n)
{
    DQ *d = &s->q[q];

    d->size[r] = n;
    d->ring[r] = galloc(s, n * ring_esize[r]);
    qwr(s, q, ring_off[r] + DMNIC_RING_BASE_LO, d->ring[r]);
    qwr(s, q, ring_off[r] + DMNIC_RING_BASE_HI, d->ring[r] >> 32);
    qwr(s, q, ring_off[r] + DMNIC_RING_SIZE, n);
}

static void post_rxd(DN *s, unsigned q, int r, uint64_t addr, uint32_t len,
                     uint16_t id)
{
    DQ *d = &s->q[q];
    uint32_t *tail = r == HBR ? &d->hbr_tail : &d->pbr_tail;
    uint8_t desc[DMNIC_RXD_SIZE] = { 0 };

    stq_le_p(desc + DMNIC_RXD_ADDR, addr);
    stl_le_p(desc + DMNIC_RXD_LEN, len);
    stw_le_p(desc + DMNIC_RXD_ID, id);
    qtest_memwrite(s->qts, d->ring[r] + *tail * DMNIC_RXD_SIZE, desc,
                   sizeof(desc));
    *tail = (*tail + 1) % d->size[r];
}

static void ring_doorbell(DN *s, unsigned q, int r)
{
    DQ *d = &s->q[q];

    qwr(s, q, ring_off[r] + DMNIC_RING_DRV,
        r == HBR ? d->hbr_tail : r == PBR ? d->pbr_tail : d->txd_tail);
}

/* post n header and n payload buffers; buffer ID = ring index */
static void post_bufs(DN *s, unsigned q, unsigned n)
{
    DQ *d = &s->q[q];
    unsigned i;

    for (i = 0; i < n; i++) {
        uint16_t id = d->hbr_tail;

        if (!d->hbuf[id]) {
            d->hbuf[id] = galloc(s, HBUF_LEN);
        }
        post_rxd(s, q, HBR, d->hbuf[id], HBUF_LEN, id);
        id = d->pbr_tail;
        if (!d->pbuf[id]) {
            d->pbuf[id] = galloc(s, PBUF_LEN);
        }
        post_rxd(s, q, PBR, d->pbuf[id], PBUF_LEN, id);
    }
    ring_doorbell(s, q, HBR);
    ring_doorbell(s, q, PBR);
}

/* program (fresh) RX rings of queue q, enable RX with HDS, post 16 */
static void rx_setup(DN *s, unsigned q)
{
    DQ *d = &s->q[q];

    ring_setup(s, q, HBR, MAX_BUFS);
    ring_setup(s, q, PBR, MAX_BUFS);
    ring_setup(s, q, RXC, 128);
    d->hbr_tail = d->pbr_tail = d->rxc_head = 0;
    d->rxc_gen = true;
    qwr(s, q, DMNIC_Q_HBR + DMNIC_RING_DRV, 0);
    qwr(s, q, DMNIC_Q_PBR + DMNIC_RING_DRV, 0);
    qwr(s, q, DMNIC_Q_CTRL, (qrd(s, q, DMNIC_Q_CTRL) &
                             DMNIC_Q_CTRL_TX_ENABLE) |
        DMNIC_Q_CTRL_RX_ENABLE | DMNIC_Q_CTRL_HDS_ENABLE);
    post_bufs(s, q, 16);
}

static void tx_setup(DN *s, unsigned q)
{
    DQ *d = &s->q[q];

    ring_setup(s, q, TXD, 64);
    ring_setup(s, q, TXC, 64);
    d->txd_tail = d->txc_head = 0;
    d->txc_gen = true;
    qwr(s, q, DMNIC_Q_TXD + DMNIC_RING_DRV, 0);
    qwr(s, q, DMNIC_Q_CTRL, qrd(s, q, DMNIC_Q_CTRL) | DMNIC_Q_CTRL_TX_ENABLE);
}

/* send a frame into the cable and wait until the device has seen it */
static void inject(DN *s, const uint8_t *frame, size_t len)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    /* the counter is stable here: every earlier inject waited for it */
    s->frames = rd64(s, DMNIC_REG_G_RX_FRAMES) + 1;
    dl_sock_send(s->sv[0], frame, len);
    while (rd64(s, DMNIC_REG_G_RX_FRAMES) < s->frames) {
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(1000);
    }
}

static size_t tcp_frame(uint8_t *frame, size_t payload, uint8_t seed,
                        size_t *hlen)
{
    DlPktSpec spec;

    dl_pkt_default(&spec, 4, DL_PROTO_TCP, payload);
    spec.payload_seed = seed;
    return dl_pkt_build(&spec, frame, hlen);
}

static void read_cpl(DN *s, unsigned q, uint32_t idx, Cpl *c)
{
    uint8_t b[DMNIC_RXC_SIZE];

    qtest_memread(s->qts, s->q[q].ring[RXC] + idx * DMNIC_RXC_SIZE, b,
                  sizeof(b));
    c->hdr_id = lduw_le_p(b + DMNIC_RXC_HDR_ID);
    c->hdr_len = lduw_le_p(b + DMNIC_RXC_HDR_LEN);
    c->pay_id = lduw_le_p(b + DMNIC_RXC_PAY_ID);
    c->pay_len = ldl_le_p(b + DMNIC_RXC_PAY_LEN);
    c->pkt_len = ldl_le_p(b + DMNIC_RXC_PKT_LEN);
    c->flags = ldl_le_p(b + DMNIC_RXC_FLAGS);
}

static uint32_t cpl_pending(DN *s, unsigned q)
{
    DQ *d = &s->q[q];

    return (qrd(s, q, DMNIC_Q_RXC + DMNIC_RING_DEV) - d->rxc_head) %
           d->size[RXC];
}

/*
 * Consume the next packet of queue q (one header + one payload buffer
 * expected, split) and check it is @frame, byte for byte.
 */
static void expect_rx(DN *s, unsigned q, const uint8_t *frame, size_t len,
                      size_t hlen)
{
    g_autofree uint8_t *buf = g_malloc(FRAME_MAX);
    DQ *d = &s->q[q];
    Cpl c;

    g_assert_cmpuint(cpl_pending(s, q), >=, 1);
    read_cpl(s, q, d->rxc_head, &c);
    g_assert_cmphex(!!(c.flags & DMNIC_RXC_F_GEN), ==, d->rxc_gen);
    g_assert_true(c.flags & DMNIC_RXC_F_SOP);
    g_assert_true(c.flags & DMNIC_RXC_F_EOP);
    g_assert_true(c.flags & DMNIC_RXC_F_SPLIT);
    g_assert_cmpuint(c.pkt_len, ==, len);
    g_assert_cmpuint(c.hdr_len, ==, hlen);
    g_assert_cmpuint(c.pay_len, ==, len - hlen);
    g_assert_cmpuint(c.hdr_id, <, MAX_BUFS);
    g_assert_cmpuint(c.pay_id, <, MAX_BUFS);
    qtest_memread(s->qts, d->hbuf[c.hdr_id], buf, hlen);
    g_assert_cmpmem(buf, hlen, frame, hlen);
    qtest_memread(s->qts, d->pbuf[c.pay_id], buf, len - hlen);
    g_assert_cmpmem(buf, len - hlen, frame + hlen, len - hlen);
    d->rxc_head = (d->rxc_head + 1) % d->size[RXC];
    if (!d->rxc_head) {
        d->rxc_gen = !d->rxc_gen;
    }
    qwr(s, q, DMNIC_Q_RXC + DMNIC_RING_DRV, d->rxc_head);
}

static void post_txd(DN *s, unsigned q, uint64_t addr, uint32_t len,
                     uint16_t id, uint16_t flags)
{
    DQ *d = &s->q[q];
    uint8_t desc[DMNIC_TXD_SIZE] = { 0 };

    stq_le_p(desc + DMNIC_TXD_ADDR, addr);
    stl_le_p(desc + DMNIC_TXD_LEN, len);
    stw_le_p(desc + DMNIC_TXD_ID, id);
    stw_le_p(desc + DMNIC_TXD_FLAGS, flags);
    qtest_memwrite(s->qts, d->ring[TXD] + d->txd_tail * DMNIC_TXD_SIZE, desc,
                   sizeof(desc));
    d->txd_tail = (d->txd_tail + 1) % d->size[TXD];
}

/* post a one-descriptor packet holding @frame and ring the doorbell */
static void tx_frame(DN *s, unsigned q, const uint8_t *frame, size_t len,
                     uint16_t id)
{
    uint64_t b = galloc(s, len);

    qtest_memwrite(s->qts, b, frame, len);
    post_txd(s, q, b, len, id, DMNIC_TXD_F_EOP);
    ring_doorbell(s, q, TXD);
}

static void read_txc(DN *s, unsigned q, uint32_t idx, Txc *c)
{
    uint8_t b[DMNIC_TXC_SIZE];

    qtest_memread(s->qts, s->q[q].ring[TXC] + idx * DMNIC_TXC_SIZE, b,
                  sizeof(b));
    c->id = lduw_le_p(b + DMNIC_TXC_ID);
    c->ndesc = lduw_le_p(b + DMNIC_TXC_NDESC);
    c->len = ldl_le_p(b + DMNIC_TXC_LEN);
    c->status = ldl_le_p(b + DMNIC_TXC_STATUS);
    c->flags = ldl_le_p(b + DMNIC_TXC_FLAGS);
}

/* consume the next TX completion of q */
static void expect_txc(DN *s, unsigned q, uint16_t id, uint32_t status)
{
    DQ *d = &s->q[q];
    Txc c;

    g_assert_cmpuint(qrd(s, q, DMNIC_Q_TXC + DMNIC_RING_DEV), !=,
                     d->txc_head);
    read_txc(s, q, d->txc_head, &c);
    g_assert_cmphex(!!(c.flags & DMNIC_TXC_F_GEN), ==, d->txc_gen);
    g_assert_cmpuint(c.id, ==, id);
    g_assert_cmpuint(c.status, ==, status);
    d->txc_head = (d->txc_head + 1) % d->size[TXC];
    if (!d->txc_head) {
        d->txc_gen = !d->txc_gen;
    }
    qwr(s, q, DMNIC_Q_TXC + DMNIC_RING_DRV, d->txc_head);
}

/* the frame that comes out of the cable (skipping RARP announcements) */
static void expect_wire(DN *s, const uint8_t *frame, size_t len)
{
    g_autofree uint8_t *out = g_malloc(FRAME_MAX);
    ssize_t got;

    do {
        got = dl_sock_recv(s->sv[0], out, FRAME_MAX, 5000);
    } while (got >= 14 && lduw_be_p(out + 12) == 0x8035);
    g_assert_cmpint(got, ==, MAX(len, 60));
    g_assert_cmpmem(out, len, frame, len);
}

static void expect_wire_silent(DN *s)
{
    g_autofree uint8_t *out = g_malloc(FRAME_MAX);

    g_assert_cmpint(dl_sock_recv(s->sv[0], out, FRAME_MAX, 100), ==, -1);
}

/* the documented error state; then recover by clearing the enables */
static void expect_qerr(DN *s, unsigned q, bool tx, uint8_t code)
{
    uint32_t st = qrd(s, q, DMNIC_Q_STATUS);

    if (tx) {
        g_assert_true(st & DMNIC_Q_STATUS_TX_ERROR);
        g_assert_true(st & DMNIC_Q_STATUS_TX_QUIESCED);
        g_assert_cmpuint((st >> DMNIC_Q_STATUS_TX_ERR_SHIFT) &
                         DMNIC_Q_STATUS_ERR_MASK, ==, code);
        g_assert_cmpuint(qstat(s, q, DMNIC_Q_TX_ERRORS), >=, 1);
    } else {
        g_assert_true(st & DMNIC_Q_STATUS_RX_ERROR);
        g_assert_true(st & DMNIC_Q_STATUS_RX_QUIESCED);
        g_assert_cmpuint((st >> DMNIC_Q_STATUS_RX_ERR_SHIFT) &
                         DMNIC_Q_STATUS_ERR_MASK, ==, code);
        g_assert_cmpuint(qstat(s, q, DMNIC_Q_RX_ERRORS), >=, 1);
    }
    g_assert_true(rd(s, DMNIC_REG_INT_CAUSE) & DMNIC_INT_QERR);
    g_assert_true(rd(s, DMNIC_REG_ERR_QMAP_LO) & (1u << q));
    qwr(s, q, DMNIC_Q_CTRL, 0);
    g_assert_cmphex(qrd(s, q, DMNIC_Q_STATUS), ==,
                    DMNIC_Q_STATUS_RX_QUIESCED | DMNIC_Q_STATUS_TX_QUIESCED);
    g_assert_cmphex(rd(s, DMNIC_REG_ERR_QMAP_LO), ==, 0);
    wr(s, DMNIC_REG_INT_CAUSE, DMNIC_INT_QERR);
}

static void set_bus_master(DN *s, bool on)
{
    uint16_t cmd = qpci_config_readw(s->dev, PCI_COMMAND);

    cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
    qpci_config_writew(s->dev, PCI_COMMAND, cmd);
}

/* ------------------------------------------------------------------ */
/* QOM helpers                                                         */
/* ------------------------------------------------------------------ */

static void knob(DN *s, const char *prop, const char *val)
{
    qtest_qmp_assert_success(s->qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %s}}",
                             NIC_QOM, prop, val);
}

static void knob_bool(DN *s, const char *prop, bool val)
{
    qtest_qmp_assert_success(s->qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %i}}",
                             NIC_QOM, prop, val);
}

static void knob_fails(DN *s, const char *prop, const char *val)
{
    QDict *rsp = qtest_qmp(s->qts, "{'execute': 'qom-set', 'arguments': {"
                           "'path': %s, 'property': %s, 'value': %s}}",
                           NIC_QOM, prop, val);

    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
}

static char *knob_get(DN *s, const char *prop)
{
    QDict *rsp = qtest_qmp(s->qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", NIC_QOM, prop);
    char *v;

    g_assert_true(qdict_haskey(rsp, "return"));
    v = g_strdup(qdict_get_str(rsp, "return"));
    qobject_unref(rsp);
    return v;
}

static uint64_t injected(DN *s)
{
    QDict *rsp = qtest_qmp(s->qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': 'x-fault-injected'}}",
                           NIC_QOM);
    uint64_t v = qdict_get_uint(rsp, "return");

    qobject_unref(rsp);
    return v;
}

static void expect_knob(DN *s, const char *prop, const char *val)
{
    g_autofree char *v = knob_get(s, prop);

    g_assert_cmpstr(v, ==, val);
}

/* ------------------------------------------------------------------ */
/* Knobs                                                               */
/* ------------------------------------------------------------------ */

/* x-fault-dma-write: RX data / TX completion writes fail -> QERR_DMA */
static void test_dma_write(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 1);
    rx_setup(&s, 1);
    len = tcp_frame(frame, 1000, 1, &hlen);

    knob(&s, "x-fault-dma-write", "1:1");
    expect_knob(&s, "x-fault-dma-write", "1:1");
    inject(&s, frame, len);
    expect_log(&s, "devmem_nic_fault_dma queue 1 DMA write 1");
    expect_log(&s, "queue 1 rx error 5");
    g_assert_cmpuint(cpl_pending(&s, 1), ==, 0);
    /* the spec: nothing consumed, buffers stay with the driver */
    g_assert_cmpuint(qrd(&s, 1, DMNIC_Q_HBR + DMNIC_RING_DEV), ==, 0);
    g_assert_cmpuint(qrd(&s, 1, DMNIC_Q_PBR + DMNIC_RING_DEV), ==, 0);
    g_assert_cmpuint(qstat(&s, 1, DMNIC_Q_RX_PACKETS), ==, 0);
    expect_qerr(&s, 1, false, DMNIC_QERR_DMA);
    expect_knob(&s, "x-fault-dma-write", "");
    /* restart: the same frame goes through */
    rx_setup(&s, 1);
    inject(&s, frame, len);
    expect_rx(&s, 1, frame, len, hlen);

    /* TX: the completion write fails; TXD.DEV stays */
    tx_setup(&s, 2);
    knob(&s, "x-fault-dma-write", "2:1");
    tx_frame(&s, 2, frame, 200, 7);
    expect_qerr(&s, 2, true, DMNIC_QERR_DMA);
    g_assert_cmpuint(qrd(&s, 2, DMNIC_Q_TXD + DMNIC_RING_DEV), ==, 0);
    g_assert_cmpuint(injected(&s), ==, 2);
    dn_stop(&s);
}

/* x-fault-dma-read: descriptor / TX data reads fail; N=2 survives a restart */
static void test_dma_read(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    int i;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 3);
    len = tcp_frame(frame, 3000, 2, &hlen);
    knob(&s, "x-fault-dma-read", "3:2");
    for (i = 0; i < 2; i++) {
        rx_setup(&s, 3);
        inject(&s, frame, len);
        expect_qerr(&s, 3, false, DMNIC_QERR_DMA);
        expect_log(&s, "descriptor read");
    }
    rx_setup(&s, 3);
    inject(&s, frame, len);
    expect_rx(&s, 3, frame, len, hlen);

    /* TX: nothing is sent when the descriptor cannot be read */
    tx_setup(&s, 0);
    knob(&s, "x-fault-dma-read", "0:1");
    tx_frame(&s, 0, frame, len, 1);
    expect_wire_silent(&s);
    expect_qerr(&s, 0, true, DMNIC_QERR_DMA);
    tx_setup(&s, 0);
    tx_frame(&s, 0, frame, len, 2);
    expect_wire(&s, frame, len);
    expect_txc(&s, 0, 2, DMNIC_TXC_S_OK);
    g_assert_cmpuint(injected(&s), ==, 3);
    dn_stop(&s);
}

/* x-fault-drop-cpl: packet handled, completion lost */
static void test_drop_cpl(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    Cpl c;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 2);
    rx_setup(&s, 2);
    tx_setup(&s, 2);
    len = tcp_frame(frame, 500, 3, &hlen);

    knob(&s, "x-fault-drop-cpl", "2:1");
    inject(&s, frame, len);
    expect_log(&s, "completion drop");
    /* placed and counted, buffers consumed, but no completion */
    g_assert_cmpuint(cpl_pending(&s, 2), ==, 0);
    g_assert_cmpuint(qrd(&s, 2, DMNIC_Q_HBR + DMNIC_RING_DEV), ==, 1);
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_RX_PACKETS), ==, 1);
    g_assert_true(qrd(&s, 2, DMNIC_Q_INT_CAUSE) & DMNIC_Q_INT_RX);
    /* the next packet completes in the same slot with buffer 1 */
    inject(&s, frame, len);
    read_cpl(&s, 2, 0, &c);
    g_assert_cmpuint(c.hdr_id, ==, 1);
    g_assert_cmpuint(c.pay_id, ==, 1);
    g_assert_false(qrd(&s, 2, DMNIC_Q_STATUS) & DMNIC_Q_STATUS_RX_ERROR);

    /* TX: sent on the wire, no completion; the next one completes */
    knob(&s, "x-fault-drop-cpl", "2:1");
    tx_frame(&s, 2, frame, 100, 0x11);
    expect_wire(&s, frame, 100);
    g_assert_cmpuint(qrd(&s, 2, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, 0);
    g_assert_cmpuint(qrd(&s, 2, DMNIC_Q_TXD + DMNIC_RING_DEV), ==, 1);
    tx_frame(&s, 2, frame, 100, 0x12);
    expect_wire(&s, frame, 100);
    expect_txc(&s, 2, 0x12, DMNIC_TXC_S_OK);
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_TX_PACKETS), ==, 2);
    g_assert_cmpuint(injected(&s), ==, 2);
    dn_stop(&s);
}

/* x-fault-corrupt-cpl: one field wrong, GEN and the ring still right */
static void test_corrupt_cpl(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    Txc t;
    Cpl c;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 1);
    rx_setup(&s, 1);
    tx_setup(&s, 1);
    len = tcp_frame(frame, 700, 4, &hlen);

    knob_fails(&s, "x-fault-corrupt-cpl", "1:1:colour");
    knob(&s, "x-fault-corrupt-cpl", "1:1");
    expect_knob(&s, "x-fault-corrupt-cpl", "1:1:id");
    inject(&s, frame, len);
    read_cpl(&s, 1, 0, &c);
    g_assert_cmphex(c.hdr_id, ==, 0x8000);
    g_assert_cmphex(c.pay_id, ==, 0x8000);
    g_assert_true(c.flags & DMNIC_RXC_F_GEN);
    g_assert_cmpuint(c.pkt_len, ==, len);

    knob(&s, "x-fault-corrupt-cpl", "1:1:len");
    inject(&s, frame, len);
    read_cpl(&s, 1, 1, &c);
    g_assert_cmphex(c.pkt_len, ==, 0xffff0000 | len);
    g_assert_cmphex(c.pay_len, ==, 0xffff0000 | (len - hlen));
    g_assert_cmpuint(c.hdr_id, ==, 1);

    knob(&s, "x-fault-corrupt-cpl", "1:1:flags");
    inject(&s, frame, len);
    read_cpl(&s, 1, 2, &c);
    g_assert_false(c.flags & DMNIC_RXC_F_SOP);
    g_assert_false(c.flags & DMNIC_RXC_F_EOP);
    g_assert_true(c.flags & DMNIC_RXC_F_GEN);
    /* used up: clean again */
    inject(&s, frame, len);
    read_cpl(&s, 1, 3, &c);
    g_assert_true(c.flags & DMNIC_RXC_F_SOP);
    g_assert_true(c.flags & DMNIC_RXC_F_EOP);
    g_assert_cmpuint(c.hdr_id, ==, 3);
    expect_log(&s, "completion corrupt");

    knob(&s, "x-fault-corrupt-cpl", "1:1:flags");
    tx_frame(&s, 1, frame, 80, 5);
    read_txc(&s, 1, 0, &t);
    g_assert_cmphex(t.status, ==, 0xff);
    g_assert_cmpuint(t.id, ==, 5);
    g_assert_true(t.flags & DMNIC_TXC_F_GEN);
    knob(&s, "x-fault-corrupt-cpl", "1:1:id");
    tx_frame(&s, 1, frame, 80, 6);
    read_txc(&s, 1, 1, &t);
    g_assert_cmphex(t.id, ==, 0x8006);
    g_assert_cmpuint(injected(&s), ==, 5);
    dn_stop(&s);
}

/* x-fault-restart-fail: enabling RX/TX fails with a queue error */
static void test_restart_fail(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 2);
    len = tcp_frame(frame, 300, 5, &hlen);
    knob(&s, "x-fault-restart-fail", "2:2");
    expect_knob(&s, "x-fault-restart-fail", "2:2:5");
    rx_setup(&s, 2);
    expect_log(&s, "enable fails with code 5");
    expect_log(&s, "queue 2 rx error 5");
    /* frames steered there are dropped while in error */
    inject(&s, frame, len);
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_RX_DROP_DISABLED), ==, 1);
    expect_qerr(&s, 2, false, DMNIC_QERR_DMA);
    tx_setup(&s, 2);
    expect_qerr(&s, 2, true, DMNIC_QERR_DMA);
    /* the third enable works */
    rx_setup(&s, 2);
    inject(&s, frame, len);
    expect_rx(&s, 2, frame, len, hlen);

    /* another code */
    knob(&s, "x-fault-restart-fail", "3:1:1");
    rx_setup(&s, 3);
    expect_qerr(&s, 3, false, DMNIC_QERR_BAD_RING);
    knob_fails(&s, "x-fault-restart-fail", "3:1:0");
    knob_fails(&s, "x-fault-restart-fail", "3:1:256");
    g_assert_cmpuint(injected(&s), ==, 3);
    dn_stop(&s);
}

/* x-fault-stall: no progress, not an error; resuming picks up */
static void test_stall(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 1);
    rx_setup(&s, 1);
    tx_setup(&s, 1);
    len = tcp_frame(frame, 400, 6, &hlen);

    knob(&s, "x-fault-stall", "1:1");
    expect_knob(&s, "x-fault-stall", "1:1");
    tx_frame(&s, 1, frame, len, 1);
    tx_frame(&s, 1, frame, len, 2);
    inject(&s, frame, len);
    expect_log(&s, "stalled");
    expect_wire_silent(&s);
    g_assert_cmpuint(qrd(&s, 1, DMNIC_Q_TXD + DMNIC_RING_DEV), ==, 0);
    g_assert_cmpuint(cpl_pending(&s, 1), ==, 0);
    g_assert_cmpuint(qstat(&s, 1, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    /* a stall is not an error and not a quiesce */
    g_assert_cmphex(qrd(&s, 1, DMNIC_Q_STATUS), ==, 0);
    /* other queues are not affected */
    rx_setup(&s, 0);
    steer_all_to(&s, 0);
    inject(&s, frame, len);
    expect_rx(&s, 0, frame, len, hlen);
    steer_all_to(&s, 1);

    knob(&s, "x-fault-stall", "1:0");
    expect_knob(&s, "x-fault-stall", "");
    expect_wire(&s, frame, len);
    expect_wire(&s, frame, len);
    expect_txc(&s, 1, 1, DMNIC_TXC_S_OK);
    expect_txc(&s, 1, 2, DMNIC_TXC_S_OK);
    inject(&s, frame, len);
    expect_rx(&s, 1, frame, len, hlen);

    /* a stalled queue can still be disabled (quiesced) */
    knob(&s, "x-fault-stall", "1:1");
    qwr(&s, 1, DMNIC_Q_CTRL, 0);
    g_assert_cmphex(qrd(&s, 1, DMNIC_Q_STATUS), ==,
                    DMNIC_Q_STATUS_RX_QUIESCED | DMNIC_Q_STATUS_TX_QUIESCED);
    dn_stop(&s);
}

/* x-fault-delay-cpl: completions come NS of virtual time late */
static void test_delay_cpl(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    g_autofree uint8_t *frame2 = g_malloc(FRAME_MAX);
    size_t len, len2, hlen;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 2);
    rx_setup(&s, 2);
    tx_setup(&s, 2);
    len = tcp_frame(frame, 800, 7, &hlen);
    len2 = tcp_frame(frame2, 800, 8, &hlen);

    knob(&s, "x-fault-delay-cpl", "2:1000000");
    inject(&s, frame, len);
    qtest_clock_step(s.qts, 500000);
    inject(&s, frame2, len2);
    expect_log(&s, "delayed");
    g_assert_cmpuint(cpl_pending(&s, 2), ==, 0);
    qtest_clock_step(s.qts, 499999);
    g_assert_cmpuint(cpl_pending(&s, 2), ==, 0);
    qtest_clock_step(s.qts, 1);
    expect_rx(&s, 2, frame, len, hlen);
    g_assert_cmpuint(cpl_pending(&s, 2), ==, 0);
    qtest_clock_step(s.qts, 500000);
    expect_rx(&s, 2, frame2, len2, hlen);

    /* TX: processing starts NS after the doorbell */
    tx_frame(&s, 2, frame, 120, 3);
    tx_frame(&s, 2, frame, 130, 4);
    expect_wire_silent(&s);
    g_assert_cmpuint(qrd(&s, 2, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, 0);
    qtest_clock_step(s.qts, 1000000);
    expect_wire(&s, frame, 120);
    expect_wire(&s, frame, 130);
    expect_txc(&s, 2, 3, DMNIC_TXC_S_OK);
    expect_txc(&s, 2, 4, DMNIC_TXC_S_OK);

    /* switching the delay off releases what is held, in order */
    inject(&s, frame, len);
    knob(&s, "x-fault-delay-cpl", "2:0");
    expect_rx(&s, 2, frame, len, hlen);

    /* a device reset drops held frames: no DMA after the reset */
    knob(&s, "x-fault-delay-cpl", "2:1000");
    inject(&s, frame, len);
    wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    s.frames = 0;
    qtest_clock_step(s.qts, 10000);
    /* released after the reset it would count as DROP_DISABLED */
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_RX_DROP_DISABLED), ==, 0);
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_RX_PACKETS), ==, 0);
    /* the knob itself survives the reset */
    expect_knob(&s, "x-fault-delay-cpl", "2:1000");
    dn_stop(&s);
}

/* x-fault-link-down and x-fault-link-flap */
static void test_link(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    int i;
    DN s;

    dn_start(&s, NULL);
    qpci_msix_enable(s.dev);
    steer_all_to(&s, 0);
    rx_setup(&s, 0);
    tx_setup(&s, 0);
    len = tcp_frame(frame, 100, 9, &hlen);
    g_assert_true(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);

    knob_bool(&s, "x-fault-link-down", true);
    expect_log(&s, "link up 0");
    g_assert_false(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    g_assert_true(rd(&s, DMNIC_REG_INT_CAUSE) & DMNIC_INT_LINK);
    g_assert_true(qpci_msix_pending(s.dev, NQ));
    wr(&s, DMNIC_REG_INT_CAUSE, DMNIC_INT_LINK);
    /* documented link-down behaviour */
    inject(&s, frame, len);
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_DROP_LINK), ==, 1);
    g_assert_cmpuint(cpl_pending(&s, 0), ==, 0);
    tx_frame(&s, 0, frame, len, 1);
    expect_txc(&s, 0, 1, DMNIC_TXC_S_LINK_DOWN);
    expect_wire_silent(&s);
    knob_bool(&s, "x-fault-link-down", false);
    g_assert_true(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    g_assert_true(rd(&s, DMNIC_REG_INT_CAUSE) & DMNIC_INT_LINK);
    wr(&s, DMNIC_REG_INT_CAUSE, DMNIC_INT_LINK);
    inject(&s, frame, len);
    expect_rx(&s, 0, frame, len, hlen);

    /* 3 flaps of 1 ms in each state */
    knob(&s, "x-fault-link-flap", "3:1000000");
    for (i = 0; i < 6; i++) {
        bool up = i & 1;

        g_assert_cmphex(!!(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP),
                        ==, up);
        g_assert_true(rd(&s, DMNIC_REG_INT_CAUSE) & DMNIC_INT_LINK);
        wr(&s, DMNIC_REG_INT_CAUSE, DMNIC_INT_LINK);
        if (!up) {
            inject(&s, frame, len);
        }
        qtest_clock_step(s.qts, 1000000);
    }
    g_assert_true(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_DROP_LINK), ==, 4);
    qtest_clock_step(s.qts, 10000000);
    g_assert_cmphex(rd(&s, DMNIC_REG_INT_CAUSE), ==, 0);
    expect_knob(&s, "x-fault-link-flap", "0:1000000");
    expect_log(&s, "link up 1, 0 transitions left");

    /* all at once: ends up, INT_LINK latched */
    knob(&s, "x-fault-link-flap", "5:0");
    g_assert_true(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    g_assert_true(rd(&s, DMNIC_REG_INT_CAUSE) & DMNIC_INT_LINK);
    g_assert_cmpuint(injected(&s), ==, 1 + 3 + 5);
    knob_fails(&s, "x-fault-link-flap", "x");
    knob_fails(&s, "x-fault-link-flap", "1:");
    dn_stop(&s);
}

/* knobs from the human monitor, and values that must be refused */
static void test_hmp_and_bad_values(void)
{
    g_autofree char *r = NULL;
    DN s;

    dn_start(&s, NULL);
    r = qtest_hmp(s.qts, "qom-set " NIC_QOM " x-fault-stall 3:1");
    g_assert_cmpstr(r, ==, "");
    expect_knob(&s, "x-fault-stall", "3:1");
    g_free(r);
    r = qtest_hmp(s.qts, "qom-set " NIC_QOM " x-fault-link-down on");
    g_assert_cmpstr(r, ==, "");
    g_assert_false(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    g_free(r);
    r = qtest_hmp(s.qts, "qom-get " NIC_QOM " x-fault-stall");
    g_assert_nonnull(strstr(r, "3:1"));

    knob_fails(&s, "x-fault-dma-read", "4:1");      /* queue >= NQ */
    knob_fails(&s, "x-fault-dma-read", "1");
    knob_fails(&s, "x-fault-dma-read", "1:x");
    knob_fails(&s, "x-fault-dma-read", "1:1:1");
    knob_fails(&s, "x-fault-dma-read", "1:4294967296");
    knob_fails(&s, "x-fault-delay-cpl", "-1:5");
    knob(&s, "x-fault-dma-read", "0x1:0x10");
    expect_knob(&s, "x-fault-dma-read", "1:16");
    knob(&s, "x-fault-dma-read", "2:3");
    expect_knob(&s, "x-fault-dma-read", "1:16,2:3");
    g_assert_cmpuint(injected(&s), ==, 1);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* QEMU's own means                                                    */
/* ------------------------------------------------------------------ */

/* bus mastering off while RX and TX run: DMA errors, then recovery */
static void test_bus_master_off(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 1);
    rx_setup(&s, 1);
    tx_setup(&s, 1);
    len = tcp_frame(frame, 1400, 10, &hlen);
    inject(&s, frame, len);
    expect_rx(&s, 1, frame, len, hlen);
    tx_frame(&s, 1, frame, len, 1);
    expect_wire(&s, frame, len);
    expect_txc(&s, 1, 1, DMNIC_TXC_S_OK);

    set_bus_master(&s, false);
    inject(&s, frame, len);
    tx_frame(&s, 1, frame, len, 2);
    expect_wire_silent(&s);
    g_assert_cmpuint(qrd(&s, 1, DMNIC_Q_HBR + DMNIC_RING_DEV), ==, 1);
    g_assert_cmpuint(qrd(&s, 1, DMNIC_Q_TXD + DMNIC_RING_DEV), ==, 1);
    g_assert_cmpuint(qstat(&s, 1, DMNIC_Q_RX_PACKETS), ==, 1);
    expect_log(&s, "queue 1 rx error 5");
    expect_log(&s, "queue 1 tx error 5");
    g_assert_true(qrd(&s, 1, DMNIC_Q_STATUS) & DMNIC_Q_STATUS_TX_ERROR);
    g_assert_cmpuint(qstat(&s, 1, DMNIC_Q_TX_ERRORS), ==, 1);
    expect_qerr(&s, 1, false, DMNIC_QERR_DMA);

    set_bus_master(&s, true);
    rx_setup(&s, 1);
    tx_setup(&s, 1);
    inject(&s, frame, len);
    expect_rx(&s, 1, frame, len, hlen);
    tx_frame(&s, 1, frame, len, 3);
    expect_wire(&s, frame, len);
    expect_txc(&s, 1, 3, DMNIC_TXC_S_OK);
    dn_stop(&s);
}

/* device and system reset mid-traffic */
static void test_reset_mid_traffic(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    uint8_t canary[HBUF_LEN], out[HBUF_LEN];
    size_t len, hlen;
    unsigned q;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 2);
    rx_setup(&s, 2);
    tx_setup(&s, 2);
    len = tcp_frame(frame, 900, 11, &hlen);
    inject(&s, frame, len);
    inject(&s, frame, len);
    g_assert_cmpuint(cpl_pending(&s, 2), ==, 2);
    /* a half-posted TX packet (no EOP) */
    post_txd(&s, 2, galloc(&s, 64), 64, 9, 0);
    ring_doorbell(&s, 2, TXD);
    memset(canary, 0xa5, sizeof(canary));
    qtest_memwrite(s.qts, s.q[2].hbuf[2], canary, sizeof(canary));

    wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_FRAMES), ==, 0);
    s.frames = 0;
    for (q = 0; q < NQ; q++) {
        g_assert_cmphex(qrd(&s, q, DMNIC_Q_STATUS), ==,
                        DMNIC_Q_STATUS_RX_QUIESCED |
                        DMNIC_Q_STATUS_TX_QUIESCED);
        g_assert_cmpuint(qstat(&s, q, DMNIC_Q_RX_PACKETS), ==, 0);
    }
    g_assert_cmpuint(rd(&s, DMNIC_REG_DEFAULT_QUEUE), ==, 0);
    /* MAC and link are kept */
    g_assert_cmphex(rd(&s, DMNIC_REG_MAC_LO), ==, 0x12005452);
    g_assert_true(rd(&s, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    /* no DMA after reset: the next header buffer is untouched */
    steer_all_to(&s, 2);
    inject(&s, frame, len);
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_RX_DROP_DISABLED), ==, 1);
    qtest_memread(s.qts, s.q[2].hbuf[2], out, sizeof(out));
    g_assert_cmpmem(out, sizeof(out), canary, sizeof(canary));
    expect_wire_silent(&s);

    /* system reset with traffic set up again */
    rx_setup(&s, 2);
    inject(&s, frame, len);
    expect_rx(&s, 2, frame, len, hlen);
    qtest_system_reset(s.qts);
    g_free(s.dev);
    dn_map(&s);
    g_assert_cmphex(qrd(&s, 2, DMNIC_Q_CTRL), ==, 0);
    g_assert_cmpuint(qstat(&s, 2, DMNIC_Q_RX_PACKETS), ==, 0);
    memset(&s.q[2], 0, sizeof(s.q[2]));
    steer_all_to(&s, 2);
    rx_setup(&s, 2);
    inject(&s, frame, len);
    expect_rx(&s, 2, frame, len, hlen);
    dn_stop(&s);
}

/*
 * Hot unplug: (1) of the payload peer (fake-accel) while the NIC places
 * payload in its BAR: DMA error, QEMU lives; (2) of the NIC itself with
 * traffic on the cable; a new NIC in the slot works.
 */
static void test_hot_unplug(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    g_autofree char *args = g_strdup_printf(
        "-device fake-accel,id=acc,addr=0x%x,mem-size=1M", ACC_SLOT);
    g_autofree uint8_t *got = g_malloc(PBUF_LEN);
    g_autofree char *slot = g_strdup_printf("0x%x", NIC_SLOT);
    QPCIDevice *acc;
    QPCIBar mem;
    size_t len, hlen;
    unsigned i;
    DN s;

    dn_start(&s, args);
    acc = qpci_device_find(s.qs->pcibus, QPCI_DEVFN(ACC_SLOT, 0));
    g_assert_nonnull(acc);
    qpci_device_enable(acc);
    mem = qpci_iomap(acc, FACCEL_BAR_MEM, NULL);
    steer_all_to(&s, 3);
    /* payload buffers in the accelerator's BAR2 */
    for (i = 0; i < MAX_BUFS; i++) {
        s.q[3].pbuf[i] = mem.addr + i * PBUF_LEN;
    }
    rx_setup(&s, 3);
    len = tcp_frame(frame, 2000, 12, &hlen);
    inject(&s, frame, len);
    expect_rx(&s, 3, frame, len, hlen);
    qpci_memread(acc, mem, 0, got, len - hlen);
    g_assert_cmpmem(got, len - hlen, frame + hlen, len - hlen);

    qpci_unplug_acpi_device_test(s.qts, "acc", ACC_SLOT);
    g_free(acc);
    inject(&s, frame, len);
    expect_qerr(&s, 3, false, DMNIC_QERR_DMA);
    expect_log(&s, "failed");
    g_assert_true(qtest_probe_child(s.qts));

    /* unplug the NIC itself, with frames still coming */
    rx_setup(&s, 3);
    dl_sock_send(s.sv[0], frame, len);
    qpci_unplug_acpi_device_test(s.qts, "nic", NIC_SLOT);
    g_free(s.dev);
    s.dev = NULL;
    for (i = 0; i < 8; i++) {
        dl_sock_send(s.sv[0], frame, len);
    }
    g_assert_true(qtest_probe_child(s.qts));
    /* a new NIC on the same backend and slot */
    qtest_qmp_device_add(s.qts, "devmem-nic", "nic2",
                         "{'addr': %s, 'netdev': 'n0', 'queues': %d}",
                         slot, NQ);
    /* frames still in flight at plug time are dropped (queues off) */
    g_usleep(200 * 1000);
    dn_map(&s);
    memset(s.q, 0, sizeof(s.q));
    steer_all_to(&s, 0);
    rx_setup(&s, 0);
    inject(&s, frame, len);
    expect_rx(&s, 0, frame, len, hlen);
    dn_stop(&s);
}

/*
 * The accelerator's fault window, set from QOM, over the payload buffers
 * the NIC writes into: the NIC reports QERR_DMA and keeps its buffers, the
 * accelerator counts the hits; with the window off traffic flows again.
 */
static void test_peer_window(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    g_autofree char *args = g_strdup_printf(
        "-device fake-accel,id=acc,addr=0x%x,mem-size=1M", ACC_SLOT);
    QPCIDevice *acc;
    QPCIBar regs, mem;
    size_t len, hlen;
    unsigned i;
    DN s;

    dn_start(&s, args);
    acc = qpci_device_find(s.qs->pcibus, QPCI_DEVFN(ACC_SLOT, 0));
    g_assert_nonnull(acc);
    qpci_device_enable(acc);
    regs = qpci_iomap(acc, FACCEL_BAR_REGS, NULL);
    mem = qpci_iomap(acc, FACCEL_BAR_MEM, NULL);
    steer_all_to(&s, 2);
    for (i = 0; i < MAX_BUFS; i++) {
        s.q[2].pbuf[i] = mem.addr + i * PBUF_LEN;
    }
    rx_setup(&s, 2);
    len = tcp_frame(frame, 3000, 18, &hlen);
    inject(&s, frame, len);
    expect_rx(&s, 2, frame, len, hlen);

    /* payload buffer 1 is next: put the window over it */
    qtest_qmp_assert_success(s.qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': '/machine/peripheral/acc', "
                             "'property': 'x-fault-window', "
                             "'value': '0x1000:0x1000'}}");
    g_assert_true(qpci_io_readl(acc, regs, FACCEL_REG_STATUS) &
                  FACCEL_STATUS_FAULT_ACTIVE);
    inject(&s, frame, len);
    g_assert_cmpuint(qpci_io_readl(acc, regs, FACCEL_REG_FAULT_HITS), >, 0);
    g_assert_cmpuint(cpl_pending(&s, 2), ==, 0);
    g_assert_cmpuint(qrd(&s, 2, DMNIC_Q_PBR + DMNIC_RING_DEV), ==, 1);
    expect_log(&s, "queue 2 rx error 5");
    expect_qerr(&s, 2, false, DMNIC_QERR_DMA);

    qtest_qmp_assert_success(s.qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': '/machine/peripheral/acc', "
                             "'property': 'x-fault-window', "
                             "'value': 'off'}}");
    rx_setup(&s, 2);
    inject(&s, frame, len);
    expect_rx(&s, 2, frame, len, hlen);
    g_free(acc);
    dn_stop(&s);
}

/* stop/cont: frames wait in the net layer, nothing is lost or reordered */
static void test_stop_cont(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    g_autofree uint8_t *frame2 = g_malloc(FRAME_MAX);
    gint64 end;
    size_t len, len2, hlen;
    DN s;

    dn_start(&s, NULL);
    steer_all_to(&s, 1);
    rx_setup(&s, 1);
    tx_setup(&s, 1);
    len = tcp_frame(frame, 600, 13, &hlen);
    len2 = tcp_frame(frame2, 600, 14, &hlen);
    inject(&s, frame, len);

    qtest_qmp_assert_success(s.qts, "{'execute': 'stop'}");
    qtest_qmp_eventwait(s.qts, "STOP");
    dl_sock_send(s.sv[0], frame2, len2);
    dl_sock_send(s.sv[0], frame, len);
    g_usleep(200 * 1000);
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_FRAMES), ==, s.frames);
    /* knobs work while stopped */
    knob(&s, "x-fault-corrupt-cpl", "1:1:len");
    knob(&s, "x-fault-corrupt-cpl", "1:0");
    qtest_qmp_assert_success(s.qts, "{'execute': 'cont'}");
    qtest_qmp_eventwait(s.qts, "RESUME");
    end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (rd64(&s, DMNIC_REG_G_RX_FRAMES) < s.frames + 2) {
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(1000);
    }
    expect_rx(&s, 1, frame, len, hlen);
    expect_rx(&s, 1, frame2, len2, hlen);
    expect_rx(&s, 1, frame, len, hlen);
    tx_frame(&s, 1, frame2, len2, 4);
    expect_wire(&s, frame2, len2);
    expect_txc(&s, 1, 4, DMNIC_TXC_S_OK);
    dn_stop(&s);
}

static void wait_migration_done(QTestState *qts)
{
    gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    for (;;) {
        QDict *rsp = qtest_qmp(qts, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "none";
        bool done = !strcmp(st, "completed");

        g_assert_cmpstr(st, !=, "failed");
        qobject_unref(rsp);
        if (done) {
            return;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(20 * 1000);
    }
}

/*
 * Save to a file, load in a second QEMU: queue state (rings, indices,
 * pending completions, GEN phase), flow rules, RSS and counters are kept;
 * host-side fault knobs are not migrated.
 */
static void test_migration_file(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    g_autofree char *path = g_strdup_printf("%s/dmnic-fault-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    size_t len, hlen;
    uint64_t drops, frames;
    QDict *rsp;
    DN s, d;
    int i;

    dn_start(&s, NULL);
    rx_setup(&s, 2);
    tx_setup(&s, 2);
    /* rule 9: tcp dport 2000 -> queue 2; all else to queue 3 (disabled) */
    steer_all_to(&s, 3);
    wr(&s, DMNIC_REG_FS_INDEX, 9);
    wr(&s, DMNIC_REG_FS_CTRL, DMNIC_FS_CTRL_VALID |
       (DMNIC_FS_L4_TCP << DMNIC_FS_CTRL_L4_SHIFT));
    wr(&s, DMNIC_REG_FS_ACTION, 2);
    wr(&s, DMNIC_REG_FS_PORTS, 2000u << 16);
    wr(&s, DMNIC_REG_FS_PORTS_MASK, 0xffffu << 16);
    wr(&s, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_WRITE);
    wr(&s, DMNIC_REG_RSS_INDIR + 4 * 77, 1);
    qwr(&s, 2, DMNIC_Q_HDS_THRESH, 33);
    len = tcp_frame(frame, 1200, 15, &hlen);
    /* wrap the completion ring once so GEN is 0 in the second pass */
    for (i = 0; i < 130; i++) {
        inject(&s, frame, len);
        expect_rx(&s, 2, frame, len, hlen);
        post_bufs(&s, 2, 1);
    }
    g_assert_false(s.q[2].rxc_gen);
    inject(&s, frame, len);             /* left pending */
    frames = rd64(&s, DMNIC_REG_G_RX_FRAMES);
    drops = rd64(&s, DMNIC_REG_G_RX_RUNT);
    knob(&s, "x-fault-stall", "2:1");
    knob_bool(&s, "x-fault-link-down", true);

    rsp = qtest_qmp(s.qts, "{'execute': 'migrate', 'arguments': {"
                    "'uri': %s}}", uri);
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    wait_migration_done(s.qts);

    d = s;
    d.log = NULL;
    g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, d.sv), !=, -1);
    d.qs = qtest_pc_boot("-nodefaults -netdev socket,id=n0,fd=%d "
                         "-device devmem-nic,id=nic,addr=0x%x,netdev=n0,"
                         "mac=52:54:00:12:34:56,queues=%d -incoming %s",
                         d.sv[1], NIC_SLOT, NQ, uri);
    d.qts = d.qs->qts;
    migrate_allocator(&s.qs->alloc, &d.qs->alloc);
    wait_migration_done(d.qts);
    qtest_qmp_assert_success(d.qts, "{'execute': 'cont'}");
    unlink(path);
    d.dev = qpci_device_find(d.qs->pcibus, QPCI_DEVFN(NIC_SLOT, 0));
    d.regs = s.regs;

    g_assert_cmpuint(rd64(&d, DMNIC_REG_G_RX_FRAMES), ==, frames);
    g_assert_cmpuint(rd64(&d, DMNIC_REG_G_RX_RUNT), ==, drops);
    g_assert_cmpuint(qstat(&d, 2, DMNIC_Q_RX_PACKETS), ==, 131);
    g_assert_cmpuint(qstat(&d, 2, DMNIC_Q_RX_BYTES), ==, 131 * len);
    g_assert_cmpuint(qrd(&d, 2, DMNIC_Q_HDS_THRESH), ==, 33);
    g_assert_cmpuint(rd(&d, DMNIC_REG_RSS_INDIR + 4 * 77), ==, 1);
    g_assert_cmpuint(rd(&d, DMNIC_REG_DEFAULT_QUEUE), ==, 3);
    wr(&d, DMNIC_REG_FS_INDEX, 9);
    wr(&d, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_READ);
    g_assert_cmphex(rd(&d, DMNIC_REG_FS_ACTION), ==, 2);
    /* host-side knobs stayed behind: link up, not stalled */
    expect_knob(&d, "x-fault-stall", "");
    g_assert_true(rd(&d, DMNIC_REG_STATUS) & DMNIC_STATUS_LINK_UP);
    /* the pending completion, in the second GEN phase */
    d.frames = frames;
    expect_rx(&d, 2, frame, len, hlen);
    inject(&d, frame, len);
    expect_rx(&d, 2, frame, len, hlen);
    tx_frame(&d, 2, frame, len, 8);
    expect_wire(&d, frame, len);
    expect_txc(&d, 2, 8, DMNIC_TXC_S_OK);

    g_free(d.dev);
    qtest_shutdown(d.qs);
    close(d.sv[0]);
    close(d.sv[1]);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* Guest mistakes not covered by devmem-nic-test.c: QEMU survives, the */
/* documented reaction happens and a guest error is logged             */
/* ------------------------------------------------------------------ */

static void test_guest_errors(void)
{
    g_autofree uint8_t *frame = g_malloc(FRAME_MAX);
    size_t len, hlen;
    uint64_t b;
    DN s;

    dn_start(&s, NULL);
    len = tcp_frame(frame, 500, 16, &hlen);

    /* registers */
    g_assert_cmphex(rd(&s, 0x0ffc), ==, 0);
    expect_log(&s, "read of unknown register 0xffc");
    wr(&s, 0x0ff0, 1);
    expect_log(&s, "write to unknown or read-only register 0xff0");
    wr(&s, DMNIC_REG_ID, 0);
    expect_log(&s, "write to unknown or read-only register 0x0");
    g_assert_cmphex(rd(&s, DMNIC_REG_ID), ==, DMNIC_ID_MAGIC);
    /* a queue that does not exist (queues=4) */
    wr(&s, DMNIC_QREG(NQ, DMNIC_Q_CTRL), 3);
    expect_log(&s, "unknown or read-only register");
    g_assert_cmphex(rd(&s, DMNIC_QREG(NQ + 5, DMNIC_Q_STATUS)), ==, 0);
    expect_log(&s, "read of unknown register");
    /* sizes other than 4 and 8 are refused by the bus */
    qpci_io_writeb(s.dev, s.regs, DMNIC_REG_DEFAULT_QUEUE, 1);
    expect_log(&s, "Invalid write at addr 0x208, size 1");
    qpci_io_writew(s.dev, s.regs, DMNIC_REG_DEFAULT_QUEUE, 1);
    expect_log(&s, "Invalid write at addr 0x208, size 2");
    g_assert_cmpuint(rd(&s, DMNIC_REG_DEFAULT_QUEUE), ==, 0);
    qwr(&s, 0, DMNIC_Q_HDS_THRESH, 0x7fffffff);
    expect_log(&s, "hds-thresh");
    g_assert_cmpuint(qrd(&s, 0, DMNIC_Q_HDS_THRESH), ==, 65535);
    /* flow table */
    wr(&s, DMNIC_REG_FS_INDEX, 256);
    wr(&s, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_WRITE);
    expect_log(&s, "flow rule index 256 out of range");
    wr(&s, DMNIC_REG_FS_INDEX, 0);
    wr(&s, DMNIC_REG_FS_CMD, 77);
    expect_log(&s, "unknown flow command 77");
    /* a rule naming an RSS context that does not exist is not written */
    wr(&s, DMNIC_REG_FS_INDEX, 5);
    wr(&s, DMNIC_REG_FS_CTRL, DMNIC_FS_CTRL_VALID);
    wr(&s, DMNIC_REG_FS_ACTION, DMNIC_FS_ACTION_RSS |
       (DMNIC_RSS_NUM_CTX << DMNIC_FS_ACTION_CTX_SHIFT));
    wr(&s, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_WRITE);
    expect_log(&s, "RSS context 8 out of range, rule not written");
    wr(&s, DMNIC_REG_FS_ACTION, 0);
    wr(&s, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_READ);
    g_assert_cmphex(rd(&s, DMNIC_REG_FS_CTRL), ==, 0);
    /* RSS context tables and hash-field registers past the last one */
    wr(&s, DMNIC_RSS_CTX_INDIR(DMNIC_RSS_NUM_CTX, 0), 1);
    expect_log(&s, "unknown or read-only register");
    g_assert_cmphex(rd(&s, DMNIC_RSS_CTX_INDIR(DMNIC_RSS_NUM_CTX, 0)), ==, 0);
    expect_log(&s, "read of unknown register");
    /* an RSS context whose queue base points past the queues */
    wr(&s, DMNIC_REG_FS_INDEX, 6);
    wr(&s, DMNIC_REG_FS_CTRL, DMNIC_FS_CTRL_VALID);
    wr(&s, DMNIC_REG_FS_ACTION, DMNIC_FS_ACTION_RSS | NQ |
       (3 << DMNIC_FS_ACTION_CTX_SHIFT));
    wr(&s, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_WRITE);
    inject(&s, frame, len);
    expect_log(&s, "frame steered to queue");
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_DROP_BADQ), ==, 1);
    wr(&s, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_CLEAR_ALL);
    /* steering to queues that do not exist */
    steer_all_to(&s, NQ + 10);
    inject(&s, frame, len);
    expect_log(&s, "steered to queue 14");
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_DROP_BADQ), ==, 2);
    wr(&s, DMNIC_REG_RSS_CTRL, DMNIC_RSS_CTRL_ENABLE);
    for (int i = 0; i < 128; i++) {
        wr(&s, DMNIC_REG_RSS_INDIR + 4 * i, 0xffff);
    }
    inject(&s, frame, len);
    expect_log(&s, "steered to queue 65535");
    g_assert_cmpuint(rd64(&s, DMNIC_REG_G_RX_DROP_BADQ), ==, 3);
    steer_all_to(&s, 1);

    /* ring programming */
    ring_setup(&s, 1, HBR, 64);
    ring_setup(&s, 1, PBR, 64);
    ring_setup(&s, 1, RXC, 64);
    qwr(&s, 1, DMNIC_Q_RXC + DMNIC_RING_BASE_LO, s.q[1].ring[RXC] + 8);
    qwr(&s, 1, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE);
    expect_log(&s, "rxc ring base");
    expect_qerr(&s, 1, false, DMNIC_QERR_BAD_RING);
    qwr(&s, 1, DMNIC_Q_RXC + DMNIC_RING_BASE_LO, s.q[1].ring[RXC]);
    qwr(&s, 1, DMNIC_Q_PBR + DMNIC_RING_DRV, 64);
    qwr(&s, 1, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE);
    expect_log(&s, "pbr tail 64 >= size 64");
    expect_qerr(&s, 1, false, DMNIC_QERR_BAD_INDEX);
    rx_setup(&s, 1);
    qwr(&s, 1, DMNIC_Q_HBR + DMNIC_RING_SIZE, 8);
    expect_log(&s, "configuration written while enabled");
    g_assert_cmpuint(qrd(&s, 1, DMNIC_Q_HBR + DMNIC_RING_SIZE), ==,
                     MAX_BUFS);
    qwr(&s, 1, DMNIC_Q_RXC + DMNIC_RING_DRV, 1000);
    expect_log(&s, "rxc index 1000 >= size 128");
    expect_qerr(&s, 1, false, DMNIC_QERR_BAD_INDEX);
    /* RX buffer too long, and a payload buffer in the NIC's own BAR0 */
    rx_setup(&s, 1);
    s.q[1].hbr_tail = 0;
    post_rxd(&s, 1, HBR, s.q[1].hbuf[0], 65537, 0);
    inject(&s, frame, len);
    expect_log(&s, "hbr descriptor 0 length 65537");
    expect_qerr(&s, 1, false, DMNIC_QERR_BAD_DESC);
    rx_setup(&s, 1);
    s.q[1].pbr_tail = 0;
    post_rxd(&s, 1, PBR, s.regs.addr + DMNIC_REG_CTRL, PBUF_LEN, 0);
    inject(&s, frame, len);
    expect_qerr(&s, 1, false, DMNIC_QERR_DMA);
    g_assert_cmpuint(rd(&s, DMNIC_REG_NUM_QUEUES), ==, NQ);

    /* TX */
    tx_setup(&s, 1);
    b = galloc(&s, 4096);
    post_txd(&s, 1, b, 65537, 1, DMNIC_TXD_F_EOP);
    ring_doorbell(&s, 1, TXD);
    expect_log(&s, "length 65537");
    expect_qerr(&s, 1, true, DMNIC_QERR_BAD_DESC);
    /* two 40000-byte descriptors: 80000 > 65535 */
    tx_setup(&s, 1);
    b = galloc(&s, 40000);
    post_txd(&s, 1, b, 40000, 1, 0);
    post_txd(&s, 1, b, 40000, 1, DMNIC_TXD_F_EOP);
    ring_doorbell(&s, 1, TXD);
    expect_qerr(&s, 1, true, DMNIC_QERR_TX_TOO_LONG);
    /* TSO over a UDP frame */
    tx_setup(&s, 1);
    {
        DlPktSpec spec;
        uint8_t desc[DMNIC_TXD_SIZE] = { 0 };
        size_t ulen;

        dl_pkt_default(&spec, 4, DL_PROTO_UDP, 3000);
        ulen = dl_pkt_build(&spec, frame, NULL);
        b = galloc(&s, ulen);
        qtest_memwrite(s.qts, b, frame, ulen);
        stq_le_p(desc + DMNIC_TXD_ADDR, b);
        stl_le_p(desc + DMNIC_TXD_LEN, ulen);
        stw_le_p(desc + DMNIC_TXD_FLAGS, DMNIC_TXD_F_EOP | DMNIC_TXD_F_TSO |
                 DMNIC_TXD_F_CSUM);
        stw_le_p(desc + DMNIC_TXD_CSUM_START, 34);
        stw_le_p(desc + DMNIC_TXD_CSUM_OFFSET, 6);
        stw_le_p(desc + DMNIC_TXD_MSS, 1000);
        qtest_memwrite(s.qts, s.q[1].ring[TXD], desc, sizeof(desc));
        s.q[1].txd_tail = 1;
        ring_doorbell(&s, 1, TXD);
    }
    expect_log(&s, "TSO on a frame that is not plain TCP");
    expect_qerr(&s, 1, true, DMNIC_QERR_BAD_DESC);
    expect_wire_silent(&s);
    /* TX data read from the NIC's own BAR0 (re-entrancy) */
    tx_setup(&s, 1);
    post_txd(&s, 1, s.regs.addr, 64, 1, DMNIC_TXD_F_EOP);
    ring_doorbell(&s, 1, TXD);
    expect_log(&s, "data read of 64 bytes");
    expect_qerr(&s, 1, true, DMNIC_QERR_DMA);
    /* TXD ring in unmapped space */
    ring_setup(&s, 1, TXD, 64);
    ring_setup(&s, 1, TXC, 64);
    qwr(&s, 1, DMNIC_Q_TXD + DMNIC_RING_BASE_HI, UNMAPPED_ADDR >> 32);
    qwr(&s, 1, DMNIC_Q_CTRL, DMNIC_Q_CTRL_TX_ENABLE);
    qwr(&s, 1, DMNIC_Q_TXD + DMNIC_RING_DRV, 1);
    expect_log(&s, "descriptor read at 0x7f");
    expect_qerr(&s, 1, true, DMNIC_QERR_DMA);

    /* alive, and a reset brings everything back */
    g_assert_true(qtest_probe_child(s.qts));
    wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    s.frames = 0;
    memset(s.q, 0, sizeof(s.q));
    steer_all_to(&s, 1);
    rx_setup(&s, 1);
    tx_setup(&s, 1);
    len = tcp_frame(frame, 500, 17, &hlen);
    inject(&s, frame, len);
    expect_rx(&s, 1, frame, len, hlen);
    tx_frame(&s, 1, frame, len, 2);
    expect_wire(&s, frame, len);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic-fault/knob/dma-write", test_dma_write);
    qtest_add_func("/devmem-nic-fault/knob/dma-read", test_dma_read);
    qtest_add_func("/devmem-nic-fault/knob/drop-cpl", test_drop_cpl);
    qtest_add_func("/devmem-nic-fault/knob/corrupt-cpl", test_corrupt_cpl);
    qtest_add_func("/devmem-nic-fault/knob/restart-fail", test_restart_fail);
    qtest_add_func("/devmem-nic-fault/knob/stall", test_stall);
    qtest_add_func("/devmem-nic-fault/knob/delay-cpl", test_delay_cpl);
    qtest_add_func("/devmem-nic-fault/knob/link", test_link);
    qtest_add_func("/devmem-nic-fault/knob/hmp-and-bad-values",
                   test_hmp_and_bad_values);
    qtest_add_func("/devmem-nic-fault/bus-master-off", test_bus_master_off);
    qtest_add_func("/devmem-nic-fault/reset-mid-traffic",
                   test_reset_mid_traffic);
    qtest_add_func("/devmem-nic-fault/hot-unplug", test_hot_unplug);
    qtest_add_func("/devmem-nic-fault/peer-window", test_peer_window);
    qtest_add_func("/devmem-nic-fault/stop-cont", test_stop_cont);
    qtest_add_func("/devmem-nic-fault/migration-file", test_migration_file);
    qtest_add_func("/devmem-nic-fault/guest-errors", test_guest_errors);
    return g_test_run();
}
