/* SPDX-License-Identifier: MIT */
/* cpuidle residency from a fake sysfs tree, and getrusage sampling. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cpustat.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	/* mkdir -p of the parent */
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void state(int cpu, int k, const char *name, unsigned long long t)
{
	char rel[128], val[32];

	snprintf(rel, sizeof(rel), "cpu%d/cpuidle/state%d/name", cpu, k);
	put(rel, name);
	snprintf(rel, sizeof(rel), "cpu%d/cpuidle/state%d/time", cpu, k);
	snprintf(val, sizeof(val), "%llu\n", t);
	put(rel, val);
}

/* Write @text to @path. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* /proc/stat: the "cpu" line's busy and total time, and the CPU count. */
static void test_machine(void)
{
	struct perf_machine_snap m;
	char path[256];

	snprintf(path, sizeof(path), "/tmp/nvq-perf-stat.%d", getpid());
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	write_file(path, "cpu  100 2 30 1000 7 4 5 6 50 1\n"
			 "cpu0 50 1 15 500 3 2 2 3 25 0\n"
			 "cpu1 50 1 15 500 4 2 3 3 25 1\n"
			 "intr 12345 0 0\n"
			 "ctxt 999\n"
			 "cpufreq 1\n");
	CHECK(perf_machine_snapshot(&m, path, 100) == 0);
	/* busy: 100 + 2 + 30 + 4 + 5 + 6 ticks; guest is inside user */
	CHECK_EQ(m.busy_ns, 147ull * 10000000ull);
	CHECK_EQ(m.total_ns, (147ull + 1007ull) * 10000000ull);
	CHECK_EQ(m.nr_cpus, 2u);
	CHECK(perf_machine_snapshot(&m, path, 1000) == 0);
	CHECK_EQ(m.busy_ns, 147ull * 1000000ull);

	/* An old kernel's five fields are enough. */
	write_file(path, "cpu 1 2 3 4 5\ncpu0 1 2 3 4 5\n");
	CHECK(perf_machine_snapshot(&m, path, 100) == 0);
	CHECK_EQ(m.busy_ns, 6ull * 10000000ull);
	CHECK_EQ(m.total_ns, 15ull * 10000000ull);

	/* Not a /proc/stat: no figures. */
	write_file(path, "cpu 1 2 3\n");
	CHECK(perf_machine_snapshot(&m, path, 100) == -EINVAL);
	write_file(path, "intr 1\ncpu0 1 2 3 4 5\n");
	CHECK(perf_machine_snapshot(&m, path, 100) == -EINVAL);
	write_file(path, "");
	CHECK(perf_machine_snapshot(&m, path, 100) == -EINVAL);
	unlink(path);
	CHECK(perf_machine_snapshot(&m, path, 100) == -ENOENT);

	/* The real one, with the real tick rate. */
	CHECK(perf_machine_snapshot(&m, NULL, 0) == 0);
	CHECK(m.nr_cpus >= 1 && m.total_ns >= m.busy_ns && m.total_ns > 0);
}

int main(void)
{
	struct perf_idle_snap a, b;
	struct perf_idle r;
	struct perf_cpu_snap c0, c1;
	char cmd[300];
	volatile double x = 0;
	int i;

	snprintf(root, sizeof(root), "/tmp/nvq-perf-cpustat.%d", getpid());
	mkdir(root, 0755);
	/* cpu10 sorts after cpu2 numerically; cpufreq is not a CPU. */
	state(0, 0, "POLL\n", 1000);
	state(0, 1, "C6\n", 50000);
	state(2, 0, "POLL\n", 0);
	state(2, 1, "C6\n", 0);
	state(10, 0, "POLL\n", 0);
	state(10, 1, "C6\n", 0);
	put("cpufreq/policy0/x", "1");
	put("cpu3/online", "0");

	CHECK(perf_idle_snapshot(&a, root) == 0);
	CHECK(a.nr_cpus == 3 && a.nr_states == 2);
	CHECK(a.cpu[0] == 0 && a.cpu[1] == 2 && a.cpu[2] == 10);
	CHECK(!strcmp(a.names[0], "POLL") && !strcmp(a.names[1], "C6"));

	/* 100 ms later: cpu0 25 ms in C6, cpu2 50 ms, cpu10 100 ms in POLL */
	state(0, 0, "POLL\n", 1000);
	state(0, 1, "C6\n", 75000);
	state(2, 1, "C6\n", 50000);
	state(10, 0, "POLL\n", 100000);
	CHECK(perf_idle_snapshot(&b, root) == 0);
	CHECK(perf_idle_diff(&a, &b, 100000000ull, &r) == 0);
	CHECK(fabs(r.pct[0 * 2 + 1] - 25) < 1e-9);
	CHECK(fabs(r.pct[1 * 2 + 1] - 50) < 1e-9);
	CHECK(fabs(r.pct[2 * 2 + 0] - 100) < 1e-9);
	CHECK(fabs(r.avg[1] - 25) < 1e-9);
	CHECK(fabs(r.avg[0] - 100.0 / 3) < 1e-9);
	CHECK(r.nr_cpus == 3 && r.cpu[2] == 10 && !strcmp(r.names[1], "C6"));
	perf_idle_free(&r);

	/* Snapshots of different CPU sets do not diff. */
	state(11, 0, "POLL\n", 0);
	perf_idle_snap_free(&b);
	CHECK(perf_idle_snapshot(&b, root) == 0 && b.nr_cpus == 4);
	CHECK(perf_idle_diff(&a, &b, 1000, &r) == -EINVAL);
	perf_idle_snap_free(&a);
	perf_idle_snap_free(&b);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
	/* No cpuidle at all. */
	CHECK(perf_idle_snapshot(&a, "/nonexistent-nvq") == -ENOENT);

	/* CPU time moves forward while we burn some. */
	CHECK(perf_cpu_snapshot(&c0) == 0);
	for (i = 0; i < 20000000; i++)
		x += i * 0.5;
	CHECK(perf_cpu_snapshot(&c1) == 0);
	CHECK(c1.usr_ns + c1.sys_ns > c0.usr_ns + c0.sys_ns);

	test_machine();
	return T_EXIT_PASS;
}
