/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-nic register interface (the hardware contract of docs/specs/devmem-nic.rst).
 *
 * Included by the QEMU model and the qtests; the Linux driver's
 * devmem_nic_regs.h must agree with it (checked by scripts/check-headers).
 */
#ifndef HW_NET_DEVMEM_NIC_REGS_H
#define HW_NET_DEVMEM_NIC_REGS_H

/* PCI identity: 1af4:10f0-10ff is reserved for experimental devices. */
#define DMNIC_PCI_VENDOR_ID         0x1af4
#define DMNIC_PCI_DEVICE_ID         0x10f0
#define DMNIC_PCI_REVISION          0x01

/* BARs */
#define DMNIC_BAR_REGS              0       /* 64-bit MMIO, registers */
#define DMNIC_BAR_REGS_SIZE         0x10000
#define DMNIC_BAR_MSIX              4       /* 64-bit MMIO, MSI-X table + PBA */
#define DMNIC_BAR_MSIX_SIZE         0x4000

/* Global registers (32-bit, little endian) */
#define DMNIC_REG_ID                0x0000  /* RO: DMNIC_ID_MAGIC */
#define DMNIC_ID_MAGIC              0x444d4e43 /* "DMNC" */
#define DMNIC_REG_VERSION           0x0004  /* RO: spec version, major << 16 | minor */
#define DMNIC_VERSION               0x00000001
#define DMNIC_REG_NUM_QUEUES        0x0008  /* RO: number of RX/TX queue pairs */
#define DMNIC_REG_CTRL              0x0010  /* RW */
#define DMNIC_CTRL_RESET            (1u << 0)   /* W1: full device reset, self-clearing */
#define DMNIC_REG_STATUS            0x0014  /* RO */
#define DMNIC_STATUS_LINK_UP        (1u << 0)
#define DMNIC_REG_MAC_LO            0x0020  /* RO: MAC bytes 0..3 */
#define DMNIC_REG_MAC_HI            0x0024  /* RO: MAC bytes 4..5 */

#endif /* HW_NET_DEVMEM_NIC_REGS_H */
