// SPDX-License-Identifier: MIT
/*
 * Sanitize (NVMe Base 2.0, 5.24 and 8.21): Block Erase and Overwrite
 * (SANICAP; no Crypto Erase), running in the background for
 * sanitize_ms= milliseconds. Progress is judged from the clock whenever
 * the controller looks (a command, the Sanitize Status log), so it goes
 * on across a controller reset as the specification asks. While it runs
 * I/O and the admin commands 8.21 does not allow fail with Sanitize In
 * Progress; after a failure (sanitize_fail=1, a test aid, or a media
 * error) they fail with Sanitize Failed until a sanitize succeeds or,
 * if the failed one had AUSE set, Exit Failure Mode.
 */
#include <string.h>

#include "emu_internal.h"

#define ST_INVALID_FIELD EMU_ST_GEN(NVQ_SC_INVALID_FIELD)
#define SANACT_EXIT 1
#define SANACT_BLOCK 2
#define SANACT_OVERWRITE 3
#define SANACT_CRYPTO 4
#define SSTAT_NEVER 0
#define SSTAT_DONE 1
#define SSTAT_RUNNING 2
#define SSTAT_FAILED 3

/* Do the erase the finished operation stands for; false on failure. */
static bool san_erase(struct nvq_emu *c)
{
	uint32_t dw10 = c->san_cdw10, sanact = dw10 & 7, pass, i;
	uint32_t npass = (dw10 >> 4) & 0xf ? (dw10 >> 4) & 0xf : 16;
	uint32_t pat = c->san_pattern;
	uint64_t off, done;
	struct emu_seg seg;

	if (c->p.sanitize_fail)
		return false;
	if (emu_md_fill(&c->media, 0, c->media.md_len, 0xff))
		return false;
	if (sanact == SANACT_BLOCK)
		return !emu_media_zero(&c->media, 0, c->media.len, true);
	/* Overwrite: the last pass decides what stays. */
	pass = npass;
	if ((dw10 & (1u << 8)) && !(pass & 1))
		pat = ~pat;
	for (i = 0; i < c->bounce_len / 4; i++)
		memcpy(c->bounce + 4 * i, &pat, 4);
	for (off = 0; off < c->media.len; off += seg.len) {
		seg.p = c->bounce;
		seg.len = c->media.len - off < c->bounce_len ?
				  c->media.len - off :
				  c->bounce_len;
		if (emu_media_rw(&c->media, off, &seg, 1, true, &done))
			return false;
	}
	return true;
}

void emu_sanitize_poll(struct nvq_emu *c)
{
	if (emu_likely(c->san_sstat != SSTAT_RUNNING) || emu_now() < c->san_end)
		return;
	c->san_sstat = san_erase(c) ? SSTAT_DONE : SSTAT_FAILED;
	c->san_failed_ause = c->san_sstat == SSTAT_FAILED &&
			     (c->san_cdw10 & (1u << 3));
}

uint16_t emu_sanitize_block(struct nvq_emu *c, const struct nvq_sqe *sqe,
			    bool admin)
{
	emu_sanitize_poll(c);
	if (emu_likely(c->san_sstat < SSTAT_RUNNING))
		return 0;
	if (admin) {
		switch (sqe->opcode) {
		case nvq_admin_delete_sq:
		case nvq_admin_create_sq:
		case nvq_admin_get_log_page:
		case nvq_admin_delete_cq:
		case nvq_admin_create_cq:
		case nvq_admin_identify:
		case nvq_admin_abort_cmd:
		case nvq_admin_set_features:
		case nvq_admin_get_features:
		case nvq_admin_async_event:
		case nvq_admin_keep_alive:
			return 0;
		case EMU_ADMIN_SANITIZE:
			/* After a failure: a new sanitize, or exit. */
			if (c->san_sstat == SSTAT_FAILED)
				return 0;
			break;
		default:
			break;
		}
	}
	return EMU_ST_GEN(c->san_sstat == SSTAT_RUNNING ?
				  NVQ_SC_SANITIZE_IN_PROGRESS :
				  NVQ_SC_SANITIZE_FAILED);
}

uint16_t emu_sanitize(struct nvq_emu *c, struct emu_req *req)
{
	const struct nvq_sqe *sqe = req->sqe;
	uint32_t dw10 = sqe->cdw10, sanact = dw10 & 7;

	req->err_loc = NVQ_ERR_LOC(cdw10);
	if (sanact == SANACT_EXIT) {
		if (c->san_sstat != SSTAT_FAILED)
			return 0; /* nothing to exit */
		if (!c->san_failed_ause)
			return EMU_ST_GEN(NVQ_SC_SANITIZE_FAILED);
		/* SSTAT stays: the log still says the last one failed. */
		c->san_sstat = SSTAT_DONE;
		c->san_exited = true;
		return 0;
	}
	if (sanact != SANACT_BLOCK && sanact != SANACT_OVERWRITE)
		return ST_INVALID_FIELD; /* 0, 4 (no crypto erase), 5-7 */
	c->san_cdw10 = dw10;
	c->san_pattern = sqe->cdw11;
	c->san_sstat = SSTAT_RUNNING;
	c->san_exited = false;
	c->san_start = emu_now();
	c->san_end = c->san_start + c->p.sanitize_ns;
	return 0;
}

size_t emu_sanitize_log(struct nvq_emu *c, uint8_t *buf)
{
	uint64_t now = emu_now(), span = c->p.sanitize_ns;
	uint32_t sstat = c->san_exited ? SSTAT_FAILED : c->san_sstat;
	uint32_t est = (uint32_t)((span + 999999999) / 1000000000);
	uint16_t sprog = 0xffff;

	emu_sanitize_poll(c);
	memset(buf, 0, 512);
	if (c->san_sstat == SSTAT_RUNNING)
		sprog = (uint16_t)(span ? (now - c->san_start) * 65536 / span :
					  0);
	/* SPROG, SSTAT (bits 2:0; bits 7:3 number of passes: 0), SCDW10. */
	memcpy(buf, &sprog, 2);
	buf[2] = (uint8_t)sstat;
	memcpy(buf + 4, &c->san_cdw10, 4);
	/*
	 * Estimated times (s): overwrite, block erase; no crypto erase
	 * (FFFFFFFFh: no time reported). The same again with No-Deallocate
	 * After Sanitize, which takes as long here; 0 would claim that the
	 * operation ends with the command.
	 */
	memcpy(buf + 8, &est, 4);
	memcpy(buf + 12, &est, 4);
	memset(buf + 16, 0xff, 4);
	memcpy(buf + 20, &est, 4);
	memcpy(buf + 24, &est, 4);
	memset(buf + 28, 0xff, 4);
	return 512;
}
