// SPDX-License-Identifier: MIT
/*
 * Host threads against the device thread: I/O on several queues at once
 * (one thread per queue, some waiting on their interrupt eventfd), DMA
 * map/unmap churn while the device runs, register reads and admin
 * commands from yet another thread. Data is verified; run under TSan.
 */
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define NQ 3
#define ROUNDS 300

static struct h *h;
static uint8_t *bufs[NQ + 1];
static uint8_t *churn_mem;

struct worker {
	struct hq *q;
	int irq_fd; /* -1: poll the CQ */
	unsigned int id;
};

static void wait_cqe(struct worker *w)
{
	struct pollfd p = { .fd = w->irq_fd, .events = POLLIN };
	uint64_t v;

	if (w->irq_fd < 0)
		return;
	while (!h_cqe_ready(w->q)) {
		CHECK(poll(&p, 1, H_TIMEOUT_MS) == 1);
		if (read(w->irq_fd, &v, sizeof(v)) < 0) {
			/* raced with another reader: look again */
		}
	}
}

static void *io_worker(void *arg)
{
	struct worker *w = arg;
	uint8_t *b = bufs[w->id];
	unsigned int r, i;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t slba = w->id * 1000 + r % 64;
		struct nvq_sqe s;
		struct nvq_cqe c;

		memset(b, (int)(r + w->id), 8192);
		s = h_sqe(nvq_cmd_write);
		s.nsid = 1;
		s.cdw10 = (uint32_t)slba;
		s.cdw12 = 1;
		h_prp(h, &s, b, 8192); /* no list: 2 pages */
		h_push(h, w->q, &s);
		h_ring(h, w->q);
		wait_cqe(w);
		CHECK_EQ(h_reap(h, w->q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
		memset(b, 0, 8192);
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		s.cdw10 = (uint32_t)slba;
		s.cdw12 = 1;
		h_prp(h, &s, b, 8192);
		h_push(h, w->q, &s);
		h_ring(h, w->q);
		wait_cqe(w);
		CHECK_EQ(h_reap(h, w->q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
		for (i = 0; i < 8192; i += 511)
			CHECK_EQ(b[i], (uint8_t)(r + w->id));
	}
	return NULL;
}

/* Map a page, use it, unmap it, check the device lets go of it. */
static void *churn(void *arg)
{
	struct hq *q = arg;
	const struct nvq_transport_ops *o = h->ops;
	unsigned int r;

	for (r = 0; r < ROUNDS; r++) {
		uint8_t *p = churn_mem + (r % 4) * 4096;
		struct nvq_sqe s;
		uint64_t iova;

		CHECK_EQ(o->dma_map(h->t, p, 4096, &iova), 0);
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		s.cdw10 = 5000;
		s.prp1 = iova;
		CHECK_ST_OK(h_cmd(h, q, &s, NULL));
		CHECK_EQ(o->dma_unmap(h->t, p, 4096), 0);
		/* The device may no longer write it. */
		memset(p, 0x11, 4096);
		s = h_sqe(nvq_cmd_read);
		s.nsid = 1;
		s.cdw10 = 5000;
		s.prp1 = iova;
		CHECK_ST(h_cmd(h, q, &s, NULL), NVQ_SCT_GENERIC,
			 NVQ_SC_DATA_XFER_ERROR);
		CHECK_EQ(p[0], 0x11);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[NQ + 1];
	struct worker w[NQ];
	struct hq *q[NQ + 1];
	uint8_t *id;
	unsigned int i, r;

	h = h_open("size=64M,qpairs=4,msix=3,idle_spin=0");
	h_enable(h);
	for (i = 0; i < NQ + 1; i++) {
		q[i] = h_ioq(h, (uint16_t)(i + 1), 16, i % 2 == 0,
			     (uint16_t)(1 + i % 2));
		bufs[i] = h_alloc(h, 8192, NULL);
	}
	id = h_alloc(h, 4096, NULL);
	churn_mem = aligned_alloc(4096, 4 * 4096);
	CHECK(churn_mem);
	for (i = 0; i < NQ; i++) {
		w[i].q = q[i];
		w[i].id = i;
		/* Queues 1 and 3 share vector 1: only q1 waits on it. */
		w[i].irq_fd = i == 0 ? h->ops->irq_fd(h->t, 1) : -1;
		CHECK_EQ(pthread_create(&th[i], NULL, io_worker, &w[i]), 0);
	}
	CHECK_EQ(pthread_create(&th[NQ], NULL, churn, q[NQ]), 0);
	/* Admin traffic and register reads meanwhile. */
	for (r = 0; r < ROUNDS; r++) {
		CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, id));
		CHECK_EQ(h->ops->reg_read32(h->t, NVQ_REG_CSTS) &
				 (NVQ_CSTS_RDY | NVQ_CSTS_CFS),
			 NVQ_CSTS_RDY);
	}
	for (i = 0; i < NQ + 1; i++)
		pthread_join(th[i], NULL);
	free(churn_mem);
	h_close(h);
	return 0;
}
