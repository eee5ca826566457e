/*
 * devmem-nic PSP inline crypto: device keys, the PSP key derivation, TX
 * SAs, TX encryption and RX decryption.  See docs/specs/devmem-nic.rst,
 * "PSP inline crypto".
 *
 * The crypto is GnuTLS's (QEMU's preferred crypto backend): AES-GCM
 * through its AEAD API, AES-256-CMAC through gnutls_hmac_fast().  QEMU's
 * own crypto layer has AES block ciphers but no GCM and no CMAC.  Without
 * GnuTLS the device has no CAPS_PSP and the registers read 0.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qemu/guest-random.h"
#include "qemu/cutils.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "devmem-nic-core.h"
#include "devmem-nic-psp.h"
#include "trace.h"

#ifdef CONFIG_GNUTLS
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#endif

#define PSP_NONCE_OFF   4       /* SPI || IV: the GCM nonce, 12 bytes */
#define PSP_NONCE_LEN   12
#define PSP_IV_OFF      8
#define PSP_VERFL_ONE   0x01
#define PSP_CRYPT_OFF_MASK 0x3f
#define PSP_BUF_SIZE    (DMNIC_TSO_MAX_FRAME + DMNIC_PSP_ICV_LEN)
/* the TCP flags byte (the low byte of th_offset_flags) */
#define PSP_TCP_FLAGS_OFF (offsetof(tcp_header, th_offset_flags) + 1)

enum {
    PSP_GCM_OK,
    PSP_GCM_AUTH,   /* decryption: the ICV does not match */
    PSP_GCM_LIB,    /* the crypto library refused */
};

static unsigned psp_key_len(unsigned ver)
{
    return (ver & 1) ? 32 : 16;     /* v1, v3: AES-256 */
}

#ifdef CONFIG_GNUTLS

bool devmem_nic_psp_available(void)
{
    return true;
}

/*
 * The PSP key of @spi for a key of @klen bytes (16 or 32): the spec's
 * SP 800-108 counter-mode KDF with AES-256-CMAC keyed by the device key
 * that bit 31 of the SPI selects.
 */
static bool psp_derive(DmnicPsp *psp, uint32_t spi, unsigned klen,
                       uint8_t *out)
{
    const uint8_t *mk = psp->dev_key[spi >> 31];
    unsigned i;

    for (i = 0; i < klen / 16; i++) {
        uint8_t x[16] = { 0 };

        x[3] = i + 1;
        x[4] = 'P';
        x[5] = 'v';
        x[6] = klen == 16 ? '0' : '1';
        stl_be_p(x + 8, spi);
        stw_be_p(x + 14, klen * 8);
        if (gnutls_hmac_fast(GNUTLS_MAC_AES_CMAC_256, mk, DMNIC_PSP_KEY_MAX,
                             x, sizeof(x), out + 16 * i) < 0) {
            return false;
        }
    }
    return true;
}

/*
 * AES-GCM with a 16-byte tag: encrypt @in (the tag is appended to @out)
 * or decrypt @in (tag last).  An empty text is GMAC over @aad.  Returns
 * PSP_GCM_OK, PSP_GCM_AUTH (decrypt: the tag does not match) or
 * PSP_GCM_LIB (the crypto library refused, e.g. a FIPS policy).
 */
static int psp_gcm(bool enc, const uint8_t *key, unsigned klen,
                    const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                    const uint8_t *in, size_t in_len, uint8_t *out,
                    size_t *out_len)
{
    gnutls_aead_cipher_hd_t h;
    gnutls_datum_t k = { .data = (unsigned char *)key, .size = klen };
    int r;

    r = gnutls_aead_cipher_init(&h, klen == 16 ? GNUTLS_CIPHER_AES_128_GCM :
                                GNUTLS_CIPHER_AES_256_GCM, &k);
    if (r < 0) {
        return PSP_GCM_LIB;
    }
    if (enc) {
        r = gnutls_aead_cipher_encrypt(h, nonce, PSP_NONCE_LEN, aad, aad_len,
                                       DMNIC_PSP_ICV_LEN, in, in_len, out,
                                       out_len);
    } else {
        r = gnutls_aead_cipher_decrypt(h, nonce, PSP_NONCE_LEN, aad, aad_len,
                                       DMNIC_PSP_ICV_LEN, in, in_len, out,
                                       out_len);
    }
    gnutls_aead_cipher_deinit(h);
    if (r >= 0) {
        return PSP_GCM_OK;
    }
    return r == GNUTLS_E_DECRYPTION_FAILED ? PSP_GCM_AUTH : PSP_GCM_LIB;
}

#else

bool devmem_nic_psp_available(void)
{
    return false;
}

static bool psp_derive(DmnicPsp *psp, uint32_t spi, unsigned klen,
                       uint8_t *out)
{
    return false;
}

static int psp_gcm(bool enc, const uint8_t *key, unsigned klen,
                   const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                   const uint8_t *in, size_t in_len, uint8_t *out,
                   size_t *out_len)
{
    return PSP_GCM_LIB;
}

#endif

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

void devmem_nic_psp_realize(DmnicPsp *psp)
{
    psp->rx_buf = g_malloc0(PSP_BUF_SIZE);
    psp->scratch = g_malloc0(PSP_BUF_SIZE);
    psp->seg = g_malloc0(PSP_BUF_SIZE);
}

void devmem_nic_psp_unrealize(DmnicPsp *psp)
{
    g_free(psp->rx_buf);
    psp->rx_buf = NULL;
    g_free(psp->scratch);
    psp->scratch = NULL;
    g_free(psp->seg);
    psp->seg = NULL;
}

void devmem_nic_psp_reset(DmnicPsp *psp)
{
    psp->ctrl = 0;
    psp->phase = 0;
    psp->key_valid = 0;
    memset(psp->gen, 0, sizeof(psp->gen));
    memset(psp->dev_key, 0, sizeof(psp->dev_key));
    psp->spi = 0;
    psp->version = 0;
    psp->sa_index = 0;
    psp->result = DMNIC_PSP_RES_OK;
    memset(psp->key, 0, sizeof(psp->key));
    psp->tx_iv = 1;
    memset(psp->gstats, 0, sizeof(psp->gstats));
    memset(psp->qstats, 0, sizeof(psp->qstats));
    memset(psp->sa_key, 0, sizeof(psp->sa_key));
    memset(psp->sa_spi, 0, sizeof(psp->sa_spi));
    memset(psp->sa_ver, DMNIC_PSP_SA_INVALID, sizeof(psp->sa_ver));
    psp->used = false;
    psp->tx_err_logged = false;
    psp->rx_bytes = 0;
}

/* ------------------------------------------------------------------ */
/* Commands and registers                                              */
/* ------------------------------------------------------------------ */

static uint32_t psp_status(DmnicPsp *psp)
{
    return psp->phase | psp->key_valid << 1 |
           (psp->gen[0] & DMNIC_PSP_STATUS_GEN_MASK) <<
           DMNIC_PSP_STATUS_GEN0_SHIFT |
           (psp->gen[1] & DMNIC_PSP_STATUS_GEN_MASK) <<
           DMNIC_PSP_STATUS_GEN1_SHIFT |
           psp->result << DMNIC_PSP_STATUS_RES_SHIFT;
}

static void psp_set_key(DmnicPsp *psp, unsigned k, const uint8_t *key)
{
    memcpy(psp->dev_key[k], key, DMNIC_PSP_KEY_MAX);
    psp->key_valid |= 1u << k;
    psp->gen[k] = (psp->gen[k] + 1) & DMNIC_PSP_STATUS_GEN_MASK;
}

static uint32_t psp_cmd(DmnicPsp *psp, uint32_t cmd)
{
    uint8_t key[DMNIC_PSP_KEY_MAX];
    bool spi_ok = psp->spi & DMNIC_PSP_SPI_ID_MASK;
    unsigned klen;

    switch (cmd) {
    case DMNIC_PSP_CMD_ROTATE:
        qemu_guest_getrandom_nofail(key, sizeof(key));
        psp_set_key(psp, !psp->phase, key);
        psp->phase = !psp->phase;
        return DMNIC_PSP_RES_OK;
    case DMNIC_PSP_CMD_KEY_LOAD:
        psp_set_key(psp, psp->spi >> 31, psp->key);
        return DMNIC_PSP_RES_OK;
    case DMNIC_PSP_CMD_DERIVE:
        if (psp->version >= DMNIC_PSP_NUM_VERSIONS || !spi_ok) {
            return DMNIC_PSP_RES_BAD_ARG;
        }
        if (!(psp->key_valid & (1u << (psp->spi >> 31)))) {
            return DMNIC_PSP_RES_NO_KEY;
        }
        klen = psp_key_len(psp->version);
        memset(key, 0, sizeof(key));
        if (!psp_derive(psp, psp->spi, klen, key)) {
            return DMNIC_PSP_RES_NO_CRYPTO;
        }
        memcpy(psp->key, key, sizeof(key));
        return DMNIC_PSP_RES_OK;
    case DMNIC_PSP_CMD_SA_WRITE:
        if (psp->version >= DMNIC_PSP_NUM_VERSIONS || !spi_ok ||
            psp->sa_index >= DMNIC_PSP_TX_SA_NUM) {
            return DMNIC_PSP_RES_BAD_ARG;
        }
        /*
         * An all-zero key is what the KEY registers hold after a reset:
         * a driver whose tx_key_add straddled one.  Encrypting with it
         * would be plaintext to anyone; refused.
         */
        if (buffer_is_zero(psp->key, psp_key_len(psp->version))) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: PSP SA_WRITE of SA "
                          "%u with an all-zero key refused\n",
                          psp->sa_index);
            return DMNIC_PSP_RES_BAD_ARG;
        }
        memcpy(psp->sa_key[psp->sa_index], psp->key, DMNIC_PSP_KEY_MAX);
        psp->sa_spi[psp->sa_index] = psp->spi;
        psp->sa_ver[psp->sa_index] = psp->version;
        return DMNIC_PSP_RES_OK;
    case DMNIC_PSP_CMD_SA_CLEAR:
        if (psp->sa_index >= DMNIC_PSP_TX_SA_NUM) {
            return DMNIC_PSP_RES_BAD_ARG;
        }
        memset(psp->sa_key[psp->sa_index], 0, DMNIC_PSP_KEY_MAX);
        psp->sa_spi[psp->sa_index] = 0;
        psp->sa_ver[psp->sa_index] = DMNIC_PSP_SA_INVALID;
        return DMNIC_PSP_RES_OK;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: unknown PSP command %u\n",
                  cmd);
    return DMNIC_PSP_RES_BAD_CMD;
}

static uint32_t psp_counter(const uint64_t *c, hwaddr off)
{
    uint64_t v = c[off / 8];

    return (off & 4) ? v >> 32 : (uint32_t)v;
}

bool devmem_nic_psp_read(DmnicPsp *psp, unsigned nq, hwaddr addr,
                         uint32_t *val)
{
    hwaddr qoff = (addr - DMNIC_Q_BASE) % DMNIC_Q_STRIDE;

    if (addr >= DMNIC_Q_BASE && addr < DMNIC_Q_BASE + nq * DMNIC_Q_STRIDE) {
        if (qoff < DMNIC_Q_PSP_RX_PACKETS ||
            qoff >= DMNIC_Q_PSP_RX_PACKETS + DMNIC_PSP_QS_NUM * 8) {
            return false;
        }
        *val = devmem_nic_psp_available() ?
               psp_counter(psp->qstats[(addr - DMNIC_Q_BASE) / DMNIC_Q_STRIDE],
                           qoff - DMNIC_Q_PSP_RX_PACKETS) : 0;
        return true;
    }
    if (addr < DMNIC_REG_PSP_CTRL || addr > 0xff) {
        return false;
    }
    *val = 0;
    if (!devmem_nic_psp_available()) {
        return true;
    }
    if (addr >= DMNIC_REG_PSP_KEY &&
        addr < DMNIC_REG_PSP_KEY + DMNIC_PSP_KEY_WORDS * 4) {
        *val = ldl_le_p(psp->key + (addr - DMNIC_REG_PSP_KEY));
    } else if (addr >= DMNIC_REG_G_PSP_RX_AUTH_FAIL &&
               addr < DMNIC_REG_G_PSP_RX_AUTH_FAIL + DMNIC_PSP_GS_NUM * 8) {
        *val = psp_counter(psp->gstats, addr - DMNIC_REG_G_PSP_RX_AUTH_FAIL);
    } else {
        switch (addr) {
        case DMNIC_REG_PSP_CTRL:
            *val = psp->ctrl;
            break;
        case DMNIC_REG_PSP_STATUS:
            *val = psp_status(psp);
            break;
        case DMNIC_REG_PSP_SPI:
            *val = psp->spi;
            break;
        case DMNIC_REG_PSP_VERSION:
            *val = psp->version;
            break;
        case DMNIC_REG_PSP_SA_INDEX:
            *val = psp->sa_index;
            break;
        case DMNIC_REG_PSP_SA_NUM:
            *val = DMNIC_PSP_TX_SA_NUM;
            break;
        case DMNIC_REG_PSP_TX_IV:
            *val = psp->tx_iv;
            break;
        case DMNIC_REG_PSP_TX_IV + 4:
            *val = psp->tx_iv >> 32;
            break;
        default:
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: read of undefined "
                          "PSP register 0x%" HWADDR_PRIx "\n", addr);
            break;
        }
    }
    return true;
}

bool devmem_nic_psp_write(DmnicPsp *psp, unsigned nq, hwaddr addr,
                          uint32_t val)
{
    if (addr < DMNIC_REG_PSP_CTRL || addr > 0xff) {
        return false;       /* per-queue PSP counters: read-only */
    }
    if (!devmem_nic_psp_available()) {
        return true;
    }
    psp->used = true;
    if (addr >= DMNIC_REG_PSP_KEY &&
        addr < DMNIC_REG_PSP_KEY + DMNIC_PSP_KEY_WORDS * 4) {
        stl_le_p(psp->key + (addr - DMNIC_REG_PSP_KEY), val);
        return true;
    }
    switch (addr) {
    case DMNIC_REG_PSP_CTRL:
        psp->ctrl = val & DMNIC_PSP_CTRL_VERSIONS;
        break;
    case DMNIC_REG_PSP_CMD:
        psp->result = psp_cmd(psp, val);
        trace_devmem_nic_psp_cmd(val, psp->spi, psp->version, psp->sa_index,
                                 psp->result);
        break;
    case DMNIC_REG_PSP_SPI:
        psp->spi = val;
        break;
    case DMNIC_REG_PSP_VERSION:
        psp->version = val;
        break;
    case DMNIC_REG_PSP_SA_INDEX:
        psp->sa_index = val;
        break;
    case DMNIC_REG_PSP_TX_IV:
        psp->tx_iv = deposit64(psp->tx_iv, 0, 32, val);
        break;
    case DMNIC_REG_PSP_TX_IV + 4:
        psp->tx_iv = deposit64(psp->tx_iv, 32, 32, val);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: write to undefined or "
                      "read-only PSP register 0x%" HWADDR_PRIx "\n", addr);
        break;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Data path                                                           */
/* ------------------------------------------------------------------ */

/* Adds @delta to the IP length field(s) of the frame and fixes IPv4's sum */
static void psp_ip_len_add(uint8_t *f, int l3, size_t l3_off, int delta)
{
    uint8_t *ip = f + l3_off;

    if (l3 == 4) {
        size_t ihl = IP_HDR_GET_LEN(ip);

        stw_be_p(ip + offsetof(struct ip_header, ip_len),
                 lduw_be_p(ip + offsetof(struct ip_header, ip_len)) + delta);
        stw_be_p(ip + offsetof(struct ip_header, ip_sum), 0);
        stw_be_p(ip + offsetof(struct ip_header, ip_sum),
                 net_raw_checksum(ip, ihl));
    } else {
        stw_be_p(ip + offsetof(struct ip6_header, ip6_plen),
                 lduw_be_p(ip + offsetof(struct ip6_header, ip6_plen)) +
                 delta);
    }
}

/* The ones' complement L4 checksum of @seg under the frame's IP header */
static uint16_t psp_l4_csum(const uint8_t *f, int l3, size_t l3_off,
                            uint8_t proto, const uint8_t *seg, size_t len)
{
    uint8_t ph[4] = { 0, 0, 0, proto };
    uint32_t sum;

    if (l3 == 4) {
        sum = net_checksum_add(8, (uint8_t *)f + l3_off +
                               offsetof(struct ip_header, ip_src));
    } else {
        sum = net_checksum_add(32, (uint8_t *)f + l3_off +
                               offsetof(struct ip6_header, ip6_src));
    }
    stw_be_p(ph, len);
    sum += net_checksum_add(4, ph);
    sum += net_checksum_add(len, (uint8_t *)seg);
    return net_checksum_finish(sum);
}

/* A UDP checksum of 0 (none) or one that verifies over the segment */
static bool psp_udp_csum_ok(const uint8_t *f, int l3, size_t l3_off,
                            size_t l4_off, size_t udp_len)
{
    return !lduw_be_p(f + l4_off + offsetof(udp_header, uh_sum)) ||
           !psp_l4_csum(f, l3, l3_off, IP_PROTO_UDP, f + l4_off, udp_len);
}

static DmnicPspRx psp_rx_drop(DmnicPsp *psp, int counter, const char *why,
                              uint32_t spi)
{
    psp->gstats[counter]++;
    trace_devmem_nic_psp_rx_drop(why, spi);
    return DMNIC_PSP_RX_DROP;
}

DmnicPspRx devmem_nic_psp_rx(DmnicPsp *psp, const uint8_t **buf, size_t *len,
                             int l3, size_t l3_off, size_t l4_off,
                             size_t ip_end, uint32_t *flags)
{
    const uint8_t *f = *buf;
    uint8_t *out = psp->rx_buf;
    size_t ph = l4_off + sizeof(udp_header);
    size_t udp_len, pl, hlen, aad, ct_len, pt_len;
    uint8_t key[DMNIC_PSP_KEY_MAX];
    unsigned ver, slot, klen;
    uint32_t spi;
    int r;

    if (!psp->ctrl || !devmem_nic_psp_available() ||
        l4_off + sizeof(udp_header) > ip_end) {
        return DMNIC_PSP_RX_PASS;
    }
    psp->used = true;
    udp_len = lduw_be_p(f + l4_off + offsetof(udp_header, uh_ulen));
    pl = ip_end - ph;
    if (udp_len != ip_end - l4_off || pl < DMNIC_PSP_HDR_LEN +
                                          DMNIC_PSP_ICV_LEN) {
        return psp_rx_drop(psp, DMNIC_PSP_GS_RX_ERROR, "length", 0);
    }
    spi = ldl_be_p(f + ph + 4);
    ver = (f[ph + 3] >> 2) & 0xf;
    hlen = (f[ph + 1] + 1) * 8;
    aad = ver < 2 ? DMNIC_PSP_HDR_LEN + 4 * (f[ph + 2] & PSP_CRYPT_OFF_MASK) :
                    pl - DMNIC_PSP_ICV_LEN;
    /* transport mode, TCP only: no tunnel mode, no other inner protocol */
    if (!(f[ph + 3] & PSP_VERFL_ONE) || f[ph] != IP_PROTO_TCP ||
        hlen < DMNIC_PSP_HDR_LEN ||
        hlen > pl - DMNIC_PSP_ICV_LEN || aad > pl - DMNIC_PSP_ICV_LEN ||
        !psp_udp_csum_ok(f, l3, l3_off, l4_off, udp_len)) {
        return psp_rx_drop(psp, DMNIC_PSP_GS_RX_ERROR, "header", spi);
    }
    slot = spi >> 31;
    if (ver >= DMNIC_PSP_NUM_VERSIONS || !(psp->ctrl & (1u << ver)) ||
        !(spi & DMNIC_PSP_SPI_ID_MASK) || !(psp->key_valid & (1u << slot))) {
        return psp_rx_drop(psp, DMNIC_PSP_GS_RX_BAD, "version/spi/key", spi);
    }
    klen = psp_key_len(ver);
    if (!psp_derive(psp, spi, klen, key)) {
        return psp_rx_drop(psp, DMNIC_PSP_GS_RX_BAD, "derive", spi);
    }
    ct_len = pl - aad;
    pt_len = ct_len - DMNIC_PSP_ICV_LEN;
    memcpy(out, f, ph + aad);
    r = psp_gcm(false, key, klen, f + ph + PSP_NONCE_OFF, f + ph, aad,
                f + ph + aad, ct_len, out + ph + aad, &pt_len);
    if (r == PSP_GCM_LIB) {
        /* not the frame's fault: with the "derive" failures */
        return psp_rx_drop(psp, DMNIC_PSP_GS_RX_BAD, "crypto library", spi);
    }
    if (r != PSP_GCM_OK || pt_len != ct_len - DMNIC_PSP_ICV_LEN) {
        return psp_rx_drop(psp, DMNIC_PSP_GS_RX_AUTH_FAIL, "icv", spi);
    }
    psp_ip_len_add(out, l3, l3_off, -DMNIC_PSP_ICV_LEN);
    stw_be_p(out + l4_off + offsetof(udp_header, uh_ulen),
             udp_len - DMNIC_PSP_ICV_LEN);
    stw_be_p(out + l4_off + offsetof(udp_header, uh_sum), 0);
    psp->rx_bytes = pl - DMNIC_PSP_HDR_LEN - DMNIC_PSP_ICV_LEN;
    *buf = out;
    *len = ip_end - DMNIC_PSP_ICV_LEN;
    *flags = DMNIC_RXC_F_PSP | (psp->gen[slot] << DMNIC_RXC_F_PSP_GEN_SHIFT);
    trace_devmem_nic_psp_rx(spi, ver, *len);
    return DMNIC_PSP_RX_DECRYPTED;
}

void devmem_nic_psp_rx_count(DmnicPsp *psp, unsigned qi)
{
    psp->qstats[qi][DMNIC_PSP_QS_RX_PACKETS]++;
    psp->qstats[qi][DMNIC_PSP_QS_RX_BYTES] += psp->rx_bytes;
}

static bool G_GNUC_PRINTF(3, 4)
psp_tx_error(DmnicPsp *psp, unsigned qi, const char *fmt, ...)
{
    va_list ap;
    g_autofree char *msg = NULL;

    psp->gstats[DMNIC_PSP_GS_TX_ERROR]++;
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    trace_devmem_nic_psp_tx_error(qi, msg);
    if (!psp->tx_err_logged) {
        psp->tx_err_logged = true;
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u PSP frame not "
                      "sent: %s (logged once per reset)\n", qi, msg);
    }
    return false;
}

/*
 * Encrypts one PSP packet of @len bytes in @f (IV, lengths, ICV) and
 * sends it; false if the crypto library failed.
 */
static bool psp_tx_one(DmnicPsp *psp, unsigned qi, uint32_t sa, uint8_t *f,
                       size_t len, int l3, size_t l3_off, size_t l4_off,
                       DmnicPspSend send, void *opaque, uint64_t *wire)
{
    size_t ph = l4_off + sizeof(udp_header);
    size_t pl = len - ph;
    unsigned ver = psp->sa_ver[sa];
    size_t aad = ver < 2 ? DMNIC_PSP_HDR_LEN +
                           4 * (f[ph + 2] & PSP_CRYPT_OFF_MASK) : pl;
    size_t ct_len = pl - aad, out_len = ct_len + DMNIC_PSP_ICV_LEN;

    stq_be_p(f + ph + PSP_IV_OFF, psp->tx_iv);
    psp->tx_iv++;
    psp_ip_len_add(f, l3, l3_off, DMNIC_PSP_ICV_LEN);
    stw_be_p(f + l4_off + offsetof(udp_header, uh_ulen),
             len - l4_off + DMNIC_PSP_ICV_LEN);
    stw_be_p(f + l4_off + offsetof(udp_header, uh_sum), 0);
    if (psp_gcm(true, psp->sa_key[sa], psp_key_len(ver),
                f + ph + PSP_NONCE_OFF, f + ph, aad, f + ph + aad, ct_len,
                psp->scratch, &out_len) != PSP_GCM_OK ||
        out_len != ct_len + DMNIC_PSP_ICV_LEN) {
        return false;
    }
    memcpy(f + ph + aad, psp->scratch, out_len);
    len += DMNIC_PSP_ICV_LEN;
    send(opaque, f, len);
    psp->qstats[qi][DMNIC_PSP_QS_TX_PACKETS]++;
    psp->qstats[qi][DMNIC_PSP_QS_TX_BYTES] += pl - DMNIC_PSP_HDR_LEN;
    *wire += len;
    trace_devmem_nic_psp_tx(qi, sa, ver, len);
    return true;
}

/*
 * TSO of a PSP super-frame: each segment is a PSP packet of its own, with
 * the outer headers copied and adjusted, the inner TCP header as the
 * core's TSO makes it (sequence number, FIN/PSH on the last segment, CWR
 * on the first, checksum) and a fresh IV.
 */
static bool psp_tx_tso(DmnicPsp *psp, unsigned qi, uint32_t sa,
                       const uint8_t *buf, size_t len, int l3, size_t l3_off,
                       size_t l4_off, size_t inner, size_t mss,
                       DmnicPspSend send, void *opaque, uint32_t *nseg,
                       uint64_t *wire)
{
    uint8_t *sb = psp->seg;
    size_t doff, h, pay, off;
    uint16_t ip_id = 0;
    uint32_t seq;
    unsigned i;

    if (buf[l4_off + sizeof(udp_header)] != IP_PROTO_TCP ||
        inner + sizeof(tcp_header) > len) {
        return psp_tx_error(psp, qi, "TSO: inner protocol is not TCP");
    }
    /* the data offset: the high nibble of the first th_offset_flags byte */
    doff = (buf[inner + offsetof(tcp_header, th_offset_flags)] >> 4) * 4;
    h = inner + doff;
    if (doff < sizeof(tcp_header) || h > len || mss < DMNIC_TSO_MSS_MIN ||
        h + mss + DMNIC_PSP_ICV_LEN > DMNIC_TX_MAX_FRAME) {
        return psp_tx_error(psp, qi, "TSO: TCP header %zu, MSS %zu", doff,
                            mss);
    }
    pay = len - h;
    seq = ldl_be_p(buf + inner + offsetof(tcp_header, th_seq));
    if (l3 == 4) {
        ip_id = lduw_be_p(buf + l3_off + offsetof(struct ip_header, ip_id));
    }
    for (off = 0, i = 0; off < pay || (!pay && !i); off += mss, i++) {
        size_t seg = MIN(mss, pay - off);
        uint8_t *ip = sb + l3_off;
        uint8_t *tcp = sb + inner;

        memcpy(sb, buf, h);
        memcpy(sb + h, buf + h + off, seg);
        if (l3 == 4) {
            stw_be_p(ip + offsetof(struct ip_header, ip_len),
                     h - l3_off + seg);
            stw_be_p(ip + offsetof(struct ip_header, ip_id), ip_id + i);
        } else {
            stw_be_p(ip + offsetof(struct ip6_header, ip6_plen),
                     h - l3_off - sizeof(struct ip6_header) + seg);
        }
        /* psp_ip_len_add() recomputes the IPv4 header checksum */
        stl_be_p(tcp + offsetof(tcp_header, th_seq), seq + off);
        if (off + seg < pay) {
            tcp[PSP_TCP_FLAGS_OFF] &= ~(TH_FIN | TH_PUSH);
        }
        if (i) {
            tcp[PSP_TCP_FLAGS_OFF] &= ~TH_CWR;
        }
        stw_be_p(tcp + offsetof(tcp_header, th_sum), 0);
        stw_be_p(tcp + offsetof(tcp_header, th_sum),
                 psp_l4_csum(sb, l3, l3_off, IP_PROTO_TCP, tcp,
                             h - inner + seg));
        if (!psp_tx_one(psp, qi, sa, sb, h + seg, l3, l3_off, l4_off, send,
                        opaque, wire)) {
            return psp_tx_error(psp, qi, "crypto library failed");
        }
        (*nseg)++;
    }
    return true;
}

bool devmem_nic_psp_tx(DmnicPsp *psp, unsigned qi, uint8_t *buf, size_t len,
                       int l3, size_t l3_off, size_t l4_off, size_t ip_end,
                       uint32_t sa, bool tso, size_t mss, DmnicPspSend send,
                       void *opaque, uint32_t *nseg, uint64_t *wire)
{
    size_t ph = l4_off + sizeof(udp_header);
    size_t pl, hlen, aad;
    unsigned ver;

    *nseg = 0;
    *wire = 0;
    psp->used = true;
    if (!devmem_nic_psp_available()) {
        return psp_tx_error(psp, qi, "no PSP in this build");
    }
    if (sa >= DMNIC_PSP_TX_SA_NUM || psp->sa_ver[sa] == DMNIC_PSP_SA_INVALID) {
        return psp_tx_error(psp, qi, "SA %u not valid", sa);
    }
    if (!l3 || ph > ip_end || ip_end != len ||
        lduw_be_p(buf + l4_off + offsetof(udp_header, uh_dport)) !=
        DMNIC_PSP_UDP_PORT) {
        return psp_tx_error(psp, qi, "not IP/UDP to port %u of %zu bytes",
                            DMNIC_PSP_UDP_PORT, len);
    }
    pl = ip_end - ph;
    if (pl < DMNIC_PSP_HDR_LEN) {
        return psp_tx_error(psp, qi, "no PSP header");
    }
    ver = (buf[ph + 3] >> 2) & 0xf;
    hlen = (buf[ph + 1] + 1) * 8;
    aad = ver < 2 ? DMNIC_PSP_HDR_LEN + 4 * (buf[ph + 2] & PSP_CRYPT_OFF_MASK) :
                    pl;
    if (ver != psp->sa_ver[sa] || ldl_be_p(buf + ph + 4) != psp->sa_spi[sa] ||
        !(buf[ph + 3] & PSP_VERFL_ONE) || hlen < DMNIC_PSP_HDR_LEN ||
        hlen > pl || aad > pl) {
        return psp_tx_error(psp, qi, "PSP header (version %u, SPI 0x%x, "
                            "hdrlen %zu, aad %zu of %zu) does not match SA %u",
                            ver, ldl_be_p(buf + ph + 4), hlen, aad, pl, sa);
    }
    if (tso) {
        /* the crypt offset must not reach past the inner TCP header */
        if (ver < 2 && aad > hlen + sizeof(tcp_header)) {
            return psp_tx_error(psp, qi, "TSO: crypt offset %zu", aad);
        }
        return psp_tx_tso(psp, qi, sa, buf, len, l3, l3_off, l4_off,
                          ph + hlen, mss, send, opaque, nseg, wire);
    }
    if (len + DMNIC_PSP_ICV_LEN > DMNIC_TX_MAX_FRAME) {
        return psp_tx_error(psp, qi, "%zu bytes with the ICV", len);
    }
    if (!psp_tx_one(psp, qi, sa, buf, len, l3, l3_off, l4_off, send, opaque,
                    wire)) {
        return psp_tx_error(psp, qi, "crypto library failed");
    }
    *nseg = 1;
    return true;
}

/* ------------------------------------------------------------------ */
/* Migration                                                           */
/* ------------------------------------------------------------------ */

static bool psp_needed(void *opaque)
{
    DevmemNicCore *core = opaque;

    return core->psp.used;
}

static uint64_t devmem_nic_psp_random64(void)
{
    uint64_t r;

    qemu_guest_getrandom_nofail(&r, sizeof(r));
    return r;
}

static int psp_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    DmnicPsp *psp = &core->psp;
    unsigned i;

    psp->used = true;
    /*
     * The IV counter is part of the state, so loading one snapshot twice
     * (or cloning a VM) would send new plaintexts under IVs already used
     * with the same keys: AES-GCM nonce reuse.  Each load moves it on by
     * a random amount below 2^62: two loads of one state overlap only if
     * they send that many frames.
     */
    psp->tx_iv += 1 + (devmem_nic_psp_random64() >> 2);
    psp->ctrl &= DMNIC_PSP_CTRL_VERSIONS;
    psp->phase &= 1;
    psp->key_valid &= 3;
    psp->gen[0] &= DMNIC_PSP_STATUS_GEN_MASK;
    psp->gen[1] &= DMNIC_PSP_STATUS_GEN_MASK;
    psp->result &= 0xff;
    for (i = 0; i < DMNIC_PSP_TX_SA_NUM; i++) {
        if (psp->sa_ver[i] >= DMNIC_PSP_NUM_VERSIONS) {
            psp->sa_ver[i] = DMNIC_PSP_SA_INVALID;
        }
    }
    return 0;
}

const VMStateDescription vmstate_devmem_nic_psp = {
    .name = "devmem-nic-core/psp",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = psp_needed,
    .post_load = psp_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(psp.ctrl, DevmemNicCore),
        VMSTATE_UINT32(psp.phase, DevmemNicCore),
        VMSTATE_UINT32(psp.key_valid, DevmemNicCore),
        VMSTATE_UINT32_ARRAY(psp.gen, DevmemNicCore, 2),
        VMSTATE_UINT8_2DARRAY(psp.dev_key, DevmemNicCore, 2,
                              DMNIC_PSP_KEY_MAX),
        VMSTATE_UINT32(psp.spi, DevmemNicCore),
        VMSTATE_UINT32(psp.version, DevmemNicCore),
        VMSTATE_UINT32(psp.sa_index, DevmemNicCore),
        VMSTATE_UINT32(psp.result, DevmemNicCore),
        VMSTATE_UINT8_ARRAY(psp.key, DevmemNicCore, DMNIC_PSP_KEY_MAX),
        VMSTATE_UINT64(psp.tx_iv, DevmemNicCore),
        VMSTATE_UINT64_ARRAY(psp.gstats, DevmemNicCore, DMNIC_PSP_GS_NUM),
        /* queues 0..63 (the rest: devmem-nic-core/queues-hi), flat */
        VMSTATE_UINT64_SUB_ARRAY(psp.qstats[0], DevmemNicCore, 0,
                                 DMNIC_MIG_QUEUES_V1 * DMNIC_PSP_QS_NUM),
        VMSTATE_UINT8_2DARRAY(psp.sa_key, DevmemNicCore, DMNIC_PSP_TX_SA_NUM,
                              DMNIC_PSP_KEY_MAX),
        VMSTATE_UINT32_ARRAY(psp.sa_spi, DevmemNicCore, DMNIC_PSP_TX_SA_NUM),
        VMSTATE_UINT8_ARRAY(psp.sa_ver, DevmemNicCore, DMNIC_PSP_TX_SA_NUM),
        VMSTATE_END_OF_LIST()
    },
};
