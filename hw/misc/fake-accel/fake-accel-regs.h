/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake-accel register interface (the hardware contract of docs/specs/fake-accel.rst).
 *
 * Included by the QEMU model and the qtests; the Linux driver's
 * fake_accel_regs.h must agree with it (checked by scripts/check-headers).
 */
#ifndef HW_MISC_FAKE_ACCEL_REGS_H
#define HW_MISC_FAKE_ACCEL_REGS_H

#define FACCEL_PCI_VENDOR_ID        0x1af4
#define FACCEL_PCI_DEVICE_ID        0x10f1
#define FACCEL_PCI_REVISION         0x01

#define FACCEL_BAR_REGS             0       /* 32-bit MMIO, registers */
#define FACCEL_BAR_REGS_SIZE        0x1000
#define FACCEL_BAR_MEM              2       /* 64-bit prefetchable device memory */

#define FACCEL_REG_ID               0x0000  /* RO: FACCEL_ID_MAGIC */
#define FACCEL_ID_MAGIC             0x46414343 /* "FACC" */
#define FACCEL_REG_VERSION          0x0004  /* RO: major << 16 | minor */
#define FACCEL_VERSION              0x00000001
#define FACCEL_REG_MEM_SIZE_LO      0x0008  /* RO: BAR2 size, low 32 bits */
#define FACCEL_REG_MEM_SIZE_HI      0x000c  /* RO: BAR2 size, high 32 bits */
#define FACCEL_REG_CTRL             0x0010  /* RW */
#define FACCEL_CTRL_RESET           (1u << 0)   /* W1: reset, self-clearing */
#define FACCEL_REG_STATUS           0x0014  /* RO */
#define FACCEL_STATUS_READY         (1u << 0)

#endif /* HW_MISC_FAKE_ACCEL_REGS_H */
