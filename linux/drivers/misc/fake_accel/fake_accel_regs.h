/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fake-accel register interface: the hardware contract of
 * docs/specs/fake-accel.rst.
 *
 * The Linux driver copy of QEMU's hw/misc/fake-accel/fake-accel-regs.h:
 * names and values must stay identical (checked by scripts/check-headers).
 * Bits use BIT() here, (1u << n) on the QEMU side.
 */
#ifndef _FAKE_ACCEL_REGS_H
#define _FAKE_ACCEL_REGS_H

#include <linux/bits.h>

#define FACCEL_PCI_VENDOR_ID        0x1af4
#define FACCEL_PCI_DEVICE_ID        0x10f1
#define FACCEL_PCI_REVISION         0x01

#define FACCEL_BAR_REGS             0       /* 32-bit MMIO, registers */
#define FACCEL_BAR_REGS_SIZE        0x1000
#define FACCEL_BAR_MEM              2       /* 64-bit prefetchable memory */

#define FACCEL_REG_ID               0x0000  /* RO: FACCEL_ID_MAGIC */
#define FACCEL_ID_MAGIC             0x46414343 /* "FACC" */
#define FACCEL_REG_VERSION          0x0004  /* RO: major << 16 | minor */
#define FACCEL_VERSION              0x00000002
#define FACCEL_REG_MEM_SIZE_LO      0x0008  /* RO: BAR2 size, low 32 bits */
#define FACCEL_REG_MEM_SIZE_HI      0x000c  /* RO: BAR2 size, high 32 bits */
#define FACCEL_REG_CTRL             0x0010  /* RW */
#define FACCEL_CTRL_RESET           BIT(0)   /* W1: reset, self-clearing */
#define FACCEL_REG_STATUS           0x0014  /* RO */
#define FACCEL_STATUS_READY         BIT(0)
#define FACCEL_STATUS_FAULT_ACTIVE  BIT(1)
#define FACCEL_STATUS_ENG_ERROR     BIT(2)
#define FACCEL_REG_SCRATCH          0x0018  /* RW, free for software */
#define FACCEL_REG_RESET_COUNT      0x001c  /* RO: resets since power-on */
/* Counters: monotonic since power-on, not cleared by any reset */
#define FACCEL_REG_P2P_WR_BYTES_LO  0x0020  /* RO: bytes peers wrote to BAR2 */
#define FACCEL_REG_P2P_WR_BYTES_HI  0x0024  /* RO: the same, bits 63:32 */
#define FACCEL_REG_CRC_CHECKS       0x0028  /* RO: CRC commands that passed */

/* Copy/CRC engine */
#define FACCEL_REG_ENG_SRC_LO       0x0100
#define FACCEL_REG_ENG_SRC_HI       0x0104
#define FACCEL_REG_ENG_DST_LO       0x0108
#define FACCEL_REG_ENG_DST_HI       0x010c
#define FACCEL_REG_ENG_LEN          0x0110
#define FACCEL_REG_ENG_CMD          0x0114  /* write starts a command */
#define FACCEL_ENG_OP_MASK          0xfu
#define FACCEL_ENG_OP_COPY          1u
#define FACCEL_ENG_OP_CRC           2u
#define FACCEL_ENG_OP_FILL          3u
#define FACCEL_ENG_CMD_SRC_HOST     BIT(8)   /* SRC is a DMA address */
#define FACCEL_ENG_CMD_DST_HOST     BIT(9)   /* DST is a DMA address */
#define FACCEL_ENG_CMD_RSVD_MASK    0xfffffcf0u
#define FACCEL_REG_ENG_STATUS       0x0118  /* RO */
#define FACCEL_ENG_STATUS_DONE      BIT(0)
#define FACCEL_ENG_STATUS_ERROR     BIT(1)
#define FACCEL_ENG_STATUS_CODE_SHIFT 8
#define FACCEL_ENG_STATUS_CODE_MASK 0xff00u
#define FACCEL_ENG_ERR_BAD_CMD      1u
#define FACCEL_ENG_ERR_RANGE        2u
#define FACCEL_ENG_ERR_DMA          3u
#define FACCEL_ENG_ERR_FAULT        4u
#define FACCEL_REG_ENG_CRC          0x011c  /* RO: CRC-32 (IEEE, zlib) */
#define FACCEL_REG_ENG_FILL         0x0120  /* RW: FILL pattern */
#define FACCEL_REG_ENG_DONE_LEN     0x0124  /* RO */
#define FACCEL_REG_ENG_COUNT        0x0128  /* RO */
#define FACCEL_ENG_CHUNK            0x1000  /* engine moves 4 KiB at a time */

/* Fault window in BAR2 */
#define FACCEL_REG_FAULT_OFF_LO     0x0200
#define FACCEL_REG_FAULT_OFF_HI     0x0204
#define FACCEL_REG_FAULT_LEN        0x0208
#define FACCEL_REG_FAULT_CTRL       0x020c
#define FACCEL_FAULT_CTRL_ENABLE    BIT(0)
#define FACCEL_REG_FAULT_HITS       0x0210  /* RW: any write clears */
#define FACCEL_FAULT_ALIGN          0x1000

#endif /* _FAKE_ACCEL_REGS_H */
