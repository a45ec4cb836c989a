/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the waiter polling tests (method poll and hybrid): open the
 * emulated controller with a QoS method, count completions, wait for them
 * with deadlines that only catch hangs, and write-then-read-back rounds
 * that check every byte. Header-only: two tests use it, and its functions
 * are small.
 */
#ifndef NVQ_TESTS_QOS_SPIN_HELPERS_H
#define NVQ_TESTS_QOS_SPIN_HELPERS_H

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "qos_helpers.h"

#define SPIN_BLOCK 4096u
/* Far beyond any completion time, loaded or sanitized: only hangs. */
#define SPIN_DEADLINE_NS 10000000000ull

/* Open "emu:@params" with @nr_queues queues of @depth, @mode and QoS. */
static inline struct nvq_ctrl *spin_open(const char *params, enum nvq_mode mode,
					 unsigned int nr_queues,
					 unsigned int depth, int limit_us,
					 unsigned int timeout_ms,
					 enum nvq_qos_method method)
{
	struct nvq_ctrl *c = NULL;
	struct nvq_opts o;
	char uri[160];
	int rc;

	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = nr_queues;
	o.queue_depth = depth;
	o.cpu_lat_limit_us = limit_us;
	o.cpu_lat_timeout_ms = timeout_ms;
	o.cpu_lat_method = method;
	snprintf(uri, sizeof(uri), "emu:%s", params);
	rc = nvq_open(uri, &o, &c);
	if (rc)
		fprintf(stderr, "nvq_open(%s): %s\n", uri, nvq_errmsg());
	CHECK_OK(rc);
	return c;
}

/* Completions of one thread's requests. */
struct spin_count {
	int calls; /* atomic */
	int errors; /* atomic: completions with an error */
};

static inline void spin_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct spin_count *n = arg;

	if (cpl->err || cpl->status)
		__atomic_fetch_add(&n->errors, 1, __ATOMIC_RELAXED);
	/* Release: who sees the count sees the data the device wrote. */
	__atomic_fetch_add(&n->calls, 1, __ATOMIC_RELEASE);
}

static inline int spin_calls(struct spin_count *n)
{
	return __atomic_load_n(&n->calls, __ATOMIC_ACQUIRE);
}

/*
 * Wait until @n has seen @want calls. WAIT mode: in nvq_wait() on @q; where
 * nobody else reaps @q (@own) every wait must be woken by a completion
 * before its 10 s deadline (a lost wakeup fails), where others may reap
 * ours short waits are repeated. THREAD mode: the completion thread reaps. Either way the whole
 * wait may take at most SPIN_DEADLINE_NS.
 */
static inline void spin_wait_calls(struct nvq_queue *q, enum nvq_mode mode,
				   bool own, struct spin_count *n, int want)
{
	uint64_t t0 = nvq_now_ns();
	int r;

	while (spin_calls(n) < want) {
		if (nvq_now_ns() - t0 > SPIN_DEADLINE_NS)
			check_failed(__FILE__, __LINE__, "completions in time",
				     "%d of %d after 10 s", spin_calls(n),
				     want);
		if (mode == NVQ_MODE_THREAD) {
			usleep(20);
		} else if (own) {
			uint64_t w0 = nvq_now_ns();

			r = nvq_wait(q, 1, 10000);
			if (r <= 0)
				check_failed(__FILE__, __LINE__,
					     "nvq_wait() > 0",
					     "returned %d with %d of %d done",
					     r, spin_calls(n), want);
			/*
			 * At its deadline nvq_wait() reaps once more: a
			 * completion found only then had no wakeup.
			 */
			if (nvq_now_ns() - w0 >= 10000000000ull)
				check_failed(__FILE__, __LINE__,
					     "woken by the completion",
					     "nvq_wait() reaped %d only at "
					     "its 10 s deadline: lost wakeup",
					     r);
		} else {
			CHECK(nvq_wait(q, 1, 5) >= 0);
		}
	}
	CHECK_EQ(__atomic_load_n(&n->errors, __ATOMIC_RELAXED), 0);
}

/* Submit with a retry while the queue is full (shared queues). */
static inline void spin_submit(struct nvq_queue *q, enum nvq_mode mode,
			       bool write, void *buf, uint64_t lba,
			       struct spin_count *n)
{
	uint64_t t0 = nvq_now_ns();
	int rc;

	for (;;) {
		rc = write ? nvq_write(q, 1, buf, lba, 1, 0, spin_cb, n) :
			     nvq_read(q, 1, buf, lba, 1, 0, spin_cb, n);
		if (rc != -EAGAIN)
			break;
		CHECK(nvq_now_ns() - t0 < SPIN_DEADLINE_NS);
		if (mode == NVQ_MODE_THREAD)
			sched_yield();
		else
			CHECK(nvq_wait(q, 1, 1) >= 0);
	}
	CHECK_OK(rc);
}

/*
 * One round: write @batch blocks from @lba on with patterns of @seed, wait,
 * read them back into zeroed memory, wait, compare. @buf holds 2 * @batch
 * blocks of DMA memory.
 */
static inline void spin_round(struct nvq_queue *q, enum nvq_mode mode, bool own,
			      char *buf, unsigned int batch, uint64_t lba,
			      uint64_t seed)
{
	struct spin_count n = { 0 };
	char *in = buf + (size_t)batch * SPIN_BLOCK;
	unsigned int k;

	for (k = 0; k < batch; k++)
		fill_pattern(buf + (size_t)k * SPIN_BLOCK, SPIN_BLOCK,
			     seed * 1000 + k);
	memset(in, 0, (size_t)batch * SPIN_BLOCK);
	for (k = 0; k < batch; k++)
		spin_submit(q, mode, true, buf + (size_t)k * SPIN_BLOCK,
			    lba + k, &n);
	spin_wait_calls(q, mode, own, &n, (int)batch);
	for (k = 0; k < batch; k++)
		spin_submit(q, mode, false, in + (size_t)k * SPIN_BLOCK,
			    lba + k, &n);
	spin_wait_calls(q, mode, own, &n, 2 * (int)batch);
	CHECK_MEMEQ(in, buf, (size_t)batch * SPIN_BLOCK);
}

static inline struct nvq_qos_poll_stats spin_stats(struct nvq_queue *q)
{
	struct nvq_qos_poll_stats st;

	nvq_qos_queue_poll_stats(nvq_queue_qos(q), &st);
	return st;
}

static inline bool spin_active(struct nvq_queue *q)
{
	struct nvq_qos_stats st;

	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	return st.active;
}

#endif /* NVQ_TESTS_QOS_SPIN_HELPERS_H */
