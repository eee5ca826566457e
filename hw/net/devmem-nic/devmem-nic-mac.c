/*
 * devmem-nic MAC control and FEC (docs/specs/devmem-nic.rst, "Pause
 * frames and FEC"): IEEE 802.3 annex 31B pause frames, honoured on TX and
 * sent on RX starvation, the RX hold that makes receive lossless with
 * PAUSE_CTRL_TX, and the receive counters of an RS(544,514) FEC sublayer
 * on a bit-exact cable.  No QOM.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "net/eth.h"
#include "net/queue.h"
#include "devmem-nic-core.h"
#include "trace.h"

#define DMNIC_MAC_CTRL_TYPE     0x8808
#define DMNIC_PAUSE_OPCODE      0x0001
#define DMNIC_PAUSE_LEN         18          /* up to the pause time */
#define DMNIC_FCS_LEN           4

static const uint8_t dmnic_pause_dst[ETH_ALEN] = {
    0x01, 0x80, 0xc2, 0x00, 0x00, 0x01
};

static int64_t dmnic_quanta_ns(uint32_t quanta)
{
    return (int64_t)quanta * DMNIC_PAUSE_QUANTUM_PS / 1000;
}

/* TX held until mac->paused_until (virtual clock), or 0 */
static void dmnic_pause_release(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    if (!mac->paused_until) {
        return;
    }
    mac->paused_until = 0;
    timer_del(mac->pause_timer);
    trace_devmem_nic_pause_tx(0);
    /* TX work posted meanwhile waits in core->tx_pending */
    qemu_bh_schedule(core->tx_bh);
}

static void dmnic_pause_timer(void *opaque)
{
    dmnic_pause_release(opaque);
}

bool devmem_nic_mac_tx_paused(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    if (!mac->paused_until) {
        return false;
    }
    if (!devmem_nic_core_link_up(core) ||
        qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) >= mac->paused_until) {
        dmnic_pause_release(core);
        return false;
    }
    return true;
}

static void dmnic_pause_send(DevmemNicCore *core, uint16_t quanta)
{
    uint8_t f[ETH_ZLEN] = { 0 };

    if (!devmem_nic_core_link_up(core)) {
        return;
    }
    memcpy(f, dmnic_pause_dst, ETH_ALEN);
    memcpy(f + ETH_ALEN, core->mac, ETH_ALEN);
    stw_be_p(f + 12, DMNIC_MAC_CTRL_TYPE);
    stw_be_p(f + 14, DMNIC_PAUSE_OPCODE);
    stw_be_p(f + 16, quanta);
    qemu_send_packet(qemu_get_queue(core->nic), f, sizeof(f));
    core->mctl.pause_tx++;
    trace_devmem_nic_pause_send(quanta);
}

static void dmnic_pause_xon(DevmemNicCore *core)
{
    if (core->mctl.xoff) {
        core->mctl.xoff = false;
        dmnic_pause_send(core, 0);
    }
}

void devmem_nic_mac_rx_nobuf(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    if ((mac->pause_ctrl & DMNIC_PAUSE_CTRL_TX) && !mac->xoff &&
        devmem_nic_core_link_up(core)) {
        mac->xoff = true;
        dmnic_pause_send(core, mac->pause_quanta);
    }
}

/*
 * The RX hold.  With PAUSE_CTRL_TX and the link up, a frame that finds no
 * buffers or completion slots on its queue is held here (a MAC FIFO at its
 * XOFF threshold) and an XOFF sent; meanwhile can_receive() is false, so
 * QEMU's net layer keeps the cable's frames, in order, at the sender's
 * side (a devmem-nic sender stops starting packets: dmnic_tx_send()).
 * Posted buffers retry the frame in rx_bh; once it is placed, XON and the
 * cable's queue is flushed.  The stall limit (a guest that posts nothing)
 * drops it, counted as a NOBUF drop, and no frame is held again until
 * buffers are posted, so a guest cannot stop the cable for longer.
 */
static void dmnic_hold_free(DmnicMac *mac)
{
    g_free(mac->hold_buf);
    mac->hold_buf = NULL;
    mac->hold_size = 0;
    if (mac->hold_timer) {
        timer_del(mac->hold_timer);
    }
}

/* the hold ended: the cable's queue is flushed (rx_bh, never in MMIO) */
static void dmnic_hold_end(DevmemNicCore *core)
{
    dmnic_hold_free(&core->mctl);
    core->mctl.rx_flush = true;
    qemu_bh_schedule(core->mctl.rx_bh);
}

/* drop the held frame, counted as a NOBUF drop of its queue */
static void dmnic_hold_drop(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    if (!mac->hold_buf) {
        return;
    }
    if (mac->hold_qi < core->num_queues) {
        core->q[mac->hold_qi].stats[DMNIC_QS_RX_DROP_NOBUF]++;
    }
    trace_devmem_nic_rx_hold_drop(mac->hold_qi, mac->hold_size);
    dmnic_hold_end(core);
}

/* try to place the held frame: true if the hold is over */
static bool dmnic_hold_retry(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    if (!devmem_nic_core_rx_retry(core, mac->hold_qi, mac->hold_buf,
                                  mac->hold_size, &mac->hold_st)) {
        return false;
    }
    trace_devmem_nic_rx_hold_end(mac->hold_qi, mac->hold_size);
    dmnic_pause_xon(core);
    dmnic_hold_end(core);
    return true;
}

/*
 * The frames that waited come in, oldest first.  Those QEMU queued for us
 * (our incoming queue) are older than those a hub still holds at its
 * sender's port, but qemu_flush_queued_packets() flushes the hub first:
 * so ours go first, and the hub's only once ours are all in and no frame
 * is held again.  A hub moves the frames of its port into our queue when
 * it flushes, and tells their sender they went: flushing it only into an
 * empty queue keeps that to what one sender had waiting.  A frame held
 * again stops either flush (our receive returns 0, and the net layer
 * keeps the frame first in our queue).
 */
static void dmnic_rx_flush(DevmemNicCore *core)
{
    NetClientState *nc = qemu_get_queue(core->nic);

    core->mctl.rx_flush = false;
    nc->receive_disabled = 0;
    if (qemu_net_queue_flush(nc->incoming_queue) && !core->mctl.hold_buf) {
        qemu_flush_queued_packets(nc);
    }
}

static void dmnic_rx_bh(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicMac *mac = &core->mctl;

    if (!runstate_is_running()) {
        return;     /* devmem_nic_mac_vm_running() schedules us again */
    }
    if (mac->hold_buf && !dmnic_hold_retry(core)) {
        return;     /* still no buffers */
    }
    if (mac->rx_flush) {
        dmnic_rx_flush(core);
    }
}

static void dmnic_hold_timer(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicMac *mac = &core->mctl;

    if (!mac->hold_buf || !runstate_is_running() || dmnic_hold_retry(core)) {
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: queue %u posted no RX "
                  "buffers for %d ms: held frame dropped\n", mac->hold_qi,
                  DMNIC_PAUSE_STALL_NS / 1000000);
    dmnic_hold_drop(core);
    mac->hold_stalled = true;
}

bool devmem_nic_mac_rx_may_hold(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    return (mac->pause_ctrl & DMNIC_PAUSE_CTRL_TX) && !mac->hold_buf &&
           !mac->hold_stalled && devmem_nic_core_link_up(core);
}

void devmem_nic_mac_rx_hold(DevmemNicCore *core, unsigned qi,
                            const uint8_t *buf, size_t size,
                            const DmnicRxSteer *st)
{
    DmnicMac *mac = &core->mctl;

    assert(!mac->hold_buf);
    mac->hold_buf = g_memdup2(buf, size);
    mac->hold_size = size;
    mac->hold_qi = qi;
    mac->hold_st = *st;
    timer_mod(mac->hold_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                               DMNIC_PAUSE_STALL_NS);
    trace_devmem_nic_rx_hold(qi, size);
    devmem_nic_mac_rx_nobuf(core);      /* the XOFF */
}

bool devmem_nic_mac_rx_held(DevmemNicCore *core)
{
    return core->mctl.hold_buf;
}

bool devmem_nic_mac_can_receive(DevmemNicCore *core)
{
    return !core->mctl.hold_buf && !core->mctl.rx_flush;
}

uint32_t devmem_nic_mac_rx_held_on(DevmemNicCore *core, unsigned qi)
{
    return core->mctl.hold_buf && core->mctl.hold_qi == qi;
}

void devmem_nic_mac_rx_posted(DevmemNicCore *core, bool bufs)
{
    DmnicMac *mac = &core->mctl;

    if (bufs) {
        mac->hold_stalled = false;
    }
    if (mac->hold_buf) {
        qemu_bh_schedule(mac->rx_bh);   /* XON once the frame is placed */
    } else if (bufs) {
        dmnic_pause_xon(core);
    }
}

void devmem_nic_mac_rx_stopped(DevmemNicCore *core, unsigned qi)
{
    DmnicMac *mac = &core->mctl;

    if (mac->hold_buf && mac->hold_qi == qi) {
        /* as a frame that arrives for a stopped queue */
        core->q[qi].stats[DMNIC_QS_RX_DROP_DISABLED]++;
        trace_devmem_nic_rx_disabled(qi, mac->hold_size);
        dmnic_hold_end(core);
    }
}

void devmem_nic_mac_rx_error(DevmemNicCore *core, unsigned qi)
{
    DmnicMac *mac = &core->mctl;

    /*
     * The retry finds the queue stopped and drops the frame (as one that
     * arrives then); not here: a failed placement of the held frame
     * itself raises the error while rx_bh uses it
     */
    if (mac->hold_buf && mac->hold_qi == qi) {
        qemu_bh_schedule(mac->rx_bh);
    }
}

void devmem_nic_mac_link_down(DevmemNicCore *core)
{
    dmnic_hold_drop(core);
}

void devmem_nic_mac_vm_running(DevmemNicCore *core)
{
    if (core->mctl.hold_buf || core->mctl.rx_flush) {
        qemu_bh_schedule(core->mctl.rx_bh);
    }
}

/* The PCS: every frame off the cable is ceil(bits / 5140) clean codewords */
static void dmnic_fec_count(DmnicMac *mac, size_t size)
{
    if (mac->fec_ctrl == DMNIC_FEC_RS) {
        mac->fec_hist[0] += DIV_ROUND_UP((size + DMNIC_FCS_LEN) * 8,
                                         DMNIC_FEC_CW_DATA_BITS);
    }
}

bool devmem_nic_mac_rx(DevmemNicCore *core, const uint8_t *buf, size_t size)
{
    DmnicMac *mac = &core->mctl;
    uint16_t quanta;

    dmnic_fec_count(mac, size);
    if (size < DMNIC_PAUSE_LEN ||
        lduw_be_p(buf + 12) != DMNIC_MAC_CTRL_TYPE ||
        lduw_be_p(buf + 14) != DMNIC_PAUSE_OPCODE ||
        (memcmp(buf, dmnic_pause_dst, ETH_ALEN) &&
         memcmp(buf, core->mac, ETH_ALEN))) {
        return false;
    }
    mac->pause_rx++;
    quanta = lduw_be_p(buf + 16);
    trace_devmem_nic_pause_rx(quanta, !!(mac->pause_ctrl &
                                         DMNIC_PAUSE_CTRL_RX));
    if (!(mac->pause_ctrl & DMNIC_PAUSE_CTRL_RX)) {
        return true;
    }
    if (!quanta) {
        dmnic_pause_release(core);
        return true;
    }
    mac->paused_until = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                        dmnic_quanta_ns(quanta);
    timer_mod(mac->pause_timer, mac->paused_until);
    trace_devmem_nic_pause_tx(quanta);
    return true;
}

static uint32_t dmnic_counter(uint64_t v, hwaddr addr)
{
    return (addr & 4) ? v >> 32 : (uint32_t)v;
}

bool devmem_nic_mac_read(DevmemNicCore *core, hwaddr addr, uint32_t *val)
{
    DmnicMac *mac = &core->mctl;

    if (addr >= DMNIC_REG_G_FEC_HIST(0) &&
        addr < DMNIC_REG_G_FEC_HIST(DMNIC_FEC_HIST_BINS)) {
        *val = dmnic_counter(mac->fec_hist[(addr - DMNIC_REG_G_FEC_HIST(0)) /
                                           8], addr);
        return true;
    }
    switch (addr & ~(hwaddr)4) {
    case DMNIC_REG_G_PAUSE_RX:
        *val = dmnic_counter(mac->pause_rx, addr);
        return true;
    case DMNIC_REG_G_PAUSE_TX:
        *val = dmnic_counter(mac->pause_tx, addr);
        return true;
    case DMNIC_REG_G_FEC_CORRECTED:
    case DMNIC_REG_G_FEC_UNCORR:
    case DMNIC_REG_G_FEC_CORR_BITS:
        *val = 0;       /* the cable delivers frames bit-exact */
        return true;
    }
    switch (addr) {
    case DMNIC_REG_PAUSE_CTRL:
        *val = mac->pause_ctrl;
        return true;
    case DMNIC_REG_PAUSE_QUANTA:
        *val = mac->pause_quanta;
        return true;
    case DMNIC_REG_PAUSE_STATUS:
        *val = (devmem_nic_mac_tx_paused(core) ?
                DMNIC_PAUSE_ST_TX_PAUSED : 0) |
               (mac->xoff ? DMNIC_PAUSE_ST_XOFF : 0) |
               (mac->hold_buf ? DMNIC_PAUSE_ST_RX_HELD : 0);
        return true;
    case DMNIC_REG_FEC_CTRL:
        *val = mac->fec_ctrl;
        return true;
    }
    return false;
}

bool devmem_nic_mac_write(DevmemNicCore *core, hwaddr addr, uint32_t val)
{
    DmnicMac *mac = &core->mctl;

    switch (addr) {
    case DMNIC_REG_PAUSE_CTRL:
        if (val & ~(DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX)) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: PAUSE_CTRL reserved "
                          "bits 0x%x ignored\n",
                          val & ~(DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX));
        }
        mac->pause_ctrl = val & (DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX);
        if (!(mac->pause_ctrl & DMNIC_PAUSE_CTRL_RX)) {
            dmnic_pause_release(core);
        }
        if (!(mac->pause_ctrl & DMNIC_PAUSE_CTRL_TX)) {
            /* a held frame gets one more try, then is dropped */
            if (mac->hold_buf && !dmnic_hold_retry(core)) {
                dmnic_hold_drop(core);
            }
            mac->hold_stalled = false;
            dmnic_pause_xon(core);
        }
        return true;
    case DMNIC_REG_PAUSE_QUANTA:
        mac->pause_quanta = MAX(val & 0xffff, 1);
        if (val != mac->pause_quanta) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: PAUSE_QUANTA 0x%x "
                          "stored as %u\n", val, mac->pause_quanta);
        }
        return true;
    case DMNIC_REG_FEC_CTRL:
        mac->fec_ctrl = (val & 3) == DMNIC_FEC_OFF ? DMNIC_FEC_OFF :
                                                     DMNIC_FEC_RS;
        if (val > DMNIC_FEC_RS) {
            qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: FEC_CTRL 0x%x "
                          "stored as %u\n", val, mac->fec_ctrl);
        }
        return true;
    case DMNIC_REG_PAUSE_STATUS:
    case DMNIC_REG_G_PAUSE_RX ... DMNIC_REG_G_FEC_CORR_BITS + 7:
    case DMNIC_REG_G_FEC_HIST(0) ... DMNIC_REG_G_FEC_HIST(DMNIC_FEC_HIST_BINS)
                                     - 1:
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: write to read-only "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        return true;
    }
    return false;
}

void devmem_nic_mac_reset(DevmemNicCore *core)
{
    DmnicMac *mac = &core->mctl;

    mac->paused_until = 0;
    if (mac->pause_timer) {
        timer_del(mac->pause_timer);
    }
    mac->pause_ctrl = 0;
    mac->pause_quanta = DMNIC_PAUSE_QUANTA_RESET;
    mac->xoff = false;
    /* a held frame is lost (the counters start again anyway) */
    if (mac->hold_buf) {
        dmnic_hold_end(core);
    }
    mac->hold_stalled = false;
    mac->pause_rx = 0;
    mac->pause_tx = 0;
    mac->fec_ctrl = DMNIC_FEC_RS;
    memset(mac->fec_hist, 0, sizeof(mac->fec_hist));
}

void devmem_nic_mac_realize(DevmemNicCore *core)
{
    DeviceState *dev = DEVICE(core->owner);

    core->mctl.pause_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                         dmnic_pause_timer, core);
    core->mctl.hold_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                        dmnic_hold_timer, core);
    core->mctl.rx_bh = qemu_bh_new_guarded(dmnic_rx_bh, core,
                                           &dev->mem_reentrancy_guard);
    devmem_nic_mac_reset(core);
}

void devmem_nic_mac_unrealize(DevmemNicCore *core)
{
    dmnic_hold_free(&core->mctl);
    if (core->mctl.pause_timer) {
        timer_free(core->mctl.pause_timer);
        core->mctl.pause_timer = NULL;
    }
    if (core->mctl.hold_timer) {
        timer_free(core->mctl.hold_timer);
        core->mctl.hold_timer = NULL;
    }
    if (core->mctl.rx_bh) {
        qemu_bh_delete(core->mctl.rx_bh);
        core->mctl.rx_bh = NULL;
    }
}

static bool dmnic_mac_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicMac *mac = &core->mctl;
    unsigned i;

    if (mac->pause_ctrl || mac->pause_quanta != DMNIC_PAUSE_QUANTA_RESET ||
        mac->xoff || mac->paused_until || mac->pause_rx || mac->pause_tx ||
        mac->fec_ctrl != DMNIC_FEC_RS) {
        return true;
    }
    for (i = 0; i < DMNIC_FEC_HIST_BINS; i++) {
        if (mac->fec_hist[i]) {
            return true;
        }
    }
    return false;
}

static int dmnic_mac_pre_save(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicMac *mac = &core->mctl;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    mac->mig_pause_left = mac->paused_until > now ?
                          mac->paused_until - now : 0;
    return 0;
}

static int dmnic_mac_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    DmnicMac *mac = &core->mctl;

    /* only values a register write could have produced */
    mac->pause_ctrl &= DMNIC_PAUSE_CTRL_RX | DMNIC_PAUSE_CTRL_TX;
    mac->pause_quanta = MAX(mac->pause_quanta & 0xffff, 1);
    mac->fec_ctrl = mac->fec_ctrl == DMNIC_FEC_OFF ? DMNIC_FEC_OFF :
                                                     DMNIC_FEC_RS;
    mac->paused_until = 0;
    timer_del(mac->pause_timer);
    /* the pause continues for the time it had left (at most 65535 quanta) */
    if (mac->mig_pause_left > 0 && (mac->pause_ctrl & DMNIC_PAUSE_CTRL_RX)) {
        mac->paused_until = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                            MIN(mac->mig_pause_left,
                                dmnic_quanta_ns(0xffff));
        timer_mod(mac->pause_timer, mac->paused_until);
    }
    return 0;
}

static const VMStateDescription vmstate_dmnic_mctl = {
    .name = "devmem-nic-mctl",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(pause_ctrl, DmnicMac),
        VMSTATE_UINT32(pause_quanta, DmnicMac),
        VMSTATE_BOOL(xoff, DmnicMac),
        VMSTATE_INT64(mig_pause_left, DmnicMac),
        VMSTATE_UINT64(pause_rx, DmnicMac),
        VMSTATE_UINT64(pause_tx, DmnicMac),
        VMSTATE_UINT32(fec_ctrl, DmnicMac),
        VMSTATE_UINT64_ARRAY(fec_hist, DmnicMac, DMNIC_FEC_HIST_BINS),
        VMSTATE_END_OF_LIST()
    },
};

/* 1.3 pause and FEC state: a subsection of devmem-nic-core */
const VMStateDescription vmstate_devmem_nic_mac = {
    .name = "devmem-nic-core/mac",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_mac_needed,
    .pre_save = dmnic_mac_pre_save,
    .post_load = dmnic_mac_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(mctl, DevmemNicCore, 1, vmstate_dmnic_mctl, DmnicMac),
        VMSTATE_END_OF_LIST()
    },
};
