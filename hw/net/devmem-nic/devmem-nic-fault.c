/*
 * devmem-nic fault injection: runtime QOM properties (x-fault-*) that make
 * the device fail DMA, lose, corrupt or delay completions, refuse queue
 * enables, stall queues and flap the link, so tests can check how drivers
 * and the device contract cope.  See docs/fault-injection.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "devmem-nic-core.h"
#include "devmem-nic-fault.h"
#include "trace.h"

typedef struct DmnicFaultHeld {
    unsigned qi;
    int64_t due;
    size_t size;
    uint8_t *data;
    DmnicRxSteer st;
} DmnicFaultHeld;

static int64_t dmnic_fault_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* ------------------------------------------------------------------ */
/* Delay: TX work and RX frames held until a virtual-clock deadline     */
/* ------------------------------------------------------------------ */

static void dmnic_fault_held_free(DmnicFaultHeld *h)
{
    g_free(h->data);
    g_free(h);
}

static void dmnic_fault_delay_arm(DevmemNicCore *core)
{
    DmnicFault *f = &core->fault;
    int64_t next = INT64_MAX;
    GList *l;
    unsigned qi;

    for (qi = 0; qi < core->num_queues; qi++) {
        if (f->q[qi].tx_due) {
            next = MIN(next, f->q[qi].tx_due);
        }
    }
    for (l = f->held.head; l; l = l->next) {
        next = MIN(next, ((DmnicFaultHeld *)l->data)->due);
    }
    if (next == INT64_MAX) {
        timer_del(f->delay_timer);
    } else {
        timer_mod(f->delay_timer, next);
    }
}

/* the first held frame whose deadline has come, or NULL */
static DmnicFaultHeld *dmnic_fault_next_due(DmnicFault *f, int64_t now)
{
    GList *l;

    /* frames in arrival order; per queue the deadlines never go back */
    for (l = f->held.head; l; l = l->next) {
        DmnicFaultHeld *h = l->data;

        if (h->due <= now) {
            return h;
        }
    }
    return NULL;
}

/*
 * Releases the work whose delay is over.  Runs from the delay timer or the
 * QOM setter, outside any MMIO access to the device, so it engages the
 * device's re-entrancy guard itself (as a guarded bottom half would): a
 * released frame whose DMA targets the device's own BAR fails with
 * QERR_DMA instead of re-entering the device.  Due frames are unlinked one
 * at a time and the list is looked at again after each release, so
 * whatever a release does to the list (a reset empties it) is safe.
 */
static void dmnic_fault_delay_run(DevmemNicCore *core)
{
    MemReentrancyGuard *guard = &DEVICE(core->owner)->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;
    DmnicFault *f = &core->fault;
    int64_t now = dmnic_fault_now();
    DmnicFaultHeld *h;
    unsigned qi;

    for (qi = 0; qi < core->num_queues; qi++) {
        DmnicFaultQueue *fq = &f->q[qi];

        if (fq->tx_due && fq->tx_due <= now) {
            fq->tx_due = 0;
            /* until the TX bottom half runs out of work */
            fq->tx_release = true;
            trace_devmem_nic_fault_release(qi, 1, 0);
            devmem_nic_core_tx_kick(core, qi);
        }
    }
    guard->engaged_in_io = true;
    while ((h = dmnic_fault_next_due(f, now))) {
        g_queue_remove(&f->held, h);
        trace_devmem_nic_fault_release(h->qi, 0, h->size);
        devmem_nic_core_rx_release(core, h->qi, h->data, h->size, &h->st);
        dmnic_fault_held_free(h);
    }
    guard->engaged_in_io = engaged;
    dmnic_fault_delay_arm(core);
}

static void dmnic_fault_delay_cb(void *opaque)
{
    dmnic_fault_delay_run(opaque);
}

/*
 * The release a knob asks for: a guarded bottom half, so that a QOM
 * setter (the host, at any time) never places frames into guest memory
 * while the VM is stopped; dmnic_fault_vm_running() schedules it again.
 */
static void dmnic_fault_release_bh(void *opaque)
{
    DevmemNicCore *core = opaque;

    if (!runstate_is_running()) {
        core->fault.release_pending = true;
        return;
    }
    core->fault.release_pending = false;
    dmnic_fault_delay_run(core);
}

void devmem_nic_fault_vm_running(DevmemNicCore *core)
{
    if (core->fault.realized && core->fault.release_pending) {
        qemu_bh_schedule(core->fault.release_bh);
    }
}

/* delay switched off: everything held for @qi goes (once the VM runs) */
static void dmnic_fault_delay_flush(DevmemNicCore *core, unsigned qi)
{
    DmnicFault *f = &core->fault;
    GList *l;

    if (f->q[qi].tx_due) {
        f->q[qi].tx_due = 1;
    }
    f->q[qi].rx_last_due = 0;
    for (l = f->held.head; l; l = l->next) {
        DmnicFaultHeld *h = l->data;

        if (h->qi == qi) {
            h->due = 0;
        }
    }
    qemu_bh_schedule(f->release_bh);
}

uint32_t devmem_nic_fault_held(DevmemNicCore *core, unsigned qi)
{
    GList *l;
    uint32_t n = 0;

    if (!core->fault.realized) {
        return 0;
    }
    for (l = core->fault.held.head; l; l = l->next) {
        n += ((DmnicFaultHeld *)l->data)->qi == qi;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Link flaps                                                          */
/* ------------------------------------------------------------------ */

static void dmnic_fault_flap_step(DevmemNicCore *core)
{
    DmnicFault *f = &core->fault;

    f->flap_down = !f->flap_down;
    f->flap_left--;
    if (f->flap_down) {
        f->injected++;
    }
    trace_devmem_nic_fault_link(!f->flap_down, f->flap_left);
    devmem_nic_core_link_changed(core);
}

static void dmnic_fault_flap_cb(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicFault *f = &core->fault;

    if (!f->flap_left) {
        return;
    }
    dmnic_fault_flap_step(core);
    if (f->flap_left) {
        timer_mod(f->flap_timer, dmnic_fault_now() + f->flap_ns);
    }
}

/* ------------------------------------------------------------------ */
/* Hooks                                                               */
/* ------------------------------------------------------------------ */

bool devmem_nic_fault_dma(DevmemNicCore *core, unsigned qi, bool write)
{
    DmnicFault *f = &core->fault;
    uint32_t *n;

    if (qi >= DMNIC_MAX_QUEUES) {
        return false;
    }
    n = write ? &f->q[qi].dma_write : &f->q[qi].dma_read;
    if (!*n) {
        return false;
    }
    (*n)--;
    f->injected++;
    trace_devmem_nic_fault_dma(qi, write, *n);
    return true;
}

uint8_t devmem_nic_fault_enable(DevmemNicCore *core, unsigned qi, bool tx)
{
    DmnicFault *f = &core->fault;
    DmnicFaultQueue *fq = &f->q[qi];

    if (!fq->restart_fail) {
        return 0;
    }
    fq->restart_fail--;
    f->injected++;
    trace_devmem_nic_fault_enable(qi, tx, fq->restart_code,
                                  fq->restart_fail);
    return fq->restart_code;
}

bool devmem_nic_fault_cpl(DevmemNicCore *core, unsigned qi, bool tx,
                          uint8_t *c, unsigned size)
{
    DmnicFault *f = &core->fault;
    DmnicFaultQueue *fq = &f->q[qi];
    uint32_t flags;

    if (!fq->drop_cpl && !fq->corrupt_cpl) {
        return false;
    }
    flags = ldl_le_p(c + size - 4);
    if (fq->drop_cpl) {
        /* one packet: all its completions */
        if (tx || (flags & DMNIC_RXC_F_EOP)) {
            fq->drop_cpl--;
            f->injected++;
        }
        trace_devmem_nic_fault_cpl(qi, tx, "drop", fq->drop_cpl);
        return true;
    }
    fq->corrupt_cpl--;
    f->injected++;
    switch (fq->corrupt_field) {
    case DMNIC_FAULT_CORRUPT_ID:
        if (tx) {
            stw_le_p(c + DMNIC_TXC_ID, lduw_le_p(c + DMNIC_TXC_ID) ^ 0x8000);
        } else {
            stw_le_p(c + DMNIC_RXC_HDR_ID,
                     lduw_le_p(c + DMNIC_RXC_HDR_ID) ^ 0x8000);
            stw_le_p(c + DMNIC_RXC_PAY_ID,
                     lduw_le_p(c + DMNIC_RXC_PAY_ID) ^ 0x8000);
        }
        break;
    case DMNIC_FAULT_CORRUPT_LEN:
        if (tx) {
            stl_le_p(c + DMNIC_TXC_LEN,
                     ldl_le_p(c + DMNIC_TXC_LEN) | 0xffff0000);
        } else {
            stl_le_p(c + DMNIC_RXC_PKT_LEN,
                     ldl_le_p(c + DMNIC_RXC_PKT_LEN) | 0xffff0000);
            stl_le_p(c + DMNIC_RXC_PAY_LEN,
                     ldl_le_p(c + DMNIC_RXC_PAY_LEN) | 0xffff0000);
        }
        break;
    default:
        if (tx) {
            stl_le_p(c + DMNIC_TXC_STATUS, 0xff);
        } else {
            stl_le_p(c + size - 4,
                     flags ^ (DMNIC_RXC_F_SOP | DMNIC_RXC_F_EOP));
        }
        break;
    }
    trace_devmem_nic_fault_cpl(qi, tx, "corrupt", fq->corrupt_cpl);
    return false;
}

DmnicFaultVerdict devmem_nic_fault_rx(DevmemNicCore *core, unsigned qi,
                                      const uint8_t *buf, size_t size,
                                      const DmnicRxSteer *st)
{
    DmnicFault *f = &core->fault;
    DmnicFaultQueue *fq = &f->q[qi];
    DmnicFaultHeld *h;

    bool stalled = fq->stall == DMNIC_FAULT_STALL_ALL;

    if (!stalled && !fq->delay_ns) {
        return DMNIC_FAULT_PASS;
    }
    if (stalled || g_queue_get_length(&f->held) >= DMNIC_FAULT_HELD_MAX) {
        /* what a hung or overrun queue does: the frame is lost */
        f->injected++;
        trace_devmem_nic_fault_rx(qi, size, stalled ? "stalled" :
                                  "delay backlog full, dropped");
        return DMNIC_FAULT_DROP;
    }
    h = g_new0(DmnicFaultHeld, 1);
    h->qi = qi;
    h->due = MAX(dmnic_fault_now() + fq->delay_ns, fq->rx_last_due);
    fq->rx_last_due = h->due;
    h->size = size;
    h->data = g_memdup2(buf, size);
    h->st = *st;
    g_queue_push_tail(&f->held, h);
    f->injected++;
    trace_devmem_nic_fault_rx(qi, size, "delayed");
    dmnic_fault_delay_arm(core);
    return DMNIC_FAULT_HELD;
}

bool devmem_nic_fault_tx_hold(DevmemNicCore *core, unsigned qi)
{
    DmnicFault *f = &core->fault;
    DmnicFaultQueue *fq = &f->q[qi];

    if (fq->stall) {
        return true;
    }
    if (!fq->delay_ns || fq->tx_release) {
        return false;
    }
    if (!fq->tx_due) {
        fq->tx_due = dmnic_fault_now() + fq->delay_ns;
        f->injected++;
        trace_devmem_nic_fault_tx_delay(qi, fq->delay_ns);
        dmnic_fault_delay_arm(core);
    }
    return true;
}

void devmem_nic_fault_tx_idle(DevmemNicCore *core, unsigned qi)
{
    core->fault.q[qi].tx_release = false;
}

bool devmem_nic_fault_link_down(DevmemNicCore *core)
{
    return core->fault.link_down || core->fault.flap_down;
}

void devmem_nic_fault_reset(DevmemNicCore *core)
{
    DmnicFault *f = &core->fault;
    DmnicFaultHeld *h;
    unsigned qi;

    if (!f->realized) {
        return;
    }
    while ((h = g_queue_pop_head(&f->held))) {
        dmnic_fault_held_free(h);
    }
    for (qi = 0; qi < DMNIC_MAX_QUEUES; qi++) {
        f->q[qi].tx_due = 0;
        f->q[qi].tx_release = false;
        f->q[qi].rx_last_due = 0;
    }
    timer_del(f->delay_timer);
}

/* ------------------------------------------------------------------ */
/* QOM properties                                                      */
/* ------------------------------------------------------------------ */

/* Per-queue knobs, all "Q:N[:EXTRA]" strings */
typedef enum {
    DMNIC_KNOB_DMA_READ,
    DMNIC_KNOB_DMA_WRITE,
    DMNIC_KNOB_DROP_CPL,
    DMNIC_KNOB_CORRUPT_CPL,
    DMNIC_KNOB_RESTART_FAIL,
    DMNIC_KNOB_STALL,
    DMNIC_KNOB_DELAY_CPL,
    DMNIC_KNOB_NUM,
} DmnicKnob;

static const struct {
    const char *name;
    const char *desc;
} dmnic_knobs[DMNIC_KNOB_NUM] = {
    [DMNIC_KNOB_DMA_READ] = { "x-fault-dma-read",
        "Q:N - fail the next N DMA reads of queue pair Q" },
    [DMNIC_KNOB_DMA_WRITE] = { "x-fault-dma-write",
        "Q:N - fail the next N DMA writes of queue pair Q" },
    [DMNIC_KNOB_DROP_CPL] = { "x-fault-drop-cpl",
        "Q:N - lose the completions of the next N packets of queue pair Q" },
    [DMNIC_KNOB_CORRUPT_CPL] = { "x-fault-corrupt-cpl",
        "Q:N[:id|len|flags] - corrupt the next N completions of Q" },
    [DMNIC_KNOB_RESTART_FAIL] = { "x-fault-restart-fail",
        "Q:N[:CODE] - the next N RX/TX enables of Q fail (QERR CODE)" },
    [DMNIC_KNOB_STALL] = { "x-fault-stall",
        "Q:1 stalls the data path of queue pair Q, Q:2 its TX only, "
        "Q:0 resumes it" },
    [DMNIC_KNOB_DELAY_CPL] = { "x-fault-delay-cpl",
        "Q:NS - delay RX placement and TX processing of Q by NS ns" },
};

static const char *const dmnic_fields[] = { "id", "len", "flags" };

static DmnicKnob dmnic_knob(const char *name)
{
    int i;

    for (i = 0; i < DMNIC_KNOB_NUM; i++) {
        if (!strcmp(name, dmnic_knobs[i].name)) {
            return i;
        }
    }
    g_assert_not_reached();
}

/*
 * The knobs are class properties, so they can also be given with -device
 * (before realize, when the queue count is not known yet: any queue below
 * DMNIC_MAX_QUEUES is accepted then; knobs of queues the device does not
 * have are dropped at realize).
 */
static unsigned dmnic_fault_nq(DevmemNicCore *core)
{
    return core->fault.realized ? core->num_queues : DMNIC_MAX_QUEUES;
}

static void dmnic_fault_get_knob(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);
    DmnicKnob k = dmnic_knob(name);
    g_autoptr(GString) out = g_string_new("");
    g_autofree char *str = NULL;
    unsigned qi;

    for (qi = 0; qi < dmnic_fault_nq(core); qi++) {
        DmnicFaultQueue *fq = &core->fault.q[qi];
        uint64_t n = 0;
        g_autofree char *extra = NULL;

        switch (k) {
        case DMNIC_KNOB_DMA_READ:
            n = fq->dma_read;
            break;
        case DMNIC_KNOB_DMA_WRITE:
            n = fq->dma_write;
            break;
        case DMNIC_KNOB_DROP_CPL:
            n = fq->drop_cpl;
            break;
        case DMNIC_KNOB_CORRUPT_CPL:
            n = fq->corrupt_cpl;
            extra = g_strdup(dmnic_fields[fq->corrupt_field]);
            break;
        case DMNIC_KNOB_RESTART_FAIL:
            n = fq->restart_fail;
            extra = g_strdup_printf("%u", fq->restart_code);
            break;
        case DMNIC_KNOB_STALL:
            n = fq->stall;
            break;
        default:
            n = fq->delay_ns;
            break;
        }
        if (!n) {
            continue;
        }
        g_string_append_printf(out, "%s%u:%" PRIu64 "%s%s",
                               out->len ? "," : "", qi, n,
                               extra ? ":" : "", extra ? extra : "");
    }
    str = g_string_free(g_steal_pointer(&out), false);
    visit_type_str(v, name, &str, errp);
}

static void dmnic_fault_set_knob(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);
    DmnicFault *f = &core->fault;
    DmnicKnob k = dmnic_knob(name);
    g_autofree char *str = NULL;
    const char *p, *extra = NULL;
    DmnicFaultQueue *fq;
    uint64_t qi, n, code = DMNIC_QERR_DMA;
    int field = DMNIC_FAULT_CORRUPT_ID;

    if (!visit_type_str(v, name, &str, errp)) {
        return;
    }
    if (qemu_strtou64(str, &p, 0, &qi) || *p != ':' ||
        qemu_strtou64(p + 1, &p, 0, &n) || (*p && *p != ':')) {
        error_setg(errp, "%s: expected Q:N[:EXTRA], not '%s'", name, str);
        return;
    }
    if (*p) {
        extra = p + 1;
    }
    if (qi >= dmnic_fault_nq(core)) {
        error_setg(errp, "%s: queue %" PRIu64 " >= %u", name, qi,
                   dmnic_fault_nq(core));
        return;
    }
    if (k != DMNIC_KNOB_DELAY_CPL && n > UINT32_MAX) {
        error_setg(errp, "%s: count %" PRIu64 " too large", name, n);
        return;
    }
    if (k == DMNIC_KNOB_STALL && n > DMNIC_FAULT_STALL_TX) {
        error_setg(errp, "%s: 0 (resume), 1 (stall) or 2 (TX only), not %"
                   PRIu64, name, n);
        return;
    }
    if (k == DMNIC_KNOB_DELAY_CPL && n > INT64_MAX / 2) {
        error_setg(errp, "%s: delay %" PRIu64 " too large", name, n);
        return;
    }
    if (extra && k == DMNIC_KNOB_CORRUPT_CPL) {
        for (field = 0; field < ARRAY_SIZE(dmnic_fields); field++) {
            if (!strcmp(extra, dmnic_fields[field])) {
                break;
            }
        }
        if (field == ARRAY_SIZE(dmnic_fields)) {
            error_setg(errp, "%s: field must be id, len or flags, not '%s'",
                       name, extra);
            return;
        }
    } else if (extra && k == DMNIC_KNOB_RESTART_FAIL) {
        if (qemu_strtou64(extra, NULL, 0, &code) || !code || code > 255) {
            error_setg(errp, "%s: error code must be 1..255, not '%s'",
                       name, extra);
            return;
        }
    } else if (extra) {
        error_setg(errp, "%s: unexpected ':%s'", name, extra);
        return;
    }

    trace_devmem_nic_fault_set(name, str);
    fq = &f->q[qi];
    switch (k) {
    case DMNIC_KNOB_DMA_READ:
        fq->dma_read = n;
        break;
    case DMNIC_KNOB_DMA_WRITE:
        fq->dma_write = n;
        break;
    case DMNIC_KNOB_DROP_CPL:
        fq->drop_cpl = n;
        break;
    case DMNIC_KNOB_CORRUPT_CPL:
        fq->corrupt_cpl = n;
        fq->corrupt_field = field;
        break;
    case DMNIC_KNOB_RESTART_FAIL:
        fq->restart_fail = n;
        fq->restart_code = code;
        break;
    case DMNIC_KNOB_STALL:
        fq->stall = n;
        if (!n && f->realized) {
            /* resume: TX picks up what was posted meanwhile */
            devmem_nic_core_tx_kick(core, qi);
        }
        break;
    default:
        fq->delay_ns = n;
        if (!n && f->realized) {
            dmnic_fault_delay_flush(core, qi);
        }
        break;
    }
}

static void dmnic_fault_get_link_down(Object *obj, Visitor *v,
                                      const char *name, void *opaque,
                                      Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);

    visit_type_bool(v, name, &core->fault.link_down, errp);
}

static void dmnic_fault_set_link_down(Object *obj, Visitor *v,
                                      const char *name, void *opaque,
                                      Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);
    DmnicFault *f = &core->fault;
    bool down;

    if (!visit_type_bool(v, name, &down, errp)) {
        return;
    }
    trace_devmem_nic_fault_set(name, down ? "on" : "off");
    if (down == f->link_down) {
        return;
    }
    f->link_down = down;
    if (down) {
        f->injected++;
    }
    trace_devmem_nic_fault_link(!down, 0);
    if (f->realized) {
        devmem_nic_core_link_changed(core);
    }
}

static void dmnic_fault_get_flap(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);
    DmnicFault *f = &core->fault;
    g_autofree char *str = g_strdup_printf("%u:%" PRId64,
                                           (f->flap_left + 1) / 2,
                                           f->flap_ns);

    visit_type_str(v, name, &str, errp);
}

/* "N[:NS]": N down/up cycles, NS ns in each state (0: all at once) */
static void dmnic_fault_set_flap(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);
    DmnicFault *f = &core->fault;
    g_autofree char *str = NULL;
    uint64_t n, ns = DMNIC_FAULT_FLAP_NS_DEFAULT;
    const char *p;

    if (!visit_type_str(v, name, &str, errp)) {
        return;
    }
    if (qemu_strtou64(str, &p, 0, &n) ||
        (*p && (*p != ':' || qemu_strtou64(p + 1, NULL, 0, &ns)))) {
        error_setg(errp, "%s: expected N[:NS], not '%s'", name, str);
        return;
    }
    if (n > 1000000 || ns > INT64_MAX / 4) {
        error_setg(errp, "%s: at most 1000000 flaps and a sane period",
                   name);
        return;
    }
    if (!f->realized) {
        error_setg(errp, "%s: device not realized", name);
        return;
    }
    trace_devmem_nic_fault_set(name, str);
    timer_del(f->flap_timer);
    f->flap_ns = ns;
    /* a link the flapper holds down comes up first */
    f->flap_left = 2 * n + (f->flap_down ? 1 : 0);
    if (!f->flap_left) {
        return;
    }
    if (!ns) {
        while (f->flap_left) {
            dmnic_fault_flap_step(core);
        }
        return;
    }
    dmnic_fault_flap_step(core);
    if (f->flap_left) {
        timer_mod(f->flap_timer, dmnic_fault_now() + ns);
    }
}

static void dmnic_fault_get_injected(Object *obj, Visitor *v,
                                     const char *name, void *opaque,
                                     Error **errp)
{
    DevmemNicCore *core = devmem_nic_core_of(obj);

    visit_type_uint64(v, name, &core->fault.injected, errp);
}

void devmem_nic_fault_class_init(ObjectClass *klass)
{
    int i;

    for (i = 0; i < DMNIC_KNOB_NUM; i++) {
        object_class_property_add(klass, dmnic_knobs[i].name, "str",
                                  dmnic_fault_get_knob, dmnic_fault_set_knob,
                                  NULL, NULL);
        object_class_property_set_description(klass, dmnic_knobs[i].name,
                                              dmnic_knobs[i].desc);
    }
    object_class_property_add(klass, "x-fault-link-down", "bool",
                              dmnic_fault_get_link_down,
                              dmnic_fault_set_link_down, NULL, NULL);
    object_class_property_set_description(klass, "x-fault-link-down",
                                          "Hold the link down");
    object_class_property_add(klass, "x-fault-link-flap", "str",
                              dmnic_fault_get_flap, dmnic_fault_set_flap,
                              NULL, NULL);
    object_class_property_set_description(klass, "x-fault-link-flap",
                                          "N[:NS] - N link down/up cycles, "
                                          "NS ns in each state (default "
                                          "1 ms); after realize only");
    object_class_property_add(klass, "x-fault-injected", "uint64",
                              dmnic_fault_get_injected, NULL, NULL, NULL);
    object_class_property_set_description(klass, "x-fault-injected",
                                          "Number of faults injected so far");
}

void devmem_nic_fault_realize(DevmemNicCore *core)
{
    DmnicFault *f = &core->fault;
    unsigned qi;

    /* knobs given with -device stay; those of missing queues go */
    for (qi = core->num_queues; qi < DMNIC_MAX_QUEUES; qi++) {
        memset(&f->q[qi], 0, sizeof(f->q[qi]));
    }
    g_queue_init(&f->held);
    f->delay_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, dmnic_fault_delay_cb,
                                  core);
    f->flap_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, dmnic_fault_flap_cb,
                                 core);
    f->release_bh = qemu_bh_new_guarded(dmnic_fault_release_bh, core,
                                        &DEVICE(core->owner)->
                                        mem_reentrancy_guard);
    f->release_pending = false;
    f->flap_ns = DMNIC_FAULT_FLAP_NS_DEFAULT;
    f->flap_left = 0;
    f->flap_down = false;
    f->realized = true;
}

void devmem_nic_fault_unrealize(DevmemNicCore *core)
{
    DmnicFault *f = &core->fault;

    devmem_nic_fault_reset(core);
    f->realized = false;
    timer_free(f->delay_timer);
    f->delay_timer = NULL;
    timer_free(f->flap_timer);
    f->flap_timer = NULL;
    qemu_bh_delete(f->release_bh);
    f->release_bh = NULL;
}
