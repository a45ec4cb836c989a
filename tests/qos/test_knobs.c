// SPDX-License-Identifier: MIT
/*
 * Knob changes while a queue is active take effect at once: off -> N arms
 * the queue, N -> 0 moves the request without a gap, 0 -> off releases
 * and disarms it; a shorter timeout applies to an active queue.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "qos_helpers.h"

static char *root;

static void cleanup(void)
{
	fake_remove(root);
	root = NULL;
}

static const int cpus0[] = { 0, -1 };

int main(void)
{
	struct nvq_qos_record rec;
	struct nvq_qos_info info;
	struct nvq_qos_stats st;
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	unsigned int n;

	check_cleanup = cleanup;
	root = fake_root(2, "0");
	/* The environment names the tree: read at first use. */
	CHECK(!setenv("NVQ_SYSFS_ROOT", root, 1));
	CHECK_EQ(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);

	nvq_qos_info(qc, &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_OFF);
	CHECK_EQ(info.effective_us, NVQ_QOS_OFF);
	CHECK_STREQ(info.backend, "record");
	CHECK_STREQ(info.status, "");

	/* Off (the default): the hot-path flag never asks for anything. */
	fq_init(&q, qc, cpus0);
	CHECK_EQ(q.qos_idle, 0);
	fq_submit(&q);
	CHECK_EQ(nvq_qos_record_count(), 0);
	/* Even a stray call does nothing while off. */
	nvq_qos_activate(q.qos);
	CHECK_EQ(nvq_qos_record_count(), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");

	/* off -> 40: armed, applied by the next batch, not before. */
	CHECK_EQ(nvq_qos_set_limit(qc, 40), 0);
	CHECK_EQ(q.qos_idle, 1);
	CHECK_EQ(nvq_qos_record_count(), 0);
	fq_submit(&q);
	CHECK_EQ(q.qos_idle, 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "40");

	/* 40 -> 0 while active: straight to "n/a", never released between. */
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	n = nvq_qos_record_count();
	CHECK_EQ(n, 2);
	CHECK_EQ(nvq_qos_record_get(0, &rec), 0);
	CHECK_EQ(rec.value, 40);
	CHECK_EQ(nvq_qos_record_get(1, &rec), 0);
	CHECK_EQ(rec.cpu, 0);
	CHECK_EQ(rec.value, 0);
	CHECK_EQ(q.qos_idle, 0);

	/* Same value again: nothing moves. */
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	CHECK_EQ(nvq_qos_record_count(), n);

	/* 0 -> off: released, the file's text back, the queue disarmed. */
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK_EQ(nvq_qos_record_current(0), NVQ_QOS_NONE);
	CHECK_EQ(q.qos_idle, 0);
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 1);
	CHECK(!st.active);
	n = nvq_qos_record_count();
	fq_submit(&q);
	CHECK_EQ(nvq_qos_record_count(), n);

	/* On again, and a shorter timeout releases the active queue. */
	CHECK_EQ(nvq_qos_set_limit(qc, 15), 0);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "15");
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.limit_us, 15);
	CHECK_EQ(info.effective_us, 15);
	CHECK_EQ(nvq_qos_set_timeout(qc, 5), 0);
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.timeout_ms, 5);
	CHECK(WAIT_FOR(nvq_qos_record_current(0) == NVQ_QOS_NONE, 10));
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	/* The timer re-armed the hot path. */
	CHECK_EQ(READ_ONCE(q.qos_idle), 1);
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 2);
	CHECK_EQ(st.releases, 2);

	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
	cleanup();
	return 0;
}
