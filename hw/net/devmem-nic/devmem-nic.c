/*
 * devmem-nic: an emulated PCIe NIC for device memory TCP testing.
 * QOM/PCI glue; the engine is in devmem-nic-core.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "qom/object.h"
#include "devmem-nic-core.h"
#include "devmem-nic-regs.h"
#include "trace.h"

#define TYPE_DEVMEM_NIC "devmem-nic"
OBJECT_DECLARE_SIMPLE_TYPE(DevmemNicState, DEVMEM_NIC)

#define DMNIC_PCIE_CAP_OFF  0xa0
#define DMNIC_MSIX_CAP_OFF  0x70

struct DevmemNicState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion msix;
    NICConf conf;
    uint32_t queues;
    DevmemNicCore core;
};

static uint64_t devmem_nic_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    DevmemNicState *s = opaque;

    return devmem_nic_core_read(&s->core, addr, size);
}

static void devmem_nic_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                  unsigned size)
{
    DevmemNicState *s = opaque;

    devmem_nic_core_write(&s->core, addr, val, size);
}

static const MemoryRegionOps devmem_nic_mmio_ops = {
    .read = devmem_nic_mmio_read,
    .write = devmem_nic_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static bool devmem_nic_nc_can_receive(NetClientState *nc)
{
    DevmemNicState *s = qemu_get_nic_opaque(nc);

    /* false while a frame is held (lossless RX with PAUSE_CTRL_TX) */
    return devmem_nic_mac_can_receive(&s->core);
}

static ssize_t devmem_nic_nc_receive(NetClientState *nc, const uint8_t *buf,
                                     size_t size)
{
    DevmemNicState *s = qemu_get_nic_opaque(nc);

    return devmem_nic_core_receive(&s->core, buf, size);
}

static void devmem_nic_nc_link_status_changed(NetClientState *nc)
{
    DevmemNicState *s = qemu_get_nic_opaque(nc);

    devmem_nic_core_link_changed(&s->core);
}

static NetClientInfo devmem_nic_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = devmem_nic_nc_can_receive,
    .receive = devmem_nic_nc_receive,
    .link_status_changed = devmem_nic_nc_link_status_changed,
};

static void devmem_nic_realize(PCIDevice *pdev, Error **errp)
{
    DevmemNicState *s = DEVMEM_NIC(pdev);
    DeviceState *dev = DEVICE(pdev);
    uint32_t i;
    int ret;

    if (s->queues < 1 || s->queues > DMNIC_MAX_QUEUES) {
        error_setg(errp, "devmem-nic: queues must be 1..%d, not %u",
                   DMNIC_MAX_QUEUES, s->queues);
        return;
    }
    if (s->core.gro_time_scale < 1 || s->core.gro_time_scale > 100) {
        error_setg(errp, "devmem-nic: x-gro-time-scale must be 1..100, "
                   "not %u", s->core.gro_time_scale);
        return;
    }

    /* MSI-X only, no INTx */
    pdev->config[PCI_INTERRUPT_PIN] = 0;

    memory_region_init_io(&s->mmio, OBJECT(s), &devmem_nic_mmio_ops, s,
                          "devmem-nic-mmio", DMNIC_BAR_REGS_SIZE);
    pci_register_bar(pdev, DMNIC_BAR_REGS, PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->mmio);

    memory_region_init(&s->msix, OBJECT(s), "devmem-nic-msix",
                       DMNIC_BAR_MSIX_SIZE);
    pci_register_bar(pdev, DMNIC_BAR_MSIX, PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->msix);

    ret = pcie_endpoint_cap_init(pdev, DMNIC_PCIE_CAP_OFF);
    if (ret < 0) {
        error_setg(errp, "devmem-nic: PCIe capability init failed");
        return;
    }

    /* One vector per queue pair plus one for admin/link. */
    ret = msix_init(pdev, s->queues + 1, &s->msix, DMNIC_BAR_MSIX,
                    DMNIC_MSIX_TABLE_OFFSET, &s->msix, DMNIC_BAR_MSIX,
                    DMNIC_MSIX_PBA_OFFSET, DMNIC_MSIX_CAP_OFF, errp);
    if (ret < 0) {
        pcie_cap_exit(pdev);
        return;
    }
    for (i = 0; i < s->queues + 1; i++) {
        msix_vector_use(pdev, i);
    }

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->core.nic = qemu_new_nic(&devmem_nic_net_info, &s->conf,
                               object_get_typename(OBJECT(s)), dev->id,
                               &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->core.nic), s->conf.macaddr.a);
    s->core.owner = pdev;
    s->core.num_queues = s->queues;
    memcpy(s->core.mac, s->conf.macaddr.a, sizeof(s->core.mac));
    devmem_nic_core_realize(&s->core);
    devmem_nic_fault_realize(&s->core);
    devmem_nic_core_link_init(&s->core);
    devmem_nic_core_reset(&s->core);
}

static void devmem_nic_exit(PCIDevice *pdev)
{
    DevmemNicState *s = DEVMEM_NIC(pdev);

    /*
     * Our frames that the peer queued (its RX hold, a full tap) carry
     * dmnic_tx_sent() as their callback: drop them while the device is
     * still here (as virtio-net does), qemu_del_nic() only purges the
     * peer's frames queued for us
     */
    qemu_purge_queued_packets(qemu_get_queue(s->core.nic));
    qemu_del_nic(s->core.nic);
    devmem_nic_fault_unrealize(&s->core);
    devmem_nic_core_unrealize(&s->core);
    msix_unuse_all_vectors(pdev);
    msix_uninit(pdev, &s->msix, &s->msix);
    pcie_cap_exit(pdev);
}

static void devmem_nic_reset_hold(Object *obj, ResetType type)
{
    DevmemNicState *s = DEVMEM_NIC(obj);

    devmem_nic_core_reset(&s->core);
}

static const VMStateDescription devmem_nic_vmstate = {
    .name = "devmem-nic",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, DevmemNicState),
        VMSTATE_MSIX(parent_obj, DevmemNicState),
        VMSTATE_STRUCT(core, DevmemNicState, 1, vmstate_devmem_nic_core,
                       DevmemNicCore),
        VMSTATE_END_OF_LIST()
    },
};

static const Property devmem_nic_properties[] = {
    DEFINE_NIC_PROPERTIES(DevmemNicState, conf),
    DEFINE_PROP_UINT32("queues", DevmemNicState, queues, 8),
    /* spec: Delivery; the lab's scripts set it under TCG */
    DEFINE_PROP_UINT32("x-gro-time-scale", DevmemNicState,
                       core.gro_time_scale, 1),
};

DevmemNicCore *devmem_nic_core_of(Object *obj)
{
    return &DEVMEM_NIC(obj)->core;
}

/* Host side, for tests: TX work is scheduled and not yet looked at */
static bool devmem_nic_get_tx_pending(Object *obj, Error **errp)
{
    return devmem_nic_core_tx_pending(&DEVMEM_NIC(obj)->core);
}

/* Host side, for tests: bytes of segment data buffers GRO holds */
static void devmem_nic_get_gro_mem(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    uint64_t val = DEVMEM_NIC(obj)->core.gro_mem;

    visit_type_uint64(v, name, &val, errp);
}

static void devmem_nic_class_init(ObjectClass *klass, const void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = devmem_nic_realize;
    k->exit = devmem_nic_exit;
    k->vendor_id = DMNIC_PCI_VENDOR_ID;
    k->device_id = DMNIC_PCI_DEVICE_ID;
    k->revision = DMNIC_PCI_REVISION;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    rc->phases.hold = devmem_nic_reset_hold;
    dc->desc = "devmem-lab NIC for device memory TCP";
    dc->vmsd = &devmem_nic_vmstate;
    device_class_set_props(dc, devmem_nic_properties);
    object_class_property_add_bool(klass, "x-tx-pending",
                                   devmem_nic_get_tx_pending, NULL);
    object_class_property_add(klass, "x-gro-mem", "uint64",
                              devmem_nic_get_gro_mem, NULL, NULL, NULL);
    devmem_nic_fault_class_init(klass);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo devmem_nic_info = {
    .name = TYPE_DEVMEM_NIC,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DevmemNicState),
    .class_init = devmem_nic_class_init,
    .interfaces = (const InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void devmem_nic_register_types(void)
{
    type_register_static(&devmem_nic_info);
}

type_init(devmem_nic_register_types)
