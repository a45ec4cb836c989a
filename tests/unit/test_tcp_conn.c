// SPDX-License-Identifier: MIT
/*
 * lib/tcp/conn.c and fabrics.c against a scripted target (tcp_peer.h) on
 * a socketpair: ICReq/ICResp with and without digests and a refused
 * digest, reads with C2HData split over a 3-element iovec, the SUCCESS
 * flag, in-capsule writes, R2T-driven writes (MAXH2CDATA 4096, three
 * R2Ts), a data digest error (H2CTermReq seen by the target), C2HTermReq,
 * the target closing mid-PDU, a PDU trickled one byte at a time, unknown
 * CIDs, DATAO and R2T out of range, conn_sync timing out, -EBUSY at
 * depth, batched capsules (one sendmsg() per batch, 32 at most, the
 * batch of a broken connection drained), responses and C2HData parsed
 * from one recv() and a large C2HData received partly straight into its
 * buffers, Connect / Property Get / Set / Disconnect byte for byte, and
 * ("threads") two submitters and a receiver against a target thread.
 *
 * Most cases need no thread: the socketpair buffers what each side
 * writes, so the test plays the target between the library's calls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"
#include "tcp.h"
#include "tcp_peer.h"
#include "testutil.h"

#define MAX_REC 64

struct rec {
	pthread_mutex_t lock;
	int n;
	void *ctx[MAX_REC];
	struct nvq_cqe cqe[MAX_REC];
};

static struct rec rec = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void rec_done(void *arg, void *ctx, const struct nvq_cqe *cqe)
{
	struct rec *r = arg;

	pthread_mutex_lock(&r->lock);
	CHECK(r->n < MAX_REC);
	r->ctx[r->n] = ctx;
	r->cqe[r->n] = *cqe;
	r->n++;
	pthread_mutex_unlock(&r->lock);
}

static void rec_reset(void)
{
	rec.n = 0;
}

static struct nvq_tcp_opts opts(bool hdgst, bool ddgst)
{
	struct nvq_tcp_opts o;

	memset(&o, 0, sizeof(o));
	snprintf(o.subnqn, sizeof(o.subnqn), "nqn.2024-01.io.nvq:test");
	snprintf(o.hostnqn, sizeof(o.hostnqn), "nqn.2024-01.io.nvq:host");
	memset(o.hostid, 0x5a, sizeof(o.hostid));
	o.hostid[0] = 0x11;
	o.hdgst = hdgst;
	o.ddgst = ddgst;
	o.connect_timeout_ms = 5000;
	return o;
}

/* A connection with digests @dg (bit 0 header, bit 1 data) and the
 * target's ICResp @cpda / @maxh. */
static struct nvq_tcp_conn *open_dg(struct tcp_peer *p, uint8_t dg,
				    uint8_t cpda, uint32_t maxh, uint32_t depth)
{
	struct nvq_tcp_opts o = opts(dg & 1, dg & 2);
	struct nvq_tcp_conn *c;
	int fd;

	tcp_peer_pair(p, &fd);
	tcp_peer_icresp(p, dg, cpda, maxh);
	CHECK_OK(nvq_tcp_conn_open_fd(fd, &o, 1, depth, rec_done, &rec, &c));
	CHECK_EQ(tcp_peer_read_icreq(p), dg);
	rec_reset();
	return c;
}

/* Receive until @n completions were recorded in all. */
static void recv_until(struct nvq_tcp_conn *c, int n)
{
	int i;

	for (i = 0; i < 1000 && rec.n < n; i++) {
		int rc = nvq_tcp_conn_recv(c, 1000);

		CHECK(rc >= 0);
	}
	CHECK_EQ(rec.n, n);
}

static uint32_t rd32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The target reads a CapsuleCmd; returns its SQE (and data, if any). */
static struct nvq_sqe read_cmd(struct tcp_peer *p, struct peer_pdu *pdu)
{
	struct nvq_sqe sqe;

	tcp_peer_recv(p, pdu);
	CHECK_EQ(pdu->ch.type, NVQ_TCP_CMD);
	CHECK_EQ(pdu->ch.hlen, 72);
	CHECK(pdu->hdgst_ok);
	CHECK(pdu->ddgst_ok);
	memcpy(&sqe, pdu->hdr + 8, sizeof(sqe));
	CHECK_EQ(sqe.flags & 0xc0, 0x40); /* PSDT 01b */
	return sqe;
}

static struct nvq_sgl_desc sgl_of(const struct nvq_sqe *sqe)
{
	struct nvq_sgl_desc d;

	memcpy(&d, &sqe->prp1, sizeof(d));
	return d;
}

static int expect_error(struct nvq_tcp_conn *c, int err, const char *msg)
{
	int rc = nvq_tcp_conn_recv(c, 2000);

	CHECK_EQ(rc, err);
	CHECK_MSG(msg);
	CHECK_EQ(nvq_tcp_conn_error(c), err);
	return rc;
}

/* The target reads an H2CTermReq with @fes (and @fei for FES 01h). */
static void expect_term(struct tcp_peer *p, uint16_t fes, uint32_t fei,
			uint8_t quoted_type)
{
	struct peer_pdu t;

	tcp_peer_recv(p, &t);
	CHECK_EQ(t.ch.type, NVQ_TCP_H2C_TERM);
	CHECK_EQ(t.ch.hlen, 24);
	CHECK_EQ(t.ch.flags, 0);
	CHECK_EQ(t.hdr[8] | t.hdr[9] << 8, fes);
	if (fes == NVQ_TCP_FES_INVALID_HDR)
		CHECK_EQ(rd32(t.hdr + 10), fei);
	CHECK(t.datal >= 8 && t.datal <= 128);
	CHECK_EQ(t.data[0], quoted_type);
	tcp_peer_pdu_free(&t);
}

static struct nvq_sqe read_sqe(uint16_t cid_junk)
{
	struct nvq_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = 0x02;
	s.nsid = 1;
	s.cid = cid_junk; /* the connection puts its own */
	s.prp1 = 0xdeadbeef; /* and its own SGL */
	return s;
}

static struct nvq_sqe write_sqe(void)
{
	struct nvq_sqe s = read_sqe(0x777);

	s.opcode = 0x01;
	return s;
}

/* ---- ICReq / ICResp ----------------------------------------------- */

static void t_icresp(void)
{
	const struct nvq_tcp_params *pr;
	struct nvq_tcp_conn_stats st;
	struct nvq_tcp_conn *c;
	struct tcp_peer p;
	uint8_t dg;

	for (dg = 0; dg < 4; dg++) {
		c = open_dg(&p, dg, dg, 4096 * (dg + 1), 8);
		pr = nvq_tcp_conn_params(c);
		CHECK_EQ(pr->hdgst, dg & 1);
		CHECK_EQ(pr->ddgst, !!(dg & 2));
		CHECK_EQ(pr->cpda, (dg + 1u) * 4);
		CHECK_EQ(pr->maxh2cdata, 4096 * (dg + 1));
		CHECK_EQ(pr->ioccsz, 0);
		nvq_tcp_conn_get_stats(c, &st);
		CHECK_EQ(st.pdus_sent, 1);
		CHECK_EQ(st.pdus_recv, 1);
		CHECK_EQ(st.bytes_sent, 128);
		CHECK_EQ(st.bytes_recv, 128);
		CHECK_EQ(nvq_tcp_conn_error(c), 0);
		CHECK(nvq_tcp_conn_fd(c) >= 0);
		nvq_tcp_conn_close(c);
		close(p.fd);
	}
}

/* ICReq goes out, @resp (128 bytes, or @len) comes back: open fails
 * with @err and @msg. Returns the peer for more checks. */
static void ic_fails(bool hdgst, const void *resp, size_t len, int err,
		     const char *msg, uint16_t term_fes, uint32_t fei)
{
	struct nvq_tcp_opts o = opts(hdgst, false);
	struct nvq_tcp_conn *c = (void *)1;
	struct tcp_peer p;
	int fd;

	tcp_peer_pair(&p, &fd);
	if (len)
		tcp_peer_write(&p, resp, len);
	if (!resp)
		shutdown(p.fd, SHUT_WR);
	o.connect_timeout_ms = 200;
	CHECK_EQ(nvq_tcp_conn_open_fd(fd, &o, 0, 4, rec_done, &rec, &c), err);
	CHECK(c == NULL);
	CHECK_MSG(msg);
	CHECK_EQ(tcp_peer_read_icreq(&p), hdgst ? 1 : 0);
	if (term_fes)
		expect_term(&p, term_fes, fei, ((const uint8_t *)resp)[0]);
	close(p.fd);
}

static void t_icresp_bad(void)
{
	uint8_t r[128] = { 0 };
	uint32_t v;

	r[0] = NVQ_TCP_ICRESP;
	r[2] = 128;
	r[4] = 128;
	v = 8192;
	memcpy(r + 12, &v, 4);

	/* Asked for a header digest, the target does not do it. */
	ic_fails(true, r, 128, -EPROTO, "does not support", 1, 11);
	/* A digest we did not ask for. */
	r[11] = 2;
	ic_fails(false, r, 128, -EPROTO, "does not support", 1, 11);
	r[11] = 0;
	/* MAXH2CDATA below 4096. */
	v = 1024;
	memcpy(r + 12, &v, 4);
	ic_fails(false, r, 128, -EPROTO, "MAXH2CDATA", 1, 12);
	v = 8192;
	memcpy(r + 12, &v, 4);
	/* PFV 1. */
	r[8] = 1;
	ic_fails(false, r, 128, -EPROTO, "PFV", NVQ_TCP_FES_UNSUPPORTED, 0);
	r[8] = 0;
	/* A CapsuleResp first. */
	r[0] = NVQ_TCP_RSP;
	ic_fails(false, r, 128, -EPROTO, "no ICResp before",
		 NVQ_TCP_FES_PDU_SEQ, 0);
	r[0] = NVQ_TCP_ICRESP;
	/* Nothing: the ICResp does not come within the timeout. */
	ic_fails(false, r, 0, -ETIMEDOUT, "no ICResp in time", 0, 0);
	/* The target closes. */
	ic_fails(false, NULL, 0, -ECONNRESET, "closed the connection", 0, 0);
	/* Half an ICResp, then the timeout. */
	ic_fails(false, r, 60, -ETIMEDOUT, "no ICResp in time", 0, 0);
	/* C2HTermReq instead. */
	{
		uint8_t t[24] = { NVQ_TCP_C2H_TERM,	  0, 24, 0, 24, 0, 0, 0,
				  NVQ_TCP_FES_UNSUPPORTED };

		ic_fails(false, t, 24, -EPROTO, "C2HTermReq: FES 0x6", 0, 0);
	}
}

/* ---- reads -------------------------------------------------------- */

static void t_read(uint8_t dg)
{
	static uint8_t b0[1000], b1[3000], b2[96];
	struct iovec iov[3] = { { b0, sizeof(b0) },
				{ b1, sizeof(b1) },
				{ b2, sizeof(b2) } };
	struct nvq_tcp_data d = { iov, 3, 4096, false };
	uint8_t want[4096], got[4096];
	struct nvq_tcp_conn_stats st;
	struct nvq_sqe sqe = read_sqe(0x4444), w;
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct nvq_sgl_desc sgl;
	struct tcp_peer p;
	int cid, ctx;

	c = open_dg(&p, dg, 0, 8192, 4);
	fill_pattern(want, sizeof(want), 100 + dg);
	memset(b0, 0, sizeof(b0));
	memset(b1, 0, sizeof(b1));
	memset(b2, 0, sizeof(b2));

	cid = nvq_tcp_conn_submit(c, &sqe, &d, &ctx);
	CHECK_EQ(cid, 0);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(pdu.datal, 0);
	CHECK_EQ(pdu.ch.plen, 72 + (dg & 1 ? 4 : 0));
	CHECK_EQ(pdu.ch.pdo, 0);
	CHECK_EQ(w.cid, cid);
	CHECK_EQ(w.opcode, 0x02);
	CHECK_EQ(w.nsid, 1);
	sgl = sgl_of(&w);
	CHECK_EQ(sgl.type, 0x5a);
	CHECK_EQ(sgl.length, 4096);
	CHECK_EQ(sgl.addr, 0);

	/* Three C2HData PDUs cutting across the buffers, then the
	 * response. */
	tcp_peer_send_c2h(&p, (uint16_t)cid, 0, want, 700, 0);
	tcp_peer_send_c2h(&p, (uint16_t)cid, 700, want + 700, 2000, 0);
	CHECK_EQ(nvq_tcp_conn_recv(c, 0), 0);
	tcp_peer_send_c2h(&p, (uint16_t)cid, 2700, want + 2700, 1396,
			  NVQ_TCP_F_DATA_LAST);
	CHECK_EQ(nvq_tcp_conn_recv(c, 0), 0);
	CHECK_EQ(rec.n, 0);
	tcp_peer_send_rsp(&p, (uint16_t)cid, 0, 0x1234, 0);
	recv_until(c, 1);
	CHECK(rec.ctx[0] == &ctx);
	CHECK_EQ(rec.cqe[0].cid, cid);
	CHECK_EQ(rec.cqe[0].status, 0);
	CHECK_EQ(rec.cqe[0].result, 0x1234);
	memcpy(got, b0, sizeof(b0));
	memcpy(got + 1000, b1, sizeof(b1));
	memcpy(got + 4000, b2, sizeof(b2));
	CHECK_MEMEQ(got, want, 4096);
	tcp_peer_pdu_free(&pdu);

	/* Again with SUCCESS: no CapsuleResp, a CQE of status 0. The CID
	 * came back to the free list. */
	fill_pattern(want, sizeof(want), 200 + dg);
	cid = nvq_tcp_conn_submit(c, &sqe, &d, &ctx + 1);
	CHECK_EQ(cid, 0);
	w = read_cmd(&p, &pdu);
	tcp_peer_pdu_free(&pdu);
	tcp_peer_send_c2h(&p, 0, 0, want, 4000, 0);
	tcp_peer_send_c2h(&p, 0, 4000, want + 4000, 96,
			  NVQ_TCP_F_DATA_LAST | NVQ_TCP_F_DATA_SUCCESS);
	recv_until(c, 2);
	CHECK(rec.ctx[1] == &ctx + 1);
	CHECK_EQ(rec.cqe[1].status, 0);
	CHECK_EQ(rec.cqe[1].sq_id, 1);
	CHECK_EQ(rec.cqe[1].cid, 0);
	memcpy(got, b0, sizeof(b0));
	memcpy(got + 1000, b1, sizeof(b1));
	memcpy(got + 4000, b2, sizeof(b2));
	CHECK_MEMEQ(got, want, 4096);

	/* A command without data: CapsuleCmd alone. */
	cid = nvq_tcp_conn_submit(c, &sqe, NULL, NULL);
	CHECK_EQ(cid, 0);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(pdu.datal, 0);
	sgl = sgl_of(&w);
	CHECK_EQ(sgl.length, 0);
	CHECK_EQ(sgl.type, 0x5a);
	tcp_peer_send_rsp(&p, 0, 0x4002, 0, 0);
	recv_until(c, 3);
	CHECK_EQ(rec.cqe[2].status >> 1, 0x4002);

	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.c2h_data, 5);
	CHECK_EQ(st.pdus_sent, 4);
	CHECK_EQ(st.pdus_recv, 1 + 5 + 2);
	CHECK_EQ(st.digest_errors, 0);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/* ---- writes ------------------------------------------------------- */

static void t_write_incapsule(uint8_t dg)
{
	static uint8_t src[4096];
	struct iovec iov[3] = { { src, 100 },
				{ src + 100, 3900 },
				{ src + 4000, 96 } };
	struct nvq_tcp_data d = { iov, 3, 4096, true };
	struct nvq_tcp_conn_stats st;
	struct nvq_sqe sqe = write_sqe(), w;
	struct nvq_tcp_conn *c;
	struct nvq_sgl_desc sgl;
	struct peer_pdu pdu;
	struct tcp_peer p;
	int cid;

	c = open_dg(&p, dg, dg == 3 ? 7 : 0, 8192, 4);
	nvq_tcp_conn_set_ioccsz(c, 8192);
	CHECK_EQ(nvq_tcp_conn_params(c)->ioccsz, 8192);
	fill_pattern(src, sizeof(src), 300 + dg);
	cid = nvq_tcp_conn_submit(c, &sqe, &d, src);
	CHECK_EQ(cid, 0);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(w.opcode, 0x01);
	sgl = sgl_of(&w);
	CHECK_EQ(sgl.type, 0x01);
	CHECK_EQ(sgl.addr, 0);
	CHECK_EQ(sgl.length, 4096);
	CHECK_EQ(pdu.datal, 4096);
	CHECK_MEMEQ(pdu.data, src, 4096);
	/* PDO honours CPDA (dg 3: CPDA 7, 32 bytes: 76 -> 96). */
	CHECK_EQ(pdu.ch.pdo, dg == 3 ? 96 : 72 + (dg & 1 ? 4 : 0));
	CHECK_EQ(!!(pdu.ch.flags & NVQ_TCP_F_DDGST), !!(dg & 2));
	tcp_peer_pdu_free(&pdu);
	tcp_peer_send_rsp(&p, 0, 0, 0, 0);
	recv_until(c, 1);
	CHECK(rec.ctx[0] == src);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.incapsule, 1);
	CHECK_EQ(st.r2t, 0);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/* The target reads H2CData for [@off, @off + @len) of @src in PDUs of
 * 4096 bytes, the last with LAST_PDU. */
static void read_h2c(struct tcp_peer *p, uint16_t cid, uint16_t ttag,
		     const uint8_t *src, uint32_t off, uint32_t len)
{
	uint32_t end = off + len;

	while (off < end) {
		uint32_t l = MIN(end - off, 4096u);
		struct peer_pdu pdu;

		tcp_peer_recv(p, &pdu);
		CHECK_EQ(pdu.ch.type, NVQ_TCP_H2C_DATA);
		CHECK_EQ(pdu.ch.hlen, 24);
		CHECK(pdu.hdgst_ok);
		CHECK(pdu.ddgst_ok);
		CHECK_EQ(pdu.hdr[8] | pdu.hdr[9] << 8, cid);
		CHECK_EQ(pdu.hdr[10] | pdu.hdr[11] << 8, ttag);
		CHECK_EQ(rd32(pdu.hdr + 12), off);
		CHECK_EQ(rd32(pdu.hdr + 16), l);
		CHECK_EQ(pdu.datal, l);
		CHECK_EQ(!!(pdu.ch.flags & NVQ_TCP_F_DATA_LAST),
			 off + l == end);
		CHECK_MEMEQ(pdu.data, src + off, l);
		tcp_peer_pdu_free(&pdu);
		off += l;
	}
}

static void t_write_r2t(uint8_t dg)
{
	static uint8_t src[24576];
	struct iovec iov[3] = { { src, 5000 },
				{ src + 5000, 10000 },
				{ src + 15000, 9576 } };
	struct nvq_tcp_data d = { iov, 3, sizeof(src), true };
	struct nvq_tcp_conn_stats st;
	struct nvq_sqe sqe = write_sqe(), w;
	struct nvq_tcp_conn *c;
	struct nvq_sgl_desc sgl;
	struct peer_pdu pdu;
	struct tcp_peer p;
	int cid, i;

	c = open_dg(&p, dg, 0, 4096, 4);
	/* ioccsz 0 until set: everything by R2T. */
	fill_pattern(src, sizeof(src), 400 + dg);
	cid = nvq_tcp_conn_submit(c, &sqe, &d, src);
	CHECK_EQ(cid, 0);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(pdu.datal, 0);
	sgl = sgl_of(&w);
	CHECK_EQ(sgl.type, 0x5a);
	CHECK_EQ(sgl.length, sizeof(src));
	tcp_peer_pdu_free(&pdu);
	for (i = 0; i < 3; i++) {
		tcp_peer_send_r2t(&p, 0, (uint16_t)(0x100 + i), 8192u * i,
				  8192);
		CHECK_EQ(nvq_tcp_conn_recv(c, 0), 0);
		read_h2c(&p, 0, (uint16_t)(0x100 + i), src, 8192u * i, 8192);
	}
	tcp_peer_send_rsp(&p, 0, 0, 0, 0);
	recv_until(c, 1);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.r2t, 3);
	CHECK_EQ(st.h2c_data, 6);
	CHECK_EQ(st.incapsule, 0);

	/* An R2T of an odd size, not at the start: 4096 + 904. */
	cid = nvq_tcp_conn_submit(c, &sqe, &d, src);
	CHECK_EQ(cid, 0);
	w = read_cmd(&p, &pdu);
	tcp_peer_pdu_free(&pdu);
	tcp_peer_send_r2t(&p, 0, 7, 100, 5000);
	CHECK_EQ(nvq_tcp_conn_recv(c, 0), 0);
	read_h2c(&p, 0, 7, src, 100, 5000);
	tcp_peer_send_rsp(&p, 0, 0, 0, 0);
	recv_until(c, 2);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/* ---- protocol errors ---------------------------------------------- */

static void t_ddgst_error(void)
{
	static uint8_t buf[512];
	struct iovec iov = { buf, sizeof(buf) };
	struct nvq_tcp_data d = { &iov, 1, sizeof(buf), false };
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn_stats st;
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;
	uint8_t data[512], pdub[600];
	size_t n;

	c = open_dg(&p, 3, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, &d, NULL), 0);
	read_cmd(&p, &pdu);
	tcp_peer_pdu_free(&pdu);
	fill_pattern(data, sizeof(data), 5);
	n = tcp_peer_build_c2h(&p, pdub, 0, 0, data, 512, NVQ_TCP_F_DATA_LAST,
			       0);
	pdub[n - 1] ^= 0x40;
	tcp_peer_write(&p, pdub, n);
	expect_error(c, -EPROTO, "bad data digest");
	expect_term(&p, NVQ_TCP_FES_HDGST, 0, NVQ_TCP_C2H_DATA);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.digest_errors, 1);
	/* Sticky: every later call fails the same. */
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, &d, NULL), -EPROTO);
	CHECK_MSG("bad data digest");
	CHECK_EQ(nvq_tcp_conn_recv(c, 0), -EPROTO);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

static void t_hdgst_error(void)
{
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct nvq_cqe cqe = { 0 };
	struct peer_pdu pdu;
	struct tcp_peer p;
	uint8_t b[32];
	size_t n;

	c = open_dg(&p, 1, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), 0);
	read_cmd(&p, &pdu);
	n = tcp_peer_build_rsp(&p, b, &cqe);
	b[n - 2] ^= 1;
	tcp_peer_write(&p, b, n);
	expect_error(c, -EPROTO, "bad header digest");
	expect_term(&p, NVQ_TCP_FES_HDGST, 0, NVQ_TCP_RSP);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

static void t_c2h_term(void)
{
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;
	uint8_t t[40] = { 0 };
	uint32_t v;

	c = open_dg(&p, 0, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), 0);
	read_cmd(&p, &pdu);
	tcp_peer_send_term(&p, NVQ_TCP_FES_PDU_SEQ, 0);
	expect_error(c, -EPROTO, "C2HTermReq: FES 0x2 (PDU sequence error)");
	nvq_tcp_conn_close(c);
	close(p.fd);

	/* With 16 bytes of our header quoted, sent in two pieces. */
	c = open_dg(&p, 1, 0, 8192, 4);
	t[0] = NVQ_TCP_C2H_TERM;
	t[2] = 24;
	v = 40;
	memcpy(t + 4, &v, 4);
	t[8] = NVQ_TCP_FES_INVALID_HDR;
	t[10] = 3;
	tcp_peer_write(&p, t, 30);
	CHECK_EQ(nvq_tcp_conn_recv(c, 0), 0);
	tcp_peer_write(&p, t + 30, 10);
	expect_error(c, -EPROTO, "FES 0x1 (invalid PDU header field), FEI 0x3");
	nvq_tcp_conn_close(c);
	close(p.fd);
}

static void t_close_mid_pdu(void)
{
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct nvq_cqe cqe = { 0 };
	struct peer_pdu pdu;
	struct tcp_peer p;
	uint8_t b[32];

	c = open_dg(&p, 0, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), 0);
	read_cmd(&p, &pdu);
	tcp_peer_build_rsp(&p, b, &cqe);
	tcp_peer_write(&p, b, 10);
	close(p.fd);
	CHECK_EQ(nvq_tcp_conn_recv(c, 2000), -ECONNRESET);
	CHECK_MSG("closed the connection in the middle of a CapsuleResp");
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), -ECONNRESET);
	nvq_tcp_conn_close(c);

	/* Closed between PDUs; a submit that finds the socket closed. */
	c = open_dg(&p, 0, 0, 8192, 4);
	close(p.fd);
	{
		int rc = nvq_tcp_conn_submit(c, &sqe, NULL, NULL);

		CHECK(rc == -EPIPE || rc == -ECONNRESET);
		CHECK_EQ(nvq_tcp_conn_error(c), rc);
	}
	nvq_tcp_conn_close(c);
}

static void t_trickle(void)
{
	static uint8_t buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct nvq_tcp_data d = { &iov, 1, sizeof(buf), false };
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;
	uint8_t data[64], s[200];
	struct nvq_cqe cqe = { .cid = 0, .result = 77 };
	size_t n, i;

	c = open_dg(&p, 3, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, &d, NULL), 0);
	read_cmd(&p, &pdu);
	fill_pattern(data, sizeof(data), 64);
	/* C2HData with padding before its data (PDO 40), then the
	 * response, one byte at a time. */
	n = tcp_peer_build_c2h(&p, s, 0, 0, data, 64, NVQ_TCP_F_DATA_LAST, 40);
	n += tcp_peer_build_rsp(&p, s + n, &cqe);
	for (i = 0; i < n; i++) {
		tcp_peer_write(&p, s + i, 1);
		CHECK_EQ(nvq_tcp_conn_recv(c, 0), i == n - 1 ? 1 : 0);
	}
	CHECK_EQ(rec.n, 1);
	CHECK_EQ(rec.cqe[0].result, 77);
	CHECK_MEMEQ(buf, data, 64);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/* A command outstanding (CID 0, a 512-byte read unless @write), then
 * @bytes from the target: a protocol error with @fes/@fei. */
static void bad_pdu(bool write, const void *bytes, size_t n, const char *msg,
		    uint16_t fes, uint32_t fei, uint8_t type)
{
	static uint8_t buf[512];
	struct iovec iov = { buf, sizeof(buf) };
	struct nvq_tcp_data d = { &iov, 1, sizeof(buf), write };
	struct nvq_sqe sqe = write ? write_sqe() : read_sqe(0);
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;

	c = open_dg(&p, 0, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, &d, NULL), 0);
	read_cmd(&p, &pdu);
	tcp_peer_pdu_free(&pdu);
	tcp_peer_write(&p, bytes, n);
	expect_error(c, -EPROTO, msg);
	expect_term(&p, fes, fei, type);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

static void t_bad_cids_and_ranges(void)
{
	struct tcp_peer q = { .maxh2cdata = 8192 }; /* no digests */
	struct nvq_cqe cqe = { 0 };
	uint8_t b[1200], data[1024] = { 0 };
	size_t n;

	/* CapsuleResp for CID 5 (depth 4), for CID 1 (not outstanding). */
	cqe.cid = 5;
	n = tcp_peer_build_rsp(&q, b, &cqe);
	bad_pdu(false, b, n, "command 5, which is not outstanding", 1, 20,
		NVQ_TCP_RSP);
	cqe.cid = 1;
	n = tcp_peer_build_rsp(&q, b, &cqe);
	bad_pdu(false, b, n, "command 1, which is not outstanding", 1, 20,
		NVQ_TCP_RSP);
	/* C2HData and R2T for a CID not outstanding: CCCID at 8. */
	n = tcp_peer_build_c2h(&q, b, 3, 0, data, 16, 0, 0);
	bad_pdu(false, b, n, "C2HData for command 3", 1, 8, NVQ_TCP_C2H_DATA);
	n = tcp_peer_build_r2t(&q, b, 2, 0, 0, 16);
	bad_pdu(true, b, n, "R2T for command 2", 1, 8, NVQ_TCP_R2T);

	/* DATAO out of range: 256 + 512 of a 512-byte read; data out of
	 * order (the first PDU at 16); one byte too many. */
	n = tcp_peer_build_c2h(&q, b, 0, 256, data, 512, 0, 0);
	bad_pdu(false, b, n, "bytes 256..768 of command 0", 4, 0,
		NVQ_TCP_C2H_DATA);
	n = tcp_peer_build_c2h(&q, b, 0, 16, data, 16, 0, 0);
	bad_pdu(false, b, n, "had 0 so far", 4, 0, NVQ_TCP_C2H_DATA);
	n = tcp_peer_build_c2h(&q, b, 0, 0, data, 513, 0, 0);
	bad_pdu(false, b, n, "bytes 0..513", 4, 0, NVQ_TCP_C2H_DATA);
	/* SUCCESS before all the data came. */
	n = tcp_peer_build_c2h(&q, b, 0, 0, data, 256,
			       NVQ_TCP_F_DATA_LAST | NVQ_TCP_F_DATA_SUCCESS, 0);
	bad_pdu(false, b, n, "SUCCESS for command 0 after 256 of its 512", 2, 0,
		NVQ_TCP_C2H_DATA);
	/* More C2HData after the one with LAST_PDU. */
	n = tcp_peer_build_c2h(&q, b, 0, 0, data, 256, NVQ_TCP_F_DATA_LAST, 0);
	n += tcp_peer_build_c2h(&q, b + n, 0, 256, data, 256, 0, 0);
	bad_pdu(false, b, n, "after its LAST_PDU", 2, 0, NVQ_TCP_C2H_DATA);
	/* C2HData for a write, R2T for a read. */
	n = tcp_peer_build_c2h(&q, b, 0, 0, data, 16, 0, 0);
	bad_pdu(true, b, n, "reads no data", 2, 0, NVQ_TCP_C2H_DATA);
	n = tcp_peer_build_r2t(&q, b, 0, 0, 0, 16);
	bad_pdu(false, b, n, "no data to send", 2, 0, NVQ_TCP_R2T);
	/* R2T beyond the command, a second R2T before the first is
	 * served (both in one go, so that the receive pass sees both). */
	n = tcp_peer_build_r2t(&q, b, 0, 0, 500, 13);
	bad_pdu(true, b, n, "bytes 500..513 of command 0", 4, 0, NVQ_TCP_R2T);
	n = tcp_peer_build_r2t(&q, b, 0, 0, 0, 16);
	n += tcp_peer_build_r2t(&q, b + n, 0, 1, 16, 16);
	bad_pdu(true, b, n, "second R2T", NVQ_TCP_FES_LIMIT, 0, NVQ_TCP_R2T);
	/* A second ICResp; a host's PDU type; an unknown type. */
	memset(b, 0, 128);
	b[0] = NVQ_TCP_ICRESP;
	b[2] = 128;
	b[4] = 128;
	bad_pdu(false, b, 128, "second ICResp", 2, 0, NVQ_TCP_ICRESP);
	b[0] = NVQ_TCP_H2C_DATA;
	b[2] = 24;
	b[4] = 24;
	bad_pdu(false, b, 24, "a type only a host sends", 1, 0,
		NVQ_TCP_H2C_DATA);
	b[0] = 0x0c;
	bad_pdu(false, b, 24, "type 0xc", 1, 0, 0x0c);
}

/* ---- sync, depth, drain ------------------------------------------- */

static void t_sync_timeout(void)
{
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct nvq_cqe cqe;
	struct peer_pdu pdu;
	struct tcp_peer p;

	c = open_dg(&p, 0, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_sync(c, &sqe, NULL, &cqe, 100), -ETIMEDOUT);
	CHECK_MSG("no answer in 100 ms");
	CHECK_EQ(nvq_tcp_conn_error(c), -ETIMEDOUT);
	read_cmd(&p, &pdu);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), -ETIMEDOUT);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

static int drained;

static void drain_fn(void *arg, void *ctx)
{
	CHECK(arg == &drained);
	CHECK(ctx == (void *)(uintptr_t)(0x100 + drained));
	drained++;
}

static void t_busy_and_drain(void)
{
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;

	c = open_dg(&p, 0, 0, 8192, 2);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, (void *)0x100), 0);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, (void *)0x101), 1);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), -EBUSY);
	CHECK_MSG("2 commands outstanding");
	read_cmd(&p, &pdu);
	read_cmd(&p, &pdu);
	tcp_peer_send_rsp(&p, 1, 0, 0, 0);
	recv_until(c, 1);
	CHECK(rec.ctx[0] == (void *)0x101);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, (void *)0x101), 1);
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), -EBUSY);

	/* Killed: both outstanding come back through drain, in CID order. */
	nvq_tcp_conn_kill(c, -ETIMEDOUT, "keep-alive timed out");
	CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, NULL, NULL), -ETIMEDOUT);
	CHECK_MSG("keep-alive timed out");
	nvq_tcp_conn_drain(c, drain_fn, &drained);
	CHECK_EQ(drained, 2);
	nvq_tcp_conn_close(c);
	close(p.fd);

	/* Bad arguments. */
	{
		struct nvq_tcp_opts o = opts(false, false);
		struct iovec iov[2] = { { &p, 8 }, { &p, 8 } };
		struct nvq_tcp_data d = { iov, 2, 17, false };
		int fd;

		tcp_peer_pair(&p, &fd);
		CHECK_EQ(nvq_tcp_conn_open_fd(fd, &o, 1, 0, rec_done, &rec, &c),
			 -EINVAL);
		close(p.fd);
		c = open_dg(&p, 0, 0, 8192, 2);
		CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, &d, NULL), -EINVAL);
		d.iovcnt = NVQ_TCP_MAX_IOV + 1;
		CHECK_EQ(nvq_tcp_conn_submit(c, &sqe, &d, NULL), -EINVAL);
		CHECK_EQ(nvq_tcp_conn_error(c), 0);
		nvq_tcp_conn_close(c);
		close(p.fd);
	}
}

/* ---- batched sends, buffered receive ------------------------------ */

/* Nothing readable on the target's end yet. */
static bool peer_empty(struct tcp_peer *p)
{
	uint8_t b;

	return recv(p->fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) < 0 &&
	       (errno == EAGAIN || errno == EWOULDBLOCK);
}

static void t_batch(uint8_t dg)
{
	static uint8_t wbuf[512], rbuf[40][64];
	struct iovec wiov[2] = { { wbuf, 200 }, { wbuf + 200, 312 } };
	struct nvq_tcp_data wd = { wiov, 2, sizeof(wbuf), true };
	struct iovec riov[40];
	struct nvq_tcp_data rd[40];
	struct nvq_sqe rs = read_sqe(0x1111), ws = write_sqe(), w;
	struct nvq_tcp_conn_stats st0, st;
	static uint8_t blob[40 * 32];
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;
	size_t bl = 0;
	int i;

	c = open_dg(&p, dg, 0, 8192, 40);
	nvq_tcp_conn_set_ioccsz(c, 8192);
	fill_pattern(wbuf, sizeof(wbuf), 500 + dg);
	for (i = 0; i < 40; i++) {
		riov[i].iov_base = rbuf[i];
		riov[i].iov_len = sizeof(rbuf[i]);
		rd[i] = (struct nvq_tcp_data){ &riov[i], 1, sizeof(rbuf[i]),
					       false };
	}
	nvq_tcp_conn_get_stats(c, &st0);

	/* Three capsules wait (one with in-capsule data in two buffers),
	 * then go out in one sendmsg(). */
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, NULL, NULL, true), 0);
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &ws, &wd, wbuf, true), 1);
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, &rd[0], rbuf, true), 2);
	CHECK(peer_empty(&p));
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.send_calls, st0.send_calls);
	CHECK_EQ(st.pdus_sent, st0.pdus_sent);
	CHECK_EQ(nvq_tcp_conn_flush(c), 0);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.send_calls, st0.send_calls + 1);
	CHECK_EQ(st.pdus_sent, st0.pdus_sent + 3);
	CHECK_EQ(st.incapsule, 1);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(w.cid, 0);
	CHECK_EQ(pdu.datal, 0);
	tcp_peer_pdu_free(&pdu);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(w.cid, 1);
	CHECK_EQ(w.opcode, 0x01);
	CHECK_EQ(sgl_of(&w).type, 0x01);
	CHECK_EQ(pdu.datal, sizeof(wbuf));
	CHECK_MEMEQ(pdu.data, wbuf, sizeof(wbuf));
	tcp_peer_pdu_free(&pdu);
	w = read_cmd(&p, &pdu);
	CHECK_EQ(w.cid, 2);
	CHECK_EQ(sgl_of(&w).length, sizeof(rbuf[0]));
	tcp_peer_pdu_free(&pdu);
	CHECK(peer_empty(&p));
	/* A flush with nothing waiting sends nothing. */
	CHECK_EQ(nvq_tcp_conn_flush(c), 0);
	nvq_tcp_conn_get_stats(c, &st0);
	CHECK_EQ(st0.send_calls, st.send_calls);

	/* A submit without @more takes the waiting one along. */
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, NULL, NULL, true), 3);
	CHECK_EQ(nvq_tcp_conn_submit(c, &rs, NULL, NULL), 4);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.send_calls, st0.send_calls + 1);
	for (i = 3; i < 5; i++) {
		w = read_cmd(&p, &pdu);
		CHECK_EQ(w.cid, i);
		tcp_peer_pdu_free(&pdu);
	}

	/* The responses to all five arrive together: one recv() (short:
	 * the socket is empty then, no second call to hear EAGAIN). */
	for (i = 0; i < 5; i++) {
		struct nvq_cqe cqe = { .cid = (uint16_t)(4 - i) };

		bl += tcp_peer_build_rsp(&p, blob + bl, &cqe);
	}
	tcp_peer_write(&p, blob, bl);
	nvq_tcp_conn_get_stats(c, &st0);
	CHECK_EQ(nvq_tcp_conn_recv(c, 0), 5);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.recv_calls, st0.recv_calls + 1);
	CHECK_EQ(st.pdus_recv, st0.pdus_recv + 5);
	CHECK_EQ(rec.n, 5);
	CHECK(rec.ctx[3] == wbuf);
	CHECK(rec.ctx[2] == rbuf);

	/* 40 at once: the batch holds 32, the 33rd sends those. */
	rec_reset();
	nvq_tcp_conn_get_stats(c, &st0);
	for (i = 0; i < 40; i++)
		CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, &rd[i], rbuf[i],
						   true),
			 i);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.send_calls, st0.send_calls + 1);
	CHECK_EQ(st.pdus_sent, st0.pdus_sent + 32);
	CHECK_EQ(nvq_tcp_conn_flush(c), 0);
	nvq_tcp_conn_get_stats(c, &st);
	CHECK_EQ(st.send_calls, st0.send_calls + 2);
	CHECK_EQ(st.pdus_sent, st0.pdus_sent + 40);
	for (i = 0; i < 40; i++) {
		w = read_cmd(&p, &pdu);
		CHECK_EQ(w.cid, i);
		tcp_peer_pdu_free(&pdu);
	}
	/* Data and SUCCESS for all 40, in one write. */
	{
		static uint8_t big[40 * (32 + 64 + 8)], want[40][64];

		bl = 0;
		for (i = 0; i < 40; i++) {
			fill_pattern(want[i], 64, 600 + i);
			bl += tcp_peer_build_c2h(
				&p, big + bl, (uint16_t)i, 0, want[i], 64,
				NVQ_TCP_F_DATA_LAST | NVQ_TCP_F_DATA_SUCCESS,
				0);
		}
		CHECK(bl <= sizeof(big));
		tcp_peer_write(&p, big, bl);
		nvq_tcp_conn_get_stats(c, &st0);
		CHECK_EQ(nvq_tcp_conn_recv(c, 0), 40);
		nvq_tcp_conn_get_stats(c, &st);
		CHECK_EQ(st.recv_calls, st0.recv_calls + 1);
		for (i = 0; i < 40; i++)
			CHECK_MEMEQ(rbuf[i], want[i], 64);
	}

	nvq_tcp_conn_close(c);
	close(p.fd);

	/* Waiting capsules of a connection that breaks: the flush fails,
	 * and they are outstanding, for drain. */
	c = open_dg(&p, dg, 0, 8192, 4);
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, NULL, (void *)0x100, true),
		 0);
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, NULL, (void *)0x101, true),
		 1);
	nvq_tcp_conn_kill(c, -ETIMEDOUT, "keep-alive timed out");
	CHECK_EQ(nvq_tcp_conn_flush(c), -ETIMEDOUT);
	{
		uint8_t x;

		/* Shut down with not a byte of them sent. */
		CHECK_EQ(recv(p.fd, &x, 1, MSG_DONTWAIT), 0);
	}
	drained = 0;
	nvq_tcp_conn_drain(c, drain_fn, &drained);
	CHECK_EQ(drained, 2);
	drained = 0;
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/*
 * Large and small C2HData, responses and a C2HData with SUCCESS written
 * at once: the large payload's first part is copied from the receive
 * buffer, the rest goes straight into the command's buffers with what
 * follows in the receive buffer; digests over both.
 */
static void t_recv_buffered(uint8_t dg)
{
	static uint8_t a0[30000], a1[50000], a2[20000], b[4096];
	static uint8_t want[100000], wb[4096], blob[110000];
	struct iovec aiov[3] = { { a0, sizeof(a0) },
				 { a1, sizeof(a1) },
				 { a2, sizeof(a2) } };
	struct iovec biov = { b, sizeof(b) };
	struct nvq_tcp_data ad = { aiov, 3, sizeof(want), false };
	struct nvq_tcp_data bd = { &biov, 1, sizeof(b), false };
	struct nvq_sqe rs = read_sqe(0);
	struct nvq_tcp_conn_stats st0, st;
	struct nvq_tcp_conn *c;
	struct peer_pdu pdu;
	struct tcp_peer p;
	size_t bl = 0;
	struct nvq_cqe cqe = { .cid = 2, .result = 0x77 };
	int i;

	c = open_dg(&p, dg, 0, 8192, 4);
	fill_pattern(want, sizeof(want), 700 + dg);
	fill_pattern(wb, sizeof(wb), 800 + dg);
	memset(a0, 0, sizeof(a0));
	memset(a1, 0, sizeof(a1));
	memset(a2, 0, sizeof(a2));
	memset(b, 0, sizeof(b));
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, &ad, a0, true), 0);
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, &bd, b, true), 1);
	CHECK_EQ(nvq_tcp_conn_submit_batch(c, &rs, NULL, NULL, false), 2);
	for (i = 0; i < 3; i++) {
		read_cmd(&p, &pdu);
		tcp_peer_pdu_free(&pdu);
	}
	bl += tcp_peer_build_c2h(&p, blob + bl, 0, 0, want, 1000, 0, 0);
	bl += tcp_peer_build_c2h(&p, blob + bl, 0, 1000, want + 1000, 99000,
				 NVQ_TCP_F_DATA_LAST, 0);
	bl += tcp_peer_build_c2h(&p, blob + bl, 1, 0, wb, sizeof(wb),
				 NVQ_TCP_F_DATA_LAST | NVQ_TCP_F_DATA_SUCCESS,
				 0);
	bl += tcp_peer_build_rsp(&p, blob + bl, &cqe);
	cqe.cid = 0;
	cqe.result = 0x55;
	bl += tcp_peer_build_rsp(&p, blob + bl, &cqe);
	CHECK(bl <= sizeof(blob));
	tcp_peer_write(&p, blob, bl);
	nvq_tcp_conn_get_stats(c, &st0);
	recv_until(c, 3);
	nvq_tcp_conn_get_stats(c, &st);
	/* 64 KiB into the buffer, then the rest of the payload direct with
	 * the rest of the stream in the buffer (a short read: done). */
	CHECK_EQ(st.recv_calls - st0.recv_calls, 2);
	CHECK_EQ(st.bytes_recv - st0.bytes_recv, bl);
	CHECK_EQ(st.digest_errors, 0);
	CHECK(rec.ctx[0] == b);
	CHECK(rec.ctx[1] == NULL);
	CHECK_EQ(rec.cqe[1].result, 0x77);
	CHECK(rec.ctx[2] == a0);
	CHECK_EQ(rec.cqe[2].result, 0x55);
	CHECK_MEMEQ(a0, want, sizeof(a0));
	CHECK_MEMEQ(a1, want + sizeof(a0), sizeof(a1));
	CHECK_MEMEQ(a2, want + sizeof(a0) + sizeof(a1), sizeof(a2));
	CHECK_MEMEQ(b, wb, sizeof(b));
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/* ---- fabrics ------------------------------------------------------ */

struct fab_script {
	struct tcp_peer *p;
	int step;
};

/* The target side of t_fabrics, in its own thread (conn_sync waits). */
static void *fab_target(void *arg)
{
	struct fab_script *s = arg;
	struct tcp_peer *p = s->p;
	struct nvq_fabrics_cmd f;
	struct nvq_connect_data cd;
	struct nvq_sgl_desc sgl;
	struct peer_pdu pdu;
	struct nvq_sqe w;

	/* 1: Connect of the admin queue. */
	w = read_cmd(p, &pdu);
	memcpy(&f, &w, sizeof(f));
	CHECK_EQ(f.opcode, 0x7f);
	CHECK_EQ(f.flags, 0x40);
	CHECK_EQ(f.fctype, 0x01);
	CHECK_EQ(f.connect.recfmt, 0);
	CHECK_EQ(f.connect.qid, 0);
	CHECK_EQ(f.connect.sqsize, 31);
	CHECK_EQ(f.connect.cattr, 0);
	CHECK_EQ(f.connect.kato, 15000);
	sgl = sgl_of(&w);
	CHECK_EQ(sgl.type, 0x01);
	CHECK_EQ(sgl.length, 1024);
	CHECK_EQ(sgl.addr, 0);
	CHECK_EQ(pdu.datal, 1024);
	memcpy(&cd, pdu.data, sizeof(cd));
	CHECK_EQ(cd.hostid[0], 0x11);
	CHECK_EQ(cd.hostid[15], 0x5a);
	CHECK_EQ(cd.cntlid, 0xffff);
	CHECK_STREQ(cd.subnqn, "nqn.2024-01.io.nvq:test");
	CHECK_STREQ(cd.hostnqn, "nqn.2024-01.io.nvq:host");
	CHECK_EQ(cd.subnqn[255], 0);
	tcp_peer_pdu_free(&pdu);
	tcp_peer_send_rsp(p, w.cid, 0, 0x21, 0);

	/* 2: Property Get CAP (8 bytes). */
	w = read_cmd(p, &pdu);
	memcpy(&f, &w, sizeof(f));
	CHECK_EQ(f.fctype, 0x04);
	CHECK_EQ(f.prop.attrib, 1);
	CHECK_EQ(f.prop.offset, 0);
	CHECK_EQ(pdu.datal, 0);
	tcp_peer_send_rsp(p, w.cid, 0, 0x0f0103ff, 0x20);
	/* 3: Property Get VS (4 bytes). */
	w = read_cmd(p, &pdu);
	memcpy(&f, &w, sizeof(f));
	CHECK_EQ(f.prop.attrib, 0);
	CHECK_EQ(f.prop.offset, 8);
	tcp_peer_send_rsp(p, w.cid, 0, 0x10300, 0xffffffff);
	/* 4: Property Set CC. */
	w = read_cmd(p, &pdu);
	memcpy(&f, &w, sizeof(f));
	CHECK_EQ(f.fctype, 0x00);
	CHECK_EQ(f.prop.attrib, 0);
	CHECK_EQ(f.prop.offset, 0x14);
	CHECK_EQ(f.prop.value, 0x460001);
	tcp_peer_send_rsp(p, w.cid, 0, 0, 0);
	/* 5: Property Get refused: Invalid Field. */
	w = read_cmd(p, &pdu);
	tcp_peer_send_rsp(p, w.cid, 0x0002, 0, 0);
	/* 6: Disconnect. */
	w = read_cmd(p, &pdu);
	memcpy(&f, &w, sizeof(f));
	CHECK_EQ(f.fctype, 0x08);
	CHECK_EQ(f.disconnect.recfmt, 0);
	tcp_peer_send_rsp(p, w.cid, 0, 0, 0);
	return NULL;
}

/* A target that refuses Connect with @sf and @dw0. */
struct refuse {
	struct tcp_peer *p;
	uint16_t sf;
	uint32_t dw0;
	uint16_t qid, sqsize, cntlid;
};

static void *refuse_target(void *arg)
{
	struct refuse *r = arg;
	struct nvq_fabrics_cmd f;
	struct nvq_connect_data cd;
	struct peer_pdu pdu;
	struct nvq_sqe w;

	w = read_cmd(r->p, &pdu);
	memcpy(&f, &w, sizeof(f));
	CHECK_EQ(f.connect.qid, r->qid);
	CHECK_EQ(f.connect.sqsize, r->sqsize);
	CHECK_EQ(f.connect.kato, 0);
	CHECK_EQ(pdu.datal, 1024);
	memcpy(&cd, pdu.data, sizeof(cd));
	CHECK_EQ(cd.cntlid, r->cntlid);
	tcp_peer_pdu_free(&pdu);
	tcp_peer_send_rsp(r->p, w.cid, r->sf, r->dw0, 0);
	return NULL;
}

static void refused(uint16_t sf, uint32_t dw0, const char *msg)
{
	struct nvq_tcp_opts o = opts(false, false);
	struct refuse r = {
		.sf = sf, .dw0 = dw0, .qid = 2, .sqsize = 127, .cntlid = 0x21
	};
	struct nvq_tcp_conn *c;
	struct tcp_peer p;
	pthread_t t;
	uint16_t st = 0, cntlid = 0;

	c = open_dg(&p, 0, 0, 8192, 4);
	r.p = &p;
	CHECK_OK(pthread_create(&t, NULL, refuse_target, &r));
	CHECK_EQ(nvq_tcp_connect(c, &o, 2, 128, 0x21, 5000, &cntlid, &st),
		 -EIO);
	CHECK_MSG(msg);
	CHECK_EQ(st, sf);
	CHECK_OK(pthread_join(t, NULL));
	/* An I/O queue's Connect went in the capsule: 1024 bytes. */
	CHECK_EQ(nvq_tcp_conn_params(c)->ioccsz, 1024);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

static void t_fabrics(void)
{
	struct nvq_tcp_opts o = opts(false, false);
	struct fab_script s;
	struct nvq_tcp_conn *c;
	struct tcp_peer p;
	pthread_t t;
	uint16_t cntlid = 0, st = 1;
	uint64_t v;

	c = open_dg(&p, 0, 0, 8192, 4);
	s.p = &p;
	CHECK_OK(pthread_create(&t, NULL, fab_target, &s));
	CHECK_OK(nvq_tcp_connect(c, &o, 0, 32, 0xffff, 15000, &cntlid, &st));
	CHECK_EQ(cntlid, 0x21);
	CHECK_EQ(st, 0);
	CHECK_EQ(nvq_tcp_conn_params(c)->ioccsz, 8192);
	CHECK_OK(nvq_tcp_prop_get(c, 0, 8, &v, &st, 2000));
	CHECK_EQ(v, 0x200f0103ffull);
	CHECK_OK(nvq_tcp_prop_get(c, 8, 4, &v, &st, 2000));
	CHECK_EQ(v, 0x10300);
	CHECK_OK(nvq_tcp_prop_set(c, 0x14, 4, 0x460001, &st, 2000));
	CHECK_EQ(nvq_tcp_prop_get(c, 0x1c, 4, &v, &st, 2000), -EIO);
	CHECK_EQ(st, 0x0002);
	CHECK_MSG("Property Get of 0x1c failed");
	CHECK_OK(nvq_tcp_disconnect(c, 2000));
	CHECK_OK(pthread_join(t, NULL));
	/* The done callback saw none of these. */
	CHECK_EQ(rec.n, 0);
	CHECK_EQ(nvq_tcp_prop_get(c, 0, 3, &v, &st, 2000), -EINVAL);
	CHECK_EQ(nvq_tcp_prop_set(c, 0, 4, 1ull << 32, &st, 2000), -EINVAL);
	nvq_tcp_conn_close(c);
	close(p.fd);

	refused(0x182, 0x10100, "invalid parameter SUBNQN (data offset 256)");
	refused(0x182, 0x0002a, "invalid parameter QID (command offset 42)");
	refused(0x182, 0x0002c, "invalid parameter SQSIZE");
	refused(0x184, 0, "host nqn.2024-01.io.nvq:host is not allowed");
	refused(0x181, 0, "controller busy");
	refused(0x4002, 0, "status 0x4002");
}

/* ---- a real TCP connection (nvq_tcp_conn_open) -------------------- */

struct lsn {
	int fd;
	uint8_t icreq_digest;
};

/* Accept one connection, answer its ICReq, then one command. */
static void *lsn_target(void *arg)
{
	struct lsn *l = arg;
	struct peer_pdu pdu;
	struct tcp_peer p;
	struct nvq_sqe w;

	memset(&p, 0, sizeof(p));
	p.timeout_ms = 10000;
	p.fd = accept(l->fd, NULL, NULL);
	CHECK(p.fd >= 0);
	l->icreq_digest = tcp_peer_read_icreq(&p);
	tcp_peer_icresp(&p, l->icreq_digest, 0, 65536);
	w = read_cmd(&p, &pdu);
	tcp_peer_send_rsp(&p, w.cid, 0, 0xabc, 0);
	/* Until the host closes. */
	while (tcp_peer_read_some(&p, pdu.hdr, sizeof(pdu.hdr)))
		;
	close(p.fd);
	return NULL;
}

/* A listening socket on @addr (AF_INET or AF_INET6 loopback); its port
 * in @port. -1 when the family is not available here. */
static int listen_on(int family, char *port, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (void *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		sl = sizeof(*in6);
	}
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (void *)&ss, sl) || listen(fd, 4)) {
		close(fd);
		return -1;
	}
	sl = sizeof(ss);
	CHECK_OK(getsockname(fd, (void *)&ss, &sl));
	snprintf(port, len, "%u",
		 ntohs(family == AF_INET ?
			       ((struct sockaddr_in *)&ss)->sin_port :
			       ((struct sockaddr_in6 *)&ss)->sin6_port));
	return fd;
}

static void tcp_open_one(const char *host, int family)
{
	struct nvq_tcp_opts o = opts(true, true);
	struct nvq_sqe sqe = read_sqe(0);
	struct nvq_tcp_conn *c;
	struct nvq_cqe cqe;
	struct lsn l;
	pthread_t t;
	int one = 0;
	socklen_t sl = sizeof(one);

	l.fd = listen_on(family, o.port, sizeof(o.port));
	if (l.fd < 0) {
		printf("tcp open: no %s loopback here, not tried\n", host);
		return;
	}
	snprintf(o.host, sizeof(o.host), "%s", host);
	CHECK_OK(pthread_create(&t, NULL, lsn_target, &l));
	CHECK_OK(nvq_tcp_conn_open(&o, 0, 4, rec_done, &rec, &c));
	CHECK_OK(getsockopt(nvq_tcp_conn_fd(c), IPPROTO_TCP, TCP_NODELAY, &one,
			    &sl));
	CHECK(one);
	CHECK_EQ(nvq_tcp_conn_params(c)->maxh2cdata, 65536);
	CHECK(nvq_tcp_conn_params(c)->hdgst && nvq_tcp_conn_params(c)->ddgst);
	CHECK_OK(nvq_tcp_conn_sync(c, &sqe, NULL, &cqe, 5000));
	CHECK_EQ(cqe.result, 0xabc);
	nvq_tcp_conn_close(c);
	CHECK_OK(pthread_join(t, NULL));
	CHECK_EQ(l.icreq_digest, 3);
	close(l.fd);
}

static void t_tcp_open(void)
{
	struct nvq_tcp_opts o = opts(false, false);
	struct nvq_tcp_conn *c = NULL;
	int fd;

	tcp_open_one("127.0.0.1", AF_INET);
	tcp_open_one("localhost", AF_INET);
	tcp_open_one("[::1]", AF_INET6);

	/* Nobody listens on a port just closed: refused, and said so. */
	fd = listen_on(AF_INET, o.port, sizeof(o.port));
	CHECK(fd >= 0);
	close(fd);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	CHECK_EQ(nvq_tcp_conn_open(&o, 3, 4, rec_done, &rec, &c),
		 -ECONNREFUSED);
	CHECK(c == NULL);
	CHECK_MSG("tcp queue 3: cannot connect to 127.0.0.1:");
	CHECK_MSG("refused");

	/* A service name that does not resolve (no DNS asked: the host
	 * is numeric). */
	snprintf(o.port, sizeof(o.port), "nosuchservice");
	CHECK(nvq_tcp_conn_open(&o, 3, 4, rec_done, &rec, &c) < 0);
	CHECK(c == NULL);
	CHECK_MSG("cannot resolve 127.0.0.1 port nosuchservice");
}

/* ---- a sender whose socket is full -------------------------------- */

#define FS_CMDS 64
#define FS_LEN 65536

/* The target: for each read, 64 KiB of C2HData written before it reads
 * on; for each write, its response. It never reads while it writes, so
 * a host that only sent would wait for it forever. */
static void *fs_target(void *arg)
{
	struct tcp_peer *p = arg;
	uint8_t *data = malloc(FS_LEN);
	int i;

	CHECK(data);
	for (i = 0; i < FS_CMDS; i++) {
		struct peer_pdu pdu;
		struct nvq_sqe w = read_cmd(p, &pdu);

		if (w.opcode == 0x02) {
			fill_pattern(data, FS_LEN, w.cdw10);
			tcp_peer_send_c2h(p, w.cid, 0, data, FS_LEN,
					  NVQ_TCP_F_DATA_LAST |
						  NVQ_TCP_F_DATA_SUCCESS);
		} else {
			CHECK_EQ(pdu.datal, FS_LEN);
			fill_pattern(data, FS_LEN, w.cdw10);
			CHECK_MEMEQ(pdu.data, data, FS_LEN);
			tcp_peer_send_rsp(p, w.cid, 0, 0, 0);
		}
		tcp_peer_pdu_free(&pdu);
	}
	free(data);
	return NULL;
}

static void t_full_socket(void)
{
	struct nvq_tcp_opts o = opts(false, true);
	uint8_t *bufs = malloc((size_t)FS_CMDS * FS_LEN), *want;
	struct iovec iov[FS_CMDS];
	struct nvq_tcp_data d[FS_CMDS];
	struct nvq_tcp_conn *c;
	struct tcp_peer p;
	pthread_t t;
	int fd, sz = 8192, i, rc;

	CHECK(bufs);
	tcp_peer_pair(&p, &fd);
	CHECK_OK(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)));
	CHECK_OK(setsockopt(p.fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)));
	tcp_peer_icresp(&p, 2, 0, 4096);
	CHECK_OK(nvq_tcp_conn_open_fd(fd, &o, 1, 8, rec_done, &rec, &c));
	CHECK_EQ(tcp_peer_read_icreq(&p), 2);
	nvq_tcp_conn_set_ioccsz(c, FS_LEN);
	rec_reset();
	CHECK_OK(pthread_create(&t, NULL, fs_target, &p));
	/* One thread, no receiver: only submit, and receive on -EBUSY. */
	for (i = 0; i < FS_CMDS; i++) {
		struct nvq_sqe sqe;

		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = i & 1 ? 0x01 : 0x02;
		sqe.cdw10 = 1000 + (uint32_t)i;
		iov[i].iov_base = bufs + (size_t)i * FS_LEN;
		iov[i].iov_len = FS_LEN;
		if (i & 1)
			fill_pattern(iov[i].iov_base, FS_LEN, sqe.cdw10);
		d[i] = (struct nvq_tcp_data){ &iov[i], 1, FS_LEN, i & 1 };
		while ((rc = nvq_tcp_conn_submit(c, &sqe, &d[i],
						 (void *)(uintptr_t)i)) ==
		       -EBUSY)
			CHECK(nvq_tcp_conn_recv(c, 100) >= 0);
		CHECK(rc >= 0);
	}
	while (rec.n < FS_CMDS)
		CHECK(nvq_tcp_conn_recv(c, 1000) >= 0);
	CHECK_OK(pthread_join(t, NULL));
	want = malloc(FS_LEN);
	CHECK(want);
	for (i = 0; i < FS_CMDS; i += 2) {
		fill_pattern(want, FS_LEN, 1000 + (uint32_t)i);
		CHECK_MEMEQ(bufs + (size_t)i * FS_LEN, want, FS_LEN);
	}
	CHECK_EQ(rec.n, FS_CMDS);
	free(want);
	free(bufs);
	nvq_tcp_conn_close(c);
	close(p.fd);
}

/* ---- conn_sync beside a receiver thread, callbacks that resubmit --- */

#define SC_SYNC 50
#define SC_CHAIN 100

static struct nvq_tcp_conn *sconn;
static int schain_left, schain_done, sstop;

/* The target: every command answered with its CDW10 in DW0. */
static void *echo_target(void *arg)
{
	struct tcp_peer *p = arg;
	int i;

	for (i = 0; i < SC_SYNC + SC_CHAIN; i++) {
		struct peer_pdu pdu;
		struct nvq_sqe w = read_cmd(p, &pdu);

		tcp_peer_send_rsp(p, w.cid, 0, w.cdw10, 0);
	}
	return NULL;
}

/* A chained command finished: send the next one from the callback. */
static void chain_done(void *arg, void *ctx, const struct nvq_cqe *cqe)
{
	struct nvq_sqe sqe;
	int left;

	(void)arg;
	CHECK_EQ(cqe->result, 0x10000 + (uint32_t)(uintptr_t)ctx);
	__atomic_add_fetch(&schain_done, 1, __ATOMIC_RELAXED);
	left = __atomic_sub_fetch(&schain_left, 1, __ATOMIC_RELAXED);
	if (left < 0)
		return;
	memset(&sqe, 0, sizeof(sqe));
	sqe.cdw10 = 0x10000 + (uint32_t)left;
	CHECK(nvq_tcp_conn_submit(sconn, &sqe, NULL, (void *)(uintptr_t)left) >=
	      0);
}

static void *sync_receiver(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&sstop, __ATOMIC_ACQUIRE))
		CHECK(nvq_tcp_conn_recv(sconn, 20) >= 0);
	return NULL;
}

static void t_sync_concurrent(void)
{
	struct nvq_tcp_opts o = opts(true, false);
	pthread_t tgt, rcv;
	struct nvq_sqe sqe;
	struct nvq_cqe cqe;
	struct tcp_peer p;
	int fd, i;

	tcp_peer_pair(&p, &fd);
	tcp_peer_icresp(&p, 1, 0, 4096);
	CHECK_OK(nvq_tcp_conn_open_fd(fd, &o, 0, 4, chain_done, NULL, &sconn));
	CHECK_EQ(tcp_peer_read_icreq(&p), 1);
	sstop = 0;
	schain_done = 0;
	schain_left = SC_CHAIN - 1;
	CHECK_OK(pthread_create(&tgt, NULL, echo_target, &p));
	CHECK_OK(pthread_create(&rcv, NULL, sync_receiver, NULL));
	memset(&sqe, 0, sizeof(sqe));
	sqe.cdw10 = 0x10000 + SC_CHAIN - 1;
	CHECK(nvq_tcp_conn_submit(sconn, &sqe, NULL,
				  (void *)(uintptr_t)(SC_CHAIN - 1)) >= 0);
	for (i = 0; i < SC_SYNC; i++) {
		sqe.cdw10 = (uint32_t)i;
		CHECK_OK(nvq_tcp_conn_sync(sconn, &sqe, NULL, &cqe, 10000));
		CHECK_EQ(cqe.result, i);
	}
	while (__atomic_load_n(&schain_done, __ATOMIC_RELAXED) < SC_CHAIN) {
		CHECK_OK(nvq_tcp_conn_error(sconn));
		sched_yield();
	}
	__atomic_store_n(&sstop, 1, __ATOMIC_RELEASE);
	CHECK_OK(pthread_join(rcv, NULL));
	CHECK_OK(pthread_join(tgt, NULL));
	CHECK_EQ(schain_done, SC_CHAIN);
	nvq_tcp_conn_close(sconn);
	close(p.fd);
}

/* ---- two submitters, a receiver, a target thread ------------------ */

#define T_DEPTH 16
#define T_PER_THREAD 300
#define T_INFLIGHT 6

struct tcmd {
	int done;
	int kind; /* 0 read, 1 write in the capsule, 2 write by R2T */
	uint32_t tag;
	uint8_t buf[12288];
	struct iovec iov[2];
	struct nvq_tcp_data d;
};

static struct nvq_tcp_conn *tconn;
static int tstop;
static int tbad;

static uint32_t kind_len(int kind)
{
	return kind == 0 ? 4096 : kind == 1 ? 2048 : 12288;
}

static void t_done(void *arg, void *ctx, const struct nvq_cqe *cqe)
{
	struct tcmd *t = ctx;
	uint8_t want[4096];

	(void)arg;
	if (cqe->status >> 1)
		__atomic_store_n(&tbad, 1, __ATOMIC_RELAXED);
	if (t->kind == 0) {
		fill_pattern(want, sizeof(want), t->tag);
		if (memcmp(want, t->buf, sizeof(want)))
			__atomic_store_n(&tbad, 2, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
}

static void *submitter(void *arg)
{
	int id = (int)(uintptr_t)arg, i;
	struct tcmd *cmds = calloc(T_INFLIGHT, sizeof(*cmds));

	CHECK(cmds);
	for (i = 0; i < T_INFLIGHT; i++)
		cmds[i].done = 1;
	for (i = 0; i < T_PER_THREAD; i++) {
		struct tcmd *t = &cmds[i % T_INFLIGHT];
		struct nvq_sqe sqe;
		uint32_t len;
		int rc;

		while (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE))
			CHECK(nvq_tcp_conn_recv(tconn, 10) >= 0);
		t->done = 0;
		t->kind = i % 3;
		t->tag = (uint32_t)(id << 16 | i);
		len = kind_len(t->kind);
		if (t->kind)
			fill_pattern(t->buf, len, t->tag);
		else
			memset(t->buf, 0, len);
		t->iov[0].iov_base = t->buf;
		t->iov[0].iov_len = 1000;
		t->iov[1].iov_base = t->buf + 1000;
		t->iov[1].iov_len = len - 1000;
		t->d.iov = t->iov;
		t->d.iovcnt = 2;
		t->d.len = len;
		t->d.write = t->kind != 0;
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = t->kind ? 0x01 : 0x02;
		sqe.cdw10 = t->tag;
		for (;;) {
			rc = nvq_tcp_conn_submit(tconn, &sqe, &t->d, t);
			if (rc != -EBUSY)
				break;
			CHECK(nvq_tcp_conn_recv(tconn, 5) >= 0);
		}
		CHECK(rc >= 0 && rc < T_DEPTH);
	}
	for (i = 0; i < T_INFLIGHT; i++)
		while (!__atomic_load_n(&cmds[i].done, __ATOMIC_ACQUIRE))
			CHECK(nvq_tcp_conn_recv(tconn, 10) >= 0);
	free(cmds);
	return NULL;
}

static void *receiver(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&tstop, __ATOMIC_ACQUIRE))
		CHECK(nvq_tcp_conn_recv(tconn, 20) >= 0);
	return NULL;
}

struct tgt_cmd {
	uint32_t tag, len, got;
	uint8_t *buf;
};

/* The target: answers 2 * T_PER_THREAD commands. */
static void *target(void *arg)
{
	struct tcp_peer *p = arg;
	struct tgt_cmd st[T_DEPTH];
	uint8_t data[4096];
	int answered = 0, n = 0;

	memset(st, 0, sizeof(st));
	while (answered < 2 * T_PER_THREAD) {
		struct peer_pdu pdu;
		struct nvq_sqe sqe;
		struct tgt_cmd *t;
		uint16_t cid;

		tcp_peer_recv(p, &pdu);
		CHECK(pdu.hdgst_ok && pdu.ddgst_ok);
		if (pdu.ch.type == NVQ_TCP_CMD) {
			memcpy(&sqe, pdu.hdr + 8, sizeof(sqe));
			cid = sqe.cid;
			CHECK(cid < T_DEPTH);
			t = &st[cid];
			CHECK(!t->buf && !t->len);
			t->tag = sqe.cdw10;
			if (sqe.opcode == 0x02) {
				fill_pattern(data, sizeof(data), t->tag);
				/* Alternately SUCCESS and a response. */
				if (n++ & 1) {
					tcp_peer_send_c2h(
						p, cid, 0, data, 4096,
						NVQ_TCP_F_DATA_LAST |
							NVQ_TCP_F_DATA_SUCCESS);
				} else {
					tcp_peer_send_c2h(p, cid, 0, data, 1500,
							  0);
					tcp_peer_send_c2h(p, cid, 1500,
							  data + 1500, 2596,
							  NVQ_TCP_F_DATA_LAST);
					tcp_peer_send_rsp(p, cid, 0, 0, 0);
				}
				answered++;
			} else if (pdu.datal) {
				uint8_t want[2048];

				CHECK_EQ(pdu.datal, 2048);
				fill_pattern(want, sizeof(want), t->tag);
				CHECK_MEMEQ(pdu.data, want, 2048);
				tcp_peer_send_rsp(p, cid, 0, 0, 0);
				answered++;
			} else {
				t->len = 12288;
				t->buf = malloc(t->len);
				CHECK(t->buf);
				tcp_peer_send_r2t(p, cid, cid, 0, 8192);
			}
		} else {
			CHECK_EQ(pdu.ch.type, NVQ_TCP_H2C_DATA);
			cid = (uint16_t)(pdu.hdr[8] | pdu.hdr[9] << 8);
			CHECK(cid < T_DEPTH);
			t = &st[cid];
			CHECK(t->buf);
			CHECK_EQ(rd32(pdu.hdr + 12), t->got);
			CHECK(t->got + pdu.datal <= t->len);
			memcpy(t->buf + t->got, pdu.data, pdu.datal);
			t->got += pdu.datal;
			if (t->got == 8192 &&
			    (pdu.ch.flags & NVQ_TCP_F_DATA_LAST)) {
				tcp_peer_send_r2t(p, cid, cid, 8192, 4096);
			} else if (t->got == t->len) {
				uint8_t *want = malloc(t->len);

				CHECK(want);
				fill_pattern(want, t->len, t->tag);
				CHECK_MEMEQ(t->buf, want, t->len);
				free(want);
				free(t->buf);
				memset(t, 0, sizeof(*t));
				tcp_peer_send_rsp(p, cid, 0, 0, 0);
				answered++;
			}
		}
		tcp_peer_pdu_free(&pdu);
	}
	return NULL;
}

static void t_threads(uint8_t dg)
{
	struct nvq_tcp_opts o = opts(dg & 1, dg & 2);
	struct nvq_tcp_conn_stats stats;
	pthread_t sub[2], rcv, tgt;
	struct tcp_peer p;
	int fd, sz = 16384, i;

	tcp_peer_pair(&p, &fd);
	/* Small socket buffers: senders find them full and must receive
	 * meanwhile. */
	CHECK_OK(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)));
	CHECK_OK(setsockopt(p.fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)));
	tcp_peer_icresp(&p, dg, 0, 4096);
	CHECK_OK(
		nvq_tcp_conn_open_fd(fd, &o, 1, T_DEPTH, t_done, NULL, &tconn));
	CHECK_EQ(tcp_peer_read_icreq(&p), dg);
	nvq_tcp_conn_set_ioccsz(tconn, 4096);
	tstop = 0;
	CHECK_OK(pthread_create(&tgt, NULL, target, &p));
	CHECK_OK(pthread_create(&rcv, NULL, receiver, NULL));
	for (i = 0; i < 2; i++)
		CHECK_OK(pthread_create(&sub[i], NULL, submitter,
					(void *)(uintptr_t)(i + 1)));
	for (i = 0; i < 2; i++)
		CHECK_OK(pthread_join(sub[i], NULL));
	__atomic_store_n(&tstop, 1, __ATOMIC_RELEASE);
	CHECK_OK(pthread_join(rcv, NULL));
	CHECK_OK(pthread_join(tgt, NULL));
	CHECK_EQ(tbad, 0);
	CHECK_EQ(nvq_tcp_conn_error(tconn), 0);
	nvq_tcp_conn_get_stats(tconn, &stats);
	CHECK_EQ(stats.r2t, 2 * T_PER_THREAD / 3 * 2);
	CHECK_EQ(stats.h2c_data, 2 * T_PER_THREAD / 3 * 3);
	CHECK_EQ(stats.incapsule, 2 * T_PER_THREAD / 3);
	nvq_tcp_conn_close(tconn);
	close(p.fd);
}

int main(int argc, char **argv)
{
	uint8_t dg;

	if (argc > 1 && !strcmp(argv[1], "threads")) {
		t_full_socket();
		t_sync_concurrent();
		t_threads(0);
		t_threads(3);
		printf("tcp-conn threads: ok\n");
		return 0;
	}
	t_icresp();
	t_icresp_bad();
	for (dg = 0; dg < 4; dg++) {
		t_read(dg);
		t_write_incapsule(dg);
		t_write_r2t(dg);
		t_batch(dg);
		t_recv_buffered(dg);
	}
	t_ddgst_error();
	t_hdgst_error();
	t_c2h_term();
	t_close_mid_pdu();
	t_trickle();
	t_bad_cids_and_ranges();
	t_sync_timeout();
	t_busy_and_drain();
	t_fabrics();
	t_tcp_open();
	t_full_socket();
	t_sync_concurrent();
	t_threads(0);
	t_threads(3);
	printf("tcp-conn: ok\n");
	return 0;
}
