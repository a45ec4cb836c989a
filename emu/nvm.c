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
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "../lib/support/crc_t10dif.h"

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

/* ------------------------------------------------------------------ */
/* Metadata and end-to-end protection (NVM Command Set 1.0, 5.2)       */
/* ------------------------------------------------------------------ */

#define PRINFO_PRACT (1u << 29)
#define PRINFO_PRCHK_GUARD (1u << 28)
#define PRINFO_PRCHK_APP (1u << 27)
#define PRINFO_PRCHK_REF (1u << 26)
#define ST_GUARD EMU_ST(NVQ_SCT_MEDIA, NVQ_SC_GUARD_CHECK)
#define ST_APPTAG EMU_ST(NVQ_SCT_MEDIA, NVQ_SC_APPTAG_CHECK)
#define ST_REFTAG EMU_ST(NVQ_SCT_MEDIA, NVQ_SC_REFTAG_CHECK)
#define ST_INVALID_PI EMU_ST_CMD(NVQ_SC_INVALID_PI)

/* Offset of block (@nsid, @lba)'s metadata in the metadata store. */
static uint64_t md_off(struct nvq_emu *c, uint32_t nsid, uint64_t lba)
{
	return ((uint64_t)(nsid - 1) * c->ns_blocks + lba) * c->p.ms;
}

/* Grow a scratch buffer (metadata formats only: not the hot path). */
static bool scratch(uint8_t **b, uint64_t *have, uint64_t want)
{
	uint8_t *n;

	if (*have >= want)
		return true;
	n = realloc(*b, want);
	if (!n)
		return false;
	*b = n;
	*have = want;
	return true;
}

/* A position in the host segments c->segs[0..n). */
struct cursor {
	const struct emu_seg *seg;
	uint64_t off;
};

static void cur_copy(struct cursor *k, uint8_t *buf, uint64_t len, bool to_host)
{
	while (len) {
		uint64_t room = k->seg->len - k->off;
		uint64_t n = len < room ? len : room;

		if (to_host)
			memcpy(k->seg->p + k->off, buf, n);
		else
			memcpy(buf, k->seg->p + k->off, n);
		buf += n;
		len -= n;
		k->off += n;
		if (k->off == k->seg->len) {
			k->seg++;
			k->off = 0;
		}
	}
}

static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * The guard of one block: CRC16 T10-DIF of its data and, with the PI in
 * the last 8 bytes of larger metadata, of the metadata bytes before it.
 */
static uint16_t pi_guard(struct nvq_emu *c, const uint8_t *data,
			 const uint8_t *md)
{
	uint16_t crc = nvq_crc_t10dif_update(0, data, c->lba_size);

	if (!c->p.pil && c->p.ms > 8)
		crc = nvq_crc_t10dif_update(crc, md, c->p.ms - 8);
	return crc;
}

static uint8_t *pi_tuple(struct nvq_emu *c, uint8_t *md)
{
	return c->p.pil ? md : md + c->p.ms - 8;
}

/* The expected reference tag of the @i-th block of the command. */
static uint32_t pi_reftag(struct nvq_emu *c, uint32_t ilbrt, uint64_t i)
{
	return c->p.pi == 3 ? ilbrt : (uint32_t)(ilbrt + i);
}

/* PRACT: generate the PI of @nlb blocks (application tag LBAT). */
static void pi_generate(struct nvq_emu *c, const struct nvq_sqe *sqe,
			uint64_t nlb)
{
	uint64_t i;

	for (i = 0; i < nlb; i++) {
		uint8_t *md = c->xmd + i * c->p.ms;
		uint8_t *t = pi_tuple(c, md);

		put_be16(t, pi_guard(c, c->xdata + (i << c->p.lbads), md));
		put_be16(t + 2, (uint16_t)sqe->cdw15);
		put_be32(t + 4, pi_reftag(c, sqe->cdw14, i));
	}
}

/* Check the PI of @nlb blocks as PRCHK asks; the status of the first
 * failing check, its LBA in the error log. */
static uint16_t pi_check(struct nvq_emu *c, struct emu_req *req, uint64_t slba,
			 uint64_t nlb)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint32_t prchk = sqe->cdw12;
	uint16_t lbat = (uint16_t)sqe->cdw15, lbatm = sqe->cdw15 >> 16;
	uint64_t i;

	if (!(prchk &
	      (PRINFO_PRCHK_GUARD | PRINFO_PRCHK_APP | PRINFO_PRCHK_REF)))
		return 0;
	for (i = 0; i < nlb; i++) {
		uint8_t *md = c->xmd + i * c->p.ms;
		const uint8_t *t = pi_tuple(c, md);
		uint16_t app = get_be16(t + 2);
		uint32_t ref = get_be32(t + 4);
		uint16_t st = 0;

		/* Escapes: checking is disabled for this block. */
		if (app == 0xffff && (c->p.pi != 3 || ref == 0xffffffffu))
			continue;
		if ((prchk & PRINFO_PRCHK_GUARD) &&
		    get_be16(t) !=
			    pi_guard(c, c->xdata + (i << c->p.lbads), md))
			st = ST_GUARD;
		else if ((prchk & PRINFO_PRCHK_APP) &&
			 (app & lbatm) != (lbat & lbatm))
			st = ST_APPTAG;
		else if ((prchk & PRINFO_PRCHK_REF) &&
			 ref != pi_reftag(c, sqe->cdw14, i))
			st = ST_REFTAG;
		if (st) {
			req->err_loc = NVQ_ERR_LOC_NONE;
			req->err_lba = slba + i;
			return st;
		}
	}
	return 0;
}

/*
 * Read or Write of a namespace formatted with metadata: data and
 * metadata go through scratch buffers, where protection information is
 * checked or generated before anything reaches the media or the host.
 */
static uint16_t rw_md(struct nvq_emu *c, struct emu_req *req, bool write,
		      uint64_t slba, uint64_t nlb)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint32_t ms = c->p.ms, ds = c->lba_size;
	bool pi = c->p.pi != 0;
	bool pract = pi && (sqe->cdw12 & PRINFO_PRACT);
	/* PRACT with 8 bytes of metadata: the PI is all of it, and the
	 * host transfers none (5.2.1.2, 5.2.1.3). */
	bool xfer_md = !(pract && ms == 8);
	bool ext = c->p.mset;
	uint64_t dlen = nlb * ds, mlen = nlb * ms, hlen, i, done;
	uint8_t *mhost = NULL;
	struct emu_seg one;
	struct cursor k;
	uint32_t n;
	uint16_t st;

	/* Type 1: the reference tag checked is the LBA's (5.2.1.4). */
	if (c->p.pi == 1 && (sqe->cdw12 & PRINFO_PRCHK_REF) &&
	    sqe->cdw14 != (uint32_t)slba) {
		req->err_loc = NVQ_ERR_LOC(cdw14);
		return ST_INVALID_PI;
	}
	/*
	 * Type 3 has no reference tag to check: the controller should not
	 * compare it, and aborts a command that asks with Invalid Protection
	 * Information (NVM Command Set 1.0, 5.2.1.4), as QEMU does.
	 */
	if (c->p.pi == 3 && (sqe->cdw12 & PRINFO_PRCHK_REF)) {
		req->err_loc = NVQ_ERR_LOC(cdw12);
		return ST_INVALID_PI;
	}
	if (!scratch(&c->xdata, &c->xdata_len, dlen) ||
	    !scratch(&c->xmd, &c->xmd_len, mlen))
		return EMU_ST_GEN(NVQ_SC_INTERNAL);
	hlen = dlen + (ext && xfer_md ? mlen : 0);
	st = emu_prp_map(c, sqe->prp1, sqe->prp2, hlen, &n);
	if (st) {
		req->err_loc = NVQ_ERR_LOC(prp1);
		return st;
	}
	if (xfer_md && !ext) {
		/* One contiguous buffer, dword aligned, all in a mapping. */
		req->err_loc = NVQ_ERR_LOC(mptr);
		if (sqe->mptr & 3)
			return ST_INVALID_FIELD;
		mhost = emu_iommu_range(&c->iommu, sqe->mptr, mlen);
		if (!mhost)
			return EMU_ST_GEN(NVQ_SC_DATA_XFER_ERROR);
		req->err_loc = NVQ_ERR_LOC_NONE;
	}
	k.seg = c->segs;
	k.off = 0;
	if (write) {
		for (i = 0; i < nlb; i++) {
			cur_copy(&k, c->xdata + i * ds, ds, false);
			if (ext && xfer_md)
				cur_copy(&k, c->xmd + i * ms, ms, false);
		}
		if (mhost)
			memcpy(c->xmd, mhost, mlen);
		if (pract) {
			if (!xfer_md)
				memset(c->xmd, 0, mlen);
			pi_generate(c, sqe, nlb);
		} else if (pi) {
			st = pi_check(c, req, slba, nlb);
			if (st)
				return st;
		}
		one.p = c->xdata;
		one.len = dlen;
		if (emu_media_rw(&c->media, ns_off(c, sqe->nsid, slba), &one, 1,
				 true, &done))
			return media_error(c, req, slba + (done >> c->p.lbads),
					   ST_WRITE_FAULT);
		if (emu_md_rw(&c->media, md_off(c, sqe->nsid, slba), c->xmd,
			      mlen, true))
			return media_error(c, req, slba, ST_WRITE_FAULT);
		return 0;
	}
	one.p = c->xdata;
	one.len = dlen;
	if (emu_media_rw(&c->media, ns_off(c, sqe->nsid, slba), &one, 1, false,
			 &done))
		return media_error(c, req, slba + (done >> c->p.lbads),
				   ST_READ_ERROR);
	if (emu_md_rw(&c->media, md_off(c, sqe->nsid, slba), c->xmd, mlen,
		      false))
		return media_error(c, req, slba, ST_READ_ERROR);
	if (pi) {
		st = pi_check(c, req, slba, nlb);
		if (st)
			return st;
	}
	for (i = 0; i < nlb; i++) {
		cur_copy(&k, c->xdata + i * ds, ds, true);
		if (ext && xfer_md)
			cur_copy(&k, c->xmd + i * ms, ms, true);
	}
	if (mhost)
		memcpy(mhost, c->xmd, mlen);
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
	off = ns_off(c, sqe->nsid, slba);
	if (emu_unlikely(c->p.ms)) {
		st = rw_md(c, req, write, slba, nlb);
		if (st)
			return st;
		goto done;
	}
	st = emu_prp_map(c, sqe->prp1, sqe->prp2, len, &n);
	if (st) {
		req->err_loc = NVQ_ERR_LOC(prp1);
		return st;
	}
	if (emu_media_rw(&c->media, off, c->segs, n, write, &done))
		return media_error(c, req, slba + (done >> c->p.lbads),
				   write ? ST_WRITE_FAULT : ST_READ_ERROR);
done:
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

/*
 * The metadata of a Write Zeroes: all FFh once deallocated (DEAC), else
 * cleared to 0h; with PRACT the protection information is generated
 * (the guard of zeroes is 0h).
 */
static int wz_md(struct nvq_emu *c, const struct nvq_sqe *sqe, uint64_t slba,
		 uint64_t nlb)
{
	uint64_t off = md_off(c, sqe->nsid, slba), i, j, b;
	uint32_t ms = c->p.ms;

	if (sqe->cdw12 & NVQ_RW_DEAC)
		return emu_md_fill(&c->media, off, nlb * ms, 0xff);
	if (!c->p.pi || !(sqe->cdw12 & PRINFO_PRACT))
		return emu_md_fill(&c->media, off, nlb * ms, 0);
	if (!scratch(&c->xmd, &c->xmd_len, 256 * ms))
		return -ENOMEM;
	for (i = 0; i < nlb; i += b) {
		int ret;

		b = nlb - i < 256 ? nlb - i : 256;
		memset(c->xmd, 0, b * ms);
		for (j = 0; j < b; j++) {
			uint8_t *t = pi_tuple(c, c->xmd + j * ms);

			put_be16(t + 2, (uint16_t)sqe->cdw15);
			put_be32(t + 4, pi_reftag(c, sqe->cdw14, i + j));
		}
		ret = emu_md_rw(&c->media, off + i * ms, c->xmd, b * ms, true);
		if (ret)
			return ret;
	}
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
	/* Type 1, as for Read and Write: ILBRT is the LBA's (5.2.1.4). */
	if (c->p.pi == 1 && (sqe->cdw12 & PRINFO_PRCHK_REF) &&
	    sqe->cdw14 != (uint32_t)slba) {
		req->err_loc = NVQ_ERR_LOC(cdw14);
		return ST_INVALID_PI;
	}
	off = ns_off(c, sqe->nsid, slba);
	len = nlb << c->p.lbads;
	/* The range is released, not written: DEAC only decides whether a
	 * file keeps its space (see media.c). */
	if (emu_media_zero(&c->media, off, len, sqe->cdw12 & NVQ_RW_DEAC) ||
	    (c->p.ms && wz_md(c, sqe, slba, nlb)) ||
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
		    (emu_media_zero(&c->media, ns_off(c, sqe->nsid, r[i].slba),
				    (uint64_t)r[i].nlb << c->p.lbads, true) ||
		     (c->p.ms &&
		      emu_md_fill(&c->media, md_off(c, sqe->nsid, r[i].slba),
				  (uint64_t)r[i].nlb * c->p.ms, 0xff))))
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
