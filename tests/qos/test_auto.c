// SPDX-License-Identifier: MIT
/*
 * "auto" picks the limit from fake cpuidle tables: just above the
 * shallowest real idle state under menu/teo, 0 under haltpoll, off where a
 * limit would change nothing; and says why.
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

struct state {
	const char *name;
	const char *latency;
	const char *disable; /* NULL: no such file */
};

/* A fresh tree: governor file @gov_file says @gov; @n states per CPU. */
static void tree(int ncpus, const char *gov_file, const char *gov,
		 const struct state *st, int n)
{
	char rel[128], text[64];
	int cpu, k;

	fake_remove(root);
	root = fake_root(ncpus, "0");
	if (gov) {
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpuidle/%s",
			 gov_file);
		snprintf(text, sizeof(text), "%s\n", gov);
		fake_write(root, rel, text);
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		for (k = 0; k < n; k++) {
			snprintf(
				rel, sizeof(rel),
				"devices/system/cpu/cpu%d/cpuidle/state%d/name",
				cpu, k);
			snprintf(text, sizeof(text), "%s\n", st[k].name);
			fake_write(root, rel, text);
			snprintf(
				rel, sizeof(rel),
				"devices/system/cpu/cpu%d/cpuidle/state%d/latency",
				cpu, k);
			snprintf(text, sizeof(text), "%s\n", st[k].latency);
			fake_write(root, rel, text);
			if (!st[k].disable)
				continue;
			snprintf(
				rel, sizeof(rel),
				"devices/system/cpu/cpu%d/cpuidle/state%d/disable",
				cpu, k);
			snprintf(text, sizeof(text), "%s\n", st[k].disable);
			fake_write(root, rel, text);
		}
	}
}

static int pick(char *reason, size_t len)
{
	int limit = -99;

	CHECK_EQ(nvq_qos_auto_pick(root, &limit, reason, len), 0);
	return limit;
}

static const struct state menu_like[] = {
	{ "POLL", "0", "0" },
	{ "C1", "2", "0" },
	{ "C1E", "10", "0" },
	{ "C6", "100", "0" },
};

static const struct state haltpoll_like[] = {
	{ "POLL", "0", "0" },
	{ "haltpoll idle", "1", "0" },
};

static void test_tables(void)
{
	struct state st[4];
	char r[256];

	/* menu: C1 stays, C1E and C6 go. */
	tree(2, "current_governor", "menu", menu_like, 4);
	CHECK_EQ(pick(r, sizeof(r)), 3);
	CHECK_CONTAINS(r, "menu");
	CHECK_CONTAINS(r, "C1 (exit latency 2 us)");
	CHECK_CONTAINS(r, "C1E (10 us)");
	CHECK_CONTAINS(r, "C6 (100 us)");
	CHECK_CONTAINS(r, "3 us");

	/* haltpoll honours only 0. */
	tree(2, "current_governor", "haltpoll", haltpoll_like, 2);
	CHECK_EQ(pick(r, sizeof(r)), 0);
	CHECK_CONTAINS(r, "haltpoll");

	/* The same table under menu: nothing deeper to forbid. */
	tree(2, "current_governor", "menu", haltpoll_like, 2);
	CHECK_EQ(pick(r, sizeof(r)), NVQ_QOS_OFF);
	CHECK_CONTAINS(r, "haltpoll idle");
	CHECK_CONTAINS(r, "deepest");

	/* C1 disabled by the admin: C1E is the shallowest that counts. */
	memcpy(st, menu_like, sizeof(st));
	st[1].disable = "1";
	tree(1, "current_governor", "menu", st, 4);
	CHECK_EQ(pick(r, sizeof(r)), 11);
	CHECK_CONTAINS(r, "C1E (exit latency 10 us)");

	/* A state whose latency is within the limit stays allowed too. */
	memcpy(st, menu_like, sizeof(st));
	st[2].latency = "3";
	tree(1, "current_governor", "teo", st, 4);
	CHECK_EQ(pick(r, sizeof(r)), 3);
	CHECK_CONTAINS(r, "teo");
	CHECK_CONTAINS(r, "C1E (3 us) too");

	/* Only polling: nothing to limit. */
	tree(1, "current_governor", "menu", menu_like, 1);
	CHECK_EQ(pick(r, sizeof(r)), NVQ_QOS_OFF);
	CHECK_CONTAINS(r, "polling");

	/* No cpuidle at all. */
	tree(2, "current_governor", NULL, NULL, 0);
	CHECK_EQ(pick(r, sizeof(r)), NVQ_QOS_OFF);
	CHECK_CONTAINS(r, "no cpuidle");

	/* Older kernels: only the read-only governor file; no disable. */
	memcpy(st, menu_like, sizeof(st));
	st[1].disable = NULL;
	tree(1, "current_governor_ro", "ladder", st, 4);
	CHECK_EQ(pick(r, sizeof(r)), 3);
	CHECK_CONTAINS(r, "ladder");

	/* A broken table is reported, not trusted. */
	memcpy(st, menu_like, sizeof(st));
	st[2].latency = "ten";
	tree(1, "current_governor", "menu", st, 4);
	CHECK_EQ(pick(r, sizeof(r)), NVQ_QOS_OFF);
	CHECK_CONTAINS(r, "cannot read");
}

/* Through a controller: what info reports and what lands in the file. */
static void test_ctrl_auto(void)
{
	static const int cpus0[] = { 0, -1 };
	struct nvq_qos_info info;
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;

	tree(2, "current_governor", "menu", menu_like, 4);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_AUTO), 0);
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_AUTO);
	CHECK_EQ(info.effective_us, 3);
	CHECK_CONTAINS(info.reason, "C1");
	fq_init(&q, qc, cpus0);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "3");
	fq_destroy(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	/* A fixed limit has no reason to give. */
	CHECK_EQ(nvq_qos_set_limit(qc, 7), 0);
	nvq_qos_info(qc, &info);
	CHECK_STREQ(info.reason, "");
	nvq_qos_ctrl_destroy(qc);

	/* haltpoll: auto means "n/a" in the file. */
	tree(1, "current_governor", "haltpoll", haltpoll_like, 2);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_AUTO), 0);
	fq_init(&q, qc, cpus0);
	fq_submit(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	fq_destroy(&q);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	nvq_qos_ctrl_destroy(qc);

	/* auto resolving to off arms nothing. */
	tree(1, "current_governor", "menu", haltpoll_like, 2);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_AUTO), 0);
	fq_init(&q, qc, cpus0);
	CHECK_EQ(q.qos_idle, 0);
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.effective_us, NVQ_QOS_OFF);
	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
}

int main(void)
{
	check_cleanup = cleanup;
	CHECK_EQ(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD), 0);
	test_tables();
	test_ctrl_auto();
	cleanup();
	return 0;
}
