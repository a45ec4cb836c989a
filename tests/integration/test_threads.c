// SPDX-License-Identifier: MIT
/*
 * Several threads submitting on one shared queue at once: with a
 * completion thread reaping (THREAD mode), with the submitters reaping
 * each other's completions (WAIT mode, POLL mode), and with one lock for
 * both halves. Every callback runs exactly once, no error, and the data
 * each thread wrote reads back.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

#define THREADS 4
#define REQS 1500
#define QD 8
#define REGION 64 /* blocks per thread */

struct worker;

struct slot {
	struct worker *w;
	int seen;
	int err;
};

struct worker {
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	enum nvq_mode mode;
	int id;
	int inflight; /* atomic */
	int done; /* atomic */
	struct slot slots[REQS + REGION * 2];
	char *buf;
};

static void slot_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct slot *s = arg;

	s->err = cpl->err;
	__atomic_fetch_add(&s->seen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&s->w->inflight, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&s->w->done, 1, __ATOMIC_RELEASE);
}

/* Let completions happen: reap ourselves unless a thread does. */
static void progress(struct worker *w)
{
	if (w->mode == NVQ_MODE_THREAD)
		sched_yield();
	else if (w->mode == NVQ_MODE_WAIT)
		CHECK(nvq_wait(w->q, 1, 100) >= 0);
	else
		CHECK(nvq_poll(w->q, 0) >= 0);
}

static void wait_done(struct worker *w, int n)
{
	while (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) < n)
		progress(w);
}

static void submit(struct worker *w, int idx, int write, uint64_t lba,
		   char *buf)
{
	struct slot *s = &w->slots[idx];
	int rc;

	s->w = w;
	while (__atomic_load_n(&w->inflight, __ATOMIC_ACQUIRE) >= QD)
		progress(w);
	__atomic_fetch_add(&w->inflight, 1, __ATOMIC_RELAXED);
	for (;;) {
		rc = write ? nvq_write(w->q, 1, buf, lba, 1, 0, slot_cb, s) :
			     nvq_read(w->q, 1, buf, lba, 1, 0, slot_cb, s);
		if (rc != -EAGAIN)
			break;
		progress(w);
	}
	CHECK_OK(rc);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t seed = (uint64_t)w->id, base = (uint64_t)w->id * REGION;
	int i, n = 0;

	/* Stress: random reads and writes in our region. */
	for (i = 0; i < REQS; i++) {
		uint64_t b = test_rand(&seed) % REGION;

		submit(w, n++, (int)(test_rand(&seed) & 1), base + b,
		       w->buf + b * 4096);
	}
	wait_done(w, n);
	/* Then a pattern per block, read back into the second half. */
	for (i = 0; i < REGION; i++) {
		fill_pattern(w->buf + i * 4096, 4096, base + (uint64_t)i);
		submit(w, n++, 1, base + (uint64_t)i, w->buf + i * 4096);
	}
	wait_done(w, n);
	for (i = 0; i < REGION; i++)
		submit(w, n++, 0, base + (uint64_t)i,
		       w->buf + (REGION + i) * 4096);
	wait_done(w, n);
	CHECK(!memcmp(w->buf, w->buf + REGION * 4096, REGION * 4096));
	return NULL;
}

static void run(enum nvq_mode mode, unsigned int flags, const char *uri)
{
	static struct worker w[THREADS];
	struct nvq_opts o;
	struct nvq_ctrl *c = NULL;
	struct nvq_queue_stats st;
	pthread_t th[THREADS];
	int i, j;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 16;
	o.mode = mode;
	CHECK_OK(nvq_open_flags(uri, &o, flags, &c));
	for (i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].c = c;
		w[i].q = nvq_ctrl_queue(c, 0);
		w[i].mode = mode;
		w[i].id = i;
		w[i].buf = nvq_dma_alloc(c, 2 * REGION * 4096, -1);
		CHECK(w[i].buf);
	}
	for (i = 0; i < THREADS; i++)
		CHECK_OK(pthread_create(&th[i], NULL, worker_main, &w[i]));
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < THREADS; i++) {
		for (j = 0; j < REQS + 2 * REGION; j++) {
			CHECK_EQ(w[i].slots[j].seen, 1);
			CHECK_EQ(w[i].slots[j].err, 0);
		}
		nvq_dma_free(c, w[i].buf);
	}
	nvq_queue_stats(nvq_ctrl_queue(c, 0), &st);
	CHECK_EQ(st.submitted, THREADS * (REQS + 2 * REGION));
	CHECK_EQ(st.completed, st.submitted);
	CHECK_EQ(st.bad_cqes, 0);
	CHECK_EQ(nvq_queue_inflight(nvq_ctrl_queue(c, 0)), 0);
	if (mode != NVQ_MODE_POLL)
		CHECK(st.interrupts > 0);
	nvq_close(c);
}

int main(void)
{
	run(NVQ_MODE_THREAD, 0, "emu:size=4M");
	run(NVQ_MODE_WAIT, 0, "emu:size=4M");
	run(NVQ_MODE_POLL, 0, "emu:size=4M");
	/* The single-lock baseline behaves the same. */
	run(NVQ_MODE_THREAD, NVQ_OPEN_SINGLE_LOCK, "emu:size=4M,dbbuf=0");
	run(NVQ_MODE_WAIT, NVQ_OPEN_SINGLE_LOCK, "emu:size=4M");
	printf("threads: ok\n");
	return 0;
}
