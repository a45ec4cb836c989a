// SPDX-License-Identifier: MIT
/*
 * Without permission to write the PM QoS files: one clear message (in
 * nvq_errmsg() after the knob is set, and in nvq_qos_info()), nothing
 * printed, no crash, and the hot path goes quiet instead of retrying on
 * every batch. As root the files' mode means nothing, so the body runs in
 * a child that becomes "nobody".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos_helpers.h"

static char *root;
static char dma_file[64];

static void cleanup(void)
{
	fake_remove(root);
	root = NULL;
	if (dma_file[0])
		unlink(dma_file);
}

static const int cpus01[] = { 0, 1, -1 };

static void expect_denied(struct nvq_qos_ctrl *qc, const char *path_part)
{
	struct nvq_qos_info info;
	struct nvq_qos_stats st;
	struct fake_queue q;

	nvq_err_clear();
	/* The setting stands; the message says why it does nothing. */
	CHECK_EQ(nvq_qos_set_limit(qc, 50), 0);
	if (!strstr(nvq_errmsg(), path_part) ||
	    !strstr(nvq_errmsg(), "Permission denied")) {
		fprintf(stderr, "unclear message: \"%s\"\n", nvq_errmsg());
		check_exit_fail();
	}
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.effective_us, 50);
	CHECK(strstr(info.status, path_part));

	fq_init(&q, qc, cpus01);
	CHECK_EQ(q.qos_idle, 1);
	fq_submit(&q);
	/* Quiet from now on: no slow path per batch. */
	CHECK_EQ(q.qos_idle, 0);
	fq_submit(&q);
	nvq_qos_queue_stats(q.qos, &st);
	CHECK_EQ(st.applies, 0);
	CHECK(!st.active);
	CHECK_STREQ(fake_cpu_value(root, 0), "0");
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	nvq_qos_info(qc, &info);
	CHECK(strstr(info.status, path_part));
	fq_destroy(&q);
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
}

static int body(void)
{
	struct nvq_qos_ctrl *qc;

	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), 0);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	expect_denied(qc, "pm_qos_resume_latency_us");

	/* With the global fallback denied as well: both named. */
	CHECK_EQ(nvq_qos_set_dma_latency_path(dma_file), 0);
	expect_denied(qc, dma_file);
	CHECK(strstr(nvq_errmsg(), "pm_qos_resume_latency_us"));
	CHECK(!nvq_qos_dma_latency_open());

	/* The knob can still go off and on, and the controller close. */
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_DMA_LATENCY), 0);
	expect_denied(qc, dma_file);
	nvq_qos_ctrl_destroy(qc);
	return 0;
}

int main(void)
{
	char rel[128];
	int cpu, fd, status;
	pid_t pid;

	check_cleanup = cleanup;
	root = fake_root(2, "0");
	for (cpu = 0; cpu < 2; cpu++) {
		snprintf(
			rel, sizeof(rel),
			"%s/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
			root, cpu);
		CHECK(!chmod(rel, 0444));
	}
	strcpy(dma_file, "/tmp/nvq-qos-dma-XXXXXX");
	fd = mkstemp(dma_file);
	CHECK(fd >= 0);
	close(fd);
	CHECK(!chmod(dma_file, 0444));

	if (geteuid() != 0) {
		body();
		cleanup();
		return 0;
	}

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		check_cleanup = NULL;
		if (setgid(65534) || setuid(65534)) {
			perror("setuid nobody");
			_exit(2);
		}
		/* LeakSanitizer needs to trace us at exit. */
		prctl(PR_SET_DUMPABLE, 1);
		exit(body());
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	cleanup();
	return 0;
}
