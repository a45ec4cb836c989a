// SPDX-License-Identifier: MIT
/*
 * PRP construction (NVMe Base 2.0, 4.1.1) with a 4096-byte memory page.
 *
 * The common transfers need no list: one page (PRP2 = 0) or two pages
 * (PRP2 = the second page). Longer ones put the addresses of pages 2..n in
 * a list: a 256-byte pool block for up to 32 entries (the kernel's
 * nvme-pci choice, small enough that a 128 KiB I/O does not pin a page),
 * else chained page blocks whose last entry points to the next block.
 */
#include <endian.h>
#include <errno.h>

#include "internal.h"
#include "prp.h"

#define ENTRIES_PER_PAGE (NVQ_PAGE_SIZE / 8)
#define SMALL_ENTRIES 32u
/* The data pages NVQ_PRP_MAX_LISTS chained pages can describe. */
#define MAX_PAGES ((ENTRIES_PER_PAGE - 1) * NVQ_PRP_MAX_LISTS + 2)

static void put_blocks(struct nvq_pools *pools, struct nvq_prp_lists *lists)
{
	struct nvq_dmapool *pool = lists->small ? pools->small : pools->page;
	unsigned int i;

	if (pools->cache)
		nvq_pool_cache_put(pools->cache, !lists->small, lists->nr,
				   lists->va, lists->iova);
	else
		for (i = 0; i < lists->nr; i++)
			nvq_dmapool_free(pool, lists->va[i], lists->iova[i]);
	lists->nr = 0;
	lists->small = 0;
}

/*
 * Take @nr blocks into @lists: from the queue's cache where it has one and
 * no other thread is allocating from it, else from the pool.
 */
static bool get_blocks(struct nvq_pools *pools, struct nvq_dmapool *pool,
		       unsigned int nr, struct nvq_prp_lists *lists)
{
	unsigned int i;
	int got;

	if (pools->cache) {
		got = nvq_pool_cache_get(pools->cache, !lists->small, nr,
					 lists->va, lists->iova);
		if (likely(got >= 0)) {
			lists->nr = (uint8_t)got;
			return (unsigned int)got == nr;
		}
	}
	for (i = 0; i < nr; i++) {
		lists->va[i] = nvq_dmapool_alloc(pool, &lists->iova[i]);
		if (unlikely(!lists->va[i]))
			break;
	}
	lists->nr = (uint8_t)i;
	return i == nr;
}

/* More than two pages: the list case, kept out of the inline fast path. */
static int __attribute__((noinline))
build_list(struct nvq_pools *pools, uint64_t iova, size_t len, uint64_t *prp2,
	   struct nvq_prp_lists *lists)
{
	uint64_t page = (iova & ~(uint64_t)(NVQ_PAGE_SIZE - 1)) + NVQ_PAGE_SIZE;
	unsigned int entries, nr, i, j;
	struct nvq_dmapool *pool;
	uint64_t *list;

	if (len > (size_t)MAX_PAGES * NVQ_PAGE_SIZE ||
	    nvq_prp_pages(iova, len) > MAX_PAGES)
		return nvq_err(-E2BIG,
			       "a %zu-byte transfer needs more than %d PRP "
			       "list pages; split it",
			       len, NVQ_PRP_MAX_LISTS);
	entries = nvq_prp_pages(iova, len) - 1;

	if (entries <= SMALL_ENTRIES) {
		pool = pools->small;
		nr = 1;
		lists->small = 1;
	} else {
		pool = pools->page;
		/* Every page but the last gives one entry to the chain. */
		nr = (entries - 2) / (ENTRIES_PER_PAGE - 1) + 1;
		lists->small = 0;
	}

	if (unlikely(!get_blocks(pools, pool, nr, lists))) {
		put_blocks(pools, lists);
		return nvq_err(-ENOMEM,
			       "no PRP list block free for a %zu-byte transfer",
			       len);
	}

	for (i = 0; i < nr; i++) {
		unsigned int n = MIN(entries, ENTRIES_PER_PAGE);

		list = lists->va[i];
		if (i + 1 < nr) {
			n = ENTRIES_PER_PAGE - 1;
			list[n] = htole64(lists->iova[i + 1]);
		}
		for (j = 0; j < n; j++, page += NVQ_PAGE_SIZE)
			list[j] = htole64(page);
		entries -= n;
	}
	*prp2 = lists->iova[0];
	return 0;
}

int nvq_prp_build(struct nvq_pools *pools, uint64_t iova, size_t len,
		  uint64_t *prp1, uint64_t *prp2, struct nvq_prp_lists *lists)
{
	uint64_t off = iova & (NVQ_PAGE_SIZE - 1);

	if (unlikely((iova & 3) || !len))
		return nvq_err(-EINVAL,
			       "PRP transfer at IOVA %#llx of %zu bytes: the "
			       "address must be 4-byte aligned and the length "
			       "non-zero",
			       (unsigned long long)iova, len);
	*prp1 = iova;
	lists->nr = 0;
	/* off < 4096, so neither sum overflows for any len that fits. */
	if (likely(len <= NVQ_PAGE_SIZE - off)) {
		*prp2 = 0;
		return 0;
	}
	if (len <= 2 * NVQ_PAGE_SIZE - off) {
		*prp2 = iova - off + NVQ_PAGE_SIZE;
		return 0;
	}
	return build_list(pools, iova, len, prp2, lists);
}

void nvq_prp_free(struct nvq_pools *pools, struct nvq_prp_lists *lists)
{
	if (likely(!lists->nr))
		return;
	put_blocks(pools, lists);
}
