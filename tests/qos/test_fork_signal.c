// SPDX-License-Identifier: MIT
/*
 * Nobody else's limits, and no false statistics. A child of fork() leaves
 * its parent's limits alone whether it calls exit(), dies of SIGTERM or
 * SIGINT (raised, or sent by the parent) or closes the controller it
 * inherited, and holds none itself. A process that holds limits and dies
 * of SIGTERM's or SIGINT's default action puts the files back first, also
 * when the signal is taken late, in a call that blocks it (as
 * ThreadSanitizer delivers signals). An application that handles SIGINT
 * itself and goes on: the library puts the files back before the
 * application's handler runs, the statistics then say released, and the
 * next submission takes the limit again. A handler installed after the
 * library's replaces it: the limit stays, and the statistics say so. On a
 * fake sysfs tree; the same checks with and without ThreadSanitizer.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos_helpers.h"

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

enum how { EXIT, TERM, INT, KILL, CLOSE };

/*
 * The parent holds a limit (and runs the QoS timer thread) when it forks:
 * under ThreadSanitizer the child of a multithreaded process never runs a
 * signal handler, so only the default action can end it.
 */
static void test_fork(enum how how)
{
	struct nvq_qos_ctrl *qc;
	struct nvq_qos_stats st;
	struct fake_queue q;
	int fds[2], status, sig;
	pid_t pid;
	char c;

	reset_files();
	qc = ctrl(0);
	fq_init(&q, qc, cpus01);
	fq_submit(&q);
	CHECK(held());

	CHECK(!pipe(fds));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		check_cleanup = NULL;
		close(fds[0]);
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
		case INT:
			raise(SIGINT);
			_exit(81);
		case KILL:
			/* Ready; the parent's SIGTERM ends the wait. */
			if (write(fds[1], "r", 1) != 1)
				_exit(83);
			for (;;)
				pause();
		case CLOSE:
			fq_destroy(&q);
			nvq_qos_ctrl_destroy(qc);
			exit(0);
		}
		_exit(82);
	}
	close(fds[1]);
	if (how == KILL) {
		CHECK_EQ(read(fds[0], &c, 1), 1);
		CHECK(!kill(pid, SIGTERM));
	}
	close(fds[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	sig = how == TERM || how == KILL ? SIGTERM : how == INT ? SIGINT : 0;
	if (sig) {
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), sig);
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

/* In a child: hold a limit, then take @sig with its default action. */
static void die_holding(int sig, bool late)
{
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	sigset_t set;

	qc = ctrl(0);
	fq_init(&q, qc, cpus01);
	fq_submit(&q);
	if (!held())
		_exit(84);
	if (!late) {
		raise(sig);
		_exit(81);
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	/*
	 * As if sent from outside (the system call, not a wrapper that
	 * ThreadSanitizer intercepts), then blocked. Natively the handler
	 * runs as the system call returns. ThreadSanitizer runs it in the
	 * next intercepted call, this pthread_sigmask(), and goes back to
	 * the mask that call set: one that blocks the re-raised signal.
	 */
	syscall(SYS_tgkill, pid, tid, sig);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	_exit(81);
}

/*
 * The process dies of the signal, as without nvq, and the files hold
 * their old text. Forked while this process has no thread but its main
 * one, so that the child's handlers run under ThreadSanitizer too.
 */
static void test_default_action(int sig, bool late)
{
	int status;
	pid_t pid;

	reset_files();
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		check_cleanup = NULL;
		die_holding(sig, late);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), sig);
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
	/* These fork before this process holds a limit or runs a thread. */
	test_default_action(SIGTERM, false);
	test_default_action(SIGINT, false);
	test_default_action(SIGTERM, true);
	test_default_action(SIGINT, true);
	test_handled_sigint(false);
	test_handled_sigint(true);
	test_fork(EXIT);
	test_fork(TERM);
	test_fork(INT);
	test_fork(KILL);
	test_fork(CLOSE);
	cleanup();
	return 0;
}
