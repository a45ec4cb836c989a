// SPDX-License-Identifier: MIT
/*
 * Submission and completion queues on the device side: creation and
 * deletion, doorbells (MMIO words or shadow doorbells), fetching SQEs,
 * posting CQEs with the phase tag, holding completions while a CQ is full,
 * and MSI-X signalling once per CQ per batch (with interrupt coalescing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu_internal.h"

/* Doorbell words of queue @qid in the MMIO array (dense, no stride). */
static uint32_t *sq_db(struct nvq_emu *c, uint16_t qid)
{
	return &c->dbs[2u * qid];
}

static uint32_t *cq_db(struct nvq_emu *c, uint16_t qid)
{
	return &c->dbs[2u * qid + 1];
}

/* Shadow doorbell / EventIdx word of index @idx, NULL past the page. */
static uint32_t *dbbuf_word(struct nvq_emu *c, uint32_t *page, uint32_t idx)
{
	if (!page || (uint64_t)idx * 4 + 4 > c->page_size)
		return NULL;
	return page + idx;
}

static void bind_sq(struct nvq_emu *c, struct emu_sq *sq)
{
	uint32_t idx = nvq_sq_db_index(sq->qid, c->dstrd);

	sq->shadow = NULL;
	sq->eventidx = NULL;
	if (!c->dbbuf_on || !sq->qid)
		return;
	sq->shadow = dbbuf_word(c, c->dbbuf, idx);
	sq->eventidx = dbbuf_word(c, c->ei, idx);
	if (!sq->shadow || !sq->eventidx)
		sq->shadow = sq->eventidx = NULL;
}

static void bind_cq(struct nvq_emu *c, struct emu_cq *cq)
{
	uint32_t idx = nvq_cq_db_index(cq->qid, c->dstrd);

	cq->shadow = NULL;
	cq->eventidx = NULL;
	if (!c->dbbuf_on || !cq->qid)
		return;
	cq->shadow = dbbuf_word(c, c->dbbuf, idx);
	cq->eventidx = dbbuf_word(c, c->ei, idx);
	if (!cq->shadow || !cq->eventidx)
		cq->shadow = cq->eventidx = NULL;
}

static uint32_t sq_tail(struct nvq_emu *c, struct emu_sq *sq);
static void cq_refresh_head(struct nvq_emu *c, struct emu_cq *cq);

/*
 * Queues that exist when Doorbell Buffer Config arrives switch to the
 * shadow words; seed them with the host's latest values (as QEMU does) so
 * the switch neither loses nor invents entries. The device's CQ head is a
 * lazily refreshed copy: refresh it from the old doorbell first, or a
 * stale head would be handed back to the host as current.
 */
void emu_queues_bind_dbbuf(struct nvq_emu *c)
{
	uint32_t q;

	for (q = 1; q <= c->p.qpairs; q++) {
		struct emu_sq *sq = c->sqs[q];
		struct emu_cq *cq = c->cqs[q];

		if (sq) {
			sq_tail(c, sq);
			bind_sq(c, sq);
			if (sq->shadow) {
				emu_store_rel(sq->shadow, sq->tail);
				emu_store_rel(sq->eventidx, sq->tail);
			}
		}
		if (cq) {
			cq_refresh_head(c, cq);
			bind_cq(c, cq);
			if (cq->shadow) {
				emu_store_rel(cq->shadow, cq->head);
				emu_store_rel(cq->eventidx, cq->head);
			}
		}
	}
}

/*
 * Host pointer of a queue ring. Contiguous queues must lie in one mapping.
 * For a non-contiguous queue (PC = 0, allowed when CAP.CQR = 0) @iova is a
 * PRP list; the emulator then needs the listed pages to be consecutive in
 * the host's address space too (a real device would not care), else NULL.
 */
static void *ring_ptr(struct nvq_emu *c, uint64_t iova, uint64_t bytes, bool pc)
{
	uint64_t psz = c->page_size, i, npages;
	uint8_t *base = NULL;

	if (pc)
		return emu_iommu_range(&c->iommu, iova, bytes);
	npages = (bytes + psz - 1) / psz;
	for (i = 0; i < npages; i++) {
		uint64_t ent, avail;
		uint8_t *lp = emu_iommu_xlate(&c->iommu, iova + 8 * i, &avail);
		uint8_t *p;

		if (!lp || avail < 8)
			return NULL;
		memcpy(&ent, lp, 8);
		if (ent & (psz - 1))
			return NULL;
		p = emu_iommu_range(&c->iommu, ent, psz);
		if (!p || (base && p != base + i * psz))
			return NULL;
		if (!base)
			base = p;
	}
	return base;
}

/* Grow @cq's holding ring so that every command of its SQs fits. */
static int cq_reserve(struct nvq_emu *c, struct emu_cq *cq, uint32_t more)
{
	uint32_t want = more, i;
	struct nvq_cqe *n;

	for (i = 0; i < c->nr_active; i++)
		if (c->active[i]->cq == cq)
			want += c->active[i]->size;
	/* Entries of deleted SQs may still be held: only grow then. */
	if (cq->ovf_cnt && want < cq->ovf_cap + more)
		want = cq->ovf_cap + more;
	if (want <= cq->ovf_cap)
		return 0;
	n = malloc((size_t)want * sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (i = 0; i < cq->ovf_cnt; i++)
		n[i] = cq->ovf[(cq->ovf_head + i) % cq->ovf_cap];
	free(cq->ovf);
	cq->ovf = n;
	cq->ovf_cap = want;
	cq->ovf_head = 0;
	return 0;
}

int emu_cq_create(struct nvq_emu *c, uint16_t qid, uint64_t iova, uint32_t size,
		  uint16_t iv, bool ien, bool pc)
{
	struct emu_cq *cq;
	void *ring = ring_ptr(c, iova, (uint64_t)size * NVQ_CQE_SIZE, pc);

	if (!ring)
		return -EFAULT;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->ring = ring;
	cq->iova = iova;
	cq->pc = pc;
	cq->size = size;
	cq->qid = qid;
	cq->phase = 1;
	cq->iv = iv;
	cq->ien = ien;
	cq->db = cq_db(c, qid);
	emu_store_rel(cq->db, 0);
	__atomic_store_n(&c->db_live[2u * qid + 1], 1, __ATOMIC_RELEASE);
	bind_cq(c, cq);
	c->cqs[qid] = cq;
	if (qid)
		c->nr_io_cqs++;
	return 0;
}

int emu_sq_create(struct nvq_emu *c, uint16_t qid, uint64_t iova, uint32_t size,
		  struct emu_cq *cq, uint16_t prio, bool pc)
{
	struct emu_sq *sq;
	void *ring = ring_ptr(c, iova, (uint64_t)size * NVQ_SQE_SIZE, pc);
	uint32_t i;

	if (!ring)
		return -EFAULT;
	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return -ENOMEM;
	sq->cmds = calloc(size, sizeof(*sq->cmds));
	sq->free_slots = calloc(size, sizeof(*sq->free_slots));
	if (!sq->cmds || !sq->free_slots ||
	    emu_heap_reserve(c, c->nr_slots + size) ||
	    cq_reserve(c, cq, size)) {
		free(sq->cmds);
		free(sq->free_slots);
		free(sq);
		return -ENOMEM;
	}
	for (i = 0; i < size; i++) {
		sq->cmds[i].slot = (uint16_t)i;
		sq->cmds[i].sq = sq;
		sq->cmds[i].heap_idx = UINT32_MAX;
		sq->free_slots[i] = (uint16_t)(size - 1 - i);
	}
	sq->nr_free = size;
	c->nr_slots += size;
	sq->ring = ring;
	sq->iova = iova;
	sq->pc = pc;
	sq->size = size;
	sq->qid = qid;
	sq->prio = prio;
	sq->cq = cq;
	sq->db = sq_db(c, qid);
	emu_store_rel(sq->db, 0);
	__atomic_store_n(&c->db_live[2u * qid], 1, __ATOMIC_RELEASE);
	bind_sq(c, sq);
	cq->nr_sqs++;
	sq->idx = c->nr_active;
	c->active[c->nr_active++] = sq;
	c->sqs[qid] = sq;
	if (qid)
		c->nr_io_sqs++;
	return 0;
}

static void sq_free(struct nvq_emu *c, struct emu_sq *sq)
{
	struct emu_sq *last = c->active[--c->nr_active];

	last->idx = sq->idx;
	c->active[sq->idx] = last;
	sq->cq->nr_sqs--;
	__atomic_store_n(&c->db_live[2u * sq->qid], 0, __ATOMIC_RELEASE);
	c->nr_slots -= sq->size;
	c->sqs[sq->qid] = NULL;
	if (sq->qid)
		c->nr_io_sqs--;
	free(sq->cmds);
	free(sq->free_slots);
	free(sq);
}

void emu_sq_delete(struct nvq_emu *c, struct emu_sq *sq)
{
	uint32_t i;

	if (emu_unlikely(c->nr_delayed))
		emu_fault_sq_gone(c, sq);
	/* Commands still waiting on media complete as aborted. */
	for (i = 0; i < sq->size; i++) {
		struct emu_cmd *cmd = &sq->cmds[i];

		if (cmd->heap_idx == UINT32_MAX)
			continue;
		emu_heap_remove(c, cmd);
		cmd->heap_idx = UINT32_MAX;
		emu_complete(c, sq, cmd->sqe.cid,
			     NVQ_STATUS_MAKE(NVQ_SCT_GENERIC,
					     NVQ_SC_ABORT_QUEUE),
			     0, NULL);
	}
	sq_free(c, sq);
}

static void cq_free(struct nvq_emu *c, struct emu_cq *cq)
{
	uint32_t i;

	/* Not in the interrupt batch any more (it may die mid-pass). */
	if (cq->in_batch) {
		for (i = 0; i < c->nr_batch; i++)
			if (c->batch[i] == cq)
				break;
		if (i < c->nr_batch)
			c->batch[i] = c->batch[--c->nr_batch];
	}
	if (cq->ovf_cnt)
		c->ovf_cqs--;
	__atomic_store_n(&c->db_live[2u * cq->qid + 1], 0, __ATOMIC_RELEASE);
	c->cqs[cq->qid] = NULL;
	if (cq->qid)
		c->nr_io_cqs--;
	free(cq->ovf);
	free(cq);
}

void emu_cq_delete(struct nvq_emu *c, struct emu_cq *cq)
{
	cq_free(c, cq);
}

void emu_queues_delete_all(struct nvq_emu *c)
{
	uint32_t q;

	if (emu_unlikely(c->nr_delayed))
		emu_fault_sq_gone(c, NULL);
	c->heap_n = 0;
	while (c->nr_active)
		sq_free(c, c->active[c->nr_active - 1]);
	for (q = 0; q <= c->p.qpairs; q++)
		if (c->cqs[q])
			cq_free(c, c->cqs[q]);
	c->nr_batch = 0;
}

bool emu_queues_remap(struct nvq_emu *c)
{
	bool ok = true;
	uint32_t q;

	for (q = 0; q <= c->p.qpairs; q++) {
		struct emu_sq *sq = c->sqs[q];
		struct emu_cq *cq = c->cqs[q];

		if (sq) {
			sq->ring = ring_ptr(c, sq->iova,
					    (uint64_t)sq->size * NVQ_SQE_SIZE,
					    sq->pc);
			ok &= sq->ring != NULL;
		}
		if (cq) {
			cq->ring = ring_ptr(c, cq->iova,
					    (uint64_t)cq->size * NVQ_CQE_SIZE,
					    cq->pc);
			ok &= cq->ring != NULL;
		}
	}
	if (c->dbbuf_on) {
		c->dbbuf =
			emu_iommu_range(&c->iommu, c->dbbuf_iova, c->page_size);
		c->ei = emu_iommu_range(&c->iommu, c->ei_iova, c->page_size);
		ok &= c->dbbuf && c->ei;
		for (q = 1; q <= c->p.qpairs; q++) {
			if (c->sqs[q])
				bind_sq(c, c->sqs[q]);
			if (c->cqs[q])
				bind_cq(c, c->cqs[q]);
		}
	}
	return ok;
}

/* ------------------------------------------------------------------ */
/* Doorbells                                                           */
/* ------------------------------------------------------------------ */

static void bad_doorbell(struct nvq_emu *c, bool *bad, uint32_t *bad_val,
			 uint32_t v)
{
	/* One event per distinct bad value, not one per device pass. */
	if (*bad && *bad_val == v)
		return;
	*bad = true;
	*bad_val = v;
	emu_aer_raise(c, NVQ_AER_ERROR, 0x01, NVQ_LOG_ERROR);
}

static uint32_t sq_tail(struct nvq_emu *c, struct emu_sq *sq)
{
	uint32_t v = emu_load_acq(sq->shadow ? sq->shadow : sq->db);

	if (emu_likely(v == sq->tail))
		return v;
	if (v >= sq->size) {
		bad_doorbell(c, &sq->bad_db, &sq->bad_val, v);
		return sq->tail;
	}
	sq->bad_db = false;
	sq->tail = (uint16_t)v;
	return v;
}

static void cq_refresh_head(struct nvq_emu *c, struct emu_cq *cq)
{
	uint32_t v = emu_load_acq(cq->shadow ? cq->shadow : cq->db);
	uint32_t used, adv;

	if (v == cq->head)
		return;
	/* The host may free only entries the device posted. */
	used = (cq->tail + cq->size - cq->head) % cq->size;
	adv = (v + cq->size - cq->head) % cq->size;
	if (v >= cq->size || adv > used) {
		bad_doorbell(c, &cq->bad_db, &cq->bad_val, v);
		return;
	}
	cq->bad_db = false;
	cq->head = (uint16_t)v;
}

static bool cq_full(const struct emu_cq *cq)
{
	uint32_t next = cq->tail + 1u;

	if (next == cq->size)
		next = 0;
	return next == cq->head;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

static void cq_write(struct nvq_emu *c, struct emu_cq *cq,
		     const struct nvq_cqe *e)
{
	struct nvq_cqe *d = &cq->ring[cq->tail];

	d->result = e->result;
	/* stamp=1: posting time for the host's overhead measurement. */
	d->dw1 = emu_unlikely(c->p.stamp) && cq->qid ? (uint32_t)emu_now() :
						       e->dw1;
	d->sq_head = e->sq_head;
	d->sq_id = e->sq_id;
	d->cid = e->cid;
	/* The phase flip publishes the entry: release after the rest. */
	__atomic_store_n(&d->status, (uint16_t)(e->status | cq->phase),
			 __ATOMIC_RELEASE);
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1;
	}
	if (!cq->irq_cnt++ && c->coalesce_on)
		cq->irq_first = emu_now();
	if (!cq->in_batch) {
		cq->in_batch = true;
		c->batch[c->nr_batch++] = cq;
	}
}

static void cq_post(struct nvq_emu *c, struct emu_cq *cq,
		    const struct nvq_cqe *e)
{
	if (emu_likely(!cq->ovf_cnt)) {
		if (emu_unlikely(cq_full(cq)))
			cq_refresh_head(c, cq);
		if (emu_likely(!cq_full(cq))) {
			cq_write(c, cq, e);
			return;
		}
		c->ovf_cqs++;
	}
	/* Full: hold it; never overwrite an entry the host has not read. */
	cq->ovf[(cq->ovf_head + cq->ovf_cnt) % cq->ovf_cap] = *e;
	cq->ovf_cnt++;
}

bool emu_cq_try_post(struct nvq_emu *c, struct emu_cq *cq,
		     const struct nvq_cqe *e)
{
	if (cq->ovf_cnt)
		return false;
	if (cq_full(cq))
		cq_refresh_head(c, cq);
	if (cq_full(cq))
		return false;
	cq_write(c, cq, e);
	return true;
}

void emu_cq_post(struct nvq_emu *c, struct emu_cq *cq, const struct nvq_cqe *e)
{
	cq_post(c, cq, e);
}

void emu_complete(struct nvq_emu *c, struct emu_sq *sq, uint16_t cid,
		  uint16_t status, uint32_t dw0, const struct emu_req *req)
{
	struct nvq_cqe e;

	e.result = dw0;
	e.dw1 = 0;
	e.sq_head = sq->head;
	e.sq_id = sq->qid;
	e.cid = cid;
	e.status = (uint16_t)(status << 1);
	if (emu_unlikely(status))
		emu_log_error(c, sq->qid, cid, status, req);
	cq_post(c, sq->cq, &e);
}

unsigned int emu_flush_overflow(struct nvq_emu *c)
{
	unsigned int posted = 0;
	uint32_t q;

	for (q = 0; q <= c->p.qpairs && c->ovf_cqs; q++) {
		struct emu_cq *cq = c->cqs[q];

		if (!cq || !cq->ovf_cnt)
			continue;
		cq_refresh_head(c, cq);
		while (cq->ovf_cnt && !cq_full(cq)) {
			cq_write(c, cq, &cq->ovf[cq->ovf_head]);
			cq->ovf_head = (cq->ovf_head + 1) % cq->ovf_cap;
			cq->ovf_cnt--;
			posted++;
		}
		if (!cq->ovf_cnt)
			c->ovf_cqs--;
	}
	return posted;
}

/* ------------------------------------------------------------------ */
/* Interrupts                                                          */
/* ------------------------------------------------------------------ */

static void signal_vector(struct nvq_emu *c, uint16_t iv)
{
	uint64_t one = 1;

	/*
	 * A masked vector sets its pending bit instead. The host stores the
	 * mask before it takes the pending bit, we store the pending bit
	 * before we look at the mask again: one of the two sends it.
	 */
	if (__atomic_load_n(&c->irq_mask[iv], __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&c->irq_pend[iv], 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&c->irq_mask[iv], __ATOMIC_SEQ_CST) ||
		    !__atomic_exchange_n(&c->irq_pend[iv], 0,
					 __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&c->irq_held, c->irq_held + 1,
					 __ATOMIC_RELAXED);
			return;
		}
	}
	/* EAGAIN only if the counter is near 2^64: already signalled. */
	if (write(c->irq_fds[iv], &one, sizeof(one)) < 0) {
		/* nothing to do */
	}
}

/* Interrupt Coalescing applies to I/O CQs whose vector allows it. */
static bool coalesced(struct nvq_emu *c, struct emu_cq *cq, uint64_t now)
{
	uint32_t thr = NVQ_IRQ_COALESCE_THR(c->feat.irq_coalesce) + 1u;
	uint64_t time = NVQ_IRQ_COALESCE_TIME(c->feat.irq_coalesce) * 100000ull;

	if (!cq->qid || c->feat.irq_cd[cq->iv])
		return false;
	return cq->irq_cnt < thr && now - cq->irq_first < time;
}

void emu_irq_flush(struct nvq_emu *c)
{
	uint64_t now = c->coalesce_on ? emu_now() : 0;
	uint32_t i, keep = 0;

	if (!c->nr_batch)
		return;
	for (i = 0; i < c->nr_batch; i++) {
		struct emu_cq *cq = c->batch[i];

		if (!cq->ien) {
			cq->irq_cnt = 0;
			cq->in_batch = false;
			continue;
		}
		if (c->coalesce_on && coalesced(c, cq, now)) {
			c->batch[keep++] = cq;
			continue;
		}
		signal_vector(c, cq->iv);
		cq->irq_cnt = 0;
		cq->in_batch = false;
	}
	c->nr_batch = keep;
}

uint64_t emu_irq_deadline(struct nvq_emu *c)
{
	uint64_t time = NVQ_IRQ_COALESCE_TIME(c->feat.irq_coalesce) * 100000ull;
	uint64_t best = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < c->nr_batch; i++)
		if (c->batch[i]->irq_first + time < best)
			best = c->batch[i]->irq_first + time;
	return best;
}

/* ------------------------------------------------------------------ */
/* Fetching                                                            */
/* ------------------------------------------------------------------ */

static unsigned int fetch_sq(struct nvq_emu *c, struct emu_sq *sq)
{
	uint32_t tail = sq_tail(c, sq);
	unsigned int n = 0;
	uint64_t now = 0;

	while (sq->head != tail && n < EMU_FETCH_BATCH) {
		const struct nvq_sqe *src = &sq->ring[sq->head];
		uint64_t lat = 0;
		struct emu_cmd *cmd;

		/* Hold back while completions wait for CQ space. */
		if (sq->cq->ovf_cnt)
			break;
		if (sq->qid)
			lat = emu_media_latency(c, src->opcode);
		if (!lat) {
			struct nvq_sqe sqe = *src;

			if (++sq->head == sq->size)
				sq->head = 0;
			emu_exec(c, sq, &sqe);
			n++;
			continue;
		}
		if (!sq->nr_free)
			break;
		/* Read after the tail: due is never before the doorbell. */
		if (!now)
			now = emu_now();
		cmd = &sq->cmds[sq->free_slots[--sq->nr_free]];
		cmd->sqe = *src;
		cmd->due = now + lat;
		emu_heap_push(c, cmd);
		if (++sq->head == sq->size)
			sq->head = 0;
		n++;
	}
	return n;
}

unsigned int emu_fetch(struct nvq_emu *c)
{
	unsigned int n = 0;
	uint32_t i;

	if (!c->nr_active)
		return 0;
	if (++c->rr >= c->nr_active)
		c->rr = 0;
	/* Admin commands may create or delete SQs as we go: re-read. */
	for (i = 0; i < c->nr_active; i++)
		n += fetch_sq(c, c->active[(c->rr + i) % c->nr_active]);
	return n;
}

/* Finish a command that waited for its latency. */
void emu_cmd_done(struct nvq_emu *c, struct emu_cmd *cmd)
{
	struct emu_sq *sq = cmd->sq;

	cmd->heap_idx = UINT32_MAX;
	emu_exec(c, sq, &cmd->sqe);
	sq->free_slots[sq->nr_free++] = cmd->slot;
}

/*
 * Is there anything for the device to do? With @publish, first tell the
 * host through EventIdx that the next shadow doorbell update must be
 * rung, so that no update is missed while the device sleeps. All of it is
 * seq_cst: the EventIdx (and sleeping flag) stores must not pass the
 * doorbell loads that follow them (the host does the mirror image).
 */
bool emu_queues_idle_check(struct nvq_emu *c, bool publish)
{
	uint32_t i, q;

	if (publish && c->dbbuf_on) {
		for (i = 0; i < c->nr_active; i++) {
			struct emu_sq *sq = c->active[i];

			if (sq->eventidx)
				emu_store_sc(sq->eventidx, sq->tail);
		}
		for (q = 1; q <= c->p.qpairs && c->ovf_cqs; q++) {
			struct emu_cq *cq = c->cqs[q];

			if (cq && cq->ovf_cnt && cq->eventidx)
				emu_store_sc(cq->eventidx, cq->head);
		}
	}
	for (i = 0; i < c->nr_active; i++) {
		struct emu_sq *sq = c->active[i];
		uint32_t v = emu_load_sc(sq->shadow ? sq->shadow : sq->db);

		if (v != sq->tail && !(sq->bad_db && v == sq->bad_val) &&
		    !sq->cq->ovf_cnt)
			return true;
	}
	for (q = 0; q <= c->p.qpairs && c->ovf_cqs; q++) {
		struct emu_cq *cq = c->cqs[q];
		uint32_t v;

		if (!cq || !cq->ovf_cnt)
			continue;
		v = emu_load_sc(cq->shadow ? cq->shadow : cq->db);
		if (v != cq->head && !(cq->bad_db && v == cq->bad_val))
			return true;
	}
	return false;
}
