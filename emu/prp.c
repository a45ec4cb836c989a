// SPDX-License-Identifier: MIT
/*
 * PRP walking (NVMe Base 2.0, 4.1.1) through the IOMMU. The whole data
 * pointer is validated and translated into host segments before a byte
 * moves, so a bad entry halfway through a write never leaves half the data
 * on the media. Rules enforced: PRP1 dword aligned; PRP2 a page-aligned
 * data page or a qword-aligned list pointer; list entries page aligned;
 * the last entry of a list page chains to the next page when more than
 * one page remains. Every address must lie in a mapping (else Data
 * Transfer Error).
 */
#include <string.h>

#include "emu_internal.h"

static uint16_t add_range(struct nvq_emu *c, uint64_t iova, uint64_t len,
			  uint32_t *n)
{
	while (len) {
		uint64_t avail, take;
		uint8_t *p = emu_iommu_xlate(&c->iommu, iova, &avail);
		struct emu_seg *last;

		if (!p)
			return EMU_ST_GEN(NVQ_SC_DATA_XFER_ERROR);
		take = avail < len ? avail : len;
		last = *n ? &c->segs[*n - 1] : NULL;
		if (last && last->p + last->len == p) {
			last->len += take;
		} else {
			if (*n == c->max_segs)
				return EMU_ST_GEN(NVQ_SC_INTERNAL);
			c->segs[*n].p = p;
			c->segs[*n].len = take;
			(*n)++;
		}
		iova += take;
		len -= take;
	}
	return 0;
}

static bool read_entry(struct nvq_emu *c, uint64_t iova, uint64_t *v)
{
	uint64_t avail;
	uint8_t *p = emu_iommu_xlate(&c->iommu, iova, &avail);

	if (!p || avail < 8)
		return false;
	memcpy(v, p, 8);
	return true;
}

uint16_t emu_prp_map(struct nvq_emu *c, uint64_t prp1, uint64_t prp2,
		     uint64_t len, uint32_t *nseg)
{
	uint64_t psz = c->page_size, mask = psz - 1;
	uint64_t first, rem, list;
	uint32_t n = 0;
	uint16_t st;

	*nseg = 0;
	if (!len)
		return 0;
	if (prp1 & 3)
		return EMU_ST_GEN(NVQ_SC_PRP_INVALID_OFFSET);
	first = psz - (prp1 & mask);
	if (first > len)
		first = len;
	st = add_range(c, prp1, first, &n);
	if (st)
		return st;
	rem = len - first;
	if (!rem)
		goto done;
	if (rem <= psz) {
		if (prp2 & mask)
			return EMU_ST_GEN(NVQ_SC_PRP_INVALID_OFFSET);
		st = add_range(c, prp2, rem, &n);
		if (st)
			return st;
		goto done;
	}
	list = prp2;
	if (list & 7)
		return EMU_ST_GEN(NVQ_SC_PRP_INVALID_OFFSET);
	while (rem) {
		uint64_t nent = (psz - (list & mask)) / 8, i;

		for (i = 0; i < nent && rem; i++) {
			uint64_t ent, chunk;

			if (!read_entry(c, list + 8 * i, &ent))
				return EMU_ST_GEN(NVQ_SC_DATA_XFER_ERROR);
			if (ent & mask)
				return EMU_ST_GEN(NVQ_SC_PRP_INVALID_OFFSET);
			if (i == nent - 1 && rem > psz) {
				list = ent; /* chain to the next list page */
				break;
			}
			chunk = rem < psz ? rem : psz;
			st = add_range(c, ent, chunk, &n);
			if (st)
				return st;
			rem -= chunk;
		}
	}
done:
	*nseg = n;
	return 0;
}

uint16_t emu_dma_to_host(struct nvq_emu *c, const struct nvq_sqe *sqe,
			 const void *src, uint64_t len)
{
	const uint8_t *s = src;
	uint32_t n, i;
	uint16_t st = emu_prp_map(c, sqe->prp1, sqe->prp2, len, &n);

	if (st)
		return st;
	for (i = 0; i < n; i++) {
		memcpy(c->segs[i].p, s, c->segs[i].len);
		s += c->segs[i].len;
	}
	return 0;
}

uint16_t emu_dma_from_host(struct nvq_emu *c, const struct nvq_sqe *sqe,
			   void *dst, uint64_t len)
{
	uint8_t *d = dst;
	uint32_t n, i;
	uint16_t st = emu_prp_map(c, sqe->prp1, sqe->prp2, len, &n);

	if (st)
		return st;
	for (i = 0; i < n; i++) {
		memcpy(d, c->segs[i].p, c->segs[i].len);
		d += c->segs[i].len;
	}
	return 0;
}
