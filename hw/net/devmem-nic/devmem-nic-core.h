/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-nic core engine: register file and data path, without QOM.
 */
#ifndef HW_NET_DEVMEM_NIC_CORE_H
#define HW_NET_DEVMEM_NIC_CORE_H

#include "net/net.h"

typedef struct DevmemNicCore {
    PCIDevice *owner;
    NICState *nic;
    uint32_t num_queues;
    uint8_t mac[6];
    uint32_t ctrl;
} DevmemNicCore;

void devmem_nic_core_reset(DevmemNicCore *core);
uint64_t devmem_nic_core_read(DevmemNicCore *core, hwaddr addr, unsigned size);
void devmem_nic_core_write(DevmemNicCore *core, hwaddr addr, uint64_t val,
                           unsigned size);
ssize_t devmem_nic_core_receive(DevmemNicCore *core, const uint8_t *buf,
                                size_t size);
bool devmem_nic_core_link_up(DevmemNicCore *core);

#endif /* HW_NET_DEVMEM_NIC_CORE_H */
