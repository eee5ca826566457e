/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake-accel core: registers, copy/CRC engine and fault window, without QOM.
 */
#ifndef HW_MISC_FAKE_ACCEL_CORE_H
#define HW_MISC_FAKE_ACCEL_CORE_H

#include "system/memory.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"

typedef struct FakeAccelCore {
    /* wiring, set by the PCI glue before use */
    PCIDevice *owner;           /* bus master for host operands */
    MemoryRegion *ram;          /* device memory (BAR2 content) */
    uint8_t *mem;               /* its host pointer */
    MemoryRegion fault_mr;      /* overlay that fails every access */
    uint64_t mem_size;

    /* registers */
    uint32_t scratch;
    uint32_t reset_count;
    uint64_t eng_src;
    uint64_t eng_dst;
    uint32_t eng_len;
    uint32_t eng_cmd;
    uint32_t eng_status;
    uint32_t eng_crc;
    uint32_t eng_fill;
    uint32_t eng_done_len;
    uint32_t eng_count;
    uint64_t fault_off;
    uint32_t fault_len;
    uint32_t fault_ctrl;
    uint32_t fault_hits;
    /* counters: monotonic since power-on, never reset */
    uint64_t p2p_wr_bytes;
    uint32_t crc_checks;

    /*
     * Host-side fault injection (QOM x-fault-* properties, see
     * docs/fault-injection.md): not guest state, not migrated, kept
     * across device resets.
     */
    uint32_t inj_dma_read;      /* fail the next N engine DMA reads */
    uint32_t inj_dma_write;     /* fail the next N engine DMA writes */
    uint64_t inj_count;         /* faults injected so far */
} FakeAccelCore;

extern const VMStateDescription vmstate_fake_accel_core;
/*
 * Accesses to device memory that QEMU does not do straight in RAM (the
 * writes to the ROM-device BAR2, every access with a memdev): they land
 * in RAM and count P2P_WR_BYTES.  The opaque is the FakeAccelCore.
 */
extern const MemoryRegionOps fake_accel_mem_ops;

/*
 * Creates the fault window overlay in @bar (the BAR2 container); c->ram is
 * set and RAM-backed.
 */
void fake_accel_core_init(FakeAccelCore *c, Object *owner_obj,
                          MemoryRegion *bar);
void fake_accel_core_reset(FakeAccelCore *c);
uint32_t fake_accel_core_read(FakeAccelCore *c, hwaddr addr);
void fake_accel_core_write(FakeAccelCore *c, hwaddr addr, uint32_t val);
/*
 * Host-side control of the fault window (the same state as the FAULT_*
 * registers).  Returns false, and changes nothing, if @on and the window
 * is invalid.
 */
bool fake_accel_core_set_window(FakeAccelCore *c, bool on, uint64_t off,
                                uint64_t len);
bool fake_accel_core_window_active(FakeAccelCore *c);

#endif /* HW_MISC_FAKE_ACCEL_CORE_H */
