// SPDX-License-Identifier: MIT
/* Raw harness for the emulated controller (see harness.h). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "harness.h"
#include "nvq/nvq.h"

#define ARENA_LEN (64u << 20)
#define AQ_MAX 4096

uint64_t h_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct h *h_try_open(const char *params)
{
	struct h *h = calloc(1, sizeof(*h));
	void *a;

	CHECK(h);
	if (nvq_emu_transport_open(params, &h->t)) {
		free(h);
		return NULL;
	}
	h->ops = h->t->ops;
	h->cap = h->ops->reg_read64(h->t, NVQ_REG_CAP);
	h->dstrd = NVQ_CAP_DSTRD(h->cap);
	a = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	h->arena = a;
	h->arena_len = ARENA_LEN;
	if (h->ops->dma_map(h->t, a, ARENA_LEN, &h->arena_iova)) {
		fprintf(stderr, "dma_map: %s\n", nvq_errmsg());
		exit(1);
	}
	CHECK(h->arena_iova != (uint64_t)(uintptr_t)a);
	/* Admin queue memory, reused across enables. */
	h->aq.sq = h_alloc(h, AQ_MAX * 64, &h->aq.sq_iova);
	h->aq.cq = h_alloc(h, AQ_MAX * 16, &h->aq.cq_iova);
	return h;
}

struct h *h_open(const char *params)
{
	struct h *h = h_try_open(params);

	if (!h) {
		fprintf(stderr, "open '%s' failed: %s\n", params, nvq_errmsg());
		exit(1);
	}
	return h;
}

void h_close(struct h *h)
{
	CHECK_EQ(h->ops->dma_unmap(h->t, h->arena, h->arena_len), 0);
	munmap(h->arena, h->arena_len);
	h->ops->close(h->t);
	free(h);
}

void *h_alloc(struct h *h, size_t len, uint64_t *iova)
{
	size_t l = (len + 4095) & ~(size_t)4095;
	void *p;

	CHECK(h->arena_used + l <= h->arena_len);
	p = h->arena + h->arena_used;
	memset(p, 0, l);
	if (iova)
		*iova = h->arena_iova + h->arena_used;
	h->arena_used += l;
	return p;
}

uint64_t h_iova(struct h *h, const void *p)
{
	const uint8_t *b = p;

	CHECK(b >= h->arena && b < h->arena + h->arena_len);
	return h->arena_iova + (uint64_t)(b - h->arena);
}

uint32_t h_wait_csts(struct h *h, uint32_t mask, uint32_t want)
{
	uint64_t end = h_now() + (uint64_t)H_TIMEOUT_MS * 1000000;
	uint32_t csts;

	for (;;) {
		csts = h->ops->reg_read32(h->t, NVQ_REG_CSTS);
		if ((csts & mask) == want)
			return csts;
		CHECK(h_now() < end);
		sched_yield();
	}
}

uint32_t h_cc_default(void)
{
	return NVQ_CC_EN | NVQ_CC_CSS_NVM | NVQ_CC_AMS_RR |
	       (NVQ_SQES_LOG2 << NVQ_CC_IOSQES_SHIFT) |
	       (NVQ_CQES_LOG2 << NVQ_CC_IOCQES_SHIFT);
}

uint32_t h_enable_cc(struct h *h, uint32_t aq_size, uint32_t cc)
{
	uint32_t csts;

	CHECK(aq_size >= 1 && aq_size <= AQ_MAX);
	memset(h->aq.sq, 0, AQ_MAX * 64);
	memset(h->aq.cq, 0, AQ_MAX * 16);
	h->aq.qid = 0;
	h->aq.size = aq_size;
	h->aq.sq_tail = h->aq.cq_head = 0;
	h->aq.phase = 1;
	h->aq.shadow = false;
	h->ops->reg_write32(h->t, NVQ_REG_AQA,
			    NVQ_AQA(aq_size - 1, aq_size - 1));
	h->ops->reg_write64(h->t, NVQ_REG_ASQ, h->aq.sq_iova);
	h->ops->reg_write64(h->t, NVQ_REG_ACQ, h->aq.cq_iova);
	h->ops->reg_write32(h->t, NVQ_REG_CC, cc);
	/* Wait for RDY or CFS, whichever comes. */
	{
		uint64_t end = h_now() + (uint64_t)H_TIMEOUT_MS * 1000000;

		for (;;) {
			csts = h->ops->reg_read32(h->t, NVQ_REG_CSTS);
			if (csts & (NVQ_CSTS_RDY | NVQ_CSTS_CFS))
				return csts;
			CHECK(h_now() < end);
			sched_yield();
		}
	}
}

void h_enable(struct h *h)
{
	uint32_t csts = h_enable_cc(h, 32, h_cc_default());

	CHECK_EQ(csts & (NVQ_CSTS_RDY | NVQ_CSTS_CFS), NVQ_CSTS_RDY);
}

void h_disable(struct h *h)
{
	uint32_t i;

	h->ops->reg_write32(h->t, NVQ_REG_CC, 0);
	h_wait_csts(h, NVQ_CSTS_RDY, 0);
	for (i = 0; i < 8; i++)
		memset(&h->ioq[i], 0, sizeof(h->ioq[i]));
}

struct nvq_sqe h_sqe(uint8_t opcode)
{
	struct nvq_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = opcode;
	s.cid = 0xffff;
	return s;
}

uint16_t h_push(struct h *h, struct hq *q, struct nvq_sqe *sqe)
{
	(void)h;
	if (sqe->cid == 0xffff) {
		sqe->cid = q->next_cid++;
		if (q->next_cid == 0xffff)
			q->next_cid = 0;
	}
	memcpy(&q->sq[q->sq_tail], sqe, sizeof(*sqe));
	if (++q->sq_tail == q->size)
		q->sq_tail = 0;
	return sqe->cid;
}

static uint32_t sq_db(struct h *h, uint16_t qid)
{
	return nvq_sq_db_offset(qid, h->dstrd);
}

static uint32_t cq_db(struct h *h, uint16_t qid)
{
	return nvq_cq_db_offset(qid, h->dstrd);
}

/* The host half of the shadow doorbell protocol. */
static void shadow_ring(struct h *h, uint32_t *sdb, uint32_t *ei, uint32_t off,
			uint16_t val)
{
	uint16_t old = (uint16_t)__atomic_load_n(sdb, __ATOMIC_RELAXED);
	uint16_t ev;

	/* seq_cst: the EventIdx load must not pass the shadow store. */
	__atomic_store_n(sdb, val, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&h->shadow_updates, 1, __ATOMIC_RELAXED);
	ev = (uint16_t)__atomic_load_n(ei, __ATOMIC_SEQ_CST);
	if (nvq_dbbuf_need_event(ev, val, old)) {
		h->ops->db_write(h->t, off, val);
		__atomic_fetch_add(&h->mmio_db_writes, 1, __ATOMIC_RELAXED);
	}
}

void h_ring(struct h *h, struct hq *q)
{
	if (q->shadow) {
		shadow_ring(h, q->sdb_sq, q->ei_sq, sq_db(h, q->qid),
			    q->sq_tail);
		return;
	}
	h->ops->db_write(h->t, sq_db(h, q->qid), q->sq_tail);
	__atomic_fetch_add(&h->mmio_db_writes, 1, __ATOMIC_RELAXED);
}

void h_ring_cq(struct h *h, struct hq *q)
{
	if (q->shadow) {
		shadow_ring(h, q->sdb_cq, q->ei_cq, cq_db(h, q->qid),
			    q->cq_head);
		return;
	}
	h->ops->db_write(h->t, cq_db(h, q->qid), q->cq_head);
}

bool h_cqe_ready(struct hq *q)
{
	uint16_t st =
		__atomic_load_n(&q->cq[q->cq_head].status, __ATOMIC_ACQUIRE);

	return (st & 1) == q->phase;
}

int h_reap_noring(struct hq *q, struct nvq_cqe *cqe, int timeout_ms)
{
	uint64_t end = 0;
	unsigned int spins = 0;

	while (!h_cqe_ready(q)) {
		if (!(++spins & 63)) {
			uint64_t now = h_now();

			if (!end)
				end = now + (uint64_t)timeout_ms * 1000000;
			else if (now >= end)
				return -1;
		}
		sched_yield();
	}
	memcpy(cqe, &q->cq[q->cq_head], sizeof(*cqe));
	if (++q->cq_head == q->size) {
		q->cq_head = 0;
		q->phase ^= 1;
	}
	return 0;
}

int h_reap(struct h *h, struct hq *q, struct nvq_cqe *cqe, int timeout_ms)
{
	if (h_reap_noring(q, cqe, timeout_ms))
		return -1;
	h_ring_cq(h, q);
	return 0;
}

uint16_t h_cmd(struct h *h, struct hq *q, struct nvq_sqe *sqe,
	       struct nvq_cqe *out)
{
	struct nvq_cqe cqe;
	uint16_t cid = h_push(h, q, sqe);

	h_ring(h, q);
	if (h_reap(h, q, &cqe, H_TIMEOUT_MS)) {
		fprintf(stderr, "command opcode 0x%02x on queue %u timed out\n",
			sqe->opcode, q->qid);
		exit(1);
	}
	CHECK_EQ(cqe.cid, cid);
	CHECK_EQ(cqe.sq_id, q->qid);
	if (out)
		*out = cqe;
	return NVQ_STATUS(cqe.status);
}

uint16_t h_admin(struct h *h, struct nvq_sqe *sqe, struct nvq_cqe *cqe)
{
	return h_cmd(h, &h->aq, sqe, cqe);
}

uint16_t h_set_nr_queues(struct h *h, uint16_t nsq, uint16_t ncq, uint32_t *dw0)
{
	struct nvq_sqe s = h_sqe(nvq_admin_set_features);
	struct nvq_cqe cqe;
	uint16_t st;

	s.cdw10 = NVQ_FEAT_NUM_QUEUES;
	s.cdw11 = NVQ_NUM_QUEUES(nsq, ncq);
	st = h_admin(h, &s, &cqe);
	if (dw0)
		*dw0 = cqe.result;
	return st;
}

uint16_t h_create_cq(struct h *h, uint16_t qid, uint32_t size, bool ien,
		     uint16_t iv)
{
	struct nvq_sqe s = h_sqe(nvq_admin_create_cq);
	struct hq *q = &h->ioq[qid];

	CHECK(qid < 8);
	q->cq = h_alloc(h, size * 16, &q->cq_iova);
	s.prp1 = q->cq_iova;
	s.cdw10 = qid | (size - 1) << 16;
	s.cdw11 = NVQ_QUEUE_PHYS_CONTIG | (ien ? NVQ_CQ_IRQ_ENABLED : 0) |
		  (uint32_t)iv << NVQ_CQ_IV_SHIFT;
	return h_admin(h, &s, NULL);
}

uint16_t h_create_sq(struct h *h, uint16_t qid, uint32_t size, uint16_t cqid)
{
	struct nvq_sqe s = h_sqe(nvq_admin_create_sq);
	struct hq *q = &h->ioq[qid];

	CHECK(qid < 8);
	q->sq = h_alloc(h, size * 64, &q->sq_iova);
	s.prp1 = q->sq_iova;
	s.cdw10 = qid | (size - 1) << 16;
	s.cdw11 = NVQ_QUEUE_PHYS_CONTIG | (uint32_t)cqid << NVQ_SQ_CQID_SHIFT;
	return h_admin(h, &s, NULL);
}

struct hq *h_ioq(struct h *h, uint16_t qid, uint32_t size, bool ien,
		 uint16_t iv)
{
	struct hq *q = &h->ioq[qid];

	CHECK_ST_OK(h_create_cq(h, qid, size, ien, iv));
	CHECK_ST_OK(h_create_sq(h, qid, size, qid));
	q->qid = qid;
	q->size = size;
	q->sq_tail = q->cq_head = 0;
	q->phase = 1;
	q->next_cid = 0;
	if (h->dbbuf) {
		q->shadow = true;
		q->sdb_sq = h->dbbuf + nvq_sq_db_index(qid, h->dstrd);
		q->sdb_cq = h->dbbuf + nvq_cq_db_index(qid, h->dstrd);
		q->ei_sq = h->ei + nvq_sq_db_index(qid, h->dstrd);
		q->ei_cq = h->ei + nvq_cq_db_index(qid, h->dstrd);
	}
	return q;
}

void h_prp(struct h *h, struct nvq_sqe *sqe, void *buf, size_t len)
{
	uint64_t iova = h_iova(h, buf);
	uint64_t first = 4096 - (iova & 4095), rem, *list, page;
	unsigned int i;

	sqe->prp1 = iova;
	sqe->prp2 = 0;
	if (len <= first)
		return;
	rem = len - first;
	page = (iova & ~4095ull) + 4096;
	if (rem <= 4096) {
		sqe->prp2 = page;
		return;
	}
	list = h_alloc(h, 4096, &sqe->prp2);
	i = 0;
	while (rem) {
		if (i == 511 && rem > 4096) {
			uint64_t next;
			uint64_t *nl = h_alloc(h, 4096, &next);

			list[511] = next;
			list = nl;
			i = 0;
			continue;
		}
		list[i++] = page;
		page += 4096;
		rem = rem > 4096 ? rem - 4096 : 0;
	}
}

uint16_t h_rw(struct h *h, struct hq *q, uint8_t opcode, uint32_t nsid,
	      uint64_t slba, uint32_t nlb, void *buf, size_t len)
{
	struct nvq_sqe s = h_sqe(opcode);

	s.nsid = nsid;
	s.cdw10 = (uint32_t)slba;
	s.cdw11 = (uint32_t)(slba >> 32);
	s.cdw12 = (nlb - 1) & 0xffff;
	if (buf)
		h_prp(h, &s, buf, len);
	return h_cmd(h, q, &s, NULL);
}

uint16_t h_identify(struct h *h, uint32_t cns, uint32_t nsid, void *buf)
{
	struct nvq_sqe s = h_sqe(nvq_admin_identify);

	s.nsid = nsid;
	s.cdw10 = cns;
	s.prp1 = h_iova(h, buf);
	return h_admin(h, &s, NULL);
}
