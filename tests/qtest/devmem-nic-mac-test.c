/*
 * QTest for devmem-nic pause frames and FEC counters (docs/specs/
 * devmem-nic.rst, "Pause frames and FEC"): registers, pause frames
 * counted, honoured for exactly their time on the virtual clock, sent on
 * RX starvation and released by posted buffers, lossless receive (the RX
 * hold, its stall limit, and a devmem-nic sender that waits for the cable
 * on a hub), the FEC codeword histogram, reset and migration.
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

/* A 142-byte UDP frame from port @sport, into the cable, not waited for */
static void send_udp(DnState *s, uint16_t sport)
{
    uint8_t frame[256];
    DlPktSpec spec;
    size_t len;

    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 100);
    spec.sport = sport;
    len = dl_pkt_build(&spec, frame, NULL);
    dl_sock_send(s->sv[0], frame, len);
}

/* Waits (10 s at most) until G_RX_FRAMES is @n */
static void wait_frames(DnState *s, uint64_t n)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    while (dn_rd64(s, DMNIC_REG_G_RX_FRAMES) < n) {
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(1000);
    }
    g_assert_cmpuint(dn_rd64(s, DMNIC_REG_G_RX_FRAMES), ==, n);
}

/* The UDP source port of the frame in RX completion @idx of queue 0 */
static uint16_t rx_sport(DnState *s, uint32_t idx)
{
    DnCpl c;

    dn_read_cpl(s, 0, idx, &c);
    g_assert_true(c.flags & DMNIC_RXC_F_GEN);
    g_assert_cmpuint(c.pkt_len, ==, 142);
    return qtest_readb(s->qts, s->q[0].hbuf[c.hdr_id] + 34) << 8 |
           qtest_readb(s->qts, s->q[0].hbuf[c.hdr_id] + 35);
}

static uint32_t pause_st(DnState *s)
{
    return dn_rd(s, DMNIC_REG_PAUSE_STATUS);
}

/*
 * mac_start_rx() with lossless receive: UDP source port 1001 came in and
 * is held (no buffers), the XOFF sent
 */
static void hold_start(DnState *s)
{
    mac_start_rx(s);
    dn_lossless(s);
    send_udp(s, 1001);
    dn_expect_pause(s, 0xffff);
    wait_frames(s, 1);
    g_assert_cmphex(pause_st(s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
}

/*
 * Without PAUSE_CTRL_TX a frame without buffers is dropped and nothing is
 * sent.  With it the frame is held (one XOFF), the cable waits, and
 * buffers posted later take it and the frames behind it, in order: none
 * lost, each counted once; an XON when the held frame is placed.
 */
static void test_pause_send(void)
{
    DlPktSpec spec;
    uint8_t frame[256], out[256];
    size_t len;
    unsigned i;
    DnState s;

    mac_start_rx(&s);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 100);
    len = dl_pkt_build(&spec, frame, NULL);

    /* off: a drop sends nothing */
    dn_inject(&s, frame, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    g_assert_cmphex(pause_st(&s), ==, 0);

    dn_wr(&s, DMNIC_REG_PAUSE_QUANTA, 0x1234);
    dn_lossless(&s);
    send_udp(&s, 1001);
    wait_frames(&s, 2);
    dn_expect_pause(&s, 0x1234);
    g_assert_cmphex(pause_st(&s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    /* the cable waits: frames behind the held one are not taken */
    send_udp(&s, 1002);
    send_udp(&s, 1003);
    send_udp(&s, 1004);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_RX_FRAMES), ==, 2);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 1);

    /* two buffers: 1001 and 1002 placed (XON), 1003 held again (XOFF) */
    dn_post_bufs(&s, 0, 2, 0, 4096);
    dn_expect_pause(&s, 0);
    dn_expect_pause(&s, 0x1234);
    wait_frames(&s, 4);
    g_assert_cmphex(pause_st(&s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 2);

    /* more: the rest, in order */
    dn_post_bufs(&s, 0, 8, 0, 4096);
    dn_expect_pause(&s, 0);
    wait_frames(&s, 5);
    g_assert_cmphex(pause_st(&s), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 4);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_BYTES), ==, 4 * 142);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_NOSPLIT), ==, 4);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpuint(dn_qrd(&s, 0, DMNIC_Q_RXC + DMNIC_RING_DEV), ==, 4);
    for (i = 0; i < 4; i++) {
        g_assert_cmpuint(rx_sport(&s, i), ==, 1001 + i);
    }
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 4);
    /* sent pause frames are in no queue counter */
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_PACKETS), ==, 0);

    /* a frame with buffers is simply delivered */
    dn_inject(&s, frame, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 5);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);

    /* clearing PAUSE_CTRL_TX: one more try, then a drop; the XON */
    dn_qwr(&s, 0, DMNIC_Q_CTRL, 0);
    rx_queue_on(&s);
    send_udp(&s, 1005);
    dn_expect_pause(&s, 0x1234);
    g_assert_cmphex(pause_st(&s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    dn_wr(&s, DMNIC_REG_PAUSE_CTRL, 0);
    dn_expect_pause(&s, 0);
    g_assert_cmphex(pause_st(&s), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 2);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 6);
    dn_inject(&s, frame, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 3);
    dn_stop(&s);
}

/*
 * The stall limit: a held frame not placed within DMNIC_PAUSE_STALL_NS is
 * dropped (a NOBUF drop), the cable flows again, and frames without
 * buffers are dropped, not held, until buffers are posted
 */
static void test_pause_stall(void)
{
    uint8_t out[256];
    DnState s;

    hold_start(&s);
    send_udp(&s, 1002);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    qtest_clock_step(s.qts, DMNIC_PAUSE_STALL_NS - 1);
    g_assert_cmphex(pause_st(&s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_RX_FRAMES), ==, 1);

    qtest_clock_step(s.qts, 1);
    wait_frames(&s, 2);
    g_assert_cmphex(pause_st(&s), ==, DMNIC_PAUSE_ST_XOFF);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 2);
    send_udp(&s, 1003);
    wait_frames(&s, 3);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 3);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);

    /* buffers posted: the XON, and holding again */
    dn_post_bufs(&s, 0, 1, 0, 4096);
    dn_expect_pause(&s, 0);
    send_udp(&s, 1004);
    send_udp(&s, 1005);
    dn_expect_pause(&s, 0xffff);
    wait_frames(&s, 5);
    g_assert_cmphex(pause_st(&s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 1);
    g_assert_cmpuint(rx_sport(&s, 0), ==, 1004);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 3);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 3);
    dn_stop(&s);
}

/*
 * A held frame goes with a reset, a link down, or RX of its queue
 * stopped, and the cable is not left waiting
 */
static void test_pause_release(void)
{
    uint64_t dis;
    DnState s;

    hold_start(&s);
    send_udp(&s, 1002);

    /* reset: 1002 comes in after it (counters reset, no queue on) */
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    g_assert_cmphex(pause_st(&s), ==, 0);
    wait_frames(&s, 1);
    send_udp(&s, 1003);
    wait_frames(&s, 2);

    /* RX of the queue stopped: a DROP_DISABLED, as on arrival */
    memset(s.q, 0, sizeof(s.q));
    dn_steer_all_to(&s, 0);
    rx_queue_on(&s);
    dn_lossless(&s);
    send_udp(&s, 1004);
    dn_expect_pause(&s, 0xffff);
    send_udp(&s, 1005);
    wait_frames(&s, 3);
    g_assert_true(pause_st(&s) & DMNIC_PAUSE_ST_RX_HELD);
    /* (1002 and 1003 came while no queue was on: RSS spread them) */
    dis = dn_qstat(&s, 0, DMNIC_Q_RX_DROP_DISABLED);
    dn_qwr(&s, 0, DMNIC_Q_CTRL, 0);
    g_assert_false(pause_st(&s) & DMNIC_PAUSE_ST_RX_HELD);
    wait_frames(&s, 4);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_DISABLED), ==, dis + 2);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);

    /* link down: the held frame is a NOBUF drop */
    rx_queue_on(&s);
    send_udp(&s, 1006);
    wait_frames(&s, 5);
    g_assert_true(pause_st(&s) & DMNIC_PAUSE_ST_RX_HELD);
    qtest_qmp_assert_success(s.qts, "{'execute': 'set_link', 'arguments': "
                             "{'name': 'nic', 'up': false}}");
    g_assert_false(pause_st(&s) & DMNIC_PAUSE_ST_RX_HELD);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    qtest_qmp_assert_success(s.qts, "{'execute': 'set_link', 'arguments': "
                             "{'name': 'nic', 'up': true}}");
    dn_post_bufs(&s, 0, 4, 0, 4096);
    send_udp(&s, 1007);
    wait_frames(&s, 6);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 1);
    g_assert_cmpuint(rx_sport(&s, 0), ==, 1007);
    dn_stop(&s);
}

/* The devmem-nic at slot @slot of the machine of @s, as DnState @n */
static void map_second(DnState *n, const DnState *s, int slot,
                       const char *qom)
{
    memset(n, 0, sizeof(*n));
    n->qs = s->qs;
    n->qts = s->qts;
    n->qom = qom;
    dn_map(n, qpci_device_find(s->qs->pcibus, QPCI_DEVFN(slot, 0)));
}

#define HUB_FRAMES  8
#define HUB_NBUF    4

/*
 * Two devmem-nics on a QEMU hub, the cable of the test rig: @s receives
 * on queue 0 with HUB_NBUF buffers and PAUSE_CTRL_TX, @p sends HUB_FRAMES
 * UDP frames (source ports 1001...) from its queue 0.  Returns when @s
 * placed HUB_NBUF frames, holds the next and QEMU queued one more of @p's
 * at the hub: the sender waits.  The sender does not honour pause frames
 * here, so only the cable's backpressure stops it.
 */
static void hub_start(DnState *s, DnState *p)
{
    uint8_t frame[256];
    DlPktSpec spec;
    uint64_t buf;
    size_t len;
    unsigned i;

    memset(s, 0, sizeof(*s));
    dn_boot(s, QPCI_DEVFN(4, 0),
            "-netdev hubport,id=h0,hubid=0 -netdev hubport,id=h1,hubid=0 "
            "-device devmem-nic,id=nic,netdev=h0,mac=52:54:00:12:34:56,"
            "queues=4,addr=04.0 "
            "-device devmem-nic,id=peer,netdev=h1,mac=52:54:00:12:34:57,"
            "queues=4,addr=05.0");
    map_second(p, s, 5, "/machine/peripheral/peer");
    dn_steer_all_to(s, 0);
    rx_queue_on(s);
    dn_post_bufs(s, 0, HUB_NBUF, 0, 4096);
    dn_lossless(s);

    dn_tx_setup(p, 0);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 100);
    for (i = 0; i < HUB_FRAMES; i++) {
        spec.sport = 1001 + i;
        len = dl_pkt_build(&spec, frame, NULL);
        buf = dn_galloc(p, len);
        qtest_memwrite(p->qts, buf, frame, len);
        dn_post_txd(p, 0, buf, len, i, DMNIC_TXD_F_EOP, 0, 0);
    }
    dn_wr(p, DMNIC_QREG(0, DMNIC_Q_TXD + DMNIC_RING_DRV), p->q[0].txd_tail);

    /* HUB_NBUF placed, the next held, one more queued by QEMU */
    wait_frames(s, HUB_NBUF + 1);
    g_assert_cmphex(pause_st(s), ==,
                    DMNIC_PAUSE_ST_XOFF | DMNIC_PAUSE_ST_RX_HELD);
    g_usleep(200 * 1000);
    g_assert_cmpuint(dn_qrd(p, 0, DMNIC_Q_TXC + DMNIC_RING_DEV), ==,
                     HUB_NBUF + 2);
    g_assert_cmpuint(dn_rd64(s, DMNIC_REG_G_RX_FRAMES), ==, HUB_NBUF + 1);
}

/*
 * The sender's frames beyond the receiver's buffers wait and all arrive,
 * in order, once buffers are posted
 */
static void test_pause_hub(void)
{
    const unsigned n = HUB_FRAMES;
    DnState s, p;
    unsigned i;

    hub_start(&s, &p);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, HUB_NBUF);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    g_assert_cmpuint(dn_rd64(&p, DMNIC_REG_G_PAUSE_RX), ==, 1);

    /* buffers: the held frame, the queued one, then the rest are sent */
    dn_post_bufs(&s, 0, 8, 0, 4096);
    wait_frames(&s, n);
    dn_tx_sync(&p);
    g_assert_cmpuint(dn_qrd(&p, 0, DMNIC_Q_TXC + DMNIC_RING_DEV), ==, n);
    g_assert_cmpuint(dn_qstat(&p, 0, DMNIC_Q_TX_PACKETS), ==, n);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, n);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    for (i = 0; i < n; i++) {
        g_assert_cmpuint(rx_sport(&s, i), ==, 1001 + i);
    }
    g_assert_cmphex(pause_st(&s), ==, 0);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 2);
    g_assert_cmpuint(dn_rd64(&p, DMNIC_REG_G_PAUSE_RX), ==, 2);
    g_free(p.dev);
    dn_stop(&s);
}

/*
 * hot-unplug-queued-tx: the sender is unplugged while QEMU's hub holds
 * one of its frames (the receiver holds the one before).  The frame goes
 * with its sender: the receiver, given buffers, gets only the held one,
 * and no callback reaches the freed device when the hub flushes (ASan
 * sees the use-after-free of 8d70579; without ASan the queued frame
 * arriving shows it).
 */
static void test_hot_unplug_queued_tx(void)
{
    DnState s, p;

    hub_start(&s, &p);
    qpci_unplug_acpi_device_test(s.qts, "peer", 5);
    g_free(p.dev);
    dn_post_bufs(&s, 0, 8, 0, 4096);
    wait_frames(&s, HUB_NBUF + 1);
    g_usleep(200 * 1000);
    g_assert_true(qtest_probe_child(s.qts));
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_RX_FRAMES), ==, HUB_NBUF + 1);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, HUB_NBUF + 1);
    g_assert_cmpuint(rx_sport(&s, HUB_NBUF), ==, 1001 + HUB_NBUF);
    g_assert_cmphex(pause_st(&s), ==, 0);
    dn_stop(&s);
}

/*
 * xsk-pause-oversize: lossless receive on a queue that posts header
 * buffers only, as an AF_XDP zero-copy queue does.  A frame longer than
 * its header buffer can never be placed there: it is dropped at once (a
 * NOBUF drop, no XOFF) and the cable keeps flowing (8d70579 held it and
 * stopped the cable for the 100 ms stall limit).  Frames that fit are
 * placed; once payload buffers are posted, long frames are too.
 */
static void test_xsk_pause_oversize(void)
{
    uint8_t big[1200], out[256];
    DlPktSpec spec;
    size_t len;
    DnState s;

    mac_start_rx(&s);
    dn_lossless(&s);
    dn_post_bufs(&s, 0, 4, 0, DN_PBUF_LEN);
    dl_pkt_default(&spec, 4, DL_PROTO_UDP, 1000);
    spec.sport = 1001;
    len = dl_pkt_build(&spec, big, NULL);
    g_assert_cmpuint(len, >, DN_HBUF_LEN);

    dn_inject(&s, big, len);
    g_assert_cmphex(pause_st(&s), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpint(dl_sock_recv(s.sv[0], out, sizeof(out), 200), ==, -1);
    send_udp(&s, 1002);
    wait_frames(&s, 2);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 1);
    g_assert_cmpuint(rx_sport(&s, 0), ==, 1002);

    /* payload buffers posted: the long frame is placed */
    dn_post_bufs(&s, 0, 0, 2, DN_PBUF_LEN);
    dn_inject(&s, big, len);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_PACKETS), ==, 2);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpuint(dn_rd64(&s, DMNIC_REG_G_PAUSE_TX), ==, 0);
    dn_stop(&s);
}

/* A held frame is not migrated: the destination counts it as a drop */
static void test_pause_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/dmnic-hold-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    DnState s, d;

    hold_start(&s);

    dn_boot_incoming(&d, &s, uri);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    g_assert_cmphex(pause_st(&d), ==, DMNIC_PAUSE_ST_XOFF);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 1);
    g_assert_cmpuint(dn_rd64(&d, DMNIC_REG_G_RX_FRAMES), ==, 1);
    /* the destination's cable flows; buffers posted send the XON */
    dn_post_bufs(&d, 0, 4, 0, 4096);
    dn_expect_pause(&d, 0);
    send_udp(&d, 1002);
    wait_frames(&d, 2);
    g_assert_cmpuint(dn_qstat(&d, 0, DMNIC_Q_RX_PACKETS), ==, 1);
    dn_stop(&d);
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
    qtest_add_func("/devmem-nic-mac/pause/stall", test_pause_stall);
    qtest_add_func("/devmem-nic-mac/pause/release", test_pause_release);
    qtest_add_func("/devmem-nic-mac/pause/hub", test_pause_hub);
    qtest_add_func("/devmem-nic-mac/hot-unplug-queued-tx",
                   test_hot_unplug_queued_tx);
    qtest_add_func("/devmem-nic-mac/pause/migration", test_pause_migration);
    qtest_add_func("/devmem-nic-mac/xsk-pause-oversize",
                   test_xsk_pause_oversize);
    qtest_add_func("/devmem-nic-mac/fec", test_fec);
    qtest_add_func("/devmem-nic-mac/migration", test_migration);
    return g_test_run();
}
