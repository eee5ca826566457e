/*
 * devmem-nic PTP clock and packet timestamps (docs/specs/devmem-nic.rst,
 * "PTP clock and timestamps"): a nanosecond clock on QEMU's virtual
 * clock with a settable time, offset and frequency, sampled into the
 * timestamp arrays of RX and TX completions.  No QOM.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/host-utils.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "system/dma.h"
#include "devmem-nic-core.h"
#include "trace.h"

#define DMNIC_PTP_CTRL_RW   (DMNIC_PTP_CTRL_RX_TS | DMNIC_PTP_CTRL_TX_TS)

/*
 * The clock: ptp->base at virtual time ptp->vbase, then d + d * ppb / 1e9
 * for every d ns of virtual time.  A fresh device is anchored at virtual
 * time 0, so until a write the clock is the virtual clock (which
 * migrates with the VM).
 */
static uint64_t dmnic_ptp_now(const DmnicPtp *ptp)
{
    int64_t d = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - ptp->vbase;
    uint64_t adj;

    if (d <= 0) {
        return ptp->base;
    }
    adj = muldiv64(d, ptp->adj_ppb < 0 ? -ptp->adj_ppb : ptp->adj_ppb,
                   NANOSECONDS_PER_SECOND);
    return ptp->base + d + (ptp->adj_ppb < 0 ? -adj : adj);
}

/* the clock goes on from here: base := now, vbase := virtual now */
static void dmnic_ptp_anchor(DmnicPtp *ptp)
{
    ptp->base = dmnic_ptp_now(ptp);
    ptp->vbase = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

uint64_t devmem_nic_ptp_time(DevmemNicCore *core)
{
    return dmnic_ptp_now(&core->ptp);
}

/* a frame goes on the wire now: its TX stamp, if TX stamping is on */
void devmem_nic_ptp_tx_wire(DevmemNicCore *core)
{
    if (core->ptp.ctrl & DMNIC_PTP_CTRL_TX_TS) {
        core->ptp.tx_wire = dmnic_ptp_now(&core->ptp);
    }
}

bool devmem_nic_ptp_read(DevmemNicCore *core, hwaddr addr, uint32_t *val)
{
    DmnicPtp *ptp = &core->ptp;
    uint64_t t;

    switch (addr) {
    case DMNIC_REG_PTP_CTRL:
        *val = ptp->ctrl;
        return true;
    case DMNIC_REG_PTP_ADJ_PPB:
        *val = ptp->adj_ppb;
        return true;
    case DMNIC_REG_PTP_MAX_ADJ:
        *val = DMNIC_PTP_MAX_ADJ;
        return true;
    case DMNIC_REG_PTP_TIME_LO:
        t = dmnic_ptp_now(ptp);
        ptp->sample_hi = t >> 32;
        *val = t;
        return true;
    case DMNIC_REG_PTP_TIME_HI:
        *val = ptp->sample_hi;
        return true;
    case DMNIC_REG_PTP_ARG_LO:
        *val = ptp->arg;
        return true;
    case DMNIC_REG_PTP_ARG_HI:
        *val = ptp->arg >> 32;
        return true;
    case DMNIC_REG_PTP_CMD:
        *val = 0;
        return true;
    }
    return false;
}

bool devmem_nic_ptp_write(DevmemNicCore *core, hwaddr addr, uint32_t val)
{
    DmnicPtp *ptp = &core->ptp;
    int32_t ppb;

    switch (addr) {
    case DMNIC_REG_PTP_CTRL:
        if (val & ~DMNIC_PTP_CTRL_RW) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: PTP_CTRL reserved "
                          "bits 0x%x ignored\n", val & ~DMNIC_PTP_CTRL_RW);
        }
        ptp->ctrl = val & DMNIC_PTP_CTRL_RW;
        return true;
    case DMNIC_REG_PTP_CMD:
        switch (val) {
        case DMNIC_PTP_CMD_SET:
            dmnic_ptp_anchor(ptp);
            ptp->base = ptp->arg;
            break;
        case DMNIC_PTP_CMD_ADJ:
            dmnic_ptp_anchor(ptp);
            ptp->base += ptp->arg;      /* two's complement: a signed add */
            break;
        default:
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: unknown PTP_CMD %u\n",
                          val);
            return true;
        }
        trace_devmem_nic_ptp_cmd(val, ptp->arg, ptp->base);
        return true;
    case DMNIC_REG_PTP_ADJ_PPB:
        ppb = MAX(MIN((int32_t)val, DMNIC_PTP_MAX_ADJ), -DMNIC_PTP_MAX_ADJ);
        if (ppb != (int32_t)val) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: PTP_ADJ_PPB %d "
                          "clamped to %d\n", (int32_t)val, ppb);
        }
        dmnic_ptp_anchor(ptp);
        ptp->adj_ppb = ppb;
        trace_devmem_nic_ptp_adj_ppb(ppb);
        return true;
    case DMNIC_REG_PTP_ARG_LO:
        ptp->arg = deposit64(ptp->arg, 0, 32, val);
        return true;
    case DMNIC_REG_PTP_ARG_HI:
        ptp->arg = deposit64(ptp->arg, 32, 32, val);
        return true;
    case DMNIC_REG_PTP_MAX_ADJ:
    case DMNIC_REG_PTP_TIME_LO:
    case DMNIC_REG_PTP_TIME_HI:
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: write to read-only "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        return true;
    }
    return false;
}

bool devmem_nic_ptp_queue_read(DevmemNicCore *core, unsigned qi, hwaddr off,
                               uint32_t *val)
{
    DmnicPtp *ptp = &core->ptp;

    switch (off) {
    case DMNIC_Q_RXTS_LO:
        *val = ptp->rxts[qi];
        return true;
    case DMNIC_Q_RXTS_HI:
        *val = ptp->rxts[qi] >> 32;
        return true;
    case DMNIC_Q_TXTS_LO:
        *val = ptp->txts[qi];
        return true;
    case DMNIC_Q_TXTS_HI:
        *val = ptp->txts[qi] >> 32;
        return true;
    }
    return false;
}

bool devmem_nic_ptp_queue_write(DevmemNicCore *core, unsigned qi,
                                hwaddr off, uint32_t val, bool enabled)
{
    DmnicPtp *ptp = &core->ptp;
    uint64_t *a;

    switch (off) {
    case DMNIC_Q_RXTS_LO:
    case DMNIC_Q_RXTS_HI:
        a = &ptp->rxts[qi];
        break;
    case DMNIC_Q_TXTS_LO:
    case DMNIC_Q_TXTS_HI:
        a = &ptp->txts[qi];
        break;
    default:
        return false;
    }
    if (enabled) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u timestamp "
                      "array written while enabled\n", qi);
        return true;
    }
    if (off & 4) {
        *a = deposit64(*a, 32, 32, val);
    } else {
        if (val & (DMNIC_PTP_TS_SIZE - 1)) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u timestamp "
                          "array 0x%x not 8-byte aligned, low bits "
                          "ignored\n", qi, val);
        }
        *a = deposit64(*a, 0, 32, val & ~(DMNIC_PTP_TS_SIZE - 1));
    }
    return true;
}

bool devmem_nic_ptp_stamp(DevmemNicCore *core, unsigned qi, bool tx,
                          uint32_t idx, uint32_t *flags)
{
    DmnicPtp *ptp = &core->ptp;
    uint64_t base = tx ? ptp->txts[qi] : ptp->rxts[qi];
    uint8_t ts[DMNIC_PTP_TS_SIZE];
    uint64_t t;

    if (tx) {
        /* the TX path asked for it with TXC_F_TS (TXD_F_TS, sent) */
        if (!(*flags & DMNIC_TXC_F_TS)) {
            return true;
        }
        if (!(ptp->ctrl & DMNIC_PTP_CTRL_TX_TS) || !base) {
            *flags &= ~DMNIC_TXC_F_TS;
            return true;
        }
    } else if (!(*flags & DMNIC_RXC_F_SOP) ||
               !(ptp->ctrl & DMNIC_PTP_CTRL_RX_TS) || !base) {
        return true;
    }
    /* TX: when the packet's last frame went on the wire (spec) */
    t = tx ? ptp->tx_wire : dmnic_ptp_now(ptp);
    stq_le_p(ts, t);
    if (pci_dma_write(core->owner, base + (uint64_t)idx * DMNIC_PTP_TS_SIZE,
                      ts, sizeof(ts)) != MEMTX_OK) {
        return false;
    }
    *flags |= tx ? DMNIC_TXC_F_TS : DMNIC_RXC_F_TS;
    return true;
}

void devmem_nic_ptp_reset(DevmemNicCore *core)
{
    DmnicPtp *ptp = &core->ptp;

    /* the clock and its rate keep running (spec: PTP clock) */
    ptp->ctrl = 0;
    ptp->arg = 0;
    ptp->tx_wire = 0;
    memset(ptp->rxts, 0, sizeof(ptp->rxts));
    memset(ptp->txts, 0, sizeof(ptp->txts));
}

static bool dmnic_ptp_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicPtp *ptp = &core->ptp;
    unsigned qi;

    if (ptp->ctrl || ptp->adj_ppb || ptp->base || ptp->vbase || ptp->arg) {
        return true;
    }
    for (qi = 0; qi < DMNIC_MAX_QUEUES; qi++) {
        if (ptp->rxts[qi] || ptp->txts[qi]) {
            return true;
        }
    }
    return false;
}

/*
 * The clock is sent as its value at the save (base, anchored then) and
 * continues from there on the destination's virtual clock, which need not
 * be the source's (qtest's is not migrated); like the virtual clock it
 * stands still while the VM is stopped.
 */
static int dmnic_ptp_pre_save(void *opaque)
{
    DevmemNicCore *core = opaque;

    dmnic_ptp_anchor(&core->ptp);
    return 0;
}

static int dmnic_ptp_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    DmnicPtp *ptp = &core->ptp;
    unsigned qi;

    ptp->vbase = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    /* only values a register write could have produced */
    ptp->ctrl &= DMNIC_PTP_CTRL_RW;
    ptp->adj_ppb = MAX(MIN(ptp->adj_ppb, DMNIC_PTP_MAX_ADJ),
                       -DMNIC_PTP_MAX_ADJ);
    for (qi = 0; qi < DMNIC_MAX_QUEUES; qi++) {
        ptp->rxts[qi] &= ~(uint64_t)(DMNIC_PTP_TS_SIZE - 1);
        ptp->txts[qi] &= ~(uint64_t)(DMNIC_PTP_TS_SIZE - 1);
    }
    return 0;
}

const VMStateDescription vmstate_devmem_nic_ptp = {
    .name = "devmem-nic-core/ptp",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_ptp_needed,
    .pre_save = dmnic_ptp_pre_save,
    .post_load = dmnic_ptp_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(ptp.ctrl, DevmemNicCore),
        VMSTATE_INT32(ptp.adj_ppb, DevmemNicCore),
        VMSTATE_UINT64(ptp.arg, DevmemNicCore),
        VMSTATE_UINT64(ptp.base, DevmemNicCore),
        VMSTATE_UINT32(ptp.sample_hi, DevmemNicCore),
        /* queues 0..63 (the rest: devmem-nic-core/queues-hi) */
        VMSTATE_UINT64_SUB_ARRAY(ptp.rxts, DevmemNicCore, 0,
                                 DMNIC_MIG_QUEUES_V1),
        VMSTATE_UINT64_SUB_ARRAY(ptp.txts, DevmemNicCore, 0,
                                 DMNIC_MIG_QUEUES_V1),
        VMSTATE_END_OF_LIST()
    },
};
