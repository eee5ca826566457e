/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-nic PSP inline crypto (docs/specs/devmem-nic.rst, PSP inline
 * crypto): device keys, key derivation, TX SAs, the TX encryption and RX
 * decryption steps the core engine calls, PSP registers and counters.
 * No QOM; the crypto is GnuTLS's (AES-GCM, AES-CMAC).
 */
#ifndef HW_NET_DEVMEM_NIC_PSP_H
#define HW_NET_DEVMEM_NIC_PSP_H

#include "exec/hwaddr.h"
#include "migration/vmstate.h"
#include "devmem-nic-regs.h"

#define DMNIC_PSP_KEY_MAX       32      /* bytes: device keys, AES-256 */

/* PSP global counters, index = (offset - REG_G_PSP_RX_AUTH_FAIL) / 8 */
enum {
    DMNIC_PSP_GS_RX_AUTH_FAIL,
    DMNIC_PSP_GS_RX_ERROR,
    DMNIC_PSP_GS_RX_BAD,
    DMNIC_PSP_GS_TX_ERROR,
    DMNIC_PSP_GS_NUM,
};

/* PSP per-queue counters, index = (offset - Q_PSP_RX_PACKETS) / 8 */
enum {
    DMNIC_PSP_QS_RX_PACKETS,
    DMNIC_PSP_QS_RX_BYTES,
    DMNIC_PSP_QS_TX_PACKETS,
    DMNIC_PSP_QS_TX_BYTES,
    DMNIC_PSP_QS_NUM,
};

#define DMNIC_PSP_SA_INVALID    0xff    /* sa_ver of an unused TX SA */

typedef struct DmnicPsp {
    /* guest state, migrated */
    uint32_t ctrl;
    uint32_t phase;                 /* 0 or 1 */
    uint32_t key_valid;             /* bit k: device key k valid */
    uint32_t gen[2];                /* 3-bit generations */
    uint8_t dev_key[2][DMNIC_PSP_KEY_MAX];
    uint32_t spi;                   /* argument registers */
    uint32_t version;
    uint32_t sa_index;
    uint32_t result;                /* last command's PSP_RES_* */
    uint8_t key[DMNIC_PSP_KEY_MAX]; /* PSP_KEY registers */
    uint64_t tx_iv;
    uint64_t gstats[DMNIC_PSP_GS_NUM];
    uint64_t qstats[DMNIC_MAX_QUEUES][DMNIC_PSP_QS_NUM];
    uint8_t sa_key[DMNIC_PSP_TX_SA_NUM][DMNIC_PSP_KEY_MAX];
    uint32_t sa_spi[DMNIC_PSP_TX_SA_NUM];
    uint8_t sa_ver[DMNIC_PSP_TX_SA_NUM];
    /* anything differs from reset: the migration subsection is sent */
    bool used;

    /* not migrated */
    bool tx_err_logged;             /* one PSP TX error logged per reset */
    uint32_t rx_bytes;              /* PSP bytes, last decrypted frame */
    uint8_t *rx_buf;                /* decrypted frame */
    uint8_t *scratch;               /* crypto output */
    uint8_t *seg;                   /* a TSO segment */
} DmnicPsp;

/* What devmem_nic_psp_rx() did with a frame to UDP port 1000 */
typedef enum {
    DMNIC_PSP_RX_PASS,              /* not a PSP frame: deliver as is */
    DMNIC_PSP_RX_DROP,              /* dropped and counted */
    DMNIC_PSP_RX_DECRYPTED,         /* the decrypted frame is in buf, len */
} DmnicPspRx;

/* Whether this build has the crypto: CAPS_PSP */
bool devmem_nic_psp_available(void);
void devmem_nic_psp_realize(DmnicPsp *psp);
void devmem_nic_psp_unrealize(DmnicPsp *psp);
void devmem_nic_psp_reset(DmnicPsp *psp);

/*
 * Registers: global 0x0080..0x00ff and the per-queue PSP counters
 * (@addr in BAR0).  False if @addr is not a PSP register.
 */
bool devmem_nic_psp_read(DmnicPsp *psp, unsigned nq, hwaddr addr,
                         uint32_t *val);
bool devmem_nic_psp_write(DmnicPsp *psp, unsigned nq, hwaddr addr,
                          uint32_t val);

/*
 * RX: a frame whose parsed L4 is UDP to port 1000 (not a fragment, IPv4
 * header checksum good).  @l3 is 4 or 6, @l3_off/@l4_off the header
 * offsets, @ip_end the end of the IP datagram.  On DECRYPTED *@buf and
 * *@len describe the decrypted frame (valid until the next call) and
 * *@flags holds the RXC PSP flags.
 */
DmnicPspRx devmem_nic_psp_rx(DmnicPsp *psp, const uint8_t **buf, size_t *len,
                             int l3, size_t l3_off, size_t l4_off,
                             size_t ip_end, uint32_t *flags);
/* A decrypted frame was steered to running queue @qi */
void devmem_nic_psp_rx_count(DmnicPsp *psp, unsigned qi);

/* Puts a frame on the wire */
typedef void (*DmnicPspSend)(void *opaque, uint8_t *buf, size_t len);

/*
 * TX: the gathered frame of a packet whose SOP descriptor asked for PSP
 * with TX SA @sa, after checksum offload; @l3 (0 if the frame's parsed L4
 * is not UDP), @l3_off, @l4_off and @ip_end as the core's parser found
 * them.  Encrypts @buf in place (it must have room for the ICV), or with
 * @tso segments it (@mss), and sends each PSP packet with @send.
 * *@nseg and *@wire: frames and bytes sent.  False: nothing was sent
 * (counted in G_PSP_TX_ERROR).
 */
bool devmem_nic_psp_tx(DmnicPsp *psp, unsigned qi, uint8_t *buf, size_t len,
                       int l3, size_t l3_off, size_t l4_off, size_t ip_end,
                       uint32_t sa, bool tso, size_t mss, DmnicPspSend send,
                       void *opaque, uint32_t *nseg, uint64_t *wire);

extern const VMStateDescription vmstate_devmem_nic_psp;

#endif /* HW_NET_DEVMEM_NIC_PSP_H */
