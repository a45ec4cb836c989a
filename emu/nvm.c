// SPDX-License-Identifier: MIT
/*
 * NVM command set: Read, Write, Flush, Write Zeroes, Dataset Management.
 * Data moves between host segments (PRP walk through the IOMMU) and the
 * media (media.c): memcpy for RAM, one preadv/pwritev for a file, and no
 * allocation per command; one more syscall only where durability asks for
 * it (FUA or a disabled write cache on a file). What the media fails
 * completes as a drive's media errors: Unrecovered Read Error, Write
 * Fault, counted in SMART and the Error Information log with the LBA.
 */
#include "emu_internal.h"

#define ST_INVALID_FIELD EMU_ST_GEN(NVQ_SC_INVALID_FIELD)
/* With DNR: the data is gone (read) or the space is (write); the same
 * command again fails the same way. */
#define ST_READ_ERROR EMU_ST(NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR)
#define ST_WRITE_FAULT EMU_ST(NVQ_SCT_MEDIA, NVQ_SC_WRITE_FAULT)

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

/* A media error at @lba: counted, and logged by the completion. */
static uint16_t media_error(struct nvq_emu *c, struct emu_req *req,
			    uint64_t lba, uint16_t st)
{
	c->smart.media_errors++;
	req->err_loc = NVQ_ERR_LOC_NONE;
	req->err_lba = lba;
	return st;
}

/* Durability for one write: FUA, or no volatile cache to hide behind. */
static int write_through(struct nvq_emu *c, const struct nvq_sqe *sqe,
			 uint64_t off, uint64_t len)
{
	if (c->media.fd >= 0 && ((sqe->cdw12 & NVQ_RW_FUA) || !c->feat.wce))
		return emu_media_sync(&c->media, off, len);
	return 0;
}

static uint16_t rw(struct nvq_emu *c, struct emu_req *req, bool write)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint64_t slba = sqe->cdw10 | (uint64_t)sqe->cdw11 << 32;
	uint64_t nlb = (sqe->cdw12 & NVQ_RW_NLB_MASK) + 1;
	uint64_t len = nlb << c->p.lbads, off, done;
	uint32_t n;
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
	if (emu_media_rw(&c->media, off, c->segs, n, write, &done))
		return media_error(c, req, slba + (done >> c->p.lbads),
				   write ? ST_WRITE_FAULT : ST_READ_ERROR);
	if (write) {
		if (write_through(c, sqe, off, len))
			return media_error(c, req, slba, ST_WRITE_FAULT);
		c->smart.host_writes++;
		c->smart.write_512 += len >> 9;
	} else {
		c->smart.host_reads++;
		c->smart.read_512 += len >> 9;
	}
	return 0;
}

static uint16_t flush(struct nvq_emu *c, struct emu_req *req)
{
	uint32_t nsid = req->sqe->nsid;
	uint16_t st;

	/* Cached writes that cannot reach the media: a write fault. */
	if (nsid == NVQ_NSID_ALL)
		return emu_media_sync(&c->media, 0, c->media.len) ?
			       media_error(c, req, 0, ST_WRITE_FAULT) :
			       0;
	st = check_ns(c, req);
	if (st)
		return st;
	if (emu_media_sync(&c->media, ns_off(c, nsid, 0), c->p.ns_size))
		return media_error(c, req, 0, ST_WRITE_FAULT);
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
	/* The range is released, not written: DEAC only decides whether a
	 * file keeps its space (see media.c). */
	if (emu_media_zero(&c->media, off, len, sqe->cdw12 & NVQ_RW_DEAC) ||
	    write_through(c, sqe, off, len))
		return media_error(c, req, slba, ST_WRITE_FAULT);
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
	/* Deallocated blocks read as zeroes (DLFEAT), so a range that
	 * cannot be released and zeroed is a failed write. */
	for (i = 0; i < nr; i++)
		if (r[i].nlb &&
		    emu_media_zero(&c->media, ns_off(c, sqe->nsid, r[i].slba),
				   (uint64_t)r[i].nlb << c->p.lbads, true))
			return media_error(c, req, r[i].slba, ST_WRITE_FAULT);
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
