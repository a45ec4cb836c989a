// SPDX-License-Identifier: MIT
/* A scripted NVMe/TCP target for tests (tcp_peer.h). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "tcp_peer.h"

uint32_t peer_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int k;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

void tcp_peer_pair(struct tcp_peer *p, int *host)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	p->fd = sv[1];
	p->timeout_ms = 10000;
	*host = sv[0];
}

static void wait_fd(struct tcp_peer *p, short ev)
{
	struct pollfd pfd = { .fd = p->fd, .events = ev };
	int rc = poll(&pfd, 1, p->timeout_ms);

	if (rc == 0) {
		fprintf(stderr, "tcp_peer: nothing from the host in %d ms\n",
			p->timeout_ms);
		check_exit_fail();
	}
}

void tcp_peer_read(struct tcp_peer *p, void *buf, size_t len)
{
	uint8_t *b = buf;

	while (len) {
		ssize_t n;

		wait_fd(p, POLLIN);
		n = recv(p->fd, b, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			fprintf(stderr,
				"tcp_peer: read: %s with %zu bytes to go\n",
				n ? strerror(errno) : "EOF", len);
			check_exit_fail();
		}
		b += n;
		len -= (size_t)n;
	}
}

size_t tcp_peer_read_some(struct tcp_peer *p, void *buf, size_t len)
{
	for (;;) {
		ssize_t n;

		wait_fd(p, POLLIN);
		n = recv(p->fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0 && errno == ECONNRESET)
			return 0;
		CHECK(n >= 0);
		return (size_t)n;
	}
}

void tcp_peer_write(struct tcp_peer *p, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	while (len) {
		ssize_t n;

		wait_fd(p, POLLOUT);
		n = send(p->fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			fprintf(stderr, "tcp_peer: write: %s\n",
				strerror(errno));
			check_exit_fail();
		}
		b += n;
		len -= (size_t)n;
	}
}

static void put32(void *b, uint32_t v)
{
	memcpy(b, &v, 4);
}

static uint32_t get32(const void *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

void tcp_peer_icresp(struct tcp_peer *p, uint8_t digest, uint8_t cpda,
		     uint32_t maxh2cdata)
{
	uint8_t b[128] = { 0 };

	b[0] = NVQ_TCP_ICRESP;
	b[2] = 128;
	put32(b + 4, 128);
	/* PFV 0 at 8 */
	b[10] = cpda;
	b[11] = digest;
	put32(b + 12, maxh2cdata);
	p->hdgst = digest & 1;
	p->ddgst = digest & 2;
	p->cpda = cpda;
	p->maxh2cdata = maxh2cdata;
	tcp_peer_write(p, b, sizeof(b));
}

uint8_t tcp_peer_read_icreq(struct tcp_peer *p)
{
	uint8_t b[128];

	tcp_peer_read(p, b, sizeof(b));
	CHECK_EQ(b[0], NVQ_TCP_ICREQ);
	CHECK_EQ(b[1], 0);
	CHECK_EQ(b[2], 128);
	CHECK_EQ(b[3], 0);
	CHECK_EQ(get32(b + 4), 128);
	CHECK_EQ(b[8] | b[9] << 8, 0); /* PFV */
	CHECK_EQ(b[10], 0); /* HPDA */
	CHECK_EQ(get32(b + 12), 0); /* MAXR2T */
	return b[11];
}

void tcp_peer_recv(struct tcp_peer *p, struct peer_pdu *pdu)
{
	uint32_t hd = 0, pos, plen;
	uint8_t type;

	memset(pdu, 0, sizeof(*pdu));
	tcp_peer_read(p, pdu->hdr, 8);
	memcpy(&pdu->ch, pdu->hdr, 8);
	type = pdu->ch.type;
	plen = pdu->ch.plen;
	CHECK(pdu->ch.hlen >= 8 && pdu->ch.hlen <= 128);
	if (type != NVQ_TCP_ICREQ && type != NVQ_TCP_H2C_TERM && p->hdgst) {
		CHECK(pdu->ch.flags & NVQ_TCP_F_HDGST);
		hd = 4;
	}
	pos = pdu->ch.hlen + hd;
	if (pdu->ch.pdo && type != NVQ_TCP_H2C_TERM) {
		CHECK(pdu->ch.pdo >= pos);
		pos = pdu->ch.pdo;
	}
	CHECK(plen >= pos);
	tcp_peer_read(p, pdu->hdr + 8, pos - 8);
	pdu->hdgst_ok = !hd || get32(pdu->hdr + pdu->ch.hlen) ==
				       peer_crc32c(0, pdu->hdr, pdu->ch.hlen);
	pdu->ddgst_ok = true;
	if (plen > pos) {
		uint32_t dd = (pdu->ch.flags & NVQ_TCP_F_DDGST) ? 4 : 0;
		uint8_t d[4];

		CHECK(plen >= pos + dd);
		pdu->datal = plen - pos - dd;
		pdu->data = malloc(pdu->datal ? pdu->datal : 1);
		CHECK(pdu->data);
		tcp_peer_read(p, pdu->data, pdu->datal);
		if (dd) {
			tcp_peer_read(p, d, 4);
			pdu->ddgst_ok = get32(d) ==
					peer_crc32c(0, pdu->data, pdu->datal);
		}
	}
}

void tcp_peer_pdu_free(struct peer_pdu *pdu)
{
	free(pdu->data);
	pdu->data = NULL;
}

/* The common header and, once the specific header is in, its digest. */
static size_t hdr_digest(struct tcp_peer *p, uint8_t *b, uint8_t hlen)
{
	if (!p->hdgst)
		return hlen;
	b[1] |= NVQ_TCP_F_HDGST;
	put32(b + hlen, peer_crc32c(0, b, hlen));
	return hlen + 4u;
}

size_t tcp_peer_build_rsp(struct tcp_peer *p, void *buf,
			  const struct nvq_cqe *cqe)
{
	uint8_t *b = buf;

	memset(b, 0, 28);
	b[0] = NVQ_TCP_RSP;
	b[2] = 24;
	put32(b + 4, 24 + (p->hdgst ? 4 : 0));
	memcpy(b + 8, cqe, 16);
	if (p->hdgst)
		b[1] |= NVQ_TCP_F_HDGST;
	return hdr_digest(p, b, 24);
}

void tcp_peer_send_rsp(struct tcp_peer *p, uint16_t cid, uint16_t sf,
		       uint32_t dw0, uint32_t dw1)
{
	struct nvq_cqe cqe = { .result = dw0, .dw1 = dw1, .cid = cid };
	uint8_t b[32];

	cqe.status = (uint16_t)(sf << 1);
	tcp_peer_write(p, b, tcp_peer_build_rsp(p, b, &cqe));
}

size_t tcp_peer_build_c2h(struct tcp_peer *p, void *buf, uint16_t cid,
			  uint32_t datao, const void *data, uint32_t len,
			  uint8_t flags, uint8_t pdo)
{
	uint8_t *b = buf;
	uint32_t off = 24 + (p->hdgst ? 4 : 0);

	if (pdo)
		off = pdo;
	memset(b, 0, off);
	b[0] = NVQ_TCP_C2H_DATA;
	b[1] = flags | (p->hdgst ? NVQ_TCP_F_HDGST : 0) |
	       (p->ddgst ? NVQ_TCP_F_DDGST : 0);
	b[2] = 24;
	b[3] = (uint8_t)off;
	put32(b + 4, off + len + (p->ddgst ? 4 : 0));
	memcpy(b + 8, &cid, 2);
	put32(b + 12, datao);
	put32(b + 16, len);
	hdr_digest(p, b, 24);
	memcpy(b + off, data, len);
	if (p->ddgst) {
		put32(b + off + len, peer_crc32c(0, data, len));
		return off + len + 4;
	}
	return off + len;
}

void tcp_peer_send_c2h(struct tcp_peer *p, uint16_t cid, uint32_t datao,
		       const void *data, uint32_t len, uint8_t flags)
{
	uint8_t *b = malloc(len + 64);
	size_t n;

	CHECK(b);
	n = tcp_peer_build_c2h(p, b, cid, datao, data, len, flags, 0);
	tcp_peer_write(p, b, n);
	free(b);
}

size_t tcp_peer_build_r2t(struct tcp_peer *p, void *buf, uint16_t cid,
			  uint16_t ttag, uint32_t r2to, uint32_t r2tl)
{
	uint8_t *b = buf;

	memset(b, 0, 28);
	b[0] = NVQ_TCP_R2T;
	b[2] = 24;
	put32(b + 4, 24 + (p->hdgst ? 4 : 0));
	memcpy(b + 8, &cid, 2);
	memcpy(b + 10, &ttag, 2);
	put32(b + 12, r2to);
	put32(b + 16, r2tl);
	return hdr_digest(p, b, 24);
}

void tcp_peer_send_r2t(struct tcp_peer *p, uint16_t cid, uint16_t ttag,
		       uint32_t r2to, uint32_t r2tl)
{
	uint8_t b[32];

	tcp_peer_write(p, b, tcp_peer_build_r2t(p, b, cid, ttag, r2to, r2tl));
}

void tcp_peer_send_term(struct tcp_peer *p, uint16_t fes, uint32_t fei)
{
	uint8_t b[24] = { 0 };

	b[0] = NVQ_TCP_C2H_TERM;
	b[2] = 24;
	put32(b + 4, 24);
	memcpy(b + 8, &fes, 2);
	put32(b + 10, fei);
	tcp_peer_write(p, b, sizeof(b));
}
