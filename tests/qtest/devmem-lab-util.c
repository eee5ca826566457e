/*
 * devmem-lab qtest helpers that know no device: PCI lookup, bus
 * mastering, the -D log, QOM properties and migration.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/libqos-pc.h"
#include "qobject/qdict.h"
#include "standard-headers/linux/pci_regs.h"
#include "devmem-lab-util.h"

static void dl_keep_dev(QPCIDevice *dev, int devfn, void *data)
{
    QPCIDevice **pdev = data;

    *pdev = dev;
}

QPCIDevice *dl_pci_find(QPCIBus *bus, int vendor_id, int device_id)
{
    QPCIDevice *dev = NULL;

    qpci_device_foreach(bus, vendor_id, device_id, dl_keep_dev, &dev);
    g_assert_nonnull(dev);
    return dev;
}

void dl_set_bus_master(QPCIDevice *dev, bool on)
{
    uint16_t cmd = qpci_config_readw(dev, PCI_COMMAND);

    cmd = on ? cmd | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
    qpci_config_writew(dev, PCI_COMMAND, cmd);
}

void dl_expect_log(const char *path, size_t *seen, const char *needle)
{
    g_autofree char *text = NULL;
    gsize len;
    char *hit;

    g_assert_true(g_file_get_contents(path, &text, &len, NULL));
    g_assert_cmpuint(len, >=, *seen);
    hit = strstr(text + *seen, needle);
    if (!hit) {
        g_test_message("'%s' not in the log after offset %zu:", needle,
                       *seen);
        g_test_message("%s", text + *seen);
    }
    g_assert_nonnull(hit);
    *seen = hit - text + strlen(needle);
}

unsigned dl_count_log(const char *path, const char *needle)
{
    g_autofree char *text = NULL;
    const char *p;
    unsigned n = 0;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    for (p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

void dl_wait_migration(QTestState *qts)
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

QOSState *dl_boot_incoming(const char *uri, const char *fmt, ...)
{
    g_autofree char *args = NULL;
    QOSState *qs;
    va_list ap;

    va_start(ap, fmt);
    args = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    /*
     * qtest_pc_boot() sets up the allocator from the RAM size it reads
     * through fw_cfg (select, then eight reads).  With -incoming file:...
     * the load starts as soon as QEMU's main loop runs and may land
     * between those accesses: it brings the source's fw_cfg position with
     * it (past the end of the entry it read), the reads return 0, and the
     * allocator ends at 0.  Load only once the boot's accesses are done.
     */
    qs = qtest_pc_boot("%s -incoming defer", args);
    qtest_qmp_assert_success(qs->qts, "{'execute': 'migrate-incoming', "
                             "'arguments': {'uri': %s}}", uri);
    return qs;
}

void dl_qom_set_str(QTestState *qts, const char *path, const char *prop,
                    const char *val)
{
    qtest_qmp_assert_success(qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %s}}",
                             path, prop, val);
}

void dl_qom_set_uint(QTestState *qts, const char *path, const char *prop,
                     uint64_t val)
{
    qtest_qmp_assert_success(qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %"
                             PRIu64 "}}", path, prop, val);
}

void dl_qom_set_bool(QTestState *qts, const char *path, const char *prop,
                     bool val)
{
    qtest_qmp_assert_success(qts, "{'execute': 'qom-set', 'arguments': {"
                             "'path': %s, 'property': %s, 'value': %i}}",
                             path, prop, val);
}

void dl_qom_set_str_fails(QTestState *qts, const char *path,
                          const char *prop, const char *val)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-set', 'arguments': {"
                           "'path': %s, 'property': %s, 'value': %s}}",
                           path, prop, val);

    g_assert_true(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
}

char *dl_qom_get_str(QTestState *qts, const char *path, const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", path, prop);
    char *v;

    g_assert_true(qdict_haskey(rsp, "return"));
    v = g_strdup(qdict_get_str(rsp, "return"));
    qobject_unref(rsp);
    return v;
}

uint64_t dl_qom_get_uint(QTestState *qts, const char *path,
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

bool dl_qom_get_bool(QTestState *qts, const char *path, const char *prop)
{
    QDict *rsp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': {"
                           "'path': %s, 'property': %s}}", path, prop);
    bool v;

    g_assert_true(qdict_haskey(rsp, "return"));
    v = qdict_get_bool(rsp, "return");
    qobject_unref(rsp);
    return v;
}
