/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP PDUs: building the host's PDUs and checking the target's
 * headers. Internal to pdu.c, conn.c and the tests and fuzz target that
 * drive the checker without a socket.
 */
#ifndef NVQ_TCP_PDU_H
#define NVQ_TCP_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvq/spec.h"
#include "tcp.h"

/* Table CRC32C, the fallback of nvq_crc32c() (exposed to test both). */
uint32_t nvq_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* The SSE4.2 one, or the table where the CPU lacks the instruction. */
uint32_t nvq_crc32c_hw(uint32_t crc, const void *buf, size_t len);
/* Whether nvq_crc32c() uses the crc32 instruction. */
bool nvq_crc32c_hw_available(void);

/* The largest header region of a target PDU: PDO is 8 bits. */
#define NVQ_TCP_RX_HDR_MAX 256

/* PDU Data Offset the host uses for @hlen with @p's digest and CPDA. */
uint8_t nvq_tcp_h2c_pdo(const struct nvq_tcp_params *p, uint8_t hlen);

/* ICReq asking for @hdgst/@ddgst: PFV 0, HPDA 0, MAXR2T 0. */
void nvq_tcp_build_icreq(struct nvq_tcp_icreq *r, bool hdgst, bool ddgst);

/*
 * CapsuleCmd for @sqe (copied as is: the caller has set CID and SGL1)
 * with @incap bytes of in-capsule data, into @buf (NVQ_TCP_RX_HDR_MAX
 * bytes). Returns the header region's length (header, digest, padding
 * up to PDO): the data and its digest follow it on the wire.
 */
size_t nvq_tcp_build_cmd(void *buf, const struct nvq_tcp_params *p,
			 const struct nvq_sqe *sqe, uint32_t incap);

/* H2CData header for @datal bytes at @datao of command @cccid, into @buf;
 * returns the header region's length as above. */
size_t nvq_tcp_build_h2c_data(void *buf, const struct nvq_tcp_params *p,
			      uint16_t cccid, uint16_t ttag, uint32_t datao,
			      uint32_t datal, bool last);

/*
 * H2CTermReq with @fes and @fei (the byte offset of the bad field, for
 * FES 01h) quoting up to 128 bytes of the bad PDU's header (@bad,
 * @badlen) into @buf (NVQ_TCP_TERM_MAX_PLEN bytes). Returns its length.
 */
size_t nvq_tcp_build_h2c_term(void *buf, uint16_t fes, uint32_t fei,
			      const void *bad, size_t badlen);

/* What the checks learnt of a target PDU. */
struct nvq_tcp_rx_info {
	uint8_t type;
	uint32_t hdr_len; /* bytes up to the data: max(hlen + digest, pdo) */
	uint32_t data_len; /* bytes of data (TermReq: the quoted header) */
	bool ddgst; /* a data digest follows the data */
	/* On an error: what the H2CTermReq says. FES 0: send none. */
	uint16_t fes;
	uint32_t fei;
};

/*
 * Check the 8-byte common header @h of a PDU from the target: a type the
 * target may send in this state (@ic: before ICResp only ICResp and
 * C2HTermReq), its HLEN, the digest flags negotiated in @p (none before
 * ICResp), the data flags, PDO and PLEN. Fills @info. 0 or -EPROTO with
 * a message and @info->fes/fei set.
 */
int nvq_tcp_check_ch(const struct nvq_tcp_hdr *h,
		     const struct nvq_tcp_params *p, bool ic,
		     struct nvq_tcp_rx_info *info);

/*
 * Check the whole header (@info->hdr_len bytes at @hdr, of which the
 * common header passed nvq_tcp_check_ch()): its digest, and the fields
 * of the PDU specific header that do not depend on the commands (DATAL
 * against PLEN, R2TL not 0, ICResp's PFV, MAXH2CDATA, CPDA). 0 or
 * -EPROTO as above.
 */
int nvq_tcp_check_psh(const void *hdr, const struct nvq_tcp_params *p,
		      struct nvq_tcp_rx_info *info);

/* The name of a PDU type, for messages. */
const char *nvq_tcp_pdu_name(uint8_t type);
/* The meaning of a TermReq's FES, for messages. */
const char *nvq_tcp_fes_name(uint16_t fes);

#endif /* NVQ_TCP_PDU_H */
