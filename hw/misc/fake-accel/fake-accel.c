/*
 * fake-accel: an emulated PCIe accelerator whose BAR2 is device memory.
 * See docs/specs/fake-accel.rst.  This file is the QOM/PCI glue; the
 * registers, engine and fault window live in fake-accel-core.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "system/hostmem.h"
#include "qom/object.h"
#include "fake-accel-core.h"
#include "fake-accel-regs.h"
#include "trace.h"

#define TYPE_FAKE_ACCEL "fake-accel"
OBJECT_DECLARE_SIMPLE_TYPE(FakeAccelState, FAKE_ACCEL)

#define FACCEL_PCIE_CAP_OFF 0xa0
#define FAKE_ACCEL_MEM_DEFAULT  (256 * MiB)     /* mem-size=0, no memdev */

struct FakeAccelState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion bar2;          /* container: memory + fault overlay */
    MemoryRegion own_ram;       /* ROM device, used when no memdev is given */
    MemoryRegion memdev_io;     /* the memdev's RAM through the device */
    HostMemoryBackend *hostmem;
    uint64_t mem_size;          /* the property; core.mem_size is BAR2's */
    FakeAccelCore core;
};

static uint64_t fake_accel_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    FakeAccelState *s = opaque;
    uint32_t val = fake_accel_core_read(&s->core, addr);

    trace_fake_accel_mmio_read(addr, size, val);
    return val;
}

static void fake_accel_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                  unsigned size)
{
    FakeAccelState *s = opaque;

    trace_fake_accel_mmio_write(addr, size, val);
    fake_accel_core_write(&s->core, addr, val);
}

static const MemoryRegionOps fake_accel_mmio_ops = {
    .read = fake_accel_mmio_read,
    .write = fake_accel_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void fake_accel_write_config(PCIDevice *pdev, uint32_t addr,
                                    uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

/*
 * The BAR2 size: the memdev's, or mem-size (0, the default: 256 MiB).
 * The mem-size property itself is left as the user set it; a mem-size
 * that disagrees with the memdev is refused, not silently replaced.
 */
static bool fake_accel_init_memory(FakeAccelState *s, Error **errp)
{
    MemoryRegion *ram = NULL, *mem;
    uint64_t size = s->mem_size ? s->mem_size : FAKE_ACCEL_MEM_DEFAULT;

    if (s->hostmem) {
        const char *id = object_get_canonical_path_component(
                             OBJECT(s->hostmem));

        if (host_memory_backend_is_mapped(s->hostmem)) {
            error_setg(errp, "fake-accel: memdev %s is already in use", id);
            return false;
        }
        ram = host_memory_backend_get_memory(s->hostmem);
        size = memory_region_size(ram);
        if (s->mem_size && s->mem_size != size) {
            error_setg(errp, "fake-accel: mem-size 0x%" PRIx64 " differs "
                       "from the size 0x%" PRIx64 " of memdev %s; drop "
                       "mem-size (the memdev's size is used)", s->mem_size,
                       size, id);
            return false;
        }
    }
    if (size < 1 * MiB || !is_power_of_2(size)) {
        error_setg(errp, "fake-accel: device memory size 0x%" PRIx64
                   " must be a power of two >= 1M", size);
        return false;
    }
    /*
     * Writes into device memory must go through the device, to count those
     * of other bus masters (P2P_WR_BYTES): our own RAM is a ROM device
     * (reads straight from RAM, writes through fake_accel_mem_ops); a
     * memdev's RAM cannot be one, so with a memdev BAR2 shows it through
     * an I/O region with the same ops, reads included.
     */
    if (s->hostmem) {
        host_memory_backend_set_mapped(s->hostmem, true);
        vmstate_register_ram(ram, DEVICE(s));
        memory_region_init_io(&s->memdev_io, OBJECT(s), &fake_accel_mem_ops,
                              &s->core, "fake-accel-mem-io", size);
        /* the ops only touch RAM: the engine may DMA into its own BAR2 */
        s->memdev_io.disable_reentrancy_guard = true;
        mem = &s->memdev_io;
    } else {
        if (!memory_region_init_rom_device(&s->own_ram, OBJECT(s),
                                           &fake_accel_mem_ops, &s->core,
                                           "fake-accel-mem", size, errp)) {
            return false;
        }
        ram = mem = &s->own_ram;
    }

    memory_region_init(&s->bar2, OBJECT(s), "fake-accel-bar2", size);
    memory_region_add_subregion(&s->bar2, 0, mem);
    s->core.owner = PCI_DEVICE(s);
    s->core.ram = ram;
    s->core.mem_size = size;
    fake_accel_core_init(&s->core, OBJECT(s), &s->bar2);
    return true;
}

static void fake_accel_realize(PCIDevice *pdev, Error **errp)
{
    FakeAccelState *s = FAKE_ACCEL(pdev);

    /* the steps that can fail come first: nothing to undo after them */
    if (pcie_endpoint_cap_init(pdev, FACCEL_PCIE_CAP_OFF) < 0) {
        error_setg(errp, "fake-accel: PCIe capability init failed");
        return;
    }
    if (!fake_accel_init_memory(s, errp)) {
        pcie_cap_exit(pdev);
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &fake_accel_mmio_ops, s,
                          "fake-accel-mmio", FACCEL_BAR_REGS_SIZE);
    pci_register_bar(pdev, FACCEL_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);
    pci_register_bar(pdev, FACCEL_BAR_MEM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->bar2);
    pcie_cap_flr_init(pdev);
}

static void fake_accel_exit(PCIDevice *pdev)
{
    FakeAccelState *s = FAKE_ACCEL(pdev);

    pcie_cap_exit(pdev);
    if (s->hostmem) {
        MemoryRegion *ram = host_memory_backend_get_memory(s->hostmem);

        memory_region_del_subregion(&s->bar2, &s->memdev_io);
        vmstate_unregister_ram(ram, DEVICE(s));
        host_memory_backend_set_mapped(s->hostmem, false);
    }
}

static void fake_accel_reset_hold(Object *obj, ResetType type)
{
    fake_accel_core_reset(&FAKE_ACCEL(obj)->core);
}

static const VMStateDescription fake_accel_vmstate = {
    .name = "fake-accel",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, FakeAccelState),
        VMSTATE_STRUCT(core, FakeAccelState, 1, vmstate_fake_accel_core,
                       FakeAccelCore),
        VMSTATE_END_OF_LIST()
    },
};

static const Property fake_accel_properties[] = {
    DEFINE_PROP_SIZE("mem-size", FakeAccelState, mem_size, 0),
    DEFINE_PROP_LINK("memdev", FakeAccelState, hostmem, TYPE_MEMORY_BACKEND,
                     HostMemoryBackend *),
};

/*
 * Fault injection knobs (docs/fault-injection.md).  Runtime QOM properties,
 * settable with qom-set after realize from QMP, HMP or a qtest.
 */

/* "OFF:LEN" (numbers in any base strtoull accepts) or "off" */
static void fake_accel_set_fault_window(Object *obj, const char *str,
                                        Error **errp)
{
    FakeAccelState *s = FAKE_ACCEL(obj);
    const char *end;
    uint64_t off, len;

    if (!strcmp(str, "off") || !*str) {
        fake_accel_core_set_window(&s->core, false, 0, 0);
        return;
    }
    if (qemu_strtou64(str, &end, 0, &off) || *end != ':' ||
        qemu_strtou64(end + 1, NULL, 0, &len)) {
        error_setg(errp, "x-fault-window: expected OFF:LEN or off, not '%s'",
                   str);
        return;
    }
    if (!fake_accel_core_set_window(&s->core, true, off, len)) {
        error_setg(errp, "x-fault-window: 0x%" PRIx64 "+0x%" PRIx64 " is "
                   "not a non-empty, 4 KiB aligned range inside BAR2 "
                   "(0x%" PRIx64 " bytes)", off, len, s->core.mem_size);
    }
}

static char *fake_accel_get_fault_window(Object *obj, Error **errp)
{
    FakeAccelState *s = FAKE_ACCEL(obj);

    if (!fake_accel_core_window_active(&s->core)) {
        return g_strdup("off");
    }
    return g_strdup_printf("0x%" PRIx64 ":0x%x", s->core.fault_off,
                           s->core.fault_len);
}

static uint32_t *fake_accel_fault_u32(Object *obj, const char *name)
{
    FakeAccelState *s = FAKE_ACCEL(obj);

    return !strcmp(name, "x-fault-dma-read") ? &s->core.inj_dma_read :
                                               &s->core.inj_dma_write;
}

static void fake_accel_get_fault_u32(Object *obj, Visitor *v,
                                     const char *name, void *opaque,
                                     Error **errp)
{
    visit_type_uint32(v, name, fake_accel_fault_u32(obj, name), errp);
}

static void fake_accel_set_fault_u32(Object *obj, Visitor *v,
                                     const char *name, void *opaque,
                                     Error **errp)
{
    visit_type_uint32(v, name, fake_accel_fault_u32(obj, name), errp);
}

static void fake_accel_get_fault_count(Object *obj, Visitor *v,
                                       const char *name, void *opaque,
                                       Error **errp)
{
    visit_type_uint64(v, name, &FAKE_ACCEL(obj)->core.inj_count, errp);
}

/* The counters of docs/specs/fake-accel.rst, for the host (QMP qom-get) */
static void fake_accel_get_p2p_write_bytes(Object *obj, Visitor *v,
                                           const char *name, void *opaque,
                                           Error **errp)
{
    visit_type_uint64(v, name, &FAKE_ACCEL(obj)->core.p2p_wr_bytes, errp);
}

static void fake_accel_get_crc_checks(Object *obj, Visitor *v,
                                      const char *name, void *opaque,
                                      Error **errp)
{
    visit_type_uint32(v, name, &FAKE_ACCEL(obj)->core.crc_checks, errp);
}

static void fake_accel_counters_class_init(ObjectClass *klass)
{
    object_class_property_add(klass, "p2p-write-bytes", "uint64",
                              fake_accel_get_p2p_write_bytes, NULL, NULL,
                              NULL);
    object_class_property_set_description(klass, "p2p-write-bytes",
        "Bytes other bus masters wrote into BAR2 since power-on "
        "(P2P_WR_BYTES)");
    object_class_property_add(klass, "crc-checks", "uint32",
                              fake_accel_get_crc_checks, NULL, NULL, NULL);
    object_class_property_set_description(klass, "crc-checks",
        "CRC commands completed without error since power-on (CRC_CHECKS)");
}

static void fake_accel_fault_class_init(ObjectClass *klass)
{
    object_class_property_add_str(klass, "x-fault-window",
                                  fake_accel_get_fault_window,
                                  fake_accel_set_fault_window);
    object_class_property_set_description(klass, "x-fault-window",
        "Fault window over BAR2: OFF:LEN, or off");
    object_class_property_add(klass, "x-fault-dma-read", "uint32",
                              fake_accel_get_fault_u32,
                              fake_accel_set_fault_u32, NULL, NULL);
    object_class_property_set_description(klass, "x-fault-dma-read",
        "Fail the next N engine DMA reads (4 KiB chunks)");
    object_class_property_add(klass, "x-fault-dma-write", "uint32",
                              fake_accel_get_fault_u32,
                              fake_accel_set_fault_u32, NULL, NULL);
    object_class_property_set_description(klass, "x-fault-dma-write",
        "Fail the next N engine DMA writes (4 KiB chunks)");
    object_class_property_add(klass, "x-fault-injected", "uint64",
                              fake_accel_get_fault_count, NULL, NULL, NULL);
    object_class_property_set_description(klass, "x-fault-injected",
        "Number of DMA faults injected so far");
}

static void fake_accel_class_init(ObjectClass *klass, const void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = fake_accel_realize;
    k->exit = fake_accel_exit;
    k->config_write = fake_accel_write_config;
    k->vendor_id = FACCEL_PCI_VENDOR_ID;
    k->device_id = FACCEL_PCI_DEVICE_ID;
    k->revision = FACCEL_PCI_REVISION;
    k->class_id = PCI_CLASS_PROCESSOR_CO;
    rc->phases.hold = fake_accel_reset_hold;
    dc->desc = "devmem-lab accelerator with BAR device memory";
    dc->vmsd = &fake_accel_vmstate;
    device_class_set_props(dc, fake_accel_properties);
    fake_accel_fault_class_init(klass);
    fake_accel_counters_class_init(klass);
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
