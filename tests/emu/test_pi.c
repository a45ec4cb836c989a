// SPDX-License-Identifier: MIT
/*
 * Metadata and end-to-end data protection of the emulated controller
 * (NVM Command Set 1.0, 5.2): the ms/mset/pi/pil parameters and their
 * errors, Identify's formats, extended and separate metadata moving with
 * the data and persisting (RAM and the FILE.md sidecar), unwritten blocks
 * reading metadata FFh, and for pi=1/2/3 x pil=0/1 x mset=0/1 x ms=8/16
 * every check (guard, application tag, reference tag) failing with its
 * status, the escapes, PRACT on write and read, and Type 1's ILBRT rule.
 * The PI is computed here with a bitwise CRC of its own.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emu.h"
#include "harness.h"
#include "nvq/nvq.h"

#define MEDIA NVQ_SCT_MEDIA
#define PRACT (1u << 29)
#define CHK_GUARD (1u << 28)
#define CHK_APP (1u << 27)
#define CHK_REF (1u << 26)
#define CHK_ALL (CHK_GUARD | CHK_APP | CHK_REF)
#define NB 4 /* blocks per command */
#define SLBA 40

static char path[4096];

static void cleanup(void)
{
	char md[4200];

	snprintf(md, sizeof(md), "%s.md", path);
	unlink(path);
	unlink(md);
}

/* CRC16 T10-DIF, bit by bit: polynomial 8BB7h, initial 0, no reflection. */
static uint16_t crc16(uint16_t crc, const uint8_t *p, size_t n)
{
	size_t i;
	int b;

	for (i = 0; i < n; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (b = 0; b < 8; b++)
			crc = (uint16_t)(crc & 0x8000 ? crc << 1 ^ 0x8bb7 :
							crc << 1);
	}
	return crc;
}

struct fmt {
	uint32_t ds, ms, pi;
	bool mset, pil;
};

/* A command's host buffers: data (with metadata when extended) and the
 * separate metadata buffer. */
struct bufs {
	uint8_t *d, *m;
	size_t dlen;
};

static uint8_t *blk_data(const struct fmt *f, struct bufs *b, uint32_t i)
{
	return b->d + i * (f->ds + (f->mset ? f->ms : 0));
}

static uint8_t *blk_md(const struct fmt *f, struct bufs *b, uint32_t i)
{
	return f->mset ? blk_data(f, b, i) + f->ds : b->m + i * f->ms;
}

static uint8_t *tuple(const struct fmt *f, uint8_t *md)
{
	return f->pil ? md : md + f->ms - 8;
}

static void put_pi(const struct fmt *f, uint8_t *data, uint8_t *md,
		   uint16_t app, uint32_t ref)
{
	uint8_t *t = tuple(f, md);
	uint16_t g = crc16(0, data, f->ds);

	if (!f->pil && f->ms > 8)
		g = crc16(g, md, f->ms - 8);
	t[0] = (uint8_t)(g >> 8);
	t[1] = (uint8_t)g;
	t[2] = (uint8_t)(app >> 8);
	t[3] = (uint8_t)app;
	t[4] = (uint8_t)(ref >> 24);
	t[5] = (uint8_t)(ref >> 16);
	t[6] = (uint8_t)(ref >> 8);
	t[7] = (uint8_t)ref;
}

static uint32_t exp_ref(const struct fmt *f, uint32_t ilbrt, uint32_t i)
{
	return f->pi == 3 ? ilbrt : ilbrt + i;
}

/* Fill @nb blocks with data @seed, spare metadata bytes and valid PI. */
static void fill(const struct fmt *f, struct bufs *b, uint32_t nb, uint8_t seed,
		 uint16_t app, uint32_t ilbrt)
{
	uint32_t i, j;

	for (i = 0; i < nb; i++) {
		uint8_t *d = blk_data(f, b, i), *md = blk_md(f, b, i);

		for (j = 0; j < f->ds; j++)
			d[j] = (uint8_t)(seed + i * 7 + j);
		for (j = 0; j < f->ms; j++)
			md[j] = (uint8_t)(0xa0 + i + j);
		if (f->pi)
			put_pi(f, d, md, app, exp_ref(f, ilbrt, i));
	}
}

static uint16_t io(struct h *h, struct hq *q, const struct fmt *f, uint8_t opc,
		   struct bufs *b, uint64_t slba, uint32_t nb, uint32_t prinfo,
		   uint32_t ilbrt, uint32_t lbat_m, bool with_md)
{
	struct nvq_sqe s = h_sqe(opc);
	size_t len = (size_t)nb * f->ds;

	if (with_md && f->mset)
		len += (size_t)nb * f->ms;
	s.nsid = 1;
	s.cdw10 = (uint32_t)slba;
	s.cdw11 = (uint32_t)(slba >> 32);
	s.cdw12 = (nb - 1) | prinfo;
	s.cdw14 = ilbrt;
	s.cdw15 = lbat_m;
	h_prp(h, &s, b->d, len);
	/* Without metadata to move MPTR is left unmapped: never used. */
	s.mptr = with_md && !f->mset ? h_iova(h, b->m) : 0xdead0000ull;
	return h_cmd(h, q, &s, NULL);
}

static void open_fmt(const struct fmt *f, struct h **hp, struct hq **qp,
		     struct bufs *b)
{
	char prm[160];

	snprintf(prm, sizeof(prm),
		 "size=1M,lbads=%u,ms=%u,mset=%d,pi=%u,pil=%d",
		 f->ds == 512 ? 9 : 12, f->ms, f->mset, f->pi, f->pil);
	*hp = h_open(prm);
	h_enable(*hp);
	*qp = h_ioq(*hp, 1, 16, false, 0);
	b->dlen = 16 * (f->ds + f->ms);
	b->d = h_alloc(*hp, b->dlen, NULL);
	b->m = h_alloc(*hp, 4096, NULL);
}

static void check_identify(struct h *h, const struct fmt *f)
{
	struct nvq_id_ns *ns = h_alloc(h, 4096, NULL);
	unsigned int idx;

	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_NS, 1, ns));
	idx = ns->flbas & 0xf;
	CHECK(ns->nlbaf >= 5);
	CHECK_EQ(1u << ns->lbaf[idx].ds, f->ds);
	CHECK_EQ(ns->lbaf[idx].ms, f->ms);
	CHECK_EQ(!!(ns->flbas & NVQ_NS_FLBAS_META_EXT), f->mset);
	CHECK_EQ(ns->mc, 3);
	CHECK_EQ(ns->dpc, 0x1f);
	CHECK_EQ(ns->dps & 7, f->pi);
	CHECK_EQ(!!(ns->dps & 8), f->pil);
	CHECK_EQ(ns->nsze, (1u << 20) / f->ds);
}

/* Every check of one protected format. */
static void pi_format(const struct fmt *f)
{
	struct h *h;
	struct hq *q;
	struct bufs b, r;
	uint32_t il = f->pi == 1 ? SLBA : 0x5000, i;
	uint32_t lbat = 0xffff0000u | 0x1234;
	/* Type 3 has no reference tag to check (5.2.1.4): refused below. */
	const uint32_t all = f->pi == 3 ? CHK_GUARD | CHK_APP : CHK_ALL;
	uint8_t *t;

	open_fmt(f, &h, &q, &b);
	check_identify(h, f);
	r.d = h_alloc(h, b.dlen, NULL);
	r.m = h_alloc(h, 4096, NULL);
	r.dlen = b.dlen;

	/* Unwritten: metadata all FFh, so every check passes. */
	memset(r.d, 0x5a, r.dlen);
	memset(r.m, 0x5a, 4096);
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il, lbat, true));
	for (i = 0; i < NB; i++) {
		uint8_t *md = blk_md(f, &r, i);
		uint32_t j;

		for (j = 0; j < f->ms; j++)
			CHECK_EQ(md[j], 0xff);
		CHECK_EQ(blk_data(f, &r, i)[0], 0);
	}

	/* Valid PI, every check: written and read back as written. */
	fill(f, &b, NB, 0x11, 0x1234, il);
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_write, &b, SLBA, NB, all, il, lbat, true));
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il, lbat, true));
	for (i = 0; i < NB; i++) {
		CHECK(!memcmp(blk_data(f, &r, i), blk_data(f, &b, i), f->ds));
		CHECK(!memcmp(blk_md(f, &r, i), blk_md(f, &b, i), f->ms));
	}

	/* Guard: data changed after the PI was computed. */
	blk_data(f, &b, 2)[5] ^= 1;
	CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_GUARD, il, lbat,
		    true),
		 MEDIA, NVQ_SC_GUARD_CHECK);
	/* ... unchecked without PRCHK guard: stored as it is. */
	CHECK_ST_OK(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, all & ~CHK_GUARD,
		       il, lbat, true));
	CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il, lbat, true),
		 MEDIA, NVQ_SC_GUARD_CHECK);
	CHECK_ST_OK(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all & ~CHK_GUARD,
		       il, lbat, true));
	/* With the PI last in 16 bytes, the guard covers the 8 before. */
	fill(f, &b, NB, 0x11, 0x1234, il);
	if (!f->pil && f->ms > 8) {
		blk_md(f, &b, 1)[0] ^= 0x80;
		CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_GUARD, il,
			    lbat, true),
			 MEDIA, NVQ_SC_GUARD_CHECK);
	} else if (f->ms > 8) {
		/* First 8: the bytes after the PI are not covered. */
		blk_md(f, &b, 1)[12] ^= 0x80;
		CHECK_ST_OK(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_GUARD,
			       il, lbat, true));
	}

	/* Application tag: compared under LBATM. */
	fill(f, &b, NB, 0x11, 0x1234, il);
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_write, &b, SLBA, NB, all, il, lbat, true));
	CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, CHK_APP, il,
		    0xffff0000u | 0x1235, true),
		 MEDIA, NVQ_SC_APPTAG_CHECK);
	CHECK_ST_OK(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, CHK_APP, il,
		       0xfffe0000u | 0x1235, true));
	CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, all, il,
		    0xffff0000u | 0x4321, true),
		 MEDIA, NVQ_SC_APPTAG_CHECK);

	/* Type 3: a reference tag check is refused, whatever the ILBRT. */
	if (f->pi == 3) {
		CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_REF, il,
			    lbat, true),
			 NVQ_SCT_CMD_SPECIFIC, NVQ_SC_INVALID_PI);
		CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, CHK_ALL, il,
			    lbat, true),
			 NVQ_SCT_CMD_SPECIFIC, NVQ_SC_INVALID_PI);
		/* ... and the tag is not compared by the other checks. */
		CHECK_ST_OK(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il + 1,
			       lbat, true));
	}

	/* Reference tag in the tuple wrong (block 3). */
	t = tuple(f, blk_md(f, &b, 3));
	t[7] ^= 0x10;
	if (f->pi != 3)
		CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_REF, il,
			    lbat, true),
			 MEDIA, NVQ_SC_REFTAG_CHECK);
	/* Stored without the check; its guard no longer... still fine:
	 * the guard does not cover the tuple. */
	CHECK_ST_OK(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_GUARD, il,
		       lbat, true));
	if (f->pi != 3)
		CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il, lbat,
			    true),
			 MEDIA, NVQ_SC_REFTAG_CHECK);
	fill(f, &b, NB, 0x11, 0x1234, il);
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_write, &b, SLBA, NB, all, il, lbat, true));
	/* Expected reference tag wrong: ILBRT off by one. */
	if (f->pi == 1) {
		/* Type 1: ILBRT must be the LBA's low 32 bits. */
		CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, CHK_REF,
			    il + 1, lbat, true),
			 NVQ_SCT_CMD_SPECIFIC, NVQ_SC_INVALID_PI);
		CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_REF,
			    il + 1, lbat, true),
			 NVQ_SCT_CMD_SPECIFIC, NVQ_SC_INVALID_PI);
		/* ... only when the reference tag is checked. */
		CHECK_ST_OK(io(h, q, f, nvq_cmd_read, &r, SLBA, NB,
			       CHK_GUARD | CHK_APP, il + 1, lbat, true));
	} else if (f->pi == 2) {
		CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, CHK_REF,
			    il + 1, lbat, true),
			 MEDIA, NVQ_SC_REFTAG_CHECK);
	}

	/* Escapes: application tag FFFFh (type 3: and ref FFFFFFFFh). */
	fill(f, &b, NB, 0x22, 0xffff, f->pi == 3 ? 0xffffffffu : il);
	blk_data(f, &b, 0)[0] ^= 0xff; /* bad guard, unchecked */
	CHECK_ST_OK(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, all,
		       f->pi == 3 ? 0x77 : il, lbat, true));
	if (f->pi == 3) {
		/* Application tag FFFFh alone does not disable type 3. */
		fill(f, &b, NB, 0x22, 0xffff, 0x12345678);
		blk_data(f, &b, 0)[0] ^= 0xff;
		CHECK_ST(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, CHK_GUARD,
			    0x12345678, lbat, true),
			 MEDIA, NVQ_SC_GUARD_CHECK);
	}

	/* PRACT write: the controller generates the PI. */
	fill(f, &b, NB, 0x33, 0, 0);
	for (i = 0; i < NB; i++)
		memset(tuple(f, blk_md(f, &b, i)), 0x99, 8);
	CHECK_ST_OK(io(h, q, f, nvq_cmd_write, &b, SLBA, NB, PRACT | all, il,
		       lbat, f->ms > 8));
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il, lbat, true));
	for (i = 0; i < NB; i++) {
		uint8_t want[128];
		uint8_t *d = f->ms == 8 && f->mset ?
				     b.d + i * f->ds : /* no md in the buffer */
				     blk_data(f, &b, i);

		CHECK(!memcmp(blk_data(f, &r, i), d, f->ds));
		if (f->ms > 8)
			memcpy(want, blk_md(f, &b, i), f->ms);
		else
			memset(want, 0, f->ms);
		put_pi(f, d, want, 0x1234, exp_ref(f, il, i));
		CHECK(!memcmp(blk_md(f, &r, i), want, f->ms));
	}

	/* PRACT read: checked, and with ms = 8 the PI is stripped. */
	fill(f, &b, NB, 0x44, 0x1234, il);
	blk_data(f, &b, 1)[9] ^= 4;
	CHECK_ST_OK(
		io(h, q, f, nvq_cmd_write, &b, SLBA, NB, 0, il, lbat, true));
	CHECK_ST(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, PRACT | CHK_GUARD, il,
		    lbat, f->ms > 8),
		 MEDIA, NVQ_SC_GUARD_CHECK);
	memset(r.d, 0x5a, r.dlen);
	CHECK_ST_OK(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, PRACT | CHK_APP, il,
		       lbat, f->ms > 8));
	if (f->ms == 8) {
		for (i = 0; i < NB; i++)
			CHECK(!memcmp(r.d + i * f->ds, blk_data(f, &b, i),
				      f->ds));
		/* Nothing past the data was written. */
		CHECK_EQ(r.d[NB * f->ds], 0x5a);
	}

	/* Write Zeroes with PRACT: PI of zeroes (guard 0). */
	{
		struct nvq_sqe s = h_sqe(nvq_cmd_write_zeroes);

		s.nsid = 1;
		s.cdw10 = SLBA;
		s.cdw12 = (NB - 1) | PRACT;
		s.cdw14 = il;
		s.cdw15 = lbat;
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		CHECK_ST_OK(io(h, q, f, nvq_cmd_read, &r, SLBA, NB, all, il,
			       lbat, true));
		t = tuple(f, blk_md(f, &r, 2));
		CHECK_EQ(t[0] | t[1], 0);
		/* Type 1: a reference tag check needs ILBRT = the LBA's. */
		s.cdw12 = (NB - 1) | PRACT | CHK_REF;
		s.cdw14 = il + 1;
		if (f->pi == 1)
			CHECK_ST(h_cmd(h, q, &s, NULL), NVQ_SCT_CMD_SPECIFIC,
				 NVQ_SC_INVALID_PI);
		else
			CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		s.cdw14 = il;
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		CHECK_EQ(t[2] << 8 | t[3], 0x1234);
		CHECK_EQ((uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 | t[7],
			 exp_ref(f, il, 2));
	}
	h_close(h);
}

/* Metadata without PI: both layouts move it, MPTR rules. */
static void plain_md(bool mset)
{
	struct fmt f = { .ds = 512, .ms = 16, .mset = mset };
	struct h *h;
	struct hq *q;
	struct bufs b, r;
	uint32_t i;

	open_fmt(&f, &h, &q, &b);
	check_identify(h, &f);
	r.d = h_alloc(h, b.dlen, NULL);
	r.m = h_alloc(h, 4096, NULL);
	fill(&f, &b, NB, 0x55, 0, 0);
	/* PRINFO is ignored without PI. */
	CHECK_ST_OK(io(h, q, &f, nvq_cmd_write, &b, 7, NB, PRACT | CHK_ALL, 0,
		       0, true));
	CHECK_ST_OK(io(h, q, &f, nvq_cmd_read, &r, 7, NB, 0, 0, 0, true));
	for (i = 0; i < NB; i++) {
		CHECK(!memcmp(blk_data(&f, &r, i), blk_data(&f, &b, i), 512));
		CHECK(!memcmp(blk_md(&f, &r, i), blk_md(&f, &b, i), 16));
	}
	/* Deallocated: data zero, metadata FFh again. */
	{
		struct nvq_dsm_range *rg = h_alloc(h, 4096, NULL);
		struct nvq_sqe s = h_sqe(nvq_cmd_dsm);

		rg->slba = 7;
		rg->nlb = 2;
		s.nsid = 1;
		s.cdw11 = NVQ_DSM_AD;
		h_prp(h, &s, rg, 4096);
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		CHECK_ST_OK(
			io(h, q, &f, nvq_cmd_read, &r, 7, NB, 0, 0, 0, true));
		CHECK_EQ(blk_data(&f, &r, 1)[3], 0);
		CHECK_EQ(blk_md(&f, &r, 1)[3], 0xff);
		CHECK(!memcmp(blk_md(&f, &r, 2), blk_md(&f, &b, 2), 16));
	}
	if (!mset) {
		struct nvq_sqe s = h_sqe(nvq_cmd_read);

		s.nsid = 1;
		s.cdw12 = NB - 1;
		h_prp(h, &s, r.d, NB * 512);
		s.mptr = h_iova(h, r.m) + 2; /* not dword aligned */
		CHECK_ST(h_cmd(h, q, &s, NULL), NVQ_SCT_GENERIC,
			 NVQ_SC_INVALID_FIELD);
		/* runs off the end of the arena's mapping */
		s.mptr = h->arena_iova + h->arena_len - 16;
		s.cid = 0xffff;
		CHECK_ST(h_cmd(h, q, &s, NULL), NVQ_SCT_GENERIC,
			 NVQ_SC_DATA_XFER_ERROR);
		s.mptr = 0xdead0000ull; /* unmapped */
		s.cid = 0xffff;
		CHECK_ST(h_cmd(h, q, &s, NULL), NVQ_SCT_GENERIC,
			 NVQ_SC_DATA_XFER_ERROR);
	}
	h_close(h);
}

/* File media: metadata persists in FILE.md; another ms is refused. */
static void file_md(void)
{
	struct fmt f = { .ds = 4096, .ms = 8, .pi = 2, .mset = true };
	char prm[4400];
	struct h *h;
	struct hq *q;
	struct bufs b, r;
	uint32_t i;

	snprintf(prm, sizeof(prm), "file=%s,size=1M,ms=8,mset=1,pi=2", path);
	h = h_open(prm);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	b.d = h_alloc(h, 8 * 4104, NULL);
	r.d = h_alloc(h, 8 * 4104, NULL);
	fill(&f, &b, NB, 0x66, 0x4242, 900);
	CHECK_ST_OK(io(h, q, &f, nvq_cmd_write, &b, 3, NB, CHK_ALL, 900,
		       0xffff4242u, true));
	h_close(h);

	snprintf(prm, sizeof(prm), "file=%s,size=1M", path);
	CHECK(!h_try_open(prm));
	CHECK(strstr(nvq_errmsg(), "ms=8"));
	snprintf(prm, sizeof(prm), "file=%s,size=1M,ms=16,mset=1", path);
	CHECK(!h_try_open(prm));

	snprintf(prm, sizeof(prm), "file=%s,size=1M,ms=8,mset=1,pi=2", path);
	h = h_open(prm);
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	r.d = h_alloc(h, 8 * 4104, NULL);
	CHECK_ST_OK(io(h, q, &f, nvq_cmd_read, &r, 3, NB, CHK_ALL, 900,
		       0xffff4242u, true));
	for (i = 0; i < NB; i++) {
		uint8_t *t = tuple(&f, blk_md(&f, &r, i));

		CHECK_EQ(t[2] << 8 | t[3], 0x4242);
		CHECK_EQ(blk_data(&f, &r, i)[0], (uint8_t)(0x66 + i * 7));
	}
	h_close(h);
}

static void bad(const char *s, const char *key)
{
	struct nvq_emu_params p;

	CHECK_EQ(nvq_emu_params_parse(s, &p), -EINVAL);
	if (!strstr(nvq_emu_errmsg(), key)) {
		fprintf(stderr, "'%s': '%s' does not name '%s'\n", s,
			nvq_emu_errmsg(), key);
		exit(1);
	}
}

static void params(void)
{
	struct nvq_emu_params p;

	CHECK_EQ(nvq_emu_params_parse("", &p), 0);
	CHECK_EQ(p.ms, 0);
	CHECK_EQ(p.pi, 0);
	CHECK_EQ(nvq_emu_params_parse("ms=64,mset=1,pi=3,pil=1", &p), 0);
	CHECK_EQ(p.ms, 64);
	CHECK(p.mset && p.pil);
	CHECK_EQ(p.pi, 3);
	bad("ms=12", "0 8 16 32 64 128");
	bad("ms=256", "ms");
	bad("pi=4", "pi");
	bad("pi=1", "ms=8");
	bad("mset=1", "ms=8");
	bad("ms=8,pil=1", "pi=1");
	CHECK(crc16(0, (const uint8_t *)"123456789", 9) == 0xd0db);
}

int main(void)
{
	static const uint32_t mss[] = { 8, 16 };
	int fd = test_tmpfile(path, sizeof(path), "emu-pi");
	uint32_t pi, m;
	int pil, mset;

	close(fd);
	cleanup();
	check_cleanup = cleanup;
	params();
	plain_md(false);
	plain_md(true);
	for (pi = 1; pi <= 3; pi++)
		for (pil = 0; pil <= 1; pil++)
			for (mset = 0; mset <= 1; mset++)
				for (m = 0; m < 2; m++) {
					struct fmt f = { .ds = 512,
							 .ms = mss[m],
							 .pi = pi,
							 .mset = mset,
							 .pil = pil };

					pi_format(&f);
				}
	file_md();
	cleanup();
	printf("pi: 24 formats checked\n");
	return 0;
}
