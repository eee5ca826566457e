/*
 * fake-accel core: registers, copy/CRC engine and fault window.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h> /* for crc32 */
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "system/dma.h"
#include "fake-accel-core.h"
#include "fake-accel-regs.h"
#include "trace.h"

/* Fault window overlay: every access fails and is counted. */

static MemTxResult fake_accel_fault_read(void *opaque, hwaddr addr,
                                         uint64_t *data, unsigned size,
                                         MemTxAttrs attrs)
{
    FakeAccelCore *c = opaque;

    c->fault_hits++;
    trace_fake_accel_fault_hit(c->fault_off + addr, size, 0);
    *data = ~0ULL;
    return MEMTX_ERROR;
}

static MemTxResult fake_accel_fault_write(void *opaque, hwaddr addr,
                                          uint64_t data, unsigned size,
                                          MemTxAttrs attrs)
{
    FakeAccelCore *c = opaque;

    c->fault_hits++;
    trace_fake_accel_fault_hit(c->fault_off + addr, size, 1);
    return MEMTX_ERROR;
}

static const MemoryRegionOps fake_accel_fault_ops = {
    .read_with_attrs = fake_accel_fault_read,
    .write_with_attrs = fake_accel_fault_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

/*
 * Device memory accessed through the device.  With no memdev BAR2 is a
 * ROM device: QEMU reads RAM directly and sends only writes here; with a
 * memdev every access comes here (the backend's RAM cannot be a ROM
 * device).  Either way the bytes land in c->ram.
 */

/*
 * Whether a write comes from a bus master rather than a CPU.  A vCPU's
 * store carries the CPU's attributes (x86: .secure in SMM, never
 * .unspecified); a device's pci_dma_*() carries MEMTXATTRS_UNSPECIFIED,
 * and one that gives attributes gives its requester ID.
 */
static bool fake_accel_from_bus_master(MemTxAttrs attrs)
{
    return attrs.unspecified || attrs.requester_id;
}

static MemTxResult fake_accel_mem_read(void *opaque, hwaddr addr,
                                       uint64_t *data, unsigned size,
                                       MemTxAttrs attrs)
{
    FakeAccelCore *c = opaque;

    *data = ldn_le_p(c->mem + addr, size);
    return MEMTX_OK;
}

static MemTxResult fake_accel_mem_write(void *opaque, hwaddr addr,
                                        uint64_t data, unsigned size,
                                        MemTxAttrs attrs)
{
    FakeAccelCore *c = opaque;

    stn_le_p(c->mem + addr, size, data);
    memory_region_set_dirty(c->ram, addr, size);
    if (fake_accel_from_bus_master(attrs) && !attrs.debug) {
        c->p2p_wr_bytes += size;
    }
    return MEMTX_OK;
}

const MemoryRegionOps fake_accel_mem_ops = {
    .read_with_attrs = fake_accel_mem_read,
    .write_with_attrs = fake_accel_mem_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

static bool fake_accel_window_ok(uint64_t mem_size, uint64_t off,
                                 uint64_t len)
{
    return len && !(off % FACCEL_FAULT_ALIGN) &&
           !(len % FACCEL_FAULT_ALIGN) && off < mem_size &&
           len <= mem_size - off;
}

static bool fake_accel_fault_valid(FakeAccelCore *c)
{
    return fake_accel_window_ok(c->mem_size, c->fault_off, c->fault_len);
}

static bool fake_accel_fault_active(FakeAccelCore *c)
{
    return (c->fault_ctrl & FACCEL_FAULT_CTRL_ENABLE) &&
           fake_accel_fault_valid(c);
}

/*
 * Make the overlay region match the fault registers.  @enabling: ENABLE
 * was just written; with invalid values it is refused (logged, cleared).
 * Otherwise an enabled window whose OFF/LEN are (perhaps only between two
 * register writes) invalid stays enabled but inactive until they are valid.
 */
static void fake_accel_fault_update(FakeAccelCore *c, bool enabling)
{
    bool on;

    if (enabling && (c->fault_ctrl & FACCEL_FAULT_CTRL_ENABLE) &&
        !fake_accel_fault_valid(c)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: invalid fault window off 0x%" PRIx64
                      " len 0x%x (mem size 0x%" PRIx64 "), disabled\n",
                      c->fault_off, c->fault_len, c->mem_size);
        c->fault_ctrl &= ~FACCEL_FAULT_CTRL_ENABLE;
    }
    on = fake_accel_fault_active(c);
    trace_fake_accel_fault_window(on, c->fault_off, c->fault_len);

    memory_region_transaction_begin();
    memory_region_set_enabled(&c->fault_mr, false);
    if (on) {
        memory_region_set_size(&c->fault_mr, c->fault_len);
        memory_region_set_address(&c->fault_mr, c->fault_off);
        memory_region_set_enabled(&c->fault_mr, true);
    }
    memory_region_transaction_commit();
}

bool fake_accel_core_window_active(FakeAccelCore *c)
{
    return fake_accel_fault_active(c);
}

bool fake_accel_core_set_window(FakeAccelCore *c, bool on, uint64_t off,
                                uint64_t len)
{
    if (on && (len > UINT32_MAX ||
               !fake_accel_window_ok(c->mem_size, off, len))) {
        return false;
    }
    trace_fake_accel_fault_inject_window(on, off, len);
    if (on) {
        c->fault_off = off;
        c->fault_len = len;
        c->fault_ctrl = FACCEL_FAULT_CTRL_ENABLE;
    } else {
        c->fault_ctrl = 0;
    }
    fake_accel_fault_update(c, true);
    return true;
}

/* Whether an injected fault fails this engine DMA (counts it if so). */
static bool fake_accel_inject_dma(FakeAccelCore *c, bool write, uint64_t addr)
{
    uint32_t *n = write ? &c->inj_dma_write : &c->inj_dma_read;

    if (!*n) {
        return false;
    }
    (*n)--;
    c->inj_count++;
    trace_fake_accel_fault_inject_dma(write, addr, *n);
    return true;
}

void fake_accel_core_init(FakeAccelCore *c, Object *owner_obj,
                          MemoryRegion *bar)
{
    c->mem = memory_region_get_ram_ptr(c->ram);
    memory_region_init_io(&c->fault_mr, owner_obj, &fake_accel_fault_ops, c,
                          "fake-accel-fault", FACCEL_FAULT_ALIGN);
    memory_region_set_enabled(&c->fault_mr, false);
    memory_region_add_subregion_overlap(bar, 0, &c->fault_mr, 1);
}

void fake_accel_core_reset(FakeAccelCore *c)
{
    c->reset_count++;
    c->scratch = 0;
    c->eng_src = 0;
    c->eng_dst = 0;
    c->eng_len = 0;
    c->eng_cmd = 0;
    c->eng_status = 0;
    c->eng_crc = 0;
    c->eng_fill = 0;
    c->eng_done_len = 0;
    c->eng_count = 0;
    c->fault_off = 0;
    c->fault_len = 0;
    c->fault_ctrl = 0;
    c->fault_hits = 0;
    fake_accel_fault_update(c, false);
    trace_fake_accel_reset(c->reset_count);
}

/* Engine */

typedef struct FakeAccelOperand {
    bool used;
    bool host;
    uint64_t addr;
} FakeAccelOperand;

static uint32_t fake_accel_check_bar_operand(FakeAccelCore *c,
                                             const FakeAccelOperand *op,
                                             uint32_t len, const char *what)
{
    uint64_t wend, fend;

    if (!op->used || op->host) {
        return 0;
    }
    if (op->addr > c->mem_size || len > c->mem_size - op->addr) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: engine %s 0x%" PRIx64 "+0x%x outside "
                      "device memory (0x%" PRIx64 ")\n",
                      what, op->addr, len, c->mem_size);
        return FACCEL_ENG_ERR_RANGE;
    }
    if (len && fake_accel_fault_active(c)) {
        wend = op->addr + len;
        fend = c->fault_off + c->fault_len;
        if (op->addr < fend && c->fault_off < wend) {
            c->fault_hits++;
            qemu_log_mask(LOG_GUEST_ERROR,
                          "fake-accel: engine %s 0x%" PRIx64 "+0x%x hits the "
                          "fault window\n", what, op->addr, len);
            return FACCEL_ENG_ERR_FAULT;
        }
    }
    return 0;
}

static uint32_t fake_accel_engine_run(FakeAccelCore *c, uint32_t *crc_out,
                                      uint32_t *done_out)
{
    uint8_t buf[FACCEL_ENG_CHUNK];
    uint32_t op = c->eng_cmd & FACCEL_ENG_OP_MASK;
    uint8_t *mem = c->mem;
    FakeAccelOperand src = {
        .used = op == FACCEL_ENG_OP_COPY || op == FACCEL_ENG_OP_CRC,
        .host = c->eng_cmd & FACCEL_ENG_CMD_SRC_HOST,
        .addr = c->eng_src,
    };
    FakeAccelOperand dst = {
        .used = op == FACCEL_ENG_OP_COPY || op == FACCEL_ENG_OP_FILL,
        .host = c->eng_cmd & FACCEL_ENG_CMD_DST_HOST,
        .addr = c->eng_dst,
    };
    uLong crc = crc32(0L, Z_NULL, 0);
    uint32_t done = 0, n, i, err;
    MemTxResult r;

    *crc_out = 0;
    *done_out = 0;
    if ((c->eng_cmd & FACCEL_ENG_CMD_RSVD_MASK) ||
        (op != FACCEL_ENG_OP_COPY && op != FACCEL_ENG_OP_CRC &&
         op != FACCEL_ENG_OP_FILL)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: bad engine command 0x%x\n", c->eng_cmd);
        return FACCEL_ENG_ERR_BAD_CMD;
    }
    if (c->eng_len > FACCEL_ENG_MAX_LEN) {
        /* the engine runs synchronously: bound what one command may cost */
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: engine length 0x%x above the 0x%x limit\n",
                      c->eng_len, FACCEL_ENG_MAX_LEN);
        return FACCEL_ENG_ERR_RANGE;
    }
    err = fake_accel_check_bar_operand(c, &src, c->eng_len, "source");
    if (!err) {
        err = fake_accel_check_bar_operand(c, &dst, c->eng_len,
                                           "destination");
    }
    if (err) {
        return err;
    }

    while (done < c->eng_len) {
        n = MIN(c->eng_len - done, FACCEL_ENG_CHUNK);
        if (src.used && src.host) {
            r = fake_accel_inject_dma(c, false, src.addr + done) ?
                MEMTX_ERROR : pci_dma_read(c->owner, src.addr + done, buf, n);
            if (r != MEMTX_OK) {
                qemu_log_mask(LOG_GUEST_ERROR,
                              "fake-accel: engine DMA read of 0x%" PRIx64
                              " failed (%d)\n", src.addr + done, r);
                err = FACCEL_ENG_ERR_DMA;
                break;
            }
        } else if (src.used) {
            memcpy(buf, mem + src.addr + done, n);
        } else {
            for (i = 0; i < n; i++) {
                buf[i] = c->eng_fill >> (8 * ((done + i) & 3));
            }
        }
        if (dst.used && dst.host) {
            r = fake_accel_inject_dma(c, true, dst.addr + done) ?
                MEMTX_ERROR :
                pci_dma_write(c->owner, dst.addr + done, buf, n);
            if (r != MEMTX_OK) {
                qemu_log_mask(LOG_GUEST_ERROR,
                              "fake-accel: engine DMA write of 0x%" PRIx64
                              " failed (%d)\n", dst.addr + done, r);
                err = FACCEL_ENG_ERR_DMA;
                break;
            }
        } else if (dst.used) {
            memcpy(mem + dst.addr + done, buf, n);
            memory_region_set_dirty(c->ram, dst.addr + done, n);
        }
        crc = crc32(crc, buf, n);
        done += n;
    }
    *done_out = done;
    *crc_out = err ? 0 : crc;
    return err;
}

static void fake_accel_engine_start(FakeAccelCore *c)
{
    uint32_t err, crc, done;

    trace_fake_accel_engine_start(c->eng_cmd, c->eng_src, c->eng_dst,
                                  c->eng_len);
    c->eng_status = 0;
    c->eng_crc = 0;
    c->eng_done_len = 0;
    err = fake_accel_engine_run(c, &crc, &done);
    c->eng_crc = crc;
    c->eng_done_len = done;
    c->eng_status = FACCEL_ENG_STATUS_DONE;
    if (err) {
        c->eng_status |= FACCEL_ENG_STATUS_ERROR |
                         (err << FACCEL_ENG_STATUS_CODE_SHIFT);
    } else {
        c->eng_count++;
        if ((c->eng_cmd & FACCEL_ENG_OP_MASK) == FACCEL_ENG_OP_CRC) {
            c->crc_checks++;
        }
    }
    trace_fake_accel_engine_done(c->eng_status, c->eng_crc, c->eng_done_len);
}

/* Registers */

uint32_t fake_accel_core_read(FakeAccelCore *c, hwaddr addr)
{
    uint32_t val = 0;

    switch (addr) {
    case FACCEL_REG_ID:
        val = FACCEL_ID_MAGIC;
        break;
    case FACCEL_REG_VERSION:
        val = FACCEL_VERSION;
        break;
    case FACCEL_REG_MEM_SIZE_LO:
        val = (uint32_t)c->mem_size;
        break;
    case FACCEL_REG_MEM_SIZE_HI:
        val = c->mem_size >> 32;
        break;
    case FACCEL_REG_CTRL:
        val = 0;
        break;
    case FACCEL_REG_STATUS:
        val = FACCEL_STATUS_READY;
        if (fake_accel_fault_active(c)) {
            val |= FACCEL_STATUS_FAULT_ACTIVE;
        }
        if (c->eng_status & FACCEL_ENG_STATUS_ERROR) {
            val |= FACCEL_STATUS_ENG_ERROR;
        }
        break;
    case FACCEL_REG_SCRATCH:
        val = c->scratch;
        break;
    case FACCEL_REG_RESET_COUNT:
        val = c->reset_count;
        break;
    case FACCEL_REG_P2P_WR_BYTES_LO:
        val = (uint32_t)c->p2p_wr_bytes;
        break;
    case FACCEL_REG_P2P_WR_BYTES_HI:
        val = c->p2p_wr_bytes >> 32;
        break;
    case FACCEL_REG_CRC_CHECKS:
        val = c->crc_checks;
        break;
    case FACCEL_REG_ENG_SRC_LO:
        val = (uint32_t)c->eng_src;
        break;
    case FACCEL_REG_ENG_SRC_HI:
        val = c->eng_src >> 32;
        break;
    case FACCEL_REG_ENG_DST_LO:
        val = (uint32_t)c->eng_dst;
        break;
    case FACCEL_REG_ENG_DST_HI:
        val = c->eng_dst >> 32;
        break;
    case FACCEL_REG_ENG_LEN:
        val = c->eng_len;
        break;
    case FACCEL_REG_ENG_CMD:
        val = c->eng_cmd;
        break;
    case FACCEL_REG_ENG_STATUS:
        val = c->eng_status;
        break;
    case FACCEL_REG_ENG_CRC:
        val = c->eng_crc;
        break;
    case FACCEL_REG_ENG_FILL:
        val = c->eng_fill;
        break;
    case FACCEL_REG_ENG_DONE_LEN:
        val = c->eng_done_len;
        break;
    case FACCEL_REG_ENG_COUNT:
        val = c->eng_count;
        break;
    case FACCEL_REG_FAULT_OFF_LO:
        val = (uint32_t)c->fault_off;
        break;
    case FACCEL_REG_FAULT_OFF_HI:
        val = c->fault_off >> 32;
        break;
    case FACCEL_REG_FAULT_LEN:
        val = c->fault_len;
        break;
    case FACCEL_REG_FAULT_CTRL:
        val = c->fault_ctrl;
        break;
    case FACCEL_REG_FAULT_HITS:
        val = c->fault_hits;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: read of unknown register 0x%" HWADDR_PRIx
                      "\n", addr);
        break;
    }
    return val;
}

static uint64_t fake_accel_set_lo(uint64_t old, uint32_t val)
{
    return (old & 0xffffffff00000000ULL) | val;
}

static uint64_t fake_accel_set_hi(uint64_t old, uint32_t val)
{
    return (old & 0xffffffffULL) | ((uint64_t)val << 32);
}

void fake_accel_core_write(FakeAccelCore *c, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case FACCEL_REG_CTRL:
        if (val & FACCEL_CTRL_RESET) {
            fake_accel_core_reset(c);
        }
        if (val & ~FACCEL_CTRL_RESET) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "fake-accel: reserved CTRL bits 0x%x\n", val);
        }
        break;
    case FACCEL_REG_SCRATCH:
        c->scratch = val;
        break;
    case FACCEL_REG_ENG_SRC_LO:
        c->eng_src = fake_accel_set_lo(c->eng_src, val);
        break;
    case FACCEL_REG_ENG_SRC_HI:
        c->eng_src = fake_accel_set_hi(c->eng_src, val);
        break;
    case FACCEL_REG_ENG_DST_LO:
        c->eng_dst = fake_accel_set_lo(c->eng_dst, val);
        break;
    case FACCEL_REG_ENG_DST_HI:
        c->eng_dst = fake_accel_set_hi(c->eng_dst, val);
        break;
    case FACCEL_REG_ENG_LEN:
        c->eng_len = val;
        break;
    case FACCEL_REG_ENG_CMD:
        c->eng_cmd = val;
        fake_accel_engine_start(c);
        break;
    case FACCEL_REG_ENG_FILL:
        c->eng_fill = val;
        break;
    case FACCEL_REG_FAULT_OFF_LO:
        c->fault_off = fake_accel_set_lo(c->fault_off, val);
        fake_accel_fault_update(c, false);
        break;
    case FACCEL_REG_FAULT_OFF_HI:
        c->fault_off = fake_accel_set_hi(c->fault_off, val);
        fake_accel_fault_update(c, false);
        break;
    case FACCEL_REG_FAULT_LEN:
        c->fault_len = val;
        fake_accel_fault_update(c, false);
        break;
    case FACCEL_REG_FAULT_CTRL:
        if (val & ~FACCEL_FAULT_CTRL_ENABLE) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "fake-accel: reserved FAULT_CTRL bits 0x%x\n", val);
        }
        c->fault_ctrl = val & FACCEL_FAULT_CTRL_ENABLE;
        fake_accel_fault_update(c, true);
        break;
    case FACCEL_REG_FAULT_HITS:
        c->fault_hits = 0;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: write to unknown or read-only register 0x%"
                      HWADDR_PRIx "\n", addr);
        break;
    }
}

static int fake_accel_core_post_load(void *opaque, int version_id)
{
    FakeAccelCore *c = opaque;

    /* Untrusted input: re-validate and rebuild the fault overlay. */
    c->fault_ctrl &= FACCEL_FAULT_CTRL_ENABLE;
    fake_accel_fault_update(c, false);
    return 0;
}

static bool fake_accel_counters_needed(void *opaque)
{
    FakeAccelCore *c = opaque;

    return c->p2p_wr_bytes || c->crc_checks;
}

static const VMStateDescription vmstate_fake_accel_counters = {
    .name = "fake-accel-core/counters",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = fake_accel_counters_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(p2p_wr_bytes, FakeAccelCore),
        VMSTATE_UINT32(crc_checks, FakeAccelCore),
        VMSTATE_END_OF_LIST()
    },
};

const VMStateDescription vmstate_fake_accel_core = {
    .name = "fake-accel-core",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = fake_accel_core_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(scratch, FakeAccelCore),
        VMSTATE_UINT32(reset_count, FakeAccelCore),
        VMSTATE_UINT64(eng_src, FakeAccelCore),
        VMSTATE_UINT64(eng_dst, FakeAccelCore),
        VMSTATE_UINT32(eng_len, FakeAccelCore),
        VMSTATE_UINT32(eng_cmd, FakeAccelCore),
        VMSTATE_UINT32(eng_status, FakeAccelCore),
        VMSTATE_UINT32(eng_crc, FakeAccelCore),
        VMSTATE_UINT32(eng_fill, FakeAccelCore),
        VMSTATE_UINT32(eng_done_len, FakeAccelCore),
        VMSTATE_UINT32(eng_count, FakeAccelCore),
        VMSTATE_UINT64(fault_off, FakeAccelCore),
        VMSTATE_UINT32(fault_len, FakeAccelCore),
        VMSTATE_UINT32(fault_ctrl, FakeAccelCore),
        VMSTATE_UINT32(fault_hits, FakeAccelCore),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_fake_accel_counters,
        NULL
    },
};
