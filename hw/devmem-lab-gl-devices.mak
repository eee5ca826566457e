# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab's GL QEMU (scripts/build-qemu --variant gl): the default variant's devices
# plus virtio-gpu (-device virtio-gpu-gl-pci: the gpu pair, run-vm --gpu). Copied by
# scripts/overlay-qemu to configs/devices/x86_64-softmmu/devmem-lab-gl.mak.
include devmem-lab.mak
CONFIG_VIRTIO_GPU=y
