// SPDX-License-Identifier: MIT
/*
 * Command timeouts: a watchdog thread per controller, as the block layer's
 * timeout timer is for Linux's nvme driver. Submission costs one load (the
 * watchdog's coarse clock, per batch) and one store per command (its
 * submission tick); no clock is read on the I/O path.
 *
 * Each period the watchdog reads CSTS - a controller that is gone
 * (all-ones) fails, one with fatal status (CSTS.CFS) is reset - and looks
 * at every in-flight I/O command. One older than the I/O timeout is
 * handled in the order nvme_timeout() uses:
 *   1. gone or CSTS.CFS: as above;
 *   2. its queue's CQ holds completions: the command is done, not late;
 *      if the interrupt eventfd is not signalled either, the interrupt
 *      was lost: signal it, so that the reaper wakes, and count a lost
 *      interrupt (once per queue and period; poll mode reaps by itself);
 *   3. first timeout: send Abort for it and give it another timeout;
 *   4. it times out again, or the Abort fails: reset the controller.
 * An admin command that times out asks for a reset too (admin.c), and so
 * does nvq_ctrl_reset(); the watchdog runs them (reset.c), so that only
 * one thread ever resets. A reset retries what was in flight; one that
 * fails, and a controller that is gone, fail the controller for good.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl.h"
#include "internal.h"
#include "request.h"

/* Watchdog period: a quarter of the shortest timeout, 10 ms .. 1 s. */
static unsigned int period_ms(struct nvq_ctrl *c)
{
	unsigned int io = __atomic_load_n(&c->io_timeout_ms, __ATOMIC_RELAXED);
	unsigned int p = io / 4;

	return MIN(MAX(p, 10u), 1000u);
}

static uint32_t clock_ms(struct nvq_ctrl *c)
{
	return (uint32_t)((nvq_now_ns() - c->wd_start_ns) / 1000000ull);
}

static bool send_abort(struct nvq_ctrl *c, struct nvq_queue *q,
		       struct nvq_cmd *cmd, uint32_t cid, uint32_t now)
{
	uint32_t result = 0;
	int rc;

	__atomic_fetch_add(&c->st.aborts, 1, __ATOMIC_RELAXED);
	cmd->tmo = NVQ_TMO_ABORTED | cid;
	/* Another full timeout for the Abort to work. */
	__atomic_store_n(&cmd->tick, now, __ATOMIC_RELAXED);
	rc = nvq_ctrl_admin_simple(c, nvq_admin_abort_cmd,
				   (uint32_t)q->qid | cid << 16, 0, 0, 0,
				   &result);
	if (!rc)
		return false;
	if (!__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE))
		nvq_ctrl_reset_now(c, -EIO,
				   "the Abort of a timed-out command failed");
	return true;
}

/*
 * One in-flight command older than the timeout. Returns true when the
 * controller was reset or failed: the scan starts over next period.
 */
static bool timed_out(struct nvq_ctrl *c, struct nvq_queue *q,
		      struct nvq_cmd *cmd, uint32_t cid, uint32_t now)
{
	uint32_t csts = nvq_ctrl_csts(c);

	if (csts == NVQ_REG_GONE32) {
		nvq_ctrl_fail(
			c, -ENODEV,
			"the controller is gone (registers read all-ones)");
		return true;
	}
	if (csts & NVQ_CSTS_CFS) {
		nvq_ctrl_reset_now(c, -EIO,
				   "controller fatal status (CSTS.CFS)");
		return true;
	}
	__atomic_fetch_add(&c->st.timeouts, 1, __ATOMIC_RELAXED);
	if (cmd->tmo != (NVQ_TMO_ABORTED | cid))
		return send_abort(c, q, cmd, cid, now);
	nvq_ctrl_reset_now(c, -ETIMEDOUT,
			   "a command timed out after its Abort");
	return true;
}

/* Whether any in-flight command of @q is older than @tmo. */
static bool oldest_late(struct nvq_queue *q, uint32_t now, uint32_t tmo)
{
	unsigned int tag;

	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);

		if ((st & NVQ_CMD_INFLIGHT) &&
		    (uint32_t)(now - __atomic_load_n(&cmd->tick,
						     __ATOMIC_RELAXED)) >= tmo)
			return true;
	}
	return false;
}

static bool is_posted(const uint16_t *cids, unsigned int n, uint32_t cid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (cids[i] == cid)
			return true;
	return false;
}

static bool scan_queue(struct nvq_ctrl *c, struct nvq_queue *q, uint32_t now,
		       uint32_t tmo, uint16_t *cids)
{
	unsigned int tag, nr_posted = 0;
	int rc;

	/*
	 * Completions wait in the CQ: those commands are done, not late.
	 * If a thread sleeps on the vector past the timeout, or nobody was
	 * told at all (the eventfd holds no signal), the interrupt was lost:
	 * stand in for it, once per queue and period. In poll mode the
	 * caller reaps when it polls.
	 */
	if (nvq_queue_pending(q)) {
		if (q->mode != NVQ_MODE_POLL && oldest_late(q, now, tmo) &&
		    (nvq_queue_sleeping(q) || !nvq_queue_irq_pending(q))) {
			__atomic_fetch_add(&c->st.lost_interrupts, 1,
					   __ATOMIC_RELAXED);
			nvq_queue_wake(q);
		}
		/*
		 * An exclusive queue's CQ cannot be read while its reaper
		 * runs: leave the whole queue for the next period.
		 */
		rc = nvq_queue_posted_cids(q, cids, q->nr_tags, false);
		if (rc < 0)
			return false;
		nr_posted = (unsigned int)rc;
	}
	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);
		uint32_t t;

		if (!(st & NVQ_CMD_INFLIGHT))
			continue;
		t = __atomic_load_n(&cmd->tick, __ATOMIC_RELAXED);
		if ((uint32_t)(now - t) < tmo ||
		    is_posted(cids, nr_posted, st & 0xffff))
			continue;
		if (timed_out(c, q, cmd, st & 0xffff, now))
			return true;
	}
	return false;
}

static void scan(struct nvq_ctrl *c, uint32_t now)
{
	uint32_t tmo = __atomic_load_n(&c->io_timeout_ms, __ATOMIC_RELAXED);
	unsigned int i;
	uint32_t csts;

	if (__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE))
		return;
	csts = nvq_ctrl_csts(c);
	if (csts == NVQ_REG_GONE32) {
		nvq_ctrl_fail(
			c, -ENODEV,
			"the controller is gone (registers read all-ones)");
		return;
	}
	if (csts & NVQ_CSTS_CFS) {
		nvq_ctrl_reset_now(c, -EIO,
				   "controller fatal status (CSTS.CFS)");
		return;
	}
	for (i = 0; i < c->nr_queues; i++)
		if (scan_queue(c, c->queues[i], now, tmo, c->wd_cids))
			return;
}

/* A reset someone asked for (wd_lock held; dropped while it runs). */
static void requested_reset(struct nvq_ctrl *c)
{
	char why[sizeof(c->reset_why)];
	int err = c->reset_req, rc;

	memcpy(why, c->reset_why, sizeof(why));
	pthread_mutex_unlock(&c->wd_lock);
	rc = nvq_ctrl_reset_now(c, err, why);
	pthread_mutex_lock(&c->wd_lock);
	c->reset_req = 0;
	c->reset_rc = rc;
	c->reset_gen++;
	pthread_cond_broadcast(&c->wd_cond);
}

static void *watchdog_main(void *arg)
{
	struct nvq_ctrl *c = arg;

	pthread_mutex_lock(&c->wd_lock);
	while (!c->wd_stop) {
		uint64_t at = nvq_now_ns() + period_ms(c) * 1000000ull;
		struct timespec ts = { .tv_sec = (time_t)(at / 1000000000ull),
				       .tv_nsec = (long)(at % 1000000000ull) };
		uint32_t now;

		if (!c->reset_req)
			pthread_cond_timedwait(&c->wd_cond, &c->wd_lock, &ts);
		if (c->wd_stop)
			break;
		if (c->reset_req) {
			requested_reset(c);
			continue;
		}
		pthread_mutex_unlock(&c->wd_lock);
		now = clock_ms(c);
		__atomic_store_n(&c->wd_clock, now, __ATOMIC_RELAXED);
		scan(c, now);
		pthread_mutex_lock(&c->wd_lock);
	}
	pthread_mutex_unlock(&c->wd_lock);
	return NULL;
}

int nvq_watchdog_start(struct nvq_ctrl *c)
{
	pthread_condattr_t ca;
	int rc;

	c->wd_start_ns = nvq_now_ns();
	/* One CID per tag of the largest queue (65536 entries). */
	c->wd_cids = calloc(65536, sizeof(*c->wd_cids));
	if (!c->wd_cids)
		return nvq_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&c->wd_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wd_cond, &ca);
	pthread_condattr_destroy(&ca);
	c->wd_init = true;
	rc = pthread_create(&c->wd_thread, NULL, watchdog_main, c);
	if (rc)
		return nvq_err(-rc, "cannot start the timeout watchdog: %s",
			       strerror(rc));
	pthread_setname_np(c->wd_thread, "nvq-watchdog");
	c->wd_running = true;
	return 0;
}

void nvq_watchdog_stop(struct nvq_ctrl *c)
{
	if (c->wd_init) {
		if (c->wd_running) {
			/* A reset may wait on the device: end that first. */
			if (c->t && c->t->ops->cancel)
				c->t->ops->cancel(c->t);
			pthread_mutex_lock(&c->wd_lock);
			c->wd_stop = true;
			pthread_cond_signal(&c->wd_cond);
			pthread_mutex_unlock(&c->wd_lock);
			pthread_join(c->wd_thread, NULL);
			c->wd_running = false;
		}
		pthread_cond_destroy(&c->wd_cond);
		pthread_mutex_destroy(&c->wd_lock);
		c->wd_init = false;
	}
	/* After the join: the thread scans with it. */
	free(c->wd_cids);
	c->wd_cids = NULL;
}

int nvq_abort(struct nvq_queue *q, void *arg)
{
	struct nvq_ctrl *c;
	unsigned int tag;
	int n = 0, rc;

	if (!q || !q->ctrl)
		return nvq_err(-EINVAL, "nvq_abort: NULL queue");
	c = q->ctrl;
	rc = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);
	if (rc)
		return nvq_err(rc, "the controller failed: %s", c->fail_msg);
	/*
	 * One Abort per command of the request(s), as SPDK's
	 * spdk_nvme_ctrlr_cmd_abort_ext() matches the callback argument. A
	 * command that completes meanwhile keeps its own completion; the
	 * CID's generation bits make a reused slot unlikely to match.
	 */
	for (tag = 0; tag < q->nr_tags; tag++) {
		struct nvq_cmd *cmd = &q->cmds[tag];
		uint32_t st = __atomic_load_n(&cmd->state, __ATOMIC_ACQUIRE);

		if (!(st & NVQ_CMD_INFLIGHT) || cmd->lead->arg != arg)
			continue;
		__atomic_fetch_add(&c->st.aborts, 1, __ATOMIC_RELAXED);
		rc = nvq_ctrl_admin_simple(
			c, nvq_admin_abort_cmd,
			(uint32_t)q->qid | (st & 0xffff) << 16, 0, 0, 0, NULL);
		if (rc)
			return rc;
		n++;
	}
	return n;
}
