# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab: the two commands are `make run` and `make check`; see README.md.

SHELL := /bin/bash
export DL_T0 := $(shell date +%s)

.PHONY: bench all help bootstrap fetch qemu kernel selftests image build run check check-nobuild \
	check-headers clean distclean
.PHONY: fuzz check-asan
.PHONY: patches check-patches oot-modules run-oot qemu-args check-kernel-config vng-run

all: help

help:
	@echo "make run     set up, build, boot the guest, run the selftests on the devmem-nic pairs, print a summary"
	@echo "make run-baseline  the same tests on the virtio-net baseline pair (NIPA's control)"
	@echo "make run-gpu       build the GL QEMU and the gpu kernel, run the devmem tests on virtio-gpu VRAM"
	@echo "make check   build, then qtests + header agreement + style + a boot smoke test"
	@echo "make build   only build (QEMU, kernel, selftests, guest image)"
	@echo "make check-debug  debug kernel (KASAN, kmemleak, lockdep): fault scenarios, no splat/leak"
	@echo "make fuzz    FUZZ_TIME=600 FUZZ_DEVICE=all: libFuzzer + ASan/UBSan on both devices"
	@echo "make check-asan  the qtests against an ASan + UBSan build of QEMU"
	@echo "make run KERNEL=bzImage [MODULES=dir]  the same, with a prebuilt kernel (docs/your-kernel.md)"
	@echo "make patches        git-am-able Linux and QEMU series in out/patches/ (check-patches: prove they apply)"
	@echo "make run-oot        drivers as out-of-tree modules (oot-modules: only build them)"
	@echo "make qemu-args      print our devices' QEMU arguments, for other runners"
	@echo "make check-kernel-config CONFIG=.config  does a kernel have what the guest and tests need?"
	@echo "make vng-run        boot a kernel with virtme-ng and our devices, run devmem.py"
	@echo "make clean   remove out/ (build caches live in ~/.cache/devmem-lab: make distclean)"

bootstrap:
	@scripts/bootstrap --check >/dev/null 2>&1 || scripts/bootstrap

fetch: bootstrap
	@scripts/fetch-sources

qemu: fetch
	@scripts/build-qemu

kernel: fetch
	@scripts/build-kernel

selftests: fetch
	@scripts/build-selftests

image: bootstrap
	@scripts/build-image

build: qemu kernel selftests image

# make run KERNEL=path/to/bzImage [MODULES=dir of .ko]: a prebuilt kernel, no kernel build.
# KERNEL_CONFIG=path/to/.config checks it first (scripts/check-kernel-config).
ifdef KERNEL
RUN_DEPS := qemu selftests image
RUN_ARGS := --kernel $(KERNEL)
else
RUN_DEPS := build
RUN_ARGS :=
endif
ifdef MODULES
RUN_ARGS += --modules $(MODULES)
endif
# TESTS="dir:prog ..." and PAIRS="devmem ..." narrow make run (scripts/run-selftests).
ifdef TESTS
RUN_ARGS += --tests "$(TESTS)"
endif
# make run: the pairs scripts/run-selftests defaults to (devmem accel; defined there only);
# gpu only in make run-gpu (which builds what it boots) or when PAIRS names it; the
# virtio-net baseline is its own target (make run-baseline).
ifdef PAIRS
RUN_ARGS += --pairs "$(PAIRS)"
endif
# make run JOBS=N: N guests in parallel (default: what the machine holds); SHARD=I/N: one
# deterministic slice of the list (scripts/ktap-report --merge joins the shards). JOBS here
# means guests, not the builds' make -j: it is not passed on to the build scripts.
ifdef JOBS
RUN_ARGS += --jobs $(JOBS)
endif
ifdef SHARD
RUN_ARGS += --shard $(SHARD)
endif
unexport JOBS

run: $(RUN_DEPS)
	@$(if $(KERNEL_CONFIG),scripts/check-kernel-config --quiet --pairs "$(if $(PAIRS),$(PAIRS),devmem accel)" \
		$(if $(MODULES),--oot) $(KERNEL_CONFIG) &&) \
		scripts/run-selftests $(RUN_ARGS)

.PHONY: run-baseline run-gpu
run-baseline: $(RUN_DEPS)
	@scripts/run-selftests --pairs virtio $(RUN_ARGS)

# The gpu pair (virtio-gpu VRAM): the GL QEMU (a trixie build root, scripts/build-qemu-gl)
# and a kernel with kernel-config/gpu.config, then the devmem tests on that memory.
GPU_CONFIGS := base devmem kunit vng gpu
run-gpu: selftests image
	@scripts/build-qemu-gl
	@KERNEL_CONFIGS="$(GPU_CONFIGS)" scripts/build-kernel
	@scripts/run-selftests --pairs gpu $(RUN_ARGS)

check: build
	@scripts/check

check-headers:
	@scripts/check-headers

# Debug-kernel run: KASAN/kmemleak/lockdep kernel, fault scenarios of tests/guest/debug.list.
.PHONY: check-debug
check-debug: fetch
	@scripts/run-debug

clean:
	rm -rf "$${DEVMEM_LAB_OUT:-out}"

# Both honour the overrides the scripts read (DEVMEM_LAB_OUT, DEVMEM_LAB_CACHE, DEVMEM_LAB_BUILD).
distclean: clean
	rm -rf "$${DEVMEM_LAB_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/devmem-lab}"
	@[ -z "$${DEVMEM_LAB_BUILD:-}" ] || rm -rf "$$DEVMEM_LAB_BUILD"

bench: build
	@scripts/bench

# `make run` SOAK_RUNS times in a row, one table row each (out/soak-*.md): flakes show up.
SOAK_RUNS ?= 10
.PHONY: soak
soak:
	@scripts/soak --runs $(SOAK_RUNS)

# Hardening (scripts/fuzz, scripts/check-asan): libFuzzer + ASan/UBSan, separate build dirs.
FUZZ_TIME ?= 600
FUZZ_DEVICE ?= all
fuzz: fetch
	@scripts/fuzz --time $(FUZZ_TIME) --device $(FUZZ_DEVICE)

check-asan: fetch
	@scripts/check-asan

# Your kernel, your QEMU, your runner (docs/your-kernel.md).
patches: fetch
	@scripts/make-patches

check-patches: fetch
	@scripts/make-patches --check

OOT_CONFIGS := base devmem kunit oot
oot-modules: fetch
	@KERNEL_CONFIGS="$(OOT_CONFIGS)" scripts/build-kernel
	@scripts/build-oot-modules

run-oot: oot-modules qemu selftests image
	@scripts/run-selftests --kernel "$$(KERNEL_CONFIGS="$(OOT_CONFIGS)" scripts/build-kernel --print-image)" \
		--modules "$$(scripts/build-oot-modules --print-dir)" $(filter-out --kernel $(KERNEL) --modules $(MODULES),$(RUN_ARGS))

qemu-args:
	@scripts/run-vm --print-qemu-args $(QEMU_ARGS_OPTS)

check-kernel-config:
	@scripts/check-kernel-config $(CONFIG)

# = build-kernel's default: vng boots the same kernel as make run.
VNG_CONFIGS := base devmem kunit vng
# virtme-ng is not part of the default bootstrap (only this target needs it): installed here,
# by name from trixie, asking first on a terminal as bootstrap always does.
vng-run: fetch qemu selftests image
	@scripts/bootstrap --check --vng >/dev/null 2>&1 || scripts/bootstrap --vng
	@KERNEL_CONFIGS="$(VNG_CONFIGS)" scripts/build-kernel
	@scripts/vng-devmem $(VNG_ARGS)
