// SPDX-License-Identifier: MIT
/*
 * CQ full: the device never overwrites a CQE the host has not consumed
 * (announced by the CQ head doorbell); it holds completions and posts
 * them, in order, once the host frees slots. Also with shadow doorbells
 * and a device that sleeps while it waits.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static void pause_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

static void run(const char *params, bool shadow)
{
	struct h *h = h_open(params);
	struct nvq_sqe s;
	struct nvq_cqe c;
	struct hq *q;
	uint8_t *b;
	unsigned int i, seen = 0;

	h_enable(h);
	if (shadow) {
		s = h_sqe(nvq_admin_dbbuf);
		h->dbbuf = h_alloc(h, 4096, &h->dbbuf_iova);
		h->ei = h_alloc(h, 4096, &h->ei_iova);
		s.prp1 = h->dbbuf_iova;
		s.prp2 = h->ei_iova;
		CHECK_ST_OK(h_admin(h, &s, NULL));
	}
	b = h_alloc(h, 4096, NULL);
	/* CQ of 4 entries (3 usable), SQ of 32. */
	CHECK_ST_OK(h_create_cq(h, 1, 4, false, 0));
	CHECK_ST_OK(h_create_sq(h, 1, 32, 1));
	q = &h->ioq[1];
	q->qid = 1;
	q->size = 32; /* the SQ size; the CQ is handled by hand below */
	q->phase = 1;
	if (shadow) {
		q->shadow = true;
		q->sdb_sq = h->dbbuf + nvq_sq_db_index(1, h->dstrd);
		q->sdb_cq = h->dbbuf + nvq_cq_db_index(1, h->dstrd);
		q->ei_sq = h->ei + nvq_sq_db_index(1, h->dstrd);
		q->ei_cq = h->ei + nvq_cq_db_index(1, h->dstrd);
	}
	for (i = 0; i < 20; i++) {
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		s.cid = (uint16_t)(100 + i);
		h_prp(h, &s, b, 4096);
		h_push(h, q, &s);
	}
	h_ring(h, q);

	/* The CQ fills up: three entries, then nothing more. */
	{
		uint64_t end = h_now() + (uint64_t)H_TIMEOUT_MS * 1000000;

		while (!(__atomic_load_n(&q->cq[2].status, __ATOMIC_ACQUIRE) &
			 1)) {
			CHECK(h_now() < end);
			sched_yield();
		}
	}
	pause_ms(30); /* give a misbehaving device every chance */
	CHECK_EQ(__atomic_load_n(&q->cq[3].status, __ATOMIC_ACQUIRE), 0);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(__atomic_load_n(&q->cq[i].status, __ATOMIC_ACQUIRE),
			 1); /* success, phase 1 */
		CHECK_EQ(q->cq[i].cid, 100 + i);
	}

	/*
	 * Take what is posted without ringing: the slot after it must stay
	 * untouched until the head doorbell frees it. Then ring and go on;
	 * all 20 arrive in order.
	 */
	q->size = 4; /* now walk the 4-entry CQ */
	while (seen < 20) {
		unsigned int n = 20 - seen < 3 ? 20 - seen : 3;

		for (i = 0; i < n; i++) {
			CHECK_EQ(h_reap_noring(q, &c, H_TIMEOUT_MS), 0);
			CHECK_EQ(c.cid, 100 + seen);
			CHECK_ST_OK(NVQ_STATUS(c.status));
			CHECK_EQ(c.sq_id, 1);
			seen++;
		}
		pause_ms(2);
		CHECK(!h_cqe_ready(q));
		h_ring_cq(h, q);
	}
	pause_ms(5);
	CHECK(!h_cqe_ready(q));
	h_close(h);
}

int main(void)
{
	run("qpairs=2", false);
	run("qpairs=2,idle_spin=0", false);
	run("qpairs=2,idle_spin=0", true);
	run("qpairs=2,idle_spin=1s", true);
	return 0;
}
