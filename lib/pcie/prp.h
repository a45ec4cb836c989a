/* SPDX-License-Identifier: MIT */
/*
 * PRP construction (NVMe Base 2.0, 4.1.1): PRP1 may carry an offset into
 * the first memory page; PRP2 is either the second page or the address of
 * a PRP list; list pages chain through their last entry. Memory page size
 * is the controller's CC.MPS (nvq uses 4096).
 */
#ifndef NVQ_PRP_H
#define NVQ_PRP_H

#include <stddef.h>
#include <stdint.h>

#include "dmapool.h"

/* List blocks a command may need: 4 pages cover 4 * 511 + 2 data pages. */
#define NVQ_PRP_MAX_LISTS 4

/* The PRP list blocks held by one command, freed at completion. */
struct nvq_prp_lists {
	uint8_t nr; /* blocks in use */
	uint8_t small; /* 1: one block from pools->small */
	void *va[NVQ_PRP_MAX_LISTS];
	uint64_t iova[NVQ_PRP_MAX_LISTS];
};

/*
 * Fill *@prp1 / *@prp2 for a transfer of @len bytes (> 0) at IOVA @iova
 * that is contiguous in IOVA space. @iova must be 4-byte aligned (the PRP
 * rule for PRP1's offset), else -EINVAL. Lists come from @pools (small
 * block when <= 32 entries, page blocks otherwise, chained); -E2BIG if more
 * than NVQ_PRP_MAX_LISTS blocks would be needed, -ENOMEM if a pool is
 * exhausted (nothing is leaked). @lists->nr is 0 when no list was needed.
 */
int nvq_prp_build(struct nvq_pools *pools, uint64_t iova, size_t len,
		  uint64_t *prp1, uint64_t *prp2, struct nvq_prp_lists *lists);

/* Return the list blocks of a command to their pools. */
void nvq_prp_free(struct nvq_pools *pools, struct nvq_prp_lists *lists);

/* Number of memory pages a transfer touches (what sizes the PRP list). */
static inline unsigned int nvq_prp_pages(uint64_t iova, size_t len)
{
	uint64_t first = iova & ~4095ull;
	uint64_t last = (iova + len - 1) & ~4095ull;

	return (unsigned int)((last - first) / 4096 + 1);
}

#endif /* NVQ_PRP_H */
