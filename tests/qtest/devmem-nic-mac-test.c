/*
 * QTest for devmem-nic pause frames and FEC counters (docs/specs/
 * devmem-nic.rst, "Pause frames and FEC"): registers, pause frames
 * counted, honoured for exactly their time on the virtual clock, sent on
 * RX starvation and released by posted buffers, the FEC codeword
 * histogram, reset and migration.
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

static const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t pause_dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

static void mac_start(DnState *s)
{
    memset(s, 0, sizeof(*s));
    dn_boot(s, -1, "-device devmem-nic,id=nic,netdev=n0,"
            "mac=52:54:00:12:34:56,queues=4");
    g_assert_true(dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_PAUSE);
    g_assert_true(dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_FEC);
}

/* Queue 0's RX rings fresh (no buffers posted) and RX enabled */
static void rx_queue_on(DnState *s)
{
    dn_rx_rings(s, 0, 64);
    dn_qwr(s, 0, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE);
}

/* mac_start(), every flow steered to queue 0, its RX on without buffers */
static void mac_start_rx(DnState *s)
{
    mac_start(s);
    dn_steer_all_to(s, 0);
    rx_queue_on(s);
}

/* A pause frame with @quanta to @dst (padded to 60 bytes), injected */
static void send_pause(DnState *s, const uint8_t *dst, uint16_t quanta)
{
    uint8_t f[60] = { 0 };

    memcpy(f, dst, 6);
    memcpy(f + 6, (uint8_t[]){ 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc }, 6);
    stw_be_p(f + 12, 0x8808);
    stw_be_p(f + 14, 0x0001);
    stw_be_p(f + 16, quanta);
    dn_inject(s, f, sizeof(f));
}

/* A 100-byte frame posted on queue 0 and the doorbell rung, not waited */
static uint64_t post_tx(DnState *s, uint64_t buf, uint16_t id)
{
    uint8_t f[100];

    memset(f, 0x42, sizeof(f));
    qtest_memwrite(s->qts, buf, f, sizeof(f));
    dn_post_txd(s, 0, buf, sizeof(f), id, DMNIC_TXD_F_EOP, 0, 0);
    dn_wr(s, DMNIC_QREG(0, DMNIC_Q_TXD + DMNIC_RING_DRV), s->q[0].txd_tail);
    return buf;
}

static bool tx_paused(DnState *s)
{
    return dn_rd(s, DMNIC_REG_PAUSE_STATUS) & DMNIC_PAUSE_ST_TX_PAUSED;
}

static void test_regs(void)
{
    DnState s;

    mac_start(&s);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_CTRL), ==, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PAUSE_QUANTA), ==, 65535);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_FEC_CTRL), ==, DMNIC_FEC_RS);

    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, 0xffffffff);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_CTRL), ==,
                    DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX);
    dn_wr(&s, DMNIC_REG_PAUSE_QUANTA, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PAUSE_QUANTA), ==, 1);
    dn_wr(&s, DMNIC_REG_PAUSE_QUANTA, 0x10010);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PAUSE_QUANTA), ==, 0x10);
    dn_wr(&s, DMNIC_REG_FEC_CTRL, DMNIC_FEC_OFF);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_FEC_CTRL), ==, DMNIC_FEC_OFF);
    dn_wr(&s, DMNIC_REG_FEC_CTRL, 3);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_FEC_CTRL), ==, DMNIC_FEC_RS);
    /* read-only counters */
    dn_wr(&s, DMNIC_REG_G_PAUSE_RX, 5);
    dn_wr(&s, DMNIC_REG_G_FEC_HIST(3), 5);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_RX), ==, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_HIST(3)), ==, 0);

    /* reset */
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, DMNIC_PAUSE_CTRL_RX);
    send_pause(&s, pause_dst, 0xffff);
    g_assert_true(tx_paused(&s));
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_CTRL), ==, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PAUSE_QUANTA), ==, 65535);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==, 0);
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_FEC_CTRL), ==, DMNIC_FEC_RS);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_RX), ==, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_HIST(0)), ==, 0);
    dn_stop(&s);
}

/* Without PAUSE_CTRL_RX a pause frame is counted and consumed only */
static void test_pause_counted(void)
{
    uint8_t out[256];
    uint64_t buf;
    DnState s;

    mac_start_rx(&s);
    dn_post_bufs(&s, 0, 8, 8, 4096);
    dn_tx_setup(&s, 0);

    send_pause(&s, pause_dst, 0xffff);
    send_pause(&s, our_mac, 0xffff);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_RX), ==, 2);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_RX_FRAMES), ==, 2);
    g_assert_false(tx_paused(&s));
    /* consumed: no completion, no queue counter */
    g_assert_cmpuint(dn_cpl_pending(&s, 0), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 0);
    /* TX goes on */
    buf = dn_galloc(&s, 128);
    post_tx(&s, buf, 1);
    dn_tx_sync(&s);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);

    /* a pause to another station's unicast address is an ordinary frame */
    send_pause(&s, (uint8_t[]){ 0x52, 0x54, 0x00, 0x99, 0x99, 0x99 },
               0xffff);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_RX), ==, 2);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 1);
    dn_stop(&s);
}

/*
 * PAUSE_CTRL_RX: TX waits exactly the pause time (1000 quanta = 51.2 us on
 * the virtual clock, which only the test moves), and a new frame replaces
 * the time left
 */
static void test_pause_honoured(void)
{
    uint8_t out[256];
    uint64_t buf;
    DnState s;

    mac_start(&s);
    dn_tx_setup(&s, 0);
    buf = dn_galloc(&s, 128);
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, DMNIC_PAUSE_CTRL_RX);

    send_pause(&s, pause_dst, 1000);
    g_assert_true(tx_paused(&s));
    post_tx(&s, buf, 1);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, 0);
    qtest_clock_step(s.qts, 51200 - 100);
    g_assert_true(tx_paused(&s));
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    qtest_clock_step(s.qts, 100);
    dn_tx_sync(&s);
    g_assert_false(tx_paused(&s));
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, 1);

    /* the longest pause, cut short by a 10-quanta one, then by an XON */
    send_pause(&s, our_mac, 0xffff);
    post_tx(&s, buf, 2);
    qtest_clock_step(s.qts, 1000000);
    g_assert_true(tx_paused(&s));
    send_pause(&s, pause_dst, 10);
    qtest_clock_step(s.qts, 511);
    g_assert_true(tx_paused(&s));
    qtest_clock_step(s.qts, 1);
    dn_tx_sync(&s);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);

    send_pause(&s, pause_dst, 0xffff);
    post_tx(&s, buf, 3);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    send_pause(&s, pause_dst, 0);
    dn_tx_sync(&s);
    g_assert_false(tx_paused(&s));
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);

    /* clearing PAUSE_CTRL_RX releases TX too */
    send_pause(&s, pause_dst, 0xffff);
    post_tx(&s, buf, 4);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, 0);
    dn_tx_sync(&s);
    g_assert_cmpint(dn_wire_recv(&s, out, sizeof(out)), ==, 100);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_RX), ==, 6);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 4);
    dn_stop(&s);
}

static void expect_pause_frame(DnState *s, uint16_t quanta)
{
    uint8_t out[256];

    g_assert_cmpint(dn_wire_recv(s, out, sizeof(out)), ==, 60);
    g_assert_cmpmem(out, 6, pause_dst, 6);
    g_assert_cmpmem(out + 6, 6, our_mac, 6);
    g_assert_cmphex(lduw_be_p(out + 12), ==, 0x8808);
    g_assert_cmphex(lduw_be_p(out + 14), ==, 0x0001);
    g_assert_cmphex(lduw_be_p(out + 16), ==, quanta);
}

/* PAUSE_CTRL_TX: one XOFF when RX starves, an XON when buffers come */
static void test_pause_send(void)
{
    DlPktSpec spec;
    uint8_t frame[256], out[256];
    size_t len;
    DnState s;

    mac_start_rx(&s);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 100);
    len = dl_pkt_build(&spec, frame, NULL);

    /* off: a drop sends nothing */
    dn_inject(&s, frame, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);

    dn_wr(&s, DMNIC_REG_PAUSE_QUANTA, 0x1234);
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, DMNIC_PAUSE_CTRL_TX);
    dn_inject(&s, frame, len);
    expect_pause_frame(&s, 0x1234);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==,
                    DMNIC_PAUSE_ST_XOFF);
    /* still starving: no second XOFF */
    dn_inject(&s, frame, len);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 3);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 1);

    /* buffers posted: XON, and the next frame is delivered */
    dn_post_bufs(&s, 0, 8, 8, 4096);
    expect_pause_frame(&s, 0);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PAUSE_STATUS), ==, 0);
    dn_inject(&s, frame, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 1);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 2);
    /* sent pause frames are in no queue counter */
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 0);

    /* clearing PAUSE_CTRL_TX with an XOFF outstanding sends the XON */
    dn_qwr(&s, 0, DMNIC_Q_CTRL, 0);
    rx_queue_on(&s);
    dn_inject(&s, frame, len);
    expect_pause_frame(&s, 0x1234);
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, 0);
    expect_pause_frame(&s, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 4);
    dn_stop(&s);
}

/* Codewords of RS(544,514): ceil((len + FCS) * 8 / 5140), all clean */
static void test_fec(void)
{
    static const size_t lens[] = { 60, 1514, 9000, 1 };
    uint8_t *frame = g_malloc0(9000);
    uint64_t cw = 0;
    unsigned i;
    DnState s;

    mac_start(&s);
    for (i = 0; i < ARRAY_SIZE(lens); i++) {
        dn_inject(&s, frame, lens[i]);
        cw += DIV_ROUND_UP((lens[i] + 4) * 8, DMNIC_FEC_CW_DATA_BITS);
    }
    g_assert_cmpuint(cw, ==, 1 + 3 + 15 + 1);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_HIST(0)), ==, cw);
    for (i = 1; i < DMNIC_FEC_HIST_BINS; i++) {
        g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_HIST(i)), ==, 0);
    }
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_CORRECTED), ==, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_UNCORR), ==, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_CORR_BITS), ==, 0);

    /* a pause frame crosses the FEC sublayer too; FEC off counts nothing */
    send_pause(&s, pause_dst, 1);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_HIST(0)), ==, cw + 1);
    dn_wr(&s, DMNIC_REG_FEC_CTRL, DMNIC_FEC_OFF);
    dn_inject(&s, frame, 1514);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_FEC_HIST(0)), ==, cw + 1);
    g_free(frame);
    dn_stop(&s);
}

/* Registers, counters and a pause in progress travel in core/mac */
static void test_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/dmnic-mac-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    uint8_t out[256];
    uint64_t buf;
    DnState s, d;

    mac_start(&s);
    dn_tx_setup(&s, 0);
    buf = dn_galloc(&s, 128);
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, DMNIC_PAUSE_CTRL_RX);
    dn_wr(&s, DMNIC_REG_PAUSE_QUANTA, 777);
    send_pause(&s, pause_dst, 0xffff);
    post_tx(&s, buf, 1);

    dn_boot_incoming(&d, &s, uri);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    g_assert_cmphex(dn_rd(&d, DMNIC_REG_PAUSE_CTRL), ==,
                    DMNIC_PAUSE_CTRL_RX);
    g_assert_cmpuint(dn_rd(&d, DMNIC_REG_PAUSE_QUANTA), ==, 777);
    g_assert_cmpuint(dn_rd64(&d, DMNIC_REG_G_PAUSE_RX), ==, 1);
    g_assert_cmpuint(dn_rd64(&d, DMNIC_REG_G_FEC_HIST(0)), ==,
                     dn_rd64(&s, DMNIC_REG_G_FEC_HIST(0)));
    /* the posted packet waits on the destination until the pause ends */
    g_assert_true(tx_paused(&d));
    g_usleep(200 * 1000);
    g_assert_cmpuint(dn_qrd(&d, 0, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, 0);
    qtest_clock_step(d.qts, 65535LL * DMNIC_PAUSE_QUANTUM_PS / 1000 + 1);
    dn_tx_sync(&d);
    g_assert_cmpint(dn_wire_recv(&d, out, sizeof(out)), ==, 100);
    g_assert_cmpuint(dn_qrd(&d, 0, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, 1);
    dn_stop(&d);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic-mac/regs", test_regs);
    qtest_add_func("/devmem-nic-mac/pause/counted", test_pause_counted);
    qtest_add_func("/devmem-nic-mac/pause/honoured", test_pause_honoured);
    qtest_add_func("/devmem-nic-mac/pause/send", test_pause_send);
    qtest_add_func("/devmem-nic-mac/fec", test_fec);
    qtest_add_func("/devmem-nic-mac/migration", test_migration);
    return g_test_run();
}
