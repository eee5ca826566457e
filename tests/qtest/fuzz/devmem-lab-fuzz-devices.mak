# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab fuzz build: the x86_64 devices it needs (configure --without-default-devices
# --with-devices-x86_64=devmem-lab-fuzz). scripts/overlay-qemu copies this file to
# configs/devices/x86_64-softmmu/devmem-lab-fuzz.mak in the QEMU work tree.
CONFIG_Q35=y
CONFIG_DEVMEM_NIC=y
CONFIG_FAKE_ACCEL=y
