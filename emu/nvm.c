// SPDX-License-Identifier: MIT
/*
 * NVM command set: Read, Write, Flush, Write Zeroes, Dataset Management.
 * Data moves between host segments (PRP walk through the IOMMU) and the
 * media mapping with memcpy: no syscall or allocation per command unless
 * durability asks for one (FUA or a disabled write cache on a file).
 */
#include <string.h>

#include "emu_internal.h"

#define ST_INVALID_FIELD EMU_ST_GEN(NVQ_SC_INVALID_FIELD)

static uint16_t check_ns(struct nvq_emu *c, struct emu_req *req)
{
	uint32_t nsid = req->sqe->nsid;

	if (emu_likely(nsid - 1 < c->p.nr_ns))
		return 0;
	req->err_loc = NVQ_ERR_LOC(nsid);
	/* NVMe 2.0 3.2.1.5: a valid but inactive NSID is an invalid field. */
	if (nsid && nsid <= EMU_NN)
		return ST_INVALID_FIELD;
	return EMU_ST_GEN(NVQ_SC_INVALID_NS);
}

static uint64_t ns_off(struct nvq_emu *c, uint32_t nsid, uint64_t lba)
{
	return (uint64_t)(nsid - 1) * c->p.ns_size + (lba << c->p.lbads);
}

static uint16_t check_range(struct nvq_emu *c, struct emu_req *req,
			    uint64_t slba, uint64_t nlb)
{
	if (emu_likely(slba < c->ns_blocks && nlb <= c->ns_blocks - slba))
		return 0;
	req->err_loc = NVQ_ERR_LOC(cdw10);
	req->err_lba = slba;
	return EMU_ST_GEN(NVQ_SC_LBA_RANGE);
}

/* Durability for one write: FUA, or no volatile cache to hide behind. */
static void write_through(struct nvq_emu *c, const struct nvq_sqe *sqe,
			  uint64_t off, uint64_t len)
{
	if (c->media.fd >= 0 && ((sqe->cdw12 & NVQ_RW_FUA) || !c->feat.wce))
		emu_media_sync(&c->media, off, len);
}

static uint16_t rw(struct nvq_emu *c, struct emu_req *req, bool write)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint64_t slba = sqe->cdw10 | (uint64_t)sqe->cdw11 << 32;
	uint64_t nlb = (sqe->cdw12 & NVQ_RW_NLB_MASK) + 1;
	uint64_t len = nlb << c->p.lbads, off;
	uint8_t *m;
	uint32_t n, i;
	uint16_t st;

	st = check_ns(c, req);
	if (st)
		return st;
	/* Directives (DTYPE, CDW12 23:20) are not supported. */
	if (write && (sqe->cdw12 >> 20) & 0xf) {
		req->err_loc = NVQ_ERR_LOC(cdw12);
		return ST_INVALID_FIELD;
	}
	if (len > c->max_xfer) {
		req->err_loc = NVQ_ERR_LOC(cdw12);
		return ST_INVALID_FIELD;
	}
	st = check_range(c, req, slba, nlb);
	if (st)
		return st;
	st = emu_prp_map(c, sqe->prp1, sqe->prp2, len, &n);
	if (st) {
		req->err_loc = NVQ_ERR_LOC(prp1);
		return st;
	}
	off = ns_off(c, sqe->nsid, slba);
	m = c->media.base + off;
	if (write) {
		for (i = 0; i < n; i++) {
			memcpy(m, c->segs[i].p, c->segs[i].len);
			m += c->segs[i].len;
		}
		write_through(c, sqe, off, len);
		c->smart.host_writes++;
		c->smart.write_512 += len >> 9;
	} else {
		for (i = 0; i < n; i++) {
			memcpy(c->segs[i].p, m, c->segs[i].len);
			m += c->segs[i].len;
		}
		c->smart.host_reads++;
		c->smart.read_512 += len >> 9;
	}
	return 0;
}

static uint16_t flush(struct nvq_emu *c, struct emu_req *req)
{
	uint32_t nsid = req->sqe->nsid;
	uint16_t st;

	if (nsid == NVQ_NSID_ALL)
		return emu_media_sync(&c->media, 0, c->media.len) ?
			       EMU_ST_GEN(NVQ_SC_INTERNAL) :
			       0;
	st = check_ns(c, req);
	if (st)
		return st;
	if (emu_media_sync(&c->media, ns_off(c, nsid, 0), c->p.ns_size))
		return EMU_ST_GEN(NVQ_SC_INTERNAL);
	return 0;
}

static uint16_t write_zeroes(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint64_t slba = sqe->cdw10 | (uint64_t)sqe->cdw11 << 32;
	uint64_t nlb = (sqe->cdw12 & NVQ_RW_NLB_MASK) + 1, off, len;
	uint16_t st;

	st = check_ns(c, req);
	if (st)
		return st;
	st = check_range(c, req, slba, nlb);
	if (st)
		return st;
	off = ns_off(c, sqe->nsid, slba);
	len = nlb << c->p.lbads;
	emu_media_zero(&c->media, off, len, sqe->cdw12 & NVQ_RW_DEAC);
	write_through(c, sqe, off, len);
	c->smart.host_writes++;
	return 0;
}

static uint16_t dsm(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint32_t nr = (sqe->cdw10 & 0xff) + 1, i;
	struct nvq_dsm_range *r = (struct nvq_dsm_range *)c->bounce;
	uint16_t st;

	st = check_ns(c, req);
	if (st)
		return st;
	st = emu_dma_from_host(c, sqe, r, nr * sizeof(*r));
	if (st) {
		req->err_loc = NVQ_ERR_LOC(prp1);
		return st;
	}
	if (!(sqe->cdw11 & NVQ_DSM_AD))
		return 0; /* hints only */
	/* Validate every range before changing anything. */
	for (i = 0; i < nr; i++) {
		st = check_range(c, req, r[i].slba, r[i].nlb);
		if (st)
			return st;
	}
	for (i = 0; i < nr; i++)
		if (r[i].nlb)
			emu_media_zero(&c->media,
				       ns_off(c, sqe->nsid, r[i].slba),
				       (uint64_t)r[i].nlb << c->p.lbads, true);
	return 0;
}

uint16_t emu_nvm_exec(struct nvq_emu *c, struct emu_req *req)
{
	switch (req->sqe->opcode) {
	case nvq_cmd_read:
		return rw(c, req, false);
	case nvq_cmd_write:
		return rw(c, req, true);
	case nvq_cmd_flush:
		return flush(c, req);
	case nvq_cmd_write_zeroes:
		return write_zeroes(c, req);
	case nvq_cmd_dsm:
		return dsm(c, req);
	default:
		req->err_loc = NVQ_ERR_LOC(opcode);
		return EMU_ST_GEN(NVQ_SC_INVALID_OPCODE);
	}
}
