// SPDX-License-Identifier: MIT
/*
 * Controller reset and failure, run by the watchdog thread (timeout.c), as
 * nvme_reset_work() runs for Linux's nvme driver:
 *
 *   1. quiesce: close every I/O queue's gate (nvq_queue_gate_close()) and
 *      take admin_lock. Submitters of shared queues wait on sq_lock, those
 *      of exclusive queues in nvq_queue_post(); reapers of shared queues
 *      wait on cq_lock, those of exclusive queues reap nothing meanwhile.
 *      Admin commands in flight give up with -EIO (the admin queue is
 *      emptied); new ones wait for admin_lock.
 *   2. stop the device: CC.EN = 0, CSTS.RDY = 0. It does no more DMA.
 *   3. take its commands back: completions already in a CQ keep the
 *      device's status; every other command in flight is submitted again
 *      unless a reset already did so NVQ_MAX_RETRIES times (then it fails
 *      with the cause's errno, or -ETIMEDOUT for the one that timed out).
 *   4. re-initialise: the admin queue's rings, CC.EN = 1, Set Features
 *      Number of Queues (at least as many as before), shadow doorbells,
 *      each I/O queue with its rings, vector and depth; what stayed in
 *      flight is posted again.
 *   5. open the gates; every queue's waiters and reapers are woken, and
 *      the completions recovery decided are delivered by each queue's own
 *      reaper, so callbacks run where they always run, exactly once.
 *
 * Queue handles stay valid throughout. A reset that fails at any step
 * fails the controller instead (nvq_ctrl_fail()): what is in flight
 * completes with the errno, later submissions get it at once, and
 * nvq_close() still works.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctrl.h"
#include "internal.h"
#include "request.h"

/* After step 3 of a reset or failure: complete what is left with @err. */
static void fail_inflight(struct nvq_ctrl *c, int err)
{
	uint64_t none = 0;
	unsigned int i;

	for (i = 0; i < c->nr_queues; i++)
		nvq_req_reset_collect(c->queues[i], err, 0, &none,
				      &c->st.failed);
}

static void mark_failed(struct nvq_ctrl *c, int err, const char *why)
{
	unsigned int i;

	snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", why);
	for (i = 0; i < c->nr_queues; i++)
		__atomic_store_n(&c->queues[i]->dead, err, __ATOMIC_RELEASE);
	__atomic_store_n(&c->failed, err, __ATOMIC_RELEASE);
	/* Nothing is left to delete or shut down at close. */
	c->enabled = false;
}

/*
 * Without a way to quiesce exclusive queues (no membarrier(2)), the old
 * way: completions of commands the device never finished are handed to
 * the reapers, and a submission racing with this may stay unanswered
 * until nvq_close().
 */
static void fail_unquiesced(struct nvq_ctrl *c, int err, const char *why)
{
	unsigned int i;

	mark_failed(c, err, why);
	for (i = 0; i < c->nr_queues; i++)
		__atomic_store_n(&c->queues[i]->gate, NVQ_GATE_DEAD,
				 __ATOMIC_RELEASE);
	if (err != -ENODEV)
		nvq_ctrl_disable(c);
	for (i = 0; i < c->nr_queues; i++) {
		nvq_req_recover_all(c->queues[i], err, &c->st.failed);
		nvq_queue_wake(c->queues[i]);
	}
}

/* The gates are closed: stop the device and take its commands back. */
static int stop_and_drain(struct nvq_ctrl *c, bool gone)
{
	unsigned int i;
	int rc = gone ? -ENODEV : nvq_ctrl_disable(c);

	/*
	 * What a gone device wrote is still valid; a device that does not
	 * stop (RDY stays 1) is failed like one that is gone.
	 */
	for (i = 0; i < c->nr_queues; i++)
		nvq_queue_drain_stopped(c->queues[i]);
	return rc;
}

void nvq_ctrl_fail(struct nvq_ctrl *c, int err, const char *why)
{
	if (__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE))
		return;
	if (nvq_queue_gate_close(c->queues, c->nr_queues)) {
		fail_unquiesced(c, err, why);
		return;
	}
	stop_and_drain(c, err == -ENODEV);
	fail_inflight(c, err);
	mark_failed(c, err, why);
	nvq_queue_gate_open(c->queues, c->nr_queues, true);
}

static int renegotiate_queues(struct nvq_ctrl *c)
{
	unsigned int n = c->nr_queues, granted;
	uint32_t result = 0;
	int rc;

	rc = nvq_ctrl_admin_simple(c, nvq_admin_set_features,
				   NVQ_FEAT_NUM_QUEUES, NVQ_NUM_QUEUES(n, n), 0,
				   0, &result);
	if (rc)
		return rc;
	granted = MIN((result & 0xffff) + 1, (result >> 16) + 1);
	if (granted < n)
		return nvq_err(
			-EIO,
			"after reset the controller grants %u I/O queues, %u are in use",
			granted, n);
	return 0;
}

int nvq_ctrl_reset_now(struct nvq_ctrl *c, int err, const char *why)
{
	uint64_t retried = 0;
	char msg[240];
	unsigned int i;
	int rc;

	rc = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);
	if (rc)
		return rc;
	__atomic_fetch_add(&c->st.resets, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->resetting, 1, __ATOMIC_SEQ_CST);
	if (nvq_queue_gate_close(c->queues, c->nr_queues)) {
		snprintf(
			msg, sizeof(msg),
			"%s; no reset: exclusive queues cannot be quiesced without membarrier(2)",
			why);
		fail_unquiesced(c, err, msg);
		__atomic_store_n(&c->resetting, 0, __ATOMIC_RELEASE);
		return err;
	}
	/* Admin waiters see resetting and give up within ~100 ms. */
	pthread_mutex_lock(&c->admin_lock);
	nvq_admin_in_reset = true;

	rc = stop_and_drain(c, nvq_ctrl_csts(c) == NVQ_REG_GONE32);
	if (!rc)
		for (i = 0; i < c->nr_queues; i++)
			nvq_req_reset_collect(c->queues[i], err,
					      NVQ_MAX_RETRIES, &retried,
					      &c->st.failed);
	if (!rc)
		rc = c->ops->admin_queue_reinit(c);
	if (!rc)
		rc = nvq_ctrl_enable(c);
	if (!rc)
		rc = renegotiate_queues(c);
	if (!rc)
		rc = c->ops->io_queues_recreate(c);
	if (rc) {
		int ferr = rc == -ENODEV ? -ENODEV : err;

		snprintf(msg, sizeof(msg), "%s; the reset failed: %s", why,
			 nvq_errmsg());
		/* The device must not DMA into what is handed back. */
		if (ferr != -ENODEV)
			nvq_ctrl_disable(c);
		fail_inflight(c, ferr);
		mark_failed(c, ferr, msg);
		rc = ferr;
	} else {
		__atomic_fetch_add(&c->st.retries, retried, __ATOMIC_RELAXED);
	}

	nvq_admin_in_reset = false;
	pthread_mutex_unlock(&c->admin_lock);
	__atomic_store_n(&c->resetting, 0, __ATOMIC_RELEASE);
	nvq_queue_gate_open(c->queues, c->nr_queues, rc != 0);
	return rc;
}

void nvq_ctrl_request_reset(struct nvq_ctrl *c, int err, const char *why)
{
	if (!c->wd_running)
		return;
	pthread_mutex_lock(&c->wd_lock);
	if (!c->reset_req) {
		c->reset_req = err;
		snprintf(c->reset_why, sizeof(c->reset_why), "%s", why);
	}
	pthread_cond_broadcast(&c->wd_cond);
	pthread_mutex_unlock(&c->wd_lock);
}

int nvq_ctrl_reset(struct nvq_ctrl *c)
{
	uint64_t gen;
	int rc;

	if (!c)
		return nvq_err(-EINVAL, "nvq_ctrl_reset: NULL controller");
	rc = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);
	if (rc)
		return nvq_err(rc, "the controller failed: %s", c->fail_msg);
	if (!c->wd_running)
		return nvq_err(-ENOTSUP, "no watchdog runs to reset with");
	pthread_mutex_lock(&c->wd_lock);
	gen = c->reset_gen;
	if (!c->reset_req) {
		c->reset_req = -EIO;
		snprintf(c->reset_why, sizeof(c->reset_why),
			 "reset asked for by the application");
	}
	pthread_cond_broadcast(&c->wd_cond);
	while (c->reset_gen == gen && !c->wd_stop)
		pthread_cond_wait(&c->wd_cond, &c->wd_lock);
	rc = c->reset_gen == gen ? -ECANCELED : c->reset_rc;
	pthread_mutex_unlock(&c->wd_lock);
	if (rc)
		return nvq_err(rc, "%s", c->fail_msg);
	return 0;
}
