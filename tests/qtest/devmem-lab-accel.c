/*
 * devmem-lab qtest helpers for fake-accel: boot and map, registers, the
 * copy/CRC engine, and reference data (docs/specs/fake-accel.rst).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "devmem-lab-util.h"
#include "devmem-lab-accel.h"
#include "../../hw/misc/fake-accel/fake-accel-regs.h"

void fa_map(FAState *s, QPCIDevice *dev)
{
    g_assert_nonnull(dev);
    s->dev = dev;
    qpci_device_enable(dev);
    s->regs = qpci_iomap(dev, FACCEL_BAR_REGS, &s->regs_size);
    s->mem = qpci_iomap(dev, FACCEL_BAR_MEM, &s->mem_size);
}

void fa_attach(FAState *s, QOSState *qs, QPCIDevice *dev)
{
    memset(s, 0, sizeof(*s));
    s->qs = qs;
    s->qts = qs->qts;
    fa_map(s, dev);
}

void fa_boot(FAState *s, int devfn, const char *args)
{
    s->qs = qtest_pc_boot("-nodefaults %s", args);
    s->qts = s->qs->qts;
    fa_map(s, devfn < 0 ?
           dl_pci_find(s->qs->pcibus, FACCEL_PCI_VENDOR_ID,
                       FACCEL_PCI_DEVICE_ID) :
           qpci_device_find(s->qs->pcibus, devfn));
}

void fa_stop(FAState *s)
{
    g_free(s->dev);
    qtest_shutdown(s->qs);
    if (s->log) {
        unlink(s->log);
        g_free(s->log);
    }
}

uint32_t fa_rd(FAState *s, uint32_t reg)
{
    return qpci_io_readl(s->dev, s->regs, reg);
}

void fa_wr(FAState *s, uint32_t reg, uint32_t val)
{
    qpci_io_writel(s->dev, s->regs, reg, val);
}

uint32_t fa_engine(FAState *s, uint32_t cmd, uint64_t src, uint64_t dst,
                   uint32_t len)
{
    fa_wr(s, FACCEL_REG_ENG_SRC_LO, src);
    fa_wr(s, FACCEL_REG_ENG_SRC_HI, src >> 32);
    fa_wr(s, FACCEL_REG_ENG_DST_LO, dst);
    fa_wr(s, FACCEL_REG_ENG_DST_HI, dst >> 32);
    fa_wr(s, FACCEL_REG_ENG_LEN, len);
    fa_wr(s, FACCEL_REG_ENG_CMD, cmd);
    return fa_rd(s, FACCEL_REG_ENG_STATUS);
}

uint32_t fa_eng_err(uint32_t code)
{
    return FACCEL_ENG_STATUS_DONE | FACCEL_ENG_STATUS_ERROR |
           (code << FACCEL_ENG_STATUS_CODE_SHIFT);
}

void fa_expect_log(FAState *s, const char *needle)
{
    dl_expect_log(s->log, &s->log_seen, needle);
}

void fa_fill_pattern(uint8_t *buf, size_t len, unsigned seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        buf[i] = (i * 131 + seed * 7 + (i >> 8)) & 0xff;
    }
}

uint32_t fa_ref_crc32(const uint8_t *p, size_t len)
{
    uint32_t crc = 0xffffffff;
    size_t i;
    int b;

    for (i = 0; i < len; i++) {
        crc ^= p[i];
        for (b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
        }
    }
    return ~crc;
}
