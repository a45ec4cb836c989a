/* SPDX-License-Identifier: MIT */
/*
 * The two driver hooks nvq-perf measures with: CQE DW1 reaches the
 * callback (struct nvq_cpl.dw1), which on emu:stamp=1 is the posting time,
 * also for requests the driver split; and NVQ_OPEN_SINGLE_LOCK (libnvq_bench.a) gives
 * shared queues one lock for both halves (checked inside the queue).
 */
#include <string.h>
#include <time.h>

#include "check.h"
#include "ctrl.h"
#include "queue.h"

struct io {
	int done;
	int err;
	uint32_t dw1;
	uint64_t t2;
};

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void done(void *arg, const struct nvq_cpl *cpl)
{
	struct io *io = arg;

	io->t2 = now();
	io->err = cpl->err;
	io->dw1 = cpl->dw1;
	io->done = 1;
}

/* One read of @nlb blocks; returns its submit start time. */
static uint64_t one_read(struct nvq_queue *q, void *buf, uint32_t nlb,
			 struct io *io)
{
	uint64_t t0 = now();

	memset(io, 0, sizeof(*io));
	CHECK(!nvq_read(q, 1, buf, 0, nlb, 0, done, io));
	while (!io->done)
		CHECK(nvq_poll(q, 0) >= 0);
	CHECK(!io->err);
	return t0;
}

static void stamps(const char *uri, bool stamped)
{
	struct nvq_ctrl *c;
	struct nvq_opts o;
	struct nvq_queue *q;
	struct io io;
	void *buf;
	int i;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	if (nvq_open(uri, &o, &c)) {
		fprintf(stderr, "nvq_open(%s): %s\n", uri, nvq_errmsg());
		check_exit_fail();
		return;
	}
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 64 * 1024, -1);
	CHECK(q && buf);
	/* 1 block, and 16 blocks that mdts=2 (16 KiB) splits in four. */
	for (i = 0; i < 10; i++) {
		uint32_t nlb = i % 2 ? 16 : 1;
		uint64_t t0 = one_read(q, buf, nlb, &io);

		if (stamped)
			CHECK((uint32_t)(io.dw1 - (uint32_t)t0) <=
			      (uint32_t)(io.t2 - t0));
		else
			CHECK_EQ(io.dw1, 0);
	}
	nvq_dma_free(c, buf);
	nvq_close(c);
}

static void lock_mode(bool single, bool exclusive)
{
	struct nvq_ctrl *c;
	struct nvq_opts o;
	struct nvq_queue *q;
	struct io io;
	void *buf;

	nvq_opts_init(&o);
	o.nr_queues = 2;
	o.exclusive = exclusive;
	CHECK(!nvq_open_flags("emu:size=8M", &o,
			      single ? NVQ_OPEN_SINGLE_LOCK : 0, &c));
	q = nvq_ctrl_queue(c, 1);
	if (exclusive) {
		/* Exclusive queues take no lock at all, switch or not. */
		CHECK_EQ(q->lock_mode, NVQ_LOCK_NONE);
		CHECK(!q->sq_locked && !q->cq_locked);
	} else if (single) {
		CHECK_EQ(q->lock_mode, NVQ_LOCK_SINGLE);
		CHECK(q->cq_lockp == &q->sq_lock);
		CHECK(q->sq_locked && q->cq_locked);
	} else {
		CHECK_EQ(q->lock_mode, NVQ_LOCK_SPLIT);
		CHECK(q->cq_lockp == &q->cq_lock);
	}
	buf = nvq_dma_alloc(c, 4096, -1);
	one_read(q, buf, 1, &io);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

int main(void)
{
	stamps("emu:size=8M,mdts=2,stamp=1", true);
	stamps("emu:size=8M,mdts=2,stamp=1,lat=uniform:20us-40us", true);
	stamps("emu:size=8M,mdts=2", false);
	lock_mode(false, false);
	lock_mode(true, false);
	lock_mode(true, true);
	return T_EXIT_PASS;
}
