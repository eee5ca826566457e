/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devmem-lab qtest helpers for fake-accel: boot and map, registers, the
 * copy/CRC engine, and reference data (docs/specs/fake-accel.rst).
 */
#ifndef DEVMEM_LAB_ACCEL_H
#define DEVMEM_LAB_ACCEL_H

#include "libqos/libqos.h"
#include "libqos/pci.h"

/* An address nothing decodes on the qos pc machine (RAM is 128 MiB). */
#define FA_UNMAPPED_ADDR    0x40000000ULL

typedef struct FAState {
    QOSState *qs;
    QTestState *qts;
    QPCIDevice *dev;
    QPCIBar regs;
    QPCIBar mem;
    uint64_t regs_size;
    uint64_t mem_size;
    char *log;              /* -D file, or NULL */
    size_t log_seen;        /* bytes of it already matched */
} FAState;

/*
 * Boots a pc machine with -nodefaults and @args, then maps the
 * fake-accel at @devfn, or the one found by its IDs if @devfn is < 0.
 * The caller zeroes *@s (and may set s->log) first.
 */
void fa_boot(FAState *s, int devfn, const char *args);
/* Takes @dev (asserts non-NULL), enables it and maps both BARs */
void fa_map(FAState *s, QPCIDevice *dev);
/* A fake-accel @dev on the machine of @qs: zeroes *@s, then fa_map() */
void fa_attach(FAState *s, QOSState *qs, QPCIDevice *dev);
/* Frees the device, shuts QEMU down, removes the log if any */
void fa_stop(FAState *s);

uint32_t fa_rd(FAState *s, uint32_t reg);
void fa_wr(FAState *s, uint32_t reg, uint32_t val);

/* Runs one engine command and returns ENG_STATUS */
uint32_t fa_engine(FAState *s, uint32_t cmd, uint64_t src, uint64_t dst,
                   uint32_t len);
/* The ENG_STATUS of a command that failed with @code */
uint32_t fa_eng_err(uint32_t code);

/* Asserts @needle in s->log after the last match (dl_expect_log) */
void fa_expect_log(FAState *s, const char *needle);

/* A byte pattern that differs for each seed */
void fa_fill_pattern(uint8_t *buf, size_t len, unsigned seed);
/* Bitwise CRC-32 (IEEE, reflected), independent of the device's zlib */
uint32_t fa_ref_crc32(const uint8_t *p, size_t len);

#endif /* DEVMEM_LAB_ACCEL_H */
