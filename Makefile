# SPDX-License-Identifier: GPL-2.0-or-later
# devmem-lab: the two commands are `make run` and `make check`; see README.md.

SHELL := /bin/bash
export DL_T0 := $(shell date +%s)

.PHONY: bench all help bootstrap fetch qemu kernel selftests image build run check check-nobuild \
	check-headers clean distclean
.PHONY: fuzz check-asan

all: help

help:
	@echo "make run     set up, build, boot the guest, run the devmem selftests, print a summary"
	@echo "make check   build, then qtests + header agreement + style + a boot smoke test"
	@echo "make build   only build (QEMU, kernel, selftests, guest image)"
	@echo "make check-debug  debug kernel (KASAN, kmemleak, lockdep): fault scenarios, no splat/leak"
	@echo "make fuzz    FUZZ_TIME=600 FUZZ_DEVICE=all: libFuzzer + ASan/UBSan on both devices"
	@echo "make check-asan  the qtests against an ASan + UBSan build of QEMU"
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

run: build
	@scripts/run-selftests

check: build
	@scripts/check

check-headers:
	@scripts/check-headers

# Debug-kernel run: KASAN/kmemleak/lockdep kernel, fault scenarios of tests/guest/debug.list.
.PHONY: check-debug
check-debug: fetch
	@scripts/run-debug

clean:
	rm -rf out

distclean: clean
	rm -rf "$${XDG_CACHE_HOME:-$$HOME/.cache}/devmem-lab"

bench: build
	@scripts/bench

# Hardening (scripts/fuzz, scripts/check-asan): libFuzzer + ASan/UBSan, separate build dirs.
FUZZ_TIME ?= 600
FUZZ_DEVICE ?= all
fuzz: fetch
	@scripts/fuzz --time $(FUZZ_TIME) --device $(FUZZ_DEVICE)

check-asan: fetch
	@scripts/check-asan
