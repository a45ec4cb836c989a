// SPDX-License-Identifier: MIT
/*
 * Command timeouts (lib/nvme/timeout.c): an I/O command the device sits on
 * (emu:lat=600s, every command takes ten minutes) times out after
 * io_timeout_ms, the watchdog aborts it, and its callback runs once, in
 * the queue's own reaping context, with the Abort's status - in every
 * completion mode. The run-time setter and the counters say what
 * happened. No timing is asserted: a loaded machine only makes it slower.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

#define STUCK "emu:lat=600s,size=1M"

/* The thread that ran the callback, to check where completions land. */
struct where {
	struct cb_count cnt;
	pthread_t thread;
};

static void where_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct where *w = arg;

	w->thread = pthread_self();
	count_cb(&w->cnt, cpl);
}

static void stuck_read(enum nvq_mode mode, bool exclusive)
{
	struct nvq_ctrl_stats st;
	struct where w = { 0 };
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_opts o;
	void *buf;

	nvq_opts_init(&o);
	o.mode = mode;
	o.exclusive = exclusive;
	o.nr_queues = 1;
	o.io_timeout_ms = 100;
	c = open_or_die(STUCK, &o);
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf != NULL);
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, where_cb, &w));
	if (mode == NVQ_MODE_THREAD) {
		while (!calls_of(&w.cnt))
			sched_yield();
	} else {
		/* Poll mode spins in nvq_wait; wait mode sleeps. */
		while (!calls_of(&w.cnt))
			CHECK(nvq_wait(q, 1, 1000) >= 0);
		CHECK(pthread_equal(w.thread, pthread_self()));
	}
	CHECK_EQ(calls_of(&w.cnt), 1);
	/* The emulator honours Abort for a command it still holds. */
	CHECK_EQ(w.cnt.err, -EIO);
	CHECK_EQ(NVQ_SCT(w.cnt.status), NVQ_SCT_GENERIC);
	CHECK_EQ(NVQ_SC(w.cnt.status), NVQ_SC_ABORT_REQ);
	CHECK_OK(nvq_ctrl_stats(c, &st));
	CHECK_EQ(st.size, sizeof(st));
	CHECK(st.timeouts >= 1);
	/*
	 * One Abort, unless a loaded machine kept its completion from
	 * being reaped for another timeout: then a reset retried the read
	 * and a later Abort took it back. Either way no command failed.
	 */
	CHECK(st.aborts >= 1);
	CHECK_EQ(st.failed, 0);
	CHECK_EQ(st.gone, 0);
	/* The controller still works: another stuck read times out too. */
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, where_cb, &w));
	if (mode == NVQ_MODE_THREAD) {
		while (calls_of(&w.cnt) < 2)
			sched_yield();
	} else {
		while (calls_of(&w.cnt) < 2)
			CHECK(nvq_wait(q, 1, 1000) >= 0);
	}
	CHECK_EQ(NVQ_SC(w.cnt.status), NVQ_SC_ABORT_REQ);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

/* The synchronous helpers return instead of waiting ten minutes. */
static void stuck_sync(void)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	uint16_t status = 0;
	char buf[4096];

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.io_timeout_ms = 100;
	c = open_or_die(STUCK, &o);
	CHECK_EQ(nvq_read_sync(c, 1, buf, 0, 1, &status), -EIO);
	CHECK_EQ(NVQ_SC(status), NVQ_SC_ABORT_REQ);
	nvq_close(c);
}

/*
 * A lost interrupt, deterministically: every completion's MSI-X is
 * dropped, and the test does not reap until the watchdog has seen the CQE
 * wait past the timeout with the eventfd unsignalled. Then it must have
 * counted a lost interrupt and signalled the eventfd, so that a wait with
 * no timeout returns.
 */
static void lost_irq(void)
{
	struct cb_count cnt = { 0 };
	struct nvq_ctrl_stats st;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	char *buf;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.mode = NVQ_MODE_WAIT;
	o.io_timeout_ms = 50;
	c = open_or_die("emu:size=1M,fault=no-irq@count=inf", &o);
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 4096, -1);
	CHECK(buf != NULL);
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, count_cb, &cnt));
	do {
		usleep(10000);
		CHECK_OK(nvq_ctrl_stats(c, &st));
	} while (!st.lost_interrupts);
	CHECK_EQ(calls_of(&cnt), 0);
	/* Forever: only the eventfd the watchdog wrote wakes it. */
	CHECK(nvq_wait(q, 1, -1) >= 1);
	CHECK_EQ(cnt.err, 0);
	CHECK_EQ(st.timeouts, 0);
	CHECK_EQ(st.aborts, 0);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

/*
 * nvq_abort(): the application aborts one of three stuck reads by its
 * callback argument; only that one completes, with Command Abort
 * Requested; close cancels the other two. No timeout is involved (the
 * longest there is). Abort is best effort: one that reaches the device
 * before it fetched the read finds nothing, so the test asks again until
 * the read is back, as an application would.
 */
static void app_abort(void)
{
	struct cb_count a = { 0 }, b = { 0 };
	struct nvq_ctrl_stats st;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	char *buf;

	unsigned int sent = 0;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.io_timeout_ms = NVQ_TIMEOUT_MS_MAX;
	c = open_or_die(STUCK, &o);
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 3 * 4096, -1);
	CHECK(buf != NULL);
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, count_cb, &a));
	CHECK_OK(nvq_read(q, 1, buf + 4096, 1, 1, 0, count_cb, &b));
	CHECK_OK(nvq_read(q, 1, buf + 8192, 2, 1, 0, count_cb, &b));
	while (!calls_of(&a)) {
		int rc = nvq_abort(q, &a);

		CHECK(rc == 0 || rc == 1);
		sent += (unsigned int)rc;
		CHECK(nvq_wait(q, 1, 10) >= 0);
	}
	CHECK(sent >= 1);
	CHECK_EQ(a.err, -EIO);
	CHECK_EQ(NVQ_SC(a.status), NVQ_SC_ABORT_REQ);
	CHECK_EQ(calls_of(&b), 0);
	CHECK_EQ(nvq_abort(q, &a), 0); /* nothing left with &a */
	CHECK_EQ(nvq_queue_inflight(q), 2);
	CHECK_OK(nvq_ctrl_stats(c, &st));
	CHECK_EQ(st.aborts, sent);
	CHECK_EQ(st.timeouts, 0);
	nvq_close(c);
	CHECK_EQ(calls_of(&b), 2);
	CHECK_EQ(b.err, -ECANCELED);
	CHECK_EQ(calls_of(&a), 1);
}

static void setters(void)
{
	unsigned int io = 0, admin = 0;
	struct nvq_ctrl *c = open_or_die("emu:size=1M", NULL);

	CHECK_OK(nvq_ctrl_timeouts(c, &io, &admin));
	CHECK_EQ(io, 30000);
	CHECK_EQ(admin, 60000);
	CHECK_OK(nvq_ctrl_set_timeouts(c, 500, 0));
	CHECK_OK(nvq_ctrl_timeouts(c, &io, &admin));
	CHECK_EQ(io, 500);
	CHECK_EQ(admin, 60000);
	CHECK_EQ(nvq_ctrl_set_timeouts(c, 3600001, 0), -EINVAL);
	CHECK_MSG("out of range");
	CHECK_EQ(nvq_ctrl_set_timeouts(NULL, 1, 1), -EINVAL);
	CHECK_EQ(nvq_ctrl_timeouts(NULL, &io, &admin), -EINVAL);
	CHECK_OK(nvq_ctrl_timeouts(c, NULL, NULL));
	nvq_close(c);
}

static void bad_opts(void)
{
	struct nvq_ctrl *c;
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.io_timeout_ms = 3600001;
	CHECK_EQ(nvq_open("emu:size=1M", &o, &c), -EINVAL);
	CHECK_MSG("timeout");
}

/* A controller that never comes ready: the open fails, bounded by CAP.TO. */
static void never_ready(void)
{
	struct nvq_ctrl *c = (struct nvq_ctrl *)&c;

	CHECK_EQ(nvq_open("emu:size=1M,to=1,fault=no-ready@count=inf", NULL,
			  &c),
		 -ETIMEDOUT);
	CHECK(c == NULL);
	CHECK_MSG("CC.EN=1");
	/* Ready after two failed resets: nvq's one enable is not enough. */
	CHECK_EQ(nvq_open("emu:size=1M,to=1,fault=no-ready@count=2", NULL, &c),
		 -ETIMEDOUT);
}

int main(void)
{
	never_ready();
	setters();
	app_abort();
	lost_irq();
	bad_opts();
	stuck_read(NVQ_MODE_POLL, false);
	stuck_read(NVQ_MODE_POLL, true);
	stuck_read(NVQ_MODE_WAIT, false);
	stuck_read(NVQ_MODE_WAIT, true);
	stuck_read(NVQ_MODE_THREAD, false);
	stuck_sync();
	printf("timeout: ok\n");
	return T_EXIT_PASS;
}
