/*
 * fake-accel: an emulated PCIe accelerator whose BAR2 is device memory.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"
#include "fake-accel-regs.h"
#include "trace.h"

#define TYPE_FAKE_ACCEL "fake-accel"
OBJECT_DECLARE_SIMPLE_TYPE(FakeAccelState, FAKE_ACCEL)

#define FACCEL_PCIE_CAP_OFF 0xa0

struct FakeAccelState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion mem;
    uint64_t mem_size;
    uint32_t ctrl;
};

static void fake_accel_reset(FakeAccelState *s)
{
    s->ctrl = 0;
    trace_fake_accel_reset();
}

static uint64_t fake_accel_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    FakeAccelState *s = opaque;
    uint64_t val = 0;

    switch (addr) {
    case FACCEL_REG_ID:
        val = FACCEL_ID_MAGIC;
        break;
    case FACCEL_REG_VERSION:
        val = FACCEL_VERSION;
        break;
    case FACCEL_REG_MEM_SIZE_LO:
        val = (uint32_t)s->mem_size;
        break;
    case FACCEL_REG_MEM_SIZE_HI:
        val = s->mem_size >> 32;
        break;
    case FACCEL_REG_CTRL:
        val = s->ctrl;
        break;
    case FACCEL_REG_STATUS:
        val = FACCEL_STATUS_READY;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: read of unknown register 0x%" HWADDR_PRIx
                      "\n", addr);
        break;
    }
    trace_fake_accel_mmio_read(addr, size, val);
    return val;
}

static void fake_accel_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                  unsigned size)
{
    FakeAccelState *s = opaque;

    trace_fake_accel_mmio_write(addr, size, val);
    switch (addr) {
    case FACCEL_REG_CTRL:
        if (val & FACCEL_CTRL_RESET) {
            fake_accel_reset(s);
        }
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "fake-accel: write to unknown or read-only register 0x%"
                      HWADDR_PRIx "\n", addr);
        break;
    }
}

static const MemoryRegionOps fake_accel_mmio_ops = {
    .read = fake_accel_mmio_read,
    .write = fake_accel_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void fake_accel_realize(PCIDevice *pdev, Error **errp)
{
    FakeAccelState *s = FAKE_ACCEL(pdev);

    if (s->mem_size < 1 * MiB || !is_power_of_2(s->mem_size)) {
        error_setg(errp, "fake-accel: mem-size must be a power of two >= 1M");
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &fake_accel_mmio_ops, s,
                          "fake-accel-mmio", FACCEL_BAR_REGS_SIZE);
    pci_register_bar(pdev, FACCEL_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    if (!memory_region_init_ram(&s->mem, OBJECT(s), "fake-accel-mem",
                                s->mem_size, errp)) {
        return;
    }
    pci_register_bar(pdev, FACCEL_BAR_MEM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->mem);

    if (pcie_endpoint_cap_init(pdev, FACCEL_PCIE_CAP_OFF) < 0) {
        error_setg(errp, "fake-accel: PCIe capability init failed");
        return;
    }
    fake_accel_reset(s);
}

static void fake_accel_exit(PCIDevice *pdev)
{
    pcie_cap_exit(pdev);
}

static void fake_accel_reset_hold(Object *obj, ResetType type)
{
    fake_accel_reset(FAKE_ACCEL(obj));
}

static const VMStateDescription fake_accel_vmstate = {
    .name = "fake-accel",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, FakeAccelState),
        VMSTATE_UINT32(ctrl, FakeAccelState),
        VMSTATE_END_OF_LIST()
    },
};

static const Property fake_accel_properties[] = {
    DEFINE_PROP_SIZE("mem-size", FakeAccelState, mem_size, 256 * MiB),
};

static void fake_accel_class_init(ObjectClass *klass, const void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = fake_accel_realize;
    k->exit = fake_accel_exit;
    k->vendor_id = FACCEL_PCI_VENDOR_ID;
    k->device_id = FACCEL_PCI_DEVICE_ID;
    k->revision = FACCEL_PCI_REVISION;
    k->class_id = PCI_CLASS_PROCESSOR_CO;
    rc->phases.hold = fake_accel_reset_hold;
    dc->desc = "devmem-lab accelerator with BAR device memory";
    dc->vmsd = &fake_accel_vmstate;
    device_class_set_props(dc, fake_accel_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo fake_accel_info = {
    .name = TYPE_FAKE_ACCEL,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(FakeAccelState),
    .class_init = fake_accel_class_init,
    .interfaces = (const InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void fake_accel_register_types(void)
{
    type_register_static(&fake_accel_info);
}

type_init(fake_accel_register_types)
