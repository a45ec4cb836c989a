// SPDX-License-Identifier: MIT
/*
 * Sanitize on the emulated controller: SANICAP, Block Erase and
 * Overwrite (pattern, OIPBP) running in the background, I/O and
 * disallowed admin commands refused with Sanitize In Progress while
 * allowed ones run, the Sanitize Status log (SPROG, SSTAT, SCDW10,
 * estimates, also with No-Deallocate), surviving a controller reset, failure (sanitize_fail=1)
 * with Sanitize Failed and Exit Failure Mode under AUSE. No timing is
 * asserted: a long sanitize_ms is "still running", completion is polled.
 */
#include <string.h>

#include "harness.h"

#define GEN NVQ_SCT_GENERIC
#define SAN 0x84

struct slog {
	uint16_t sprog;
	uint8_t sstat, rsvd;
	uint32_t scdw10, eto, etbe, etce, etond, etbend, etcend;
};

static uint16_t sanitize(struct h *h, uint32_t dw10, uint32_t pattern)
{
	struct nvq_sqe s = h_sqe(SAN);

	s.cdw10 = dw10;
	s.cdw11 = pattern;
	return h_admin(h, &s, NULL);
}

static void get_log(struct h *h, struct slog *out)
{
	uint8_t *b = h_alloc(h, 4096, NULL);
	struct nvq_sqe s = h_sqe(nvq_admin_get_log_page);

	s.nsid = 0xffffffff;
	s.cdw10 = 0x81 | ((512 / 4 - 1) << 16);
	h_prp(h, &s, b, 512);
	CHECK_ST_OK(h_admin(h, &s, NULL));
	memcpy(out, b, sizeof(*out));
}

static void wait_done(struct h *h, uint8_t want)
{
	struct slog l;
	uint64_t t0 = h_now();

	do {
		get_log(h, &l);
		if ((l.sstat & 7) != 2)
			break;
	} while (h_now() - t0 < 20000000000ull);
	CHECK_EQ(l.sstat & 7, want);
}

static uint16_t rw(struct h *h, struct hq *q, uint8_t opc, void *b)
{
	return h_rw(h, q, opc, 1, 5, 1, b, 4096);
}

static void running(void)
{
	struct h *h = h_open("size=1M,sanitize_ms=3600000");
	struct nvq_id_ctrl *id;
	struct nvq_sqe s;
	struct slog l;
	struct hq *q;
	uint8_t *b;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	id = h_alloc(h, 4096, NULL);
	b = h_alloc(h, 4096, NULL);
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	CHECK_EQ(id->sanicap & 7, 6); /* block erase, overwrite */
	get_log(h, &l);
	CHECK_EQ(l.sstat & 7, 0); /* never sanitized */
	CHECK_EQ(l.sprog, 0xffff);

	/* Crypto erase is not offered; 0 and 5-7 are invalid. */
	CHECK_ST(sanitize(h, 4, 0), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(sanitize(h, 0, 0), GEN, NVQ_SC_INVALID_FIELD);
	CHECK_ST(sanitize(h, 6, 0), GEN, NVQ_SC_INVALID_FIELD);
	/* Exit Failure Mode with nothing failed: nothing to do. */
	CHECK_ST_OK(sanitize(h, 1, 0));

	memset(b, 0x3c, 4096);
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, b));
	CHECK_ST_OK(sanitize(h, 2 | (1u << 9), 0));
	get_log(h, &l);
	CHECK_EQ(l.sstat & 7, 2);
	CHECK_EQ(l.scdw10, 2 | (1u << 9));
	CHECK(l.sprog != 0xffff);
	CHECK_EQ(l.etbe, 3600);
	CHECK_EQ(l.eto, 3600);
	CHECK_EQ(l.etce, 0xffffffffu);
	/* No-Deallocate After Sanitize takes as long; still no crypto */
	CHECK_EQ(l.etond, 3600);
	CHECK_EQ(l.etbend, 3600);
	CHECK_EQ(l.etcend, 0xffffffffu);
	/* I/O and disallowed admin commands are refused. */
	CHECK_ST(rw(h, q, nvq_cmd_read, b), GEN, NVQ_SC_SANITIZE_IN_PROGRESS);
	CHECK_ST(rw(h, q, nvq_cmd_write, b), GEN, NVQ_SC_SANITIZE_IN_PROGRESS);
	CHECK_ST(h_rw(h, q, nvq_cmd_flush, 1, 0, 1, NULL, 0), GEN,
		 NVQ_SC_SANITIZE_IN_PROGRESS);
	s = h_sqe(nvq_admin_format_nvm);
	s.nsid = 1;
	CHECK_ST(h_admin(h, &s, NULL), GEN, NVQ_SC_SANITIZE_IN_PROGRESS);
	CHECK_ST(sanitize(h, 2, 0), GEN, NVQ_SC_SANITIZE_IN_PROGRESS);
	CHECK_ST(sanitize(h, 1, 0), GEN, NVQ_SC_SANITIZE_IN_PROGRESS);
	/* Allowed: Identify, Get Features, queue creation. */
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
	s = h_sqe(nvq_admin_get_features);
	s.cdw10 = 7;
	CHECK_ST_OK(h_admin(h, &s, NULL));
	CHECK_ST_OK(h_create_cq(h, 2, 16, false, 0));
	/* A controller reset does not stop it. */
	h_disable(h);
	h_enable(h);
	get_log(h, &l);
	CHECK_EQ(l.sstat & 7, 2);
	q = h_ioq(h, 1, 16, false, 0);
	CHECK_ST(rw(h, q, nvq_cmd_read, b), GEN, NVQ_SC_SANITIZE_IN_PROGRESS);
	h_close(h);
}

static void complete(void)
{
	struct h *h = h_open("size=1M,sanitize_ms=1");
	struct slog l;
	struct hq *q;
	uint32_t *w;
	uint8_t *b;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	b = h_alloc(h, 4096, NULL);
	w = (uint32_t *)b;
	memset(b, 0x3c, 4096);
	CHECK_ST_OK(rw(h, q, nvq_cmd_write, b));
	CHECK_ST_OK(sanitize(h, 2, 0));
	wait_done(h, 1);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, b));
	CHECK_EQ(b[0], 0);
	CHECK_EQ(b[4095], 0);

	/* Overwrite, 3 passes: the pattern stays. */
	CHECK_ST_OK(sanitize(h, 3 | 3u << 4, 0xa5c30f12));
	wait_done(h, 1);
	get_log(h, &l);
	CHECK_EQ(l.scdw10, 3 | 3u << 4);
	CHECK_EQ(l.sprog, 0xffff);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, b));
	CHECK_EQ(w[0], 0xa5c30f12);
	CHECK_EQ(w[1023], 0xa5c30f12);
	/* OIPBP with 2 passes: the last pass wrote the inverse. */
	CHECK_ST_OK(sanitize(h, 3 | 2u << 4 | 1u << 8, 0xa5c30f12));
	wait_done(h, 1);
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, b));
	CHECK_EQ(w[7], ~0xa5c30f12u);
	h_close(h);
}

static void failure(void)
{
	struct h *h = h_open("size=1M,sanitize_ms=1,sanitize_fail=1");
	struct hq *q;
	uint8_t *b;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	b = h_alloc(h, 4096, NULL);
	/* Restricted (AUSE = 0): only a successful sanitize gets out. */
	CHECK_ST_OK(sanitize(h, 2, 0));
	wait_done(h, 3);
	CHECK_ST(rw(h, q, nvq_cmd_read, b), GEN, NVQ_SC_SANITIZE_FAILED);
	CHECK_ST(sanitize(h, 1, 0), GEN, NVQ_SC_SANITIZE_FAILED);
	/* Unrestricted (AUSE = 1): Exit Failure Mode works. */
	CHECK_ST_OK(sanitize(h, 2 | 1u << 3, 0));
	wait_done(h, 3);
	CHECK_ST(rw(h, q, nvq_cmd_read, b), GEN, NVQ_SC_SANITIZE_FAILED);
	CHECK_ST_OK(sanitize(h, 1, 0));
	CHECK_ST_OK(rw(h, q, nvq_cmd_read, b));
	h_close(h);
}

int main(void)
{
	running();
	complete();
	failure();
	return 0;
}
