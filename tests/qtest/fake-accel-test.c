/*
 * QTest for fake-accel: identity and BARs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "../../hw/misc/fake-accel/fake-accel-regs.h"

typedef struct {
    QOSState *qs;
    QPCIDevice *dev;
    QPCIBar regs;
    QPCIBar mem;
    uint64_t regs_size;
    uint64_t mem_size;
} FAState;

static void find_dev(QPCIDevice *dev, int devfn, void *data)
{
    QPCIDevice **pdev = data;

    *pdev = dev;
}

static void fa_start(FAState *s, const char *extra)
{
    s->qs = qtest_pc_boot("-device fake-accel%s", extra);
    s->dev = NULL;
    qpci_device_foreach(s->qs->pcibus, FACCEL_PCI_VENDOR_ID,
                        FACCEL_PCI_DEVICE_ID, find_dev, &s->dev);
    g_assert_nonnull(s->dev);
    qpci_device_enable(s->dev);
    s->regs = qpci_iomap(s->dev, FACCEL_BAR_REGS, &s->regs_size);
    s->mem = qpci_iomap(s->dev, FACCEL_BAR_MEM, &s->mem_size);
}

static void fa_stop(FAState *s)
{
    g_free(s->dev);
    qtest_shutdown(s->qs);
}

static void test_identity(void)
{
    FAState s;

    fa_start(&s, ",mem-size=16M");
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, FACCEL_REG_ID), ==,
                    FACCEL_ID_MAGIC);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, FACCEL_REG_VERSION), ==,
                    FACCEL_VERSION);
    g_assert_cmpuint(s.regs_size, ==, FACCEL_BAR_REGS_SIZE);
    g_assert_cmpuint(s.mem_size, ==, 16 * 1024 * 1024);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, FACCEL_REG_MEM_SIZE_LO), ==,
                    16 * 1024 * 1024);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, FACCEL_REG_MEM_SIZE_HI), ==,
                    0);
    fa_stop(&s);
}

static void test_mem_rw(void)
{
    FAState s;
    uint8_t in[256], out[256];
    int i;

    fa_start(&s, ",mem-size=1M");
    for (i = 0; i < sizeof(in); i++) {
        in[i] = i * 7 + 3;
    }
    qpci_memwrite(s.dev, s.mem, 4096, in, sizeof(in));
    qpci_memread(s.dev, s.mem, 4096, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    fa_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/fake-accel/identity", test_identity);
    qtest_add_func("/fake-accel/mem-rw", test_mem_rw);
    return g_test_run();
}
