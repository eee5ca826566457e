# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab: the two commands are `make run` and `make check`; see README.md.

SHELL := /bin/bash
export DL_T0 := $(shell date +%s)

.PHONY: all help bootstrap fetch fetch-qemu fetch-kernel qemu kernel selftests image build \
	build-compiles build-side run run-baseline run-gpu \
	gpu-build check check-headers check-debug check-migration clean distclean bench soak
.PHONY: fuzz check-asan mutants
.PHONY: patches check-patches check-series oot-modules run-oot qemu-args check-kernel-config vng-run check-nipa
.PHONY: shell kunit

all: help

# Every target, one line each (a harness test checks that none is missing).
help:
	@echo "make run          set up, build, boot the guest, run the selftests on the default pairs, print a summary"
	@echo "                  PAIRS=\"...\" other pairs (gpu builds what it boots), TESTS=\"dir:prog ...\" fewer tests,"
	@echo "                  SHARD=I/N one slice of the list (CI shards; scripts/ktap-report --merge joins them),"
	@echo "                  KERNEL=bzImage [MODULES=dir] a prebuilt kernel (docs/your-kernel.md)"
	@echo "make run-baseline the same tests on the virtio-net baseline pair (NIPA's control)"
	@echo "make run-gpu      build the GL QEMU and the gpu kernel, run the devmem tests on virtio-gpu VRAM"
	@echo "make gpu-build    only build what run-gpu boots (the GL QEMU, the gpu kernel)"
	@echo "make check        build, then qtests + header agreement + style + a boot smoke test"
	@echo "make shell        boot the lab, a root shell on this terminal, \$$PWD shared at /host (docs/shell.md);"
	@echo "                  KERNEL=bzImage [MODULES=dir] or KERNEL_SRC= as make run, SHARE=dir another directory"
	@echo "make kunit        both drivers' KUnit suites through the kernel's kunit.py on our QEMU (scripts/kunit)"
	@echo "make check-headers  only the register-header agreement of QEMU and Linux"
	@echo "make check-debug  debug kernel (KASAN, kmemleak, lockdep): fault scenarios, no splat/leak"
	@echo "make check-migration  live-migrate a running guest twice during an ncdevmem stream (udmabuf, fake-accel)"
	@echo "make build        only build (QEMU, kernel, selftests, guest image)"
	@echo "make bootstrap    install the host packages (scripts/bootstrap)"
	@echo "make fetch        fetch the QEMU and Linux sources from Debian (scripts/fetch-sources)"
	@echo "make fetch-qemu | fetch-kernel  fetch one of them"
	@echo "make qemu | kernel | selftests | image  build one of them"
	@echo "make build-compiles | build-side  make build's two halves, which it runs side by side:"
	@echo "                  qemu kernel selftests, and fetch-kernel image (little CPU: downloads, dpkg)"
	@echo "make bench        build times, boot, data path and test-part figures (scripts/bench)"
	@echo "make soak         make run SOAK_RUNS times (default 10), one table row each: flakes show up"
	@echo "make fuzz         FUZZ_TIME=600 FUZZ_DEVICE=all: libFuzzer + ASan/UBSan on both devices"
	@echo "make check-asan   the qtests against an ASan + UBSan build of QEMU"
	@echo "make mutants      the qtests against each defect of tests/mutants/ (scripts/mutants): N mutants, N killed"
	@echo "make patches      git-am-able Linux and QEMU series in out/patches/"
	@echo "make check-patches  prove those series apply to the fetched trees"
	@echo "make check-series   each patch of both series: builds (x86_64, i386; W=1, sparse), checkpatch,"
	@echo "                  kernel-doc, the qtests (netdev's per-patch build checks; cached)"
	@echo "make oot-modules  build the drivers as out-of-tree modules"
	@echo "make run-oot      make run with the out-of-tree modules"
	@echo "make qemu-args    print our devices' QEMU arguments, for other runners"
	@echo "make check-kernel-config CONFIG=.config  does a kernel have what the guest and tests need?"
	@echo "make vng-run      boot a kernel with virtme-ng and our devices, run devmem.py"
	@echo "make check-nipa   the NIPA executor kit's tests (ci/nipa, docs/your-kernel.md NIPA)"
	@echo "make clean        remove out/ (build caches live in ~/.cache/devmem-lab: make distclean)"
	@echo "make distclean    clean, and remove the build caches"
	@echo "make help | all  this list (plain make too)"
	@echo "CI that needs the exit code (0 pass, 1 test failure, 2 usage, 3 infrastructure) calls"
	@echo "the scripts: make turns every failure into 2 (README \"Exit codes\")."

# Paths end up in QEMU options, where a comma separates options: refuse them here.
comma := ,
$(foreach v,KERNEL MODULES KERNEL_CONFIG DEVMEM_LAB_BUILD DEVMEM_LAB_OUT DEVMEM_LAB_CACHE,\
	$(if $(findstring $(comma),$($(v))),$(error $(v)=$($(v)) contains a comma, which QEMU's option syntax cannot carry (commas separate options); use a path without one)))

# (DL_BOOTSTRAPPED: make build's sub-makes, after their parent's check)
bootstrap:
	@$(if $(DL_BOOTSTRAPPED),true,scripts/bootstrap --check >/dev/null 2>&1 || scripts/bootstrap)

fetch: bootstrap
	@scripts/fetch-sources

fetch-qemu: bootstrap
	@scripts/fetch-sources qemu

fetch-kernel: bootstrap
	@scripts/fetch-sources kernel

qemu: fetch-qemu
	@scripts/build-qemu

kernel: fetch-kernel
	@scripts/build-kernel

selftests: fetch-kernel
	@scripts/build-selftests

image: bootstrap
	@scripts/build-image

# make build: the compiles one after another (each takes every core: QEMU, the kernel, the
# selftests), and beside them what takes little CPU: the kernel's download and unpacking
# (during QEMU's build) and the guest image (mmdebstrap: downloads and dpkg). The kernel
# waits for its fetch (fetch-sources' lock). Measured: docs/bench/README.md "Cold path".
# (The sub-makes get this make's DL_T0: every line's elapsed time counts from one start.)
build: bootstrap
	@$(MAKE) --no-print-directory -j2 DL_T0=$(DL_T0) build-compiles build-side

build-compiles:
	@$(MAKE) --no-print-directory DL_SERIAL=1 DL_BOOTSTRAPPED=1 DL_T0=$(DL_T0) qemu kernel selftests

build-side:
	@$(MAKE) --no-print-directory DL_SERIAL=1 DL_BOOTSTRAPPED=1 DL_T0=$(DL_T0) fetch-kernel image

# (build's sub-makes: their targets one after another, whatever -j they inherit)
ifdef DL_SERIAL
.NOTPARALLEL:
endif

# The pairs: without PAIRS, make run (like the CI pipelines and check-kernel-config) runs
# scripts/run-selftests' default pairs, the one place that names them, all on what
# `make build` builds (the default QEMU and kernel). PAIRS="..." asks for others; gpu
# (virtio-gpu VRAM) runs only when asked for (PAIRS=gpu, make run-gpu) and then builds what
# it boots: the GL QEMU and a kernel with gpu.config. The virtio-net baseline of the same
# list is its own target (make run-baseline): together they do not fit 20 min on 2 TCG cores.
GPU_CONFIGS := base devmem kunit vng gpu

# make run KERNEL=path/to/bzImage [MODULES=dir of .ko]: a prebuilt kernel, no kernel build.
# KERNEL_CONFIG=path/to/.config checks it first (scripts/check-kernel-config).
ifdef KERNEL
RUN_DEPS := qemu selftests image
RUN_KERNEL := --kernel "$(KERNEL)"
else
RUN_DEPS := build
RUN_KERNEL :=
endif
ifneq ($(filter gpu,$(PAIRS)),)
RUN_DEPS += gpu-build
endif
ifdef MODULES
RUN_KERNEL += --modules "$(MODULES)"
endif
RUN_ARGS :=
RUN_PAIRS := $(if $(PAIRS),--pairs "$(PAIRS)")
# TESTS="dir:prog ..." narrows make run; SHARD=I/N runs one slice of it (scripts/run-selftests).
ifdef TESTS
RUN_ARGS += --tests "$(TESTS)"
endif
ifdef SHARD
RUN_ARGS += --shard "$(SHARD)"
endif
# make run JOBS=N: N guests in parallel (default: what the machine holds). JOBS here means
# guests, not the builds' make -j: it is not passed on to the build scripts.
ifdef JOBS
RUN_ARGS += --jobs "$(JOBS)"
endif
unexport JOBS

run: $(RUN_DEPS)
	@$(if $(KERNEL_CONFIG),scripts/check-kernel-config --quiet $(RUN_PAIRS) \
		$(if $(MODULES),--oot) "$(KERNEL_CONFIG)" &&) \
		scripts/run-selftests $(RUN_PAIRS) $(RUN_KERNEL) $(RUN_ARGS)

run-baseline: $(RUN_DEPS)
	@scripts/run-selftests --pairs virtio $(RUN_KERNEL) $(RUN_ARGS)

# The gpu pair's builds: the GL QEMU (scripts/build-qemu --variant gl: a trixie build root)
# and, unless KERNEL= names one, the kernel with kernel-config/gpu.config.
gpu-build: selftests image
	@scripts/build-qemu --variant gl
	@$(if $(KERNEL),true,KERNEL_CONFIGS="$(GPU_CONFIGS)" scripts/build-kernel)

run-gpu: gpu-build
	@scripts/run-selftests --pairs gpu $(RUN_KERNEL) $(RUN_ARGS)

check: build
	@scripts/check

# The lab with a shell (scripts/shell): the directory make was started from is shared
# (the environment's PWD: with make -C, still the caller's), unless SHARE= names another.
SHARE ?= $(or $(PWD),$(CURDIR))
shell: $(RUN_DEPS)
	@scripts/shell --share "$(SHARE)" $(RUN_KERNEL)

kunit: qemu
	@scripts/kunit $(KUNIT_ARGS)

check-nipa:
	@scripts/check --only nipa

check-headers:
	@scripts/check-headers

# Debug-kernel run: KASAN/kmemleak/lockdep kernel, fault scenarios of tests/guest/debug.list.
check-debug: fetch
	@scripts/run-debug

# Live migration of a running guest (TCG, same host) during devmem RX, on both memories.
check-migration: build
	@scripts/check-migration

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
soak:
	@scripts/soak --runs $(SOAK_RUNS)

# Hardening (scripts/fuzz, scripts/check-asan): libFuzzer + ASan/UBSan, separate build dirs.
FUZZ_TIME ?= 600
FUZZ_DEVICE ?= all
fuzz: fetch
	@scripts/fuzz --time $(FUZZ_TIME) --device $(FUZZ_DEVICE)

check-asan: fetch
	@scripts/check-asan

# Do the qtests bite?  Each documented defect of tests/mutants/ built and tested.
mutants: fetch
	@scripts/mutants $(MUTANTS_ARGS)

# Your kernel, your QEMU, your runner (docs/your-kernel.md).
patches: fetch
	@scripts/make-patches

check-patches: fetch
	@scripts/make-patches --check

check-series: fetch
	@scripts/check-series

OOT_CONFIGS := base devmem kunit oot
oot-modules: fetch
	@KERNEL_CONFIGS="$(OOT_CONFIGS)" scripts/build-kernel
	@scripts/build-oot-modules

run-oot: oot-modules qemu selftests image
	@scripts/run-selftests --kernel "$$(KERNEL_CONFIGS="$(OOT_CONFIGS)" scripts/build-kernel --print-image)" \
		--modules "$$(scripts/build-oot-modules --print-dir)" $(RUN_PAIRS) $(RUN_ARGS)

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
