/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * devmem-lab generic-fuzz configurations, in the format of QEMU's
 * tests/qtest/fuzz/generic_fuzz_configs.h.
 *
 * scripts/overlay-qemu copies this file into the QEMU work tree's
 * tests/qtest/fuzz/ and #includes it at the top of predefined_configs[] in
 * generic_fuzz_configs.h, so each entry becomes the libFuzzer target
 * "generic-fuzz-<name>" of qemu-fuzz-x86_64. Only fuzzing builds
 * (--enable-fuzzing) compile that header. Run them with scripts/fuzz.
 *
 * Every entry ends with "}," because QEMU's own entries follow.
 */

    {
        /*
         * devmem-nic on the root complex, cabled to slirp so RX sees
         * traffic. Four queue pairs keep the state small; the register
         * paths are the same as with eight.
         */
        .name = "devmem-nic",
        .args = "-M q35 -nodefaults "
        "-device devmem-nic,netdev=net0,queues=4 -netdev user,id=net0",
        .objects = "devmem-nic*",
    }, {
        /* fake-accel with the smallest device memory (BAR2) it accepts. */
        .name = "fake-accel",
        .args = "-M q35 -nodefaults -device fake-accel,mem-size=1M",
        .objects = "fake-accel*",
    }, {
        /*
         * Both devices: the NIC's DMA can target the accelerator's BAR2
         * (P2P), the accelerator's engine can target the NIC's registers.
         */
        .name = "devmem-lab-p2p",
        .args = "-M q35 -nodefaults "
        "-device devmem-nic,netdev=net0,queues=4 -netdev user,id=net0 "
        "-device fake-accel,mem-size=1M",
        .objects = "devmem-nic* fake-accel*",
    },
