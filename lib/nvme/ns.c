// SPDX-License-Identifier: MIT
/*
 * Namespaces: which are active (Identify CNS 02h, or every nsid up to NN
 * on controllers that predate it), and which of them nvq can drive (an
 * LBA format it supports, the NVM command set), and their metadata format.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc_t10dif.h"
#include "ctrl.h"
#include "internal.h"

/* Namespace Identification Descriptor types (Identify CNS 03h). */
#define NIDT_CSI 4
#define CSI_NVM 0

void nvq_note(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 3 >= size)
		return;
	if (used) {
		strcpy(buf + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

/*
 * The LBA format in use. FLBAS bits 6:5 extend the index past 15 only
 * when there are more than 16 formats; below that they are reserved (the
 * host ignores them: NVMe 2.0, Identify Namespace FLBAS).
 */
static unsigned int flbas_index(const struct nvq_id_ns *id)
{
	if (id->nlbaf < 16)
		return id->flbas & NVQ_NS_FLBAS_LBA_MASK;
	return nvq_flbas_index(id->flbas);
}

static const char *ns_unusable(struct nvq_ctrl *c, const struct nvq_id_ns *id,
			       char *why, size_t len)
{
	unsigned int idx = flbas_index(id);
	const struct nvq_lbaf *f;

	if (!id->nsze) {
		snprintf(why, len, "size is 0");
		return why;
	}
	if (idx > id->nlbaf || idx >= ARRAY_SIZE(id->lbaf)) {
		snprintf(why, len, "FLBAS selects LBA format %u of %u", idx,
			 id->nlbaf + 1);
		return why;
	}
	f = &id->lbaf[idx];
	if (f->ds < 9 || f->ds > 16) {
		snprintf(why, len, "LBA data size 2^%u is not supported",
			 f->ds);
		return why;
	}
	if ((id->dps & 7) > 3) {
		snprintf(
			why, len,
			"its protection information type %u (DPS %#x) is reserved",
			id->dps & 7, id->dps);
		return why;
	}
	if ((id->dps & 7) && f->ms < 8) {
		snprintf(
			why, len,
			"it has protection information type %u but only %u bytes of metadata per block",
			id->dps & 7, f->ms);
		return why;
	}
	if ((1u << f->ds) > c->max_xfer) {
		snprintf(why, len,
			 "LBA size %u exceeds the maximum transfer of %u bytes",
			 1u << f->ds, c->max_xfer);
		return why;
	}
	return NULL;
}

/*
 * With CTRATT.ELBAS a format's protection information may have a 32- or
 * 64-bit guard, and part of the reference tag may be a storage tag (NVM
 * Command Set 1.0, 5.3.1, Identify CNS 05h ELBAF). nvq computes and checks
 * the 16-bit CRC guard with a 32-bit reference tag only, so it must not
 * drive another format, nor one the controller will not describe.
 */
static const char *ns_pi_unusable(struct nvq_ctrl *c, uint32_t nsid,
				  const struct nvq_id_ns *id, char *why,
				  size_t len)
{
	static const char *const guard[] = { "16", "32", "64" };
	unsigned int idx = flbas_index(id), pif, sts;
	struct nvq_id_ns_nvm *nvm;
	uint16_t st = 0;
	int rc;

	if (!(id->dps & 7) || !(c->id->ctratt & NVQ_CTRL_CTRATT_ELBAS))
		return NULL;
	nvm = malloc(sizeof(*nvm));
	if (!nvm) {
		snprintf(why, len, "out of memory");
		return why;
	}
	rc = nvq_ctrl_identify(c, NVQ_ID_CNS_CSI_NS, nsid, nvm, &st);
	if (rc) {
		free(nvm);
		snprintf(why, len,
			 "it has CTRATT.ELBAS but Identify CNS 05h "
			 "(its protection information format) failed: %s",
			 st ? nvq_status_str(st) : strerror(-rc));
		return why;
	}
	pif = (nvm->elbaf[idx] >> NVQ_ELBAF_PIF_SHIFT) & NVQ_ELBAF_PIF_MASK;
	sts = nvm->elbaf[idx] & NVQ_ELBAF_STS_MASK;
	free(nvm);
	if (pif == NVQ_PIF_QUALIFIED) {
		snprintf(why, len,
			 "its protection information has a qualified format "
			 "(ELBAF PIF 3); nvq implements 16-bit guards only");
		return why;
	}
	if (pif != NVQ_PIF_16B_GUARD) {
		snprintf(why, len,
			 "its protection information has a %s-bit guard "
			 "(ELBAF PIF %u); nvq implements 16-bit guards only",
			 guard[pif], pif);
		return why;
	}
	if (sts) {
		snprintf(why, len,
			 "its protection information has a %u-bit storage "
			 "tag (ELBAF STS), which nvq does not implement",
			 sts);
		return why;
	}
	return NULL;
}

/*
 * With CC.CSS 110b the active namespaces include those of other I/O
 * Command Sets (Zoned, Key Value), which nvq must not drive as NVM ones:
 * the CSI descriptor of Identify CNS 03h tells (NVMe 2.0, Namespace
 * Identification Descriptor list). No
 * list, or no CSI in it, means NVM.
 */
static const char *csi_name(uint8_t csi)
{
	switch (csi) {
	case 1:
		return "Key Value";
	case 2:
		return "Zoned";
	case 3:
		return "Subsystem Local Memory";
	case 4:
		return "Computational Programs";
	default:
		return "unknown";
	}
}

static const char *ns_not_nvm(struct nvq_ctrl *c, uint32_t nsid, char *why,
			      size_t len, uint8_t *csi)
{
	uint8_t *d = malloc(NVQ_IDENTIFY_DATA_SIZE);
	const char *bad = NULL;
	size_t off = 0;

	if (!d ||
	    nvq_ctrl_identify(c, NVQ_ID_CNS_NS_DESC_LIST, nsid, d, NULL)) {
		free(d);
		return NULL;
	}
	while (off + 4 <= NVQ_IDENTIFY_DATA_SIZE && d[off]) {
		uint8_t nidt = d[off], nidl = d[off + 1];

		if (off + 4 + nidl > NVQ_IDENTIFY_DATA_SIZE)
			break;
		if (nidt == NIDT_CSI && nidl >= 1 && d[off + 4] != CSI_NVM) {
			*csi = d[off + 4];
			snprintf(
				why, len,
				"it uses the %s command set (CSI %u), which nvq does not drive",
				csi_name(d[off + 4]), d[off + 4]);
			bad = why;
			break;
		}
		off += 4 + nidl;
	}
	free(d);
	return bad;
}

static void remember_bad(struct nvq_ctrl *c, uint32_t nsid, uint8_t csi,
			 const char *why)
{
	struct nvq_ns_bad *b;

	if (c->nr_bad_ns == NVQ_MAX_BAD_NS)
		return;
	b = &c->bad_ns[c->nr_bad_ns++];
	b->nsid = nsid;
	b->csi = csi;
	/* truncated where longer: gcc -O2 warns on a bare "%s" */
	snprintf(b->why, sizeof(b->why), "%.*s", (int)sizeof(b->why) - 1, why);
}

/*
 * Record the format: metadata size and where it goes, protection type and
 * place, and the blocks one command carries. MDTS limits the data
 * transfer: with an extended format the metadata is in it too.
 */
static void set_format(struct nvq_ctrl *c, struct nvq_ns *ns,
		       const struct nvq_id_ns *id)
{
	const struct nvq_lbaf *f = &id->lbaf[flbas_index(id)];
	uint32_t per;

	ns->lbads = f->ds;
	ns->ms = f->ms;
	ns->md = f->ms != 0;
	ns->ext = f->ms && (id->flbas & NVQ_NS_FLBAS_META_EXT);
	ns->pi_type = f->ms ? id->dps & 7 : 0;
	ns->pi_first = ns->pi_type && (id->dps & 8);
	ns->blk_bytes = (1u << f->ds) + (ns->ext ? f->ms : 0);
	per = c->max_xfer / ns->blk_bytes;
	ns->max_blocks = MIN(MAX(per, 1u), 65536u);
}

int nvq_ns_absent(const struct nvq_ctrl *ctrl, uint32_t nsid)
{
	unsigned int i;

	for (i = 0; i < ctrl->nr_bad_ns; i++)
		if (ctrl->bad_ns[i].nsid == nsid)
			return nvq_err(-ENOTSUP, "namespace %u: %s", nsid,
				       ctrl->bad_ns[i].why);
	return nvq_err(-ENOENT, "namespace %u is not active", nsid);
}

int nvq_ns_format_size(const struct nvq_ctrl *ctrl, uint32_t nsid,
		       struct nvq_ns_format *fmt, uint32_t size)
{
	struct nvq_ns_format f = { 0 };
	const struct nvq_ns *ns;
	unsigned int i;

	if (!ctrl || !fmt || size < sizeof(fmt->size))
		return nvq_err(-EINVAL, "NULL controller or format, or size %u",
			       size);
	ns = nvq_ctrl_ns(ctrl, nsid);
	f.nsid = nsid;
	if (ns) {
		f.usable = 1;
		f.extended = ns->ext;
		f.pi_type = ns->pi_type;
		f.pi_first = ns->pi_first;
		f.pi_size = ns->pi_type ? 8 : 0;
		f.lba_size = 1u << ns->lbads;
		f.ms = ns->ms;
	} else {
		for (i = 0; i < ctrl->nr_bad_ns; i++)
			if (ctrl->bad_ns[i].nsid == nsid)
				break;
		if (i == ctrl->nr_bad_ns)
			return nvq_ns_absent(ctrl, nsid);
		f.csi = ctrl->bad_ns[i].csi;
		snprintf(f.why, sizeof(f.why), "%s", ctrl->bad_ns[i].why);
	}
	if (size > sizeof(f)) {
		memset(fmt, 0, size);
		size = sizeof(f);
	}
	memcpy(fmt, &f, size);
	fmt->size = size;
	return 0;
}

int nvq_ns_refresh(struct nvq_ctrl *c)
{
	struct nvq_id_ns *id = malloc(sizeof(*id));
	char why[128];
	unsigned int i, j;
	int rc = 0;

	if (!id)
		return nvq_err(-ENOMEM, "out of memory");
	for (i = 0; i < c->nr_ns; i++) {
		struct nvq_ns *ns = &c->ns[i];
		const char *bad;

		rc = nvq_ctrl_identify(c, NVQ_ID_CNS_NS, ns->nsid, id, NULL);
		if (rc)
			break;
		memcpy(ns->id, id, sizeof(*id));
		for (j = 0; j < c->nr_bad_ns; j++)
			if (c->bad_ns[j].nsid == ns->nsid)
				c->bad_ns[j] = c->bad_ns[--c->nr_bad_ns];
		bad = ns_unusable(c, id, why, sizeof(why));
		if (!bad)
			bad = ns_pi_unusable(c, ns->nsid, id, why, sizeof(why));
		if (bad) {
			/* It stays listed, but takes no I/O. */
			ns->nlba = 0;
			remember_bad(c, ns->nsid, CSI_NVM, bad);
			continue;
		}
		ns->nlba = id->nsze;
		set_format(c, ns, id);
		if (ns->nsid < NVQ_NS_DIRECT)
			c->ns_plain[ns->nsid] = ns->md ? NULL : ns;
	}
	free(id);
	return rc;
}

/* Every nsid up to NN is a candidate; Identify Namespace tells. */
static void scan_all(struct nvq_ctrl *c, uint32_t *ids, unsigned int *nr,
		     bool *all, char *notes, size_t notes_len)
{
	uint32_t nn = c->id->nn;
	unsigned int n;

	for (n = 0; n < MIN(nn, NVQ_MAX_NS); n++)
		ids[n] = n + 1;
	if (nn > NVQ_MAX_NS)
		nvq_note(notes, notes_len,
			 "NN %u: only namespaces 1..%u are looked at", nn,
			 NVQ_MAX_NS);
	*nr = n;
	*all = true;
}

/*
 * The active namespace list (CNS 02h), paged by the last nsid seen. A
 * controller older than NVMe 1.1 may not know CNS 02h: then every nsid up
 * to NN is a candidate (*@all set) and Identify Namespace tells.
 */
static int active_nsids(struct nvq_ctrl *c, uint32_t *ids, unsigned int *nr,
			bool *all, char *notes, size_t notes_len)
{
	uint32_t *list, start = 0, nn = c->id->nn;
	unsigned int n = 0, i, page;
	uint16_t st = 0;
	int rc = 0;

	*all = false;
	/* CNS 02h is NVMe 1.1; a 1.0 controller may read it as CNS 00h. */
	if (c->vs < NVQ_VS(1, 1, 0)) {
		scan_all(c, ids, nr, all, notes, notes_len);
		return 0;
	}
	list = malloc(NVQ_IDENTIFY_DATA_SIZE);
	if (!list)
		return nvq_err(-ENOMEM, "out of memory");
	for (page = 0;; page++) {
		rc = nvq_ctrl_identify(c, NVQ_ID_CNS_NS_ACTIVE_LIST, start,
				       list, &st);
		if (rc == -EIO && page == 0 &&
		    (st & NVQ_STATUS_CODE_MASK) == NVQ_SC_INVALID_FIELD) {
			free(list);
			scan_all(c, ids, nr, all, notes, notes_len);
			return 0;
		}
		if (rc)
			break;
		for (i = 0; i < 1024; i++) {
			uint32_t id = list[i];

			if (!id)
				break;
			if (id <= start || id > nn || id == NVQ_NSID_ALL) {
				nvq_note(
					notes, notes_len,
					"bad active namespace list entry %u (nsid %u after %u, NN %u); rest ignored",
					page * 1024 + i, id, start, nn);
				i = 0; /* stop paging */
				break;
			}
			if (n == NVQ_MAX_NS) {
				nvq_note(
					notes, notes_len,
					"more than %u active namespaces; using the first %u",
					NVQ_MAX_NS, NVQ_MAX_NS);
				i = 0;
				break;
			}
			ids[n++] = id;
			start = id;
		}
		if (i < 1024)
			break;
	}
	free(list);
	*nr = n;
	return rc;
}

int nvq_ctrl_scan_namespaces(struct nvq_ctrl *c, char *notes, size_t notes_len)
{
	struct nvq_id_ns *id = NULL;
	uint32_t *ids;
	unsigned int nr = 0, i;
	bool all = false;
	char why[128];
	uint8_t csi;
	int rc;

	c->nr_bad_ns = 0;
	ids = calloc(NVQ_MAX_NS, sizeof(*ids));
	c->ns = calloc(NVQ_MAX_NS, sizeof(*c->ns));
	if (!ids || !c->ns) {
		free(ids);
		return nvq_err(-ENOMEM, "out of memory");
	}
	if (c->id->nn) {
		rc = active_nsids(c, ids, &nr, &all, notes, notes_len);
		if (rc) {
			free(ids);
			return rc;
		}
	}
	for (i = 0; i < nr; i++) {
		struct nvq_ns *ns = &c->ns[c->nr_ns];
		const char *bad;

		if (!id)
			id = malloc(sizeof(*id));
		if (!id) {
			free(ids);
			return nvq_err(-ENOMEM, "out of memory");
		}
		rc = nvq_ctrl_identify(c, NVQ_ID_CNS_NS, ids[i], id, NULL);
		if (rc) {
			nvq_note(notes, notes_len, "namespace %u skipped: %s",
				 ids[i], nvq_errmsg());
			continue;
		}
		/* Scanning every nsid: size 0 means inactive. */
		if (all && !id->nsze)
			continue;
		bad = NULL;
		csi = CSI_NVM;
		if (c->iocss)
			bad = ns_not_nvm(c, ids[i], why, sizeof(why), &csi);
		if (!bad)
			bad = ns_unusable(c, id, why, sizeof(why));
		if (!bad)
			bad = ns_pi_unusable(c, ids[i], id, why, sizeof(why));
		if (bad) {
			nvq_note(notes, notes_len, "namespace %u skipped: %s",
				 ids[i], bad);
			remember_bad(c, ids[i], csi, bad);
			continue;
		}
		ns->nsid = ids[i];
		ns->lbads = id->lbaf[flbas_index(id)].ds;
		ns->nlba = id->nsze;
		set_format(c, ns, id);
		/* NLB is 16 bits: 65536 blocks per command at most. */
		ns->wz_blocks =
			c->wz_max_bytes ?
				(uint32_t)MIN(c->wz_max_bytes >> ns->lbads,
					      65536u) :
				65536u;
		if (!ns->wz_blocks)
			ns->wz_blocks = 1;
		ns->id = id;
		id = NULL;
		if (ns->nsid < NVQ_NS_DIRECT) {
			c->ns_direct[ns->nsid] = ns;
			c->ns_plain[ns->nsid] = ns->md ? NULL : ns;
		}
		c->nr_ns++;
	}
	free(id);
	free(ids);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Host-side protection information (NVM Command Set 1.0, 5.2.1)       */
/* ------------------------------------------------------------------ */

struct pi_blocks {
	const struct nvq_ns *ns;
	uint8_t *data; /* of block 0 */
	uint8_t *md; /* of block 0 */
	size_t stride; /* data bytes between blocks */
	size_t md_stride;
};

static int pi_setup(const struct nvq_ctrl *ctrl, uint32_t nsid, const void *buf,
		    const void *md, struct pi_blocks *b)
{
	const struct nvq_ns *ns;

	if (!ctrl || !buf)
		return nvq_err(-EINVAL, "NULL controller or buffer");
	ns = nvq_ctrl_ns(ctrl, nsid);
	if (!ns)
		return nvq_ns_absent(ctrl, nsid);
	if (!ns->pi_type)
		return nvq_err(-EINVAL,
			       "namespace %u has no protection information",
			       nsid);
	if (ns->ext ? md != NULL : md == NULL)
		return nvq_err(-EINVAL,
			       "namespace %u %s a separate metadata buffer",
			       nsid, ns->ext ? "takes no" : "needs");
	b->ns = ns;
	b->data = (uint8_t *)(uintptr_t)buf;
	b->stride = ns->blk_bytes;
	if (ns->ext) {
		b->md = b->data + (1u << ns->lbads);
		b->md_stride = ns->blk_bytes;
	} else {
		b->md = (uint8_t *)(uintptr_t)md;
		b->md_stride = ns->ms;
	}
	return 0;
}

/*
 * The guard: CRC-16 T10-DIF of the block's data and, when the PI is the
 * last 8 bytes of the metadata, of the metadata before it.
 */
static uint16_t pi_guard(const struct pi_blocks *b, const uint8_t *data,
			 const uint8_t *md)
{
	uint16_t crc = nvq_crc_t10dif_update(0, data, 1u << b->ns->lbads);

	if (!b->ns->pi_first && b->ns->ms > 8)
		crc = nvq_crc_t10dif_update(crc, md, b->ns->ms - 8);
	return crc;
}

static uint8_t *pi_of(const struct pi_blocks *b, uint8_t *md)
{
	return b->ns->pi_first ? md : md + b->ns->ms - 8;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)get_be16(p) << 16 | get_be16(p + 2);
}

int nvq_pi_generate(const struct nvq_ctrl *ctrl, uint32_t nsid, void *buf,
		    void *md, uint32_t nlb, uint32_t reftag, uint16_t apptag)
{
	struct pi_blocks b;
	uint32_t i;
	int rc;

	rc = pi_setup(ctrl, nsid, buf, md, &b);
	if (rc)
		return rc;
	for (i = 0; i < nlb; i++) {
		uint8_t *d = b.data + (size_t)i * b.stride;
		uint8_t *m = b.md + (size_t)i * b.md_stride;
		uint8_t *pi = pi_of(&b, m);

		put_be16(pi, pi_guard(&b, d, m));
		put_be16(pi + 2, apptag);
		put_be32(pi + 4, b.ns->pi_type == 3 ? reftag : reftag + i);
	}
	return 0;
}

int nvq_pi_verify(const struct nvq_ctrl *ctrl, uint32_t nsid, const void *buf,
		  const void *md, uint32_t nlb, uint32_t reftag,
		  uint16_t apptag, uint16_t appmask, unsigned int flags,
		  uint32_t *bad)
{
	struct pi_blocks b;
	uint32_t i;
	int rc;

	rc = pi_setup(ctrl, nsid, buf, md, &b);
	if (rc)
		return rc;
	/* Type 3 has no reference tag to check: a controller refuses. */
	if (b.ns->pi_type == 3 && (flags & NVQ_IO_PRCHK_REF))
		return 0x181;
	for (i = 0; i < nlb; i++) {
		uint8_t *d = b.data + (size_t)i * b.stride;
		uint8_t *m = b.md + (size_t)i * b.md_stride;
		const uint8_t *pi = pi_of(&b, m);
		uint16_t at = get_be16(pi + 2);
		uint32_t rt = get_be32(pi + 4);
		int st = 0;

		/* Escapes: checking is disabled for such blocks. */
		if (at == 0xffff && (b.ns->pi_type != 3 || rt == 0xffffffffu))
			continue;
		if ((flags & NVQ_IO_PRCHK_GUARD) &&
		    get_be16(pi) != pi_guard(&b, d, m))
			st = 0x282;
		else if ((flags & NVQ_IO_PRCHK_APP) &&
			 (at & appmask) != (apptag & appmask))
			st = 0x283;
		else if ((flags & NVQ_IO_PRCHK_REF) && rt != reftag + i)
			st = 0x284;
		if (st) {
			if (bad)
				*bad = i;
			return st;
		}
	}
	return 0;
}
