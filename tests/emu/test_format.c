// SPDX-License-Identifier: MIT
/*
 * Format NVM on the emulated controller: switching LBA formats (data
 * size, metadata, MSET, PI, PIL) as Identify then reports them, NSZE
 * recomputed, data and metadata erased, every namespace formatted (FNA
 * bit 0), the refusals (Invalid Format, SES 2 without crypto erase, bad
 * NSIDs) changing nothing, and a file image remembering its format.
 */
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "nvq/nvq.h"

#define SIZE (1u << 20)
#define CMD NVQ_SCT_CMD_SPECIFIC

static char path[4096];

static void cleanup(void)
{
	char md[4200];

	snprintf(md, sizeof(md), "%s.md", path);
	unlink(path);
	unlink(md);
}

static uint32_t lbaf_index(uint32_t ds, uint32_t ms)
{
	static const uint32_t mss[] = { 0, 8, 16, 32, 64, 128 };
	uint32_t i;

	for (i = 0; i < 6; i++)
		if (mss[i] == ms)
			return (ds == 512 ? 0 : 6) + i;
	return 99;
}

static uint16_t format(struct h *h, uint32_t nsid, uint32_t idx, bool mset,
		       uint32_t pi, bool pil, uint32_t ses)
{
	struct nvq_sqe s = h_sqe(nvq_admin_format_nvm);

	s.nsid = nsid;
	s.cdw10 = (idx & 0xf) | (uint32_t)mset << 4 | pi << 5 |
		  (uint32_t)pil << 8 | ses << 9 | (idx >> 4) << 12;
	return h_admin(h, &s, NULL);
}

static void expect_fmt(struct h *h, uint32_t nsid, uint32_t ds, uint32_t ms,
		       bool mset, uint32_t pi, bool pil)
{
	struct nvq_id_ns *ns = h_alloc(h, 4096, NULL);
	uint32_t idx;

	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS, nsid, ns));
	idx = ns->flbas & 0xf;
	CHECK_EQ(idx, lbaf_index(ds, ms));
	CHECK_EQ(1u << ns->lbaf[idx].ds, ds);
	CHECK_EQ(ns->lbaf[idx].ms, ms);
	CHECK_EQ(!!(ns->flbas & NVQ_NS_FLBAS_META_EXT), mset);
	CHECK_EQ(ns->dps, pi | (pil ? 8 : 0));
	CHECK_EQ(ns->nsze, SIZE / ds);
	CHECK_EQ(ns->ncap, ns->nsze);
	CHECK_EQ(ns->nuse, ns->nsze);
}

static uint16_t rw(struct h *h, struct hq *q, uint8_t opc, uint32_t nsid,
		   uint64_t slba, uint32_t nlb, void *buf, size_t len,
		   uint32_t cdw12)
{
	struct nvq_sqe s = h_sqe(opc);

	s.nsid = nsid;
	s.cdw10 = (uint32_t)slba;
	s.cdw12 = (nlb - 1) | cdw12;
	s.cdw14 = (uint32_t)slba;
	h_prp(h, &s, buf, len);
	return h_cmd(h, q, &s, NULL);
}

static void ram(void)
{
	struct h *h = h_open("size=1M,ns=2");
	struct nvq_id_ctrl *id;
	uint8_t *b;
	struct hq *q;
	uint32_t i;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	id = h_alloc(h, 4096, NULL);
	b = h_alloc(h, 8 * 4160, NULL);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	CHECK(id->oacs & NVQ_CTRL_OACS_FORMAT);
	CHECK_EQ(id->fna & 0x5, 1);
	expect_fmt(h, 1, 4096, 0, false, 0, false);

	memset(b, 0x6b, 8192);
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, 1, 3, 2, b, 8192, 0));
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, 2, 3, 2, b, 8192, 0));

	/* Refused: nothing changes, the data stays. */
	CHECK_ST(format(h, 1, 12, false, 0, false, 0), CMD,
		 NVQ_SC_INVALID_FORMAT);
	CHECK_ST(format(h, 1, 63, false, 0, false, 0), CMD,
		 NVQ_SC_INVALID_FORMAT);
	CHECK_ST(format(h, 1, lbaf_index(512, 0), false, 1, false, 0), CMD,
		 NVQ_SC_INVALID_FORMAT);
	CHECK_ST(format(h, 1, lbaf_index(4096, 8), false, 4, false, 0), CMD,
		 NVQ_SC_INVALID_FORMAT);
	CHECK_ST(format(h, 1, lbaf_index(4096, 8), false, 0, false, 2),
		 NVQ_SCT_GENERIC, NVQ_SC_INVALID_FIELD);
	CHECK_ST(format(h, 1, lbaf_index(4096, 8), false, 0, false, 7),
		 NVQ_SCT_GENERIC, NVQ_SC_INVALID_FIELD);
	CHECK_ST(format(h, 0, lbaf_index(4096, 8), false, 0, false, 0),
		 NVQ_SCT_GENERIC, NVQ_SC_INVALID_NS);
	CHECK_ST(format(h, 3, lbaf_index(4096, 8), false, 0, false, 0),
		 NVQ_SCT_GENERIC, NVQ_SC_INVALID_FIELD);
	CHECK_ST(format(h, 2000, lbaf_index(4096, 8), false, 0, false, 0),
		 NVQ_SCT_GENERIC, NVQ_SC_INVALID_NS);
	expect_fmt(h, 1, 4096, 0, false, 0, false);
	memset(b, 0, 8192);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, 1, 3, 2, b, 8192, 0));
	CHECK_EQ(b[0], 0x6b);
	CHECK_EQ(b[8191], 0x6b);

	/* 512 + 8, type 1, extended; a Format of namespace 1 formats 2. */
	CHECK_ST_OK(format(h, 1, lbaf_index(512, 8), true, 1, false, 1));
	expect_fmt(h, 1, 512, 8, true, 1, false);
	expect_fmt(h, 2, 512, 8, true, 1, false);
	/* Erased: data zero, metadata FFh (PI checks pass). */
	memset(b, 0x11, 8 * 520);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, 2, 24, 8, b, 8 * 520,
		       (1u << 28) | (1u << 26)));
	for (i = 0; i < 8; i++) {
		CHECK_EQ(b[i * 520], 0);
		CHECK_EQ(b[i * 520 + 511], 0);
		CHECK_EQ(b[i * 520 + 512], 0xff);
		CHECK_EQ(b[i * 520 + 519], 0xff);
	}
	/* The new format works: PRACT write, checked read. */
	memset(b, 0x42, 4 * 512);
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, 1, 100, 4, b, 4 * 512, 1u << 29));
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, 1, 100, 4, b, 4 * 520,
		       (1u << 28) | (1u << 26)));
	CHECK_EQ(b[520], 0x42);
	CHECK_EQ(b[520 + 512 + 7], 101); /* reference tag: the LBA */
	/* Beyond the old 256 blocks of 4 KiB: the new NSZE is 2048. */
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, 1, 2047, 1, b, 512, 1u << 29));
	CHECK_ST(rw(h, q, nvq_cmd_write, 1, 2048, 1, b, 512, 1u << 29),
		 NVQ_SCT_GENERIC, NVQ_SC_LBA_RANGE);

	/* 4096 + 16, type 3 in the first bytes, separate; NSID FFFFFFFFh. */
	CHECK_ST_OK(format(h, 0xffffffffu, lbaf_index(4096, 16), false, 3, true,
			   0));
	expect_fmt(h, 1, 4096, 16, false, 3, true);
	expect_fmt(h, 2, 4096, 16, false, 3, true);
	/* Back to no metadata; MSET/PIL mean nothing there. */
	CHECK_ST_OK(format(h, 2, lbaf_index(4096, 0), true, 0, true, 0));
	expect_fmt(h, 1, 4096, 0, false, 0, false);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, 1, 100, 1, b, 4096, 0));
	CHECK_EQ(b[0], 0);
	h_close(h);
}

/* Namespace Attribute Changed: the notice, then the list (log 04h). */
static void notice(void)
{
	struct h *h = h_open("size=1M,ns=2");
	struct nvq_sqe s = h_sqe(nvq_admin_set_features);
	uint32_t *l;
	struct nvq_cqe ev;

	h_enable(h);
	l = h_alloc(h, 4096, NULL);
	s.cdw10 = 0x0b; /* Asynchronous Event Configuration */
	s.cdw11 = 0x1f | 1u << 8;
	CHECK_ST_OK(h_admin(h, &s, NULL));
	s = h_sqe(nvq_admin_async_event);
	s.cid = h_push(h, &h->aq, &s);
	h_ring(h, &h->aq);
	memset(&ev, 0, sizeof(ev));
	{
		/* The AER and the Format complete in either order. */
		struct nvq_sqe f = h_sqe(nvq_admin_format_nvm);
		uint16_t aer_cid = s.cid, fcid;
		struct nvq_cqe c1;
		int i;

		f.nsid = 1;
		f.cdw10 = lbaf_index(512, 8);
		fcid = h_push(h, &h->aq, &f);
		h_ring(h, &h->aq);
		for (i = 0; i < 2; i++) {
			CHECK_EQ(h_reap(h, &h->aq, &c1, H_TIMEOUT_MS), 0);
			CHECK_ST_OK(c1.status >> 1);
			if (c1.cid == aer_cid)
				ev = c1;
			else
				CHECK_EQ(c1.cid, fcid);
		}
	}
	CHECK_EQ(NVQ_AER_TYPE(ev.result), NVQ_AER_NOTICE);
	CHECK_EQ(NVQ_AER_INFO(ev.result), 0);
	CHECK_EQ(NVQ_AER_LOG_PAGE(ev.result), NVQ_LOG_CHANGED_NS);
	s = h_sqe(nvq_admin_get_log_page);
	s.nsid = 0xffffffff;
	s.cdw10 = NVQ_LOG_CHANGED_NS | (1023u << 16);
	h_prp(h, &s, l, 4096);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK_EQ(l[0], 1);
	CHECK_EQ(l[1], 2);
	CHECK_EQ(l[2], 0);
	/* Read without RAE: the list is empty again. */
	s.cid = 0xffff;
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK_EQ(l[0], 0);
	h_close(h);
}

static void file(void)
{
	char prm[4400];
	struct h *h;
	struct hq *q;
	uint8_t *b;

	snprintf(prm, sizeof(prm), "file=%s,size=1M", path);
	h = h_open(prm);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	b = h_alloc(h, 8192, NULL);
	memset(b, 0x77, 4096);
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, 1, 1, 1, b, 4096, 0));
	CHECK_ST_OK(format(h, 1, lbaf_index(512, 16), true, 2, false, 0));
	memset(b, 0x55, 2 * 528);
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, 1, 9, 2, b, 2 * 528, 0));
	h_close(h);

	/* The image remembers its format: the old options are refused. */
	CHECK(!h_try_open(prm));
	CHECK(strstr(nvq_errmsg(), "lbads=9,ms=16"));
	snprintf(prm, sizeof(prm), "file=%s,size=1M,lbads=9,ms=16,mset=1,pi=2",
		 path);
	h = h_open(prm);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	b = h_alloc(h, 8192, NULL);
	expect_fmt(h, 1, 512, 16, true, 2, false);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, 1, 8, 1, b, 528, 0));
	CHECK_EQ(b[0], 0); /* written before the Format: erased */
	CHECK_EQ(b[512], 0xff);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, 1, 9, 2, b, 2 * 528, 0));
	CHECK_EQ(b[0], 0x55);
	CHECK_EQ(b[528 + 527], 0x55);
	h_close(h);
}

int main(void)
{
	int fd = test_tmpfile(path, sizeof(path), "emu-format");

	close(fd);
	cleanup();
	check_cleanup = cleanup;
	ram();
	notice();
	file();
	cleanup();
	return 0;
}
