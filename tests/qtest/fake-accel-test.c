/*
 * QTest for fake-accel: registers, copy/CRC engine, memdev-backed device
 * memory, fault window, reset and FLR, the P2P write and CRC counters
 * (docs/specs/fake-accel.rst).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/mman.h>
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "qemu/units.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "standard-headers/linux/pci_regs.h"
#include "devmem-lab-util.h"
#include "devmem-lab-accel.h"
#include "devmem-lab-nic.h"
#include "devmem-lab-pkt.h"
#include "../../hw/misc/fake-accel/fake-accel-regs.h"
#include "../../hw/net/devmem-nic/devmem-nic-regs.h"

static void fa_start_args(FAState *s, const char *args)
{
    memset(s, 0, sizeof(*s));
    fa_boot(s, -1, args);
}

static void fa_start(FAState *s, const char *extra)
{
    g_autofree char *args = g_strdup_printf("-device fake-accel%s", extra);

    fa_start_args(s, args);
}

static void test_identity(void)
{
    FAState s;

    fa_start(&s, ",mem-size=16M");
    g_assert_cmphex(qpci_config_readw(s.dev, PCI_VENDOR_ID), ==,
                    FACCEL_PCI_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(s.dev, PCI_DEVICE_ID), ==,
                    FACCEL_PCI_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(s.dev, PCI_REVISION_ID), ==,
                    FACCEL_PCI_REVISION);
    g_assert_cmphex(qpci_config_readw(s.dev, PCI_CLASS_DEVICE), ==, 0x0b40);
    g_assert_cmphex(qpci_config_readl(s.dev, PCI_BASE_ADDRESS_2) & 0xf, ==,
                    PCI_BASE_ADDRESS_MEM_TYPE_64 |
                    PCI_BASE_ADDRESS_MEM_PREFETCH);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ID), ==, FACCEL_ID_MAGIC);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_VERSION), ==, FACCEL_VERSION);
    g_assert_cmpuint(s.regs_size, ==, FACCEL_BAR_REGS_SIZE);
    g_assert_cmpuint(s.mem_size, ==, 16 * 1024 * 1024);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_MEM_SIZE_LO), ==, 16 * 1024 * 1024);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_MEM_SIZE_HI), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_STATUS), ==, FACCEL_STATUS_READY);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_CTRL), ==, 0);
    /* powered on, then reset once by the machine */
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_RESET_COUNT), >=, 1);
    fa_stop(&s);
}

static void test_registers(void)
{
    static const uint32_t rw[] = {
        FACCEL_REG_SCRATCH, FACCEL_REG_ENG_SRC_LO, FACCEL_REG_ENG_SRC_HI,
        FACCEL_REG_ENG_DST_LO, FACCEL_REG_ENG_DST_HI, FACCEL_REG_ENG_LEN,
        FACCEL_REG_ENG_FILL, FACCEL_REG_FAULT_OFF_LO,
        FACCEL_REG_FAULT_OFF_HI, FACCEL_REG_FAULT_LEN,
    };
    static const uint32_t ro[] = {
        FACCEL_REG_ID, FACCEL_REG_VERSION, FACCEL_REG_MEM_SIZE_LO,
        FACCEL_REG_MEM_SIZE_HI, FACCEL_REG_STATUS, FACCEL_REG_RESET_COUNT,
        FACCEL_REG_ENG_STATUS, FACCEL_REG_ENG_CRC, FACCEL_REG_ENG_DONE_LEN,
        FACCEL_REG_ENG_COUNT,
    };
    FAState s;
    uint32_t before;
    int i;

    fa_start(&s, ",mem-size=1M");
    for (i = 0; i < ARRAY_SIZE(rw); i++) {
        fa_wr(&s, rw[i], 0xa5a50000 | i);
        g_assert_cmphex(fa_rd(&s, rw[i]), ==, 0xa5a50000 | i);
        fa_wr(&s, rw[i], 0);
        g_assert_cmphex(fa_rd(&s, rw[i]), ==, 0);
    }
    for (i = 0; i < ARRAY_SIZE(ro); i++) {
        before = fa_rd(&s, ro[i]);
        fa_wr(&s, ro[i], ~before);
        g_assert_cmphex(fa_rd(&s, ro[i]), ==, before);
    }
    /* FAULT_CTRL keeps only ENABLE, and only with a valid window */
    fa_wr(&s, FACCEL_REG_FAULT_CTRL, 0xfffffffe);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    /* unknown registers read as zero, writes are ignored */
    fa_wr(&s, 0x800, 0x12345678);
    g_assert_cmphex(fa_rd(&s, 0x800), ==, 0);
    /* ENG_CMD reads back the last command */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0, 0, 0), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CMD), ==, FACCEL_ENG_OP_CRC);
    fa_stop(&s);
}

static void test_reset(void)
{
    FAState s;
    uint32_t count, cmd;
    uint8_t byte = 0x5a, out = 0;
    uint8_t pos;

    fa_start(&s, ",mem-size=1M");
    qpci_memwrite(s.dev, s.mem, 0x3000, &byte, 1);
    fa_wr(&s, FACCEL_REG_SCRATCH, 0xdeadbeef);
    fa_wr(&s, FACCEL_REG_ENG_FILL, 0x11223344);
    fa_wr(&s, FACCEL_REG_FAULT_OFF_LO, 0x1000);
    fa_wr(&s, FACCEL_REG_FAULT_LEN, 0x1000);
    fa_wr(&s, FACCEL_REG_FAULT_CTRL, FACCEL_FAULT_CTRL_ENABLE);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x2000, 0, 16), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_COUNT), ==, 1);
    count = fa_rd(&s, FACCEL_REG_RESET_COUNT);

    fa_wr(&s, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_RESET_COUNT), ==, count + 1);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_CTRL), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_SCRATCH), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_FILL), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_STATUS), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_COUNT), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_SRC_LO), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_LEN), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_OFF_LO), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_STATUS), ==, FACCEL_STATUS_READY);
    /* device memory survives reset */
    qpci_memread(s.dev, s.mem, 0x3000, &out, 1);
    g_assert_cmphex(out, ==, 0x5a);

    /* Function Level Reset through the PCIe capability */
    pos = qpci_find_capability(s.dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmpuint(pos, !=, 0);
    g_assert_true(qpci_config_readl(s.dev, pos + PCI_EXP_DEVCAP) &
                  PCI_EXP_DEVCAP_FLR);
    fa_wr(&s, FACCEL_REG_SCRATCH, 0xdeadbeef);
    cmd = qpci_config_readw(s.dev, pos + PCI_EXP_DEVCTL);
    qpci_config_writew(s.dev, pos + PCI_EXP_DEVCTL,
                       cmd | PCI_EXP_DEVCTL_BCR_FLR);
    /* FLR also resets config space: BARs and decoding must be set again */
    g_assert_cmphex(qpci_config_readw(s.dev, PCI_COMMAND) &
                    PCI_COMMAND_MEMORY, ==, 0);
    fa_map(&s, s.dev);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_RESET_COUNT), ==, count + 2);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_SCRATCH), ==, 0);
    qpci_memread(s.dev, s.mem, 0x3000, &out, 1);
    g_assert_cmphex(out, ==, 0x5a);
    fa_stop(&s);
}

static void test_mem_rw(void)
{
    FAState s;
    uint8_t in[256], out[256];

    fa_start(&s, ",mem-size=1M");
    fa_fill_pattern(in, sizeof(in), 1);
    qpci_memwrite(s.dev, s.mem, 4096, in, sizeof(in));
    qpci_memread(s.dev, s.mem, 4096, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    /* last bytes of device memory */
    qpci_memwrite(s.dev, s.mem, s.mem_size - sizeof(in), in, sizeof(in));
    qpci_memread(s.dev, s.mem, s.mem_size - sizeof(in), out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    fa_stop(&s);
}

static void test_engine_crc(void)
{
    const char *check = "123456789";
    const uint32_t len = 3 * FACCEL_ENG_CHUNK + 123;
    g_autofree uint8_t *buf = g_malloc(len);
    FAState s;

    g_assert_cmphex(fa_ref_crc32((const uint8_t *)check, 9), ==, 0xcbf43926);
    fa_start(&s, ",mem-size=1M");
    qpci_memwrite(s.dev, s.mem, 0x1000, check, 9);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x1000, 0, 9), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, 0xcbf43926);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, 9);

    /* multi-chunk, unaligned length, at the end of device memory */
    fa_fill_pattern(buf, len, 2);
    qpci_memwrite(s.dev, s.mem, s.mem_size - len, buf, len);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, s.mem_size - len, 0, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(buf, len));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, len);

    /* a changed byte changes the CRC: the engine really reads memory */
    buf[len / 2] ^= 1;
    qpci_memwrite(s.dev, s.mem, s.mem_size - len + len / 2, &buf[len / 2], 1);
    fa_engine(&s, FACCEL_ENG_OP_CRC, s.mem_size - len, 0, len);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(buf, len));

    /* zero length */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0, 0, 0), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, 0);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_COUNT), ==, 4);
    fa_stop(&s);
}

static void test_engine_copy_fill(void)
{
    const uint32_t len = 2 * FACCEL_ENG_CHUNK + 10;
    g_autofree uint8_t *in = g_malloc(len);
    g_autofree uint8_t *out = g_malloc(len);
    uint8_t fill[7];
    FAState s;
    uint64_t host;

    fa_start(&s, ",mem-size=1M");
    fa_fill_pattern(in, len, 3);

    /* BAR2 -> BAR2 */
    qpci_memwrite(s.dev, s.mem, 0x10000, in, len);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY, 0x10000, 0x20000, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));
    qpci_memread(s.dev, s.mem, 0x20000, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* host -> BAR2 */
    host = guest_alloc(&s.qs->alloc, len);
    fa_fill_pattern(in, len, 4);
    qtest_memwrite(s.qs->qts, host, in, len);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0x30000, len), ==, FACCEL_ENG_STATUS_DONE);
    qpci_memread(s.dev, s.mem, 0x30000, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* BAR2 -> host */
    qtest_memset(s.qs->qts, host, 0, len);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_DST_HOST,
                              0x10000, host, len), ==, FACCEL_ENG_STATUS_DONE);
    fa_fill_pattern(in, len, 3);
    qtest_memread(s.qs->qts, host, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* CRC of a host buffer */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0, len), ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));

    /* FILL repeats the little-endian pattern, any length */
    fa_wr(&s, FACCEL_REG_ENG_FILL, 0x44332211);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_FILL, 0, 0x40001, 7), ==,
                    FACCEL_ENG_STATUS_DONE);
    qpci_memread(s.dev, s.mem, 0x40001, fill, 7);
    g_assert_cmpmem(fill, 7, ((uint8_t[]){ 0x11, 0x22, 0x33, 0x44,
                                           0x11, 0x22, 0x33 }), 7);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(fill, 7));
    guest_free(&s.qs->alloc, host);
    fa_stop(&s);
}

static void test_engine_errors(void)
{
    FAState s;
    uint64_t host;
    uint16_t cmd;

    fa_start(&s, ",mem-size=1M");
    g_assert_cmphex(fa_engine(&s, 0, 0, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    g_assert_true(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_ENG_ERROR);
    g_assert_cmphex(fa_engine(&s, 9, 0, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | (1u << 12), 0, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    /* bits 7:4 are reserved too (issue 17: the spec did not say so) */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | (1u << 4), 0, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | (1u << 7), 0, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_BAD_CMD));
    /* BAR2 operands must fit in device memory (no wrap) */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, s.mem_size - 8, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_RANGE));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, ~0ULL - 4, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_RANGE));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY, 0, s.mem_size, 1), ==,
                    fa_eng_err(FACCEL_ENG_ERR_RANGE));
    /* one command moves at most FACCEL_ENG_MAX_LEN, even host to host */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              0, 0, FACCEL_ENG_MAX_LEN + 1), ==,
                    fa_eng_err(FACCEL_ENG_ERR_RANGE));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_DONE_LEN), ==, 0);
    /* DMA to nowhere */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              FA_UNMAPPED_ADDR, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                              0, FA_UNMAPPED_ADDR, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_COUNT), ==, 0);
    /* bus mastering off: host operands fail, BAR2 operands still work */
    host = guest_alloc(&s.qs->alloc, 4096);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0, 4096), ==, FACCEL_ENG_STATUS_DONE);
    cmd = qpci_config_readw(s.dev, PCI_COMMAND);
    qpci_config_writew(s.dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              host, 0, 4096), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0, 0, 4096), ==,
                    FACCEL_ENG_STATUS_DONE);
    qpci_config_writew(s.dev, PCI_COMMAND, cmd);
    /* a good command clears the error */
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_ENG_ERROR);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_ENG_COUNT), ==, 2);
    guest_free(&s.qs->alloc, host);
    fa_stop(&s);
}

static void test_memdev(void)
{
    const size_t size = 2 * 1024 * 1024;
    g_autofree char *path = g_strdup_printf("/dev/shm/fake-accel-qtest-%d",
                                            getpid());
    g_autofree char *args = NULL;
    uint8_t in[512], out[512];
    uint8_t *shm;
    FAState s;
    int fd;

    fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        g_test_skip("cannot create a file in /dev/shm");
        return;
    }
    g_assert_cmpint(ftruncate(fd, size), ==, 0);
    shm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    g_assert_true(shm != MAP_FAILED);

    args = g_strdup_printf("-object memory-backend-file,id=am,size=%zu,"
                           "share=on,mem-path=%s "
                           "-device fake-accel,memdev=am", size, path);
    fa_start_args(&s, args);
    /* the backend's size wins over mem-size */
    g_assert_cmpuint(s.mem_size, ==, size);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_MEM_SIZE_LO), ==, size);

    /* guest writes through BAR2 land in the host file */
    fa_fill_pattern(in, sizeof(in), 5);
    qpci_memwrite(s.dev, s.mem, 0x8000, in, sizeof(in));
    g_assert_cmpmem(in, sizeof(in), shm + 0x8000, sizeof(in));

    /* the host writes, the guest and the engine see it */
    fa_fill_pattern(shm + 0x100000, 4096, 6);
    qpci_memread(s.dev, s.mem, 0x100000, out, sizeof(out));
    g_assert_cmpmem(shm + 0x100000, sizeof(out), out, sizeof(out));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x100000, 0, 4096), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==,
                    fa_ref_crc32(shm + 0x100000, 4096));

    /* engine writes are visible to the host too */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY, 0x100000, 0x180000, 4096),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmpmem(shm + 0x100000, 4096, shm + 0x180000, 4096);
    fa_stop(&s);

    munmap(shm, size);
    close(fd);
    unlink(path);
}

static void test_memdev_bad_size(void)
{
    QTestState *qts;
    QDict *rsp;

    qts = qtest_init("-nodefaults -object memory-backend-ram,id=am,size=3M");
    rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                    "'driver': 'fake-accel', 'memdev': 'am'}}");
    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                    "'driver': 'fake-accel', 'mem-size': 4096}}");
    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    /* a failed realize leaves nothing behind: the same slot works next */
    qtest_qmp_assert_success(qts, "{'execute': 'device_add', 'arguments': {"
                             "'driver': 'fake-accel', 'id': 'ok', "
                             "'mem-size': 1048576}}");
    qtest_quit(qts);
}

/*
 * mem-size with a memdev: equal is accepted, different is refused (it
 * was replaced by the memdev's size without a word), and the property
 * keeps the value the user gave (0 when not given).
 */
static void test_memdev_mem_size(void)
{
    QTestState *qts;
    QDict *rsp;

    qts = qtest_init("-nodefaults -object memory-backend-ram,id=am,size=2M "
                     "-object memory-backend-ram,id=am2,size=2M");
    rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                    "'driver': 'fake-accel', 'id': 'bad', 'memdev': 'am', "
                    "'mem-size': 4194304}}");
    g_assert_true(qdict_haskey(rsp, "error"));
    g_assert_nonnull(strstr(qdict_get_str(qdict_get_qdict(rsp, "error"),
                                          "desc"), "differs from the size"));
    qobject_unref(rsp);
    qtest_qmp_assert_success(qts, "{'execute': 'device_add', 'arguments': {"
                             "'driver': 'fake-accel', 'id': 'eq', "
                             "'memdev': 'am', 'mem-size': 2097152}}");
    g_assert_cmpuint(dl_qom_get_uint(qts, "/machine/peripheral/eq",
                                     "mem-size"), ==, 2 * 1024 * 1024);
    qtest_qmp_assert_success(qts, "{'execute': 'device_add', 'arguments': {"
                             "'driver': 'fake-accel', 'id': 'auto', "
                             "'memdev': 'am2'}}");
    g_assert_cmpuint(dl_qom_get_uint(qts, "/machine/peripheral/auto",
                                     "mem-size"), ==, 0);
    qtest_quit(qts);
}

static void set_fault(FAState *s, uint64_t off, uint32_t len, bool on)
{
    fa_wr(s, FACCEL_REG_FAULT_OFF_LO, off);
    fa_wr(s, FACCEL_REG_FAULT_OFF_HI, off >> 32);
    fa_wr(s, FACCEL_REG_FAULT_LEN, len);
    fa_wr(s, FACCEL_REG_FAULT_CTRL, on ? FACCEL_FAULT_CTRL_ENABLE : 0);
}

static void test_fault_window(void)
{
    uint8_t in[4096], out[4096];
    FAState s;

    fa_start(&s, ",mem-size=1M");
    fa_fill_pattern(in, sizeof(in), 7);
    qpci_memwrite(s.dev, s.mem, 0x4000, in, sizeof(in));

    /* invalid windows are refused (stay disabled) */
    set_fault(&s, 0x4100, 0x1000, true);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    set_fault(&s, 0x4000, 0x800, true);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    set_fault(&s, 0x4000, 0, true);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    set_fault(&s, s.mem_size - 0x1000, 0x2000, true);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);

    set_fault(&s, 0x4000, 0x1000, true);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==,
                    FACCEL_FAULT_CTRL_ENABLE);
    g_assert_true(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 0);

    /* CPU accesses fail: reads give all ones, writes are dropped */
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x4010), ==, 0xffffffff);
    qpci_io_writel(s.dev, s.mem, 0x4010, 0);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 2);
    /* neighbours are untouched */
    qpci_io_writel(s.dev, s.mem, 0x3ffc, 0x01020304);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x3ffc), ==, 0x01020304);
    qpci_io_writel(s.dev, s.mem, 0x5000, 0x05060708);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x5000), ==, 0x05060708);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 2);

    /* engine with a BAR2 operand overlapping the window */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x3000, 0, 0x1001), ==,
                    fa_eng_err(FACCEL_ENG_ERR_FAULT));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_FILL, 0, 0x4fff, 1), ==,
                    fa_eng_err(FACCEL_ENG_ERR_FAULT));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 4);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x3000, 0, 0x1000), ==,
                    FACCEL_ENG_STATUS_DONE);

    /* outside the window, device DMA to its own BAR works */
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              s.mem.addr + 0x5000, 0, 0x1000), ==,
                    FACCEL_ENG_STATUS_DONE);

    /* moving the window while enabled */
    fa_wr(&s, FACCEL_REG_FAULT_OFF_LO, 0x6000);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x6000), ==, 0xffffffff);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x5000), ==, 0x05060708);

    /* HITS is cleared by any write */
    fa_wr(&s, FACCEL_REG_FAULT_HITS, 0x1234);
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 0);

    /* disabling restores the memory untouched */
    fa_wr(&s, FACCEL_REG_FAULT_CTRL, 0);
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    qpci_memread(s.dev, s.mem, 0x4000, out, sizeof(out));
    g_assert_cmpmem(in, sizeof(in), out, sizeof(out));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x4000, 0, 0x1000), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, 4096));

    /* reset disables the window */
    set_fault(&s, 0x4000, 0x1000, true);
    fa_wr(&s, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x4000), ==,
                    (uint32_t)ldl_le_p(in));
    g_assert_cmpuint(fa_rd(&s, FACCEL_REG_FAULT_HITS), ==, 0);
    fa_stop(&s);
}

typedef struct {
    QPCIDevice *dev[2];
    int n;
} FAPair;

static void find_two(QPCIDevice *dev, int devfn, void *data)
{
    FAPair *p = data;

    g_assert_cmpint(p->n, <, 2);
    p->dev[p->n++] = dev;
}

/* Boot two fake-accels (@args): @a maps the first, @b the second */
static void fa_boot_two(FAState *a, FAState *b, const char *args)
{
    FAPair p = { };

    memset(a, 0, sizeof(*a));
    a->qs = qtest_pc_boot("%s", args);
    a->qts = a->qs->qts;
    qpci_device_foreach(a->qs->pcibus, FACCEL_PCI_VENDOR_ID,
                        FACCEL_PCI_DEVICE_ID, find_two, &p);
    g_assert_cmpint(p.n, ==, 2);
    fa_map(a, p.dev[0]);
    fa_attach(b, a->qs, p.dev[1]);
}

/*
 * Peer-to-peer: device A's engine DMAs into device B's BAR2, as a NIC does
 * with devmem payload; B's fault window makes those peer writes fail.
 */
/*
 * Moving an enabled window with register writes that pass through an
 * invalid window: it stays enabled, inactive meanwhile, and is active at
 * its new place after the last write (issue 17: it was silently disabled)
 */
static void test_fault_window_move(void)
{
    FAState s;

    fa_start(&s, ",mem-size=1M");
    set_fault(&s, 0xf0000, 0x10000, true);
    g_assert_true(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    /* LEN first: 0xf0000 + 0x20000 is past the end of BAR2 */
    fa_wr(&s, FACCEL_REG_FAULT_LEN, 0x20000);
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==,
                    FACCEL_FAULT_CTRL_ENABLE);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0xf0000, 0, 16), ==,
                    FACCEL_ENG_STATUS_DONE);
    fa_wr(&s, FACCEL_REG_FAULT_OFF_LO, 0);
    g_assert_true(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x1f000, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_FAULT));
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_CRC, 0x20000, 0, 16), ==,
                    FACCEL_ENG_STATUS_DONE);
    /* setting ENABLE over invalid values is still refused */
    set_fault(&s, 0x1000, 0x1001, true);
    g_assert_cmphex(fa_rd(&s, FACCEL_REG_FAULT_CTRL), ==, 0);
    g_assert_false(fa_rd(&s, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    fa_stop(&s);
}

static void test_p2p(void)
{
    const uint32_t len = 2 * FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    g_autofree uint8_t *out = g_malloc(len);
    FAState a, b;
    uint64_t host;

    fa_boot_two(&a, &b, "-nodefaults -device fake-accel,mem-size=1M "
                "-device fake-accel,mem-size=1M");

    /* host RAM -> A's engine -> B's BAR2 (peer write) */
    fa_fill_pattern(in, len, 8);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qs->qts, host, in, len);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host,
                              b.mem.addr + 0x8000, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    /* B's own engine and the CPU see the bytes */
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_CRC, 0x8000, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&b, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));
    qpci_memread(b.dev, b.mem, 0x8000, out, len);
    g_assert_cmpmem(in, len, out, len);

    /* peer read: A's CRC over B's BAR2 */
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              b.mem.addr + 0x8000, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&a, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));

    /* B's fault window fails the second page of the peer write */
    set_fault(&b, 0x9000, 0x1000, true);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                              0, b.mem.addr + 0x8000, len), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(fa_rd(&a, FACCEL_REG_ENG_DONE_LEN), ==, 0x1000);
    g_assert_cmpuint(fa_rd(&b, FACCEL_REG_FAULT_HITS), >, 0);
    /* and the peer read of it */
    fa_wr(&b, FACCEL_REG_FAULT_HITS, 0);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_CRC | FACCEL_ENG_CMD_SRC_HOST,
                              b.mem.addr + 0x9000, 0, 16), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(fa_rd(&b, FACCEL_REG_FAULT_HITS), >, 0);
    /* the first page was filled with zeroes (ENG_FILL is 0), not the rest */
    set_fault(&b, 0, 0, false);
    qpci_memread(b.dev, b.mem, 0x8000, out, len);
    g_assert_true(buffer_is_zero(out, 0x1000));
    g_assert_cmpmem(in + 0x1000, 0x1000, out + 0x1000, 0x1000);

    guest_free(&a.qs->alloc, host);
    g_free(b.dev);
    fa_stop(&a);
}

/* ------------------------------------------------------------------ */
/* Counters: P2P_WR_BYTES and CRC_CHECKS                               */
/* ------------------------------------------------------------------ */

#define FA_QOM "/machine/peripheral/accel"

/* P2P_WR_BYTES read as the driver does (HI, LO, HI), and equal to QOM's */
static uint64_t fa_p2p_bytes(FAState *s)
{
    uint32_t hi, lo;
    uint64_t val;

    do {
        hi = fa_rd(s, FACCEL_REG_P2P_WR_BYTES_HI);
        lo = fa_rd(s, FACCEL_REG_P2P_WR_BYTES_LO);
    } while (hi != fa_rd(s, FACCEL_REG_P2P_WR_BYTES_HI));
    val = (uint64_t)hi << 32 | lo;
    g_assert_cmpuint(dl_qom_get_uint(s->qts, FA_QOM, "p2p-write-bytes"), ==,
                     val);
    return val;
}

static uint32_t fa_crc_checks(FAState *s)
{
    uint32_t val = fa_rd(s, FACCEL_REG_CRC_CHECKS);

    g_assert_cmpuint(dl_qom_get_uint(s->qts, FA_QOM, "crc-checks"), ==, val);
    return val;
}

/*
 * devmem-nic receives TCP with header split into queue 0: headers into
 * host RAM, payload into fake-accel's BAR2 (P2P).  P2P_WR_BYTES rises by
 * exactly the payload bytes that landed there.
 */
static void test_counter_nic_rx(void)
{
    g_autofree uint8_t *frame = g_malloc0(DN_FRAME_MAX);
    g_autofree uint8_t *out = g_malloc0(DN_FRAME_MAX);
    static const size_t pay[] = { 3000, 1, 4096, 9000 - 52 };
    uint64_t landed = 0;
    FAState acc;
    DnState s;
    DlPktSpec spec;
    size_t len, hlen;
    uint32_t n;
    DnCpl c;
    int i;

    memset(&s, 0, sizeof(s));
    dn_boot(&s, -1, "-device devmem-nic,id=nic,netdev=n0,"
            "mac=52:54:00:12:34:56,queues=4 "
            "-device fake-accel,id=accel,mem-size=1M");
    fa_attach(&acc, s.qs, dl_pci_find(s.qs->pcibus, FACCEL_PCI_VENDOR_ID,
                                      FACCEL_PCI_DEVICE_ID));
    g_assert_cmpuint(fa_p2p_bytes(&acc), ==, 0);

    dn_steer_all_to(&s, 0);
    dn_rx_rings(&s, 0, 32);
    dn_qwr(&s, 0, DMNIC_Q_HDS_THRESH, 0);
    dn_qwr(&s, 0, DMNIC_Q_CTRL,
           DMNIC_Q_CTRL_RX_ENABLE | DMNIC_Q_CTRL_HDS_ENABLE);
    for (i = 0; i < 16; i++) {
        /* payload buffers: BAR2 addresses as the NIC sees them */
        s.q[0].pbuf[i] = acc.mem.addr + (uint64_t)i * DN_PBUF_LEN;
    }
    dn_post_bufs(&s, 0, 16, 16, DN_PBUF_LEN);

    for (i = 0; i < ARRAY_SIZE(pay); i++) {
        dl_pkt_default(&spec, 4, DL_PROTO_TCP, pay[i]);
        spec.payload_seed = 0x40 + i;
        len = dl_pkt_build(&spec, frame, &hlen);
        dn_inject(&s, frame, len);
        for (n = dn_cpl_pending(&s, 0); n; n--) {
            dn_read_cpl(&s, 0, s.q[0].rxc_head++, &c);
            g_assert_true(c.flags & DMNIC_RXC_F_SPLIT);
            if (c.flags & DMNIC_RXC_F_PAY) {
                landed += c.pay_len;
                qtest_memread(s.qts, s.q[0].pbuf[c.pay_id], out, c.pay_len);
            }
        }
        g_assert_cmpuint(fa_p2p_bytes(&acc), ==, landed);
    }
    g_assert_cmpuint(landed, ==, 3000 + 1 + 4096 + 9000 - 52);
    /* the last buffer holds the tail of the last payload */
    g_assert_cmpmem(out, c.pay_len, frame + len - c.pay_len, c.pay_len);

    /* the device's own reset does not clear the counter */
    fa_wr(&acc, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(fa_p2p_bytes(&acc), ==, landed);
    /* read-only: writes are ignored */
    fa_wr(&acc, FACCEL_REG_P2P_WR_BYTES_LO, 0);
    fa_wr(&acc, FACCEL_REG_P2P_WR_BYTES_HI, 0);
    g_assert_cmpuint(fa_p2p_bytes(&acc), ==, landed);

    g_free(acc.dev);
    dn_stop(&s);
}

/*
 * What counts and what does not, apart from a NIC: another device's
 * engine DMA counts; the device's own engine into a BAR2 operand does not;
 * CRC_CHECKS counts CRC commands only; resets and FLR clear neither.
 */
static void test_counter_sources(void)
{
    const uint32_t len = 2 * FACCEL_ENG_CHUNK;
    g_autofree uint8_t *in = g_malloc(len);
    FAState a, b;
    uint64_t host;
    uint8_t pos;
    uint16_t cmd;

    /* B is the one with id=accel (FA_QOM): the higher slot */
    fa_boot_two(&a, &b, "-nodefaults -device fake-accel,mem-size=1M "
                "-device fake-accel,id=accel,mem-size=1M");
    g_assert_cmpuint(fa_p2p_bytes(&b), ==, 0);
    g_assert_cmpuint(fa_crc_checks(&b), ==, 0);

    /* A's engine DMAs host RAM into B's BAR2: a peer write */
    fa_fill_pattern(in, len, 11);
    host = guest_alloc(&a.qs->alloc, len);
    qtest_memwrite(a.qts, host, in, len);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_COPY | FACCEL_ENG_CMD_SRC_HOST |
                              FACCEL_ENG_CMD_DST_HOST, host,
                              b.mem.addr + 0x4000, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmpuint(fa_p2p_bytes(&b), ==, len);

    /* B's engine inside its own memory: no bus write */
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_COPY, 0x4000, 0x8000, len),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_FILL, 0, 0xc000, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmpuint(fa_p2p_bytes(&b), ==, len);
    g_assert_cmpuint(fa_crc_checks(&b), ==, 0);

    /* a failing DMA into B's fault window lands nothing: not counted */
    fa_wr(&b, FACCEL_REG_FAULT_OFF_LO, 0x10000);
    fa_wr(&b, FACCEL_REG_FAULT_LEN, 0x1000);
    fa_wr(&b, FACCEL_REG_FAULT_CTRL, FACCEL_FAULT_CTRL_ENABLE);
    g_assert_cmphex(fa_engine(&a, FACCEL_ENG_OP_FILL | FACCEL_ENG_CMD_DST_HOST,
                              0, b.mem.addr + 0x10000, 0x1000), ==,
                    fa_eng_err(FACCEL_ENG_ERR_DMA));
    g_assert_cmpuint(fa_p2p_bytes(&b), ==, len);
    fa_wr(&b, FACCEL_REG_FAULT_CTRL, 0);

    /* CRC commands count, on B only; a failing one does not */
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_CRC, 0x4000, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&b, FACCEL_REG_ENG_CRC), ==, fa_ref_crc32(in, len));
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_CRC, 0x8000, 0, len), ==,
                    FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_engine(&b, FACCEL_ENG_OP_CRC, 0x100000, 0, len), ==,
                    fa_eng_err(FACCEL_ENG_ERR_RANGE));
    g_assert_cmpuint(fa_crc_checks(&b), ==, 2);

    /* CTRL.RESET and FLR clear ENG_COUNT, not the counters */
    fa_wr(&b, FACCEL_REG_CTRL, FACCEL_CTRL_RESET);
    g_assert_cmpuint(fa_rd(&b, FACCEL_REG_ENG_COUNT), ==, 0);
    g_assert_cmpuint(fa_p2p_bytes(&b), ==, len);
    g_assert_cmpuint(fa_crc_checks(&b), ==, 2);
    pos = qpci_find_capability(b.dev, PCI_CAP_ID_EXP, 0);
    cmd = qpci_config_readw(b.dev, pos + PCI_EXP_DEVCTL);
    qpci_config_writew(b.dev, pos + PCI_EXP_DEVCTL,
                       cmd | PCI_EXP_DEVCTL_BCR_FLR);
    fa_map(&b, b.dev);
    g_assert_cmpuint(fa_p2p_bytes(&b), ==, len);
    g_assert_cmpuint(fa_crc_checks(&b), ==, 2);
    /* and A counted nothing: it only wrote to others */
    g_assert_cmpuint(fa_rd(&a, FACCEL_REG_P2P_WR_BYTES_LO), ==, 0);

    guest_free(&a.qs->alloc, host);
    g_free(b.dev);
    fa_stop(&a);
}

/*
 * A CPU's stores through BAR2 do not count; a real vCPU (TCG) does them.
 * The BIOS below switches to 32-bit protected mode, then stores [0x7004]
 * dwords of 0x5a5aa5a5 from the address in [0x7000] (rep stosl) and
 * writes 0x600d to [0x7008]; assembled from:
 *
 *   0xfe00 gdt:   .quad 0, 0x00cf9a000000ffff, 0x00cf92000000ffff
 *   0xfe18 gdtr:  .word 23; .long 0xfffffe00
 *   0xff00 (16-bit) cli; lgdtl %cs:0xfe18; mov %cr0,%eax; or $1,%al;
 *                   mov %eax,%cr0; ljmpl $0x08,$0xffffff40
 *   0xff40 (32-bit) mov $0x10,%ax; mov %ax,%ds; mov %ax,%es;
 *                   mov 0x7000,%edi; mov 0x7004,%ecx;
 *                   mov $0x5a5aa5a5,%eax; cld; rep stosl;
 *                   movl $0x600d,0x7008; 1: hlt; jmp 1b
 *   0xfff0 (reset) jmp 0xff00
 *
 * A qtest memwrite is no CPU store: it is an address-space write with
 * unspecified attributes, the same as a device's pci_dma_write(), and
 * counts (docs/specs/fake-accel.rst).
 */
static const uint8_t cpu_bios_gdt[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0x00, 0x00, 0x00, 0x9a, 0xcf, 0x00,
    0xff, 0xff, 0x00, 0x00, 0x00, 0x92, 0xcf, 0x00,
    0x17, 0x00, 0x00, 0xfe, 0xff, 0xff,
};
static const uint8_t cpu_bios_rm[] = {
    0xfa, 0x2e, 0x66, 0x0f, 0x01, 0x16, 0x18, 0xfe, 0x0f, 0x20, 0xc0, 0x0c,
    0x01, 0x0f, 0x22, 0xc0, 0x66, 0xea, 0x40, 0xff, 0xff, 0xff, 0x08, 0x00,
};
static const uint8_t cpu_bios_pm[] = {
    0x66, 0xb8, 0x10, 0x00, 0x8e, 0xd8, 0x8e, 0xc0, 0x8b, 0x3d, 0x00, 0x70,
    0x00, 0x00, 0x8b, 0x0d, 0x04, 0x70, 0x00, 0x00, 0xb8, 0xa5, 0xa5, 0x5a,
    0x5a, 0xfc, 0xf3, 0xab, 0xc7, 0x05, 0x08, 0x70, 0x00, 0x00, 0x0d, 0x60,
    0x00, 0x00, 0xf4, 0xeb, 0xfd,
};
static const uint8_t cpu_bios_reset[] = { 0xe9, 0x0d, 0xff };

static void test_counter_cpu(void)
{
    g_autofree char *bios = g_strdup_printf("%s/faccel-bios-%d.bin",
                                            g_get_tmp_dir(), getpid());
    g_autofree uint8_t *img = g_malloc0(64 * KiB);
    const uint32_t dwords = 1024, off = 0x20000;
    gint64 end;
    uint32_t word;
    FAState s;
    QDict *rsp;
    int i;

    if (!qtest_has_accel("tcg")) {
        g_test_skip("no TCG: the CPU store test needs a vCPU");
        return;
    }
    memcpy(img + 0xfe00, cpu_bios_gdt, sizeof(cpu_bios_gdt));
    memcpy(img + 0xff00, cpu_bios_rm, sizeof(cpu_bios_rm));
    memcpy(img + 0xff40, cpu_bios_pm, sizeof(cpu_bios_pm));
    memcpy(img + 0xfff0, cpu_bios_reset, sizeof(cpu_bios_reset));
    g_assert_true(g_file_set_contents(bios, (char *)img, 64 * KiB, NULL));

    memset(&s, 0, sizeof(s));
    s.qs = qtest_pc_boot("-nodefaults -S -accel tcg -bios %s "
                         "-device fake-accel,id=accel,mem-size=1M", bios);
    s.qts = s.qs->qts;
    fa_map(&s, dl_pci_find(s.qs->pcibus, FACCEL_PCI_VENDOR_ID,
                           FACCEL_PCI_DEVICE_ID));
    unlink(bios);
    /* the BIOS addresses BAR2 with 32 bits */
    g_assert_cmphex(s.mem.addr + off + dwords * 4, <=, 0x100000000ULL);
    qtest_writel(s.qts, 0x7000, s.mem.addr + off);
    qtest_writel(s.qts, 0x7004, dwords);
    qtest_writel(s.qts, 0x7008, 0);
    g_assert_cmpuint(fa_p2p_bytes(&s), ==, 0);
    rsp = qtest_qmp(s.qts, "{'execute': 'cont'}");
    g_assert_false(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);

    end = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
    while (qtest_readl(s.qts, 0x7008) != 0x600d) {
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(1000);
    }
    /* the stores landed in device memory ... */
    for (i = 0; i < dwords; i += 97) {
        word = qpci_io_readl(s.dev, s.mem, off + i * 4);
        g_assert_cmphex(word, ==, 0x5a5aa5a5);
    }
    /* ... and were not counted */
    g_assert_cmpuint(fa_p2p_bytes(&s), ==, 0);

    /* a qtest write into BAR2 is a bus write: it counts */
    qpci_io_writel(s.dev, s.mem, off, 0x12345678);
    g_assert_cmpuint(fa_p2p_bytes(&s), ==, 4);
    fa_stop(&s);
}

/* Registers, fault window and device memory survive migration. */
static void test_migration(void)
{
    g_autofree char *path = g_strdup_printf("%s/faccel-mig-%d.sock",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *uri = g_strdup_printf("unix:%s", path);
    g_autofree char *args = NULL;
    uint8_t in[8192];
    uint32_t count, crc;
    FAState s, d;

    fa_start(&s, ",mem-size=1M");
    fa_fill_pattern(in, sizeof(in), 9);
    qpci_memwrite(s.dev, s.mem, 0x10000, in, sizeof(in));
    fa_wr(&s, FACCEL_REG_SCRATCH, 0x5ca1ab1e);
    fa_wr(&s, FACCEL_REG_ENG_FILL, 0x01020304);
    g_assert_cmphex(fa_engine(&s, FACCEL_ENG_OP_COPY, 0x10000, 0x20000,
                              sizeof(in)), ==, FACCEL_ENG_STATUS_DONE);
    crc = fa_rd(&s, FACCEL_REG_ENG_CRC);
    set_fault(&s, 0x30000, 0x2000, true);
    g_assert_cmphex(qpci_io_readl(s.dev, s.mem, 0x30000), ==, 0xffffffff);
    count = fa_rd(&s, FACCEL_REG_RESET_COUNT);

    args = g_strdup_printf("-nodefaults -device fake-accel,mem-size=1M "
                           "-incoming %s", uri);
    memset(&d, 0, sizeof(d));
    d.qs = qtest_pc_boot("%s", args);
    d.dev = dl_pci_find(d.qs->pcibus, FACCEL_PCI_VENDOR_ID,
                        FACCEL_PCI_DEVICE_ID);
    migrate(s.qs, d.qs, uri);
    unlink(path);
    /* config space (BARs) migrated: same addresses */
    d.regs = s.regs;
    d.mem = s.mem;

    g_assert_cmphex(fa_rd(&d, FACCEL_REG_SCRATCH), ==, 0x5ca1ab1e);
    g_assert_cmphex(fa_rd(&d, FACCEL_REG_ENG_FILL), ==, 0x01020304);
    g_assert_cmphex(fa_rd(&d, FACCEL_REG_ENG_CRC), ==, crc);
    g_assert_cmpuint(fa_rd(&d, FACCEL_REG_ENG_COUNT), ==, 1);
    g_assert_cmpuint(fa_rd(&d, FACCEL_REG_RESET_COUNT), ==, count);
    g_assert_cmpuint(fa_rd(&d, FACCEL_REG_FAULT_HITS), ==, 1);
    g_assert_true(fa_rd(&d, FACCEL_REG_STATUS) & FACCEL_STATUS_FAULT_ACTIVE);
    /* the fault overlay was rebuilt on the destination */
    g_assert_cmphex(qpci_io_readl(d.dev, d.mem, 0x31000), ==, 0xffffffff);
    g_assert_cmphex(qpci_io_readl(d.dev, d.mem, 0x32000), ==, 0);
    /* device memory, including what the engine wrote, arrived */
    g_assert_cmphex(fa_engine(&d, FACCEL_ENG_OP_CRC, 0x10000, 0, sizeof(in)),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&d, FACCEL_REG_ENG_CRC), ==,
                    fa_ref_crc32(in, sizeof(in)));
    g_assert_cmphex(fa_engine(&d, FACCEL_ENG_OP_CRC, 0x20000, 0, sizeof(in)),
                    ==, FACCEL_ENG_STATUS_DONE);
    g_assert_cmphex(fa_rd(&d, FACCEL_REG_ENG_CRC), ==, crc);

    fa_stop(&s);
    fa_stop(&d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/fake-accel/identity", test_identity);
    qtest_add_func("/fake-accel/registers", test_registers);
    qtest_add_func("/fake-accel/reset", test_reset);
    qtest_add_func("/fake-accel/mem-rw", test_mem_rw);
    qtest_add_func("/fake-accel/engine/crc", test_engine_crc);
    qtest_add_func("/fake-accel/engine/copy-fill", test_engine_copy_fill);
    qtest_add_func("/fake-accel/engine/errors", test_engine_errors);
    qtest_add_func("/fake-accel/memdev", test_memdev);
    qtest_add_func("/fake-accel/memdev-bad-size", test_memdev_bad_size);
    qtest_add_func("/fake-accel/memdev-mem-size", test_memdev_mem_size);
    qtest_add_func("/fake-accel/fault-window", test_fault_window);
    qtest_add_func("/fake-accel/fault-window-move", test_fault_window_move);
    qtest_add_func("/fake-accel/p2p", test_p2p);
    qtest_add_func("/fake-accel/migration", test_migration);
    qtest_add_func("/fake-accel/counter/sources", test_counter_sources);
    qtest_add_func("/fake-accel/counter/cpu", test_counter_cpu);
    if (qtest_has_device("devmem-nic")) {
        qtest_add_func("/fake-accel/counter/nic-rx", test_counter_nic_rx);
    }
    return g_test_run();
}
