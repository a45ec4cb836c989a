// SPDX-License-Identifier: MIT
/*
 * Waiter polling end to end on the emulated controller (100 us media, so
 * that waits really wait): with method poll or hybrid a submission makes
 * the queue active without any PM QoS request, and the waiter - the
 * nvq_wait() caller, or the completion thread - polls with the interrupt
 * masked instead of sleeping; every I/O completes with the right data.
 * When the inactivity timeout releases the queue, a polling waiter goes
 * back to sleeping on the interrupt (idle_sleeps) and a completion after
 * that still wakes it. The wake-up cost is fixed by $NVQ_QOS_WAKE_NS, so
 * that the hybrid waiter sleeps on any machine.
 */
#include "spin_helpers.h"
#include "wire_helpers.h"

#define URI "size=16M,lat=100us"
#define LONG_MS NVQ_QOS_TIMEOUT_MS_MAX

static char *buf_of(struct nvq_ctrl *c)
{
	char *buf = nvq_dma_alloc(c, 16 * SPIN_BLOCK, -1);

	CHECK(buf != NULL);
	return buf;
}

/* @rounds write + read-back rounds of @batch blocks. */
static void rounds(struct nvq_queue *q, enum nvq_mode mode, char *buf,
		   unsigned int n, unsigned int batch, uint64_t seed)
{
	unsigned int r;

	for (r = 0; r < n; r++)
		spin_round(q, mode, true, buf, batch,
			   ((uint64_t)r * batch * 7) % 4000, seed + r);
}

/*
 * A queue that went idle: the next burst makes it poll again, and a wait
 * with nothing in flight polls until the timeout releases the queue, then
 * sleeps on the interrupt until its own deadline: 0 completions. Tried a
 * few times: a loaded machine may release the queue before the wait
 * starts, and then the wait sleeps without having polled.
 */
static void check_idle_sleep(struct nvq_ctrl *c, struct nvq_queue *q, char *buf)
{
	struct nvq_qos_poll_stats a, b;
	struct nvq_qos_stats qs;
	int attempt;

	CHECK_OK(nvq_qos_set_timeout(nvq_ctrl_qos(c), 1));
	CHECK(WAIT_FOR(!spin_active(q), 10));
	for (attempt = 0; attempt < 5; attempt++) {
		a = spin_stats(q);
		rounds(q, NVQ_MODE_WAIT, buf, 1, 2, 900 + (uint64_t)attempt);
		CHECK_EQ(nvq_wait(q, 1, 2000), 0);
		b = spin_stats(q);
		if (b.idle_sleeps > a.idle_sleeps) {
			/* It polled before it slept. */
			CHECK(b.polls > a.polls);
			break;
		}
	}
	if (attempt == 5)
		check_failed(__FILE__, __LINE__, "idle_sleeps grew",
			     "%llu idle sleeps in 5 tries",
			     (unsigned long long)b.idle_sleeps);
	/* The waiter slept because the queue went idle: it is. */
	nvq_qos_queue_stats(nvq_queue_qos(q), &qs);
	CHECK(!qs.active);
	CHECK(qs.releases >= 1);
}

/*
 * With the limit off the waiters sleep on the interrupt: it must have been
 * unmasked, or these waits would find nothing for 10 s. Then the limit
 * back on: polling again.
 */
static void check_limit_off_on(struct nvq_ctrl *c, struct nvq_queue *q,
			       enum nvq_mode mode, char *buf)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_poll_stats a, b;
	struct nvq_queue_stats qs0, qs1;

	CHECK_OK(nvq_qos_set_limit(nvq_ctrl_qos(c), NVQ_QOS_OFF));
	CHECK(!spin_active(q));
	a = spin_stats(q);
	nvq_queue_stats(q, &qs0);
	rounds(q, mode, buf, 4, 2, 500);
	b = spin_stats(q);
	nvq_queue_stats(q, &qs1);
	/* (A completion thread counts its last poll when it stops.) */
	if (mode == NVQ_MODE_WAIT) {
		CHECK_EQ(b.polls, a.polls);
		CHECK_EQ(b.masked, a.masked);
	}
	CHECK(!spin_active(q));
	CHECK_EQ(qs1.completed - qs0.completed, 16);

	CHECK_OK(nvq_qos_set_limit(nvq_ctrl_qos(c), 0));
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK(mi.method == NVQ_QOS_METHOD_POLL ||
	      mi.method == NVQ_QOS_METHOD_HYBRID);
	rounds(q, mode, buf, 2, 2, 600);
	if (mode == NVQ_MODE_WAIT) {
		b = spin_stats(q);
		CHECK(b.polls > a.polls);
	}
}

static void test_poll(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_poll_stats ps;
	struct nvq_queue_stats qs;
	struct nvq_qos_stats st;
	struct spin_count n = { 0 };
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	char *buf;

	c = spin_open(URI, NVQ_MODE_WAIT, 1, 32, 0, LONG_MS,
		      NVQ_QOS_METHOD_POLL);
	q = nvq_ctrl_queue(c, 0);
	buf = buf_of(c);
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_POLL);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	CHECK(!spin_active(q));
	ps = spin_stats(q);
	CHECK_EQ(ps.polls, 0);
	CHECK_EQ(ps.masked, 0);

	/* A submission makes the queue active, at once. */
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, spin_cb, &n));
	CHECK(spin_active(q));
	spin_wait_calls(q, NVQ_MODE_WAIT, true, &n, 1);
	/* (A loaded machine may find the CQE there before it waits.) */
	ps = spin_stats(q);
	CHECK(ps.masked <= 1);
	CHECK(ps.masked <= ps.polls);

	rounds(q, NVQ_MODE_WAIT, buf, 16, 4, 1);
	rounds(q, NVQ_MODE_WAIT, buf, 32, 1, 100);
	ps = spin_stats(q);
	CHECK(ps.polls > 0);
	CHECK(ps.masked >= 1);
	CHECK(ps.poll_ns > 0);
	/* Poll never sleeps first, and the queue never went idle. */
	CHECK_EQ(ps.sleeps, 0);
	CHECK_EQ(ps.sleep_ns, 0);
	CHECK_EQ(ps.overslept, 0);
	CHECK_EQ(ps.idle_sleeps, 0);
	/* No waiter slept on the interrupt while the queue was active. */
	nvq_queue_stats(q, &qs);
	CHECK_EQ(qs.interrupts, 0);
	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK(st.active);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 0);
	/* The waiter keeps the CPU awake: no PM QoS request anywhere. */
	CHECK_EQ(nvq_qos_record_count(), 0);

	check_idle_sleep(c, q, buf);
	check_limit_off_on(c, q, NVQ_MODE_WAIT, buf);
	CHECK_EQ(nvq_qos_record_count(), 0);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

static void test_hybrid(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_poll_stats ps;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	uint64_t t0;
	char *buf;
	int r;

	c = spin_open(URI, NVQ_MODE_WAIT, 1, 32, 0, LONG_MS,
		      NVQ_QOS_METHOD_HYBRID);
	q = nvq_ctrl_queue(c, 0);
	buf = buf_of(c);
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_STREQ(mi.wake.source, "env");
	CHECK_EQ(mi.wake.p50_ns, 10000);

	/*
	 * With 100 us media and a 10 us wake-up, the waiter sleeps through
	 * part of each wait once it has an estimate. Rounds until it has
	 * slept (a loaded machine may need more than one).
	 */
	t0 = nvq_now_ns();
	for (r = 0;; r++) {
		rounds(q, NVQ_MODE_WAIT, buf, 4, 1, 2000 + (uint64_t)r * 10);
		ps = spin_stats(q);
		if (ps.sleeps > 0)
			break;
		CHECK(nvq_now_ns() - t0 < SPIN_DEADLINE_NS);
	}
	rounds(q, NVQ_MODE_WAIT, buf, 8, 4, 3000);
	ps = spin_stats(q);
	CHECK(ps.polls > 0);
	CHECK(ps.masked >= 1);
	CHECK(ps.est_ns > 0);
	CHECK(ps.sleeps > 0);
	CHECK(ps.sleep_ns >= ps.sleeps);
	CHECK(ps.overslept <= ps.sleeps);
	CHECK(ps.overslept <= ps.polls);
	CHECK_EQ(ps.idle_sleeps, 0);
	CHECK(spin_active(q));
	CHECK_EQ(nvq_qos_record_count(), 0);

	check_idle_sleep(c, q, buf);
	check_limit_off_on(c, q, NVQ_MODE_WAIT, buf);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

/* The completion thread polls for an active queue of its vector. */
static void test_thread(void)
{
	struct nvq_qos_poll_stats ps;
	struct spin_count n = { 0 };
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	char *buf;

	c = spin_open(URI, NVQ_MODE_THREAD, 1, 32, 0, 1, NVQ_QOS_METHOD_POLL);
	q = nvq_ctrl_queue(c, 0);
	buf = buf_of(c);
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, spin_cb, &n));
	spin_wait_calls(q, NVQ_MODE_THREAD, true, &n, 1);
	rounds(q, NVQ_MODE_THREAD, buf, 16, 4, 4000);
	rounds(q, NVQ_MODE_THREAD, buf, 16, 1, 4100);
	/* Counted when the thread stops polling: after the release. */
	CHECK(WAIT_FOR((ps = spin_stats(q), ps.polls > 0), 10));
	CHECK(ps.masked >= 1);
	CHECK(ps.poll_ns > 0);
	CHECK(WAIT_FOR(!spin_active(q), 10));
	CHECK_EQ(nvq_qos_record_count(), 0);

	/* Back to sleeping on the interrupt: completions still come. */
	rounds(q, NVQ_MODE_THREAD, buf, 4, 4, 4200);
	check_limit_off_on(c, q, NVQ_MODE_THREAD, buf);
	CHECK(WAIT_FOR((ps = spin_stats(q), ps.polls > 1), 10));
	nvq_dma_free(c, buf);
	nvq_close(c);
}

int main(void)
{
	/* Before anything may measure it (once per process). */
	CHECK_OK(setenv("NVQ_QOS_WAKE_NS", "10000,20000", 1));
	wire_fake_root("0");

	test_poll();
	test_hybrid();
	test_thread();
	printf("qos-wire-spin: ok\n");
	return 0;
}
