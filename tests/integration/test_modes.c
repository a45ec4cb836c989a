// SPDX-License-Identifier: MIT
/*
 * Completion modes and submission options: POLL (nvq_poll, nvq_wait spins),
 * WAIT (sleeps on the interrupt), THREAD (a completion thread; nvq_poll
 * and nvq_wait refused), exclusive queues (no locks), NVQ_IO_MORE batching
 * (one doorbell per batch) and nvq_queue_kick().
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "ctrl.h"

#define N 64

static struct nvq_ctrl *open_mode(enum nvq_mode mode, bool exclusive,
				  const char *uri)
{
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.mode = mode;
	o.exclusive = exclusive;
	o.nr_queues = 2;
	o.queue_depth = 128;
	return open_or_die(uri, &o);
}

/* Write N blocks, read them back, compare; all through callbacks. */
static void roundtrip(struct nvq_ctrl *c, struct nvq_queue *q,
		      enum nvq_mode mode)
{
	struct cb_count cnt = { 0 };
	char *w = nvq_dma_alloc(c, N * 4096, -1);
	char *r = nvq_dma_alloc(c, N * 4096, -1);
	int i;

	CHECK(w && r);
	fill_pattern(w, N * 4096, (uint64_t)mode + 1);
	for (i = 0; i < N; i++)
		CHECK_OK(nvq_write(q, 1, w + i * 4096, (uint64_t)i, 1, 0,
				   count_cb, &cnt));
	if (mode == NVQ_MODE_THREAD) {
		while (calls_of(&cnt) < N)
			sched_yield();
	} else {
		int got = 0;

		while (got < N) {
			int n = mode == NVQ_MODE_POLL ? nvq_poll(q, 0) :
							nvq_wait(q, 1, -1);

			CHECK(n >= 0);
			got += n;
		}
		CHECK_EQ(got, N);
	}
	CHECK_EQ(cnt.calls, N);
	CHECK_EQ(cnt.err, 0);
	for (i = 0; i < N; i++)
		CHECK_OK(nvq_read(q, 1, r + i * 4096, (uint64_t)i, 1, 0,
				  count_cb, &cnt));
	if (mode == NVQ_MODE_THREAD) {
		while (calls_of(&cnt) < 2 * N)
			sched_yield();
	} else {
		/* nvq_wait returns once min_cpl callbacks ran. */
		int got = 0;

		while (got < N) {
			int n = nvq_wait(q, (unsigned int)(N - got), -1);

			CHECK(n > 0);
			got += n;
		}
		CHECK_EQ(got, N);
	}
	CHECK_EQ(cnt.calls, 2 * N);
	CHECK(!memcmp(w, r, N * 4096));
	nvq_dma_free(c, w);
	nvq_dma_free(c, r);
}

static void test_poll(void)
{
	struct nvq_ctrl *c = open_mode(NVQ_MODE_POLL, false, "emu:size=4M");
	struct nvq_queue *q = nvq_ctrl_queue(c, 1);
	struct nvq_queue_stats st;

	roundtrip(c, q, NVQ_MODE_POLL);
	/* Nothing in flight: a wait with a timeout returns 0, one without
	 * minimum at once. */
	CHECK_EQ(nvq_wait(q, 1, 20), 0);
	CHECK_EQ(nvq_wait(q, 0, -1), 0);
	CHECK_EQ(nvq_poll(q, 0), 0);
	/* POLL mode: CQs without interrupts. */
	nvq_queue_stats(q, &st);
	CHECK_EQ(st.interrupts, 0);
	nvq_close(c);
}

static void test_wait(void)
{
	struct nvq_ctrl *c = open_mode(NVQ_MODE_WAIT, false, "emu:size=4M");
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);
	struct nvq_queue_stats st;

	roundtrip(c, q, NVQ_MODE_WAIT);
	CHECK_EQ(nvq_wait(q, 1, 20), 0);
	/* nvq_poll works in WAIT mode too. */
	CHECK_EQ(nvq_poll(q, 0), 0);
	nvq_queue_stats(q, &st);
	CHECK(st.interrupts > 0);
	nvq_close(c);
}

static void test_thread(bool exclusive)
{
	struct nvq_ctrl *c =
		open_mode(NVQ_MODE_THREAD, exclusive, "emu:size=4M");
	struct nvq_queue *q = nvq_ctrl_queue(c, 1);
	struct nvq_queue_stats st;
	unsigned int i, threads = 0;

	/* One completion thread per vector in use, pinned to the CPU that
	 * takes the vector's interrupts. */
	for (i = 0; i < c->nr_vectors; i++) {
		struct nvq_vector *v = &c->vectors[i];
		cpu_set_t set;

		CHECK_EQ(v->thread_running, v->nr_queues > 0);
		if (!v->thread_running)
			continue;
		threads++;
		CHECK_OK(pthread_getaffinity_np(v->thread, sizeof(set), &set));
		if (v->cpu >= 0) {
			CHECK_EQ(CPU_COUNT(&set), 1);
			CHECK(CPU_ISSET(v->cpu, &set));
		}
	}
	CHECK_EQ(threads, 2);
	roundtrip(c, q, NVQ_MODE_THREAD);
	CHECK_EQ(nvq_poll(q, 0), -EINVAL);
	CHECK_MSG("completion thread");
	CHECK_EQ(nvq_wait(q, 1, 10), -EINVAL);
	nvq_queue_stats(q, &st);
	CHECK(st.interrupts > 0);
	nvq_close(c);
}

static void test_exclusive(void)
{
	struct nvq_ctrl *c = open_mode(NVQ_MODE_POLL, true, "emu:size=4M");
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);

	/* No locks at all on an exclusive queue. */
	CHECK(!q->sq_locked);
	CHECK(!q->cq_locked);
	roundtrip(c, q, NVQ_MODE_POLL);
	nvq_close(c);

	c = open_mode(NVQ_MODE_POLL, false, "emu:size=4M");
	q = nvq_ctrl_queue(c, 0);
	CHECK(q->sq_locked && q->cq_locked);
	CHECK(q->cq_lockp == &q->cq_lock);
	nvq_close(c);
}

static void test_more(void)
{
	/* Shadow doorbells off: every doorbell is an MMIO write we count. */
	struct nvq_ctrl *c =
		open_mode(NVQ_MODE_POLL, false, "emu:size=4M,dbbuf=0");
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);
	struct nvq_queue_stats a, b;
	struct cb_count cnt = { 0 };
	char *buf = nvq_dma_alloc(c, 16 * 4096, -1);
	int i;

	CHECK(buf);
	/* Without NVQ_IO_MORE: one doorbell per request. */
	nvq_queue_stats(q, &a);
	for (i = 0; i < 16; i++)
		CHECK_OK(nvq_read(q, 1, buf + i * 4096, (uint64_t)i, 1, 0,
				  count_cb, &cnt));
	nvq_queue_stats(q, &b);
	CHECK_EQ(b.doorbells - a.doorbells, 16);
	reap_until(q, &cnt, 16);

	/* A batch of 16 with NVQ_IO_MORE and a plain last one: one. */
	a = b;
	for (i = 0; i < 16; i++)
		CHECK_OK(nvq_read(q, 1, buf + i * 4096, (uint64_t)i, 1,
				  i < 15 ? NVQ_IO_MORE : 0, count_cb, &cnt));
	nvq_queue_stats(q, &b);
	CHECK_EQ(b.submitted - a.submitted, 16);
	CHECK_EQ(b.doorbells - a.doorbells, 1);
	reap_until(q, &cnt, 32);

	/* All with NVQ_IO_MORE: nothing rings (and nothing completes)
	 * until nvq_queue_kick(). */
	a = b;
	for (i = 0; i < 8; i++)
		CHECK_OK(nvq_read(q, 1, buf + i * 4096, (uint64_t)i, 1,
				  NVQ_IO_MORE, count_cb, &cnt));
	nvq_queue_stats(q, &b);
	CHECK_EQ(b.doorbells - a.doorbells, 0);
	CHECK_EQ(nvq_queue_inflight(q), 8);
	nvq_queue_kick(q);
	nvq_queue_stats(q, &b);
	CHECK_EQ(b.doorbells - a.doorbells, 1);
	reap_until(q, &cnt, 40);
	/* A kick with nothing new does not ring. */
	nvq_queue_kick(q);
	nvq_queue_stats(q, &a);
	CHECK_EQ(a.doorbells, b.doorbells);
	CHECK_EQ(cnt.err, 0);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

int main(void)
{
	test_poll();
	test_wait();
	test_thread(false);
	test_thread(true);
	test_exclusive();
	test_more();
	printf("modes: ok\n");
	return 0;
}
