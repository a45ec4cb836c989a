/* SPDX-License-Identifier: MIT */
/*
 * Raw test harness for the emulated controller: drives it through the
 * transport ops only (registers, doorbells, DMA map, eventfds), building
 * every SQE by hand, so the tests see exactly what a driver would.
 * Checks are tests/common/check.h's, plus CHECK_ST for NVMe statuses.
 */
#ifndef NVQ_TESTS_EMU_HARNESS_H
#define NVQ_TESTS_EMU_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "nvq/spec.h"
#include "testutil.h"
#include "transport.h"

/* Expect an NVMe status (as returned by h_cmd) of SCT @sct, SC @sc. */
#define CHECK_ST(st, sct, sc)                                                  \
	do {                                                                   \
		unsigned int _s = (st);                                        \
		if (NVQ_SCT(_s) != (sct) || NVQ_SC(_s) != (sc))                \
			check_failed(__FILE__, __LINE__, "status of " #st,     \
				     "SCT %u SC 0x%02x, expected SCT %u "      \
				     "SC 0x%02x",                              \
				     NVQ_SCT(_s), NVQ_SC(_s),                  \
				     (unsigned int)(sct), (unsigned int)(sc)); \
	} while (0)

/* Expect success: SCT 0, SC 0 (other status bits, such as DNR, ignored). */
#define CHECK_ST_OK(st) CHECK_ST(st, 0, 0)

/* Commands never legitimately take this long; fail instead of hanging. */
#define H_TIMEOUT_MS 20000

struct hq {
	uint16_t qid;
	uint32_t size;
	struct nvq_sqe *sq;
	struct nvq_cqe *cq;
	uint64_t sq_iova, cq_iova;
	uint16_t sq_tail, cq_head, phase;
	uint16_t next_cid;
	bool shadow; /* use shadow doorbells (after Doorbell Buffer Config) */
	uint32_t *sdb_sq, *sdb_cq, *ei_sq, *ei_cq;
};

struct h {
	struct nvq_transport *t;
	const struct nvq_transport_ops *ops;
	uint64_t cap;
	uint32_t dstrd;
	struct hq aq;
	struct hq ioq[8]; /* [qid] */
	uint8_t *arena;
	uint64_t arena_iova;
	size_t arena_len, arena_used;
	uint64_t mmio_db_writes;
	uint64_t shadow_updates;
	/* Doorbell Buffer Config pages */
	uint32_t *dbbuf, *ei;
	uint64_t dbbuf_iova, ei_iova;
};

/* Open the device with @params, map a DMA arena; exits on failure. */
struct h *h_open(const char *params);
/* Same, but return NULL (and keep nvq_errmsg) when the open fails. */
struct h *h_try_open(const char *params);
void h_close(struct h *h);

/* Configure the admin queue (@aq_size entries) and set CC to @cc
 * (EN included by the caller); returns CSTS once RDY or CFS shows. */
uint32_t h_enable_cc(struct h *h, uint32_t aq_size, uint32_t cc);
/* Standard enable: 4 KiB pages, 64/16-byte entries, 32-entry admin queue. */
void h_enable(struct h *h);
/* CC.EN = 0 and wait for RDY = 0. */
void h_disable(struct h *h);
uint32_t h_cc_default(void);
/* Wait until CSTS & @mask == @want; returns CSTS, exits on timeout. */
uint32_t h_wait_csts(struct h *h, uint32_t mask, uint32_t want);

/* Page-aligned, zeroed DMA memory from the arena. */
void *h_alloc(struct h *h, size_t len, uint64_t *iova);
/* Device address of arena memory @p. */
uint64_t h_iova(struct h *h, const void *p);

/* Put @sqe (cid assigned when @sqe->cid == 0xffff) in @q without ringing. */
uint16_t h_push(struct h *h, struct hq *q, struct nvq_sqe *sqe);
/* Ring @q's SQ tail doorbell (MMIO, or shadow + EventIdx rule). */
void h_ring(struct h *h, struct hq *q);
/* Take the next CQE of @q; 0, or -1 after @timeout_ms. */
int h_reap(struct h *h, struct hq *q, struct nvq_cqe *cqe, int timeout_ms);
/* Peek: is a new CQE visible in @q? */
bool h_cqe_ready(struct hq *q);
/* Ring @q's CQ head doorbell with the current head. */
void h_ring_cq(struct h *h, struct hq *q);
/* Take the next CQE without ringing the CQ head doorbell. */
int h_reap_noring(struct hq *q, struct nvq_cqe *cqe, int timeout_ms);

/* Submit one command and wait for it; returns the status field
 * (SC 7:0, SCT 10:8, ...), *@cqe (may be NULL) gets the CQE. */
uint16_t h_cmd(struct h *h, struct hq *q, struct nvq_sqe *sqe,
	       struct nvq_cqe *cqe);
uint16_t h_admin(struct h *h, struct nvq_sqe *sqe, struct nvq_cqe *cqe);

/* A zeroed SQE with @opcode, cid 0xffff (auto). */
struct nvq_sqe h_sqe(uint8_t opcode);

/* Number of Queues, Create CQ/SQ pair @qid (@ien, vector @iv). */
uint16_t h_set_nr_queues(struct h *h, uint16_t nsq, uint16_t ncq,
			 uint32_t *dw0);
uint16_t h_create_cq(struct h *h, uint16_t qid, uint32_t size, bool ien,
		     uint16_t iv);
uint16_t h_create_sq(struct h *h, uint16_t qid, uint32_t size, uint16_t cqid);
/* Create CQ + SQ @qid of @size entries; exits on failure. */
struct hq *h_ioq(struct h *h, uint16_t qid, uint32_t size, bool ien,
		 uint16_t iv);

/* Read / write @nlb blocks at @slba of @nsid through @q with a buffer
 * in the arena (PRPs built by the harness); returns the status. */
uint16_t h_rw(struct h *h, struct hq *q, uint8_t opcode, uint32_t nsid,
	      uint64_t slba, uint32_t nlb, void *buf, size_t len);
/* Fill prp1/prp2 of @sqe for [@buf, +@len) in the arena (lists from the
 * arena). */
void h_prp(struct h *h, struct nvq_sqe *sqe, void *buf, size_t len);

/* Identify @cns into @buf (4096 bytes, arena memory). */
uint16_t h_identify(struct h *h, uint32_t cns, uint32_t nsid, void *buf);

/* Elapsed monotonic nanoseconds. */
uint64_t h_now(void);

#endif /* NVQ_TESTS_EMU_HARNESS_H */
