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
#include "../../hw/misc/fake-accel/fake-accel-regs.h"

#define FA_UNMAPPED_ADDR    0x40000000ULL
#define FA_QOM              "/machine/peripheral/acc"
#define FA_SLOT_B           5

typedef struct {
    QOSState *qs;
    QTestState *qts;
    QPCIDevice *dev;
    QPCIBar regs;
    QPCIBar mem;
    uint64_t mem_size;
    char *log;              /* -D file, or NULL */
    size_t log_seen;        /* bytes of it already matched */
} FF;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static void ff_map(FF *s, QPCIDevice *dev)
{
    s->dev = dev;
    qpci_device_enable(dev);
    s->regs = qpci_iomap(dev, FACCEL_BAR_REGS, NULL);
    s->mem = qpci_iomap(dev, FACCEL_BAR_MEM, &s->mem_size);
}

/*
 * Boots a pc machine with fake-accel "acc" in slot 4, more @args, a guest
 * error and fault trace log.
 */
static void ff_start(FF *s, const char *args)
{
    memset(s, 0, sizeof(*s));
    s->log = g_strdup_printf("%s/faccel-fault-%d-%p.log", g_get_tmp_dir(),
                             getpid(), s);
    s->qs = qtest_pc_boot("-nodefaults -d guest_errors,invalid_mem -D %s "
                          "-trace fake_accel_fault_inject* "
                          "-device fake-accel,id=acc,addr=0x4,mem-size=1M %s",
                          s->log, args ? args : "");
    s->qts = s->qs->qts;
    ff_map(s, qpci_device_find(s->qs->pcibus, QPCI_DEVFN(4, 0)));
    g_assert_nonnull(s->dev);
}

static void ff_stop(FF *s)
{
    g_free(s->dev);
    qtest_shutdown(s->qs);
    if (s->log) {
        unlink(s->log);
        g_free(s->log);
    }
}

static uint32_t rd(FF *s, uint32_t reg)
{
    return qpci_io_readl(s->dev, s->regs, reg);
}

static void wr(FF *s, uint32_t reg, uint32_t val)
{
    qpci_io_writel(s->dev, s->regs, reg, val);
}

static uint32_t engine(FF *s, uint32_t cmd, uint64_t src, uint64_t dst,
                       uint32_t len)
{
    wr(s, FACCEL_REG_ENG_SRC_LO, src);
    wr(s, FACCEL_REG_ENG_SRC_HI, src >> 32);
    wr(s, FACCEL_REG_ENG_DST_LO, dst);
    wr(s, FACCEL_REG_ENG_DST_HI, dst >> 32);
    wr(s, FACCEL_REG_ENG_LEN, len);
    wr(s, FACCEL_REG_ENG_CMD, cmd);
    return rd(s, FACCEL_REG_ENG_STATUS);
}

static uint32_t eng_err(uint32_t code)
{
    return FACCEL_ENG_STATUS_DONE | FACCEL_ENG_STATUS_ERROR |
           (code << FACCEL_ENG_STATUS_CODE_SHIFT);
}

static void fill_pattern(uint8_t *buf, size_t len, unsigned seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        buf[i] = (i * 131 + seed * 7 + (i >> 8)) & 0xff;
    }
}

/* Bitwise CRC-32 (IEEE, reflected) */
static uint32_t ref_crc32(const uint8_t *p, size_t len)
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

static void qom_set_str(QTestState *qts, const char *path, const char *prop,
                        const char *val)
{
    qtest_qmp_assert_success(qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %s}}",
                             path, prop, val);
}

static void qom_set_uint(QTestState *qts, const char *path, const char *prop,
                         uint64_t val)
{
    qtest_qmp_assert_success(qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %"
                             PRIu64 "}}", path, prop, val);
}

/* qom-set that must fail */
static void qom_set_str_fails(QTestState *qts, const char *path,
                              const char *prop, const char *val)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-set', 'arguments': {"
                           "'path': %s, 'property': %s, 'value': %s}}",
                           path, prop, val);

    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
}

static char *qom_get_str(QTestState *qts, const char *path, const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", path, prop);
    char *v;

    g_assert_true(qdict_haskey(rsp, "return"));
    v = g_strdup(qdict_get_str(rsp, "return"));
    qobject_unref(rsp);
    return v;
}

static uint64_t qom_get_uint(QTestState *qts, const char *path,
                             const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", path, prop);
    uint64_t v;

    g_assert_true(qdict_haskey(rsp, "return"));
    v = qdict_get_uint(rsp, "return");
    qobject_unref(rsp);
    return v;
}

/*
 * Asserts that the -D log got a line containing @needle since the last
 * match, and moves past it.  Guest errors and trace events both land there.
 */
static void expect_log(FF *s, const char *needle)
{
    g_autofree char *text = NULL;
    gsize len;
    char *hit;

    g_assert_true(g_file_get_contents(s->log, &text, &len, NULL));
    g_assert_cmpuint(len, >=, s->log_seen);
    hit = strstr(text + s->log_seen, needle);
    if (!hit) {
        g_test_message("'%s' not in the log after offset %zu:", needle,
                       s->log_seen);
        g_test_message("%s", text + s->log_seen);
    }
    g_assert_nonnull(hit);
    s->log_seen = hit - text + strlen(needle);
}

static void set_bus_master(FF *s, bool on)
{
    uint16_t cmd = qpci_config_readw(s->dev, PCI_COMMAND);

    cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
    qpci_config_writew(s->dev, PCI_COMMAND, cmd);
}

/* ------------------------------------------------------------------ */
/* QOM knobs                                                           */
/* ------------------------------------------------------------------ */

/* x-fault-window from QMP: same effect as the FAULT_* registers */
static void test_qom_window(void)
{
    uint8_t in[4096], out[4096];
    g_autofree char *v = NULL;
    FF s;

    ff_start(&s, NULL);
    fill_pattern(in, sizeof(in), 3);
    qpci_memwrite(s.dev, s.mem, 0x8000, in, sizeof(in));
    v = qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "off");

    qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x8000:0x2000");
    expect_log(&s, "fake_accel_fault_inject_window");
    g_free(v);
    v = qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x8000:0x2000");
    /* guest-visible exactly as if the driver had programmed it */
    g_assert_true(rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    g_assert_cmphex(rd(&s, FACCEL_REG_FAULT_OFF_LO), ==, 0x8000);
    g_assert_cmphex(rd(&s, FACCEL_REG_FAULT_LEN), ==, 0x2000);
    g_assert_cmphex(rd(&s, FACCEL_REG_FAULT_CTRL), ==,
                    FACCEL_FAULT_CTRL_ENABLE);
    /* the documented reaction: bus errors, hits, engine code FAULT */
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x9ffc), ==, 0xffffffff);
    g_assert_cmpuint(rd(&s, FACCEL_REG_FAULT_HITS), ==, 1);
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC, 0x7000, 0, 0x1001), ==,
                    eng_err(FACCEL_ENG_ERR_FAULT));
    g_assert_cmpuint(rd(&s, FACCEL_REG_FAULT_HITS), ==, 2);
    expect_log(&s, "hits the fault window");

    /* invalid windows are refused and leave the old one in place */
    qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0x8100:0x1000");
    qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0x8000:0");
    qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0xff000:0x2000");
    qom_set_str_fails(s.qts, FA_QOM, "x-fault-window",
                      "0x0:0x100000000");
    qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "banana");
    qom_set_str_fails(s.qts, FA_QOM, "x-fault-window", "0x1000-0x1000");
    g_free(v);
    v = qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x8000:0x2000");

    /* the guest may move it; QOM reports what is in effect */
    wr(&s, FACCEL_REG_FAULT_OFF_LO, 0x10000);
    g_free(v);
    v = qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x10000:0x2000");

    /* off: memory under the window kept its content */
    qom_set_str(s.qts, FA_QOM, "x-fault-window", "off");
    g_assert_false(rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    qpci_memread(s.dev, s.mem, 0x8000, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    ff_stop(&s);
}

/* the same knob from the human monitor */
static void test_hmp_window(void)
{
    g_autofree char *r = NULL;
    g_autofree char *v = NULL;
    FF s;

    ff_start(&s, NULL);
    r = qtest_hmp(s.qts, "qom-set " FA_QOM " x-fault-window 0x3000:0x1000");
    g_assert_cmpstr(r, ==, "");
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x3000), ==, 0xffffffff);
    g_assert_cmpuint(rd(&s, FACCEL_REG_FAULT_HITS), ==, 1);
    g_free(r);
    r = qtest_hmp(s.qts, "qom-get " FA_QOM " x-fault-window");
    g_assert_nonnull(strstr(r, "0x3000:0x1000"));
    g_free(r);
    r = qtest_hmp(s.qts, "qom-set " FA_QOM " x-fault-dma-write 2");
    g_assert_cmpstr(r, ==, "");
    g_assert_cmpuint(qom_get_uint(s.qts, FA_QOM, "x-fault-dma-write"), ==, 2);
    g_free(r);
    r = qtest_hmp(s.qts, "qom-set " FA_QOM " x-fault-window off");
    g_assert_cmpstr(r, ==, "");
    v = qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "off");
    ff_stop(&s);
}

/* x-fault-dma-read/-write: the next N engine DMA chunks fail */
static void test_qom_dma(void)
{
    const uint32_t len = 3 * FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    g_autofree uint8_t *out = g_malloc0(len);
    uint64_t host;
    FF s;

    ff_start(&s, NULL);
    fill_pattern(in, len, 5);
    host = guest_alloc(&s.qs->alloc, len);
    qtest_memwrite(s.qts, host, in, len);

    /* one read fault: the first chunk of a host -> BAR2 copy fails */
    qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 1);
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                           host, 0x10000, len), ==,
                    eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, 0);
    g_assert_true(rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_ENG_ERROR);
    g_assert_cmpuint(rd(&s, FACCEL_REG_ENG_COUNT), ==, 0);
    expect_log(&s, "fake_accel_fault_inject_dma");
    expect_log(&s, "engine DMA read");
    g_assert_cmpuint(qom_get_uint(s.qts, FA_QOM, "x-fault-dma-read"), ==, 0);
    g_assert_cmpuint(qom_get_uint(s.qts, FA_QOM, "x-fault-injected"), ==, 1);
    /* used up: the retry works */
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                           host, 0x10000, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(rd(&s, FACCEL_REG_ENG_CRC), ==, ref_crc32(in, len));

    /*
     * Write faults survive a device reset (they are host state), and hit
     * the first chunk: BAR2 -> host copy fails with nothing written.
     */
    qom_set_uint(s.qts, FA_QOM, "x-fault-dma-write", 2);
    wr(&s, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(qom_get_uint(s.qts, FA_QOM, "x-fault-dma-write"), ==, 2);
    qtest_memset(s.qts, host, 0, len);
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_DST_HOST,
                           0x10000, host, len), ==,
                    eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, 0);
    qtest_memread(s.qts, host, out, len);
    g_assert_true(buffer_is_zero(out, len));
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                           0, host, 16), ==, eng_err(FACCEL_ENG_ERR_DMA));
    /* BAR2-only commands never consume a DMA fault */
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC, 0x10000, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmpuint(qom_get_uint(s.qts, FA_QOM, "x-fault-injected"), ==, 3);
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_DST_HOST,
                           0x10000, host, len), ==, FACCEL_ENG_STATUS_DONE);
    qtest_memread(s.qts, host, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* disarming works */
    qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 5);
    qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 0);
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                           host, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    ff_stop(&s);
}

/* ------------------------------------------------------------------ */
/* QEMU's own means                                                    */
/* ------------------------------------------------------------------ */

static void ff_start_pair(FF *a, FF *b)
{
    ff_start(a, "-device fake-accel,id=accb,addr=0x5,mem-size=1M");
    *b = *a;
    b->log = NULL;
    ff_map(b, qpci_device_find(a->qs->pcibus, QPCI_DEVFN(FA_SLOT_B, 0)));
    g_assert_nonnull(b->dev);
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
    FF a, b;
    int i;

    ff_start_pair(&a, &b);
    fill_pattern(in, len, 11);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);

    for (i = 0; i < 4; i++) {
        uint32_t off = i * FACCEL_ENG_CHUNK;
        uint32_t st;

        set_bus_master(&a, i != 2);
        st = engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                    FACCEL_ENG_CMD_DST_HOST, host + off, b.mem.addr + off,
                    FACCEL_ENG_CHUNK);
        if (i == 2) {
            g_assert_cmphex(st, ==, eng_err(FACCEL_ENG_ERR_DMA));
            g_assert_cmpuint(rd(&a, FACCEL_REG_ENG_DONE_LEN), ==, 0);
            expect_log(&a, "engine DMA read");
            /* BAR2-only commands need no bus mastering */
            g_assert_cmphex(engine(&a, FACCEL_ENG_OP_FILL, 0, 0, 64), ==,
                            FACCEL_ENG_STATUS_DONE);
        } else {
            g_assert_cmphex(st, ==, FACCEL_ENG_STATUS_DONE);
        }
    }
    g_assert_cmpuint(rd(&a, FACCEL_REG_ENG_COUNT), ==, 4);
    /* chunks 0, 1, 3 arrived; 2 was never written */
    qpci_memread(b.dev, b.mem, 0, out, len);
    g_assert_cmpmem(in, 2 * FACCEL_ENG_CHUNK, out, 2 * FACCEL_ENG_CHUNK);
    g_assert_true(buffer_is_zero(out + 2 * FACCEL_ENG_CHUNK,
                                 FACCEL_ENG_CHUNK));
    g_assert_cmpmem(in + 3 * FACCEL_ENG_CHUNK, FACCEL_ENG_CHUNK,
                    out + 3 * FACCEL_ENG_CHUNK, FACCEL_ENG_CHUNK);
    /* re-enabled: the missing chunk goes through */
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                           FACCEL_ENG_CMD_DST_HOST,
                           host + 2 * FACCEL_ENG_CHUNK,
                           b.mem.addr + 2 * FACCEL_ENG_CHUNK,
                           FACCEL_ENG_CHUNK), ==, FACCEL_ENG_STATUS_DONE);
    qpci_memread(b.dev, b.mem, 0, out, len);
    g_assert_cmpmem(in, len, out, len);
    g_free(b.dev);
    ff_stop(&a);
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
    FF a, b;

    ff_start_pair(&a, &b);
    fill_pattern(in, len, 12);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);
    count_a = rd(&a, FACCEL_REG_RESET_COUNT);
    count_b = rd(&b, FACCEL_REG_RESET_COUNT);

    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                           FACCEL_ENG_CMD_DST_HOST, host, b.mem.addr, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    /* FLR of the target B with its window armed */
    qom_set_str(b.qts, "/machine/peripheral/accb", "x-fault-window",
                "0x1000:0x1000");
    pos = qpci_find_capability(b.dev, PCI_CAP_ID_EXP, 0);
    devctl = qpci_config_readw(b.dev, pos + PCI_EXP_DEVCTL);
    qpci_config_writew(b.dev, pos + PCI_EXP_DEVCTL,
                       devctl | PCI_EXP_DEVCTL_BCR_FLR);
    /* FLR cleared decoding: peer writes to the old address fail */
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                           FACCEL_ENG_CMD_DST_HOST, host, b.mem.addr, 16),
                    ==, eng_err(FACCEL_ENG_ERR_DMA));
    qpci_device_enable(b.dev);
    b.regs = qpci_iomap(b.dev, FACCEL_BAR_REGS, NULL);
    b.mem = qpci_iomap(b.dev, FACCEL_BAR_MEM, NULL);
    g_assert_cmpuint(rd(&b, FACCEL_REG_RESET_COUNT), ==, count_b + 1);
    g_assert_false(rd(&b, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    qpci_memread(b.dev, b.mem, 0, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* CTRL.RESET of the initiator between two commands */
    wr(&a, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(rd(&a, FACCEL_REG_ENG_COUNT), ==, 0);
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                           b.mem.addr, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(rd(&a, FACCEL_REG_ENG_CRC), ==, ref_crc32(in, len));

    /* system reset: both count it, both keep device memory */
    qtest_system_reset(a.qts);
    ff_map(&a, a.dev);
    ff_map(&b, b.dev);
    g_assert_cmpuint(rd(&a, FACCEL_REG_RESET_COUNT), ==, count_a + 2);
    g_assert_cmpuint(rd(&b, FACCEL_REG_RESET_COUNT), ==, count_b + 2);
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                           b.mem.addr, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(rd(&a, FACCEL_REG_ENG_CRC), ==, ref_crc32(in, len));
    g_free(b.dev);
    ff_stop(&a);
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
    FF a, b;

    ff_start_pair(&a, &b);
    fill_pattern(in, len, 13);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);
    old_bar = b.mem.addr;
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                           FACCEL_ENG_CMD_DST_HOST, host, old_bar, len),
                    ==, FACCEL_ENG_STATUS_DONE);

    qpci_unplug_acpi_device_test(a.qts, "accb", FA_SLOT_B);
    g_free(b.dev);
    rsp = qtest_qmp(a.qts, "{'execute': 'qom-get', 'arguments': {"
                    "'path': '/machine/peripheral/accb', "
                    "'property': 'x-fault-window'}}");
    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);

    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                           FACCEL_ENG_CMD_DST_HOST, host, old_bar, len),
                    ==, eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                           old_bar, 0, len), ==,
                    eng_err(FACCEL_ENG_ERR_DMA));
    expect_log(&a, "engine DMA");
    g_assert_true(qtest_probe_child(a.qts));

    /* re-plug into the same slot */
    qtest_qmp_device_add(a.qts, "fake-accel", "accb2",
                         "{'addr': '0x5', 'mem-size': 1048576}");
    b = a;
    b.log = NULL;
    ff_map(&b, qpci_device_find(a.qs->pcibus, QPCI_DEVFN(FA_SLOT_B, 0)));
    g_assert_nonnull(b.dev);
    g_assert_cmphex(rd(&b, FACCEL_REG_ID), ==, FACCEL_ID_MAGIC);
    g_assert_cmphex(engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                           FACCEL_ENG_CMD_DST_HOST, host, b.mem.addr, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(engine(&b, FACCEL_ENG_OP_CRC, 0, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(rd(&b, FACCEL_REG_ENG_CRC), ==, ref_crc32(in, len));
    g_free(b.dev);
    ff_stop(&a);
}

/* stop/cont: nothing changes while stopped; knobs work while stopped */
static void test_stop_cont(void)
{
    uint8_t in[4096], out[4096];
    g_autofree char *v = NULL;
    FF s;

    ff_start(&s, NULL);
    fill_pattern(in, sizeof(in), 14);
    qpci_memwrite(s.dev, s.mem, 0x20000, in, sizeof(in));
    wr(&s, FACCEL_REG_SCRATCH, 0x600dcafe);
    qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x1000:0x1000");

    qtest_qmp_assert_success(s.qts, "{'execute': 'stop'}");
    qtest_qmp_eventwait(s.qts, "STOP");
    qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x2000:0x1000");
    qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 1);
    qtest_qmp_assert_success(s.qts, "{'execute': 'cont'}");
    qtest_qmp_eventwait(s.qts, "RESUME");

    g_assert_cmphex(rd(&s, FACCEL_REG_SCRATCH), ==, 0x600dcafe);
    g_assert_cmphex(rd(&s, FACCEL_REG_FAULT_OFF_LO), ==, 0x2000);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x1000), ==, 0);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x2000), ==, 0xffffffff);
    qpci_memread(s.dev, s.mem, 0x20000, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    g_assert_cmpuint(qom_get_uint(s.qts, FA_QOM, "x-fault-dma-read"), ==, 1);
    v = qom_get_str(s.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x2000:0x1000");
    ff_stop(&s);
}

static void wait_migration_done(QTestState *qts)
{
    gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    for (;;) {
        QDict *rsp = qtest_qmp(qts, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "none";
        bool done = !strcmp(st, "completed");

        g_assert_cmpstr(st, !=, "failed");
        qobject_unref(rsp);
        if (done) {
            return;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(20 * 1000);
    }
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
    FF s, d;

    ff_start(&s, NULL);
    fill_pattern(in, sizeof(in), 15);
    qpci_memwrite(s.dev, s.mem, 0x40000, in, sizeof(in));
    wr(&s, FACCEL_REG_SCRATCH, 0xfeedf00d);
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC, 0x40000, 0, sizeof(in)),
                    ==, FACCEL_ENG_STATUS_DONE);
    crc = rd(&s, FACCEL_REG_ENG_CRC);
    qom_set_str(s.qts, FA_QOM, "x-fault-window", "0x5000:0x3000");
    qom_set_uint(s.qts, FA_QOM, "x-fault-dma-read", 7);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x6000), ==, 0xffffffff);
    count = rd(&s, FACCEL_REG_RESET_COUNT);

    rsp = qtest_qmp(s.qts, "{'execute': 'migrate', 'arguments': {"
                    "'uri': %s}}", uri);
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    wait_migration_done(s.qts);

    memset(&d, 0, sizeof(d));
    d.qs = qtest_pc_boot("-nodefaults -device fake-accel,id=acc,addr=0x4,"
                         "mem-size=1M -incoming file:%s", path);
    d.qts = d.qs->qts;
    wait_migration_done(d.qts);
    qtest_qmp_assert_success(d.qts, "{'execute': 'cont'}");
    unlink(path);
    d.dev = qpci_device_find(d.qs->pcibus, QPCI_DEVFN(4, 0));
    d.regs = s.regs;
    d.mem = s.mem;

    g_assert_cmphex(rd(&d, FACCEL_REG_SCRATCH), ==, 0xfeedf00d);
    g_assert_cmphex(rd(&d, FACCEL_REG_ENG_CRC), ==, crc);
    g_assert_cmpuint(rd(&d, FACCEL_REG_ENG_COUNT), ==, 1);
    g_assert_cmpuint(rd(&d, FACCEL_REG_RESET_COUNT), ==, count);
    g_assert_cmpuint(rd(&d, FACCEL_REG_FAULT_HITS), ==, 1);
    v = qom_get_str(d.qts, FA_QOM, "x-fault-window");
    g_assert_cmpstr(v, ==, "0x5000:0x3000");
    g_assert_cmphex(qpci_io_readl(d.dev, d.mem, 0x7ffc), ==, 0xffffffff);
    g_assert_cmphex(qpci_io_readl(d.dev, d.mem, 0x8000), ==, 0);
    g_assert_cmpuint(qom_get_uint(d.qts, FA_QOM, "x-fault-dma-read"), ==, 0);
    g_assert_cmphex(engine(&d, FACCEL_ENG_OP_CRC, 0x40000, 0, sizeof(in)),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(rd(&d, FACCEL_REG_ENG_CRC), ==, crc);
    g_assert_cmphex(crc, ==, ref_crc32(in, sizeof(in)));
    g_free(d.dev);
    qtest_shutdown(d.qs);
    ff_stop(&s);
}

/* ------------------------------------------------------------------ */
/* Bad guest input: QEMU survives and logs a guest error               */
/* ------------------------------------------------------------------ */

static void test_guest_errors(void)
{
    uint64_t host;
    FF s;

    ff_start(&s, NULL);
    host = guest_alloc(&s.qs->alloc, 4096);

    /* registers */
    g_assert_cmphex(rd(&s, 0x7fc), ==, 0);
    expect_log(&s, "read of unknown register 0x7fc");
    wr(&s, 0x300, 1);
    expect_log(&s, "write to unknown or read-only register 0x300");
    wr(&s, FACCEL_REG_ID, 0);
    expect_log(&s, "write to unknown or read-only register 0x0");
    g_assert_cmphex(rd(&s, FACCEL_REG_ID), ==, FACCEL_ID_MAGIC);
    wr(&s, FACCEL_REG_CTRL, 0x80000000);
    expect_log(&s, "reserved CTRL bits");
    wr(&s, FACCEL_REG_FAULT_CTRL, 0x2);
    expect_log(&s, "reserved FAULT_CTRL bits");
    /* sub-word and 64-bit BAR0 accesses are refused by the bus */
    qpci_io_writeb(s.dev, s.regs, FACCEL_REG_SCRATCH, 0x55);
    expect_log(&s, "Invalid write at addr 0x18, size 1");
    g_assert_cmphex(rd(&s, FACCEL_REG_SCRATCH), ==, 0);
    qpci_io_writew(s.dev, s.regs, FACCEL_REG_SCRATCH + 2, 0x55);
    expect_log(&s, "Invalid write at addr 0x1A, size 2");
    g_assert_cmphex(rd(&s, FACCEL_REG_SCRATCH), ==, 0);
    /* a 64-bit access is split in two: the upper half is RESET_COUNT */
    qpci_io_writeq(s.dev, s.regs, FACCEL_REG_SCRATCH, ~0ULL);
    expect_log(&s, "read-only register 0x1c");

    /* fault window */
    wr(&s, FACCEL_REG_FAULT_OFF_LO, 0x123);
    wr(&s, FACCEL_REG_FAULT_LEN, 0x1000);
    wr(&s, FACCEL_REG_FAULT_CTRL, FACCEL_FAULT_CTRL_ENABLE);
    expect_log(&s, "invalid fault window");
    wr(&s, FACCEL_REG_FAULT_OFF_LO, 0);
    wr(&s, FACCEL_REG_FAULT_OFF_HI, 0xffffffff);
    wr(&s, FACCEL_REG_FAULT_CTRL, FACCEL_FAULT_CTRL_ENABLE);
    expect_log(&s, "invalid fault window");
    g_assert_false(rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    wr(&s, FACCEL_REG_FAULT_OFF_HI, 0);

    /* engine commands */
    g_assert_cmphex(engine(&s, 0xf, 0, 0, 16), ==,
                    eng_err(FACCEL_ENG_ERR_BAD_CMD));
    expect_log(&s, "bad engine command");
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY | 0x80000000u, 0, 0, 16),
                    ==, eng_err(FACCEL_ENG_ERR_BAD_CMD));
    expect_log(&s, "bad engine command");
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY, 0, s.mem_size - 1, 2),
                    ==, eng_err(FACCEL_ENG_ERR_RANGE));
    expect_log(&s, "outside device memory");
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC, ~0ULL, 0, 16),
                    ==, eng_err(FACCEL_ENG_ERR_RANGE));
    expect_log(&s, "outside device memory");
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                           0, ~0ULL - 8, 64), ==,
                    eng_err(FACCEL_ENG_ERR_DMA));
    expect_log(&s, "engine DMA write");
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                           FA_UNMAPPED_ADDR, 0, 4096), ==,
                    eng_err(FACCEL_ENG_ERR_DMA));
    expect_log(&s, "engine DMA read");
    /* DMA into its own register BAR: blocked re-entrancy is a DMA error */
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                           0, s.regs.addr + FACCEL_REG_CTRL, 4), ==,
                    eng_err(FACCEL_ENG_ERR_DMA));
    expect_log(&s, "engine DMA write");
    /* a huge host copy is refused up front (the engine is synchronous) */
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                           host, 0, 0xffffffff), ==,
                    eng_err(FACCEL_ENG_ERR_RANGE));
    expect_log(&s, "above the 0x1000000 limit");

    /* still alive and working */
    g_assert_true(qtest_probe_child(s.qts));
    g_assert_cmphex(engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                           host, 0, 4096), ==, FACCEL_ENG_STATUS_DONE);
    ff_stop(&s);
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
