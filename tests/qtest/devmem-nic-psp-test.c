/*
 * QTest for devmem-nic PSP inline crypto (docs/specs/devmem-nic.rst, "PSP
 * inline crypto"): registers and commands, the key derivation and the
 * four PSP versions against known answers (devmem-lab-psp-vectors.h,
 * made and checked by devmem-nic-psp-vectors.py with a second
 * implementation), a round trip between two devices, the drop counters,
 * TX errors and migration of the keys.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include <sys/socket.h>
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "devmem-lab-pkt.h"
#include "devmem-lab-util.h"
#include "devmem-lab-nic.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"
#include "devmem-lab-psp-vectors.h"

#define RXQ             1
#define TXQ             2
#define ETH_IP4_UDP     (14 + 20)
#define PSP_ALL         0xf

/* ------------------------------------------------------------------ */
/* Harness                                                             */
/* ------------------------------------------------------------------ */

static void start(DnState *s, bool logged)
{
    g_autofree char *log = NULL;
    g_autofree char *args = NULL;

    memset(s, 0, sizeof(*s));
    if (logged) {
        log = g_strdup_printf("%s/dmnic-psp-test-%d-%p.log", g_get_tmp_dir(),
                              getpid(), s);
    }
    args = g_strdup_printf("-device devmem-nic,id=nic,netdev=n0,"
                           "mac=52:54:00:12:34:56,queues=%d%s%s", DN_NQ,
                           log ? " -d guest_errors -D " : "", log ? log : "");
    dn_boot(s, -1, args);
    s->log = g_steal_pointer(&log);
}

/* Whether the build has PSP; the test skips (with the reason) if not */
static bool have_psp(DnState *s)
{
    if (dn_rd(s, DMNIC_REG_CAPS) & DMNIC_CAPS_PSP) {
        return true;
    }
    g_test_skip("no CAPS_PSP: QEMU built without GnuTLS");
    dn_stop(s);
    return false;
}

static void rx_on(DnState *s, unsigned q)
{
    dn_rx_rings(s, q, 64);
    dn_qwr(s, q, DMNIC_Q_CTRL, DMNIC_Q_CTRL_RX_ENABLE |
           DMNIC_Q_CTRL_HDS_ENABLE);
    dn_post_bufs(s, q, 32, 32, DN_PBUF_LEN);
}

static uint32_t psp_cmd(DnState *s, uint32_t cmd)
{
    dn_wr(s, DMNIC_REG_PSP_CMD, cmd);
    return dn_rd(s, DMNIC_REG_PSP_STATUS) >> DMNIC_PSP_STATUS_RES_SHIFT;
}

static void key_write(DnState *s, const uint8_t *key, size_t len)
{
    uint8_t k[32] = { 0 };
    int i;

    memcpy(k, key, len);
    for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++) {
        dn_wr(s, DMNIC_REG_PSP_KEY + 4 * i, ldl_le_p(k + 4 * i));
    }
}

static void key_read(DnState *s, uint8_t *key)
{
    int i;

    for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++) {
        stl_le_p(key + 4 * i, dn_rd(s, DMNIC_REG_PSP_KEY + 4 * i));
    }
}

/* google/psp's two device keys, KEY_LOAD */
static void load_test_keys(DnState *s)
{
    key_write(s, psp_mk0, 32);
    dn_wr(s, DMNIC_REG_PSP_SPI, 0);
    g_assert_cmpuint(psp_cmd(s, DMNIC_PSP_CMD_KEY_LOAD), ==,
                     DMNIC_PSP_RES_OK);
    key_write(s, psp_mk1, 32);
    dn_wr(s, DMNIC_REG_PSP_SPI, DMNIC_PSP_SPI_PHASE);
    g_assert_cmpuint(psp_cmd(s, DMNIC_PSP_CMD_KEY_LOAD), ==,
                     DMNIC_PSP_RES_OK);
}

static uint32_t derive(DnState *s, uint32_t spi, unsigned ver, uint8_t *key)
{
    uint32_t r;

    dn_wr(s, DMNIC_REG_PSP_SPI, spi);
    dn_wr(s, DMNIC_REG_PSP_VERSION, ver);
    r = psp_cmd(s, DMNIC_PSP_CMD_DERIVE);
    if (key) {
        key_read(s, key);
    }
    return r;
}

/* TX SA @sa = the key the device derives for @spi, @ver (tx_key_add) */
static void sa_from_derive(DnState *s, unsigned sa, uint32_t spi,
                           unsigned ver)
{
    g_assert_cmpuint(derive(s, spi, ver, NULL), ==, DMNIC_PSP_RES_OK);
    dn_wr(s, DMNIC_REG_PSP_SA_INDEX, sa);
    g_assert_cmpuint(psp_cmd(s, DMNIC_PSP_CMD_SA_WRITE), ==,
                     DMNIC_PSP_RES_OK);
}

/*
 * Posts @frame as one PSP packet with SA @sa (or without PSP: sa < 0);
 * TSO with @mss if @flags has it.
 */
static void send_psp_mss(DnState *s, unsigned q, const uint8_t *frame,
                         size_t len, int sa, uint16_t flags, uint16_t mss)
{
    DnQueue *d = &s->q[q];
    uint64_t buf = dn_galloc(s, len);
    uint64_t desc = d->ring[DN_TXD] + d->txd_tail * DMNIC_TXD_SIZE;

    qtest_memwrite(s->qts, buf, frame, len);
    dn_post_txd(s, q, buf, len, 0x77, DMNIC_TXD_F_EOP | flags, 0, 0);
    qtest_writew(s->qts, desc + DMNIC_TXD_MSS, mss);
    if (sa >= 0) {
        qtest_writew(s->qts, desc + DMNIC_TXD_PSP_FLAGS, DMNIC_TXD_PSP_F_EN);
        qtest_writel(s->qts, desc + DMNIC_TXD_PSP_SA, sa);
    }
    dn_ring_doorbell(s, q, DN_TXD);
}

static void send_psp(DnState *s, unsigned q, const uint8_t *frame, size_t len,
                     int sa, uint16_t flags)
{
    send_psp_mss(s, q, frame, len, sa, flags, 0);
}

typedef struct RxPkt {
    DnCpl first;
    unsigned ncpl;
    uint8_t frame[DN_FRAME_MAX];
    size_t hdr_len;
    size_t len;
} RxPkt;

/* Consumes one packet of queue @q: header then payload bytes in order */
static void rx_packet(DnState *s, unsigned q, RxPkt *p)
{
    DnQueue *d = &s->q[q];
    DnCpl c;

    memset(p, 0, sizeof(*p));
    g_assert_cmpuint(dn_cpl_pending(s, q), >, 0);
    for (;;) {
        dn_read_cpl(s, q, d->rxc_head, &c);
        g_assert_cmphex(!!(c.flags & DMNIC_RXC_F_GEN), ==, d->rxc_gen);
        if (!p->ncpl) {
            g_assert_true(c.flags & DMNIC_RXC_F_SOP);
            p->first = c;
            p->hdr_len = c.hdr_len;
            qtest_memread(s->qts, d->hbuf[c.hdr_id], p->frame, c.hdr_len);
            p->len = c.hdr_len;
        }
        if (c.flags & DMNIC_RXC_F_PAY) {
            g_assert_cmpuint(p->len + c.pay_len, <=, DN_FRAME_MAX);
            qtest_memread(s->qts, d->pbuf[c.pay_id], p->frame + p->len,
                          c.pay_len);
            p->len += c.pay_len;
        }
        p->ncpl++;
        d->rxc_head = (d->rxc_head + 1) % d->size[DN_RXC];
        if (!d->rxc_head) {
            d->rxc_gen = !d->rxc_gen;
        }
        if (c.flags & DMNIC_RXC_F_EOP) {
            break;
        }
        g_assert_cmpuint(p->ncpl, <, 64);
    }
    dn_qwr(s, q, DMNIC_Q_RXC + DMNIC_RING_DRV, d->rxc_head);
    g_assert_cmpuint(p->first.pkt_len, ==, p->len);
}

/* Offsets in a KAT frame */
static size_t l3_len(int l3)
{
    return l3 == 4 ? 20 : 40;
}

static size_t psp_off(int l3)
{
    return 14 + l3_len(l3) + 8;
}

static size_t inner_off(int l3)
{
    return psp_off(l3) + DMNIC_PSP_HDR_LEN;
}

/* The decrypted frame the device delivers for KAT @k: plain with the IV */
static void expected_rx(const PspKat *k, uint8_t *out)
{
    memcpy(out, k->plain, k->plain_len);
    stq_be_p(out + psp_off(k->l3) + 8, k->iv);
}

static uint64_t gstat(DnState *s, uint32_t off)
{
    return dn_rd64(s, off);
}

/* ------------------------------------------------------------------ */
/* Registers and commands                                              */
/* ------------------------------------------------------------------ */

static void test_regs(void)
{
    uint8_t key[32];
    DnState s;

    start(&s, true);
    if (!have_psp(&s)) {
        return;
    }
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PSP_SA_NUM), ==,
                     DMNIC_PSP_TX_SA_NUM);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_STATUS), ==, 0);
    g_assert_cmphex(dn_rd64(&s, DMNIC_REG_PSP_TX_IV), ==, 1);
    dn_wr(&s, DMNIC_REG_PSP_CTRL, 0xffffffff);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_CTRL), ==, PSP_ALL);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV, 0x89abcdef);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV + 4, 0x01234567);
    g_assert_cmphex(dn_rd64(&s, DMNIC_REG_PSP_TX_IV), ==,
                    0x0123456789abcdefULL);

    /* argument errors change nothing */
    g_assert_cmpuint(psp_cmd(&s, 99), ==, DMNIC_PSP_RES_BAD_CMD);
    dn_expect_log(&s, "unknown PSP command 99");
    g_assert_cmpuint(derive(&s, 0x1234, 0, NULL), ==, DMNIC_PSP_RES_NO_KEY);
    g_assert_cmpuint(derive(&s, 0x1234, 4, NULL), ==, DMNIC_PSP_RES_BAD_ARG);
    g_assert_cmpuint(derive(&s, DMNIC_PSP_SPI_PHASE, 0, NULL), ==,
                     DMNIC_PSP_RES_BAD_ARG);
    dn_wr(&s, DMNIC_REG_PSP_SPI, 0x1234);
    dn_wr(&s, DMNIC_REG_PSP_VERSION, 0);
    dn_wr(&s, DMNIC_REG_PSP_SA_INDEX, DMNIC_PSP_TX_SA_NUM);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_SA_WRITE), ==,
                     DMNIC_PSP_RES_BAD_ARG);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_SA_CLEAR), ==,
                     DMNIC_PSP_RES_BAD_ARG);

    /* ROTATE: key 1 becomes current, then key 0; generations count */
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_ROTATE), ==, DMNIC_PSP_RES_OK);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_STATUS) & 0xffff, ==,
                    DMNIC_PSP_STATUS_PHASE | DMNIC_PSP_STATUS_KEY1 |
                    1 << DMNIC_PSP_STATUS_GEN1_SHIFT);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_ROTATE), ==, DMNIC_PSP_RES_OK);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_STATUS) & 0xffff, ==,
                    DMNIC_PSP_STATUS_KEY0 | DMNIC_PSP_STATUS_KEY1 |
                    1 << DMNIC_PSP_STATUS_GEN0_SHIFT |
                    1 << DMNIC_PSP_STATUS_GEN1_SHIFT);
    /* random keys: the derivation now works and gives different keys */
    g_assert_cmpuint(derive(&s, 0x1234, 1, key), ==, DMNIC_PSP_RES_OK);
    g_assert_false(memcmp(key, psp_key_b_256, 32) == 0);
    g_assert_cmpuint(derive(&s, 0x1234, 0, key), ==, DMNIC_PSP_RES_OK);
    g_assert_cmphex(ldl_le_p(key + 16), ==, 0);     /* 128-bit: rest 0 */

    /* generations wrap at 8 */
    load_test_keys(&s);
    load_test_keys(&s);
    load_test_keys(&s);
    load_test_keys(&s);
    load_test_keys(&s);
    load_test_keys(&s);
    load_test_keys(&s);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_STATUS) & 0xffff, ==,
                    DMNIC_PSP_STATUS_KEY0 | DMNIC_PSP_STATUS_KEY1);

    /* undefined offsets in the PSP block are logged */
    dn_wr(&s, 0x00f0, 1);
    dn_expect_log(&s, "undefined or read-only PSP register 0xf0");

    /* reset clears everything */
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_STATUS), ==, 0);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_CTRL), ==, 0);
    g_assert_cmphex(dn_rd64(&s, DMNIC_REG_PSP_TX_IV), ==, 1);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_KEY), ==, 0);
    g_assert_cmpuint(derive(&s, 0x1234, 0, NULL), ==, DMNIC_PSP_RES_NO_KEY);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* Key derivation: known answers                                       */
/* ------------------------------------------------------------------ */

static void test_kdf(void)
{
    static const struct {
        uint32_t spi;
        unsigned ver;
        const uint8_t *key;
        size_t len;
    } c[] = {
        { PSP_KAT_SPI_A, 0, psp_key_a_128, 16 },
        { PSP_KAT_SPI_A, 1, psp_key_a_256, 32 },
        { PSP_KAT_SPI_A, 2, psp_key_a_128, 16 },
        { PSP_KAT_SPI_A, 3, psp_key_a_256, 32 },
        { PSP_KAT_SPI_B, 0, psp_key_b_128, 16 },
        { PSP_KAT_SPI_B, 1, psp_key_b_256, 32 },
        { PSP_KAT_SPI_B, 2, psp_key_b_128, 16 },
        { PSP_KAT_SPI_B, 3, psp_key_b_256, 32 },
    };
    uint8_t key[32], zero[32] = { 0 };
    unsigned i;
    DnState s;

    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    g_assert_cmphex(dn_rd(&s, DMNIC_REG_PSP_STATUS), ==,
                    DMNIC_PSP_STATUS_KEY0 | DMNIC_PSP_STATUS_KEY1 |
                    1 << DMNIC_PSP_STATUS_GEN0_SHIFT |
                    1 << DMNIC_PSP_STATUS_GEN1_SHIFT);
    for (i = 0; i < ARRAY_SIZE(c); i++) {
        g_assert_cmpuint(derive(&s, c[i].spi, c[i].ver, key), ==,
                         DMNIC_PSP_RES_OK);
        g_assert_cmpmem(key, c[i].len, c[i].key, c[i].len);
        g_assert_cmpmem(key + c[i].len, 32 - c[i].len, zero, 32 - c[i].len);
    }
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* TX and RX known answers, one per vector                             */
/* ------------------------------------------------------------------ */

static void test_tx_kat(const void *data)
{
    const PspKat *k = data;
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    DnTxc t;
    DnState s;

    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    sa_from_derive(&s, 100, k->spi, k->version);
    dn_tx_setup(&s, TXQ);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV, (uint32_t)k->iv);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV + 4, k->iv >> 32);
    send_psp(&s, TXQ, k->plain, k->plain_len, 100, 0);
    g_assert_cmpint(dn_wire_recv(&s, out, DN_FRAME_MAX), ==, k->wire_len);
    g_assert_cmpmem(out, k->wire_len, k->wire, k->wire_len);
    g_assert_cmphex(dn_rd64(&s, DMNIC_REG_PSP_TX_IV), ==, k->iv + 1);
    dn_read_txc(&s, TXQ, 0, &t);
    g_assert_cmpuint(t.status, ==, DMNIC_TXC_S_OK);
    g_assert_cmpuint(t.len, ==, k->plain_len);
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_PSP_TX_PACKETS), ==, 1);
    /* after the IV to the last payload byte */
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_PSP_TX_BYTES), ==,
                     k->plain_len - inner_off(k->l3));
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_TX_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_TX_BYTES), ==, k->wire_len);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_TX_ERROR), ==, 0);
    dn_stop(&s);
}

static void test_rx_kat(const void *data)
{
    const PspKat *k = data;
    g_autofree uint8_t *want = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    unsigned gen;
    DnState s;

    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    gen = (dn_rd(&s, DMNIC_REG_PSP_STATUS) >>
           (k->spi >> 31 ? DMNIC_PSP_STATUS_GEN1_SHIFT :
                           DMNIC_PSP_STATUS_GEN0_SHIFT)) &
          DMNIC_PSP_STATUS_GEN_MASK;
    dn_wr(&s, DMNIC_REG_PSP_CTRL, 1u << k->version);
    dn_steer_all_to(&s, RXQ);
    rx_on(&s, RXQ);
    dn_inject(&s, k->wire, k->wire_len);
    rx_packet(&s, RXQ, p);
    expected_rx(k, want);
    g_assert_cmpmem(p->frame, p->len, want, k->plain_len);
    /* split after the inner TCP header (20 bytes), which L4_OFF names */
    g_assert_true(p->first.flags & DMNIC_RXC_F_SPLIT);
    g_assert_cmpuint(p->hdr_len, ==, inner_off(k->l3) + 20);
    g_assert_cmpuint(p->first.l4_off, ==, inner_off(k->l3));
    g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);
    g_assert_cmpuint((p->first.flags & DMNIC_RXC_F_PSP_GEN_MASK) >>
                     DMNIC_RXC_F_PSP_GEN_SHIFT, ==, gen);
    g_assert_true(p->first.flags & DMNIC_RXC_F_TCP);
    g_assert_false(p->first.flags & DMNIC_RXC_F_UDP);
    g_assert_true(p->first.flags & DMNIC_RXC_F_L4_CSUM_OK);
    if (k->l3 == 4) {
        g_assert_true(p->first.flags & DMNIC_RXC_F_L3_CSUM_OK);
    }
    g_assert_cmpuint(dn_qstat(&s, RXQ, DMNIC_Q_PSP_RX_PACKETS), ==, 1);
    g_assert_cmpuint(dn_qstat(&s, RXQ, DMNIC_Q_PSP_RX_BYTES), ==,
                     k->plain_len - inner_off(k->l3));
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_RX_AUTH_FAIL), ==, 0);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_RX_ERROR), ==, 0);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_RX_BAD), ==, 0);
    dn_stop(&s);
}

/*
 * A decrypted frame held back by the x-fault-delay-cpl knob is placed
 * later exactly as it would have been at once (PSP flags, inner split)
 */
static void test_rx_held(void)
{
    const PspKat *k = &psp_kats[1];
    g_autofree uint8_t *want = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    DnState s;

    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    dn_wr(&s, DMNIC_REG_PSP_CTRL, PSP_ALL);
    dn_steer_all_to(&s, RXQ);
    rx_on(&s, RXQ);
    dl_qom_set_str(s.qts, "/machine/peripheral/nic", "x-fault-delay-cpl",
                   "1:1000000");
    dn_inject(&s, k->wire, k->wire_len);
    g_assert_cmpuint(dn_cpl_pending(&s, RXQ), ==, 0);
    qtest_clock_step(s.qts, 1000000);
    rx_packet(&s, RXQ, p);
    expected_rx(k, want);
    g_assert_cmpmem(p->frame, p->len, want, k->plain_len);
    g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);
    g_assert_true(p->first.flags & DMNIC_RXC_F_SPLIT);
    g_assert_true(p->first.flags & DMNIC_RXC_F_L4_CSUM_OK);
    g_assert_cmpuint(p->hdr_len, ==, inner_off(4) + 20);
    g_assert_cmpuint(p->first.l4_off, ==, inner_off(4));
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* RX drops                                                            */
/* ------------------------------------------------------------------ */

/* Injects @f and asserts it was dropped with @counter + 1 */
static void expect_drop(DnState *s, const uint8_t *f, size_t len,
                        uint32_t counter)
{
    uint64_t before = gstat(s, counter);

    dn_inject(s, f, len);
    g_assert_cmpuint(gstat(s, counter), ==, before + 1);
    g_assert_cmpuint(dn_cpl_pending(s, RXQ), ==, 0);
}

static void test_rx_drops(void)
{
    const PspKat *k = &psp_kats[1];     /* v1, IPv4, SPI A (device key 1) */
    g_autofree uint8_t *f = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    size_t ph = psp_off(4);
    DnState s;

    g_assert_cmpuint(k->version, ==, 1);
    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    dn_steer_all_to(&s, RXQ);
    rx_on(&s, RXQ);

    /* PSP off: an ordinary UDP frame, delivered as it came */
    dn_inject(&s, k->wire, k->wire_len);
    rx_packet(&s, RXQ, p);
    g_assert_cmpmem(p->frame, p->len, k->wire, k->wire_len);
    g_assert_true(p->first.flags & DMNIC_RXC_F_UDP);
    g_assert_false(p->first.flags & DMNIC_RXC_F_PSP);

    /* device key 1 not valid: unknown SPI */
    dn_wr(&s, DMNIC_REG_PSP_CTRL, PSP_ALL);
    key_write(&s, psp_mk0, 32);
    dn_wr(&s, DMNIC_REG_PSP_SPI, 0);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_KEY_LOAD), ==,
                     DMNIC_PSP_RES_OK);
    expect_drop(&s, k->wire, k->wire_len, DMNIC_REG_G_PSP_RX_BAD);

    /* version not enabled */
    load_test_keys(&s);
    dn_wr(&s, DMNIC_REG_PSP_CTRL, PSP_ALL & ~2u);
    expect_drop(&s, k->wire, k->wire_len, DMNIC_REG_G_PSP_RX_BAD);
    dn_wr(&s, DMNIC_REG_PSP_CTRL, PSP_ALL);

    /* SPI 0x80000000: bits 30:0 zero */
    memcpy(f, k->wire, k->wire_len);
    stl_be_p(f + ph + 4, DMNIC_PSP_SPI_PHASE);
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_BAD);

    /* tampered ICV, ciphertext, AAD (the IV), SPI of another key */
    memcpy(f, k->wire, k->wire_len);
    f[k->wire_len - 1] ^= 1;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_AUTH_FAIL);
    memcpy(f, k->wire, k->wire_len);
    f[inner_off(4) + 30] ^= 0x80;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_AUTH_FAIL);
    memcpy(f, k->wire, k->wire_len);
    f[ph + 15] ^= 1;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_AUTH_FAIL);
    memcpy(f, k->wire, k->wire_len);
    stl_be_p(f + ph + 4, PSP_KAT_SPI_B);
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_AUTH_FAIL);

    /* framing: UDP length wrong, flags bit 0 clear, header past the end */
    memcpy(f, k->wire, k->wire_len);
    stw_be_p(f + ETH_IP4_UDP + 4, lduw_be_p(f + ETH_IP4_UDP + 4) - 1);
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);
    memcpy(f, k->wire, k->wire_len);
    f[ph + 3] &= ~1;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);
    memcpy(f, k->wire, k->wire_len);
    f[ph + 1] = 255;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);
    memcpy(f, k->wire, k->wire_len);
    f[ph + 2] = 0x3f;                   /* crypt offset 252 bytes */
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);
    /* a wrong non-zero UDP checksum */
    memcpy(f, k->wire, k->wire_len);
    stw_be_p(f + ETH_IP4_UDP + 6, 0x1234);
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);
    /* tunnel mode (next header 4, IPv4) and a non-TCP inner protocol */
    memcpy(f, k->wire, k->wire_len);
    f[ph] = 4;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);
    memcpy(f, k->wire, k->wire_len);
    f[ph] = 17;
    expect_drop(&s, f, k->wire_len, DMNIC_REG_G_PSP_RX_ERROR);

    /* the untouched frame still decrypts: nothing above was sticky */
    dn_inject(&s, k->wire, k->wire_len);
    rx_packet(&s, RXQ, p);
    g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);

    /*
     * stale: ROTATE replaces the key that is not current (key 1, the
     * previous one), so SPI A's packets fail; key 0 is now the previous
     * key and still decrypts until the next ROTATE
     */
    g_assert_cmpuint(dn_rd(&s, DMNIC_REG_PSP_STATUS) &
                     DMNIC_PSP_STATUS_PHASE, ==, 0);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_ROTATE), ==, DMNIC_PSP_RES_OK);
    expect_drop(&s, k->wire, k->wire_len, DMNIC_REG_G_PSP_RX_AUTH_FAIL);
    /* key 0 (SPI B) is the previous key: still good */
    dn_inject(&s, psp_kats[4].wire, psp_kats[4].wire_len);
    rx_packet(&s, RXQ, p);
    g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_ROTATE), ==, DMNIC_PSP_RES_OK);
    expect_drop(&s, psp_kats[4].wire, psp_kats[4].wire_len,
                DMNIC_REG_G_PSP_RX_AUTH_FAIL);

    g_assert_cmpuint(dn_qstat(&s, RXQ, DMNIC_Q_PSP_RX_PACKETS), ==, 2);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_RX_AUTH_FAIL), ==, 6);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_RX_ERROR), ==, 7);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_RX_BAD), ==, 3);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* TX errors                                                           */
/* ------------------------------------------------------------------ */

static void expect_tx_error(DnState *s, const uint8_t *f, size_t len, int sa,
                            uint16_t flags)
{
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    uint64_t before = gstat(s, DMNIC_REG_G_PSP_TX_ERROR);
    uint32_t head = dn_qrd(s, TXQ, DMNIC_Q_TXC + DMNIC_RING_DEV);
    DnTxc t;

    send_psp(s, TXQ, f, len, sa, flags);
    g_assert_cmpuint(gstat(s, DMNIC_REG_G_PSP_TX_ERROR), ==, before + 1);
    g_assert_cmpint(dl_sock_recv(s->sv[0], out, DN_FRAME_MAX, 100), ==, -1);
    /* completed, the queue runs on */
    g_assert_cmpuint(dn_qrd(s, TXQ, DMNIC_Q_TXC + DMNIC_RING_DEV), ==,
                     head + 1);
    dn_read_txc(s, TXQ, head, &t);
    g_assert_cmpuint(t.status, ==, DMNIC_TXC_S_PSP_ERROR);
    g_assert_cmphex(dn_qrd(s, TXQ, DMNIC_Q_STATUS) &
                    DMNIC_Q_STATUS_TX_ERROR, ==, 0);
}

static void test_tx_errors(void)
{
    const PspKat *k = &psp_kats[0];
    g_autofree uint8_t *f = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    size_t ph = psp_off(4);
    DnState s;

    start(&s, true);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    sa_from_derive(&s, 5, k->spi, k->version);
    dn_tx_setup(&s, TXQ);

    expect_tx_error(&s, k->plain, k->plain_len, 6, 0);      /* SA unused */
    dn_expect_log(&s, "SA 6 not valid");
    expect_tx_error(&s, k->plain, k->plain_len, DMNIC_PSP_TX_SA_NUM, 0);
    memcpy(f, k->plain, k->plain_len);
    stl_be_p(f + ph + 4, k->spi + 1);                       /* SPI != SA */
    expect_tx_error(&s, f, k->plain_len, 5, 0);
    memcpy(f, k->plain, k->plain_len);
    f[ph + 3] = 1 << 2 | 1;                                 /* version 1 */
    expect_tx_error(&s, f, k->plain_len, 5, 0);
    memcpy(f, k->plain, k->plain_len);
    stw_be_p(f + ETH_IP4_UDP + 2, 1001);                    /* not PSP */
    expect_tx_error(&s, f, k->plain_len, 5, 0);
    expect_tx_error(&s, k->plain, k->plain_len - 1, 5, 0);  /* IP length */
    /* TSO: MSS below TSO_MSS_MIN is a PSP TX error, not a queue error */
    expect_tx_error(&s, k->plain, k->plain_len, 5, DMNIC_TXD_F_TSO);
    /* SA_CLEAR */
    dn_wr(&s, DMNIC_REG_PSP_SA_INDEX, 5);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_SA_CLEAR), ==,
                     DMNIC_PSP_RES_OK);
    expect_tx_error(&s, k->plain, k->plain_len, 5, 0);
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_PSP_TX_PACKETS), ==, 0);
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_TX_PACKETS), ==, 0);

    /* a frame without PSP is untouched; with a good SA it works again */
    send_psp(&s, TXQ, k->plain, k->plain_len, -1, 0);
    g_assert_cmpint(dn_wire_recv(&s, out, DN_FRAME_MAX), ==, k->plain_len);
    g_assert_cmpmem(out, k->plain_len, k->plain, k->plain_len);
    sa_from_derive(&s, 5, k->spi, k->version);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV, (uint32_t)k->iv);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV + 4, k->iv >> 32);
    send_psp(&s, TXQ, k->plain, k->plain_len, 5, 0);
    g_assert_cmpint(dn_wire_recv(&s, out, DN_FRAME_MAX), ==, k->wire_len);
    g_assert_cmpmem(out, k->wire_len, k->wire, k->wire_len);
    dn_stop(&s);
}

/*
 * Issue 42 M4 (psp-ops-vs-reset): a driver's tx_key_add that a device
 * reset interrupts after its KEY writes goes on with SPI, VERSION,
 * SA_INDEX and SA_WRITE; the reset cleared the KEY registers, and the
 * device refuses an SA with an all-zero key (its frames would be
 * readable by anyone) rather than encrypting with it.
 */
static void test_ops_vs_reset(void)
{
    const PspKat *k = &psp_kats[0];
    uint8_t key[32];
    DnState s;

    start(&s, true);
    if (!have_psp(&s)) {
        return;
    }
    memset(key, 0x11, sizeof(key));
    key_write(&s, key, 32);
    dn_wr(&s, DMNIC_REG_CTRL, DMNIC_CTRL_RESET);
    dn_wr(&s, DMNIC_REG_PSP_SPI, k->spi);
    dn_wr(&s, DMNIC_REG_PSP_VERSION, k->version);
    dn_wr(&s, DMNIC_REG_PSP_SA_INDEX, 5);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_SA_WRITE), ==,
                     DMNIC_PSP_RES_BAD_ARG);
    dn_expect_log(&s, "all-zero key refused");
    /* no SA: the frame is a TX error, nothing on the wire */
    dn_tx_setup(&s, TXQ);
    expect_tx_error(&s, k->plain, k->plain_len, 5, 0);
    dn_expect_log(&s, "SA 5 not valid");
    /* the same command with the key written works */
    key_write(&s, key, 32);
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_SA_WRITE), ==,
                     DMNIC_PSP_RES_OK);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* TSO: every segment its own PSP packet                               */
/* ------------------------------------------------------------------ */

static void test_tso(const void *data)
{
    const PspKat *k = &psp_kats[(uintptr_t)data];
    g_autofree uint8_t *f = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *wire = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *pay = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    size_t inner = inner_off(k->l3), h = inner + 20, mss = 64;
    size_t pay_len = k->plain_len - h, got = 0;
    uint32_t seq0;
    ssize_t wlen;
    unsigned i, n = DIV_ROUND_UP(pay_len, mss);
    DnState s;

    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    sa_from_derive(&s, 1, k->spi, k->version);
    dn_wr(&s, DMNIC_REG_PSP_CTRL, PSP_ALL);
    dn_tx_setup(&s, TXQ);
    dn_steer_all_to(&s, RXQ);
    rx_on(&s, RXQ);

    /* CWR, PSH, FIN: CWR stays on the first segment, PSH/FIN on the last */
    memcpy(f, k->plain, k->plain_len);
    f[inner + 13] = 0x80 | 0x18 | 0x01;
    seq0 = ldl_be_p(f + inner + 4);
    send_psp_mss(&s, TXQ, f, k->plain_len, 1, DMNIC_TXD_F_TSO, mss);
    for (i = 0; i < n; i++) {
        size_t seg = MIN(mss, pay_len - i * mss);

        wlen = dn_wire_recv(&s, wire, DN_FRAME_MAX);
        g_assert_cmpint(wlen, ==, h + seg + DMNIC_PSP_ICV_LEN);
        g_assert_cmphex(ldq_be_p(wire + psp_off(k->l3) + 8), ==, 1 + i);
        /* the device's own RX (KAT-checked) decrypts each segment */
        dn_inject(&s, wire, wlen);
        rx_packet(&s, RXQ, p);
        g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);
        g_assert_true(p->first.flags & DMNIC_RXC_F_L4_CSUM_OK);
        if (k->l3 == 4) {
            g_assert_true(p->first.flags & DMNIC_RXC_F_L3_CSUM_OK);
            g_assert_cmpuint(lduw_be_p(p->frame + 14 + 4), ==,
                             lduw_be_p(f + 14 + 4) + i);
        }
        g_assert_cmpuint(p->len, ==, h + seg);
        g_assert_cmphex(ldl_be_p(p->frame + inner + 4), ==, seq0 + i * mss);
        g_assert_cmphex(p->frame[inner + 13], ==,
                        0x10 | (i == 0 ? 0x80 : 0) |
                        (i == n - 1 ? 0x08 | 0x01 : 0));
        memcpy(pay + got, p->frame + h, seg);
        got += seg;
    }
    g_assert_cmpint(dl_sock_recv(s.sv[0], wire, DN_FRAME_MAX, 100), ==, -1);
    g_assert_cmpmem(pay, got, k->plain + h, pay_len);
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_PSP_TX_PACKETS), ==, n);
    g_assert_cmpuint(dn_qstat(&s, TXQ, DMNIC_Q_TX_PACKETS), ==, n);
    g_assert_cmpuint(dn_qstat(&s, RXQ, DMNIC_Q_PSP_RX_PACKETS), ==, n);
    g_assert_cmpuint(gstat(&s, DMNIC_REG_G_PSP_TX_ERROR), ==, 0);
    dn_stop(&s);
}

/* ------------------------------------------------------------------ */
/* Round trip between two devices, as Linux sets it up                  */
/* ------------------------------------------------------------------ */

/* psp_kats[] plain frame @k re-labelled with @spi, @ver */
static size_t relabel(const PspKat *k, uint32_t spi, unsigned ver,
                      uint8_t *f)
{
    size_t ph = psp_off(k->l3);

    memcpy(f, k->plain, k->plain_len);
    stl_be_p(f + ph + 4, spi);
    f[ph + 3] = ver << 2 | 1;
    return k->plain_len;
}

static void test_round_trip(const void *data)
{
    unsigned ver = (uintptr_t)data;
    const PspKat *k = &psp_kats[0];
    g_autofree uint8_t *f = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *wire = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    size_t len, inner = inner_off(4);
    uint8_t key[32];
    uint32_t status, spi;
    ssize_t wlen;
    DnState a, b;
    unsigned q;

    start(&a, false);
    if (!have_psp(&a)) {
        return;
    }
    start(&b, false);
    /* B: a random device key; its receive SPI and key (rx_spi_alloc) */
    g_assert_cmpuint(psp_cmd(&b, DMNIC_PSP_CMD_ROTATE), ==, DMNIC_PSP_RES_OK);
    status = dn_rd(&b, DMNIC_REG_PSP_STATUS);
    spi = (status & DMNIC_PSP_STATUS_PHASE ? DMNIC_PSP_SPI_PHASE : 0) | 0x42;
    g_assert_cmpuint(derive(&b, spi, ver, key), ==, DMNIC_PSP_RES_OK);
    dn_wr(&b, DMNIC_REG_PSP_CTRL, 1u << ver);
    /* flow steering on the inner TCP port: dport 5201 to queue 3 */
    dn_wr(&b, DMNIC_REG_FS_INDEX, 9);
    dn_wr(&b, DMNIC_REG_FS_CTRL, DMNIC_FS_CTRL_VALID |
          DMNIC_FS_L4_TCP << DMNIC_FS_CTRL_L4_SHIFT);
    dn_wr(&b, DMNIC_REG_FS_ACTION, 3);
    dn_wr(&b, DMNIC_REG_FS_PORTS, 5201u << 16);
    dn_wr(&b, DMNIC_REG_FS_PORTS_MASK, 0xffffu << 16);
    dn_wr(&b, DMNIC_REG_FS_CMD, DMNIC_FS_CMD_WRITE);
    dn_steer_all_to(&b, 0);
    for (q = 0; q < DN_NQ; q++) {
        rx_on(&b, q);
    }
    /* A: the peer's key as a TX SA (tx_key_add) */
    key_write(&a, key, 32);
    dn_wr(&a, DMNIC_REG_PSP_SPI, spi);
    dn_wr(&a, DMNIC_REG_PSP_VERSION, ver);
    dn_wr(&a, DMNIC_REG_PSP_SA_INDEX, 4095);
    g_assert_cmpuint(psp_cmd(&a, DMNIC_PSP_CMD_SA_WRITE), ==,
                     DMNIC_PSP_RES_OK);
    dn_tx_setup(&a, TXQ);

    len = relabel(k, spi, ver, f);
    send_psp(&a, TXQ, f, len, 4095, 0);
    wlen = dn_wire_recv(&a, wire, DN_FRAME_MAX);
    g_assert_cmpint(wlen, ==, len + DMNIC_PSP_ICV_LEN);
    /* GCM: no plaintext byte run of the payload on the wire; GMAC: clear */
    if (ver < 2) {
        g_assert_null(memmem(wire, wlen, f + inner + 20, 16));
    } else {
        g_assert_cmpmem(wire + inner, len - inner, f + inner, len - inner);
    }
    dn_inject(&b, wire, wlen);
    g_assert_cmpuint(dn_cpl_pending(&b, 3), ==, 1);
    rx_packet(&b, 3, p);
    g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);
    g_assert_true(p->first.flags & DMNIC_RXC_F_FS_MATCH);
    g_assert_cmpuint(p->first.rule, ==, 9);
    g_assert_cmpuint(p->len, ==, len);
    g_assert_cmpmem(p->frame + inner, len - inner, f + inner, len - inner);
    g_assert_cmphex(ldq_be_p(p->frame + psp_off(4) + 8), ==, 1);   /* IV */

    /* two rotations on B: A's key is stale, its frames fail the ICV */
    psp_cmd(&b, DMNIC_PSP_CMD_ROTATE);
    send_psp(&a, TXQ, f, len, 4095, 0);
    wlen = dn_wire_recv(&a, wire, DN_FRAME_MAX);
    dn_inject(&b, wire, wlen);
    g_assert_cmpuint(dn_cpl_pending(&b, 3), ==, 1);     /* previous key */
    rx_packet(&b, 3, p);
    psp_cmd(&b, DMNIC_PSP_CMD_ROTATE);
    send_psp(&a, TXQ, f, len, 4095, 0);
    wlen = dn_wire_recv(&a, wire, DN_FRAME_MAX);
    dn_inject(&b, wire, wlen);
    g_assert_cmpuint(dn_cpl_pending(&b, 3), ==, 0);
    g_assert_cmpuint(gstat(&b, DMNIC_REG_G_PSP_RX_AUTH_FAIL), ==, 1);
    g_assert_cmpuint(dn_qstat(&a, TXQ, DMNIC_Q_PSP_TX_PACKETS), ==, 3);
    g_assert_cmpuint(dn_qstat(&b, 3, DMNIC_Q_PSP_RX_PACKETS), ==, 2);
    dn_stop(&b);
    dn_stop(&a);
}

/* ------------------------------------------------------------------ */
/* A stream through two devices (scripts/bench)                        */
/* ------------------------------------------------------------------ */

/*
 * @inner (an Ethernet/IPv4/TCP frame of @len bytes) as the driver hands
 * it to the device for PSP version @ver and @spi (psp_dev_encapsulate()):
 * UDP to port 1000 and a PSP header (crypt offset 0, IV 0) inserted
 * after the IPv4 header.  Returns the new length.
 */
static size_t psp_encap(const uint8_t *inner, size_t len, unsigned ver,
                        uint32_t spi, uint8_t *f)
{
    size_t ip = 14, l4 = ip + 20, ph = l4 + 8, add = 8 + DMNIC_PSP_HDR_LEN;
    size_t tcp_len = len - l4;

    memcpy(f, inner, l4);
    memcpy(f + ph + DMNIC_PSP_HDR_LEN, inner + l4, tcp_len);
    f[ip + 9] = 17;
    stw_be_p(f + ip + 2, lduw_be_p(inner + ip + 2) + add);
    stw_be_p(f + ip + 10, 0);
    stw_be_p(f + ip + 10, dl_csum_fold(dl_csum_add(0, f + ip, 20)));
    stw_be_p(f + l4, 0x1234);
    stw_be_p(f + l4 + 2, DMNIC_PSP_UDP_PORT);
    stw_be_p(f + l4 + 4, 8 + DMNIC_PSP_HDR_LEN + tcp_len);
    stw_be_p(f + l4 + 6, 0);
    memset(f + ph, 0, DMNIC_PSP_HDR_LEN);
    f[ph] = 6;                          /* next header: TCP */
    f[ph + 1] = 1;                      /* (1 + 1) * 8 header bytes */
    f[ph + 3] = ver << 2 | 1;
    stl_be_p(f + ph + 4, spi);
    return len + add;
}

/*
 * Device A sends a stream of TCP frames to device B, through PSP or in
 * clear, every frame read back from B's buffers and checked byte-exact,
 * buffers and completions recycled as a driver does.
 * DEVMEM_LAB_PSP_STREAM="frames,payload,version[,engines]" sizes it
 * (default 64 frames of 1400 bytes, version 0; version -1: no PSP, the
 * plain path through the same steps) and turns engines on (a mask of
 * STREAM_*, default 0), each checked to have acted on every frame.
 * scripts/bench runs it under callgrind to count the instructions of A's
 * TX (dmnic_tx_bh: descriptors, DMA, encryption, send) and B's RX
 * (devmem_nic_core_receive: decryption, parse, steering, DMA, completion)
 * per frame, with each engine off and on.
 */
#define STREAM_RX_TS    1   /* B stamps every packet (PTP_CTRL_RX_TS) */
#define STREAM_PAUSE    2   /* B: PAUSE_CTRL_RX | PAUSE_CTRL_TX (lossless) */
#define STREAM_SHAPER   4   /* A: TXQ's limiter at SHAPER_RATE_MAX */
#define STREAM_TX_TS    8   /* A stamps every packet (TXD_F_TS) */
#define STREAM_ALL      15
static void test_stream(void)
{
    const char *env = getenv("DEVMEM_LAB_PSP_STREAM");
    unsigned frames = 64, payload = 1400, i, n, k;
    unsigned eng = 0;
    int ver = 0, nf;
    g_autofree uint8_t *in = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *f = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *wire = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    uint32_t status, spi = 0;
    size_t len, hlen;
    uint64_t buf, rxts = 0, txts = 0;
    uint8_t key[32];
    ssize_t wlen;
    DlPktSpec spec;
    DnState a, b;
    DnQueue *t;
    DnTxc c;

    if (env) {
        nf = sscanf(env, "%u,%u,%d,%u", &frames, &payload, &ver, &eng);
        g_assert_cmpint(nf, >=, 3);
        g_assert_cmpuint(payload, <=, 9000);
        g_assert_cmpuint(eng & ~STREAM_ALL, ==, 0);
        g_assert_cmpint(ver, >=, -1);
        g_assert_cmpint(ver, <, DMNIC_PSP_NUM_VERSIONS);
    }
    start(&a, false);
    if (!have_psp(&a)) {
        return;
    }
    start(&b, false);
    if (ver >= 0) {
        g_assert_cmpuint(psp_cmd(&b, DMNIC_PSP_CMD_ROTATE), ==,
                         DMNIC_PSP_RES_OK);
        status = dn_rd(&b, DMNIC_REG_PSP_STATUS);
        spi = (status & DMNIC_PSP_STATUS_PHASE ? DMNIC_PSP_SPI_PHASE : 0) | 7;
        g_assert_cmpuint(derive(&b, spi, ver, key), ==, DMNIC_PSP_RES_OK);
        dn_wr(&b, DMNIC_REG_PSP_CTRL, 1u << ver);
        key_write(&a, key, 32);
        dn_wr(&a, DMNIC_REG_PSP_SPI, spi);
        dn_wr(&a, DMNIC_REG_PSP_VERSION, ver);
        dn_wr(&a, DMNIC_REG_PSP_SA_INDEX, 0);
        g_assert_cmpuint(psp_cmd(&a, DMNIC_PSP_CMD_SA_WRITE), ==,
                         DMNIC_PSP_RES_OK);
    }
    dn_steer_all_to(&b, 0);
    if (eng & STREAM_RX_TS) {
        /* the array is written while RX is off: one entry a completion */
        rxts = dn_galloc(&b, 128 * 8);
        dn_qwr(&b, 0, DMNIC_Q_RXTS_LO, rxts);
        dn_qwr(&b, 0, DMNIC_Q_RXTS_HI, rxts >> 32);
        dn_wr(&b, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_RX_TS);
    }
    if (eng & STREAM_PAUSE) {
        dn_wr(&b, DMNIC_REG_PAUSE_CTRL,
              DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX);
    }
    rx_on(&b, 0);
    if (eng & STREAM_RX_TS) {
        g_assert_cmphex(dn_qrd(&b, 0, DMNIC_Q_RXTS_LO), ==, (uint32_t)rxts);
    }
    if (eng & STREAM_TX_TS) {
        txts = dn_galloc(&a, 64 * 8);
        dn_qwr(&a, TXQ, DMNIC_Q_TXTS_LO, txts);
        dn_qwr(&a, TXQ, DMNIC_Q_TXTS_HI, txts >> 32);
        dn_wr(&a, DMNIC_REG_PTP_CTRL, DMNIC_PTP_CTRL_TX_TS);
    }
    if (eng & STREAM_SHAPER) {
        /* 50,000 bytes a microsecond: a 1 us step refills the bucket */
        dn_wr(&a, DMNIC_SHAPER_Q(TXQ) + DMNIC_SHQ_RATE_LO,
              (uint32_t)DMNIC_SHAPER_RATE_MAX);
        dn_wr(&a, DMNIC_SHAPER_Q(TXQ) + DMNIC_SHQ_RATE_HI,
              DMNIC_SHAPER_RATE_MAX >> 32);
        g_assert_cmpuint(dn_rd(&a, DMNIC_SHAPER_Q(TXQ) + DMNIC_SHQ_RATE_LO),
                         ==, (uint32_t)DMNIC_SHAPER_RATE_MAX);
    }
    dn_tx_setup(&a, TXQ);
    if (eng & STREAM_TX_TS) {
        g_assert_cmphex(dn_qrd(&a, TXQ, DMNIC_Q_TXTS_LO), ==, (uint32_t)txts);
    }
    t = &a.q[TXQ];
    buf = dn_galloc(&a, DN_FRAME_MAX);
    dl_pkt_default(&spec, 4, DL_PROTO_TCP, payload);
    for (i = 0; i < frames; i++) {
        uint64_t desc = t->ring[DN_TXD] + t->txd_tail * DMNIC_TXD_SIZE;

        spec.payload_seed = i;
        len = dl_pkt_build(&spec, in, &hlen);
        if (ver >= 0) {
            len = psp_encap(in, len, ver, spi, f);
        } else {
            memcpy(f, in, len);
        }
        qtest_memwrite(a.qts, buf, f, len);
        dn_post_txd(&a, TXQ, buf, len, i, DMNIC_TXD_F_EOP |
                    (eng & STREAM_TX_TS ? DMNIC_TXD_F_TS : 0), 0, 0);
        if (ver >= 0) {
            qtest_writew(a.qts, desc + DMNIC_TXD_PSP_FLAGS,
                         DMNIC_TXD_PSP_F_EN);
            qtest_writel(a.qts, desc + DMNIC_TXD_PSP_SA, 0);
        }
        if (eng & STREAM_SHAPER) {
            qtest_clock_step(a.qts, 1000);
        }
        dn_ring_doorbell(&a, TXQ, DN_TXD);
        wlen = dn_wire_recv(&a, wire, DN_FRAME_MAX);
        g_assert_cmpint(wlen, ==, len + (ver >= 0 ? DMNIC_PSP_ICV_LEN : 0));
        if (ver == 0 || ver == 1) {
            g_assert_null(memmem(wire, wlen, in + hlen, MIN(payload, 16)));
        }
        /* A's TX completion */
        g_assert_cmpuint(dn_qrd(&a, TXQ, DMNIC_Q_TXC + DMNIC_RING_DEV), !=,
                         t->txc_head);
        dn_read_txc(&a, TXQ, t->txc_head, &c);
        g_assert_cmpuint(c.status, ==, DMNIC_TXC_S_OK);
        g_assert_cmphex(c.flags & DMNIC_TXC_F_TS, ==,
                        eng & STREAM_TX_TS ? DMNIC_TXC_F_TS : 0);
        t->txc_head = (t->txc_head + 1) % t->size[DN_TXC];
        dn_qwr(&a, TXQ, DMNIC_Q_TXC + DMNIC_RING_DRV, t->txc_head);
        /* B: decrypted (or plain) frame, the payload as A was given it */
        dn_inject(&b, wire, wlen);
        rx_packet(&b, 0, p);
        g_assert_cmpuint(!!(p->first.flags & DMNIC_RXC_F_PSP), ==, ver >= 0);
        g_assert_cmpuint(!!(p->first.flags & DMNIC_RXC_F_TS), ==,
                         !!(eng & STREAM_RX_TS));
        g_assert_cmpuint(p->len, ==, len);
        g_assert_cmpmem(p->frame + len - payload, payload, in + hlen, payload);
        n = p->ncpl;
        for (k = 0; k < n; k++) {
            dn_post_bufs(&b, 0, k == 0, 1, DN_PBUF_LEN);
        }
    }
    g_assert_cmpuint(dn_qstat(&b, 0, DMNIC_Q_RX_PACKETS), ==, frames);
    g_assert_cmpuint(dn_qstat(&b, 0, DMNIC_Q_RX_DROP_NOBUF), ==, 0);
    g_assert_cmpuint(dn_qstat(&b, 0, DMNIC_Q_PSP_RX_PACKETS), ==,
                     ver >= 0 ? frames : 0);
    g_assert_cmpuint(dn_qstat(&a, TXQ, DMNIC_Q_PSP_TX_PACKETS), ==,
                     ver >= 0 ? frames : 0);
    /* the engines were on and nothing waited: no pause sent, none held */
    g_assert_cmphex(dn_rd(&b, DMNIC_REG_PAUSE_CTRL), ==,
                    eng & STREAM_PAUSE ?
                    DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX : 0);
    g_assert_cmpuint(dn_rd64(&b, DMNIC_REG_G_PAUSE_TX), ==, 0);
    g_assert_cmpuint(dn_rd64(&a, DMNIC_SHAPER_Q(TXQ) + DMNIC_SHQ_HELD), ==, 0);
    dn_stop(&b);
    dn_stop(&a);
}

/* ------------------------------------------------------------------ */
/* Migration: keys, SAs, IV and counters move with the device          */
/* ------------------------------------------------------------------ */

static void test_migration(void)
{
    const PspKat *k = &psp_kats[3];     /* v3 GMAC-256 */
    g_autofree char *path = g_strdup_printf("%s/dmnic-psp-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *want = g_malloc0(DN_FRAME_MAX);
    g_autofree RxPkt *p = g_new0(RxPkt, 1);
    uint8_t key[32], key2[32];
    DnState s, d;

    start(&s, false);
    if (!have_psp(&s)) {
        return;
    }
    load_test_keys(&s);
    sa_from_derive(&s, 3000, k->spi, k->version);
    dn_wr(&s, DMNIC_REG_PSP_CTRL, PSP_ALL);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV, (uint32_t)k->iv);
    dn_wr(&s, DMNIC_REG_PSP_TX_IV + 4, k->iv >> 32);
    /* a device key the destination cannot rebuild: from ROTATE */
    g_assert_cmpuint(psp_cmd(&s, DMNIC_PSP_CMD_ROTATE), ==, DMNIC_PSP_RES_OK);
    dn_inject(&s, k->wire, k->wire_len);    /* key 1 replaced: auth fail */
    g_assert_cmpuint(derive(&s, 0x80000055, 3, key), ==, DMNIC_PSP_RES_OK);

    dn_boot_incoming(&d, &s, uri);
    d.log = NULL;
    migrate(s.qs, d.qs, uri);
    unlink(path);
    d.frames = dn_rd64(&d, DMNIC_REG_G_RX_FRAMES);

    g_assert_cmphex(dn_rd(&d, DMNIC_REG_PSP_CTRL), ==, PSP_ALL);
    g_assert_cmphex(dn_rd(&d, DMNIC_REG_PSP_STATUS) & 0xffff, ==,
                    DMNIC_PSP_STATUS_PHASE | DMNIC_PSP_STATUS_KEY0 |
                    DMNIC_PSP_STATUS_KEY1 | 1 << DMNIC_PSP_STATUS_GEN0_SHIFT |
                    2 << DMNIC_PSP_STATUS_GEN1_SHIFT);
    g_assert_cmpuint(gstat(&d, DMNIC_REG_G_PSP_RX_AUTH_FAIL), ==, 1);
    /*
     * the IV moved on by a random amount: a state loaded twice must not
     * send under the same IVs again (AES-GCM nonce reuse)
     */
    g_assert_cmphex(dn_rd64(&d, DMNIC_REG_PSP_TX_IV), >, k->iv);
    /* the TX SA arrived: with the IV back, the KAT frame comes out exact */
    dn_wr(&d, DMNIC_REG_PSP_TX_IV, (uint32_t)k->iv);
    dn_wr(&d, DMNIC_REG_PSP_TX_IV + 4, k->iv >> 32);
    dn_tx_setup(&d, TXQ);
    send_psp(&d, TXQ, k->plain, k->plain_len, 3000, 0);
    g_assert_cmpint(dn_wire_recv(&d, out, DN_FRAME_MAX), ==, k->wire_len);
    g_assert_cmpmem(out, k->wire_len, k->wire, k->wire_len);
    /* the random key from ROTATE arrived: same derivation, and it works */
    g_assert_cmpuint(derive(&d, 0x80000055, 3, key2), ==, DMNIC_PSP_RES_OK);
    g_assert_cmpmem(key2, 32, key, 32);
    dn_wr(&d, DMNIC_REG_PSP_SA_INDEX, 1);
    g_assert_cmpuint(psp_cmd(&d, DMNIC_PSP_CMD_SA_WRITE), ==,
                     DMNIC_PSP_RES_OK);
    dn_steer_all_to(&d, RXQ);
    rx_on(&d, RXQ);
    memcpy(want, k->plain, k->plain_len);
    stl_be_p(want + psp_off(4) + 4, 0x80000055);
    send_psp(&d, TXQ, want, k->plain_len, 1, 0);
    g_assert_cmpint(dn_wire_recv(&d, out, DN_FRAME_MAX), ==, k->wire_len);
    dn_inject(&d, out, k->wire_len);
    rx_packet(&d, RXQ, p);
    g_assert_true(p->first.flags & DMNIC_RXC_F_PSP);
    g_assert_cmpmem(p->frame + inner_off(4), p->len - inner_off(4),
                    k->plain + inner_off(4), k->plain_len - inner_off(4));
    dn_stop(&d);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    unsigned i;

    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic/psp/regs", test_regs);
    qtest_add_func("/devmem-nic/psp/kdf", test_kdf);
    for (i = 0; i < ARRAY_SIZE(psp_kats); i++) {
        g_autofree char *tx = g_strdup_printf("/devmem-nic/psp/tx-kat/%s",
                                              psp_kats[i].name);
        g_autofree char *rx = g_strdup_printf("/devmem-nic/psp/rx-kat/%s",
                                              psp_kats[i].name);

        qtest_add_data_func(tx, &psp_kats[i], test_tx_kat);
        qtest_add_data_func(rx, &psp_kats[i], test_rx_kat);
    }
    qtest_add_func("/devmem-nic/psp/rx-drops", test_rx_drops);
    qtest_add_func("/devmem-nic/psp/rx-held", test_rx_held);
    qtest_add_func("/devmem-nic/psp/tx-errors", test_tx_errors);
    qtest_add_func("/devmem-nic/psp/psp-ops-vs-reset", test_ops_vs_reset);
    qtest_add_data_func("/devmem-nic/psp/tso/v0-ipv4", (void *)0, test_tso);
    qtest_add_data_func("/devmem-nic/psp/tso/v3-ipv4", (void *)3, test_tso);
    qtest_add_data_func("/devmem-nic/psp/tso/v1-ipv6", (void *)4, test_tso);
    for (i = 0; i < DMNIC_PSP_NUM_VERSIONS; i++) {
        g_autofree char *name = g_strdup_printf(
            "/devmem-nic/psp/round-trip/v%u", i);

        qtest_add_data_func(name, (void *)(uintptr_t)i, test_round_trip);
    }
    qtest_add_func("/devmem-nic/psp/migration", test_migration);
    qtest_add_func("/devmem-nic/psp/stream", test_stream);
    return g_test_run();
}
