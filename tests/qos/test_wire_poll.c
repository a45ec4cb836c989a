// SPDX-License-Identifier: MIT
/*
 * Queues that need no limit get none: poll mode (the CPU spins anyway)
 * even with a limit set, and wait mode with the limit off (the default).
 */
#include "wire_helpers.h"

int main(void)
{
	const char *root = wire_fake_root("0");
	struct nvq_qos_stats st;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	int cpu;

	c = wire_open(NULL, NVQ_MODE_POLL, 1, 0, NVQ_QOS_TIMEOUT_MS_MAX);
	q = nvq_ctrl_queue(c, 0);
	CHECK(nvq_queue_qos(q) == NULL);
	wire_io(c, q, 16);
	CHECK_EQ(nvq_qos_record_count(), 0);
	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK_EQ(st.applies, 0);
	CHECK_EQ(st.held_ns, 0);
	/* The knob still works (and still applies to no poll queue). */
	CHECK_EQ(nvq_qos_set_limit(nvq_ctrl_qos(c), 10), 0);
	wire_io(c, q, 4);
	CHECK_EQ(nvq_qos_record_count(), 0);
	nvq_close(c);

	/* nvq_opts_init(): off by default. */
	c = wire_open("size=1M,lat=200us", NVQ_MODE_WAIT, 1, NVQ_QOS_OFF, 0);
	q = nvq_ctrl_queue(c, 0);
	CHECK(nvq_queue_qos(q) != NULL);
	wire_io(c, q, 16);
	CHECK_EQ(nvq_qos_record_count(), 0);
	nvq_close(c);

	for (cpu = 0; cpu < wire_ncpus(); cpu++)
		CHECK_STREQ(fake_cpu_value(root, cpu), "0");
	return 0;
}
