// SPDX-License-Identifier: MIT
/*
 * Waiter polling masks and unmasks the interrupt vector all the time; no
 * completion may be lost to it. Four threads do a few hundred I/Os each
 * with random gaps of up to 3 ms (the inactivity timeout is 1 ms, so their
 * queues keep going idle and active), with now and then a wait on nothing
 * that polls until the queue goes idle and then sleeps on the interrupt -
 * while other threads poll with it masked:
 *   - all four on one shared queue;
 *   - each on its own queue, the four queues sharing one vector (msix=2):
 *     here every wait must reap within 10 s, so a lost wakeup fails;
 *   - both again with the hybrid waiter, and in THREAD mode (the
 *     completion thread polls).
 * Each I/O is a write and a read back of the thread's own blocks, checked
 * byte for byte. Afterwards, with the limit off, every queue still gets
 * its interrupts. In suite "concurrency": the TSan build runs it.
 */
#include <pthread.h>

#include "spin_helpers.h"
#include "wire_helpers.h"

#define THREADS 4
#define ITERS 150
#define PARAMS_ONE "size=16M,lat=50us,qpairs=4"
#define PARAMS_SHARED_VEC "size=16M,lat=50us,qpairs=4,msix=2"

struct job {
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	enum nvq_mode mode;
	bool own; /* nobody else reaps q */
	int id;
	uint64_t seed;
};

static void gap(uint64_t *rs)
{
	uint64_t r = test_rand(rs);

	/* Half back to back, half an idle gap of up to 3 ms. */
	if (r & 1)
		usleep((useconds_t)((r >> 8) % 3000));
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	char *buf = nvq_dma_alloc(j->c, 8 * SPIN_BLOCK, -1);
	uint64_t rs = j->seed ^ (uint64_t)j->id * 0x9e3779b97f4a7c15ull;
	uint64_t base = (uint64_t)j->id * 256;
	int i, r;

	CHECK(buf != NULL);
	for (i = 0; i < ITERS; i++) {
		unsigned int batch = 1 + (unsigned int)(test_rand(&rs) % 4);

		spin_round(j->q, j->mode, j->own, buf, batch,
			   base + ((uint64_t)i * 4) % 248,
			   (uint64_t)j->id * 100000 + (uint64_t)i);
		/*
		 * Now and then a wait with nothing of ours in flight: it
		 * polls until the queue goes idle, then unmasks and sleeps
		 * until its deadline, beside threads polling masked.
		 */
		if (j->mode == NVQ_MODE_WAIT && j->own && i % 8 == 7) {
			r = nvq_wait(j->q, 1, 5);
			CHECK_EQ(r, 0);
		}
		gap(&rs);
	}
	nvq_dma_free(j->c, buf);
	return NULL;
}

/* With the limit off, each queue's waiter sleeps on the interrupt. */
static void check_unmasked(struct nvq_ctrl *c, enum nvq_mode mode)
{
	unsigned int i, nq = nvq_ctrl_queue_count(c);
	char *buf = nvq_dma_alloc(c, 2 * SPIN_BLOCK, -1);

	CHECK(buf != NULL);
	CHECK_OK(nvq_qos_set_limit(nvq_ctrl_qos(c), NVQ_QOS_OFF));
	for (i = 0; i < nq; i++) {
		struct nvq_queue *q = nvq_ctrl_queue(c, i);
		int k;

		CHECK(!spin_active(q));
		for (k = 0; k < 4; k++)
			spin_round(q, mode, true, buf, 1, 3000 + i * 8 + k,
				   7000 + i * 8 + k);
	}
	nvq_dma_free(c, buf);
}

static uint64_t total_polls;

static void run(const char *what, const char *params, enum nvq_mode mode,
		enum nvq_qos_method method, bool own, uint64_t seed)
{
	struct job jobs[THREADS];
	pthread_t t[THREADS];
	struct nvq_qos_poll_stats ps;
	uint64_t polls = 0, masked = 0, idle = 0, sleeps = 0;
	struct nvq_ctrl *c;
	unsigned int i;

	c = spin_open(params, mode, own ? THREADS : 1, 32, 0, 1, method);
	for (i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){
			.c = c,
			.q = nvq_ctrl_queue(c, own ? i : 0),
			.mode = mode,
			.own = own,
			.id = (int)i,
			.seed = seed,
		};
		CHECK(jobs[i].q != NULL);
		CHECK_OK(pthread_create(&t[i], NULL, job_main, &jobs[i]));
	}
	for (i = 0; i < THREADS; i++)
		CHECK_OK(pthread_join(t[i], NULL));
	for (i = 0; i < nvq_ctrl_queue_count(c); i++) {
		ps = spin_stats(nvq_ctrl_queue(c, i));
		polls += ps.polls;
		masked += ps.masked;
		idle += ps.idle_sleeps;
		sleeps += ps.sleeps;
	}
	printf("%s: polls %llu masked %llu idle_sleeps %llu sleeps %llu\n",
	       what, (unsigned long long)polls, (unsigned long long)masked,
	       (unsigned long long)idle, (unsigned long long)sleeps);
	fflush(stdout);
	total_polls += polls;
	check_unmasked(c, mode);
	/* Waiter methods never write PM QoS files. */
	CHECK_EQ(nvq_qos_record_count(), 0);
	nvq_close(c);
}

int main(void)
{
	uint64_t seed = test_seed("qos-spin-stress", 0x5eed5);

	/* Before anything may measure it (once per process). */
	CHECK_OK(setenv("NVQ_QOS_WAKE_NS", "10000,20000", 1));
	wire_fake_root("0");

	run("wait/poll, one queue", PARAMS_ONE, NVQ_MODE_WAIT,
	    NVQ_QOS_METHOD_POLL, false, seed);
	run("wait/poll, one vector", PARAMS_SHARED_VEC, NVQ_MODE_WAIT,
	    NVQ_QOS_METHOD_POLL, true, seed + 1);
	run("wait/hybrid, one queue", PARAMS_ONE, NVQ_MODE_WAIT,
	    NVQ_QOS_METHOD_HYBRID, false, seed + 2);
	run("wait/hybrid, one vector", PARAMS_SHARED_VEC, NVQ_MODE_WAIT,
	    NVQ_QOS_METHOD_HYBRID, true, seed + 3);
	run("thread/poll, one queue", PARAMS_ONE, NVQ_MODE_THREAD,
	    NVQ_QOS_METHOD_POLL, false, seed + 4);
	run("thread/poll, one vector", PARAMS_SHARED_VEC, NVQ_MODE_THREAD,
	    NVQ_QOS_METHOD_POLL, true, seed + 5);
	/* Thousands of waits on 50 us media: some polled. */
	CHECK(total_polls > 0);
	printf("qos-spin-stress: ok\n");
	return 0;
}
