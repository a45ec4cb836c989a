/* SPDX-License-Identifier: MIT */
/*
 * A scripted NVMe/TCP target for tests: the target's end of a socket
 * (a socketpair, or an accepted TCP connection), and blocking helpers
 * that read the host's PDUs and write the target's, byte exact. Its
 * CRC32C and PDU layouts are its own (not lib/tcp's), so that a test
 * checks the library against an independent reading of the spec.
 *
 * Every helper fails the test (check.h) on a broken socket or a read
 * that does not finish within the peer's timeout.
 */
#ifndef NVQ_TESTS_TCP_PEER_H
#define NVQ_TESTS_TCP_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvq/spec.h"

struct tcp_peer {
	int fd; /* the target's end */
	bool hdgst, ddgst; /* in effect after ICResp */
	uint32_t cpda; /* the CPDA field sent (0's based dwords) */
	uint32_t maxh2cdata;
	int timeout_ms; /* for each blocking read: 10000 */
};

/* A host PDU as read. */
struct peer_pdu {
	uint8_t hdr[256]; /* header, digest, padding up to PDO */
	struct nvq_tcp_hdr ch; /* its common header */
	uint8_t *data; /* malloc'd, datal bytes (NULL if none) */
	uint32_t datal;
	bool hdgst_ok, ddgst_ok; /* digests present and right (or absent) */
};

/* Reference CRC32C, bit by bit. */
uint32_t peer_crc32c(uint32_t crc, const void *buf, size_t len);

/* A connected AF_UNIX stream pair: @host for the library, the peer's
 * end in @p (hdgst/ddgst off, timeout 10 s). */
void tcp_peer_pair(struct tcp_peer *p, int *host);

/* Send an ICResp: @digest as DGST, @cpda, @maxh2cdata. Sets p->hdgst/
 * ddgst from @digest. Can go before the host's ICReq is read. */
void tcp_peer_icresp(struct tcp_peer *p, uint8_t digest, uint8_t cpda,
		     uint32_t maxh2cdata);
/* Read the ICReq and check its fixed fields (PFV 0, HPDA 0, MAXR2T 0,
 * HLEN/PLEN 128); returns its DGST byte. */
uint8_t tcp_peer_read_icreq(struct tcp_peer *p);

/* Exactly @len bytes. */
void tcp_peer_read(struct tcp_peer *p, void *buf, size_t len);
void tcp_peer_write(struct tcp_peer *p, const void *buf, size_t len);
/* 0 once the host closed its end (EOF) with nothing more, else the next
 * byte count available (reads and drops up to @len bytes into @buf). */
size_t tcp_peer_read_some(struct tcp_peer *p, void *buf, size_t len);

/* Read one host PDU (header, padding, data, digests checked into
 * hdgst_ok/ddgst_ok); free pdu->data with tcp_peer_pdu_free(). */
void tcp_peer_recv(struct tcp_peer *p, struct peer_pdu *pdu);
void tcp_peer_pdu_free(struct peer_pdu *pdu);

/* Build (into @buf, returns length) or send the target's PDUs. The
 * builders let a test cut a PDU or change bytes before sending. */
size_t tcp_peer_build_rsp(struct tcp_peer *p, void *buf,
			  const struct nvq_cqe *cqe);
void tcp_peer_send_rsp(struct tcp_peer *p, uint16_t cid, uint16_t sf,
		       uint32_t dw0, uint32_t dw1);
/* C2HData of @len bytes of @data at @datao; @flags adds LAST/SUCCESS.
 * @pdo 0: right after the header (and digest). */
size_t tcp_peer_build_c2h(struct tcp_peer *p, void *buf, uint16_t cid,
			  uint32_t datao, const void *data, uint32_t len,
			  uint8_t flags, uint8_t pdo);
void tcp_peer_send_c2h(struct tcp_peer *p, uint16_t cid, uint32_t datao,
		       const void *data, uint32_t len, uint8_t flags);
size_t tcp_peer_build_r2t(struct tcp_peer *p, void *buf, uint16_t cid,
			  uint16_t ttag, uint32_t r2to, uint32_t r2tl);
void tcp_peer_send_r2t(struct tcp_peer *p, uint16_t cid, uint16_t ttag,
		       uint32_t r2to, uint32_t r2tl);
void tcp_peer_send_term(struct tcp_peer *p, uint16_t fes, uint32_t fei);

#endif /* NVQ_TESTS_TCP_PEER_H */
