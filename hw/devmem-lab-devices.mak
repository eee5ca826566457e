# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab's QEMU (scripts/build-qemu, default variant): the x86_64 devices the lab boots,
# built with configure --without-default-devices --with-devices-x86_64=devmem-lab.
# scripts/overlay-qemu copies this file to configs/devices/x86_64-softmmu/devmem-lab.mak in
# the QEMU work tree. Every board and device below is used; a line names its user.
# With --without-default-devices only what is listed here (and what it selects) is built:
# Kconfig's "default y" and "imply" do not apply, so a device used anywhere must be here.

# Boards: q35 (scripts/run-vm, migrate-vm, kunit --qemu_args, vng-devmem, NIPA's qemu_opt);
# pc (the qtests' qtest_pc_boot(), kunit.py's own machine with scripts/kunit --no-devices).
CONFIG_Q35=y
CONFIG_I440FX=y

# The topology (scripts/run-vm): PCIe root ports and the x3130 switch the dut and the
# accelerator sit behind.
CONFIG_PCIE_PORT=y
CONFIG_XIO3130=y

# Our devices.
CONFIG_DEVMEM_NIC=y
CONFIG_FAKE_ACCEL=y

# virtio over PCI: virtio-blk (the root and tests disks, --modules), virtio-net (the
# baseline pair, run-vm --baseline; vng --net), virtio-9p (run-vm --share: make shell; vng's
# root without virtiofsd), vhost-user-fs (vng's root with virtiofsd), virtio-serial
# (vng's console and virtme.* ports), virtio-rng (an entropy source for guests that ask).
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_9P=y
CONFIG_VHOST_USER_FS=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_RNG=y

# The igb pair (run-vm --igb: make bench's data path).
CONFIG_IGB_PCI_EXPRESS=y

# vng's watchdog (-device i6300esb, virtme-ng's x86 default).
CONFIG_WDT_IB6300ESB=y

# The qtests' foreign peer BAR (-device ivshmem-plain).
CONFIG_IVSHMEM_DEVICE=y

# QEMU 10.2 without CXL misses a stub (hw/acpi/cxl.c needs cxl_fmws_get_all_sorted): build
# CXL (and the pxb and type 3 device it needs) in rather than patch QEMU, as the fuzz list does.
CONFIG_PXB=y
CONFIG_CXL=y
CONFIG_CXL_MEM_DEVICE=y
