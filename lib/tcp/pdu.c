// SPDX-License-Identifier: MIT
/*
 * NVMe/TCP PDUs (NVMe/TCP Transport Specification 1.0, section 3): the
 * CRC32C of the digests, the host's PDUs, and the checks every PDU from
 * the target passes before conn.c acts on it.
 *
 * A target PDU is read in two steps: the 8-byte common header, checked
 * alone (nvq_tcp_check_ch) so that the reader knows how many header
 * bytes follow and where the data starts, then the whole header with
 * its digest (nvq_tcp_check_psh). What depends on the commands in flight
 * (CCCID, DATAO against the command's length) is conn.c's to check.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "pdu.h"

/* ---- CRC32C ------------------------------------------------------- */

/* The Castagnoli polynomial, reflected. */
#define CRC32C_POLY 0x82f63b78u

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? CRC32C_POLY : 0);
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++) {
		c = crc_table[0][i];
		for (j = 1; j < 8; j++) {
			c = crc_table[0][c & 0xff] ^ (c >> 8);
			crc_table[j][i] = c;
		}
	}
}

static int crc_hw;

static void crc_once(void)
{
	crc_init();
#if defined(__x86_64__)
	__builtin_cpu_init();
	crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
}

static pthread_once_t crc_once_ctl = PTHREAD_ONCE_INIT;

/* Set up the table and the CPU check once, from any thread. */
static inline void crc_ready(void)
{
	pthread_once(&crc_once_ctl, crc_once);
}

/* Slicing by 8: eight table lookups per 8 bytes. */
static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= c;
		c = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
		    crc_table[5][(w >> 16) & 0xff] ^
		    crc_table[4][(w >> 24) & 0xff] ^
		    crc_table[3][(w >> 32) & 0xff] ^
		    crc_table[2][(w >> 40) & 0xff] ^
		    crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t
crc_sse42(uint32_t c, const uint8_t *p, size_t len)
{
	uint64_t c64;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi(c, *p++);
		len--;
	}
	c64 = c;
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c64 = __builtin_ia32_crc32di(c64, w);
		p += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	while (len--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t nvq_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	crc_ready();
	return ~crc_sw(~crc, buf, len);
}

uint32_t nvq_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	crc_ready();
#if defined(__x86_64__)
	if (crc_hw)
		return ~crc_sse42(~crc, buf, len);
#endif
	return ~crc_sw(~crc, buf, len);
}

bool nvq_crc32c_hw_available(void)
{
	crc_ready();
	return crc_hw;
}

uint32_t nvq_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return nvq_crc32c_hw(crc, buf, len);
}

/* ---- names -------------------------------------------------------- */

const char *nvq_tcp_pdu_name(uint8_t type)
{
	switch (type) {
	case NVQ_TCP_ICREQ:
		return "ICReq";
	case NVQ_TCP_ICRESP:
		return "ICResp";
	case NVQ_TCP_H2C_TERM:
		return "H2CTermReq";
	case NVQ_TCP_C2H_TERM:
		return "C2HTermReq";
	case NVQ_TCP_CMD:
		return "CapsuleCmd";
	case NVQ_TCP_RSP:
		return "CapsuleResp";
	case NVQ_TCP_H2C_DATA:
		return "H2CData";
	case NVQ_TCP_C2H_DATA:
		return "C2HData";
	case NVQ_TCP_R2T:
		return "R2T";
	}
	return "unknown PDU";
}

const char *nvq_tcp_fes_name(uint16_t fes)
{
	switch (fes) {
	case NVQ_TCP_FES_INVALID_HDR:
		return "invalid PDU header field";
	case NVQ_TCP_FES_PDU_SEQ:
		return "PDU sequence error";
	case NVQ_TCP_FES_HDGST:
		return "header digest error";
	case NVQ_TCP_FES_DATA_RANGE:
		return "data transfer out of range";
	case NVQ_TCP_FES_LIMIT:
		return "data transfer limit exceeded";
	case NVQ_TCP_FES_UNSUPPORTED:
		return "unsupported parameter";
	}
	return "reserved FES";
}

/* ---- the host's PDUs ---------------------------------------------- */

uint8_t nvq_tcp_h2c_pdo(const struct nvq_tcp_params *p, uint8_t hlen)
{
	uint32_t off = hlen + (p->hdgst ? NVQ_TCP_DIGEST_LEN : 0);
	uint32_t a = p->cpda ? p->cpda : 4;

	return (uint8_t)((off + a - 1) / a * a);
}

void nvq_tcp_build_icreq(struct nvq_tcp_icreq *r, bool hdgst, bool ddgst)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = NVQ_TCP_ICREQ;
	r->hdr.hlen = sizeof(*r);
	r->hdr.plen = sizeof(*r);
	r->pfv = NVQ_TCP_PFV_1_0;
	r->hpda = 0;
	r->maxr2t = 0;
	r->digest = (hdgst ? NVQ_TCP_DIGEST_HDR : 0) |
		    (ddgst ? NVQ_TCP_DIGEST_DATA : 0);
}

/* Header digest, then zeroes up to PDO; returns the header region. */
static size_t finish_hdr(uint8_t *b, const struct nvq_tcp_params *p,
			 size_t hlen, bool data)
{
	struct nvq_tcp_hdr *h = (struct nvq_tcp_hdr *)b;
	size_t end = hlen;

	if (p->hdgst) {
		uint32_t d = nvq_crc32c(0, b, hlen);

		memcpy(b + hlen, &d, sizeof(d));
		end += NVQ_TCP_DIGEST_LEN;
	}
	if (data) {
		memset(b + end, 0, h->pdo - end);
		end = h->pdo;
	}
	return end;
}

size_t nvq_tcp_build_cmd(void *buf, const struct nvq_tcp_params *p,
			 const struct nvq_sqe *sqe, uint32_t incap)
{
	struct nvq_tcp_cmd_pdu *c = buf;
	uint32_t hd = p->hdgst ? NVQ_TCP_DIGEST_LEN : 0;

	memset(&c->hdr, 0, sizeof(c->hdr));
	c->hdr.type = NVQ_TCP_CMD;
	c->hdr.hlen = sizeof(*c);
	c->hdr.flags = p->hdgst ? NVQ_TCP_F_HDGST : 0;
	memcpy(&c->sqe, sqe, sizeof(c->sqe));
	if (!incap) {
		c->hdr.pdo = 0;
		c->hdr.plen = sizeof(*c) + hd;
		return finish_hdr(buf, p, sizeof(*c), false);
	}
	if (p->ddgst)
		c->hdr.flags |= NVQ_TCP_F_DDGST;
	c->hdr.pdo = nvq_tcp_h2c_pdo(p, sizeof(*c));
	c->hdr.plen = c->hdr.pdo + incap + (p->ddgst ? NVQ_TCP_DIGEST_LEN : 0);
	return finish_hdr(buf, p, sizeof(*c), true);
}

size_t nvq_tcp_build_h2c_data(void *buf, const struct nvq_tcp_params *p,
			      uint16_t cccid, uint16_t ttag, uint32_t datao,
			      uint32_t datal, bool last)
{
	struct nvq_tcp_data_pdu *d = buf;

	memset(d, 0, sizeof(*d));
	d->hdr.type = NVQ_TCP_H2C_DATA;
	d->hdr.hlen = sizeof(*d);
	d->hdr.flags = (p->hdgst ? NVQ_TCP_F_HDGST : 0) |
		       (p->ddgst ? NVQ_TCP_F_DDGST : 0) |
		       (last ? NVQ_TCP_F_DATA_LAST : 0);
	d->hdr.pdo = nvq_tcp_h2c_pdo(p, sizeof(*d));
	d->hdr.plen = d->hdr.pdo + datal + (p->ddgst ? NVQ_TCP_DIGEST_LEN : 0);
	d->cccid = cccid;
	d->ttag = ttag;
	d->datao = datao;
	d->datal = datal;
	return finish_hdr(buf, p, sizeof(*d), true);
}

size_t nvq_tcp_build_h2c_term(void *buf, uint16_t fes, uint32_t fei,
			      const void *bad, size_t badlen)
{
	struct nvq_tcp_term_pdu *t = buf;
	size_t max = NVQ_TCP_TERM_MAX_PLEN - NVQ_TCP_TERM_HLEN;

	if (badlen > max)
		badlen = max;
	memset(t, 0, sizeof(*t));
	t->hdr.type = NVQ_TCP_H2C_TERM;
	t->hdr.hlen = NVQ_TCP_TERM_HLEN;
	t->hdr.plen = (uint32_t)(NVQ_TCP_TERM_HLEN + badlen);
	t->fes = fes;
	/* FEI: the offset of the bad field for FES 01h, reserved else. */
	if (fes == NVQ_TCP_FES_INVALID_HDR)
		memcpy(t->fei, &fei, sizeof(t->fei));
	if (badlen)
		memcpy((uint8_t *)buf + NVQ_TCP_TERM_HLEN, bad, badlen);
	return NVQ_TCP_TERM_HLEN + badlen;
}

/* ---- checking the target's PDUs ----------------------------------- */

static int bad(struct nvq_tcp_rx_info *info, uint16_t fes, uint32_t fei,
	       const char *what, uint8_t type, unsigned long long val)
{
	info->fes = fes;
	info->fei = fei;
	return nvq_err(-EPROTO, "the target sent a %s with %s (%llu)",
		       nvq_tcp_pdu_name(type), what, val);
}

#define FEI(s, f) ((uint32_t)offsetof(struct s, f))

int nvq_tcp_check_ch(const struct nvq_tcp_hdr *h,
		     const struct nvq_tcp_params *p, bool ic,
		     struct nvq_tcp_rx_info *info)
{
	uint32_t hd = 0, dd = 0, hlen, min_plen;
	uint8_t t = h->type;

	memset(info, 0, sizeof(*info));
	info->type = t;
	switch (t) {
	case NVQ_TCP_ICRESP:
		if (!ic)
			return bad(info, NVQ_TCP_FES_PDU_SEQ, 0,
				   "a second ICResp", t, 0);
		hlen = sizeof(struct nvq_tcp_icresp);
		break;
	case NVQ_TCP_C2H_TERM:
		hlen = NVQ_TCP_TERM_HLEN;
		break;
	case NVQ_TCP_RSP:
	case NVQ_TCP_C2H_DATA:
	case NVQ_TCP_R2T:
		if (ic)
			return bad(info, NVQ_TCP_FES_PDU_SEQ, 0,
				   "no ICResp before it", t, 0);
		hlen = 24;
		break;
	case NVQ_TCP_ICREQ:
	case NVQ_TCP_H2C_TERM:
	case NVQ_TCP_CMD:
	case NVQ_TCP_H2C_DATA:
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_hdr, type), "a type only a host sends",
			   t, t);
	default:
		info->fes = NVQ_TCP_FES_INVALID_HDR;
		info->fei = FEI(nvq_tcp_hdr, type);
		return nvq_err(-EPROTO, "the target sent a PDU of type %#x", t);
	}
	if (h->hlen != hlen)
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_hdr, hlen), "a wrong HLEN", t, h->hlen);

	/* ICResp and the TermReqs carry no digests, whatever was agreed. */
	if (t == NVQ_TCP_ICRESP || t == NVQ_TCP_C2H_TERM) {
		if (h->flags & (NVQ_TCP_F_HDGST | NVQ_TCP_F_DDGST))
			return bad(info, NVQ_TCP_FES_INVALID_HDR,
				   FEI(nvq_tcp_hdr, flags), "digest flags set",
				   t, h->flags);
		if (t == NVQ_TCP_ICRESP) {
			if (h->plen != hlen)
				return bad(info, NVQ_TCP_FES_INVALID_HDR,
					   FEI(nvq_tcp_hdr, plen),
					   "a wrong PLEN", t, h->plen);
			/* PDO is reserved in ICResp. */
			info->hdr_len = hlen;
			return 0;
		}
		if (h->plen < hlen || h->plen > NVQ_TCP_TERM_MAX_PLEN)
			return bad(info, NVQ_TCP_FES_INVALID_HDR,
				   FEI(nvq_tcp_hdr, plen), "a wrong PLEN", t,
				   h->plen);
		/* PDO is reserved: the quoted header follows HLEN. */
		info->hdr_len = hlen;
		info->data_len = h->plen - hlen;
		return 0;
	}

	if (!!(h->flags & NVQ_TCP_F_HDGST) != p->hdgst)
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_hdr, flags),
			   p->hdgst ? "no header digest flag" :
				      "a header digest not negotiated",
			   t, h->flags);
	hd = p->hdgst ? NVQ_TCP_DIGEST_LEN : 0;

	if (t != NVQ_TCP_C2H_DATA) {
		/* No data: DDGSTF, LAST_PDU, SUCCESS and PDO are reserved
		 * here, and PLEN is the header alone. */
		if (h->plen != hlen + hd)
			return bad(info, NVQ_TCP_FES_INVALID_HDR,
				   FEI(nvq_tcp_hdr, plen), "a wrong PLEN", t,
				   h->plen);
		info->hdr_len = hlen + hd;
		return 0;
	}

	if (!!(h->flags & NVQ_TCP_F_DDGST) != p->ddgst)
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_hdr, flags),
			   p->ddgst ? "no data digest flag" :
				      "a data digest not negotiated",
			   t, h->flags);
	if ((h->flags & NVQ_TCP_F_DATA_SUCCESS) &&
	    !(h->flags & NVQ_TCP_F_DATA_LAST))
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_hdr, flags), "SUCCESS without LAST_PDU",
			   t, h->flags);
	dd = p->ddgst ? NVQ_TCP_DIGEST_LEN : 0;
	/* HPDA 0: data dword aligned, after the header and its digest. */
	if (h->pdo < hlen + hd || h->pdo % 4)
		return bad(info, NVQ_TCP_FES_INVALID_HDR, FEI(nvq_tcp_hdr, pdo),
			   "a wrong PDO", t, h->pdo);
	min_plen = h->pdo + 1 + dd;
	if (h->plen < min_plen)
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_hdr, plen), "a wrong PLEN", t, h->plen);
	info->hdr_len = h->pdo;
	info->data_len = h->plen - h->pdo - dd;
	info->ddgst = p->ddgst;
	return 0;
}

static int check_icresp(const struct nvq_tcp_icresp *r,
			const struct nvq_tcp_params *p,
			struct nvq_tcp_rx_info *info)
{
	uint8_t want = (p->hdgst ? NVQ_TCP_DIGEST_HDR : 0) |
		       (p->ddgst ? NVQ_TCP_DIGEST_DATA : 0);

	if (r->pfv != NVQ_TCP_PFV_1_0)
		return bad(info, NVQ_TCP_FES_UNSUPPORTED,
			   FEI(nvq_tcp_icresp, pfv), "an unknown PFV",
			   NVQ_TCP_ICRESP, r->pfv);
	if (r->cpda > 31)
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_icresp, cpda), "CPDA above 31",
			   NVQ_TCP_ICRESP, r->cpda);
	if (r->maxh2cdata < NVQ_TCP_MIN_MAXH2CDATA || r->maxh2cdata % 4)
		return bad(info, NVQ_TCP_FES_INVALID_HDR,
			   FEI(nvq_tcp_icresp, maxh2cdata),
			   "MAXH2CDATA below 4096 or not a multiple of 4",
			   NVQ_TCP_ICRESP, r->maxh2cdata);
	/* Bits 7:2 of DGST are reserved. */
	if ((r->digest & 3) != want) {
		info->fes = NVQ_TCP_FES_INVALID_HDR;
		info->fei = FEI(nvq_tcp_icresp, digest);
		return nvq_err(-EPROTO,
			       "the target answered digests hdgst=%d ddgst=%d "
			       "to hdgst=%d ddgst=%d: it does not support "
			       "what was asked",
			       !!(r->digest & NVQ_TCP_DIGEST_HDR),
			       !!(r->digest & NVQ_TCP_DIGEST_DATA), p->hdgst,
			       p->ddgst);
	}
	return 0;
}

int nvq_tcp_check_psh(const void *hdr, const struct nvq_tcp_params *p,
		      struct nvq_tcp_rx_info *info)
{
	const struct nvq_tcp_hdr *h = hdr;

	if (h->type == NVQ_TCP_ICRESP)
		return check_icresp(hdr, p, info);
	if (h->type == NVQ_TCP_C2H_TERM)
		return 0;
	if (p->hdgst) {
		uint32_t want = nvq_crc32c(0, hdr, h->hlen), got;

		memcpy(&got, (const uint8_t *)hdr + h->hlen, sizeof(got));
		if (want != got) {
			info->fes = NVQ_TCP_FES_HDGST;
			info->fei = 0;
			return nvq_err(-EPROTO,
				       "the target sent a %s with a bad header "
				       "digest (%#x, computed %#x)",
				       nvq_tcp_pdu_name(h->type), got, want);
		}
	}
	if (h->type == NVQ_TCP_C2H_DATA) {
		const struct nvq_tcp_data_pdu *d = hdr;

		if (d->datal != info->data_len)
			return bad(info, NVQ_TCP_FES_INVALID_HDR,
				   FEI(nvq_tcp_data_pdu, datal),
				   "DATAL not matching PLEN", h->type,
				   d->datal);
	} else if (h->type == NVQ_TCP_R2T) {
		const struct nvq_tcp_r2t_pdu *r = hdr;

		if (!r->r2tl)
			return bad(info, NVQ_TCP_FES_INVALID_HDR,
				   FEI(nvq_tcp_r2t_pdu, r2tl), "R2TL 0",
				   h->type, 0);
	}
	return 0;
}
