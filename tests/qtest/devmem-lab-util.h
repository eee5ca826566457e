/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-lab qtest helpers that know no device: PCI lookup, bus
 * mastering, the -D log, QOM properties and migration.
 */
#ifndef DEVMEM_LAB_UTIL_H
#define DEVMEM_LAB_UTIL_H

#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/libqos.h"

/* The last function on @bus with these IDs (asserts there is one) */
QPCIDevice *dl_pci_find(QPCIBus *bus, int vendor_id, int device_id);

/* Sets or clears PCI_COMMAND_MASTER */
void dl_set_bus_master(QPCIDevice *dev, bool on);

/*
 * Asserts that the -D log at @path got a line containing @needle after
 * offset *@seen, and moves *@seen past it.  Guest errors and trace
 * events both land there.
 */
void dl_expect_log(const char *path, size_t *seen, const char *needle);

/* How many times @needle occurs in the whole -D log at @path */
unsigned dl_count_log(const char *path, const char *needle);

/* Waits (60 s at most) until query-migrate says completed; never failed */
void dl_wait_migration(QTestState *qts);

/*
 * A migration's destination: qtest_pc_boot(@fmt, ...) with -incoming defer
 * (its allocator and PCI bus set up on a machine that is not loading), then
 * migrate-incoming @uri.  With a file: @uri, dl_wait_migration() next; with
 * a listening one (unix:, tcp:), start the source's migration.
 */
QOSState *dl_boot_incoming(const char *uri, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

/* qom-set and qom-get of one property of the object at @path */
void dl_qom_set_str(QTestState *qts, const char *path, const char *prop,
                    const char *val);
void dl_qom_set_uint(QTestState *qts, const char *path, const char *prop,
                     uint64_t val);
void dl_qom_set_bool(QTestState *qts, const char *path, const char *prop,
                     bool val);
/* a qom-set that must fail */
void dl_qom_set_str_fails(QTestState *qts, const char *path,
                          const char *prop, const char *val);
char *dl_qom_get_str(QTestState *qts, const char *path, const char *prop);
uint64_t dl_qom_get_uint(QTestState *qts, const char *path,
                         const char *prop);
bool dl_qom_get_bool(QTestState *qts, const char *path, const char *prop);

#endif /* DEVMEM_LAB_UTIL_H */
