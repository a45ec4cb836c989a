// SPDX-License-Identifier: MIT
/*
 * Nobody else's limits, and no false statistics. A child of fork() leaves
 * its parent's limits alone whether it calls exit(), dies of SIGTERM or
 * closes the controller it inherited, and holds none itself. An
 * application that handles SIGINT itself and goes on: the library puts
 * the files back before the application's handler runs, the statistics
 * then say released, and the next submission takes the limit again. A
 * handler installed after the library's replaces it: the limit stays, and
 * the statistics say so. On a fake sysfs tree.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos_helpers.h"

/*
 * Under ThreadSanitizer a signal that nvq's handler hands on to the
 * default action (sigaction(SIG_DFL) and raise() inside the handler)
 * never ends the process: the SIGTERM case runs only without it.
 */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#define OLD "250"
#define F0 "devices/system/cpu/cpu0/power/pm_qos_resume_latency_us"
#define F1 "devices/system/cpu/cpu1/power/pm_qos_resume_latency_us"

static char *root;

static void cleanup(void)
{
	fake_remove(root);
	root = NULL;
}

static const int cpus01[] = { 0, 1, -1 };

static void reset_files(void)
{
	fake_write(root, F0, OLD "\n");
	fake_write(root, F1, "0\n");
}

static bool held(void)
{
	return !strcmp(fake_cpu_value(root, 0), "n/a") &&
	       !strcmp(fake_cpu_value(root, 1), "n/a");
}

static bool restored(void)
{
	return !strcmp(fake_cpu_value(root, 0), OLD) &&
	       !strcmp(fake_cpu_value(root, 1), "0");
}

static struct nvq_qos_ctrl *ctrl(int limit)
{
	struct nvq_qos_ctrl *qc;

	CHECK_OK(nvq_qos_ctrl_create(&qc));
	/* Long enough that the timer never releases during a case. */
	CHECK_OK(nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX));
	CHECK_OK(nvq_qos_set_limit(qc, limit));
	return qc;
}

enum how { EXIT, TERM, CLOSE };

static void test_fork(enum how how)
{
	struct nvq_qos_ctrl *qc;
	struct nvq_qos_stats st;
	struct fake_queue q;
	int status;
	pid_t pid;

	reset_files();
	qc = ctrl(0);
	fq_init(&q, qc, cpus01);
	fq_submit(&q);
	CHECK(held());

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		check_cleanup = NULL;
		/* The child holds nothing, and says so. */
		nvq_qos_queue_stats(q.qos, &st);
		if (st.active)
			_exit(80);
		switch (how) {
		case EXIT:
			exit(0);
		case TERM:
			raise(SIGTERM);
			_exit(81);
		case CLOSE:
			fq_destroy(&q);
			nvq_qos_ctrl_destroy(qc);
			exit(0);
		}
		_exit(82);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (how == TERM) {
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), SIGTERM);
	} else {
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
	}
	/* The parent's limit is where it was. */
	CHECK(held());
	nvq_qos_queue_stats(q.qos, &st);
	CHECK(st.active);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 0);

	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
	CHECK(restored());
}

static volatile sig_atomic_t got;

static void on_int(int sig)
{
	got++;
}

static void on_int_info(int sig, siginfo_t *si, void *uc)
{
	if (si && si->si_signo == SIGINT)
		got++;
}

/* In a child: signal dispositions do not leak into the other cases. */
static void handled_sigint(bool siginfo)
{
	struct nvq_qos_ctrl *qc;
	struct nvq_qos_stats st;
	struct sigaction sa;
	struct fake_queue q;

	memset(&sa, 0, sizeof(sa));
	if (siginfo) {
		sa.sa_sigaction = on_int_info;
		sa.sa_flags = SA_SIGINFO;
	} else {
		sa.sa_handler = on_int;
	}
	CHECK(!sigaction(SIGINT, &sa, NULL));

	qc = ctrl(0);
	fq_init(&q, qc, cpus01);
	fq_submit(&q);
	CHECK(held());

	CHECK(!raise(SIGINT));
	CHECK_EQ(got, 1);
	/* Put back before the handler ran, and reported as released. */
	CHECK(restored());
	nvq_qos_queue_stats(q.qos, &st);
	CHECK(!st.active);
	CHECK_EQ(st.applies, 1);
	CHECK_EQ(st.releases, 1);

	/* The next submission is an idle -> active transition again. */
	CHECK_EQ(q.qos_idle, 1);
	fq_submit(&q);
	CHECK(held());
	nvq_qos_queue_stats(q.qos, &st);
	CHECK(st.active);
	CHECK_EQ(st.applies, 2);

	/* And the next signal the same. */
	CHECK(!raise(SIGINT));
	CHECK_EQ(got, 2);
	CHECK(restored());
	nvq_qos_queue_stats(q.qos, &st);
	CHECK(!st.active);
	CHECK_EQ(st.releases, 2);

	/* A handler installed after nvq's replaces it: the limit stays. */
	fq_submit(&q);
	CHECK(held());
	CHECK(!sigaction(SIGINT, &sa, NULL));
	CHECK(!raise(SIGINT));
	CHECK_EQ(got, 3);
	CHECK(held());
	nvq_qos_queue_stats(q.qos, &st);
	CHECK(st.active);
	CHECK_EQ(st.applies, 3);

	fq_destroy(&q);
	nvq_qos_ctrl_destroy(qc);
	CHECK(restored());
}

static void test_handled_sigint(bool siginfo)
{
	int status;
	pid_t pid;

	reset_files();
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		handled_sigint(siginfo);
		exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK(restored());
}

int main(void)
{
	check_cleanup = cleanup;
	root = fake_root(2, "0");
	CHECK_OK(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS));
	CHECK_OK(nvq_qos_set_sysfs_root(root));
	test_handled_sigint(false);
	test_handled_sigint(true);
	test_fork(EXIT);
	if (!UNDER_TSAN)
		test_fork(TERM);
	test_fork(CLOSE);
	cleanup();
	return 0;
}
