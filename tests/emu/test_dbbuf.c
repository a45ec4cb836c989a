// SPDX-License-Identifier: MIT
/*
 * Shadow doorbells: after Doorbell Buffer Config, I/O queues take their
 * tail/head from the shadow page and the host rings MMIO only when
 * EventIdx asks. While the device polls, almost no MMIO writes are
 * needed; when it sleeps between commands, the EventIdx it publishes
 * before sleeping makes the host ring, and no submission is ever lost.
 */
#include <sched.h>
#include <string.h>

#include "harness.h"

static void dbbuf_on(struct h *h)
{
	struct nvq_sqe s = h_sqe(nvq_admin_dbbuf);

	h->dbbuf = h_alloc(h, 4096, &h->dbbuf_iova);
	h->ei = h_alloc(h, 4096, &h->ei_iova);
	s.prp1 = h->dbbuf_iova;
	s.prp2 = h->ei_iova;
	CHECK_ST_OK(h_admin(h, &s, NULL));
}

static void batch(struct h *h, struct hq *q, uint8_t opcode, uint8_t *b,
		  unsigned int first, unsigned int depth)
{
	struct nvq_sqe s;
	struct nvq_cqe c;
	unsigned int i;

	for (i = 0; i < depth; i++) {
		s = h_sqe(opcode);
		s.nsid = 1;
		s.cdw10 = (first + i) % 64;
		s.cid = (uint16_t)i;
		h_prp(h, &s, b + 4096 * i, 4096);
		h_push(h, q, &s);
		h_ring(h, q);
	}
	for (i = 0; i < depth; i++) {
		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
	}
}

/* @n writes and @n reads, @depth at a time, data verified; returns the
 * number of MMIO doorbell writes. */
static uint64_t traffic(struct h *h, struct hq *q, unsigned int n,
			unsigned int depth)
{
	uint8_t *b = h_alloc(h, 4096 * depth, NULL);
	uint64_t before = h->mmio_db_writes;
	unsigned int done, i;

	for (done = 0; done < n; done += depth) {
		for (i = 0; i < depth; i++)
			memset(b + 4096 * i, (int)(done + i), 4096);
		batch(h, q, nvq_cmd_write, b, done, depth);
		memset(b, 0xee, 4096 * depth);
		batch(h, q, nvq_cmd_read, b, done, depth);
		for (i = 0; i < depth; i++)
			CHECK_EQ(b[4096 * i + 4095], (uint8_t)(done + i));
	}
	return h->mmio_db_writes - before;
}

static void polling_device(void)
{
	/* idle_spin far above any gap between commands: it never sleeps. */
	struct h *h = h_open("qpairs=4,idle_spin=30s");
	struct hq *q;
	uint64_t mmio, updates;

	h_enable(h);
	dbbuf_on(h);
	q = h_ioq(h, 1, 64, false, 0);
	CHECK(q->shadow);
	updates = h->shadow_updates;
	mmio = traffic(h, q, 4000, 8);
	updates = h->shadow_updates - updates;
	printf("polling device: %llu shadow updates, %llu MMIO doorbells\n",
	       (unsigned long long)updates, (unsigned long long)mmio);
	/* Rings happen only when EventIdx was passed: about once a lap. */
	CHECK(mmio * 4 < updates);
	/* The admin queue ignores the shadow page: MMIO still works. */
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, h_alloc(h, 4096, NULL)));
	/* A second queue created after the config uses it from the start. */
	q = h_ioq(h, 2, 16, false, 0);
	traffic(h, q, 400, 4);
	h_close(h);
}

static void sleeping_device(void)
{
	/* Sleeps as soon as idle: every submission may need a ring. */
	struct h *h = h_open("qpairs=4,idle_spin=0");
	struct hq *q;
	uint64_t mmio, end;

	h_enable(h);
	dbbuf_on(h);
	q = h_ioq(h, 1, 32, false, 0);
	mmio = traffic(h, q, 3000, 1);
	CHECK(mmio > 0);
	traffic(h, q, 1000, 5);
	/* Before sleeping the device publishes EventIdx = tail. */
	end = h_now() + (uint64_t)H_TIMEOUT_MS * 1000000;
	while (__atomic_load_n(q->ei_sq, __ATOMIC_ACQUIRE) != q->sq_tail) {
		CHECK(h_now() < end);
		sched_yield();
	}
	h_close(h);
}

/* Queues that exist before the config switch over without a glitch. */
static void existing_queues(void)
{
	struct h *h = h_open("qpairs=4");
	struct hq *q;

	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	traffic(h, q, 37, 1); /* tail and head away from 0 */
	dbbuf_on(h);
	/* The device seeded the shadow words with the current values. */
	CHECK_EQ(__atomic_load_n(h->dbbuf + nvq_sq_db_index(1, 0),
				 __ATOMIC_ACQUIRE),
		 q->sq_tail);
	CHECK_EQ(__atomic_load_n(h->dbbuf + nvq_cq_db_index(1, 0),
				 __ATOMIC_ACQUIRE),
		 q->cq_head);
	q->shadow = true;
	q->sdb_sq = h->dbbuf + nvq_sq_db_index(1, 0);
	q->sdb_cq = h->dbbuf + nvq_cq_db_index(1, 0);
	q->ei_sq = h->ei + nvq_sq_db_index(1, 0);
	q->ei_cq = h->ei + nvq_cq_db_index(1, 0);
	traffic(h, q, 200, 3);
	/* A reset forgets the config: MMIO doorbells again. */
	h_disable(h);
	h->dbbuf = NULL;
	h_enable(h);
	q = h_ioq(h, 1, 16, false, 0);
	CHECK(!q->shadow);
	traffic(h, q, 50, 2);
	h_close(h);
}

int main(void)
{
	polling_device();
	sleeping_device();
	existing_queues();
	return 0;
}
