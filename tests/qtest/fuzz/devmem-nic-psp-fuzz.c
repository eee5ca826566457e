/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * devmem-nic PSP fuzz target ("devmem-nic-psp" of qemu-fuzz-x86_64).
 *
 * generic-fuzz rarely gets past the PSP set-up (device keys, versions, TX
 * SAs, rings), so its inputs never reach the PSP descriptor fields.  This
 * target plays the driver for that set-up and fuzzes what follows: two
 * devmem-nics on one hub, A's TX is B's RX.  Before each input, both get
 * the same two device keys and every version; A gets TX SAs 0..3 (version
 * n, SPI 0x10 + n; SA 3 with the phase bit) and an enabled TX queue; B an
 * RX queue with header split and posted buffers.  The input is a list of
 * requests: each a TX descriptor's fields (flags, PSP flags, SA index,
 * MSS, checksum start/offset, length) and bytes.  The bytes go out as they
 * are or behind a template: the payload of a valid frame (IPv4/IPv6 TCP,
 * IPv4 UDP), a UDP 1000 packet whose PSP header is the first 16 bytes, or
 * a PSP packet whose header matches one of A's SAs (see the modes).  So the
 * TX encryption (one packet or TSO) of every version, its refusals, and
 * B's parser, key lookup, decryption and ICV check run on fuzzed fields.
 * The machine is reset after each input.
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "fuzz.h"
#include "hw/net/devmem-nic/devmem-nic-regs.h"

#define NIC_A_SLOT      4
#define NIC_B_SLOT      5
#define MAC_B           "\x52\x54\x00\x12\x34\x57"
#define MAC_A           "\x52\x54\x00\x12\x34\x56"

/* Guest memory: rings and buffers at fixed addresses (the machine resets) */
#define A_TXD           0x100000ULL     /* 64 x TXD */
#define A_TXC           0x110000ULL     /* 64 x TXC */
#define B_HBR           0x120000ULL     /* 64 x RXD */
#define B_PBR           0x130000ULL
#define B_RXC           0x140000ULL     /* 128 x RXC */
#define B_HBUF          0x200000ULL     /* 32 x 256 */
#define B_PBUF          0x300000ULL     /* 32 x 4096 */
#define A_FRAMES        0x400000ULL     /* MAX_REQS x FRAME_MAX */
#define FRAME_MAX       0x10000
#define MAX_REQS        16
#define HBUF_LEN        256
#define PBUF_LEN        4096
#define NBUFS           32

/* One request of the input, followed by @len bytes */
typedef struct QEMU_PACKED Req {
    uint8_t mode;       /* % MODE_NUM, see the enum */
    uint8_t l4flags;    /* TCP flags of the templates */
    uint16_t flags;     /* TXD_FLAGS (EOP forced on the last request) */
    uint16_t psp_flags; /* TXD_PSP_FLAGS */
    uint16_t sa;        /* TXD_PSP_SA */
    uint16_t mss;       /* TXD_MSS */
    uint16_t cstart;    /* TXD_CSUM_START */
    uint16_t coff;      /* TXD_CSUM_OFFSET */
    uint16_t len;       /* bytes that follow */
} Req;

/*
 * What the bytes become: themselves; the payload of IPv4 TCP, IPv6 TCP or
 * IPv4 UDP; the PSP header (16 bytes, as they are) and rest of a UDP 1000
 * packet over IPv4 (what the driver hands the device to encrypt, or, sent
 * without TXD_PSP_F_EN, a PSP packet in clear for B's decryption); or,
 * last, a PSP packet over IPv4 or IPv6 whose header matches TX SA
 * (sa % 4) (version, SPI, the fixed bit; crypt offset from l4flags, IV
 * from the bytes), with TCP inside: what a PSP socket's TSO sends.
 */
enum {
    MODE_RAW, MODE_V4_TCP, MODE_V6_TCP, MODE_V4_UDP, MODE_PSP_RAW,
    MODE_PSP_V4, MODE_PSP_V6, MODE_NUM
};

/* google/psp's example device keys (any 32 bytes would do) */
static const uint8_t mk[2][32] = {
    { 0x34, 0x44, 0x8a, 0x06, 0x42, 0x92, 0x72, 0x20, 0xb5, 0x58, 0x01,
      0xfd, 0xfc, 0x8e, 0x0f, 0x26, 0x97, 0x6a, 0x0b, 0x01, 0x44, 0x7e,
      0xe7, 0x47, 0xf3, 0xa8, 0x4c, 0x0e, 0x50, 0x0d, 0x1d, 0x2f },
    { 0x56, 0x39, 0x52, 0x56, 0x5d, 0x3b, 0x73, 0x22, 0xb1, 0x71, 0x2e,
      0x79, 0x34, 0x46, 0x30, 0x6e, 0x0d, 0x28, 0x56, 0x4b, 0x48, 0x49,
      0x2a, 0x3b, 0x56, 0x4e, 0x0b, 0x3e, 0x2f, 0x3f, 0x2c, 0x2d },
};

static QPCIBar map_nic(QPCIBus *bus, int slot, QPCIDevice **dev)
{
    *dev = qpci_device_find(bus, QPCI_DEVFN(slot, 0));
    g_assert_nonnull(*dev);
    qpci_device_enable(*dev);
    return qpci_iomap(*dev, DMNIC_BAR_REGS, NULL);
}

static void wr(QPCIDevice *d, QPCIBar b, uint32_t off, uint32_t v)
{
    qpci_io_writel(d, b, off, v);
}

static uint32_t rd(QPCIDevice *d, QPCIBar b, uint32_t off)
{
    return qpci_io_readl(d, b, off);
}

static void ring(QPCIDevice *d, QPCIBar b, uint32_t roff, uint64_t base,
                 uint32_t n)
{
    wr(d, b, DMNIC_QREG(0, roff + DMNIC_RING_BASE_LO), base);
    wr(d, b, DMNIC_QREG(0, roff + DMNIC_RING_BASE_HI), base >> 32);
    wr(d, b, DMNIC_QREG(0, roff + DMNIC_RING_SIZE), n);
}

/* Both device keys (KEY_LOAD) and every version on */
static void psp_keys(QPCIDevice *d, QPCIBar b)
{
    int k, i;

    for (k = 0; k < 2; k++) {
        for (i = 0; i < DMNIC_PSP_KEY_WORDS; i++) {
            wr(d, b, DMNIC_REG_PSP_KEY + 4 * i, ldl_le_p(mk[k] + 4 * i));
        }
        wr(d, b, DMNIC_REG_PSP_SPI, k ? DMNIC_PSP_SPI_PHASE : 0);
        wr(d, b, DMNIC_REG_PSP_CMD, DMNIC_PSP_CMD_KEY_LOAD);
    }
    wr(d, b, DMNIC_REG_PSP_CTRL, DMNIC_PSP_CTRL_VERSIONS);
}

/* A's TX SA @sa: the key the device derives for @spi, version @ver */
static void psp_sa(QPCIDevice *d, QPCIBar b, unsigned sa, uint32_t spi,
                   unsigned ver)
{
    wr(d, b, DMNIC_REG_PSP_SPI, spi);
    wr(d, b, DMNIC_REG_PSP_VERSION, ver);
    wr(d, b, DMNIC_REG_PSP_CMD, DMNIC_PSP_CMD_DERIVE);
    wr(d, b, DMNIC_REG_PSP_SA_INDEX, sa);
    wr(d, b, DMNIC_REG_PSP_CMD, DMNIC_PSP_CMD_SA_WRITE);
}

static void rx_setup(QTestState *s, QPCIDevice *d, QPCIBar b)
{
    uint8_t rxd[DMNIC_RXD_SIZE];
    int i;

    wr(d, b, DMNIC_REG_RSS_CTRL, 0);
    wr(d, b, DMNIC_REG_DEFAULT_QUEUE, 0);
    ring(d, b, DMNIC_Q_HBR, B_HBR, 64);
    ring(d, b, DMNIC_Q_PBR, B_PBR, 64);
    ring(d, b, DMNIC_Q_RXC, B_RXC, 128);
    qtest_memset(s, B_RXC, 0, 128 * DMNIC_RXC_SIZE);
    for (i = 0; i < 2 * NBUFS; i++) {
        bool pay = i >= NBUFS;
        unsigned id = i % NBUFS;

        memset(rxd, 0, sizeof(rxd));
        stq_le_p(rxd + DMNIC_RXD_ADDR,
                 pay ? B_PBUF + id * PBUF_LEN : B_HBUF + id * HBUF_LEN);
        stl_le_p(rxd + DMNIC_RXD_LEN, pay ? PBUF_LEN : HBUF_LEN);
        stw_le_p(rxd + DMNIC_RXD_ID, id);
        qtest_memwrite(s, (pay ? B_PBR : B_HBR) + id * DMNIC_RXD_SIZE, rxd,
                       sizeof(rxd));
    }
    wr(d, b, DMNIC_QREG(0, DMNIC_Q_CTRL),
       DMNIC_Q_CTRL_RX_ENABLE | DMNIC_Q_CTRL_HDS_ENABLE);
    wr(d, b, DMNIC_QREG(0, DMNIC_Q_HBR + DMNIC_RING_DRV), NBUFS);
    wr(d, b, DMNIC_QREG(0, DMNIC_Q_PBR + DMNIC_RING_DRV), NBUFS);
}

static void tx_setup(QTestState *s, QPCIDevice *d, QPCIBar b)
{
    ring(d, b, DMNIC_Q_TXD, A_TXD, 64);
    ring(d, b, DMNIC_Q_TXC, A_TXC, 64);
    qtest_memset(s, A_TXC, 0, 64 * DMNIC_TXC_SIZE);
    wr(d, b, DMNIC_QREG(0, DMNIC_Q_CTRL), DMNIC_Q_CTRL_TX_ENABLE);
}

static uint16_t csum16(const uint8_t *p, size_t n)
{
    uint32_t sum = 0;
    size_t i;

    for (i = 0; i + 1 < n; i += 2) {
        sum += lduw_be_p(p + i);
    }
    if (n & 1) {
        sum += p[n - 1] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum;
}

/*
 * Builds the frame of @r around @data in @f; returns its length.  Only the
 * IPv4 header checksum is filled in: L4 checksums are the device's job
 * (TXD_F_CSUM) or left wrong, both worth fuzzing.
 */
static size_t build(const Req *r, const uint8_t *data, size_t n, uint8_t *f)
{
    bool v6 = r->mode == MODE_V6_TCP || r->mode == MODE_PSP_V6;
    bool psp = r->mode == MODE_PSP_V4 || r->mode == MODE_PSP_V6;
    bool udp = r->mode == MODE_V4_UDP || r->mode == MODE_PSP_RAW || psp;
    size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), ph = l4 + 8;
    size_t hl = psp ? 8 + DMNIC_PSP_HDR_LEN + 20 : udp ? 8 : 20;
    size_t tcp = psp ? ph + DMNIC_PSP_HDR_LEN : l4;
    unsigned sa = le16_to_cpu(r->sa) % DMNIC_PSP_NUM_VERSIONS;

    if (r->mode == MODE_RAW) {
        memcpy(f, data, n);
        return n;
    }
    n = MIN(n, (size_t)FRAME_MAX - l4 - hl);
    memset(f, 0, l4 + hl);
    memcpy(f, MAC_B, 6);
    memcpy(f + 6, MAC_A, 6);
    stw_be_p(f + 12, v6 ? 0x86dd : 0x0800);
    if (v6) {
        f[l3] = 0x60;
        stw_be_p(f + l3 + 4, hl + n);
        f[l3 + 6] = udp ? 17 : 6;
        f[l3 + 7] = 64;
        f[l3 + 23] = 1;
        f[l3 + 39] = 2;
    } else {
        f[l3] = 0x45;
        stw_be_p(f + l3 + 2, 20 + hl + n);
        f[l3 + 8] = 64;
        f[l3 + 9] = udp ? 17 : 6;
        stl_be_p(f + l3 + 12, 0x0a000001);
        stl_be_p(f + l3 + 16, 0x0a000002);
        stw_be_p(f + l3 + 10, csum16(f + l3, 20));
    }
    stw_be_p(f + l4, 40000);
    if (udp) {
        stw_be_p(f + l4 + 2, r->mode == MODE_V4_UDP ? 5001 :
                 DMNIC_PSP_UDP_PORT);
        stw_be_p(f + l4 + 4, hl + n);
    }
    if (psp) {
        f[ph] = 6;                                  /* next header: TCP */
        f[ph + 1] = 1;                              /* (1 + 1) * 8 bytes */
        f[ph + 2] = r->l4flags & 0x3f;              /* crypt offset */
        f[ph + 3] = (sa << 2) | 1;                  /* version, fixed bit */
        stl_be_p(f + ph + 4, (0x10 + sa) |
                 (sa == 3 ? DMNIC_PSP_SPI_PHASE : 0));
        memcpy(f + ph + 8, data, MIN(n, (size_t)8));  /* IV */
    }
    if (!udp || psp) {
        stw_be_p(f + tcp, 40000);
        stw_be_p(f + tcp + 2, 5001);
        stl_be_p(f + tcp + 4, 1000);
        f[tcp + 12] = 5 << 4;
        f[tcp + 13] = r->l4flags;
        stw_be_p(f + tcp + 14, 65535);
    }
    memcpy(f + l4 + hl, data, n);
    return l4 + hl + n;
}

static void devmem_nic_psp_fuzz(QTestState *s, const unsigned char *data,
                                size_t size)
{
    QPCIBus *bus = qpci_new_pc(s, NULL);
    QPCIDevice *a, *b;
    QPCIBar ba = map_nic(bus, NIC_A_SLOT, &a);
    QPCIBar bb = map_nic(bus, NIC_B_SLOT, &b);
    g_autofree uint8_t *f = g_malloc(FRAME_MAX);
    unsigned i, nreq = 0;

    if (rd(a, ba, DMNIC_REG_ID) != DMNIC_ID_MAGIC ||
        rd(b, bb, DMNIC_REG_ID) != DMNIC_ID_MAGIC) {
        g_error("devmem-nic-psp: no devmem-nic at slots %d and %d",
                NIC_A_SLOT, NIC_B_SLOT);
    }
    psp_keys(a, ba);
    psp_keys(b, bb);
    for (i = 0; i < DMNIC_PSP_NUM_VERSIONS; i++) {
        psp_sa(a, ba, i, (0x10 + i) | (i == 3 ? DMNIC_PSP_SPI_PHASE : 0), i);
    }
    rx_setup(s, b, bb);
    tx_setup(s, a, ba);

    while (size >= sizeof(Req) && nreq < MAX_REQS) {
        Req r;
        uint8_t txd[DMNIC_TXD_SIZE] = { 0 };
        uint64_t buf = A_FRAMES + nreq * FRAME_MAX;
        size_t n, len;

        memcpy(&r, data, sizeof(r));
        data += sizeof(r);
        size -= sizeof(r);
        n = MIN(MIN((size_t)le16_to_cpu(r.len), size), (size_t)FRAME_MAX);
        r.mode %= MODE_NUM;
        len = build(&r, data, n, f);
        data += n;
        size -= n;
        if (!len) {
            continue;
        }
        qtest_memwrite(s, buf, f, len);
        stq_le_p(txd + DMNIC_TXD_ADDR, buf);
        stl_le_p(txd + DMNIC_TXD_LEN, len);
        stw_le_p(txd + DMNIC_TXD_ID, nreq);
        stw_le_p(txd + DMNIC_TXD_FLAGS, le16_to_cpu(r.flags) |
                 (size < sizeof(Req) ? DMNIC_TXD_F_EOP : 0));
        stw_le_p(txd + DMNIC_TXD_CSUM_START, le16_to_cpu(r.cstart));
        stw_le_p(txd + DMNIC_TXD_CSUM_OFFSET, le16_to_cpu(r.coff));
        stw_le_p(txd + DMNIC_TXD_MSS, le16_to_cpu(r.mss));
        stw_le_p(txd + DMNIC_TXD_PSP_FLAGS, le16_to_cpu(r.psp_flags));
        stl_le_p(txd + DMNIC_TXD_PSP_SA, le16_to_cpu(r.sa));
        qtest_memwrite(s, A_TXD + nreq * DMNIC_TXD_SIZE, txd, sizeof(txd));
        nreq++;
        wr(a, ba, DMNIC_QREG(0, DMNIC_Q_TXD + DMNIC_RING_DRV), nreq);
        flush_events(s);
    }
    qtest_clock_step(s, 10 * 1000 * 1000);
    flush_events(s);

    g_free(a);
    g_free(b);
    qpci_free_pc(bus);
    fuzz_reset(s);
}

static GString *devmem_nic_psp_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -m 512M "
        "-display none -nodefaults "
        "-netdev hubport,id=c0,hubid=0 -netdev hubport,id=c1,hubid=0 "
        "-device devmem-nic,netdev=c0,addr=04.0,queues=1,"
        "mac=52:54:00:12:34:56 "
        "-device devmem-nic,netdev=c1,addr=05.0,queues=1,"
        "mac=52:54:00:12:34:57");
}

static void register_devmem_nic_psp_fuzz(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "devmem-nic-psp",
        .description = "devmem-nic PSP: TX descriptors with PSP fields "
                       "after the driver's set-up, into a second NIC's RX",
        .get_init_cmdline = devmem_nic_psp_cmdline,
        .fuzz = devmem_nic_psp_fuzz,
    });
}

fuzz_target_init(register_devmem_nic_psp_fuzz);
