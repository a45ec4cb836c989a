// SPDX-License-Identifier: MIT
/*
 * PRP building: every shape of transfer, checked the way a device reads
 * it (through the stub IOMMU, following list chains), plus the error
 * cases and that no list block leaks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dmapool.h"
#include "internal.h"
#include "mem.h"
#include "nvq/nvq.h"
#include "prp.h"
#include "stub_iommu.h"

#define PG 4096ull

static struct nvq_transport *t;
static struct nvq_mem *mem;
static struct nvq_pools pools;

/* A data buffer's IOVA: any page-aligned value works, nothing reads it. */
static const uint64_t DATA = 0x1234560000ull;

/*
 * Read PRP1/PRP2 as a controller would and check they describe exactly
 * the pages of [iova, iova + len): PRP1 = iova, then one entry per further
 * page, each page aligned, lists chained through their last entry.
 * Returns the number of list blocks walked.
 */
static unsigned int device_walk(uint64_t iova, size_t len, uint64_t prp1,
				uint64_t prp2)
{
	unsigned int pages = nvq_prp_pages(iova, len), i, lists = 0;
	uint64_t expect = (iova & ~(PG - 1)) + PG;
	uint64_t list_iova = prp2;
	unsigned int left = pages - 1;

	CHECK_EQ(prp1, iova);
	if (pages == 1) {
		CHECK_EQ(prp2, 0);
		return 0;
	}
	if (pages == 2) {
		CHECK_EQ(prp2, expect);
		return 0;
	}
	CHECK_EQ(prp2 & 7, 0); /* a list pointer is qword aligned */
	while (left) {
		/* Entries that fit from the pointer to the end of its page. */
		unsigned int slots =
			(unsigned int)((PG - (list_iova & (PG - 1))) / 8);
		uint64_t *list = stub_iova_to_va(t, list_iova, slots * 8);

		CHECK(list != NULL);
		lists++;
		CHECK(lists <= NVQ_PRP_MAX_LISTS);
		for (i = 0; i < slots && left; i++) {
			if (i == slots - 1 && left > 1) {
				/* Last slot, more to come: the chain. */
				list_iova = le64toh(list[i]);
				CHECK_EQ(list_iova & (PG - 1), 0);
				break;
			}
			CHECK_EQ(le64toh(list[i]) & (PG - 1), 0);
			CHECK_EQ(le64toh(list[i]), expect);
			expect += PG;
			left--;
		}
	}
	return lists;
}

/* Build, walk, check the block kind and count, free, check no leak. */
static void build_ok(uint64_t iova, size_t len, unsigned int want_lists,
		     int want_small)
{
	struct nvq_prp_lists l;
	uint64_t p1 = 1, p2 = 1;
	unsigned int i;

	memset(&l, 0xa5, sizeof(l));
	CHECK_EQ(nvq_prp_build(&pools, iova, len, &p1, &p2, &l), 0);
	CHECK_EQ(l.nr, want_lists);
	CHECK_EQ(device_walk(iova, len, p1, p2), want_lists);
	if (want_lists) {
		CHECK_EQ(l.small, want_small);
		CHECK_EQ(p2, l.iova[0]);
		for (i = 0; i + 1 < l.nr; i++) {
			/* The chain pointer is the last entry of each page. */
			uint64_t *va = l.va[i];

			CHECK_EQ(le64toh(va[511]), l.iova[i + 1]);
		}
		CHECK_EQ(nvq_dmapool_in_use(want_small ? pools.small :
							 pools.page),
			 want_lists);
	}
	nvq_prp_free(&pools, &l);
	CHECK_EQ(l.nr, 0);
	CHECK_EQ(nvq_dmapool_in_use(pools.small), 0);
	CHECK_EQ(nvq_dmapool_in_use(pools.page), 0);
}

static void test_no_list(void)
{
	/* Offset into the first page, fits in it. */
	build_ok(DATA + 0x100, 0x200, 0, 0);
	build_ok(DATA + 0x100, PG - 0x100, 0, 0);
	build_ok(DATA + 0xffc, 4, 0, 0);
	/* One byte past the first page: PRP2 is the second page. */
	build_ok(DATA + 0x100, PG - 0x100 + 1, 0, 0);
	/* Exactly two pages with an offset: ends in the second page. */
	build_ok(DATA + 0x800, PG, 0, 0);
	build_ok(DATA + 0x4, 2 * PG - 4, 0, 0);
	/* Exact page multiples. */
	build_ok(DATA, PG, 0, 0);
	build_ok(DATA, 2 * PG, 0, 0);
	build_ok(DATA, 1, 0, 0);
}

static void test_small_list(void)
{
	build_ok(DATA, 3 * PG, 1, 1);
	build_ok(DATA + 0x800, 2 * PG, 1, 1); /* 3 pages via the offset */
	build_ok(DATA + 0x4, 2 * PG - 3, 1, 1);
	/* 33 pages: 32 entries, the most a small block holds. */
	build_ok(DATA, 33 * PG, 1, 1);
	build_ok(DATA + 0x10, 32 * PG, 1, 1);
}

static void test_page_list(void)
{
	/* 34 pages: 33 entries, one too many for a small block. */
	build_ok(DATA, 34 * PG, 1, 0);
	build_ok(DATA + 0x10, 33 * PG, 1, 0);
	/* 512 entries: one full page, no chain. */
	build_ok(DATA, 513 * PG, 1, 0);
}

static void test_chain(void)
{
	/* 513 data pages after the first: 511 + chain, then 2. */
	build_ok(DATA, 514 * PG, 2, 0);
	/* 1023 entries fit in two (511 + 512); 1024 need a third. */
	build_ok(DATA, 1024 * PG, 2, 0);
	build_ok(DATA, 1025 * PG, 3, 0);
	/* 1025 after the first: 511 + 511 + 3. */
	build_ok(DATA, 1026 * PG, 3, 0);
	build_ok(DATA + 0x200, 1025 * PG, 3, 0);
	/* The maximum: 4 * 511 + 2 pages. */
	build_ok(DATA, (4 * 511 + 2) * PG, 4, 0);
	build_ok(DATA + 0xffc, (4 * 511 + 1) * PG + 4, 4, 0);
}

static void test_contents_513(void)
{
	/* Spell out the 513-after-first case entry by entry. */
	struct nvq_prp_lists l;
	uint64_t p1, p2, *a, *b;
	unsigned int i;

	CHECK_EQ(nvq_prp_build(&pools, DATA, 514 * PG, &p1, &p2, &l), 0);
	CHECK_EQ(l.nr, 2);
	CHECK_EQ(p1, DATA);
	CHECK_EQ(p2, l.iova[0]);
	a = l.va[0];
	b = l.va[1];
	for (i = 0; i < 511; i++)
		CHECK_EQ(le64toh(a[i]), DATA + (i + 1) * PG);
	CHECK_EQ(le64toh(a[511]), l.iova[1]);
	CHECK_EQ(le64toh(b[0]), DATA + 512 * PG);
	CHECK_EQ(le64toh(b[1]), DATA + 513 * PG);
	CHECK_EQ(stub_iova_to_va(t, l.iova[1], PG), (uintptr_t)b);
	nvq_prp_free(&pools, &l);
}

/* List blocks a transfer needs, counted the slow way. */
static unsigned int expect_lists(uint64_t iova, size_t len, int *small)
{
	unsigned int e = nvq_prp_pages(iova, len) - 1, k = 1, cap = 512;

	*small = 0;
	if (e <= 1)
		return 0;
	if (e <= 32) {
		*small = 1;
		return 1;
	}
	while (cap < e) {
		k++;
		cap += 511; /* one entry of the previous page became a chain */
	}
	return k;
}

static void test_sweep(void)
{
	static const uint64_t offs[] = { 0, 4, 0x200, 0x7f8, 0xffc };
	unsigned int i, pages, d;
	int small;

	/* Every page count to past the first chain, at several offsets and
	 * lengths that end at, just before and just after a page end. */
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		for (pages = 1; pages <= 1030; pages++) {
			for (d = 0; d < 3; d++) {
				uint64_t iova = DATA + offs[i];
				size_t len = pages * PG - offs[i] - 4 + 4 * d;
				unsigned int n;

				if (!len)
					continue;
				n = expect_lists(iova, len, &small);
				build_ok(iova, len, n, small);
			}
		}
	}
}

static void test_invalid(void)
{
	struct nvq_prp_lists l;
	uint64_t p1, p2;

	CHECK_EQ(nvq_prp_build(&pools, DATA + 1, 512, &p1, &p2, &l), -EINVAL);
	CHECK(strlen(nvq_errmsg()) > 0);
	CHECK_EQ(nvq_prp_build(&pools, DATA + 2, 512, &p1, &p2, &l), -EINVAL);
	CHECK_EQ(nvq_prp_build(&pools, DATA + 3, 8 * PG, &p1, &p2, &l),
		 -EINVAL);
	CHECK_EQ(nvq_prp_build(&pools, DATA, 0, &p1, &p2, &l), -EINVAL);

	/* One page more than 4 chained lists cover. */
	nvq_err_clear();
	CHECK_EQ(nvq_prp_build(&pools, DATA, (4 * 511 + 3) * PG, &p1, &p2, &l),
		 -E2BIG);
	CHECK(strlen(nvq_errmsg()) > 0);
	CHECK_EQ(nvq_prp_build(&pools, DATA + 4, (4 * 511 + 2) * PG, &p1, &p2,
			       &l),
		 -E2BIG);
	CHECK_EQ(nvq_prp_build(&pools, DATA, (size_t)-1, &p1, &p2, &l), -E2BIG);
	CHECK_EQ(nvq_dmapool_in_use(pools.page), 0);
	CHECK_EQ(nvq_dmapool_in_use(pools.small), 0);
}

static void test_exhaustion(void)
{
	struct nvq_pools tiny = { 0 };
	struct nvq_prp_lists l;
	uint64_t p1, p2, iova;
	void *held;

	tiny.small = nvq_dmapool_create(mem, "tiny-small", 256, 1, 0);
	tiny.page = nvq_dmapool_create(mem, "tiny-page", 4096, 2, 0);
	CHECK(tiny.small && tiny.page);

	/* Three page blocks needed, two exist: the two taken go back. */
	CHECK_EQ(nvq_prp_build(&tiny, DATA, 1026 * PG, &p1, &p2, &l), -ENOMEM);
	CHECK_EQ(l.nr, 0);
	CHECK_EQ(nvq_dmapool_in_use(tiny.page), 0);
	CHECK(strlen(nvq_errmsg()) > 0);
	/* Two are enough for 514 pages, and then the pool is dry. */
	CHECK_EQ(nvq_prp_build(&tiny, DATA, 514 * PG, &p1, &p2, &l), 0);
	CHECK_EQ(l.nr, 2);
	{
		struct nvq_prp_lists l2;

		CHECK_EQ(nvq_prp_build(&tiny, DATA, 40 * PG, &p1, &p2, &l2),
			 -ENOMEM);
		CHECK_EQ(l2.nr, 0);
	}
	nvq_prp_free(&tiny, &l);
	CHECK_EQ(nvq_dmapool_in_use(tiny.page), 0);

	/* Small pool dry. */
	held = nvq_dmapool_alloc(tiny.small, &iova);
	CHECK(held != NULL);
	CHECK_EQ(nvq_prp_build(&tiny, DATA, 3 * PG, &p1, &p2, &l), -ENOMEM);
	CHECK_EQ(nvq_dmapool_in_use(tiny.small), 1);
	/* No-list transfers need no pool at all. */
	CHECK_EQ(nvq_prp_build(&tiny, DATA, 2 * PG, &p1, &p2, &l), 0);
	nvq_dmapool_free(tiny.small, held, iova);
	CHECK_EQ(nvq_prp_build(&tiny, DATA, 3 * PG, &p1, &p2, &l), 0);
	CHECK_EQ(l.nr, 1);
	nvq_prp_free(&tiny, &l);
	CHECK_EQ(nvq_dmapool_in_use(tiny.small), 0);

	nvq_pools_destroy(&tiny);
}

int main(void)
{
	t = stub_transport_create();
	CHECK_EQ(nvq_mem_create(t, &mem), 0);
	CHECK_EQ(nvq_pools_create(mem, 0, &pools), 0);

	test_no_list();
	test_small_list();
	test_page_list();
	test_chain();
	test_contents_513();
	test_sweep();
	test_invalid();
	test_exhaustion();

	nvq_pools_destroy(&pools);
	nvq_mem_destroy(mem);
	CHECK_EQ(stub_mappings(t), 0);
	CHECK_EQ(stub_errors(t), 0);
	stub_transport_destroy(t);
	return 0;
}
