# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab sanitizer build (scripts/build-qemu --variant fuzz): the x86_64 devices it has
# (configure --without-default-devices --with-devices-x86_64=devmem-lab-fuzz).
# scripts/overlay-qemu copies this file to
# configs/devices/x86_64-softmmu/devmem-lab-fuzz.mak in the QEMU work tree.
# The same build serves the fuzzers (q35) and `make check-asan` (our qtests boot
# the default pc machine and use ivshmem-plain as a foreign peer BAR).
CONFIG_Q35=y
CONFIG_I440FX=y
CONFIG_IVSHMEM_DEVICE=y
CONFIG_DEVMEM_NIC=y
CONFIG_FAKE_ACCEL=y
# QEMU 10.2 without CXL misses a stub (hw/acpi/cxl.c needs cxl_fmws_get_all_sorted):
# build CXL (and the type 3 device and root port it needs) in rather than patch QEMU.
CONFIG_PXB=y
CONFIG_PCIE_PORT=y
CONFIG_CXL=y
CONFIG_CXL_MEM_DEVICE=y
