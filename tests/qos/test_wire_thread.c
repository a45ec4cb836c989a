// SPDX-License-Identifier: MIT
/*
 * THREAD mode through the public API on the emulated controller: I/O on a
 * queue applies the limit on the CPU its completion thread runs on and on
 * no other; two controllers whose completions share a CPU aggregate there
 * (the strictest wins, the other's limit stays when it goes); nvq_close()
 * puts each file's previous text back. Recording backend, fake sysfs.
 */
#include "wire_helpers.h"

static void check_stats(struct nvq_queue *q, uint64_t applies,
			uint64_t releases, bool active)
{
	struct nvq_qos_stats st;

	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK_EQ(st.applies, applies);
	CHECK_EQ(st.releases, releases);
	CHECK_EQ(st.active, active);
	CHECK(!active || st.held_ns > 0);
}

int main(void)
{
	const char *root = wire_fake_root("0");
	int ncpus = wire_ncpus(), nq = ncpus < 4 ? ncpus : 4;
	int cpu, cpu0 = -1, other, i;
	struct nvq_ctrl *a, *b;
	struct nvq_queue *q;
	cpu_set_t seen, held;

	a = wire_open(NULL, NVQ_MODE_THREAD, (unsigned int)nq, 50,
		      NVQ_QOS_TIMEOUT_MS_MAX);
	/* Nothing is held until a queue sees I/O. */
	CHECK_EQ(nvq_qos_record_count(), 0);

	/* Queue by queue: the completion CPU gets the limit, only it. */
	CPU_ZERO(&seen);
	for (i = 0; i < nq; i++) {
		q = nvq_ctrl_queue(a, (unsigned int)i);
		CHECK(nvq_queue_qos(q) != NULL);
		check_stats(q, 0, 0, false);
		cpu = wire_io(a, q, 4);
		if (i == 0)
			cpu0 = cpu;
		CPU_SET(cpu, &seen);
		CHECK_CPU_US(cpu, 50);
		CHECK_STREQ(fake_cpu_value(root, cpu), "50");
		check_stats(q, 1, 0, true);
		wire_held(&held);
		CHECK(CPU_EQUAL(&held, &seen));
		CHECK(wire_records_only(&seen));
	}
	for (other = 0; other < ncpus; other++)
		if (!CPU_ISSET(other, &seen))
			CHECK_STREQ(fake_cpu_value(root, other), "0");

	/*
	 * A second controller: the same emulated vector layout puts its
	 * first queue's completion thread on the same CPU.
	 */
	b = wire_open(NULL, NVQ_MODE_THREAD, 1, 20, NVQ_QOS_TIMEOUT_MS_MAX);
	q = nvq_ctrl_queue(b, 0);
	CHECK_EQ(wire_io(b, q, 4), cpu0);
	CHECK_CPU_US(cpu0, 20);
	CHECK_STREQ(fake_cpu_value(root, cpu0), "20");
	nvq_close(b);
	CHECK_CPU_US(cpu0, 50);
	CHECK_STREQ(fake_cpu_value(root, cpu0), "50");

	/* Close: every file says what it said before. */
	nvq_close(a);
	for (cpu = 0; cpu < ncpus; cpu++) {
		CHECK_CPU_US(cpu, NVQ_QOS_NONE);
		CHECK_STREQ(fake_cpu_value(root, cpu), "0");
	}
	return 0;
}
