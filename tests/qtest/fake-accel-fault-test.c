/*
 * QTest fault scenarios for fake-accel: the x-fault-* QOM knobs
 * (docs/fault-injection.md) and QEMU's own means (bus master off, reset,
 * hot unplug, stop/cont, migration to a file), plus every bad input a
 * guest can give, each checked for its guest-error log line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "qobject/qdict.h"
#include "standard-headers/linux/pci_regs.h"
#include "devmem-lab-util.h"
#include "devmem-lab-accel.h"
#include "../../hw/misc/fake-accel/fake-accel-regs.h"

#define FA_QOM              "/machine/peripheral/acc"
#define FA_SLOT_B           5

/*
 * Boots a pc machine with fake-accel "acc" in slot 4, more @args, a guest
 * error and fault trace log.
 */
static void ff_start(FAState *s, const char *args)
{
    g_autofree char *all = NULL;

    memset(s, 0, sizeof(*s));
    s->log = g_strdup_printf("%s/faccel-fault-%d-%p.log", g_get_tmp_dir(),
                             getpid(), s);
    all = g_strdup_printf("-d guest_errors,invalid_mem -D %s "
                          "-trace fake_accel_fault_inject* "
                          "-device fake-accel,id=acc,addr=0x4,mem-size=1M %s",
                          s->log, args ? args : "");
    fa_boot(s, QPCI_DEVFN(4, 0), all);
}

/* ------------------------------------------------------------------ */
/* QOM knobs                                                           */
/* ------------------------------------------------------------------ */

/* x-fault-window from QMP: same effect as the FAULT_* registers */
static void test_qom_window(void)
{
    uint8_t in[4096], out[4096];
    g_autofree char *v = NULL;
    FAState s;

    ff_start(&s, NULL);
    fa_fill_pattern(in, sizeof(in), 3);
    qpci_memwrite(s.dev, s.mem, 0x8000, in, sizeof(in));
    v = dl_qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "off");

    dl_qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x8000:0x2000");
    fa_expect_log(&s, "fake_accel_fault_inject_window");
    g_free(v);
    v = dl_qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x8000:0x2000");
    /* guest-visible exactly as if the driver had programmed it */
    g_assert_true(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_OFF_LO), ==, 0x8000);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_LEN), ==, 0x2000);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==,
                    FACCEL_FAULT_CTRL_ENABLE);
    /* the documented reaction: bus errors, hits, engine code FAULT */
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x9ffc), ==, 0xffffffff);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 1);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x7000, 0, 0x1001), ==,
                    fa_eng_err(FACCEL_ENG_ERR_FAULT));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 2);
    fa_expect_log(&s, "hits the fault window");

    /* invalid windows are refused and leave the old one in place */
    dl_qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0x8100:0x1000");
    dl_qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0x8000:0");
    dl_qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0xff000:0x2000");
    dl_qom_set_str_fails(s.qts, FA_QOM, "x-fault-window",
                         "0x0:0x100000000");
    dl_qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "banana");
    dl_qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0x1000-0x1000");
    g_free(v);
    v = dl_qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x8000:0x2000");

    /* the guest may move it; QOM reports what is in effect */
    fa_wr(&s, FACCEL_REG_FAULT_OFF_LO, 0x10000);
    g_free(v);
    v = dl_qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x10000:0x2000");

    /* off: memory under the window kept its content */
    dl_qom_set_str(s.qts, FA_QOM, "x-fault-window", "off");
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    qpci_memread(s.dev, s.mem, 0x8000, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    fa_stop(&s);
}

/* the same knob from the human monitor */
static void test_hmp_window(void)
{
    g_autofree char *r = NULL;
    g_autofree char *v = NULL;
    FAState s;

    ff_start(&s, NULL);
    r = qtest_hmp(s.qts, "qom-set " FA_QOM " x-fault-window 0x3000:0x1000");
    g_assert_cmpstr(r, ==, "");
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x3000), ==, 0xffffffff);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 1);
    g_free(r);
    r = qtest_hmp(s.qts, "qom-get " FA_QOM " x-fault-window");
    g_assert_nonnull(strstr(r, "0x3000:0x1000"));
    g_free(r);
    r = qtest_hmp(s.qts, "qom-set " FA_QOM " x-fault-dma-write 2");
    g_assert_cmpstr(r, ==, "");
    g_assert_cmpuint(dl_qom_get_uint(s.qts, FA_QOM, "x-fault-dma-write"), ==,
                     2);
    g_free(r);
    r = qtest_hmp(s.qts, "qom-set " FA_QOM " x-fault-window off");
    g_assert_cmpstr(r, ==, "");
    v = dl_qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "off");
    fa_stop(&s);
}

/* x-fault-dma-read/-write: the next N engine DMA chunks fail */
static void test_qom_dma(void)
{
    const uint32_t len = 3 * FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    g_autofree uint8_t *out = g_malloc0(len);
    uint64_t host;
    FAState s;

    ff_start(&s, NULL);
    fa_fill_pattern(in, len, 5);
    host = guest_alloc(&s.qs->alloc, len);
    qtest_memwrite(s.qts, host, in, len);

    /* one read fault: the first chunk of a host -> BAR2 copy fails */
    dl_qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 1);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0x10000, len), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, 0);
    g_assert_true(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_ENG_ERROR);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_COUNT), ==, 0);
    fa_expect_log(&s, "fake_accel_fault_inject_dma");
    fa_expect_log(&s, "engine DMA read");
    g_assert_cmpuint(dl_qom_get_uint(s.qts, FA_QOM, "x-fault-dma-read"), ==, 0);
    g_assert_cmpuint(dl_qom_get_uint(s.qts, FA_QOM, "x-fault-injected"), ==, 1);
    /* used up: the retry works */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0x10000, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));

    /*
     * Write faults survive a device reset (they are host state), and hit
     * the first chunk: BAR2 -> host copy fails with nothing written.
     */
    dl_qom_set_uint(s.qts, FA_QOM, "x-fault-dma-write", 2);
    fa_wr(&s, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(dl_qom_get_uint(s.qts, FA_QOM, "x-fault-dma-write"), ==,
                     2);
    qtest_memset(s.qts, host, 0, len);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_DST_HOST,
                              0x10000, host, len), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, 0);
    qtest_memread(s.qts, host, out, len);
    g_assert_true(buffer_is_zero(out, len));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                              0, host, 16), ==, fa_eng_err(FACCEL_ENG_ERR_DMA));
    /* BAR2-only commands never consume a DMA fault */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x10000, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmpuint(dl_qom_get_uint(s.qts, FA_QOM, "x-fault-injected"), ==, 3);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_DST_HOST,
                              0x10000, host, len), ==, FACCEL_ENG_STATUS_DONE);
    qtest_memread(s.qts, host, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* disarming works */
    dl_qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 5);
    dl_qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 0);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    fa_stop(&s);
}

/* ------------------------------------------------------------------ */
/* QEMU's own means                                                    */
/* ------------------------------------------------------------------ */

static void ff_start_pair(FAState *a, FAState *b)
{
    ff_start(a, "-device fake-accel,id=accb,addr=0x5,mem-size=1M");
    fa_attach(b, a->qs,
              qpci_device_find(a->qs->pcibus, QPCI_DEVFN(FA_SLOT_B, 0)));
}

/*
 * Peer traffic: A's engine copies host memory into B's BAR2 chunk by
 * chunk; A's bus mastering goes off between commands.
 */
static void test_bus_master_off(void)
{
    const uint32_t len = 4 * FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    g_autofree uint8_t *out = g_malloc(len);
    uint64_t host;
    FAState a, b;
    int i;

    ff_start_pair(&a, &b);
    fa_fill_pattern(in, len, 11);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);

    for (i = 0; i < 4; i++) {
        uint32_t off = i * FACCEL_ENG_CHUNK;
        uint32_t st;

        dl_set_bus_master(a.dev, i != 2);
        st = fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                       FACCEL_ENG_CMD_DST_HOST, host + off, b.mem.addr + off,
                       FACCEL_ENG_CHUNK);
        if (i == 2) {
            g_assert_cmphex(st, ==, fa_eng_err(FACCEL_ENG_ERR_DMA));
            g_assert_cmpuint(fa_rd(&a, FACCEL_REG_ENG_DONE_LEN), ==, 0);
            fa_expect_log(&a, "engine DMA read");
            /* BAR2-only commands need no bus mastering */
            g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_FILL, 0, 0, 64), ==,
                            FACCEL_ENG_STATUS_DONE);
        } else {
            g_assert_cmphex(st, ==, FACCEL_ENG_STATUS_DONE);
        }
    }
    g_assert_cmpuint(fa_rd(&a, FACCEL_REG_ENG_COUNT), ==, 4);
    /* chunks 0, 1, 3 arrived; 2 was never written */
    qpci_memread(b.dev, b.mem, 0, out, len);
    g_assert_cmpmem(in, 2 * FACCEL_ENG_CHUNK, out, 2 * FACCEL_ENG_CHUNK);
    g_assert_true(buffer_is_zero(out + 2 * FACCEL_ENG_CHUNK,
                                 FACCEL_ENG_CHUNK));
    g_assert_cmpmem(in + 3 * FACCEL_ENG_CHUNK, FACCEL_ENG_CHUNK,
                    out + 3 * FACCEL_ENG_CHUNK, FACCEL_ENG_CHUNK);
    /* re-enabled: the missing chunk goes through */
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST,
                              host + 2 * FACCEL_ENG_CHUNK,
                              b.mem.addr + 2 * FACCEL_ENG_CHUNK,
                              FACCEL_ENG_CHUNK), ==, FACCEL_ENG_STATUS_DONE);
    qpci_memread(b.dev, b.mem, 0, out, len);
    g_assert_cmpmem(in, len, out, len);
    g_free(b.dev);
    fa_stop(&a);
}

/*
 * Reset during traffic: FLR of the target, CTRL.RESET and system_reset
 * of the initiator, between peer copies.  Device memory is kept (spec:
 * "Device memory keeps its content"), registers and the window are not.
 */
static void test_reset_mid_traffic(void)
{
    const uint32_t len = 2 * FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    g_autofree uint8_t *out = g_malloc(len);
    uint32_t count_a, count_b;
    uint16_t devctl;
    uint64_t host;
    uint8_t pos;
    FAState a, b;

    ff_start_pair(&a, &b);
    fa_fill_pattern(in, len, 12);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);
    count_a = fa_rd(&a, FACCEL_REG_RESET_COUNT);
    count_b = fa_rd(&b, FACCEL_REG_RESET_COUNT);

    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host, b.mem.addr, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    /* FLR of the target B with its window armed */
    dl_qom_set_str(b.qts, "/machine/peripheral/accb", "x-fault-window",
                   "0x1000:0x1000");
    pos = qpci_find_capability(b.dev, PCI_CAP_ID_EXP, 0);
    devctl = qpci_config_readw(b.dev, pos + PCI_EXP_DEVCTL);
    qpci_config_writew(b.dev, pos + PCI_EXP_DEVCTL,
                       devctl | PCI_EXP_DEVCTL_BCR_FLR);
    /* FLR cleared decoding: peer writes to the old address fail */
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host, b.mem.addr, 16),
                    ==, fa_eng_err(FACCEL_ENG_ERR_DMA));
    fa_map(&b, b.dev);
    g_assert_cmpuint(fa_rd(&b, FACCEL_REG_RESET_COUNT), ==, count_b + 1);
    g_assert_false(fa_rd(&b, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    qpci_memread(b.dev, b.mem, 0, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* CTRL.RESET of the initiator between two commands */
    fa_wr(&a, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(fa_rd(&a, FACCEL_REG_ENG_COUNT), ==, 0);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              b.mem.addr, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&a, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));

    /* system reset: both count it, both keep device memory */
    qtest_system_reset(a.qts);
    fa_map(&a, a.dev);
    fa_map(&b, b.dev);
    g_assert_cmpuint(fa_rd(&a, FACCEL_REG_RESET_COUNT), ==, count_a + 2);
    g_assert_cmpuint(fa_rd(&b, FACCEL_REG_RESET_COUNT), ==, count_b + 2);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              b.mem.addr, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&a, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));
    g_free(b.dev);
    fa_stop(&a);
}

/*
 * Hot unplug of the peer (ACPI eject on pc) while A keeps DMAing into
 * where its BAR2 was: A reports DMA errors, QEMU lives on; a new device
 * plugged into the same slot works.
 */
static void test_hot_unplug(void)
{
    const uint32_t len = FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    uint64_t host, old_bar;
    QDict *rsp;
    FAState a, b;

    ff_start_pair(&a, &b);
    fa_fill_pattern(in, len, 13);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);
    old_bar = b.mem.addr;
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host, old_bar, len),
                    ==, FACCEL_ENG_STATUS_DONE);

    qpci_unplug_acpi_device_test(a.qts, "accb", FA_SLOT_B);
    g_free(b.dev);
    rsp = qtest_qmp(a.qts, "{'execute': 'qom-get', 'arguments': {"
                    "'path': '/machine/peripheral/accb', "
                    "'property': 'x-fault-window'}}");
    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);

    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host, old_bar, len),
                    ==, fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              old_bar, 0, len), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    fa_expect_log(&a, "engine DMA");
    g_assert_true(qtest_probe_child(a.qts));

    /* re-plug into the same slot */
    qtest_qmp_device_add(a.qts, "fake-accel", "accb2",
                         "{'addr': '0x5', 'mem-size': 1048576}");
    fa_attach(&b, a.qs,
              qpci_device_find(a.qs->pcibus, QPCI_DEVFN(FA_SLOT_B, 0)));
    g_assert_cmphex(fa_rd(&b, FACCEL_REG_ID), ==, FACCEL_ID_MAGIC);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host, b.mem.addr, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_CRC, 0, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&b, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));
    g_free(b.dev);
    fa_stop(&a);
}

/* stop/cont: nothing changes while stopped; knobs work while stopped */
static void test_stop_cont(void)
{
    uint8_t in[4096], out[4096];
    g_autofree char *v = NULL;
    FAState s;

    ff_start(&s, NULL);
    fa_fill_pattern(in, sizeof(in), 14);
    qpci_memwrite(s.dev, s.mem, 0x20000, in, sizeof(in));
    fa_wr(&s, FACCEL_REG_SCRATCH, 0x600dcafe);
    dl_qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x1000:0x1000");

    qtest_qmp_assert_success(s.qts, "{'execute': 'stop'}");
    qtest_qmp_eventwait(s.qts, "STOP");
    dl_qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x2000:0x1000");
    dl_qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 1);
    qtest_qmp_assert_success(s.qts, "{'execute': 'cont'}");
    qtest_qmp_eventwait(s.qts, "RESUME");

    g_assert_cmphex(fa_rd(&s, FACCEL_REG_SCRATCH), ==, 0x600dcafe);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_OFF_LO), ==, 0x2000);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x1000), ==, 0);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x2000), ==, 0xffffffff);
    qpci_memread(s.dev, s.mem, 0x20000, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    g_assert_cmpuint(dl_qom_get_uint(s.qts, FA_QOM, "x-fault-dma-read"), ==, 1);
    v = dl_qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x2000:0x1000");
    fa_stop(&s);
}

/*
 * Migration through a file (save, then load in a second QEMU): registers,
 * the window (guest state, set here through QOM) and device memory are
 * kept; armed QOM DMA faults are host state and are not migrated.
 */
static void test_migration_file(void)
{
    g_autofree char *path = g_strdup_printf("%s/faccel-fault-mig-%d",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *v = NULL;
    uint8_t in[8192];
    uint32_t count, crc;
    QDict *rsp;
    FAState s, d;

    ff_start(&s, NULL);
    fa_fill_pattern(in, sizeof(in), 15);
    qpci_memwrite(s.dev, s.mem, 0x40000, in, sizeof(in));
    fa_wr(&s, FACCEL_REG_SCRATCH, 0xfeedf00d);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x40000, 0, sizeof(in)),
                    ==, FACCEL_ENG_STATUS_DONE);
    crc = fa_rd(&s, FACCEL_REG_ENG_CRC);
    dl_qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x5000:0x3000");
    dl_qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 7);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x6000), ==, 0xffffffff);
    count = fa_rd(&s, FACCEL_REG_RESET_COUNT);

    rsp = qtest_qmp(s.qts, "{'execute': 'migrate', 'arguments': {"
                    "'uri': %s}}", uri);
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    dl_wait_migration(s.qts);

    memset(&d, 0, sizeof(d));
    d.qs = dl_boot_incoming(uri, "-nodefaults -device fake-accel,id=acc,"
                            "addr=0x4,mem-size=1M");
    d.qts = d.qs->qts;
    dl_wait_migration(d.qts);
    qtest_qmp_assert_success(d.qts, "{'execute': 'cont'}");
    unlink(path);
    d.dev = qpci_device_find(d.qs->pcibus, QPCI_DEVFN(4, 0));
    d.regs = s.regs;
    d.mem = s.mem;

    g_assert_cmphex(fa_rd(&d, FACCEL_REG_SCRATCH), ==, 0xfeedf00d);
    g_assert_cmphex(fa_rd(&d, FACCEL_REG_ENG_CRC), ==, crc);
    g_assert_cmpuint(fa_rd(&d, FACCEL_REG_ENG_COUNT), ==, 1);
    g_assert_cmpuint(fa_rd(&d, FACCEL_REG_RESET_COUNT), ==, count);
    g_assert_cmpuint(fa_rd(&d, FACCEL_REG_FAULT_HITS), ==, 1);
    v = dl_qom_get_str(d.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x5000:0x3000");
    g_assert_cmphex(qpci_io_readl(d.dev, d.mem, 0x7ffc), ==, 0xffffffff);
    g_assert_cmphex(qpci_io_readl(d.dev, d.mem, 0x8000), ==, 0);
    g_assert_cmpuint(dl_qom_get_uint(d.qts, FA_QOM, "x-fault-dma-read"), ==, 0);
    g_assert_cmphex(fa_engine(&d, FACCEL_ENG_OP_CRC, 0x40000, 0, sizeof(in)),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&d, FACCEL_REG_ENG_CRC), ==, crc);
    g_assert_cmphex(crc, ==, fa_ref_crc32(in, sizeof(in)));
    fa_stop(&d);
    fa_stop(&s);
}

/* ------------------------------------------------------------------ */
/* Bad guest input: QEMU survives and logs a guest error               */
/* ------------------------------------------------------------------ */

static void test_guest_errors(void)
{
    uint64_t host;
    FAState s;

    ff_start(&s, NULL);
    host = guest_alloc(&s.qs->alloc, 4096);

    /* registers */
    g_assert_cmphex(fa_rd(&s, 0x7fc), ==, 0);
    fa_expect_log(&s, "read of unknown register 0x7fc");
    fa_wr(&s, 0x300, 1);
    fa_expect_log(&s, "write to unknown or read-only register 0x300");
    fa_wr(&s, FACCEL_REG_ID, 0);
    fa_expect_log(&s, "write to unknown or read-only register 0x0");
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ID), ==, FACCEL_ID_MAGIC);
    fa_wr(&s, FACCEL_REG_CTRL, 0x80000000);
    fa_expect_log(&s, "reserved CTRL bits");
    fa_wr(&s, FACCEL_REG_FAULT_CTRL, 0x2);
    fa_expect_log(&s, "reserved FAULT_CTRL bits");
    /* sub-word and 64-bit BAR0 accesses are refused by the bus */
    qpci_io_writeb(s.dev, s.regs, FACCEL_REG_SCRATCH, 0x55);
    fa_expect_log(&s, "Invalid write at addr 0x18, size 1");
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_SCRATCH), ==, 0);
    qpci_io_writew(s.dev, s.regs, FACCEL_REG_SCRATCH + 2, 0x55);
    fa_expect_log(&s, "Invalid write at addr 0x1A, size 2");
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_SCRATCH), ==, 0);
    /* a 64-bit access is split in two: the upper half is RESET_COUNT */
    qpci_io_writeq(s.dev, s.regs, FACCEL_REG_SCRATCH, ~0ULL);
    fa_expect_log(&s, "read-only register 0x1c");

    /* fault window */
    fa_wr(&s, FACCEL_REG_FAULT_OFF_LO, 0x123);
    fa_wr(&s, FACCEL_REG_FAULT_LEN, 0x1000);
    fa_wr(&s, FACCEL_REG_FAULT_CTRL, FACCEL_FAULT_CTRL_ENABLE);
    fa_expect_log(&s, "invalid fault window");
    fa_wr(&s, FACCEL_REG_FAULT_OFF_LO, 0);
    fa_wr(&s, FACCEL_REG_FAULT_OFF_HI, 0xffffffff);
    fa_wr(&s, FACCEL_REG_FAULT_CTRL, FACCEL_FAULT_CTRL_ENABLE);
    fa_expect_log(&s, "invalid fault window");
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    fa_wr(&s, FACCEL_REG_FAULT_OFF_HI, 0);

    /* engine commands */
    g_assert_cmphex(fa_engine(&s, 0xf, 0, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    fa_expect_log(&s, "bad engine command");
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | 0x80000000u, 0, 0, 16),
                    ==, fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    fa_expect_log(&s, "bad engine command");
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY, 0, s.mem_size - 1, 2),
                    ==, fa_eng_err(FACCEL_ENG_ERR_RANGE));
    fa_expect_log(&s, "outside device memory");
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, ~0ULL, 0, 16),
                    ==, fa_eng_err(FACCEL_ENG_ERR_RANGE));
    fa_expect_log(&s, "outside device memory");
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                              0, ~0ULL - 8, 64), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    fa_expect_log(&s, "engine DMA write");
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              FA_UNMAPPED_ADDR, 0, 4096), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    fa_expect_log(&s, "engine DMA read");
    /* DMA into its own register BAR: blocked re-entrancy is a DMA error */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                              0, s.regs.addr + FACCEL_REG_CTRL, 4), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    fa_expect_log(&s, "engine DMA write");
    /* a huge host copy is refused up front (the engine is synchronous) */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0, 0xffffffff), ==,
                    fa_eng_err(FACCEL_ENG_ERR_RANGE));
    fa_expect_log(&s, "above the 0x1000000 limit");

    /* still alive and working */
    g_assert_true(qtest_probe_child(s.qts));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0, 4096), ==, FACCEL_ENG_STATUS_DONE);
    fa_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/fake-accel-fault/qom/window", test_qom_window);
    qtest_add_func("/fake-accel-fault/hmp/window", test_hmp_window);
    qtest_add_func("/fake-accel-fault/qom/dma", test_qom_dma);
    qtest_add_func("/fake-accel-fault/bus-master-off", test_bus_master_off);
    qtest_add_func("/fake-accel-fault/reset-mid-traffic",
                   test_reset_mid_traffic);
    qtest_add_func("/fake-accel-fault/hot-unplug", test_hot_unplug);
    qtest_add_func("/fake-accel-fault/stop-cont", test_stop_cont);
    qtest_add_func("/fake-accel-fault/migration-file", test_migration_file);
    qtest_add_func("/fake-accel-fault/guest-errors", test_guest_errors);
    return g_test_run();
}
