// SPDX-License-Identifier: MIT
/*
 * The real files: CPU 0's pm_qos_resume_latency_us changes while a fake
 * queue is active and returns to its previous text after release (by knob,
 * by timeout and by close); /dev/cpu_dma_latency's global value likewise.
 * Needs root; skips otherwise. The previous text is written back by this
 * test too, on every path out of it: signals, crashes, failed checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos_helpers.h"

#define CPU0 "/sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us"
#define DMA "/dev/cpu_dma_latency"

static char orig[32];
static size_t orig_len;

static const char *cpu0_value(void)
{
	static char buf[32];

	CHECK(nvq_sysfs_read(CPU0, buf, sizeof(buf)) >= 0);
	return buf;
}

/* Async-signal-safe: used by the failure path and the signal handler. */
static void put_back(void)
{
	int fd = open(CPU0, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return;
	if (write(fd, orig, orig_len) < 0)
		(void)0;
	close(fd);
}

static void on_signal(int sig)
{
	put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* What the file should say while a limit of @us is held. */
static const char *expected(int us, char *buf, size_t len)
{
	long v;

	/* nvq never loosens what was there before. */
	if (!strcmp(orig, "n/a"))
		return "n/a";
	v = strtol(orig, NULL, 10);
	if (v && v <= us)
		return orig;
	if (!us)
		return "n/a";
	snprintf(buf, len, "%d", us);
	return buf;
}

static void test_sysfs(void)
{
	static const int cpus0[] = { 0, -1 };
	struct nvq_qos_info info;
	struct nvq_qos_stats st;
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	char buf[32];

	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), 0);
	CHECK_EQ(nvq_qos_set_sysfs_root(NULL), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, 20), 0);
	nvq_qos_info(qc, &info);
	CHECK_STREQ(info.status, "");
	fq_init(&q, qc, cpus0);

	fq_submit(&q);
	CHECK_STREQ(cpu0_value(), expected(20, buf, sizeof(buf)));
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	CHECK_STREQ(cpu0_value(), "n/a");
	CHECK_EQ(nvq_qos_set_limit(qc, NVQ_QOS_OFF), 0);
	CHECK_STREQ(cpu0_value(), orig);

	/* Released by the timer. */
	CHECK_EQ(nvq_qos_set_limit(qc, 0), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_DEFAULT), 0);
	fq_submit(&q);
	CHECK(WAIT_FOR((nvq_qos_queue_stats(q.qos, &st), st.releases == 2),
		       10));
	CHECK_STREQ(cpu0_value(), orig);
	CHECK_EQ(st.applies, 2);

	/* Released by closing. */
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	fq_submit(&q);
	CHECK_STREQ(cpu0_value(), "n/a");
	nvq_qos_ctrl_destroy(qc);
	CHECK_STREQ(cpu0_value(), orig);
	fq_destroy(&q);
}

static int32_t dma_value(void)
{
	int32_t v = -1;
	int fd = open(DMA, O_RDONLY);

	CHECK(fd >= 0);
	CHECK_EQ(read(fd, &v, sizeof(v)), sizeof(v));
	close(fd);
	return v;
}

static void test_dma(void)
{
	static const int cpus0[] = { 0, -1 };
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	int32_t before;

	if (access(DMA, W_OK)) {
		printf("%s not writable: global backend not tested\n", DMA);
		return;
	}
	before = dma_value();
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_DMA_LATENCY), 0);
	CHECK_EQ(nvq_qos_ctrl_create(&qc), 0);
	CHECK_EQ(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX), 0);
	CHECK_EQ(nvq_qos_set_limit(qc, 20), 0);
	fq_init(&q, qc, cpus0);
	fq_submit(&q);
	CHECK_EQ(dma_value(), before < 20 ? before : 20);
	fq_destroy(&q);
	CHECK_EQ(dma_value(), before);
	/* cpu0's file was never touched by this backend. */
	CHECK_STREQ(cpu0_value(), orig);
	nvq_qos_ctrl_destroy(qc);
}

static pid_t child;

/* The parent's last word: the file is as it was, whatever the child did. */
static void parent_signal(int sig)
{
	if (child > 0)
		kill(child, SIGKILL);
	put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(void)
{
	int status;

	if (geteuid() != 0)
		SKIP("needs root to write %s", CPU0);
	if (nvq_sysfs_read(CPU0, orig, sizeof(orig)) < 0)
		SKIP("%s not present", CPU0);
	orig_len = strlen(orig);
	printf("cpu0 resume latency before: \"%s\"\n", orig);

	/*
	 * The checks run in a child, so that even a crash or a sanitizer's
	 * _exit() there cannot leave the real file changed: the parent puts
	 * it back in any case.
	 */
	fflush(NULL);
	signal(SIGINT, parent_signal);
	signal(SIGTERM, parent_signal);
	child = fork();
	CHECK(child >= 0);
	if (!child) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		check_cleanup = put_back;
		test_sysfs();
		test_dma();
		CHECK_STREQ(cpu0_value(), orig);
		exit(0);
	}
	CHECK_EQ(waitpid(child, &status, 0), child);
	child = 0;
	if (strcmp(cpu0_value(), orig)) {
		fprintf(stderr, "%s left at \"%s\", was \"%s\"\n", CPU0,
			cpu0_value(), orig);
		put_back();
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "checks failed (status 0x%x)\n", status);
		return 1;
	}
	return 0;
}
