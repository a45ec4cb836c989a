// SPDX-License-Identifier: MIT
/*
 * lib/tcp/pdu.c: CRC32C against RFC 3720's vectors and a bitwise
 * reference (both implementations, random buffers, every alignment, in
 * pieces), the bytes of every PDU the host builds, and the checker
 * refusing each class of malformed target header (with the FES and FEI
 * the H2CTermReq would carry) while ignoring the reserved fields.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"
#include "pdu.h"
#include "tcp_peer.h"
#include "testutil.h"

static void crc_vectors(void)
{
	static const uint8_t iscsi[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
		0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t b[32];
	int i;

	/* RFC 3720 B.4: the digests as bytes on the wire, little endian. */
	memset(b, 0, sizeof(b));
	CHECK_EQ(nvq_crc32c_sw(0, b, 32), 0x8a9136aa);
	CHECK_EQ(nvq_crc32c_hw(0, b, 32), 0x8a9136aa);
	memset(b, 0xff, sizeof(b));
	CHECK_EQ(nvq_crc32c_sw(0, b, 32), 0x62a8ab43);
	CHECK_EQ(nvq_crc32c_hw(0, b, 32), 0x62a8ab43);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	CHECK_EQ(nvq_crc32c_sw(0, b, 32), 0x46dd794e);
	CHECK_EQ(nvq_crc32c_hw(0, b, 32), 0x46dd794e);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	CHECK_EQ(nvq_crc32c_sw(0, b, 32), 0x113fdb5c);
	CHECK_EQ(nvq_crc32c_hw(0, b, 32), 0x113fdb5c);
	CHECK_EQ(nvq_crc32c_sw(0, iscsi, 48), 0xd9963a56);
	CHECK_EQ(nvq_crc32c_hw(0, iscsi, 48), 0xd9963a56);
	CHECK_EQ(nvq_crc32c(0, "123456789", 9), 0xe3069283);
	CHECK_EQ(peer_crc32c(0, "123456789", 9), 0xe3069283);
	CHECK_EQ(nvq_crc32c(0, NULL, 0), 0);
	printf("crc32c: the crc32 instruction is %s\n",
	       nvq_crc32c_hw_available() ? "used" : "not available");
}

static void crc_random(void)
{
	uint64_t s = test_seed("crc32c", 0x7c9c32c);
	size_t max = 9000;
	uint8_t *buf = malloc(max + 16);
	int round;

	CHECK(buf);
	for (round = 0; round < 400; round++) {
		size_t off = test_rand(&s) % 16;
		size_t len = test_rand(&s) % (round < 100 ? 64 : max);
		size_t cut = len ? test_rand(&s) % (len + 1) : 0;
		uint32_t ref, a, b;

		fill_pattern(buf, max + 16, test_rand(&s));
		ref = peer_crc32c(0, buf + off, len);
		a = nvq_crc32c_sw(0, buf + off, len);
		b = nvq_crc32c_hw(0, buf + off, len);
		CHECK_EQ(a, ref);
		CHECK_EQ(b, ref);
		/* In two pieces, each implementation continuing the other. */
		CHECK_EQ(nvq_crc32c_hw(nvq_crc32c_sw(0, buf + off, cut),
				       buf + off + cut, len - cut),
			 ref);
		CHECK_EQ(nvq_crc32c_sw(nvq_crc32c_hw(0, buf + off, cut),
				       buf + off + cut, len - cut),
			 ref);
	}
	free(buf);
}

static const struct nvq_tcp_params plain = { .maxh2cdata = 8192, .cpda = 4 };
static const struct nvq_tcp_params dg = { .hdgst = true,
					  .ddgst = true,
					  .maxh2cdata = 8192,
					  .cpda = 4 };

static uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void build_icreq(void)
{
	struct nvq_tcp_icreq r;
	uint8_t *b = (uint8_t *)&r;
	int i;

	memset(&r, 0xee, sizeof(r));
	nvq_tcp_build_icreq(&r, true, false);
	CHECK_EQ(b[0], 0x00);
	CHECK_EQ(b[1], 0);
	CHECK_EQ(b[2], 128);
	CHECK_EQ(b[3], 0);
	CHECK_EQ(rd32(b + 4), 128);
	CHECK_EQ(b[8], 0);
	CHECK_EQ(b[9], 0);
	CHECK_EQ(b[10], 0); /* HPDA */
	CHECK_EQ(b[11], 0x01); /* HDGST_ENABLE */
	CHECK_EQ(rd32(b + 12), 0); /* MAXR2T */
	for (i = 16; i < 128; i++)
		CHECK_EQ(b[i], 0);
	nvq_tcp_build_icreq(&r, false, true);
	CHECK_EQ(b[11], 0x02);
	nvq_tcp_build_icreq(&r, true, true);
	CHECK_EQ(b[11], 0x03);
}

static void build_cmd(void)
{
	struct nvq_tcp_params p = plain;
	struct nvq_sqe sqe;
	uint8_t b[NVQ_TCP_RX_HDR_MAX];
	size_t n;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = 0x02;
	sqe.cid = 7;
	sqe.nsid = 1;
	memset(b, 0xee, sizeof(b));
	n = nvq_tcp_build_cmd(b, &p, &sqe, 0);
	CHECK_EQ(n, 72);
	CHECK_EQ(b[0], 0x04);
	CHECK_EQ(b[1], 0);
	CHECK_EQ(b[2], 72);
	CHECK_EQ(b[3], 0); /* no data: PDO 0 */
	CHECK_EQ(rd32(b + 4), 72);
	CHECK_MEMEQ(b + 8, &sqe, 64);

	/* In-capsule data, no digests: PDO right after the header. */
	n = nvq_tcp_build_cmd(b, &p, &sqe, 100);
	CHECK_EQ(n, 72);
	CHECK_EQ(b[3], 72);
	CHECK_EQ(rd32(b + 4), 172);

	/* Digests: HDGSTF and DDGSTF, digest of the 72 bytes, then data. */
	p = dg;
	n = nvq_tcp_build_cmd(b, &p, &sqe, 100);
	CHECK_EQ(n, 76);
	CHECK_EQ(b[1], NVQ_TCP_F_HDGST | NVQ_TCP_F_DDGST);
	CHECK_EQ(b[3], 76);
	CHECK_EQ(rd32(b + 4), 76 + 100 + 4);
	CHECK_EQ(rd32(b + 72), peer_crc32c(0, b, 72));
	/* No data: no DDGSTF. */
	n = nvq_tcp_build_cmd(b, &p, &sqe, 0);
	CHECK_EQ(n, 76);
	CHECK_EQ(b[1], NVQ_TCP_F_HDGST);
	CHECK_EQ(rd32(b + 4), 76);

	/* CPDA 31: data 128-byte aligned, zero padding in between. */
	p.cpda = 128;
	memset(b, 0xee, sizeof(b));
	n = nvq_tcp_build_cmd(b, &p, &sqe, 10);
	CHECK_EQ(n, 128);
	CHECK_EQ(b[3], 128);
	CHECK_EQ(rd32(b + 4), 128 + 10 + 4);
	for (n = 76; n < 128; n++)
		CHECK_EQ(b[n], 0);
	/* CPDA 2 (12 bytes): 76 rounds up to 84. */
	p.cpda = 12;
	CHECK_EQ(nvq_tcp_h2c_pdo(&p, 72), 84);
}

static void build_h2c(void)
{
	struct nvq_tcp_params p = plain;
	uint8_t b[NVQ_TCP_RX_HDR_MAX];
	size_t n;

	n = nvq_tcp_build_h2c_data(b, &p, 3, 0xabcd, 4096, 4096, false);
	CHECK_EQ(n, 24);
	CHECK_EQ(b[0], 0x06);
	CHECK_EQ(b[1], 0);
	CHECK_EQ(b[2], 24);
	CHECK_EQ(b[3], 24);
	CHECK_EQ(rd32(b + 4), 24 + 4096);
	CHECK_EQ(b[8] | b[9] << 8, 3);
	CHECK_EQ(b[10] | b[11] << 8, 0xabcd);
	CHECK_EQ(rd32(b + 12), 4096);
	CHECK_EQ(rd32(b + 16), 4096);
	CHECK_EQ(rd32(b + 20), 0);
	p = dg;
	n = nvq_tcp_build_h2c_data(b, &p, 3, 1, 0, 512, true);
	CHECK_EQ(n, 28);
	CHECK_EQ(b[1], NVQ_TCP_F_HDGST | NVQ_TCP_F_DDGST | NVQ_TCP_F_DATA_LAST);
	CHECK_EQ(b[3], 28);
	CHECK_EQ(rd32(b + 4), 28 + 512 + 4);
	CHECK_EQ(rd32(b + 24), peer_crc32c(0, b, 24));
}

static void build_term(void)
{
	uint8_t b[NVQ_TCP_TERM_MAX_PLEN], bad[200];
	size_t n;

	fill_pattern(bad, sizeof(bad), 9);
	n = nvq_tcp_build_h2c_term(b, NVQ_TCP_FES_INVALID_HDR, 20, bad, 24);
	CHECK_EQ(n, 48);
	CHECK_EQ(b[0], 0x02);
	CHECK_EQ(b[1], 0);
	CHECK_EQ(b[2], 24);
	CHECK_EQ(b[3], 0);
	CHECK_EQ(rd32(b + 4), 48);
	CHECK_EQ(b[8] | b[9] << 8, 1);
	CHECK_EQ(rd32(b + 10), 20);
	CHECK_MEMEQ(b + 24, bad, 24);
	/* At most 128 bytes quoted; FEI reserved but for FES 01h. */
	n = nvq_tcp_build_h2c_term(b, NVQ_TCP_FES_HDGST, 20, bad, 200);
	CHECK_EQ(n, 152);
	CHECK_EQ(rd32(b + 4), 152);
	CHECK_EQ(rd32(b + 10), 0);
	CHECK_MEMEQ(b + 24, bad, 128);
}

/* A header region for the checker. */
static uint8_t h[NVQ_TCP_RX_HDR_MAX + 8];

static void mk(uint8_t type, uint8_t flags, uint8_t hlen, uint8_t pdo,
	       uint32_t plen)
{
	memset(h, 0, sizeof(h));
	h[0] = type;
	h[1] = flags;
	h[2] = hlen;
	h[3] = pdo;
	memcpy(h + 4, &plen, 4);
}

/* The common header in h is refused with @fes/@fei. */
static void ch_bad(const struct nvq_tcp_params *p, bool ic, uint16_t fes,
		   uint32_t fei, const char *msg)
{
	struct nvq_tcp_rx_info info;

	CHECK_EQ(nvq_tcp_check_ch((void *)h, p, ic, &info), -EPROTO);
	CHECK_EQ(info.fes, fes);
	if (fes == NVQ_TCP_FES_INVALID_HDR)
		CHECK_EQ(info.fei, fei);
	CHECK_MSG(msg);
}

static void ch_ok(const struct nvq_tcp_params *p, bool ic, uint32_t hdr_len,
		  uint32_t data_len)
{
	struct nvq_tcp_rx_info info;

	CHECK_OK(nvq_tcp_check_ch((void *)h, p, ic, &info));
	CHECK_EQ(info.hdr_len, hdr_len);
	CHECK_EQ(info.data_len, data_len);
}

static void check_common(void)
{
	const struct nvq_tcp_params *p = &plain, *d = &dg;
	const uint8_t host_types[] = { 0x00, 0x02, 0x04, 0x06 };
	unsigned int i;

	/* Types: unknown, a host's, out of sequence. */
	mk(0x08, 0, 24, 0, 24);
	ch_bad(p, false, 1, 0, "type 0x8");
	mk(0x0a, 0, 24, 0, 24);
	ch_bad(p, false, 1, 0, "type 0xa");
	mk(0xff, 0, 24, 0, 24);
	ch_bad(p, false, 1, 0, "type 0xff");
	for (i = 0; i < ARRAY_SIZE(host_types); i++) {
		mk(host_types[i], 0, 24, 0, 24);
		ch_bad(p, false, 1, 0, "only a host sends");
	}
	mk(0x01, 0, 128, 0, 128);
	ch_bad(p, false, 2, 0, "second ICResp");
	mk(0x05, 0, 24, 0, 24);
	ch_bad(p, true, 2, 0, "no ICResp before");
	mk(0x07, 0, 24, 24, 25);
	ch_bad(p, true, 2, 0, "no ICResp before");
	mk(0x09, 0, 24, 0, 24);
	ch_bad(p, true, 2, 0, "no ICResp before");

	/* HLEN per type. */
	mk(0x01, 0, 24, 0, 128);
	ch_bad(p, true, 1, 2, "HLEN");
	mk(0x05, 0, 28, 0, 28);
	ch_bad(p, false, 1, 2, "HLEN");
	mk(0x07, 0, 8, 24, 100);
	ch_bad(p, false, 1, 2, "HLEN");
	mk(0x09, 0, 72, 0, 72);
	ch_bad(p, false, 1, 2, "HLEN");
	mk(0x03, 0, 128, 0, 128);
	ch_bad(p, false, 1, 2, "HLEN");

	/* ICResp: PLEN 128, no digest flags; PDO reserved. */
	mk(0x01, 0, 128, 0, 132);
	ch_bad(p, true, 1, 4, "PLEN");
	mk(0x01, NVQ_TCP_F_HDGST, 128, 0, 128);
	ch_bad(d, true, 1, 1, "digest flags");
	mk(0x01, 0, 128, 77, 128);
	ch_ok(p, true, 128, 0);

	/* C2HTermReq: PLEN 24..152, no digests even when negotiated. */
	mk(0x03, 0, 24, 0, 24);
	ch_ok(d, false, 24, 0);
	mk(0x03, 0, 24, 0, 152);
	ch_ok(p, true, 24, 128);
	mk(0x03, 0, 24, 0, 153);
	ch_bad(p, false, 1, 4, "PLEN");
	mk(0x03, 0, 24, 0, 23);
	ch_bad(p, false, 1, 4, "PLEN");
	mk(0x03, NVQ_TCP_F_DDGST, 24, 0, 24);
	ch_bad(p, false, 1, 1, "digest flags");

	/* Header digest flag must match what was negotiated. */
	mk(0x05, 0, 24, 0, 28);
	ch_bad(d, false, 1, 1, "no header digest flag");
	mk(0x05, NVQ_TCP_F_HDGST, 24, 0, 28);
	ch_bad(p, false, 1, 1, "header digest not negotiated");
	mk(0x05, NVQ_TCP_F_HDGST, 24, 0, 28);
	ch_ok(d, false, 28, 0);

	/* CapsuleResp and R2T: PLEN exactly the header (and digest);
	 * DDGSTF, data flags and PDO reserved (ignored). */
	mk(0x05, 0, 24, 0, 28);
	ch_bad(p, false, 1, 4, "PLEN");
	mk(0x09, 0, 24, 0, 20);
	ch_bad(p, false, 1, 4, "PLEN");
	mk(0x05, 0xff, 24, 9, 28);
	ch_ok(d, false, 28, 0);
	mk(0x09, NVQ_TCP_F_DDGST | NVQ_TCP_F_DATA_LAST, 24, 3, 24);
	ch_ok(p, false, 24, 0);

	/* C2HData: DDGSTF as negotiated, SUCCESS only with LAST, PDO
	 * after header and digest and dword aligned, some data. */
	mk(0x07, 0, 24, 24, 24 + 100);
	ch_ok(p, false, 24, 100);
	mk(0x07, NVQ_TCP_F_HDGST | NVQ_TCP_F_DDGST, 24, 28, 28 + 100 + 4);
	ch_ok(d, false, 28, 100);
	mk(0x07, NVQ_TCP_F_HDGST, 24, 28, 28 + 100);
	ch_bad(d, false, 1, 1, "no data digest flag");
	mk(0x07, NVQ_TCP_F_DDGST, 24, 24, 24 + 100 + 4);
	ch_bad(p, false, 1, 1, "data digest not negotiated");
	mk(0x07, NVQ_TCP_F_DATA_SUCCESS, 24, 24, 124);
	ch_bad(p, false, 1, 1, "SUCCESS without LAST_PDU");
	mk(0x07, NVQ_TCP_F_DATA_SUCCESS | NVQ_TCP_F_DATA_LAST, 24, 24, 124);
	ch_ok(p, false, 24, 100);
	mk(0x07, NVQ_TCP_F_HDGST | NVQ_TCP_F_DDGST, 24, 24, 128);
	ch_bad(d, false, 1, 3, "PDO");
	mk(0x07, 0, 24, 20, 124);
	ch_bad(p, false, 1, 3, "PDO");
	mk(0x07, 0, 24, 26, 124);
	ch_bad(p, false, 1, 3, "PDO");
	mk(0x07, 0, 24, 32, 132);
	ch_ok(p, false, 32, 100);
	mk(0x07, 0, 24, 24, 24);
	ch_bad(p, false, 1, 4, "PLEN");
	mk(0x07, NVQ_TCP_F_HDGST | NVQ_TCP_F_DDGST, 24, 28, 32);
	ch_bad(d, false, 1, 4, "PLEN");
	mk(0x07, 0, 24, 24, 10);
	ch_bad(p, false, 1, 4, "PLEN");
	mk(0x07, 0, 24, 252, 0xffffffffu);
	ch_ok(p, false, 252, 0xffffffffu - 252);
}

static void psh_bad(const struct nvq_tcp_params *p, bool ic, uint16_t fes,
		    uint32_t fei, const char *msg)
{
	struct nvq_tcp_rx_info info;

	CHECK_OK(nvq_tcp_check_ch((void *)h, p, ic, &info));
	CHECK_EQ(nvq_tcp_check_psh(h, p, &info), -EPROTO);
	CHECK_EQ(info.fes, fes);
	if (fes == NVQ_TCP_FES_INVALID_HDR)
		CHECK_EQ(info.fei, fei);
	CHECK_MSG(msg);
}

static void psh_ok(const struct nvq_tcp_params *p, bool ic)
{
	struct nvq_tcp_rx_info info;

	CHECK_OK(nvq_tcp_check_ch((void *)h, p, ic, &info));
	CHECK_OK(nvq_tcp_check_psh(h, p, &info));
}

static void set32(size_t off, uint32_t v)
{
	memcpy(h + off, &v, 4);
}

static void digest(void)
{
	set32(24, peer_crc32c(0, h, 24));
}

static void mk_icresp(uint8_t pfv, uint8_t cpda, uint8_t dgst, uint32_t maxh)
{
	mk(0x01, 0, 128, 0, 128);
	h[8] = pfv;
	h[10] = cpda;
	h[11] = dgst;
	set32(12, maxh);
}

static void check_specific(void)
{
	const struct nvq_tcp_params *p = &plain, *d = &dg;

	/* ICResp. */
	mk_icresp(0, 0, 0, 4096);
	psh_ok(p, true);
	mk_icresp(0, 31, 0, 0x100000);
	memset(h + 16, 0xaa, 112); /* reserved */
	h[11] = 0xfc; /* DGST 7:2 reserved */
	psh_ok(p, true);
	mk_icresp(1, 0, 0, 4096);
	psh_bad(p, true, NVQ_TCP_FES_UNSUPPORTED, 8, "PFV");
	mk_icresp(0, 32, 0, 4096);
	psh_bad(p, true, 1, 10, "CPDA");
	mk_icresp(0, 0, 0, 4092);
	psh_bad(p, true, 1, 12, "MAXH2CDATA");
	mk_icresp(0, 0, 0, 4098);
	psh_bad(p, true, 1, 12, "MAXH2CDATA");
	mk_icresp(0, 0, 1, 4096);
	psh_bad(p, true, 1, 11, "does not support");
	mk_icresp(0, 0, 2, 8192);
	psh_bad(d, true, 1, 11, "does not support");
	mk_icresp(0, 0, 3, 8192);
	psh_ok(d, true);

	/* Header digest. */
	mk(0x05, NVQ_TCP_F_HDGST, 24, 0, 28);
	h[20] = 9;
	digest();
	psh_ok(d, false);
	h[21] ^= 1;
	psh_bad(d, false, NVQ_TCP_FES_HDGST, 0, "bad header digest");

	/* C2HData: DATAL agrees with PLEN. */
	mk(0x07, 0, 24, 24, 124);
	set32(16, 100);
	psh_ok(p, false);
	set32(16, 99);
	psh_bad(p, false, 1, 16, "DATAL");
	set32(16, 101);
	psh_bad(p, false, 1, 16, "DATAL");

	/* R2T: R2TL not 0. */
	mk(0x09, NVQ_TCP_F_HDGST, 24, 0, 28);
	set32(16, 0);
	digest();
	psh_bad(d, false, 1, 16, "R2TL 0");
	set32(16, 1);
	digest();
	psh_ok(d, false);
}

int main(void)
{
	crc_vectors();
	crc_random();
	build_icreq();
	build_cmd();
	build_h2c();
	build_term();
	check_common();
	check_specific();
	printf("tcp-pdu: ok\n");
	return 0;
}
