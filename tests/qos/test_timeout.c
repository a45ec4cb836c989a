// SPDX-License-Identifier: MIT
/*
 * Release after inactivity: a queue that keeps submitting keeps its limit;
 * one that stops loses it within timeout + one period (polled with a
 * bound of seconds, never timed exactly) and gets it back on the next
 * batch; with hysteresis, a queue that bounces back waits longer. Then
 * submitters, the timer and knob changes race each other and the books
 * must still balance.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "qos_helpers.h"

static char *root;

static void cleanup(void)
{
	fake_remove(root);
	root = NULL;
}

static const int cpus0[] = { 0, -1 }, cpus01[] = { 0, 1, -1 };
static const int cpus12[] = { 1, 2, -1 };

struct submitter {
	struct fake_queue *q;
	pthread_mutex_t *sq_lock; /* shared queues serialise the counter */
	int batches;
	unsigned int pause_us;
	unsigned int seed;
};

static void *submit_loop(void *arg)
{
	struct submitter *s = arg;
	int i;

	for (i = 0; i < s->batches; i++) {
		pthread_mutex_lock(s->sq_lock);
		WRITE_ONCE(s->q->submitted, s->q->submitted + 1);
		pthread_mutex_unlock(s->sq_lock);
		/* After the doorbell, outside the lock, as in lib/queue.c. */
		if (unlikely(READ_ONCE(s->q->qos_idle)))
			nvq_qos_activate(s->q->qos);
		if (s->pause_us)
			usleep(s->pause_us);
		else if (!(rand_r(&s->seed) % 64))
			usleep(rand_r(&s->seed) % 3000);
	}
	return NULL;
}

static unsigned int count_cpu(int cpu, int32_t value)
{
	struct nvq_qos_record rec;
	unsigned int i, n = 0;

	for (i = 0; !nvq_qos_record_get(i, &rec); i++)
		if (rec.cpu == cpu && rec.value == value)
			n++;
	return n;
}

static void test_busy_stays_idle_goes(void)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct nvq_qos_stats st;
	struct nvq_qos_ctrl *qc;
	struct submitter s;
	struct fake_queue q;
	pthread_t t;

	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	/* Generous: only a stall of half a second would look like idling. */
	CHECK_EQ(nvq_qos_set_timeout(qc, 500), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	fq_init(&q, qc, cpus0);
	nvq_qos_record_reset();

	s = (struct submitter){
		.q = &q, .sq_lock = &lock, .batches = 400, .pause_us = 1000
	};
	CHECK_EQ(pthread_create(&t, NULL, submit_loop, &s), 0);
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == 0, 10));
	CHECK_EQ(pthread_join(t, NULL), 0);
	/* Busy all along: applied once, never released in between. */
	CHECK_EQ(count_cpu(0, 0), 1);
	CHECK_EQ(count_cpu(0, NVQ_QOS_NONE), 0);

	/* Stopped: released by the timer, without any call from us. */
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK_EQ(READ_ONCE(q.qos_idle), 1);
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 1);
	CHECK(st.held_ns > 0);

	/* The default 3 ms: one batch, released, and back with the next. */
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_DEFAULT), 0);
	fq_submit(&q);
	CHECK(WAIT_FOR(READ_ONCE(q.qos_idle) == 1, 10));
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	fq_submit(&q);
	CHECK(WAIT_FOR(READ_ONCE(q.qos_idle) == 1, 10));
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 3);
	CHECK_EQ(st.releases, 3);
	CHECK_EQ(count_cpu(0, 0), 3);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");

	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
}

static unsigned int linger_of(struct nvq_qos_queue *qq)
{
	unsigned int v;

	nvq_qos_lock();
	v = qq->linger;
	nvq_qos_unlock();
	return v;
}

/*
 * Hysteresis (nvq_qos_set_hysteresis()): a queue back right after its
 * release waits 1, 2, then 4 (never more) extra quiet periods before its
 * next release, with no file write meanwhile; back after a longer pause
 * than it waited, half as many; off, it never waits. Only lower bounds
 * on time are checked (a release can only come later on a loaded box).
 */
static void test_hysteresis(void)
{
	static const unsigned int lingers[] = { 1, 2, 4, 4 };
	const unsigned int tmo = 200;
	struct nvq_qos_stats st;
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	uint64_t t0;
	unsigned int i;

	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, tmo), 0);
	CHECK_EQ(nvq_qos_set_hysteresis(qc, true), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	fq_init(&q, qc, cpus0);
	nvq_qos_record_reset();

	/* The first burst: the plain release after one quiet period. */
	t0 = nvq_now_ns();
	fq_submit(&q);
	CHECK_EQ(nvq_qos_record_current(0), 0);
	CHECK_EQ(linger_of(q.qos), 0);
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	CHECK(nvq_now_ns() - t0 >= tmo * 1000000ull);

	/* Back at once after each release: a bounce, the wait doubles. */
	for (i = 0; i < sizeof(lingers) / sizeof(lingers[0]); i++) {
		t0 = nvq_now_ns();
		fq_submit(&q);
		CHECK_EQ(nvq_qos_record_current(0), 0);
		CHECK_EQ(linger_of(q.qos), lingers[i]);
		CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
		CHECK(nvq_now_ns() - t0 >= (1 + lingers[i]) * tmo * 1000000ull);
	}
	/* One apply and one release per burst reached the files. */
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 5);
	CHECK_EQ(st.releases, 5);
	CHECK_EQ(count_cpu(0, 0), 5);
	CHECK_EQ(count_cpu(0, NVQ_QOS_NONE), 5);

	/*
	 * Back later than 1 + linger timeouts after the release: the linger
	 * halves each time, 4 -> 2 -> 1 -> 0 (sleeps are lower bounds).
	 */
	for (i = 4; i; i /= 2) {
		usleep((1 + i) * tmo * 1000 + 100000);
		fq_submit(&q);
		CHECK_EQ(linger_of(q.qos), i / 2);
		CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	}

	/* Off: a bounce changes nothing. */
	CHECK_EQ(nvq_qos_set_hysteresis(qc, false), 0);
	fq_submit(&q);
	CHECK_EQ(linger_of(q.qos), 0);
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	fq_submit(&q);
	CHECK_EQ(linger_of(q.qos), 0);
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	CHECK_STREQ(fake_cpu_value(root, 0), "0");

	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
}

struct knobber {
	struct nvq_qos_ctrl *qc;
	int rounds;
};

static void *knob_loop(void *arg)
{
	static const int limits[] = { 10, 20, 0, NVQ_QOS_OFF, 20 };
	struct knobber *k = arg;
	int i;

	for (i = 0; i < k->rounds; i++) {
		CHECK_EQ(nvq_qos_set_limit(k->qc, limits[i % 5]), 0);
		CHECK_EQ(nvq_qos_set_timeout(k->qc, 1 + i % 3), 0);
		usleep(2000);
	}
	CHECK_EQ(nvq_qos_set_limit(k->qc, 10), 0);
	return NULL;
}

/* Per CPU, the backend only ever sees changes, ending in a release. */
static void check_log(int cpu)
{
	struct nvq_qos_record rec;
	int32_t last = NVQ_QOS_NONE;
	unsigned int i, changes = 0;

	for (i = 0; !nvq_qos_record_get(i, &rec); i++) {
		if (rec.cpu != cpu)
			continue;
		if (rec.value == last) {
			fprintf(stderr, "cpu%d: record %u repeats %d\n", cpu, i,
				rec.value);
			check_exit_fail();
		}
		last = rec.value;
		changes++;
	}
	CHECK(changes > 0);
	CHECK_EQ(last, NVQ_QOS_NONE);
}

static void test_races(void)
{
	pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
	struct nvq_qos_ctrl *a, *b;
	struct fake_queue qa, qb;
	struct submitter s[3];
	struct nvq_qos_stats st;
	struct knobber k;
	pthread_t t[4];
	int i;

	CHECK_EQ(nvq_qos_ctrl_create(&a), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&b), 0);
	CHECK_EQ(nvq_qos_set_timeout(a, 1), 0);
	CHECK_EQ(nvq_qos_set_timeout(b, 1), 0);
	CHECK_EQ(nvq_qos_set_limit(a, 30), 0);
	CHECK_EQ(nvq_qos_set_limit(b, 5), 0);
	fq_init(&qa, a, cpus01);
	fq_init(&qb, b, cpus12);
	nvq_qos_record_reset();

	/* Two submitters share qa and race into its activation. */
	s[0] = (struct submitter){ &qa, &lock_a, 3000, 0, 1 };
	s[1] = (struct submitter){ &qa, &lock_a, 3000, 0, 2 };
	s[2] = (struct submitter){ &qb, &lock_b, 3000, 0, 3 };
	k = (struct knobber){ b, 100 };
	for (i = 0; i < 3; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, submit_loop, &s[i]), 0);
	CHECK_EQ(pthread_create(&t[3], NULL, knob_loop, &k), 0);
	/* Meanwhile a waiter wanders across CPUs. */
	for (i = 0; i < 200; i++) {
		nvq_qos_note_cpu(qa.qos, 2 + i % 2);
		usleep(500);
	}
	for (i = 0; i < 4; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);

	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE &&
			       nvq_qos_record_current(1) == NVQ_QOS_NONE &&
			       nvq_qos_record_current(2) == NVQ_QOS_NONE &&
			       nvq_qos_record_current(3) == NVQ_QOS_NONE,
		       10));
	for (i = 0; i < 3; i++) {
		check_log(i);
		CHECK_STREQ(fake_cpu_value(root, i), "0");
	}
	nvq_qos_queue_stats(qa.qos, &st);
	CHECK(st.applies > 0);
	CHECK_EQ(st.applies, st.releases);
	CHECK(!st.active);
	nvq_qos_queue_stats(qb.qos, &st);
	CHECK_EQ(st.applies, st.releases);

	fq_destroy(&qa);
	fq_destroy(&qb);
	nvq_qos_ctrl_destroy(a);
	nvq_qos_ctrl_destroy(b);
}

int main(void)
{
	check_cleanup = cleanup;
	root = fake_root(4, "0");
	CHECK_EQ(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD), 0);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	test_busy_stays_idle_goes();
	test_hysteresis();
	test_races();
	cleanup();
	return 0;
}
