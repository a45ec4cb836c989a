// SPDX-License-Identifier: MIT
/*
 * The knobs through the public API: nvq_opts values are checked at open,
 * the limit changed at runtime takes effect on a busy queue at once (off
 * -> N -> 0 -> off), the timeout changed at runtime releases an idle
 * queue, and "auto" at open picks from the cpuidle table and says why.
 */
#include <errno.h>

#include "wire_helpers.h"

static const char *root;

static void open_fails(int limit, unsigned int timeout, const char *what)
{
	struct nvq_ctrl *c = NULL;
	struct nvq_opts o;

	nvq_opts_init(&o);
	o.mode = NVQ_MODE_WAIT;
	o.cpu_lat_limit_us = limit;
	o.cpu_lat_timeout_ms = timeout;
	CHECK_EQ(nvq_open("emu:size=1M", &o, &c), -EINVAL);
	CHECK(c == NULL);
	if (!strstr(nvq_errmsg(), what)) {
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n", nvq_errmsg(),
			what);
		check_exit_fail();
	}
}

static void test_opts(void)
{
	struct nvq_opts o;

	nvq_opts_init(&o);
	CHECK_EQ(o.cpu_lat_limit_us, NVQ_QOS_OFF);
	CHECK_EQ(o.cpu_lat_timeout_ms, NVQ_QOS_TIMEOUT_MS_DEFAULT);
	open_fails(-3, 0, "CPU latency limit -3");
	open_fails(NVQ_QOS_LIMIT_MAX + 1, 0, "CPU latency limit");
	open_fails(NVQ_QOS_OFF, NVQ_QOS_TIMEOUT_MS_MAX + 1,
		   "CPU latency timeout");
}

static void test_runtime(void)
{
	struct nvq_qos_info info;
	struct nvq_qos_stats st;
	struct nvq_qos_ctrl *qc;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	int cpu;

	c = wire_open(NULL, NVQ_MODE_THREAD, 1, NVQ_QOS_OFF,
		      NVQ_QOS_TIMEOUT_MS_MAX);
	qc = nvq_ctrl_qos(c);
	CHECK(qc != NULL);
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_OFF);
	CHECK_EQ(info.timeout_ms, NVQ_QOS_TIMEOUT_MS_MAX);
	q = nvq_ctrl_queue(c, 0);

	/* off: I/O places nothing */
	cpu = wire_io(c, q, 4);
	CHECK_EQ(nvq_qos_record_count(), 0);

	/* N: the next batch applies it */
	CHECK_EQ(nvq_qos_set_limit(qc, 40), 0);
	CHECK_EQ(nvq_qos_record_count(), 0);
	CHECK_EQ(wire_io(c, q, 1), cpu);
	CHECK_CPU_US(cpu, 40);
	CHECK_STREQ(fake_cpu_value(root, cpu), "40");

	/* 0 on a busy queue: at once, without another I/O */
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	CHECK_CPU_US(cpu, 0);
	CHECK_STREQ(fake_cpu_value(root, cpu), "n/a");

	/* off: released at once, previous text back */
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
	CHECK_CPU_US(cpu, NVQ_QOS_NONE);
	CHECK_STREQ(fake_cpu_value(root, cpu), "0");
	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 1);
	wire_io(c, q, 4);
	CHECK_CPU_US(cpu, NVQ_QOS_NONE);

	/* The timeout lowered at runtime releases an idle queue. */
	CHECK_EQ(nvq_qos_set_limit(qc, 25), 0);
	wire_io(c, q, 2);
	CHECK_CPU_US(cpu, 25);
	CHECK_EQ(nvq_qos_set_timeout(qc, 5), 0);
	CHECK(WAIT_FOR(nvq_qos_record_current(cpu) == NVQ_QOS_NONE, 10));
	CHECK_STREQ(fake_cpu_value(root, cpu), "0");
	nvq_qos_queue_stats(nvq_queue_qos(q), &st);
	CHECK_EQ(st.applies, 2);
	CHECK_EQ(st.releases, 2);
	nvq_close(c);
}

/* menu governor, C1 2 us: auto allows C1 and forbids deeper states. */
static void cpuidle_tree(const char *gov)
{
	static const char *const names[] = { "POLL", "C1", "C1E", "C6" };
	static const char *const lat[] = { "0", "2", "10", "100" };
	char rel[128], text[32];
	int cpu, k;

	snprintf(text, sizeof(text), "%s\n", gov);
	fake_write(root, "devices/system/cpu/cpuidle/current_governor", text);
	for (cpu = 0; cpu < wire_ncpus(); cpu++) {
		for (k = 0; k < 4; k++) {
			snprintf(
				rel, sizeof(rel),
				"devices/system/cpu/cpu%d/cpuidle/state%d/name",
				cpu, k);
			snprintf(text, sizeof(text), "%s\n", names[k]);
			fake_write(root, rel, text);
			snprintf(
				rel, sizeof(rel),
				"devices/system/cpu/cpu%d/cpuidle/state%d/latency",
				cpu, k);
			snprintf(text, sizeof(text), "%s\n", lat[k]);
			fake_write(root, rel, text);
		}
	}
}

static void test_auto(void)
{
	struct nvq_qos_info info;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	int cpu;

	cpuidle_tree("menu");
	c = wire_open(NULL, NVQ_MODE_THREAD, 1, NVQ_QOS_AUTO,
		      NVQ_QOS_TIMEOUT_MS_MAX);
	nvq_qos_info(nvq_ctrl_qos(c), &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_AUTO);
	CHECK_EQ(info.effective_us, 3);
	CHECK(strstr(info.reason, "C1") != NULL);
	q = nvq_ctrl_queue(c, 0);
	cpu = wire_io(c, q, 2);
	CHECK_CPU_US(cpu, 3);
	CHECK_STREQ(fake_cpu_value(root, cpu), "3");
	nvq_close(c);
	CHECK_STREQ(fake_cpu_value(root, cpu), "0");

	/* haltpoll honours only 0: auto means no idle at all. */
	cpuidle_tree("haltpoll");
	c = wire_open(NULL, NVQ_MODE_THREAD, 1, NVQ_QOS_AUTO,
		      NVQ_QOS_TIMEOUT_MS_MAX);
	nvq_qos_info(nvq_ctrl_qos(c), &info);
	CHECK_EQ(info.effective_us, 0);
	CHECK(strstr(info.reason, "haltpoll") != NULL);
	cpu = wire_io(c, nvq_ctrl_queue(c, 0), 2);
	CHECK_STREQ(fake_cpu_value(root, cpu), "n/a");
	nvq_close(c);
	CHECK_STREQ(fake_cpu_value(root, cpu), "0");
}

int main(void)
{
	root = wire_fake_root("0");
	test_opts();
	test_runtime();
	test_auto();
	return 0;
}
