// SPDX-License-Identifier: MIT
/*
 * Namespaces: which are active (Identify CNS 02h, or every nsid up to NN
 * on controllers that predate it), and which of them nvq can drive (an
 * LBA format it supports, no metadata, the NVM command set).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (f->ms) {
		snprintf(
			why, len,
			"%u bytes of metadata per block (%s) are not supported",
			f->ms,
			id->flbas & NVQ_NS_FLBAS_META_EXT ? "extended LBA" :
							    "separate buffer");
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
 * With CC.CSS 110b the active namespaces include those of other I/O
 * Command Sets (Zoned, Key Value), which nvq must not drive as NVM ones:
 * the CSI descriptor of Identify CNS 03h tells (NVMe 2.0, Namespace
 * Identification Descriptor list). No
 * list, or no CSI in it, means NVM.
 */
static const char *ns_not_nvm(struct nvq_ctrl *c, uint32_t nsid, char *why,
			      size_t len)
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
			snprintf(why, len,
				 "its I/O Command Set (CSI %u) is not NVM",
				 d[off + 4]);
			bad = why;
			break;
		}
		off += 4 + nidl;
	}
	free(d);
	return bad;
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
	int rc;

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
		bad = ns_unusable(c, id, why, sizeof(why));
		if (!bad && c->iocss)
			bad = ns_not_nvm(c, ids[i], why, sizeof(why));
		if (bad) {
			nvq_note(notes, notes_len, "namespace %u skipped: %s",
				 ids[i], bad);
			continue;
		}
		ns->nsid = ids[i];
		ns->lbads = id->lbaf[flbas_index(id)].ds;
		ns->nlba = id->nsze;
		ns->max_blocks = MIN(c->max_xfer >> ns->lbads, 65536u);
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
		if (ns->nsid < NVQ_NS_DIRECT)
			c->ns_direct[ns->nsid] = ns;
		c->nr_ns++;
	}
	free(id);
	free(ids);
	return 0;
}
