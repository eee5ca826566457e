/*
 * QTest for devmem-nic: identity and BARs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"

typedef struct {
    QOSState *qs;
    QPCIDevice *dev;
    QPCIBar regs;
    uint64_t regs_size;
} DNState;

static void find_dev(QPCIDevice *dev, int devfn, void *data)
{
    QPCIDevice **pdev = data;

    *pdev = dev;
}

static void dn_start(DNState *s, const char *extra)
{
    s->qs = qtest_pc_boot("-netdev hubport,id=n0,hubid=0 "
                          "-device devmem-nic,netdev=n0,"
                          "mac=52:54:00:12:34:56%s", extra);
    s->dev = NULL;
    qpci_device_foreach(s->qs->pcibus, DMNIC_PCI_VENDOR_ID,
                        DMNIC_PCI_DEVICE_ID, find_dev, &s->dev);
    g_assert_nonnull(s->dev);
    qpci_device_enable(s->dev);
    s->regs = qpci_iomap(s->dev, DMNIC_BAR_REGS, &s->regs_size);
}

static void dn_stop(DNState *s)
{
    g_free(s->dev);
    qtest_shutdown(s->qs);
}

static void test_identity(void)
{
    DNState s;

    dn_start(&s, ",queues=4");
    g_assert_cmpuint(s.regs_size, ==, DMNIC_BAR_REGS_SIZE);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, DMNIC_REG_ID), ==,
                    DMNIC_ID_MAGIC);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, DMNIC_REG_VERSION), ==,
                    DMNIC_VERSION);
    g_assert_cmpuint(qpci_io_readl(s.dev, s.regs, DMNIC_REG_NUM_QUEUES), ==,
                     4);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, DMNIC_REG_MAC_LO), ==,
                    0x12005452);
    g_assert_cmphex(qpci_io_readl(s.dev, s.regs, DMNIC_REG_MAC_HI), ==,
                    0x5634);
    dn_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/devmem-nic/identity", test_identity);
    return g_test_run();
}
