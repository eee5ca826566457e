/*
 * QTest for the devmem-nic PTP clock and packet timestamps (docs/specs/
 * devmem-nic.rst, "PTP clock and timestamps").  Under qtest the virtual
 * clock moves only when the test steps it, so every expected clock value
 * and timestamp is exact.
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

#define NCPL    128         /* RX completions of dn_rx_rings() */
#define NTXC    64          /* TX completions of dn_tx_setup() */
#define POISON  0xaaaaaaaaaaaaaaaaULL

static void ptp_start(DnState *s)
{
    memset(s, 0, sizeof(*s));
    dn_boot(s, -1, "-device devmem-nic,id=nic,netdev=n0,"
            "mac=52:54:00:12:34:56,queues=4");
    g_assert_true(dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_PTP);
}

static uint64_t ptp_time(DnState *s)
{
    return dn_rd64(s, DMNIC_REG_PTP_TIME_LO);
}

static void ptp_cmd(DnState *s, uint32_t cmd, uint64_t arg)
{
    dn_wr(s, DMNIC_REG_PTP_ARG_LO, arg);
    dn_wr(s, DMNIC_REG_PTP_ARG_HI, arg >> 32);
    dn_wr(s, DMNIC_REG_PTP_CMD, cmd);
}

/* A timestamp array of @n entries filled with POISON */
static uint64_t ts_array(DnState *s, unsigned n)
{
    uint64_t a = dn_galloc(s, n * 8);
    unsigned i;

    for (i = 0; i < n; i++) {
        qtest_writeq(s->qts, a + i * 8, POISON);
    }
    return a;
}

static void test_clock(void)
{
    uint64_t t0, t1;
    DnState s;

    ptp_start(&s);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PTP_MAX_ADJ), ==, 100000000);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PTP_CTRL), ==, 0);
    g_assert_cmpint((int32_t)dn_rd(&s, DMNIC_REG_PTP_ADJ_PPB), ==, 0);

    /* a fresh clock is the virtual clock, and moves with it exactly */
    t0 = qtest_clock_step(s.qts, 1);
    g_assert_cmpuint(ptp_time(&s), ==, t0);
    qtest_clock_step(s.qts, 1000000);
    g_assert_cmpuint(ptp_time(&s), ==, t0 + 1000000);
    g_assert_cmpuint(ptp_time(&s), ==, t0 + 1000000);   /* no drift */

    /* set, then adjust by a negative offset */
    ptp_cmd(&s, DMNIC_PTP_CMD_SET, 1764000000123456789ULL);
    g_assert_cmpuint(ptp_time(&s), ==, 1764000000123456789ULL);
    qtest_clock_step(s.qts, 500);
    g_assert_cmpuint(ptp_time(&s), ==, 1764000000123457289ULL);
    ptp_cmd(&s, DMNIC_PTP_CMD_ADJ, (uint64_t)-1289);
    g_assert_cmpuint(ptp_time(&s), ==, 1764000000123456000ULL);
    ptp_cmd(&s, DMNIC_PTP_CMD_ADJ, 1000000000);
    g_assert_cmpuint(ptp_time(&s), ==, 1764000001123456000ULL);

    /* 0x1'0000'0000 crosses the low word: TIME_HI is the sample's */
    ptp_cmd(&s, DMNIC_PTP_CMD_SET, 0xffffffffULL);
    qtest_clock_step(s.qts, 1);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PTP_TIME_LO), ==, 0);
    qtest_clock_step(s.qts, 0x100000000ULL);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PTP_TIME_HI), ==, 1);
    g_assert_cmphex(dn_rd64(&s, DMNIC_REG_PTP_TIME_LO), ==, 0x200000000ULL);

    /* frequency: +1000 ppm, -250 ppm, clamped */
    t0 = ptp_time(&s);
    dn_wr(&s, DMNIC_REG_PTP_ADJ_PPB, 1000000);
    qtest_clock_step(s.qts, 1000000000);
    t1 = ptp_time(&s);
    g_assert_cmpuint(t1 - t0, ==, 1000000000 + 1000000);
    dn_wr(&s, DMNIC_REG_PTP_ADJ_PPB, (uint32_t)-250000);
    qtest_clock_step(s.qts, 2000000000);
    g_assert_cmpuint(ptp_time(&s) - t1, ==, 2000000000 - 500000);
    dn_wr(&s, DMNIC_REG_PTP_ADJ_PPB, 200000000);
    g_assert_cmpint((int32_t)dn_rd(&s, DMNIC_REG_PTP_ADJ_PPB), ==,
                    100000000);
    dn_wr(&s, DMNIC_REG_PTP_ADJ_PPB, (uint32_t)-200000000);
    g_assert_cmpint((int32_t)dn_rd(&s, DMNIC_REG_PTP_ADJ_PPB), ==,
                    -100000000);

    /* monotonic under the largest slow-down */
    t0 = ptp_time(&s);
    qtest_clock_step(s.qts, 1);
    g_assert_cmpuint(ptp_time(&s), >=, t0);
    qtest_clock_step(s.qts, 1000);
    g_assert_cmpuint(ptp_time(&s), ==, t0 + 1001 - 100);

    /* a device reset keeps the clock and its rate running */
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_RX_TS);
    t0 = ptp_time(&s);
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    g_assert_cmpuint(ptp_time(&s), ==, t0);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PTP_CTRL), ==, 0);
    g_assert_cmpint((int32_t)dn_rd(&s, DMNIC_REG_PTP_ADJ_PPB), ==,
                    -100000000);
    qtest_clock_step(s.qts, 10000);
    g_assert_cmpuint(ptp_time(&s), ==, t0 + 9000);
    dn_stop(&s);
}

/* RX: one stamp per packet, at its SOP completion's index */
static void test_rx_stamps(void)
{
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    DlPktSpec spec;
    DnCpl c;
    uint64_t rxts, t0, t1;
    size_t len;
    unsigned i, n;
    DnState s;

    ptp_start(&s);
    dn_steer_all_to(&s, 0);
    dn_rx_rings(&s, 0, 64);
    rxts = ts_array(&s, NCPL);
    dn_qwr(&s, 0, DMNIC_Q_RXTS_LO, rxts);
    dn_qwr(&s, 0, DMNIC_Q_RXTS_HI, rxts >> 32);
    g_assert_cmphex(dn_qrd(&s, 0, DMNIC_Q_RXTS_LO), ==, (uint32_t)rxts);
    dn_qwr(&s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE);
    /* written while enabled: ignored */
    dn_qwr(&s, 0, DMNIC_Q_RXTS_LO, 0x1000);
    g_assert_cmphex(dn_qrd(&s, 0, DMNIC_Q_RXTS_LO), ==, (uint32_t)rxts);
    dn_post_bufs(&s, 0, 16, 16, 1024);
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_RX_TS);

    /* a 3000-byte payload in three completions */
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 3000);
    len = dl_pkt_build(&spec, frame, NULL);
    ptp_cmd(&s, DMNIC_PTP_CMD_SET, 5000000000ULL);
    t0 = ptp_time(&s);
    dn_inject(&s, frame, len);
    n = dn_cpl_pending(&s, 0);
    g_assert_cmpuint(n, ==, 3);
    for (i = 0; i < n; i++) {
        dn_read_cpl(&s, 0, i, &c);
        g_assert_cmphex(!!(c.flags & DMNIC_RXC_F_TS), ==, i == 0);
        g_assert_cmphex(qtest_readq(s.qts, rxts + i * 8), ==,
                        i ? POISON : t0);
    }
    /* the next packet, 12345 ns later, at index 3 */
    qtest_clock_step(s.qts, 12345);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 100);
    len = dl_pkt_build(&spec, frame, NULL);
    dn_inject(&s, frame, len);
    dn_read_cpl(&s, 0, 3, &c);
    g_assert_true(c.flags & DMNIC_RXC_F_TS);
    t1 = qtest_readq(s.qts, rxts + 3 * 8);
    g_assert_cmpuint(t1, ==, t0 + 12345);

    /* stamping off: no flag, the entry untouched */
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_TX_TS);
    dn_inject(&s, frame, len);
    dn_read_cpl(&s, 0, 4, &c);
    g_assert_false(c.flags & DMNIC_RXC_F_TS);
    g_assert_cmphex(qtest_readq(s.qts, rxts + 4 * 8), ==, POISON);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 3);
    dn_stop(&s);
}

/* An array the device cannot write: QERR_DMA, the completion not written */
static void test_rx_stamp_dma_fault(void)
{
    uint8_t frame[128];
    DlPktSpec spec;
    size_t len;
    DnState s;

    ptp_start(&s);
    dn_steer_all_to(&s, 0);
    dn_rx_rings(&s, 0, 64);
    dn_qwr(&s, 0, DMNIC_Q_RXTS_LO, (uint32_t)DN_UNMAPPED_ADDR);
    dn_qwr(&s, 0, DMNIC_Q_RXTS_HI, DN_UNMAPPED_ADDR >> 32);
    dn_qwr(&s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE);
    dn_post_bufs(&s, 0, 16, 16, 1024);
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_RX_TS);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 50);
    len = dl_pkt_build(&spec, frame, NULL);
    dn_inject(&s, frame, len);
    dn_expect_qerr(&s, 0, false, DMNIC_QERR_DMA);
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    dn_stop(&s);
}

static void post_tx(DnState *s, uint64_t buf, uint16_t id, uint16_t flags)
{
    uint8_t f[100];

    memset(f, id, sizeof(f));
    qtest_memwrite(s->qts, buf, f, sizeof(f));
    dn_post_txd(s, 0, buf, sizeof(f), id, DMNIC_TXD_F_EOP | flags, 0, 0);
    dn_ring_doorbell(s, 0, DN_TXD);
}

/* TX: TXD_F_TS packets are stamped when sent, the others are not */
static void test_tx_stamps(void)
{
    uint8_t out[256];
    uint64_t txts, buf, t0;
    DnTxc t;
    DnState s;

    ptp_start(&s);
    dn_tx_setup(&s, 0);
    txts = ts_array(&s, NTXC);
    dn_qwr(&s, 0, DMNIC_Q_CTRL, 0);
    dn_qwr(&s, 0, DMNIC_Q_TXTS_LO, txts);
    dn_qwr(&s, 0, DMNIC_Q_TXTS_HI, txts >> 32);
    dn_qwr(&s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_TX_ENABLE);
    buf = dn_galloc(&s, 128);
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_TX_TS);
    dn_wr(&s, DMNIC_REG_PTP_ADJ_PPB, 50000);
    qtest_clock_step(s.qts, 777);

    t0 = ptp_time(&s);
    post_tx(&s, buf, 0, DMNIC_TXD_F_TS);
    post_tx(&s, buf, 1, 0);
    qtest_clock_step(s.qts, 1000);
    post_tx(&s, buf, 2, DMNIC_TXD_F_TS);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    dn_read_txc(&s, 0, 0, &t);
    g_assert_true(t.flags & DMNIC_TXC_F_TS);
    g_assert_cmpuint(qtest_readq(s.qts, txts), ==, t0);
    dn_read_txc(&s, 0, 1, &t);
    g_assert_false(t.flags & DMNIC_TXC_F_TS);
    g_assert_cmphex(qtest_readq(s.qts, txts + 8), ==, POISON);
    dn_read_txc(&s, 0, 2, &t);
    g_assert_true(t.flags & DMNIC_TXC_F_TS);
    /* 1000 ns at +50 ppm */
    g_assert_cmpuint(qtest_readq(s.qts, txts + 16), ==, t0 + 1000);

    /* TX stamping off: TXD_F_TS gets nothing */
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_RX_TS);
    post_tx(&s, buf, 3, DMNIC_TXD_F_TS);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    dn_read_txc(&s, 0, 3, &t);
    g_assert_false(t.flags & DMNIC_TXC_F_TS);
    g_assert_cmphex(qtest_readq(s.qts, txts + 24), ==, POISON);

    /* link down: not sent, not stamped */
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_TX_TS);
    qtest_qmp_assert_success(s.qts, "{'execute': 'set_link', 'arguments': "
                             "{'name': 'n0', 'up': false}}");
    post_tx(&s, buf, 4, DMNIC_TXD_F_TS);
    dn_read_txc(&s, 0, 4, &t);
    g_assert_cmpuint(t.status, ==, DMNIC_TXC_S_LINK_DOWN);
    g_assert_false(t.flags & DMNIC_TXC_F_TS);
    g_assert_cmphex(qtest_readq(s.qts, txts + 32), ==, POISON);
    dn_stop(&s);
}

/* The clock, its rate and the arrays continue on the destination */
static void test_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/dmnic-ptp-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    uint64_t t0, t1, rxts;
    DnState s, d;

    ptp_start(&s);
    rxts = ts_array(&s, NCPL);
    dn_qwr(&s, 1, DMNIC_Q_RXTS_LO, rxts);
    dn_wr(&s, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_RX_TS);
    ptp_cmd(&s, DMNIC_PTP_CMD_SET, 1000000000000ULL);
    dn_wr(&s, DMNIC_REG_PTP_ADJ_PPB, 2000000);
    qtest_clock_step(s.qts, 1000);
    t0 = ptp_time(&s);
    g_assert_cmpuint(t0, ==, 1000000000000ULL + 1002);

    dn_boot_incoming(&d, &s, uri);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    t1 = ptp_time(&d);
    g_assert_cmpuint(t1, ==, t0);       /* it stood still while stopped */
    qtest_clock_step(d.qts, 1000000);
    g_assert_cmpuint(ptp_time(&d), ==, t1 + 1002000);
    g_assert_cmphex(dn_rd(&d, DMNIC_REG_PTP_CTRL), ==, DMNIC_PTP_CTRL_RX_TS);
    g_assert_cmphex(dn_qrd(&d, 1, DMNIC_Q_RXTS_LO), ==, (uint32_t)rxts);
    dn_stop(&d);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic-ptp/clock", test_clock);
    qtest_add_func("/devmem-nic-ptp/rx-stamps", test_rx_stamps);
    qtest_add_func("/devmem-nic-ptp/rx-stamp-dma-fault",
                   test_rx_stamp_dma_fault);
    qtest_add_func("/devmem-nic-ptp/tx-stamps", test_tx_stamps);
    qtest_add_func("/devmem-nic-ptp/migration", test_migration);
    return g_test_run();
}
