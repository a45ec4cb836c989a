// SPDX-License-Identifier: MIT
/*
 * The real files through the public API: while a thread-mode queue of the
 * emulated controller does I/O, the completion CPU's
 * /sys/devices/system/cpu/cpuN/power/pm_qos_resume_latency_us says "n/a"
 * (limit 0); it returns to its previous text after the timeout and after
 * nvq_close(). Needs root; skips otherwise. The checks run in a child and
 * the parent writes every CPU's previous text back whatever happens, also
 * on SIGINT/SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire_helpers.h"

#define MAX_CPUS 64
#define FILE_FMT "/sys/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us"

static int ncpus;
static char path[MAX_CPUS][96];
static char orig[MAX_CPUS][32];
static size_t orig_len[MAX_CPUS];
static pid_t child;

static const char *value(int cpu)
{
	static char buf[32];

	CHECK(nvq_sysfs_read(path[cpu], buf, sizeof(buf)) >= 0);
	return buf;
}

/* Async-signal-safe: open/write/close on prepared paths and texts. */
static void put_back(void)
{
	int cpu, fd;

	for (cpu = 0; cpu < ncpus; cpu++) {
		fd = open(path[cpu], O_WRONLY | O_TRUNC);
		if (fd < 0)
			continue;
		if (write(fd, orig[cpu], orig_len[cpu]) < 0)
			(void)0;
		close(fd);
	}
}

static void on_signal(int sig)
{
	if (child > 0)
		kill(child, SIGKILL);
	put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void checks(void)
{
	struct nvq_qos_stats st;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	int cpu, other;

	unsetenv("NVQ_SYSFS_ROOT");
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), 0);
	CHECK_EQ(nvq_qos_set_sysfs_root(NULL), 0);
	c = wire_open(NULL, NVQ_MODE_THREAD, 1, 0, NVQ_QOS_TIMEOUT_MS_MAX);
	q = nvq_ctrl_queue(c, 0);

	cpu = wire_io(c, q, 8);
	CHECK(cpu >= 0 && cpu < ncpus);
	CHECK_STREQ(value(cpu), "n/a");
	for (other = 0; other < ncpus; other++)
		if (other != cpu)
			CHECK_STREQ(value(other), orig[other]);

	/* Released by the timer once the I/O stops. */
	CHECK_EQ(nvq_qos_set_timeout(nvq_ctrl_qos(c), 3), 0);
	CHECK(WAIT_FOR((nvq_qos_queue_stats(nvq_queue_qos(q), &st),
			st.releases == 1),
		       10));
	CHECK_STREQ(value(cpu), orig[cpu]);

	/* Released by nvq_close(). */
	CHECK_EQ(nvq_qos_set_timeout(nvq_ctrl_qos(c), NVQ_QOS_TIMEOUT_MS_MAX),
		 0);
	CHECK_EQ(wire_io(c, q, 4), cpu);
	CHECK_STREQ(value(cpu), "n/a");
	nvq_close(c);
	CHECK_STREQ(value(cpu), orig[cpu]);
}

int main(void)
{
	int cpu, status, bad = 0;

	if (geteuid() != 0)
		SKIP("needs root to write the PM QoS files");
	ncpus = wire_ncpus() < MAX_CPUS ? wire_ncpus() : MAX_CPUS;
	for (cpu = 0; cpu < ncpus; cpu++) {
		snprintf(path[cpu], sizeof(path[cpu]), FILE_FMT, cpu);
		if (nvq_sysfs_read(path[cpu], orig[cpu], sizeof(orig[cpu])) < 0)
			SKIP("%s not present", path[cpu]);
		orig_len[cpu] = strlen(orig[cpu]);
		printf("cpu%d resume latency before: \"%s\"\n", cpu, orig[cpu]);
	}
	if (access(path[0], W_OK))
		SKIP("%s is not writable", path[0]);

	fflush(NULL);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	child = fork();
	CHECK(child >= 0);
	if (!child) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		check_cleanup = put_back;
		checks();
		exit(0);
	}
	CHECK_EQ(waitpid(child, &status, 0), child);
	child = 0;
	for (cpu = 0; cpu < ncpus; cpu++) {
		if (strcmp(value(cpu), orig[cpu])) {
			fprintf(stderr, "%s left at \"%s\", was \"%s\"\n",
				path[cpu], value(cpu), orig[cpu]);
			bad = 1;
		}
	}
	put_back();
	if (bad)
		return 1;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "checks failed (status 0x%x)\n", status);
		return 1;
	}
	return 0;
}
