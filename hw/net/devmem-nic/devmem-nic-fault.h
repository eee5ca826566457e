/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-nic fault injection: host-side knobs (QOM x-fault-* properties,
 * docs/fault-injection.md) and the hooks the core engine calls.
 *
 * The state here is not guest state: it is not migrated and survives
 * device resets (frames and TX work held back by a delay are dropped by a
 * reset).
 */
#ifndef HW_NET_DEVMEM_NIC_FAULT_H
#define HW_NET_DEVMEM_NIC_FAULT_H

#include "qemu/timer.h"
#include "qom/object.h"
#include "devmem-nic-regs.h"

#define DMNIC_FAULT_HELD_MAX        256     /* RX frames held by a delay */
#define DMNIC_FAULT_FLAP_NS_DEFAULT 1000000 /* 1 ms down, 1 ms up */

typedef enum {
    DMNIC_FAULT_CORRUPT_ID,     /* buffer / descriptor ID ^= 0x8000 */
    DMNIC_FAULT_CORRUPT_LEN,    /* lengths |= 0xffff0000 (RXC PKT/PAY_LEN) */
    DMNIC_FAULT_CORRUPT_FLAGS,  /* RX: SOP/EOP flipped; TX: status 0xff */
} DmnicFaultField;

/* What the RX hook did with a frame */
typedef enum {
    DMNIC_FAULT_PASS,           /* nothing: place it now */
    DMNIC_FAULT_DROP,           /* lost (stalled queue, delay backlog full) */
    DMNIC_FAULT_HELD,           /* delayed: devmem_nic_core_rx_release() */
} DmnicFaultVerdict;

/* x-fault-stall values */
typedef enum {
    DMNIC_FAULT_STALL_NONE,
    DMNIC_FAULT_STALL_ALL,      /* TX not fetched, RX dropped */
    DMNIC_FAULT_STALL_TX,       /* TX not fetched, RX placed as usual */
} DmnicFaultStall;

/* The steering results of a held frame, restored when it is placed */
typedef struct DmnicRxSteer {
    uint32_t flags;             /* RXC_F_RSS, FS_MATCH, PSP, PSP_GEN */
    uint32_t hash;
    uint8_t rss_type;
    int rule;
} DmnicRxSteer;

typedef struct DmnicFaultQueue {
    uint32_t dma_read;          /* fail the next N DMA reads */
    uint32_t dma_write;         /* fail the next N DMA writes */
    uint32_t drop_cpl;          /* lose the completions of N packets */
    uint32_t corrupt_cpl;       /* corrupt the next N completions */
    uint8_t corrupt_field;      /* DmnicFaultField */
    uint32_t restart_fail;      /* fail the next N enables */
    uint8_t restart_code;       /* with this DMNIC_QERR_* code */
    uint8_t stall;              /* DmnicFaultStall */
    int64_t delay_ns;           /* completions delayed by this much */
    int64_t tx_due;             /* TX work waiting for the delay, or 0 */
    int64_t rx_last_due;        /* deadline of the last frame held */
    bool tx_release;            /* delay expired: TX may run */
} DmnicFaultQueue;

typedef struct DmnicFault {
    bool realized;
    DmnicFaultQueue q[DMNIC_MAX_QUEUES];
    bool link_down;             /* x-fault-link-down */
    bool flap_down;             /* the link flapper's current state */
    uint32_t flap_left;         /* link transitions still to do */
    int64_t flap_ns;
    QEMUTimer *flap_timer;
    QEMUTimer *delay_timer;
    /* releases asked for by a knob run here, only while the VM runs */
    QEMUBH *release_bh;
    bool release_pending;
    GQueue held;                /* DmnicFaultHeld: RX frames being delayed */
    uint64_t injected;          /* faults injected so far */
} DmnicFault;

struct DevmemNicCore;

/* Lifecycle, called by the QOM glue */
/* Adds the x-fault-* class properties */
void devmem_nic_fault_class_init(ObjectClass *klass);
void devmem_nic_fault_realize(struct DevmemNicCore *core);
void devmem_nic_fault_unrealize(struct DevmemNicCore *core);
/* Device reset: drops work held by a delay; armed knobs stay */
void devmem_nic_fault_reset(struct DevmemNicCore *core);

/* Hooks for the core.  All are cheap no-ops when nothing is armed. */

/* Whether the next DMA of queue pair @qi must fail (consumes one) */
bool devmem_nic_fault_dma(struct DevmemNicCore *core, unsigned qi,
                          bool write);
/* Non-zero: the DMNIC_QERR_* code with which this enable must fail */
uint8_t devmem_nic_fault_enable(struct DevmemNicCore *core, unsigned qi,
                                bool tx);
/*
 * Called with a completion ready to be written (flags dword included).
 * May corrupt it in place; returns true if it must be dropped instead.
 */
bool devmem_nic_fault_cpl(struct DevmemNicCore *core, unsigned qi, bool tx,
                          uint8_t *cpl, unsigned size);
/*
 * RX frame steered to running queue @qi, with its steering results @st.
 * The core counts a DROP (Q_RX_DROP_NOBUF); a HELD frame is placed later
 * with devmem_nic_core_rx_release(), with a copy of @st.
 */
DmnicFaultVerdict devmem_nic_fault_rx(struct DevmemNicCore *core,
                                      unsigned qi, const uint8_t *buf,
                                      size_t size, const DmnicRxSteer *st);
/* Whether TX of queue pair @qi must not run now (stalled or delayed) */
bool devmem_nic_fault_tx_hold(struct DevmemNicCore *core, unsigned qi);
/* TX of queue pair @qi ran out of work: a delay applies to the next one */
void devmem_nic_fault_tx_idle(struct DevmemNicCore *core, unsigned qi);
/* Whether the injector holds the link down */
bool devmem_nic_fault_link_down(struct DevmemNicCore *core);
/* RX frames a delay holds for queue pair @qi (a migration loses them) */
uint32_t devmem_nic_fault_held(struct DevmemNicCore *core, unsigned qi);
/* The VM runs (again): releases asked for while it was stopped go now */
void devmem_nic_fault_vm_running(struct DevmemNicCore *core);

/* Provided by devmem-nic.c: the core of the devmem-nic @obj */
struct DevmemNicCore *devmem_nic_core_of(Object *obj);

/* Provided by devmem-nic-core.c for the injector */

/* Schedules TX of queue pair @qi (after a delay or a stall ends) */
void devmem_nic_core_tx_kick(struct DevmemNicCore *core, unsigned qi);
/* Places a frame devmem_nic_fault_rx() held back, as it was steered */
void devmem_nic_core_rx_release(struct DevmemNicCore *core, unsigned qi,
                                const uint8_t *buf, size_t size,
                                const DmnicRxSteer *st);

#endif /* HW_NET_DEVMEM_NIC_FAULT_H */
