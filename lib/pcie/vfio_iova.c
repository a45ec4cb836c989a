// SPDX-License-Identifier: MIT
/*
 * IOVA allocator for the vfio transport. The IOMMU only translates inside
 * the ranges the kernel reports (reserved holes such as the MSI window
 * and the IOMMU's address width cut them), so the allocator hands out
 * addresses from those ranges only. Mappings are few (rings, pools, user
 * buffers) and made outside the I/O path: a sorted array of free extents
 * with first fit is both small and easy to check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vfio.h"

#define PAGE_MASK_U64 ((uint64_t)NVQ_PAGE_SIZE - 1)

static int cmp_range(const void *a, const void *b)
{
	const struct nvq_iova_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static int reserve(struct nvq_iova *a, size_t want)
{
	struct nvq_iova_range *n;
	size_t cap;

	if (want <= a->cap)
		return 0;
	cap = a->cap ? a->cap * 2 : 8;
	while (cap < want)
		cap *= 2;
	n = realloc(a->free, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	a->free = n;
	a->cap = cap;
	return 0;
}

int nvq_iova_init(struct nvq_iova *a, const struct nvq_iova_range *ranges,
		  size_t nr)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	if (reserve(a, nr ? nr : 1))
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		uint64_t s = ranges[i].start, l = ranges[i].last;

		/* Whole pages only, and never page 0. */
		if (s < NVQ_PAGE_SIZE)
			s = NVQ_PAGE_SIZE;
		if (s & PAGE_MASK_U64) {
			if (s > UINT64_MAX - PAGE_MASK_U64)
				continue;
			s = ALIGN_UP(s, (uint64_t)NVQ_PAGE_SIZE);
		}
		if ((l & PAGE_MASK_U64) != PAGE_MASK_U64) {
			if (l < PAGE_MASK_U64)
				continue;
			l = ALIGN_DOWN(l + 1, (uint64_t)NVQ_PAGE_SIZE) - 1;
		}
		if (l < s || l < ranges[i].start)
			continue;
		a->free[a->nr].start = s;
		a->free[a->nr].last = l;
		a->nr++;
	}
	qsort(a->free, a->nr, sizeof(*a->free), cmp_range);
	/* Merge overlapping or touching ranges. */
	if (a->nr) {
		size_t out = 0;

		for (i = 1; i < a->nr; i++) {
			struct nvq_iova_range *p = &a->free[out];

			if (p->last == UINT64_MAX ||
			    a->free[i].start <= p->last + 1) {
				if (a->free[i].last > p->last)
					p->last = a->free[i].last;
			} else {
				a->free[++out] = a->free[i];
			}
		}
		a->nr = out + 1;
	}
	return 0;
}

void nvq_iova_destroy(struct nvq_iova *a)
{
	free(a->free);
	memset(a, 0, sizeof(*a));
}

/* First address >= @start that is congruent to @phase mod @align, or
 * false if there is none below 2^64. */
static bool fit_start(uint64_t start, uint64_t align, uint64_t phase,
		      uint64_t *out)
{
	uint64_t base = start & ~(align - 1);
	uint64_t cand = base + phase;

	if (cand < base)
		return false;
	if (cand < start) {
		if (cand > UINT64_MAX - align)
			return false;
		cand += align;
	}
	*out = cand;
	return true;
}

int nvq_iova_alloc(struct nvq_iova *a, uint64_t len, uint64_t align,
		   uint64_t phase, uint64_t *iova)
{
	size_t i;

	if (!len || (len & PAGE_MASK_U64) || align < NVQ_PAGE_SIZE ||
	    (align & (align - 1)) || phase >= align || (phase & PAGE_MASK_U64))
		return -EINVAL;
	for (i = 0; i < a->nr; i++) {
		struct nvq_iova_range *r = &a->free[i];
		uint64_t s, last;

		if (!fit_start(r->start, align, phase, &s) || s > r->last)
			continue;
		if (len - 1 > r->last - s)
			continue;
		last = s + (len - 1);
		if (s == r->start && last == r->last) {
			memmove(r, r + 1, (a->nr - i - 1) * sizeof(*r));
			a->nr--;
		} else if (s == r->start) {
			r->start = last + 1;
		} else if (last == r->last) {
			r->last = s - 1;
		} else {
			/* Split: the part after the allocation goes next. */
			if (reserve(a, a->nr + 1))
				return -ENOMEM;
			r = &a->free[i];
			memmove(r + 2, r + 1, (a->nr - i - 1) * sizeof(*r));
			r[1].start = last + 1;
			r[1].last = r->last;
			r->last = s - 1;
			a->nr++;
		}
		*iova = s;
		return 0;
	}
	return -ENOSPC;
}

int nvq_iova_free(struct nvq_iova *a, uint64_t iova, uint64_t len)
{
	uint64_t last;
	size_t lo = 0, hi = a->nr;
	bool join_prev, join_next;

	if (!len || len - 1 > UINT64_MAX - iova)
		return -EINVAL;
	last = iova + (len - 1);
	/* First free extent that starts after @iova. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->free[mid].start <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && a->free[lo - 1].last >= iova)
		return -EINVAL;
	if (lo < a->nr && a->free[lo].start <= last)
		return -EINVAL;
	join_prev = lo > 0 && a->free[lo - 1].last + 1 == iova;
	join_next = lo < a->nr && last + 1 == a->free[lo].start &&
		    last != UINT64_MAX;
	if (join_prev && join_next) {
		a->free[lo - 1].last = a->free[lo].last;
		memmove(&a->free[lo], &a->free[lo + 1],
			(a->nr - lo - 1) * sizeof(a->free[0]));
		a->nr--;
	} else if (join_prev) {
		a->free[lo - 1].last = last;
	} else if (join_next) {
		a->free[lo].start = iova;
	} else {
		if (reserve(a, a->nr + 1))
			return -ENOMEM;
		memmove(&a->free[lo + 1], &a->free[lo],
			(a->nr - lo) * sizeof(a->free[0]));
		a->free[lo].start = iova;
		a->free[lo].last = last;
		a->nr++;
	}
	return 0;
}

uint64_t nvq_iova_free_bytes(const struct nvq_iova *a)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < a->nr; i++)
		sum += a->free[i].last - a->free[i].start + 1;
	return sum;
}
