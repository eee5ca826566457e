/*
 * devmem-nic core engine (skeleton: identity and control registers)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "devmem-nic-core.h"
#include "devmem-nic-regs.h"
#include "trace.h"

bool devmem_nic_core_link_up(DevmemNicCore *core)
{
    return !qemu_get_queue(core->nic)->link_down;
}

void devmem_nic_core_reset(DevmemNicCore *core)
{
    core->ctrl = 0;
    trace_devmem_nic_reset();
}

uint64_t devmem_nic_core_read(DevmemNicCore *core, hwaddr addr, unsigned size)
{
    uint64_t val = 0;

    switch (addr) {
    case DMNIC_REG_ID:
        val = DMNIC_ID_MAGIC;
        break;
    case DMNIC_REG_VERSION:
        val = DMNIC_VERSION;
        break;
    case DMNIC_REG_NUM_QUEUES:
        val = core->num_queues;
        break;
    case DMNIC_REG_CTRL:
        val = core->ctrl;
        break;
    case DMNIC_REG_STATUS:
        val = devmem_nic_core_link_up(core) ? DMNIC_STATUS_LINK_UP : 0;
        break;
    case DMNIC_REG_MAC_LO:
        val = ldl_le_p(core->mac);
        break;
    case DMNIC_REG_MAC_HI:
        val = lduw_le_p(core->mac + 4);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: read of unknown register 0x%" HWADDR_PRIx
                      "\n", addr);
        break;
    }
    trace_devmem_nic_mmio_read(addr, size, val);
    return val;
}

void devmem_nic_core_write(DevmemNicCore *core, hwaddr addr, uint64_t val,
                           unsigned size)
{
    trace_devmem_nic_mmio_write(addr, size, val);
    switch (addr) {
    case DMNIC_REG_CTRL:
        if (val & DMNIC_CTRL_RESET) {
            devmem_nic_core_reset(core);
        }
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "devmem-nic: write to unknown or read-only register 0x%"
                      HWADDR_PRIx "\n", addr);
        break;
    }
}

ssize_t devmem_nic_core_receive(DevmemNicCore *core, const uint8_t *buf,
                                size_t size)
{
    /* Skeleton: no RX queues yet, every frame is dropped. */
    trace_devmem_nic_rx_drop(size);
    return size;
}
