/*
 * QTest for devmem-nic transmit shaping (docs/specs/devmem-nic.rst,
 * "Transmit shaping"): registers, the rate of a queue limiter measured on
 * the virtual clock (which only the test moves), the device limiter over
 * two queues together with a queue limiter, group limiters with a parent
 * chain and weighted turns, reset and migration.
 *
 * Every frame is 1000 bytes on the wire; at 8 Mbit/s a bucket earns one
 * such frame per millisecond.  A queue starts a packet while no bucket of
 * its chain is negative, so a full bucket of B bytes lets B / 1000 + 1
 * frames out at once.
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

#define FRAME_LEN   1000
#define MBIT        1000000ULL
#define MS          1000000LL      /* ns */

static void sh_start(DnState *s)
{
    memset(s, 0, sizeof(*s));
    dn_boot(s, -1, "-device devmem-nic,id=nic,netdev=n0,"
            "mac=52:54:00:12:34:56,queues=4");
    g_assert_true(dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_SHAPER);
}

static void set_rate(DnState *s, uint32_t base, uint64_t rate)
{
    dn_wr(s, base + DMNIC_SHQ_RATE_LO, (uint32_t)rate);
    dn_wr(s, base + DMNIC_SHQ_RATE_HI, rate >> 32);
}

static uint64_t get_rate(DnState *s, uint32_t base)
{
    return dn_rd(s, base + DMNIC_SHQ_RATE_LO) |
           (uint64_t)dn_rd(s, base + DMNIC_SHQ_RATE_HI) << 32;
}

/* One FRAME_LEN frame in guest memory, reused by every descriptor */
static uint64_t frame_buf(DnState *s)
{
    uint8_t f[FRAME_LEN];
    uint64_t buf = dn_galloc(s, sizeof(f));

    memset(f, 0x5a, sizeof(f));
    memset(f, 0xff, 6);
    memcpy(f + 6, (uint8_t[]){ 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, 6);
    stw_be_p(f + 12, 0x88b5);
    qtest_memwrite(s->qts, buf, f, sizeof(f));
    return buf;
}

/* @n frames posted on queue @q and the doorbell rung (not waited for) */
static void post_frames(DnState *s, unsigned q, uint64_t buf, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        dn_post_txd(s, q, buf, FRAME_LEN, i, DMNIC_TXD_F_EOP, 0, 0);
    }
    dn_wr(s, DMNIC_QREG(q, DMNIC_Q_TXD + DMNIC_RING_DRV), s->q[q].txd_tail);
}

static uint64_t sent(DnState *s, unsigned q)
{
    dn_tx_sync(s);
    return dn_qstat(s, q, DMNIC_Q_TX_PACKETS);
}

static uint64_t held(DnState *s, unsigned q)
{
    return dn_rd64(s, DMNIC_SHAPER_Q(q) + DMNIC_SHQ_HELD);
}

/* Moves the virtual clock; TX the timer started is done on return */
static void step(DnState *s, int64_t ns)
{
    qtest_clock_step(s->qts, ns);
    dn_tx_sync(s);
}

/* The TX bottom half does nothing while the VM is stopped */
static void vm_stop(DnState *s)
{
    qobject_unref(qtest_qmp(s->qts, "{'execute': 'stop'}"));
}

static void vm_cont(DnState *s)
{
    qobject_unref(qtest_qmp(s->qts, "{'execute': 'cont'}"));
    dn_tx_sync(s);
}

static void check_defaults(DnState *s)
{
    unsigned i;

    g_assert_cmpuint(dn_rd(s, DMNIC_REG_SHAPER_NUM_GROUPS), ==,
                     DMNIC_SHAPER_NUM_GROUPS);
    g_assert_cmpuint(get_rate(s, DMNIC_REG_SHAPER_NET_RATE_LO), ==, 0);
    g_assert_cmpuint(dn_rd(s, DMNIC_REG_SHAPER_NET_BURST), ==,
                     DMNIC_SHAPER_BURST_RESET);
    for (i = 0; i < DMNIC_SHAPER_NUM_GROUPS; i++) {
        g_assert_cmpuint(get_rate(s, DMNIC_SHAPER_GRP(i)), ==, 0);
        g_assert_cmpuint(dn_rd(s, DMNIC_SHAPER_GRP(i) + DMNIC_SHG_BURST), ==,
                         DMNIC_SHAPER_BURST_RESET);
        g_assert_cmpuint(dn_rd(s, DMNIC_SHAPER_GRP(i) + DMNIC_SHG_PARENT),
                         ==, 0);
    }
    for (i = 0; i < DN_NQ; i++) {
        g_assert_cmpuint(get_rate(s, DMNIC_SHAPER_Q(i)), ==, 0);
        g_assert_cmpuint(dn_rd(s, DMNIC_SHAPER_Q(i) + DMNIC_SHQ_BURST), ==,
                         DMNIC_SHAPER_BURST_RESET);
        g_assert_cmpuint(dn_rd(s, DMNIC_SHAPER_Q(i) + DMNIC_SHQ_GROUP), ==,
                         0);
        g_assert_cmpuint(dn_rd(s, DMNIC_SHAPER_Q(i) + DMNIC_SHQ_WEIGHT), ==,
                         0);
        g_assert_cmpuint(held(s, i), ==, 0);
    }
}

/* Reset values, the RATE_LO latch, clamping, range checks, reset */
static void test_regs(void)
{
    DnState s;
    uint64_t buf;

    sh_start(&s);
    check_defaults(&s);

    /* RATE_LO alone changes nothing; RATE_HI applies the pair */
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_RATE_LO, 0x12345678);
    g_assert_cmpuint(get_rate(&s, DMNIC_SHAPER_Q(1)), ==, 0);
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_RATE_HI, 0x2);
    g_assert_cmphex(get_rate(&s, DMNIC_SHAPER_Q(1)), ==, 0x212345678ULL);
    /* clamped */
    set_rate(&s, DMNIC_REG_SHAPER_NET_RATE_LO, DMNIC_SHAPER_RATE_MAX + 1);
    g_assert_cmpuint(get_rate(&s, DMNIC_REG_SHAPER_NET_RATE_LO), ==,
                     DMNIC_SHAPER_RATE_MAX);
    dn_wr(&s, DMNIC_SHAPER_GRP(7) + DMNIC_SHG_BURST, 0xffffffff);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_GRP(7) + DMNIC_SHG_BURST), ==,
                     DMNIC_SHAPER_BURST_MAX);
    set_rate(&s, DMNIC_SHAPER_GRP(7), 5 * MBIT);
    g_assert_cmpuint(get_rate(&s, DMNIC_SHAPER_GRP(7)), ==, 5 * MBIT);
    /* group numbers: 0..8, others stored as 0 */
    dn_wr(&s, DMNIC_SHAPER_Q(3) + DMNIC_SHQ_GROUP, 8);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_Q(3) + DMNIC_SHQ_GROUP), ==, 8);
    dn_wr(&s, DMNIC_SHAPER_Q(2) + DMNIC_SHQ_GROUP, 9);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_Q(2) + DMNIC_SHQ_GROUP), ==, 0);
    dn_wr(&s, DMNIC_SHAPER_GRP(0) + DMNIC_SHG_PARENT, 3);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_GRP(0) + DMNIC_SHG_PARENT), ==,
                     3);
    dn_wr(&s, DMNIC_SHAPER_GRP(1) + DMNIC_SHG_PARENT, 100);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_GRP(1) + DMNIC_SHG_PARENT), ==,
                     0);
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_WEIGHT, 12345);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_WEIGHT), ==,
                     12345);
    /* SHQ_HELD is read-only; queue 4 does not exist with queues=4 */
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_HELD, 7);
    g_assert_cmpuint(held(&s, 0), ==, 0);
    dn_wr(&s, DMNIC_SHAPER_Q(DN_NQ) + DMNIC_SHQ_GROUP, 1);
    g_assert_cmpuint(dn_rd(&s, DMNIC_SHAPER_Q(DN_NQ) + DMNIC_SHQ_GROUP), ==,
                     0);

    /* a held queue: reset clears everything and releases it */
    dn_tx_setup(&s, 0);
    buf = frame_buf(&s);
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_BURST, 0);
    set_rate(&s, DMNIC_SHAPER_Q(0), 8 * MBIT);
    post_frames(&s, 0, buf, 5);
    g_assert_cmpuint(sent(&s, 0), ==, 1);
    g_assert_cmpuint(held(&s, 0), ==, 1);
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    check_defaults(&s);
    /* no shaping after the reset: a full ring goes out at once */
    dn_tx_setup(&s, 0);
    post_frames(&s, 0, buf, 60);
    g_assert_cmpuint(sent(&s, 0), ==, 60);
    dn_stop(&s);
}

/* A queue limiter: exactly its bucket, then its rate */
static void test_queue_rate(void)
{
    DnState s;
    uint64_t buf;

    sh_start(&s);
    dn_tx_setup(&s, 0);
    dn_tx_setup(&s, 1);
    buf = frame_buf(&s);
    set_rate(&s, DMNIC_SHAPER_Q(0), 8 * MBIT);     /* burst 16384 */

    post_frames(&s, 0, buf, 60);
    post_frames(&s, 1, buf, 10);
    /* a full bucket: 16 frames leave 384 bytes, the 17th a deficit */
    g_assert_cmpuint(sent(&s, 0), ==, 17);
    g_assert_cmpuint(held(&s, 0), ==, 1);
    /* the other queue is not limited */
    g_assert_cmpuint(sent(&s, 1), ==, 10);
    g_assert_cmpuint(held(&s, 1), ==, 0);
    /* the 616-byte deficit takes 616 us at 1 byte/us */
    step(&s, 616000 - 1);
    g_assert_cmpuint(sent(&s, 0), ==, 17);
    step(&s, 1);
    g_assert_cmpuint(sent(&s, 0), ==, 18);
    /* from a 1000-byte deficit, 10 ms earn 10 frames */
    step(&s, 10 * MS);
    g_assert_cmpuint(sent(&s, 0), ==, 28);
    step(&s, 10 * MS);
    g_assert_cmpuint(sent(&s, 0), ==, 38);
    g_assert_cmpuint(held(&s, 0), ==, 4);
    /* an idle bucket fills up to BURST only */
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_BURST, 3000);
    step(&s, 1000 * MS);
    g_assert_cmpuint(sent(&s, 0), ==, 42);
    /* a higher rate: the deficit is paid at it */
    set_rate(&s, DMNIC_SHAPER_Q(0), 16 * MBIT);
    step(&s, 500000);
    g_assert_cmpuint(sent(&s, 0), ==, 43);
    /* rate 0 releases the queue: the rest goes out at once */
    set_rate(&s, DMNIC_SHAPER_Q(0), 0);
    g_assert_cmpuint(sent(&s, 0), ==, 60);
    g_assert_cmpuint(dn_qstat(&s, 0, DMNIC_Q_TX_BYTES), ==, 60 * FRAME_LEN);
    dn_stop(&s);
}

/*
 * The device limiter over queues 0 and 1, which take turns, with a
 * lower limiter of queue 0 of its own
 */
static void test_netdev_and_queue(void)
{
    DnState s;
    uint64_t buf;

    sh_start(&s);
    dn_tx_setup(&s, 0);
    dn_tx_setup(&s, 1);
    buf = frame_buf(&s);
    dn_wr(&s, DMNIC_REG_SHAPER_NET_BURST, 8000);
    set_rate(&s, DMNIC_REG_SHAPER_NET_RATE_LO, 8 * MBIT);
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_BURST, 2000);
    set_rate(&s, DMNIC_SHAPER_Q(0), 2 * MBIT);

    vm_stop(&s);
    post_frames(&s, 0, buf, 30);
    post_frames(&s, 1, buf, 30);
    vm_cont(&s);
    /*
     * Turns q0 q1 q0 q1 q0 q1: queue 0's bucket is in deficit, queue 1
     * alone: 1000 0 -1000; 9 frames = 8000 / 1000 + 1 together
     */
    g_assert_cmpuint(sent(&s, 0), ==, 3);
    g_assert_cmpuint(sent(&s, 1), ==, 6);
    /* 10 ms: queue 0 earns 2500 bytes, the device 9000 (burst 8000) */
    step(&s, 10 * MS);
    g_assert_cmpuint(sent(&s, 0), ==, 5);
    g_assert_cmpuint(sent(&s, 1), ==, 13);
    g_assert_cmpuint(held(&s, 0), ==, 2);
    g_assert_cmpuint(held(&s, 1), ==, 2);
    /* the device limiter off: queue 0 keeps its own rate */
    set_rate(&s, DMNIC_REG_SHAPER_NET_RATE_LO, 0);
    g_assert_cmpuint(sent(&s, 1), ==, 30);
    g_assert_cmpuint(sent(&s, 0), ==, 5);
    step(&s, 4 * MS);
    g_assert_cmpuint(sent(&s, 0), ==, 6);
    dn_stop(&s);
}

/*
 * Group 0 shared by queues 0 and 1 (weight 3), queue 3 in group 1 whose
 * parent is group 0, queue 2 in no group; then a PARENT loop
 */
static void test_groups(void)
{
    DnState s;
    uint64_t buf;
    unsigned q;

    sh_start(&s);
    for (q = 0; q < DN_NQ; q++) {
        dn_tx_setup(&s, q);
    }
    buf = frame_buf(&s);
    dn_wr(&s, DMNIC_SHAPER_GRP(0) + DMNIC_SHG_BURST, 4000);
    set_rate(&s, DMNIC_SHAPER_GRP(0), 8 * MBIT);
    dn_wr(&s, DMNIC_SHAPER_GRP(1) + DMNIC_SHG_PARENT, 1);
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_GROUP, 1);
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_GROUP, 1);
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_WEIGHT, 3);
    dn_wr(&s, DMNIC_SHAPER_Q(3) + DMNIC_SHQ_GROUP, 2);

    vm_stop(&s);
    for (q = 0; q < DN_NQ; q++) {
        post_frames(&s, q, buf, 10);
    }
    vm_cont(&s);
    /* turns: q0, q1 x3, q3 (through group 1 to group 0): 5 frames */
    g_assert_cmpuint(sent(&s, 0), ==, 1);
    g_assert_cmpuint(sent(&s, 1), ==, 3);
    g_assert_cmpuint(sent(&s, 2), ==, 10);
    g_assert_cmpuint(sent(&s, 3), ==, 1);
    g_assert_cmpuint(held(&s, 2), ==, 0);
    step(&s, 10 * MS);
    g_assert_cmpuint(sent(&s, 0), ==, 2);
    g_assert_cmpuint(sent(&s, 1), ==, 6);
    g_assert_cmpuint(sent(&s, 3), ==, 2);
    /* group 1 its own parent: the chain ends there, queue 3 is free */
    dn_wr(&s, DMNIC_SHAPER_GRP(1) + DMNIC_SHG_PARENT, 2);
    g_assert_cmpuint(sent(&s, 3), ==, 10);
    g_assert_cmpuint(sent(&s, 0), ==, 2);
    g_assert_cmpuint(sent(&s, 1), ==, 6);
    /* a group limiter with a rate on group 1 holds queue 3 again */
    dn_wr(&s, DMNIC_SHAPER_GRP(1) + DMNIC_SHG_BURST, 0);
    set_rate(&s, DMNIC_SHAPER_GRP(1), 8 * MBIT);
    post_frames(&s, 3, buf, 5);
    g_assert_cmpuint(sent(&s, 3), ==, 11);
    dn_stop(&s);
}

/*
 * shaper-wrr-shared-limit: a device limiter that earns exactly one frame
 * per step (burst 0, 8 Mbit/s: 1000 bytes a millisecond) shared by queue
 * 0 (weight 0, one packet a turn) and queue 1 (weight 2).  Every step
 * the limiter's timer fires at its deadline with one frame of tokens,
 * and the frames go round robin by weight: q0 q1 q1 q0 q1 q1 ... (8d70579
 * started every wake-up at queue 0, which took every token).
 */
static void test_wrr_shared_limit(void)
{
    static const unsigned order[] = { 0, 1, 1 };
    uint64_t n[2] = { 1, 0 };
    DnState s;
    uint64_t buf;
    unsigned i;

    sh_start(&s);
    dn_tx_setup(&s, 0);
    dn_tx_setup(&s, 1);
    buf = frame_buf(&s);
    dn_wr(&s, DMNIC_REG_SHAPER_NET_BURST, 0);
    set_rate(&s, DMNIC_REG_SHAPER_NET_RATE_LO, 8 * MBIT);
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_WEIGHT, 2);

    vm_stop(&s);
    post_frames(&s, 0, buf, 20);
    post_frames(&s, 1, buf, 20);
    vm_cont(&s);
    /* the full (empty) bucket: one frame, queue 0's turn */
    g_assert_cmpuint(sent(&s, 0), ==, 1);
    g_assert_cmpuint(sent(&s, 1), ==, 0);
    for (i = 1; i <= 12; i++) {
        step(&s, 1 * MS);
        n[order[i % 3]]++;
        g_assert_cmpuint(sent(&s, 0), ==, n[0]);
        g_assert_cmpuint(sent(&s, 1), ==, n[1]);
    }
    g_assert_cmpuint(n[0], ==, 5);
    g_assert_cmpuint(n[1], ==, 8);
    dn_stop(&s);
}

/* Registers and counters migrate; the destination's buckets start full */
static void test_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/dmnic-shaper-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    uint64_t buf;
    DnState s, d;

    sh_start(&s);
    dn_tx_setup(&s, 0);
    buf = frame_buf(&s);
    dn_wr(&s, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_BURST, 3000);
    set_rate(&s, DMNIC_SHAPER_Q(0), 8 * MBIT);
    dn_wr(&s, DMNIC_REG_SHAPER_NET_BURST, 5000);
    dn_wr(&s, DMNIC_SHAPER_GRP(2) + DMNIC_SHG_PARENT, 1);
    set_rate(&s, DMNIC_SHAPER_GRP(2), 77 * MBIT);
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_GROUP, 3);
    dn_wr(&s, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_WEIGHT, 7);
    /* a rate latched but not applied travels too */
    dn_wr(&s, DMNIC_SHAPER_Q(2) + DMNIC_SHQ_RATE_LO, 1234);
    post_frames(&s, 0, buf, 10);
    g_assert_cmpuint(sent(&s, 0), ==, 4);
    g_assert_cmpuint(held(&s, 0), ==, 1);

    dn_boot_incoming(&d, &s, uri);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    g_assert_cmpuint(get_rate(&d, DMNIC_SHAPER_Q(0)), ==, 8 * MBIT);
    g_assert_cmpuint(dn_rd(&d, DMNIC_SHAPER_Q(0) + DMNIC_SHQ_BURST), ==,
                     3000);
    g_assert_cmpuint(dn_rd(&d, DMNIC_REG_SHAPER_NET_BURST), ==, 5000);
    g_assert_cmpuint(dn_rd(&d, DMNIC_SHAPER_GRP(2) + DMNIC_SHG_PARENT), ==,
                     1);
    g_assert_cmpuint(get_rate(&d, DMNIC_SHAPER_GRP(2)), ==, 77 * MBIT);
    g_assert_cmpuint(dn_rd(&d, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_GROUP), ==, 3);
    g_assert_cmpuint(dn_rd(&d, DMNIC_SHAPER_Q(1) + DMNIC_SHQ_WEIGHT), ==, 7);
    dn_wr(&d, DMNIC_SHAPER_Q(2) + DMNIC_SHQ_RATE_HI, 0);
    g_assert_cmpuint(get_rate(&d, DMNIC_SHAPER_Q(2)), ==, 1234);
    /* a full bucket of 3000 bytes: 4 more frames, then 1 per ms */
    g_assert_cmpuint(sent(&d, 0), ==, 8);
    g_assert_cmpuint(held(&d, 0), ==, 2);      /* 1 on the source */
    step(&d, 1 * MS);
    g_assert_cmpuint(sent(&d, 0), ==, 9);
    step(&d, 1 * MS);
    g_assert_cmpuint(sent(&d, 0), ==, 10);
    dn_stop(&d);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic-shaper/regs", test_regs);
    qtest_add_func("/devmem-nic-shaper/queue-rate", test_queue_rate);
    qtest_add_func("/devmem-nic-shaper/netdev-and-queue",
                   test_netdev_and_queue);
    qtest_add_func("/devmem-nic-shaper/groups", test_groups);
    qtest_add_func("/devmem-nic-shaper/shaper-wrr-shared-limit",
                   test_wrr_shared_limit);
    qtest_add_func("/devmem-nic-shaper/migration", test_migration);
    return g_test_run();
}
