/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-lab qtest helpers for devmem-nic: the test plays the driver
 * through BAR0 and guest memory (docs/specs/devmem-nic.rst), frames go in
 * and out through a socket netdev.
 */
#ifndef DEVMEM_LAB_NIC_H
#define DEVMEM_LAB_NIC_H

#include "libqos/libqos.h"
#include "libqos/pci.h"

#define DN_NQ               4       /* queues=DN_NQ on the command line */
#define DN_MAX_QUEUES       72      /* DMNIC_MAX_QUEUES: queues=72 at most */
#define DN_HBUF_LEN         256     /* header buffers of dn_post_bufs() */
#define DN_PBUF_LEN         4096    /* payload buffers of dn_post_bufs() */
#define DN_MAX_BUFS         128     /* buffer IDs the harness tracks */
#define DN_FRAME_MAX        70000
/* Nothing decodes there on the qos pc machine */
#define DN_UNMAPPED_ADDR    0x7f0000000000ULL

/* The five rings of a queue, in register order */
enum { DN_HBR, DN_PBR, DN_RXC, DN_TXD, DN_TXC, DN_NUM_RINGS };

/* The driver's view of one queue */
typedef struct DnQueue {
    uint64_t ring[DN_NUM_RINGS];    /* guest address of each ring */
    uint32_t size[DN_NUM_RINGS];    /* entries */
    uint32_t hbr_tail;
    uint32_t pbr_tail;
    uint32_t rxc_head;
    bool rxc_gen;
    uint32_t txd_tail;
    uint32_t txc_head;
    bool txc_gen;
    uint64_t hbuf[DN_MAX_BUFS];     /* buffer ID -> guest address, length */
    uint32_t hlen[DN_MAX_BUFS];
    uint64_t pbuf[DN_MAX_BUFS];
    uint32_t plen[DN_MAX_BUFS];
} DnQueue;

typedef struct DnState {
    QOSState *qs;
    QTestState *qts;
    QPCIDevice *dev;
    QPCIBar regs;
    uint64_t regs_size;
    int sv[2];              /* socketpair: sv[0] is the cable, ours */
    uint64_t frames;        /* G_RX_FRAMES after the last dn_inject() */
    unsigned nq;
    const char *qom;        /* QOM path, NULL: /machine/peripheral/nic */
    char *log;              /* -D file, or NULL */
    size_t log_seen;        /* bytes of it already matched */
    DnQueue q[DN_MAX_QUEUES];
} DnState;

/* An RX completion */
typedef struct DnCpl {
    uint16_t hdr_id;
    uint16_t hdr_len;
    uint16_t pay_id;
    uint8_t rss_type;
    uint32_t pay_len;
    uint32_t pkt_len;
    uint32_t hash;
    uint16_t vlan;
    uint16_t l4_off;
    uint16_t rule;
    uint32_t flags;
} DnCpl;

/* A TX completion */
typedef struct DnTxc {
    uint16_t id;
    uint16_t ndesc;
    uint32_t len;
    uint32_t status;
    uint32_t flags;
} DnTxc;

/*
 * Boots a pc machine with -nodefaults, a socket netdev "n0" on a new
 * socketpair and @args (which add the devmem-nic), then maps the NIC at
 * @devfn, or the one found by its IDs if @devfn is < 0.  The caller
 * zeroes *@s (and may set s->log) first.
 */
void dn_boot(DnState *s, int devfn, const char *args);
/* A migration's destination: a copy of @s booted with -incoming @uri */
void dn_boot_incoming(DnState *d, const DnState *s, const char *uri);
/* Takes @dev (asserts it is a devmem-nic), enables it and maps BAR0 */
void dn_map(DnState *s, QPCIDevice *dev);
/* Frees the device, shuts QEMU down, closes the cable, removes the log */
void dn_stop(DnState *s);

/*
 * BAR0 registers; dn_q* address the register block of queue @q.  A dn_qwr
 * of Q_CTRL or of the TXD/TXC driver index returns once the TX it starts
 * is done (dn_tx_sync); dn_wr does not wait.
 */
uint32_t dn_rd(DnState *s, uint32_t off);
void dn_wr(DnState *s, uint32_t off, uint32_t val);
uint64_t dn_rd64(DnState *s, uint32_t off);
uint32_t dn_qrd(DnState *s, unsigned q, uint32_t off);
void dn_qwr(DnState *s, unsigned q, uint32_t off, uint32_t val);
uint64_t dn_qstat(DnState *s, unsigned q, uint32_t off);

/* Zeroed guest memory, 64-byte aligned */
uint64_t dn_galloc(DnState *s, size_t size);

/* All frames without a rule go to queue @q (RSS off) */
void dn_steer_all_to(DnState *s, unsigned q);

/* Allocates ring @r of queue @q with @n entries and programs it */
void dn_ring_setup(DnState *s, unsigned q, int r, uint32_t n);
/*
 * Fresh RX rings for queue @q: @nbuf header and payload buffer entries,
 * 128 completions; driver indices 0 (also in HBR/PBR DRV), GEN 1.
 */
void dn_rx_rings(DnState *s, unsigned q, uint32_t nbuf);
/* Fresh 64-entry TX rings for queue @q, indices 0, GEN 1; TX enabled */
void dn_tx_setup(DnState *s, unsigned q);

/* Writes one RX descriptor at the tail of ring @r (HBR or PBR) */
void dn_post_rxd(DnState *s, unsigned q, int r, uint64_t addr, uint32_t len,
                 uint16_t id);
/* Writes the driver index of ring @r */
void dn_ring_doorbell(DnState *s, unsigned q, int r);
/*
 * TX runs in a bottom half after the register write that started it:
 * waits (10 s at most) until the device has no TX work scheduled
 */
void dn_tx_sync(DnState *s);
/*
 * Posts @nh header buffers and @np payload buffers of @plen bytes (buffer
 * ID = ring index, memory allocated on first use) and rings both bells.
 */
void dn_post_bufs(DnState *s, unsigned q, unsigned nh, unsigned np,
                  uint32_t plen);

/* Sends a frame into the cable and waits until the device has seen it */
void dn_inject(DnState *s, const uint8_t *frame, size_t len);

/* RX completion @idx of queue @q */
void dn_read_cpl(DnState *s, unsigned q, uint32_t idx, DnCpl *c);
/* Completions the device has written and we have not consumed */
uint32_t dn_cpl_pending(DnState *s, unsigned q);

/* Writes one TX descriptor at the tail (no doorbell) */
void dn_post_txd(DnState *s, unsigned q, uint64_t addr, uint32_t len,
                 uint16_t id, uint16_t flags, uint16_t cstart,
                 uint16_t coff);
/* TX completion @idx of queue @q */
void dn_read_txc(DnState *s, unsigned q, uint32_t idx, DnTxc *c);

/*
 * A frame from the cable, skipping the RARP announcements a migration
 * destination sends; -1 if nothing came within 5 s.
 */
ssize_t dn_wire_recv(DnState *s, uint8_t *out, size_t size);

/*
 * Asserts the documented queue error state with @code in the RX or TX
 * direction, then recovers by clearing the queue's enable bits.
 */
void dn_expect_qerr(DnState *s, unsigned q, bool tx, uint8_t code);

/*
 * Lossless receive (spec: "Pause frames and FEC"): PAUSE_CTRL_TX on, so a
 * frame without buffers is held and an XOFF sent; nothing held yet.
 */
void dn_lossless(DnState *s);

/*
 * Asserts that the next frame from the cable is a pause frame from the
 * device (source: its REG_MAC) with @quanta (0: the XON).
 */
void dn_expect_pause(DnState *s, uint16_t quanta);

/* Asserts @needle in s->log after the last match (dl_expect_log) */
void dn_expect_log(DnState *s, const char *needle);

#endif /* DEVMEM_LAB_NIC_H */
