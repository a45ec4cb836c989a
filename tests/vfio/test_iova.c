// SPDX-License-Identifier: MIT
/*
 * The vfio transport's IOVA allocator: it hands out only whole pages
 * inside the IOMMU's valid ranges (never page 0, never a reserved hole),
 * honours alignment and phase, fails with -ENOSPC when full, rejects
 * double frees, and merges freed space so that it can be used again.
 */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "testutil.h"
#include "vfio.h"

#define K 1024ull
#define M (1024ull * K)
#define G (1024ull * M)

static void test_init(void)
{
	/* Unsorted, overlapping, unaligned, with a page-0 start. */
	struct nvq_iova_range r[] = {
		{ 0xfef00000ull, 4 * G - 1 },
		{ 0, 0xfedfffffull },
		{ 0x100, 0x2fff },
		{ 5 * G + 1, 5 * G + 2 * 4096 + 10 }, /* one whole page */
		{ 7 * G, 7 * G + 100 }, /* no whole page */
	};
	struct nvq_iova a;
	uint64_t iova;

	CHECK_EQ(nvq_iova_init(&a, r, 5), 0);
	CHECK_EQ(a.nr, 3);
	CHECK_EQ(a.free[0].start, 4096);
	CHECK_EQ(a.free[0].last, 0xfedfffffull);
	CHECK_EQ(a.free[1].start, 0xfef00000ull);
	CHECK_EQ(a.free[2].start, 5 * G + 4096);
	CHECK_EQ(a.free[2].last, 5 * G + 2 * 4096 - 1);

	/* First fit starts above page 0. */
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &iova), 0);
	CHECK_EQ(iova, 4096);
	nvq_iova_destroy(&a);

	CHECK_EQ(nvq_iova_init(&a, NULL, 0), 0);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &iova), -ENOSPC);
	nvq_iova_destroy(&a);
}

static void test_hole(void)
{
	/* The MSI window is never handed out, even to a large request
	 * that would straddle it. */
	struct nvq_iova_range r[] = { { 0, 0xfedfffffull },
				      { 0xfef00000ull, 0x1ffffffffull } };
	struct nvq_iova a;
	uint64_t iova, big = 0xfee00000ull - 4096 - 1 * M;

	CHECK_EQ(nvq_iova_init(&a, r, 2), 0);
	CHECK_EQ(nvq_iova_alloc(&a, big, 4096, 0, &iova), 0);
	CHECK_EQ(iova, 4096);
	/* 1 MiB left below the hole: 2 MiB must come from above it. */
	CHECK_EQ(nvq_iova_alloc(&a, 2 * M, 4096, 0, &iova), 0);
	CHECK(iova >= 0xfef00000ull);
	CHECK_EQ(nvq_iova_alloc(&a, 1 * M, 4096, 0, &iova), 0);
	CHECK_EQ(iova, 0xfee00000ull - 1 * M);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &iova), 0);
	CHECK(iova >= 0xfef00000ull);
	nvq_iova_destroy(&a);
}

static void test_align_phase(void)
{
	struct nvq_iova_range r = { 0, 1 * G - 1 };
	struct nvq_iova a;
	uint64_t x, y;

	CHECK_EQ(nvq_iova_init(&a, &r, 1), 0);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &x), 0);
	CHECK_EQ(nvq_iova_alloc(&a, 4 * M, 2 * M, 0, &y), 0);
	CHECK_EQ(y % (2 * M), 0);
	CHECK_EQ(nvq_iova_alloc(&a, 4 * M, 2 * M, 0x5000, &y), 0);
	CHECK_EQ(y % (2 * M), 0x5000);
	/* The gap before the aligned block is still free: first fit. */
	CHECK_EQ(nvq_iova_alloc(&a, 8192, 4096, 0, &y), 0);
	CHECK_EQ(y, 8192);

	/* Bad arguments. */
	CHECK_EQ(nvq_iova_alloc(&a, 0, 4096, 0, &y), -EINVAL);
	CHECK_EQ(nvq_iova_alloc(&a, 100, 4096, 0, &y), -EINVAL);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 3 * 4096, 0, &y), -EINVAL);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 2048, 0, &y), -EINVAL);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 8192, 8192, &y), -EINVAL);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 8192, 100, &y), -EINVAL);
	nvq_iova_destroy(&a);
}

static void test_full_and_reuse(void)
{
	struct nvq_iova_range r = { 0, 64 * 4096 - 1 }; /* 63 usable pages */
	struct nvq_iova a;
	uint64_t p[63], x;
	int i;

	CHECK_EQ(nvq_iova_init(&a, &r, 1), 0);
	CHECK_EQ(nvq_iova_free_bytes(&a), 63 * 4096);
	for (i = 0; i < 63; i++) {
		CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &p[i]), 0);
		CHECK_EQ(p[i], (uint64_t)(i + 1) * 4096);
	}
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &x), -ENOSPC);
	CHECK_EQ(nvq_iova_free_bytes(&a), 0);

	/* Free every other page, then the rest: everything merges back into
	 * one extent. */
	for (i = 0; i < 63; i += 2)
		CHECK_EQ(nvq_iova_free(&a, p[i], 4096), 0);
	CHECK_EQ(a.nr, 32);
	CHECK_EQ(nvq_iova_alloc(&a, 8192, 4096, 0, &x), -ENOSPC);
	for (i = 1; i < 63; i += 2)
		CHECK_EQ(nvq_iova_free(&a, p[i], 4096), 0);
	CHECK_EQ(a.nr, 1);
	CHECK_EQ(nvq_iova_free_bytes(&a), 63 * 4096);
	CHECK_EQ(nvq_iova_alloc(&a, 63 * 4096, 4096, 0, &x), 0);
	CHECK_EQ(x, 4096);

	/* Double and overlapping frees are refused. */
	CHECK_EQ(nvq_iova_free(&a, 4096, 4096), 0);
	CHECK_EQ(nvq_iova_free(&a, 4096, 4096), -EINVAL);
	CHECK_EQ(nvq_iova_free(&a, 0, 8192), -EINVAL);
	CHECK_EQ(nvq_iova_free(&a, UINT64_MAX - 4095, 8192), -EINVAL);
	CHECK_EQ(nvq_iova_free(&a, 8192, 0), -EINVAL);
	nvq_iova_destroy(&a);
}

static void test_top_of_space(void)
{
	/* A range that ends at 2^64 - 1 must not overflow. */
	struct nvq_iova_range r = { UINT64_MAX - 16 * 4096 + 1, UINT64_MAX };
	struct nvq_iova a;
	uint64_t x, y;

	CHECK_EQ(nvq_iova_init(&a, &r, 1), 0);
	CHECK_EQ(nvq_iova_alloc(&a, 16 * 4096, 4096, 0, &x), 0);
	CHECK_EQ(x, UINT64_MAX - 16 * 4096 + 1);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 4096, 0, &y), -ENOSPC);
	CHECK_EQ(nvq_iova_free(&a, x, 16 * 4096), 0);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 1ull << 63, 0, &y), -ENOSPC);
	CHECK_EQ(nvq_iova_alloc(&a, 4096, 2 * M, 2 * M - 4096, &y), 0);
	CHECK_EQ(y, UINT64_MAX - 4095);
	nvq_iova_destroy(&a);
}

/* Random allocations and frees against a page bitmap. */
static void test_random(void)
{
	enum { PAGES = 512, N = 64 };
	struct nvq_iova_range r = { 0, PAGES * 4096ull - 1 };
	static unsigned char used[PAGES];
	struct {
		uint64_t iova, len;
	} live[N] = { { 0, 0 } };
	uint64_t s = 12345;
	struct nvq_iova a;
	int step, i;

	CHECK_EQ(nvq_iova_init(&a, &r, 1), 0);
	for (step = 0; step < 20000; step++) {
		int k = (int)((s = s * 6364136223846793005ull + 1) >> 33) % N;

		if (live[k].len) {
			for (i = 0; i < (int)(live[k].len / 4096); i++)
				used[live[k].iova / 4096 + (uint64_t)i] = 0;
			CHECK_EQ(nvq_iova_free(&a, live[k].iova, live[k].len),
				 0);
			live[k].len = 0;
		} else {
			uint64_t pages = 1 + (s >> 40) % 16, x;
			uint64_t align = (s >> 50) & 1 ? 8 * 4096 : 4096;
			int rc = nvq_iova_alloc(&a, pages * 4096, align, 0, &x);

			if (rc) {
				CHECK_EQ(rc, -ENOSPC);
				continue;
			}
			CHECK(x >= 4096 && x % align == 0);
			CHECK(x / 4096 + pages <= PAGES);
			for (i = 0; i < (int)pages; i++) {
				CHECK(!used[x / 4096 + (uint64_t)i]);
				used[x / 4096 + (uint64_t)i] = 1;
			}
			live[k].iova = x;
			live[k].len = pages * 4096;
		}
	}
	for (i = 0; i < N; i++)
		if (live[i].len)
			CHECK_EQ(nvq_iova_free(&a, live[i].iova, live[i].len),
				 0);
	CHECK_EQ(a.nr, 1);
	CHECK_EQ(nvq_iova_free_bytes(&a), (PAGES - 1) * 4096ull);
	nvq_iova_destroy(&a);
}

int main(void)
{
	test_init();
	test_hole();
	test_align_phase();
	test_full_and_reuse();
	test_top_of_space();
	test_random();
	printf("iova: ok\n");
	return 0;
}
