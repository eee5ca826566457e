/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-nic core engine: register file and data path, without QOM.
 */
#ifndef HW_NET_DEVMEM_NIC_CORE_H
#define HW_NET_DEVMEM_NIC_CORE_H

#include "net/net.h"
#include "qemu/timer.h"
#include "qemu/bitmap.h"
#include "devmem-nic-regs.h"
#include "devmem-nic-fault.h"
#include "devmem-nic-psp.h"

/* Rings of a queue pair, in register block order */
enum {
    DMNIC_RING_HBR,
    DMNIC_RING_PBR,
    DMNIC_RING_RXC,
    DMNIC_RING_TXD,
    DMNIC_RING_TXC,
    DMNIC_NUM_RINGS,
};

/* Per-queue counters, index = (offset - DMNIC_Q_RX_PACKETS) / 8 */
enum {
    DMNIC_QS_RX_PACKETS,
    DMNIC_QS_RX_BYTES,
    DMNIC_QS_RX_SPLIT,
    DMNIC_QS_RX_NOSPLIT,
    DMNIC_QS_RX_DROP_NOBUF,
    DMNIC_QS_RX_DROP_DISABLED,
    DMNIC_QS_RX_CSUM_BAD,
    DMNIC_QS_RX_ERRORS,
    DMNIC_QS_TX_PACKETS,
    DMNIC_QS_TX_BYTES,
    DMNIC_QS_TX_ERRORS,
    DMNIC_QS_TX_CSUM,
    DMNIC_QS_RX_HDR_TOO_BIG,
    DMNIC_QS_TX_TSO,
    /* the first DMNIC_QS_NUM_V1 counters are in the queue's VMState */
    DMNIC_QS_NUM_V1,
    DMNIC_QS_RX_GRO_PACKETS = DMNIC_QS_NUM_V1,
    DMNIC_QS_RX_GRO_SEGS,
    DMNIC_QS_RX_GRO_BYTES,
    DMNIC_QS_RX_GRO_WIRE_BYTES,
    DMNIC_QS_NUM,
};
#define DMNIC_QS_NUM_GRO    (DMNIC_QS_NUM - DMNIC_QS_NUM_V1)

/* 1.3 segmentation counters, index = (offset - DMNIC_Q_TX_LSO_PACKETS) / 8 */
enum {
    DMNIC_LSO_PACKETS,
    DMNIC_LSO_BYTES,
    DMNIC_LSO_WIRE_PACKETS,
    DMNIC_LSO_WIRE_BYTES,
    DMNIC_LSO_NUM,
};

/* Global counters, index = (offset - DMNIC_REG_G_RX_FRAMES) / 8 */
enum {
    DMNIC_GS_RX_FRAMES,
    DMNIC_GS_RX_DROP_RULE,
    DMNIC_GS_RX_DROP_BADQ,
    DMNIC_GS_RX_DROP_LINK,
    DMNIC_GS_RX_RUNT,
    DMNIC_GS_NUM,
};

/*
 * The migration stream of devices before CAPS_RSS_TBL512 held 64 queue
 * pairs and entries 0..127 of 8 RSS contexts in its sections; the rest
 * (up to 72 queue pairs, 33 contexts of 512 entries) is in subsections
 * sent only when in use.
 */
#define DMNIC_MIG_QUEUES_V1     64
#define DMNIC_MIG_RSS_CTX_V1    DMNIC_RSS_NUM_CTX_V11
#define DMNIC_MIG_QUEUES_HI     (DMNIC_MAX_QUEUES - DMNIC_MIG_QUEUES_V1)

/* Who holds the link down, in the migration stream */
#define DMNIC_LINK_DOWN_NET     (1u << 0)   /* set_link (nc->link_down) */
#define DMNIC_LINK_DOWN_FAULT   (1u << 1)   /* x-fault-link-down */

/* Flow rule data words: (register - DMNIC_REG_FS_CTRL) / 4 */
#define DMNIC_FS_WORDS      ((DMNIC_REG_FS_DST_IP_MASK + 16 - \
                              DMNIC_REG_FS_CTRL) / 4)
#define DMNIC_FSW_CTRL      0
#define DMNIC_FSW_ACTION    1
#define DMNIC_FSW_PORTS     2
#define DMNIC_FSW_PORTS_MASK 3
#define DMNIC_FSW_SRC       6
#define DMNIC_FSW_SRC_MASK  10
#define DMNIC_FSW_DST       14
#define DMNIC_FSW_DST_MASK  18

typedef struct DmnicRing {
    uint64_t base;
    uint32_t size;
    uint32_t drv;
    uint32_t dev;
} DmnicRing;

typedef struct DmnicQueue {
    uint32_t ctrl;
    uint32_t hds_thresh;
    uint32_t int_cause;
    uint32_t int_mask;
    uint8_t rx_err;
    uint8_t tx_err;
    bool rx_gen;
    bool tx_gen;
    DmnicRing ring[DMNIC_NUM_RINGS];
    uint64_t stats[DMNIC_QS_NUM];
    uint64_t lso_stats[DMNIC_LSO_NUM];      /* Q_TX_LSO_* */
    /* bit r: a bad RING_DRV move of ring r was logged since its enable */
    uint8_t drv_logged;
    /* a TX descriptor with reserved bits was logged since TX enable */
    bool txd_rsvd_logged;
    /*
     * payload buffers were posted since RX was enabled (a zero-copy queue
     * posts header buffers only); not migrated: post_load derives it
     */
    bool pbr_posted;
} DmnicQueue;

/* An IP header of a GRO candidate (devmem-nic-gro.c) */
typedef struct DmnicGroIp {
    uint16_t off;           /* offset in the frame */
    uint16_t hlen;          /* IPv4: 20; IPv6: 40 + extension headers */
    uint8_t ver;            /* 4 or 6 */
} DmnicGroIp;

/*
 * Where a held GRO packet's payload goes: the payload buffers at the head
 * of PBR, filled in ring order, which stay posted until the packet is
 * delivered (spec: Delivery)
 */
typedef struct DmnicRxCursor {
    uint32_t nbuf;          /* buffers written, the current one included */
    uint32_t off;           /* bytes in the current buffer */
    uint32_t len;           /* its RXD_LEN */
    uint64_t addr;          /* its RXD_ADDR */
    uint32_t placed;        /* payload bytes written */
} DmnicRxCursor;

/* A coalescing context: the packet under construction (spec: Contexts) */
typedef struct DmnicGroCtx {
    bool used;
    uint8_t nip;            /* IP headers: 1, or 2 with encapsulation */
    uint8_t fixedid;        /* bit i: IPv4 header i is fixed-ID */
    DmnicGroIp ip[2];
    uint16_t l4_off;
    uint16_t hdr_len;       /* first payload byte */
    uint32_t first_len;     /* frame length of the first segment */
    uint32_t pay_len;       /* merged payload */
    uint32_t mss;
    uint32_t nsegs;
    uint64_t wire_bytes;
    int64_t deadline;       /* opened + GRO_MAX_AGE, QEMU_CLOCK_VIRTUAL ns */
    DmnicRxSteer st;        /* steering results of the first segment */
    uint32_t hash;          /* of the flow */
    int32_t hnext;          /* hash chain; the free list when unused */
    int32_t lprev, lnext;   /* open order, oldest first */
    uint32_t cap;           /* size of buf */
    uint8_t *buf;           /* headers + payload (direct: headers only) */
    bool direct;            /* the payload is in the posted buffers (cur) */
    uint32_t pflags;        /* core parse flags of the first segment */
    DmnicRxCursor cur;
} DmnicGroCtx;

#define DMNIC_GRO_HASH      256     /* hash chains per queue */

/* The contexts of one queue */
typedef struct DmnicGroQueue {
    int32_t bucket[DMNIC_GRO_HASH];
    int32_t lru_head, lru_tail;
    int32_t free;
    int32_t direct;         /* the context whose payload is placed, or -1 */
    int64_t idle;           /* last segment held + GRO_TIMEOUT, ns */
} DmnicGroQueue;

/* MAC control and FEC (devmem-nic-mac.c) */
typedef struct DmnicMac {
    uint32_t pause_ctrl;
    uint32_t pause_quanta;
    bool xoff;              /* an XOFF was sent, no XON since */
    int64_t paused_until;   /* TX held until (virtual ns), 0: not held */
    int64_t mig_pause_left; /* migration only: ns of the pause left */
    QEMUTimer *pause_timer;
    uint64_t pause_rx;
    uint64_t pause_tx;
    uint32_t fec_ctrl;
    uint64_t fec_hist[DMNIC_FEC_HIST_BINS];
    /*
     * The RX hold (lossless receive with PAUSE_CTRL_TX): one frame that
     * found no buffers on its queue, with its steering, waits here while
     * the cable waits in QEMU's net queue.  Not migrated: a held frame is
     * counted lost on the destination (mig_held_lost).
     */
    uint8_t *hold_buf;      /* NULL: nothing held */
    size_t hold_size;
    uint32_t hold_qi;
    DmnicRxSteer hold_st;
    QEMUTimer *hold_timer;  /* the stall limit */
    /* the stall limit dropped one: no hold until buffers are posted */
    bool hold_stalled;
    bool rx_flush;          /* the cable's queue is to be flushed (rx_bh) */
    QEMUBH *rx_bh;
} DmnicMac;

/* PTP clock and timestamp arrays (devmem-nic-ptp.c) */
typedef struct DmnicPtp {
    uint32_t ctrl;
    int32_t adj_ppb;
    uint64_t arg;
    uint64_t base;          /* the clock at virtual time vbase */
    int64_t vbase;
    uint32_t sample_hi;     /* PTP_TIME_HI of the last TIME_LO read */
    /*
     * The clock when the last frame went on the wire: the TX stamp (taken
     * before the peer's receive runs inside qemu_send_packet(), as a real
     * MAC stamps the frame leaving, not its completion).  Set and used in
     * one TX run under the BQL: not migrated.
     */
    uint64_t tx_wire;
    uint64_t rxts[DMNIC_MAX_QUEUES];
    uint64_t txts[DMNIC_MAX_QUEUES];
} DmnicPtp;

/* A token bucket (devmem-nic-shaper.c); level in bits * 10^9 */
typedef struct DmnicBucket {
    uint64_t rate;          /* bits/s, 0 = unlimited */
    uint32_t rate_lo;       /* RATE_LO as written, applied by RATE_HI */
    uint32_t burst;         /* bytes */
    int64_t level;          /* not migrated: full on the destination */
    int64_t stamp;          /* virtual ns the level is for */
} DmnicBucket;

/* Transmit shaping (devmem-nic-shaper.c) */
typedef struct DmnicShaper {
    bool active;            /* some rate is not 0 */
    DmnicBucket net;
    DmnicBucket grp[DMNIC_SHAPER_NUM_GROUPS];
    uint32_t grp_parent[DMNIC_SHAPER_NUM_GROUPS];
    DmnicBucket q[DMNIC_MAX_QUEUES];
    uint32_t q_group[DMNIC_MAX_QUEUES];
    uint32_t q_weight[DMNIC_MAX_QUEUES];
    uint64_t q_held[DMNIC_MAX_QUEUES];      /* SHQ_HELD */
    bool held[DMNIC_MAX_QUEUES];            /* waiting for the timer */
    uint32_t turn[DMNIC_MAX_QUEUES];        /* packets in this turn */
    /*
     * Weighted round robin: the TX bottom half looks at this queue first,
     * the one in its turn under a shared limiter, or the next after the
     * last turn ended (not migrated: the destination starts at 0)
     */
    uint32_t rr_next;
    QEMUTimer *timer;
} DmnicShaper;

typedef struct DevmemNicCore {
    PCIDevice *owner;
    NICState *nic;
    uint32_t num_queues;
    uint8_t mac[6];

    uint32_t int_cause;
    uint32_t int_mask;
    uint32_t rss_ctrl;
    uint32_t default_queue;
    uint8_t rss_key[DMNIC_RSS_KEY_SIZE_MAX];
    /* hashed fields per hash type */
    uint32_t rss_hfields[DMNIC_RSS_NUM_TYPES];
    /*
     * The indirection tables of all contexts (RSS_TBL); the 1.1 windows
     * REG_RSS_INDIR and REG_RSS_CTX_INDIR are entries 0..127 of 0..7
     */
    uint32_t rss_tbl[DMNIC_RSS_NUM_CTX][DMNIC_RSS_TBL_SIZE];
    uint32_t fs_index;
    uint32_t fs_data[DMNIC_FS_WORDS];
    uint32_t fs_rules[DMNIC_NUM_FS_RULES * DMNIC_FS_WORDS];
    uint64_t gstats[DMNIC_GS_NUM];
    DmnicQueue q[DMNIC_MAX_QUEUES];
    /* a frame steered to a missing queue was logged; steering unchanged */
    bool badq_logged;
    /*
     * STATUS_LINK_UP as last signalled to the guest (INT_LINK): a link
     * callback that changes nothing raises no INT_LINK, and a migration
     * restores the link from it (the net layer does not migrate link_down)
     */
    uint32_t link_status;
    /* migration only: which side holds the link down (DMNIC_LINK_DOWN_*) */
    uint32_t mig_link_down;
    /* migration only: RX frames a delay knob held, lost by the migration */
    uint32_t mig_held_lost[DMNIC_MAX_QUEUES];
    /* INT_LINK raised by post_load, sent once the VM runs */
    bool link_irq_pending;

    /* TX runs in this bottom half; bit q: queue q has TX work to look at */
    QEMUBH *tx_bh;
    DECLARE_BITMAP(tx_pending, DMNIC_MAX_QUEUES);
    /*
     * Frames QEMU's net queue took for the cable (the receiver could not
     * receive) and has not yet delivered or purged: while not 0 no TX
     * packet is started.  Not migrated (the queues are flushed or purged
     * when the VM stops).
     */
    uint32_t tx_queued;
    VMChangeStateEntry *vmse;

    /* hardware GRO (devmem-nic-gro.c): registers, contexts, timer */
    uint32_t gro_ctrl;
    uint32_t gro_timeout;
    uint32_t gro_max_age;
    uint32_t gro_time_scale;    /* property: both times are multiplied */
    DmnicGroCtx *gro;       /* num_queues * DMNIC_GRO_NUM_CTX, not migrated */
    DmnicGroQueue *gro_q;   /* per queue */
    uint64_t gro_mem;       /* bytes of context buffers */
    QEMUTimer *gro_timer;

    /* scratch buffers for TX gather and TSO segments, not migrated */
    uint8_t *tx_buf;
    uint8_t *tx_seg;

    /* host-side fault injection, not migrated (devmem-nic-fault.c) */
    DmnicFault fault;

    /* PSP inline crypto (devmem-nic-psp.c) */
    DmnicPsp psp;

    /* pause frames and FEC counters (devmem-nic-mac.c) */
    DmnicMac mctl;

    /* PTP clock and timestamps (devmem-nic-ptp.c) */
    DmnicPtp ptp;

    /* transmit shaping (devmem-nic-shaper.c) */
    DmnicShaper shaper;
} DevmemNicCore;

/* One's complement sum, 32 bits at a time (RFC 1071), and its 16-bit fold */
uint64_t devmem_nic_csum_add(uint64_t sum, const uint8_t *p, size_t len);
uint16_t devmem_nic_csum_fold(uint64_t sum);

void devmem_nic_core_realize(DevmemNicCore *core);
void devmem_nic_core_unrealize(DevmemNicCore *core);
/* After the fault injector's realize: the link the guest finds at first */
void devmem_nic_core_link_init(DevmemNicCore *core);
void devmem_nic_core_reset(DevmemNicCore *core);
uint64_t devmem_nic_core_read(DevmemNicCore *core, hwaddr addr, unsigned size);
void devmem_nic_core_write(DevmemNicCore *core, hwaddr addr, uint64_t val,
                           unsigned size);
ssize_t devmem_nic_core_receive(DevmemNicCore *core, const uint8_t *buf,
                                size_t size);
bool devmem_nic_core_link_up(DevmemNicCore *core);
bool devmem_nic_core_tx_pending(DevmemNicCore *core);
void devmem_nic_core_link_changed(DevmemNicCore *core);

/* Hardware GRO, devmem-nic-gro.c */
typedef struct DmnicGroOut {
    uint32_t segs;
    uint32_t mss;
    uint32_t flags;         /* DMNIC_RXC_F_GRO* */
    uint16_t l4_off;
    uint16_t hdr_len;
    uint64_t wire_bytes;
    uint32_t placed;        /* payload bytes already at the head of PBR */
    uint32_t csum_flags;    /* segs 1: the L4 checksum flags on arrival */
} DmnicGroOut;

typedef enum DmnicGroResult {
    DMNIC_GRO_PASS,         /* deliver the frame as without GRO */
    DMNIC_GRO_TAKEN,        /* held or merged (delivered later), or lost */
    /*
     * @may_hold and a held packet the frame would end (deliver first)
     * finds no buffers: nothing done, the caller holds the frame (RX
     * hold) and gives it to devmem_nic_gro_receive() again
     */
    DMNIC_GRO_HOLD,
} DmnicGroResult;

void devmem_nic_gro_realize(DevmemNicCore *core);
void devmem_nic_gro_unrealize(DevmemNicCore *core);
DmnicGroResult devmem_nic_gro_receive(DevmemNicCore *core, unsigned qi,
                                      const uint8_t *buf, size_t size,
                                      const DmnicRxSteer *st, uint32_t pflags,
                                      bool may_hold);
/* deliver every context of queue @qi (all queues: @qi < 0), oldest first */
void devmem_nic_gro_flush(DevmemNicCore *core, int qi);
/* drop the contexts of queue @qi (all queues: @qi < 0) */
void devmem_nic_gro_discard(DevmemNicCore *core, int qi);
void devmem_nic_gro_write_ctrl(DevmemNicCore *core, uint32_t val);
void devmem_nic_gro_write_timeout(DevmemNicCore *core, uint32_t val);
void devmem_nic_gro_write_max_age(DevmemNicCore *core, uint32_t val);
/* a held packet's payload must leave the posted buffers (read it back) */
void devmem_nic_gro_evict(DevmemNicCore *core, unsigned qi);
/*
 * core: place a packet built by GRO (@o NULL: as an ordinary frame; segs
 * 1: one segment).  false: nothing done, @o->placed is set and the packet
 * is not split: place it again with the payload in @buf.
 */
bool devmem_nic_core_rx_place(DevmemNicCore *core, unsigned qi,
                              const uint8_t *buf, size_t size,
                              const DmnicRxSteer *st, const DmnicGroOut *o);
/*
 * core: would devmem_nic_core_rx_place() find the buffers and completion
 * slots for this packet now?  Nothing is written or counted; only the
 * lengths of @buf's headers are read.
 */
bool devmem_nic_core_rx_fits(DevmemNicCore *core, unsigned qi,
                             const uint8_t *buf, size_t size,
                             const DmnicRxSteer *st, const DmnicGroOut *o);
/*
 * Write payload at @cur (@whole: only what fills buffers to their end):
 * 0, -ENOSPC (too few posted buffers), -EIO (the queue is in error)
 */
int devmem_nic_core_rx_put(DevmemNicCore *core, unsigned qi,
                           DmnicRxCursor *cur, const uint8_t *data,
                           size_t len, bool whole);
/* read back @len placed payload bytes; false: the queue is in error */
bool devmem_nic_core_rx_get(DevmemNicCore *core, unsigned qi, uint8_t *dst,
                            size_t len);
bool devmem_nic_core_rx_running(DevmemNicCore *core, unsigned qi);
/*
 * The RX hold (devmem-nic-mac.c): place the held frame on queue @qi as it
 * was steered.  false: still no buffers, nothing done or counted; true:
 * placed, or dropped and counted (queue stopped, DMA error).
 */
bool devmem_nic_core_rx_retry(DevmemNicCore *core, unsigned qi,
                              const uint8_t *buf, size_t size,
                              const DmnicRxSteer *st);

/* Pause frames and FEC, devmem-nic-mac.c */
void devmem_nic_mac_realize(DevmemNicCore *core);
void devmem_nic_mac_unrealize(DevmemNicCore *core);
void devmem_nic_mac_reset(DevmemNicCore *core);
bool devmem_nic_mac_read(DevmemNicCore *core, hwaddr addr, uint32_t *val);
bool devmem_nic_mac_write(DevmemNicCore *core, hwaddr addr, uint32_t val);
/* a frame off the cable (link up, not a runt): true if it was consumed */
bool devmem_nic_mac_rx(DevmemNicCore *core, const uint8_t *buf, size_t size);
/* whether a received pause frame holds TX now */
bool devmem_nic_mac_tx_paused(DevmemNicCore *core);
/* a frame was dropped for lack of RX buffers */
void devmem_nic_mac_rx_nobuf(DevmemNicCore *core);
/* RX buffers (@bufs: HBR or PBR) or completion slots (RXC) were posted */
void devmem_nic_mac_rx_posted(DevmemNicCore *core, bool bufs);
/* The RX hold: whether a frame without buffers may be held now */
bool devmem_nic_mac_rx_may_hold(DevmemNicCore *core);
void devmem_nic_mac_rx_hold(DevmemNicCore *core, unsigned qi,
                            const uint8_t *buf, size_t size,
                            const DmnicRxSteer *st);
/* a frame is held: the device takes no frame from the cable */
bool devmem_nic_mac_rx_held(DevmemNicCore *core);
/* NetClientInfo.can_receive: no frame held, no flush of the cable due */
bool devmem_nic_mac_can_receive(DevmemNicCore *core);
/* RX of queue @qi stopped (disabled or error): its held frame is dropped */
void devmem_nic_mac_rx_stopped(DevmemNicCore *core, unsigned qi);
/* RX of queue @qi went into error: a frame held for it is dropped soon */
void devmem_nic_mac_rx_error(DevmemNicCore *core, unsigned qi);
/* the link went down: a held frame is dropped */
void devmem_nic_mac_link_down(DevmemNicCore *core);
/* the VM runs again: a retry or flush that waited for it */
void devmem_nic_mac_vm_running(DevmemNicCore *core);
/* frames held on queue @qi (0 or 1), for the migration's lost count */
uint32_t devmem_nic_mac_rx_held_on(DevmemNicCore *core, unsigned qi);
extern const VMStateDescription vmstate_devmem_nic_mac;

/* PTP clock and timestamps, devmem-nic-ptp.c */
uint64_t devmem_nic_ptp_time(DevmemNicCore *core);
void devmem_nic_ptp_tx_wire(DevmemNicCore *core);
void devmem_nic_ptp_reset(DevmemNicCore *core);
bool devmem_nic_ptp_read(DevmemNicCore *core, hwaddr addr, uint32_t *val);
bool devmem_nic_ptp_write(DevmemNicCore *core, hwaddr addr, uint32_t val);
bool devmem_nic_ptp_queue_read(DevmemNicCore *core, unsigned qi, hwaddr off,
                               uint32_t *val);
/* @enabled: the direction of the array written is enabled */
bool devmem_nic_ptp_queue_write(DevmemNicCore *core, unsigned qi,
                                hwaddr off, uint32_t val, bool enabled);
/*
 * Before completion @idx of queue @qi is written with *@flags: the
 * timestamp, if one is due (RX: SOP; TX: TXC_F_TS asked for), and its
 * flag.  False if the timestamp write failed.
 */
bool devmem_nic_ptp_stamp(DevmemNicCore *core, unsigned qi, bool tx,
                          uint32_t idx, uint32_t *flags);
extern const VMStateDescription vmstate_devmem_nic_ptp;

/* Transmit shaping, devmem-nic-shaper.c */
void devmem_nic_shaper_realize(DevmemNicCore *core);
void devmem_nic_shaper_unrealize(DevmemNicCore *core);
void devmem_nic_shaper_reset(DevmemNicCore *core);
bool devmem_nic_shaper_read(DevmemNicCore *core, hwaddr addr, uint32_t *val);
bool devmem_nic_shaper_write(DevmemNicCore *core, hwaddr addr, uint32_t val);
/* before queue @qi starts a packet (shaper.active): true = hold it */
bool devmem_nic_shaper_hold(DevmemNicCore *core, unsigned qi);
/*
 * queue @qi put @wire bytes on the wire (shaper.active); true: its turn
 * under a shared limiter is over, let the other queues send
 */
bool devmem_nic_shaper_charge(DevmemNicCore *core, unsigned qi,
                              uint64_t wire);
/* the queue the TX bottom half looks at first */
unsigned devmem_nic_shaper_first(DevmemNicCore *core);
extern const VMStateDescription vmstate_devmem_nic_shaper;

/* UDP segmentation, devmem-nic-uso.c */
typedef struct DmnicSegHdr {
    uint8_t l3;             /* 4 or 6 */
    uint16_t l3_off;
    uint16_t l4_off;        /* the UDP header */
    uint16_t mss;           /* >= DMNIC_TSO_MSS_MIN */
} DmnicSegHdr;

typedef void (*DmnicSegSend)(void *opaque, uint8_t *buf, size_t len);

/* datagrams a UDP payload of @pay bytes becomes */
unsigned devmem_nic_uso_segs(size_t pay, size_t mss);
/*
 * Cut the checked UDP super-frame @buf (@len bytes, IP length fields
 * covering it) into datagrams built in @sb (DMNIC_TSO_MAX_SEG bytes) and
 * hand each to @send; *@nseg and *@wire get their number and bytes.
 */
void devmem_nic_uso_segment(const uint8_t *buf, size_t len,
                            const DmnicSegHdr *h, uint8_t *sb,
                            DmnicSegSend send, void *opaque,
                            uint32_t *nseg, uint64_t *wire);

extern const VMStateDescription vmstate_devmem_nic_core;

#endif /* HW_NET_DEVMEM_NIC_CORE_H */
