// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the fake-accel driver's pure helpers and uAPI layout.
 */

#include <kunit/test.h>
#include <linux/stddef.h>

#include "fake_accel.h"

static void faccel_test_alloc_size(struct kunit *test)
{
	const u64 mem = 16ULL << 20;
	size_t out = 0;

	KUNIT_EXPECT_EQ(test, faccel_alloc_size(0, mem, &out), -EINVAL);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(1, mem, &out), 0);
	KUNIT_EXPECT_EQ(test, out, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(PAGE_SIZE, mem, &out), 0);
	KUNIT_EXPECT_EQ(test, out, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(PAGE_SIZE + 1, mem, &out), 0);
	KUNIT_EXPECT_EQ(test, out, 2 * PAGE_SIZE);
	/* ncdevmem's udmabuf-sized request */
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(16000ULL * PAGE_SIZE, mem, &out),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(16000ULL * PAGE_SIZE,
						256ULL << 20, &out), 0);
	KUNIT_EXPECT_EQ(test, out, 16000 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(mem, mem, &out), 0);
	KUNIT_EXPECT_EQ(test, out, mem);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(mem + 1, mem, &out), -ENOMEM);
	KUNIT_EXPECT_EQ(test, faccel_alloc_size(U64_MAX, U64_MAX, &out),
			-EINVAL);
}

static void faccel_test_engine_cmd(struct kunit *test)
{
	u32 reg = 0;

	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(FACCEL_ENGINE_COPY, &reg), 0);
	KUNIT_EXPECT_EQ(test, reg, FACCEL_ENG_OP_COPY);
	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(FACCEL_ENGINE_CRC, &reg), 0);
	KUNIT_EXPECT_EQ(test, reg, FACCEL_ENG_OP_CRC);
	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(FACCEL_ENGINE_FILL, &reg), 0);
	KUNIT_EXPECT_EQ(test, reg, FACCEL_ENG_OP_FILL);
	/* no host (DMA address) operands from userspace */
	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(FACCEL_ENGINE_CRC |
						FACCEL_ENG_CMD_SRC_HOST, &reg),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(FACCEL_ENGINE_COPY |
						FACCEL_ENG_CMD_DST_HOST, &reg),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(0, &reg), -EINVAL);
	KUNIT_EXPECT_EQ(test, faccel_engine_cmd(4, &reg), -EINVAL);
}

/* ENGINE operands: a range inside the caller's buffer, nothing else. */
static void faccel_test_range_ok(struct kunit *test)
{
	const size_t size = 1 << 20;

	KUNIT_EXPECT_TRUE(test, faccel_range_ok(0, size, size));
	KUNIT_EXPECT_TRUE(test, faccel_range_ok(size - 8, 8, size));
	KUNIT_EXPECT_TRUE(test, faccel_range_ok(size, 0, size));
	KUNIT_EXPECT_FALSE(test, faccel_range_ok(size - 8, 16, size));
	KUNIT_EXPECT_FALSE(test, faccel_range_ok(size, 1, size));
	KUNIT_EXPECT_FALSE(test, faccel_range_ok(U64_MAX - 3, 8, size));
	KUNIT_EXPECT_FALSE(test, faccel_range_ok(U64_MAX, U32_MAX, size));
}

static void faccel_test_fault_pfn(struct kunit *test)
{
	const phys_addr_t phys = 0x800000000ULL + 3 * PAGE_SIZE;

	KUNIT_EXPECT_EQ(test, faccel_fault_pfn(phys, 2 * PAGE_SIZE, 0),
			PHYS_PFN(phys));
	KUNIT_EXPECT_EQ(test, faccel_fault_pfn(phys, 2 * PAGE_SIZE, 1),
			PHYS_PFN(phys) + 1);
	KUNIT_EXPECT_EQ(test, faccel_fault_pfn(phys, 2 * PAGE_SIZE, 2), 0UL);
	KUNIT_EXPECT_EQ(test, faccel_fault_pfn(phys, 0, 0), 0UL);
}

static void faccel_test_uapi_layout(struct kunit *test)
{
	/* same layout for 32- and 64-bit userspace: no compat handler */
	KUNIT_EXPECT_EQ(test, sizeof(struct faccel_info), 32);
	KUNIT_EXPECT_EQ(test, sizeof(struct faccel_alloc), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct faccel_alloc, fd), 20);
	KUNIT_EXPECT_EQ(test, sizeof(struct faccel_engine), 56);
	KUNIT_EXPECT_EQ(test, offsetof(struct faccel_engine, src), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct faccel_engine, done_len), 48);
	KUNIT_EXPECT_EQ(test, FACCEL_IOCTL_ENGINE, 0xc038fa02);
	KUNIT_EXPECT_EQ(test, _IOC_NR(FACCEL_IOCTL_ENGINE), 2);
	KUNIT_EXPECT_EQ(test, _IOC_TYPE(FACCEL_IOCTL_RESET), 0xFA);
	KUNIT_EXPECT_EQ(test, sizeof(struct faccel_fault), 24);
	KUNIT_EXPECT_EQ(test, FACCEL_IOCTL_FAULT, 0xc018fa04);
}

/*
 * Revocation needs dynamic importers: static ones (devmem TCP) are refused
 * unless allow_static_importers=1 is given (boot with it and this fails).
 */
static void faccel_test_static_importers_default(struct kunit *test)
{
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(faccel_allow_static_importers),
			       "static importers must be refused by default");
}

static struct kunit_case faccel_test_cases[] = {
	KUNIT_CASE(faccel_test_alloc_size),
	KUNIT_CASE(faccel_test_engine_cmd),
	KUNIT_CASE(faccel_test_range_ok),
	KUNIT_CASE(faccel_test_fault_pfn),
	KUNIT_CASE(faccel_test_uapi_layout),
	KUNIT_CASE(faccel_test_static_importers_default),
	{}
};

static struct kunit_suite faccel_test_suite = {
	.name = "fake-accel",
	.test_cases = faccel_test_cases,
};

kunit_test_suite(faccel_test_suite);
