// SPDX-License-Identifier: MIT
/*
 * Unit-style test of lib/queue.c without a device: the test plays the
 * controller, reading the SQ and writing CQEs by hand, so it can send what
 * a well-behaved device never would (stale, duplicate, foreign and
 * impossible CQEs) and check that they are counted and ignored; it also
 * checks split-request completion, phase wrap, NVQ_IO_MORE and the shadow
 * doorbell / EventIdx rule.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "queue.h"
#include "stub_iommu.h"

/* ---- doorbell writes, seen through the stub transport's hook ---- */

static unsigned int db_writes[2]; /* [0] SQ tail, [1] CQ head */
static uint32_t db_last[2];

static void stub_db_write(struct nvq_transport *t, uint32_t off, uint32_t val)
{
	int cq = off == nvq_cq_db_offset(1, 0);

	CHECK(off == nvq_sq_db_offset(1, 0) || cq);
	db_writes[cq]++;
	db_last[cq] = val;
}

static struct nvq_transport *stub;

/* ---- the fake device side ---- */

struct dev {
	struct nvq_queue *q;
	struct nvq_sqe *sq;
	struct nvq_cqe *cq;
	uint32_t depth;
	uint16_t cq_tail;
	uint16_t phase;
};

static void post_cqe(struct dev *d, uint16_t cid, uint16_t sqid, uint16_t sqhd,
		     uint16_t status)
{
	struct nvq_cqe *e = &d->cq[d->cq_tail];

	e->result = 0x1234;
	e->sq_head = sqhd;
	e->sq_id = sqid;
	e->cid = cid;
	__atomic_store_n(&e->status, (uint16_t)(status << 1 | d->phase),
			 __ATOMIC_RELEASE);
	if (++d->cq_tail == d->depth) {
		d->cq_tail = 0;
		d->phase ^= 1;
	}
}

static void dev_init(struct dev *d, uint32_t depth, uint32_t *dbbuf_db,
		     uint32_t *dbbuf_ei)
{
	struct nvq_queue_params p = {
		.t = stub,
		.qid = 1,
		.depth = depth,
		.lock_mode = NVQ_LOCK_SPLIT,
		.mode = NVQ_MODE_POLL,
		.dbbuf_db = dbbuf_db,
		.dbbuf_ei = dbbuf_ei,
	};

	memset(d, 0, sizeof(*d));
	d->depth = depth;
	d->phase = 1;
	d->sq = calloc(depth, sizeof(*d->sq));
	d->cq = calloc(depth, sizeof(*d->cq));
	CHECK(d->sq && d->cq);
	p.sq = d->sq;
	p.cq = d->cq;
	CHECK_OK(nvq_queue_create(&p, &d->q));
	memset(db_writes, 0, sizeof(db_writes));
}

static void dev_fini(struct dev *d)
{
	nvq_queue_destroy(d->q);
	free(d->sq);
	free(d->cq);
}

struct rec {
	int calls;
	struct nvq_cpl cpl;
};

static void rec_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct rec *r = arg;

	r->calls++;
	r->cpl = *cpl;
}

static struct nvq_cmd *submit(struct dev *d, unsigned int n, struct rec *r,
			      unsigned int flags)
{
	struct nvq_cmd *lead = nvq_queue_get_cmds(d->q, n), *c;

	if (!lead)
		return NULL;
	for (c = lead; c; c = c->next) {
		memset(&c->sqe, 0, sizeof(c->sqe));
		c->sqe.opcode = nvq_cmd_flush;
		c->sqe.cid = c->cid;
		c->sqe.nsid = 1;
	}
	lead->cb = rec_cb;
	lead->arg = r;
	nvq_queue_post(d->q, lead, flags);
	return lead;
}

static void test_tags_and_sq(void)
{
	struct dev d;
	struct rec r[4] = { 0 };
	struct nvq_cmd *c[3];
	int i;

	dev_init(&d, 4, NULL, NULL);
	CHECK_EQ(d.q->nr_tags, 3);
	for (i = 0; i < 3; i++) {
		c[i] = submit(&d, 1, &r[i], 0);
		CHECK(c[i]);
		/* The SQE landed in ring order with its CID. */
		CHECK_EQ(d.sq[i].cid, c[i]->cid);
		CHECK_EQ(d.sq[i].opcode, nvq_cmd_flush);
	}
	/* Tags = depth - 1: the SQ can never be overrun. */
	CHECK(!submit(&d, 1, &r[3], 0));
	CHECK(!nvq_queue_get_cmds(d.q, 1));
	CHECK_EQ(db_writes[0], 3);
	CHECK_EQ(db_last[0], 3);
	CHECK_EQ(nvq_queue_inflight(d.q), 3);

	/* Out-of-order completion. */
	CHECK(!nvq_queue_pending(d.q));
	post_cqe(&d, c[1]->cid, 1, 3, 0);
	CHECK(nvq_queue_pending(d.q));
	CHECK_EQ(nvq_queue_reap(d.q, 0), 1);
	CHECK_EQ(r[1].calls, 1);
	CHECK_EQ(r[1].cpl.err, 0);
	CHECK_EQ(r[1].cpl.result, 0x1234);
	CHECK_EQ(db_writes[1], 1);
	CHECK_EQ(db_last[1], 1);
	CHECK_EQ(nvq_queue_inflight(d.q), 2);

	/* An error status reaches the callback unchanged, DNR included. */
	post_cqe(&d, c[0]->cid, 1, 3,
		 NVQ_STATUS_DNR_BIT |
			 NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, NVQ_SC_LBA_RANGE));
	post_cqe(&d, c[2]->cid, 1, 3,
		 NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, NVQ_SC_ABORT_QUEUE));
	CHECK_EQ(nvq_queue_reap(d.q, 0), 2);
	CHECK_EQ(r[0].cpl.err, -EIO);
	CHECK_EQ(r[0].cpl.status, NVQ_STATUS_DNR_BIT | NVQ_SC_LBA_RANGE);
	CHECK_EQ(r[2].cpl.err, -ECANCELED);
	/* One CQ doorbell per batch. */
	CHECK_EQ(db_writes[1], 2);
	CHECK_EQ(db_last[1], 3);
	CHECK_EQ(nvq_queue_inflight(d.q), 0);
	dev_fini(&d);
}

static void test_bad_cqes(void)
{
	struct nvq_queue_stats st;
	struct rec r = { 0 }, r2 = { 0 };
	struct nvq_cmd *c;
	uint16_t old_cid;
	struct dev d;

	dev_init(&d, 8, NULL, NULL);
	c = submit(&d, 1, &r, 0);
	CHECK(c);
	old_cid = c->cid;
	/* A CID whose tag is beyond the queue's tags (depth 8: 7 tags, the
	 * tag field has 3 bits, tag 7 does not exist). */
	post_cqe(&d, (uint16_t)((old_cid & ~7u) | 7), 1, 0, 0);
	/* A CQE naming another SQ. */
	post_cqe(&d, old_cid, 2, 0, 0);
	/* An SQ head beyond the ring. */
	post_cqe(&d, old_cid, 1, 8, 0);
	/* A tag that is not in flight. */
	post_cqe(&d, (uint16_t)((old_cid & ~7u) | 5), 1, 0, 0);
	/* The right tag under another generation. */
	post_cqe(&d, (uint16_t)(old_cid + 8), 1, 0, 0);
	CHECK_EQ(nvq_queue_reap(d.q, 0), 0);
	CHECK_EQ(r.calls, 0);
	nvq_queue_stats(d.q, &st);
	CHECK_EQ(st.bad_cqes, 5);
	CHECK_EQ(st.completed, 0);
	/* The CQ head still moved past them. */
	CHECK_EQ(db_last[1], 5);

	/* The real one, then a duplicate of it. */
	post_cqe(&d, old_cid, 1, 1, 0);
	post_cqe(&d, old_cid, 1, 1, 0);
	CHECK_EQ(nvq_queue_reap(d.q, 0), 1);
	CHECK_EQ(r.calls, 1);
	nvq_queue_stats(d.q, &st);
	CHECK_EQ(st.bad_cqes, 6);
	CHECK_EQ(st.completed, 1);

	/* The tag is reused (LIFO) under a new CID: the old CID is stale. */
	c = submit(&d, 1, &r2, 0);
	CHECK(c);
	CHECK_EQ(c->cid & 7, old_cid & 7);
	CHECK(c->cid != old_cid);
	post_cqe(&d, old_cid, 1, 2, 0);
	CHECK_EQ(nvq_queue_reap(d.q, 0), 0);
	CHECK_EQ(r2.calls, 0);
	post_cqe(&d, c->cid, 1, 2, 0);
	CHECK_EQ(nvq_queue_reap(d.q, 0), 1);
	CHECK_EQ(r2.calls, 1);
	nvq_queue_stats(d.q, &st);
	CHECK_EQ(st.bad_cqes, 7);
	dev_fini(&d);
}

static void test_split(void)
{
	struct rec r = { 0 };
	struct nvq_cmd *lead, *c, *cmds[3];
	struct dev d;
	int i = 0;

	dev_init(&d, 8, NULL, NULL);
	lead = submit(&d, 3, &r, 0);
	CHECK(lead);
	CHECK_EQ(lead->nr, 3);
	for (c = lead; c; c = c->next)
		cmds[i++] = c;
	CHECK_EQ(i, 3);
	/* Three SQEs, one doorbell. */
	CHECK_EQ(db_writes[0], 1);
	CHECK_EQ(db_last[0], 3);
	/* The lead completes first: no callback yet, its context stays. */
	post_cqe(&d, cmds[0]->cid, 1, 3, 0);
	CHECK_EQ(nvq_queue_reap(d.q, 0), 0);
	CHECK_EQ(r.calls, 0);
	/* Two failures: the first one reaped wins. */
	post_cqe(&d, cmds[2]->cid, 1, 3,
		 NVQ_STATUS_MAKE(NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR));
	CHECK_EQ(nvq_queue_reap(d.q, 0), 0);
	CHECK_EQ(r.calls, 0);
	post_cqe(&d, cmds[1]->cid, 1, 3,
		 NVQ_STATUS_MAKE(NVQ_SCT_GENERIC, NVQ_SC_LBA_RANGE));
	CHECK_EQ(nvq_queue_reap(d.q, 0), 1);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(r.cpl.err, -EIO);
	CHECK_EQ(r.cpl.status,
		 NVQ_STATUS_MAKE(NVQ_SCT_MEDIA, NVQ_SC_READ_ERROR));
	/* All seven tags are free again. */
	lead = nvq_queue_get_cmds(d.q, 7);
	CHECK(lead);
	nvq_queue_put_cmds(d.q, lead);

	/* Not enough tags: nothing reserved. */
	CHECK(submit(&d, 5, &r, 0));
	CHECK(!nvq_queue_get_cmds(d.q, 3));
	lead = nvq_queue_get_cmds(d.q, 2);
	CHECK(lead);
	nvq_queue_put_cmds(d.q, lead);
	dev_fini(&d);
}

static void test_phase_wrap(void)
{
	struct rec r = { 0 };
	struct nvq_cmd *c;
	struct dev d;
	int i;

	dev_init(&d, 4, NULL, NULL);
	/* Ten laps of a 4-entry CQ, two commands at a time. */
	for (i = 0; i < 20; i++) {
		uint16_t cid1, cid2;

		c = submit(&d, 1, &r, NVQ_IO_MORE);
		CHECK(c);
		cid1 = c->cid;
		c = submit(&d, 1, &r, 0);
		CHECK(c);
		cid2 = c->cid;
		post_cqe(&d, cid2, 1, 0, 0);
		post_cqe(&d, cid1, 1, 0, 0);
		CHECK_EQ(nvq_queue_reap(d.q, 1), 1);
		CHECK_EQ(nvq_queue_reap(d.q, 0), 1);
		CHECK(!nvq_queue_pending(d.q));
	}
	CHECK_EQ(r.calls, 40);
	CHECK_EQ(r.cpl.err, 0);
	/* NVQ_IO_MORE: one doorbell per pair. */
	CHECK_EQ(db_writes[0], 20);
	dev_fini(&d);
}

static void test_more_and_kick(void)
{
	struct rec r = { 0 };
	struct dev d;
	int i;

	dev_init(&d, 16, NULL, NULL);
	for (i = 0; i < 5; i++)
		CHECK(submit(&d, 1, &r, NVQ_IO_MORE));
	CHECK_EQ(db_writes[0], 0);
	nvq_queue_ring(d.q);
	CHECK_EQ(db_writes[0], 1);
	CHECK_EQ(db_last[0], 5);
	/* Nothing new: no write. */
	nvq_queue_ring(d.q);
	CHECK_EQ(db_writes[0], 1);

	/* Cancel what the "device" never completed. */
	nvq_queue_cancel(d.q);
	CHECK_EQ(r.calls, 5);
	CHECK_EQ(r.cpl.err, -ECANCELED);
	CHECK_EQ(nvq_queue_inflight(d.q), 0);
	dev_fini(&d);
}

static void test_shadow(void)
{
	uint32_t *db = calloc(1024, 4), *ei = calloc(1024, 4);
	uint32_t sq_i = nvq_sq_db_index(1, 0), cq_i = nvq_cq_db_index(1, 0);
	struct rec r = { 0 };
	struct nvq_cmd *c;
	struct dev d;

	CHECK(db && ei);
	dev_init(&d, 16, db, ei);
	/* EventIdx 0, tail 0 -> 1 passes it: MMIO. */
	c = submit(&d, 1, &r, 0);
	CHECK(c);
	CHECK_EQ(db[sq_i], 1);
	CHECK_EQ(db_writes[0], 1);
	/* The device is polling the shadow (EventIdx stays behind): no
	 * MMIO, only the shadow value moves. */
	CHECK(submit(&d, 1, &r, 0));
	CHECK(submit(&d, 1, &r, 0));
	CHECK_EQ(db[sq_i], 3);
	CHECK_EQ(db_writes[0], 1);
	/* The device asks to be told when the tail passes 3. */
	ei[sq_i] = 3;
	CHECK(submit(&d, 1, &r, 0));
	CHECK_EQ(db[sq_i], 4);
	CHECK_EQ(db_writes[0], 2);
	CHECK_EQ(db_last[0], 4);

	/* CQ head: same rule. */
	post_cqe(&d, c->cid, 1, 4, 0);
	CHECK_EQ(nvq_queue_reap(d.q, 0), 1);
	CHECK_EQ(db[cq_i], 1);
	CHECK_EQ(db_writes[1], 1);
	nvq_queue_cancel(d.q);
	CHECK_EQ(r.calls, 4);
	dev_fini(&d);
	free(db);
	free(ei);
}

int main(void)
{
	stub = stub_transport_create();
	stub->nr_vectors = 1;
	stub_set_db_hook(stub, stub_db_write);
	test_tags_and_sq();
	test_bad_cqes();
	test_split();
	test_phase_wrap();
	test_more_and_kick();
	test_shadow();
	CHECK_EQ(stub_mappings(stub), 0);
	stub_transport_destroy(stub);
	printf("queue-unit: ok\n");
	return 0;
}
