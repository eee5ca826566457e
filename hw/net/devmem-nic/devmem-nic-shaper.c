/*
 * devmem-nic transmit shaping (docs/specs/devmem-nic.rst, "Transmit
 * shaping"): token-bucket rate limiters per TX queue, per group and for
 * the device, on QEMU's virtual clock.  No QOM.
 *
 * A bucket's level is kept in bits * 10^9 so that a rate in bits/s times
 * nanoseconds adds up without rounding; a frame of n bytes takes
 * n * 8 * 10^9.  A queue starts a packet only while no bucket of its
 * chain is negative, and the packet may leave them negative (deficit):
 * no packet size needs to be known in advance and a bucket smaller than
 * a packet cannot block a queue for ever.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "migration/vmstate.h"
#include "devmem-nic-core.h"
#include "trace.h"

#define DMNIC_SH_UNIT       NANOSECONDS_PER_SECOND  /* level per bit */

static int64_t dmnic_bucket_cap(const DmnicBucket *b)
{
    return (int64_t)b->burst * 8 * DMNIC_SH_UNIT;
}

/* Bring @b's level to @now at its rate */
static void dmnic_bucket_refill(DmnicBucket *b, int64_t now)
{
    int64_t cap = dmnic_bucket_cap(b);
    int64_t dt = now - b->stamp;

    b->stamp = now;
    if (dt <= 0 || b->level >= cap) {
        b->level = MIN(b->level, cap);
        return;
    }
    /* level >= -(a packet), so cap - level fits; rate <= RATE_MAX */
    if ((uint64_t)dt > (uint64_t)(cap - b->level) / b->rate) {
        b->level = cap;
    } else {
        b->level += (int64_t)b->rate * dt;
    }
}

/* ns until @b (refilled to now) is back at 0 */
static int64_t dmnic_bucket_wait(const DmnicBucket *b)
{
    return b->level >= 0 ? 0 : DIV_ROUND_UP(-b->level, b->rate);
}

static void dmnic_shaper_update_active(DmnicShaper *sh, unsigned nq)
{
    unsigned i;

    sh->active = sh->net.rate != 0;
    for (i = 0; i < DMNIC_SHAPER_NUM_GROUPS; i++) {
        sh->active |= sh->grp[i].rate != 0;
    }
    for (i = 0; i < nq; i++) {
        sh->active |= sh->q[i].rate != 0;
    }
}

/*
 * The limiters queue @qi goes through, its own first, the device's last;
 * returns how many were stored in @chain (unlimited ones included).
 */
static unsigned dmnic_shaper_chain(DmnicShaper *sh, unsigned qi,
                                   DmnicBucket **chain)
{
    unsigned n = 0, seen = 0;
    uint32_t g = sh->q_group[qi];

    chain[n++] = &sh->q[qi];
    /* a GROUP/PARENT is 0..NUM_GROUPS; each group is taken once */
    while (g && !(seen & (1u << g))) {
        seen |= 1u << g;
        chain[n++] = &sh->grp[g - 1];
        g = sh->grp_parent[g - 1];
    }
    chain[n++] = &sh->net;
    return n;
}

#define DMNIC_SH_CHAIN_MAX  (DMNIC_SHAPER_NUM_GROUPS + 2)

bool devmem_nic_shaper_hold(DevmemNicCore *core, unsigned qi)
{
    DmnicShaper *sh = &core->shaper;
    DmnicBucket *chain[DMNIC_SH_CHAIN_MAX];
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t wait = 0;
    unsigned i, n = dmnic_shaper_chain(sh, qi, chain);

    for (i = 0; i < n; i++) {
        if (chain[i]->rate) {
            dmnic_bucket_refill(chain[i], now);
            wait = MAX(wait, dmnic_bucket_wait(chain[i]));
        }
    }
    if (!wait) {
        return false;
    }
    if (!sh->held[qi]) {
        sh->held[qi] = true;
        sh->q_held[qi]++;
    }
    trace_devmem_nic_shaper_hold(qi, wait);
    timer_mod_anticipate_ns(sh->timer, now + wait);
    return true;
}

bool devmem_nic_shaper_charge(DevmemNicCore *core, unsigned qi,
                              uint64_t wire)
{
    DmnicShaper *sh = &core->shaper;
    DmnicBucket *chain[DMNIC_SH_CHAIN_MAX];
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned i, n = dmnic_shaper_chain(sh, qi, chain);
    bool shared = false;

    sh->held[qi] = false;
    for (i = 0; i < n; i++) {
        if (chain[i]->rate) {
            dmnic_bucket_refill(chain[i], now);
            chain[i]->level -= (int64_t)wire * 8 * DMNIC_SH_UNIT;
            shared |= i > 0;
        }
    }
    /*
     * Under a shared limiter the queues take turns: MAX(WEIGHT, 1)
     * packets each (weighted round robin over the TX bottom half's runs,
     * which start at rr_next: also when the limiter earns one packet at
     * a time, every queue gets its turn)
     */
    if (!shared) {
        return false;
    }
    if (++sh->turn[qi] < MAX(sh->q_weight[qi], 1)) {
        sh->rr_next = qi;
        return false;
    }
    sh->turn[qi] = 0;
    sh->rr_next = (qi + 1) % core->num_queues;
    return true;
}

unsigned devmem_nic_shaper_first(DevmemNicCore *core)
{
    return core->shaper.active ? core->shaper.rr_next : 0;
}

/*
 * A bucket has refilled or a limiter changed: look at every held queue
 * again (it stays held, and is not counted again, until it sends)
 */
static void dmnic_shaper_release(DevmemNicCore *core)
{
    DmnicShaper *sh = &core->shaper;
    unsigned qi;

    for (qi = 0; qi < core->num_queues; qi++) {
        if (sh->held[qi]) {
            devmem_nic_core_tx_kick(core, qi);
        }
    }
}

static void dmnic_shaper_timer(void *opaque)
{
    dmnic_shaper_release(opaque);
}

static void dmnic_bucket_set_rate(DevmemNicCore *core, DmnicBucket *b,
                                  uint64_t rate, const char *what,
                                  unsigned idx)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (rate > DMNIC_SHAPER_RATE_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: %s %u shaper rate %"
                      PRIu64 " bits/s above the maximum, using %llu\n",
                      what, idx, rate, DMNIC_SHAPER_RATE_MAX);
        rate = DMNIC_SHAPER_RATE_MAX;
    }
    if (b->rate) {
        dmnic_bucket_refill(b, now);    /* earned at the old rate */
    } else {
        b->level = dmnic_bucket_cap(b); /* starts full */
        b->stamp = now;
    }
    b->rate = rate;
    trace_devmem_nic_shaper_rate(what, idx, rate);
    dmnic_shaper_update_active(&core->shaper, core->num_queues);
    /* a lower rate holds at the next packet, a higher one may release */
    dmnic_shaper_release(core);
}

static void dmnic_bucket_set_burst(DmnicBucket *b, uint32_t burst,
                                   const char *what, unsigned idx)
{
    if (burst > DMNIC_SHAPER_BURST_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: %s %u shaper burst %u "
                      "above the maximum, using %u\n", what, idx, burst,
                      DMNIC_SHAPER_BURST_MAX);
        burst = DMNIC_SHAPER_BURST_MAX;
    }
    if (b->rate) {
        dmnic_bucket_refill(b, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
    b->burst = burst;
    b->level = MIN(b->level, dmnic_bucket_cap(b));
}

/* A GROUP or PARENT value: 0..NUM_GROUPS, others stored as 0 */
static uint32_t dmnic_shaper_group_val(uint32_t val, const char *what,
                                       unsigned idx)
{
    if (val > DMNIC_SHAPER_NUM_GROUPS) {
        qemu_log_mask(LOG_GUEST_ERROR, "devmem-nic: %s %u shaper group %u "
                      "out of range, using 0\n", what, idx, val);
        return 0;
    }
    return val;
}

/* The registers of one limiter, offsets DMNIC_SHQ_RATE_LO..BURST */
static bool dmnic_bucket_read(const DmnicBucket *b, hwaddr off,
                              uint32_t *val)
{
    switch (off) {
    case DMNIC_SHQ_RATE_LO:
        *val = b->rate;
        return true;
    case DMNIC_SHQ_RATE_HI:
        *val = b->rate >> 32;
        return true;
    case DMNIC_SHQ_BURST:
        *val = b->burst;
        return true;
    }
    return false;
}

static bool dmnic_bucket_write(DevmemNicCore *core, DmnicBucket *b,
                               hwaddr off, uint32_t val, const char *what,
                               unsigned idx)
{
    switch (off) {
    case DMNIC_SHQ_RATE_LO:
        b->rate_lo = val;
        return true;
    case DMNIC_SHQ_RATE_HI:
        dmnic_bucket_set_rate(core, b, (uint64_t)val << 32 | b->rate_lo,
                              what, idx);
        return true;
    case DMNIC_SHQ_BURST:
        dmnic_bucket_set_burst(b, val, what, idx);
        return true;
    }
    return false;
}

QEMU_BUILD_BUG_ON(DMNIC_SHG_RATE_LO != DMNIC_SHQ_RATE_LO ||
                  DMNIC_SHG_RATE_HI != DMNIC_SHQ_RATE_HI ||
                  DMNIC_SHG_BURST != DMNIC_SHQ_BURST ||
                  DMNIC_REG_SHAPER_NET_RATE_HI - DMNIC_REG_SHAPER_NET_RATE_LO
                  != DMNIC_SHQ_RATE_HI ||
                  DMNIC_REG_SHAPER_NET_BURST - DMNIC_REG_SHAPER_NET_RATE_LO
                  != DMNIC_SHQ_BURST);
QEMU_BUILD_BUG_ON(DMNIC_MAX_QUEUES > 128);

/* Which limiter a shaper register belongs to */
typedef enum DmnicShBlock {
    DMNIC_SH_NONE,
    DMNIC_SH_QUEUE,         /* SHAPER_Q(idx) */
    DMNIC_SH_GROUP,         /* SHAPER_GRP(idx) */
    DMNIC_SH_NET,           /* SHAPER_NET_* */
} DmnicShBlock;

/*
 * The register at @addr: its block, the index of its limiter and the
 * offset in the block (for the device limiter as in a queue block, the
 * layouts agree: see the build check above); DMNIC_SH_NONE if it is no
 * limiter register of the device's queues and groups
 */
static DmnicShBlock dmnic_shaper_decode(DevmemNicCore *core, hwaddr addr,
                                        unsigned *idx, hwaddr *off)
{
    hwaddr qend = DMNIC_SHAPER_Q(0) +
                  (hwaddr)core->num_queues * DMNIC_SHAPER_Q_STRIDE;
    hwaddr gend = DMNIC_SHAPER_GRP(0) +
                  (hwaddr)DMNIC_SHAPER_NUM_GROUPS * DMNIC_SHAPER_GRP_STRIDE;

    *idx = 0;
    if (addr >= DMNIC_SHAPER_Q(0) && addr < qend) {
        *idx = (addr - DMNIC_SHAPER_Q(0)) / DMNIC_SHAPER_Q_STRIDE;
        *off = (addr - DMNIC_SHAPER_Q(0)) % DMNIC_SHAPER_Q_STRIDE;
        return DMNIC_SH_QUEUE;
    }
    if (addr >= DMNIC_SHAPER_GRP(0) && addr < gend) {
        *idx = (addr - DMNIC_SHAPER_GRP(0)) / DMNIC_SHAPER_GRP_STRIDE;
        *off = (addr - DMNIC_SHAPER_GRP(0)) % DMNIC_SHAPER_GRP_STRIDE;
        return DMNIC_SH_GROUP;
    }
    if (addr >= DMNIC_REG_SHAPER_NET_RATE_LO &&
        addr <= DMNIC_REG_SHAPER_NET_BURST) {
        *off = addr - DMNIC_REG_SHAPER_NET_RATE_LO;
        return DMNIC_SH_NET;
    }
    return DMNIC_SH_NONE;
}

bool devmem_nic_shaper_read(DevmemNicCore *core, hwaddr addr, uint32_t *val)
{
    DmnicShaper *sh = &core->shaper;
    unsigned i;
    hwaddr off;

    switch (dmnic_shaper_decode(core, addr, &i, &off)) {
    case DMNIC_SH_QUEUE:
        switch (off) {
        case DMNIC_SHQ_GROUP:
            *val = sh->q_group[i];
            return true;
        case DMNIC_SHQ_WEIGHT:
            *val = sh->q_weight[i];
            return true;
        case DMNIC_SHQ_HELD:
            *val = sh->q_held[i];
            return true;
        case DMNIC_SHQ_HELD + 4:
            *val = sh->q_held[i] >> 32;
            return true;
        }
        return dmnic_bucket_read(&sh->q[i], off, val);
    case DMNIC_SH_GROUP:
        if (off == DMNIC_SHG_PARENT) {
            *val = sh->grp_parent[i];
            return true;
        }
        return dmnic_bucket_read(&sh->grp[i], off, val);
    case DMNIC_SH_NET:
        return dmnic_bucket_read(&sh->net, off, val);
    case DMNIC_SH_NONE:
        break;
    }
    if (addr == DMNIC_REG_SHAPER_NUM_GROUPS) {
        *val = DMNIC_SHAPER_NUM_GROUPS;
        return true;
    }
    return false;
}

bool devmem_nic_shaper_write(DevmemNicCore *core, hwaddr addr, uint32_t val)
{
    DmnicShaper *sh = &core->shaper;
    unsigned i;
    hwaddr off;

    switch (dmnic_shaper_decode(core, addr, &i, &off)) {
    case DMNIC_SH_QUEUE:
        switch (off) {
        case DMNIC_SHQ_GROUP:
            sh->q_group[i] = dmnic_shaper_group_val(val, "queue", i);
            dmnic_shaper_release(core);
            return true;
        case DMNIC_SHQ_WEIGHT:
            sh->q_weight[i] = val;
            sh->turn[i] = 0;
            return true;
        }
        return dmnic_bucket_write(core, &sh->q[i], off, val, "queue", i);
    case DMNIC_SH_GROUP:
        if (off == DMNIC_SHG_PARENT) {
            sh->grp_parent[i] = dmnic_shaper_group_val(val, "group", i);
            dmnic_shaper_release(core);
            return true;
        }
        return dmnic_bucket_write(core, &sh->grp[i], off, val, "group", i);
    case DMNIC_SH_NET:
        return dmnic_bucket_write(core, &sh->net, off, val, "device", 0);
    case DMNIC_SH_NONE:
        break;
    }
    return false;
}

static void dmnic_bucket_reset(DmnicBucket *b)
{
    b->rate = 0;
    b->rate_lo = 0;
    b->burst = DMNIC_SHAPER_BURST_RESET;
    b->level = 0;
    b->stamp = 0;
}

void devmem_nic_shaper_reset(DevmemNicCore *core)
{
    DmnicShaper *sh = &core->shaper;
    unsigned i;

    if (sh->timer) {
        timer_del(sh->timer);
    }
    sh->active = false;
    sh->rr_next = 0;
    dmnic_bucket_reset(&sh->net);
    for (i = 0; i < DMNIC_SHAPER_NUM_GROUPS; i++) {
        dmnic_bucket_reset(&sh->grp[i]);
        sh->grp_parent[i] = 0;
    }
    for (i = 0; i < DMNIC_MAX_QUEUES; i++) {
        dmnic_bucket_reset(&sh->q[i]);
        sh->q_group[i] = 0;
        sh->q_weight[i] = 0;
        sh->q_held[i] = 0;
        sh->held[i] = false;
        sh->turn[i] = 0;
    }
}

void devmem_nic_shaper_realize(DevmemNicCore *core)
{
    core->shaper.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, dmnic_shaper_timer,
                                      core);
    devmem_nic_shaper_reset(core);
}

void devmem_nic_shaper_unrealize(DevmemNicCore *core)
{
    if (core->shaper.timer) {
        timer_free(core->shaper.timer);
        core->shaper.timer = NULL;
    }
}

static bool dmnic_bucket_default(const DmnicBucket *b)
{
    return !b->rate && !b->rate_lo && b->burst == DMNIC_SHAPER_BURST_RESET;
}

static bool dmnic_shaper_needed(void *opaque)
{
    DevmemNicCore *core = opaque;
    DmnicShaper *sh = &core->shaper;
    unsigned i;

    if (!dmnic_bucket_default(&sh->net)) {
        return true;
    }
    for (i = 0; i < DMNIC_SHAPER_NUM_GROUPS; i++) {
        if (!dmnic_bucket_default(&sh->grp[i]) || sh->grp_parent[i]) {
            return true;
        }
    }
    for (i = 0; i < DMNIC_MAX_QUEUES; i++) {
        if (!dmnic_bucket_default(&sh->q[i]) || sh->q_group[i] ||
            sh->q_weight[i] || sh->q_held[i]) {
            return true;
        }
    }
    return false;
}

static void dmnic_bucket_load(DmnicBucket *b, int64_t now)
{
    b->rate = MIN(b->rate, DMNIC_SHAPER_RATE_MAX);
    b->burst = MIN(b->burst, DMNIC_SHAPER_BURST_MAX);
    b->level = dmnic_bucket_cap(b);     /* buckets start full */
    b->stamp = now;
}

static int dmnic_shaper_post_load(void *opaque, int version_id)
{
    DevmemNicCore *core = opaque;
    DmnicShaper *sh = &core->shaper;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned i;

    /* only values a register write could have produced */
    dmnic_bucket_load(&sh->net, now);
    for (i = 0; i < DMNIC_SHAPER_NUM_GROUPS; i++) {
        dmnic_bucket_load(&sh->grp[i], now);
        if (sh->grp_parent[i] > DMNIC_SHAPER_NUM_GROUPS) {
            sh->grp_parent[i] = 0;
        }
    }
    for (i = 0; i < DMNIC_MAX_QUEUES; i++) {
        dmnic_bucket_load(&sh->q[i], now);
        if (sh->q_group[i] > DMNIC_SHAPER_NUM_GROUPS) {
            sh->q_group[i] = 0;
        }
        sh->held[i] = false;
        sh->turn[i] = 0;
    }
    sh->rr_next = 0;
    timer_del(sh->timer);
    dmnic_shaper_update_active(sh, core->num_queues);
    /* the core's post_load schedules every running TX queue */
    return 0;
}

static const VMStateDescription vmstate_dmnic_bucket = {
    .name = "devmem-nic-shaper-bucket",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(rate, DmnicBucket),
        VMSTATE_UINT32(rate_lo, DmnicBucket),
        VMSTATE_UINT32(burst, DmnicBucket),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_dmnic_shaper_state = {
    .name = "devmem-nic-shaper",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(net, DmnicShaper, 1, vmstate_dmnic_bucket,
                       DmnicBucket),
        VMSTATE_STRUCT_ARRAY(grp, DmnicShaper, DMNIC_SHAPER_NUM_GROUPS, 1,
                             vmstate_dmnic_bucket, DmnicBucket),
        VMSTATE_UINT32_ARRAY(grp_parent, DmnicShaper,
                             DMNIC_SHAPER_NUM_GROUPS),
        /* queues 0..63; 64..71 in devmem-nic-core/shaper/queues-hi */
        VMSTATE_STRUCT_SUB_ARRAY(q, DmnicShaper, 0, DMNIC_MIG_QUEUES_V1, 1,
                                 vmstate_dmnic_bucket, DmnicBucket),
        VMSTATE_UINT32_SUB_ARRAY(q_group, DmnicShaper, 0,
                                 DMNIC_MIG_QUEUES_V1),
        VMSTATE_UINT32_SUB_ARRAY(q_weight, DmnicShaper, 0,
                                 DMNIC_MIG_QUEUES_V1),
        VMSTATE_UINT64_SUB_ARRAY(q_held, DmnicShaper, 0, DMNIC_MIG_QUEUES_V1),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * The limiters of queues 64..71, when the device has them (num_queues is
 * equal on both sides); loaded before dmnic_shaper_post_load() runs
 */
static bool dmnic_shaper_queues_hi_needed(void *opaque)
{
    DevmemNicCore *core = opaque;

    return core->num_queues > DMNIC_MIG_QUEUES_V1;
}

static const VMStateDescription vmstate_dmnic_shaper_queues_hi = {
    .name = "devmem-nic-core/shaper/queues-hi",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_shaper_queues_hi_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_SUB_ARRAY(shaper.q, DevmemNicCore, DMNIC_MIG_QUEUES_V1,
                                 DMNIC_MIG_QUEUES_HI, 1, vmstate_dmnic_bucket,
                                 DmnicBucket),
        VMSTATE_UINT32_SUB_ARRAY(shaper.q_group, DevmemNicCore,
                                 DMNIC_MIG_QUEUES_V1, DMNIC_MIG_QUEUES_HI),
        VMSTATE_UINT32_SUB_ARRAY(shaper.q_weight, DevmemNicCore,
                                 DMNIC_MIG_QUEUES_V1, DMNIC_MIG_QUEUES_HI),
        VMSTATE_UINT64_SUB_ARRAY(shaper.q_held, DevmemNicCore,
                                 DMNIC_MIG_QUEUES_V1, DMNIC_MIG_QUEUES_HI),
        VMSTATE_END_OF_LIST()
    },
};

/* 1.3 transmit shaping: a subsection of devmem-nic-core */
const VMStateDescription vmstate_devmem_nic_shaper = {
    .name = "devmem-nic-core/shaper",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dmnic_shaper_needed,
    .post_load = dmnic_shaper_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(shaper, DevmemNicCore, 1, vmstate_dmnic_shaper_state,
                       DmnicShaper),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_dmnic_shaper_queues_hi,
        NULL
    },
};
