// SPDX-License-Identifier: MIT
/*
 * WAIT mode through the public API: the limit goes to the CPU of the
 * caller that sleeps in nvq_wait() and to no other, follows the caller to
 * a new CPU, and is released within timeout + one period once the I/O
 * stops (the file's text back); a new burst applies it again.
 */
#include "wire_helpers.h"

/* Slow media: the caller really goes to sleep in nvq_wait(). */
#define SLOW "size=1M,lat=1ms"

int main(void)
{
	const char *root = wire_fake_root("0");
	int ncpus = wire_ncpus(), cpu_a = ncpus - 1, cpu_b = 0, cpu;
	struct nvq_qos_stats st;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	cpu_set_t only, held;

	wire_pin(cpu_a);
	c = wire_open(SLOW, NVQ_MODE_WAIT, 1, 0, NVQ_QOS_TIMEOUT_MS_MAX);
	q = nvq_ctrl_queue(c, 0);
	CHECK(nvq_queue_qos(q) != NULL);

	wire_io(c, q, 8);
	CHECK_CPU_US(cpu_a, 0);
	CHECK_STREQ(fake_cpu_value(root, cpu_a), "n/a");
	CPU_ZERO(&only);
	CPU_SET(cpu_a, &only);
	CHECK(wire_records_only(&only));
	wire_held(&held);
	CHECK(CPU_EQUAL(&held, &only));

	/* The waiter moves: its new CPU joins while the queue is busy. */
	if (cpu_b != cpu_a) {
		wire_pin(cpu_b);
		wire_io(c, q, 8);
		CHECK_CPU_US(cpu_b, 0);
		CHECK_STREQ(fake_cpu_value(root, cpu_b), "n/a");
		CHECK_CPU_US(cpu_a, 0);
		CPU_SET(cpu_b, &only);
		wire_held(&held);
		CHECK(CPU_EQUAL(&held, &only));
	}
	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 0);

	/* No more I/O: released within 3 ms + one period (10 s cap). */
	CHECK_EQ(nvq_qos_set_timeout(nvq_ctrl_qos(c), 3), 0);
	CHECK(WAIT_FOR((nvq_qos_queue_stats(nvq_queue_qos(q), &st),
			st.releases == 1),
		       10));
	CHECK(!st.active);
	CHECK(st.held_ns > 0);
	for (cpu = 0; cpu < ncpus; cpu++) {
		CHECK_CPU_US(cpu, NVQ_QOS_NONE);
		CHECK_STREQ(fake_cpu_value(root, cpu), "0");
	}

	/* A new burst: the waiter's CPU is noted afresh. */
	CHECK_EQ(nvq_qos_set_timeout(nvq_ctrl_qos(c), NVQ_QOS_TIMEOUT_MS_MAX),
		 0);
	nvq_qos_record_reset();
	wire_io(c, q, 4);
	CHECK_CPU_US(cpu_b, 0);
	CPU_ZERO(&only);
	CPU_SET(cpu_b, &only);
	CHECK(wire_records_only(&only));
	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK_EQ(st.applies, 2);

	nvq_close(c);
	CHECK_CPU_US(cpu_b, NVQ_QOS_NONE);
	CHECK_STREQ(fake_cpu_value(root, cpu_b), "0");
	return 0;
}
