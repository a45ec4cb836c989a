// SPDX-License-Identifier: MIT
/*
 * A process that dies with limits held leaves nothing behind: children
 * apply a limit on a fake tree and then take SIGTERM or SIGINT (raised or
 * sent from outside), call exit(), or pass the signal on to a handler of
 * their own; the parent finds the files' old text back each time, and the
 * child's fate what it would have been without nvq.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos_helpers.h"

#define OLD "250"

static char *root;
static int report_fd = -1;

static void cleanup(void)
{
	fake_remove(root);
	root = NULL;
}

static const int cpus01[] = { 0, 1, -1 };

/* In the child: hold a limit of 0 on cpu0 and cpu1, tell the parent. */
static void child_apply(void)
{
	struct nvq_qos_ctrl *qc;
	static struct fake_queue q;
	char msg[64];

	if (nvq_qos_set_sysfs_root(root) || nvq_qos_ctrl_create(&qc) ||
	    nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX) ||
	    nvq_qos_set_limit(qc, 0))
		_exit(90);
	fq_init(&q, qc, cpus01);
	fq_submit(&q);
	snprintf(msg, sizeof(msg), "%s", fake_cpu_value(root, 0));
	if (write(report_fd, msg, strlen(msg) + 1) < 0)
		_exit(91);
}

static void user_handler(int sig)
{
	/* By now nvq has put the file back. */
	const char *v = fake_cpu_value(root, 1);
	char msg[64] = "handler:";

	strcat(msg, v);
	if (write(report_fd, msg, strlen(msg) + 1) < 0)
		_exit(93);
	_exit(42);
}

enum how { RAISE_TERM, RAISE_INT, KILL_TERM, EXIT, CHAIN, IGNORED };

static void child(enum how how)
{
	switch (how) {
	case CHAIN:
		signal(SIGTERM, user_handler);
		break;
	case IGNORED:
		signal(SIGINT, SIG_IGN);
		break;
	default:
		break;
	}
	child_apply();
	switch (how) {
	case RAISE_TERM:
		raise(SIGTERM);
		break;
	case RAISE_INT:
		raise(SIGINT);
		break;
	case KILL_TERM:
		/* The parent sends it; any thread may take it. */
		for (;;)
			pause();
	case EXIT:
		exit(3);
	case CHAIN:
		raise(SIGTERM);
		break;
	case IGNORED:
		/* Ignored before nvq came: still ignored, still applied. */
		raise(SIGINT);
		if (strcmp(fake_cpu_value(root, 0), "n/a"))
			_exit(94);
		exit(0);
	}
	_exit(95);
}

/* One NUL-terminated message from the child; "" at end of file. */
static const char *get_msg(int fd)
{
	static char buf[128];
	size_t n = 0;

	while (n < sizeof(buf) - 1 && read(fd, &buf[n], 1) == 1 && buf[n])
		n++;
	buf[n] = '\0';
	return buf;
}

static void run(enum how how, const char *name)
{
	const char *msg;
	int fds[2], status;
	pid_t pid;

	fake_write(root,
		   "devices/system/cpu/cpu0/power/pm_qos_resume_latency_us",
		   OLD "\n");
	fake_write(root,
		   "devices/system/cpu/cpu1/power/pm_qos_resume_latency_us",
		   "0\n");
	CHECK(!pipe(fds));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		close(fds[0]);
		report_fd = fds[1];
		check_cleanup = NULL;
		child(how);
	}
	close(fds[1]);
	msg = get_msg(fds[0]);
	if (strcmp(msg, "n/a")) {
		fprintf(stderr, "%s: child saw \"%s\", not n/a\n", name, msg);
		check_exit_fail();
	}
	if (how == KILL_TERM)
		CHECK(!kill(pid, SIGTERM));
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	switch (how) {
	case RAISE_TERM:
	case KILL_TERM:
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), SIGTERM);
		break;
	case RAISE_INT:
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), SIGINT);
		break;
	case EXIT:
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 3);
		break;
	case CHAIN:
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 42);
		CHECK_STREQ(get_msg(fds[0]), "handler:0");
		break;
	case IGNORED:
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
		break;
	}
	close(fds[0]);
	if (strcmp(fake_cpu_value(root, 0), OLD) ||
	    strcmp(fake_cpu_value(root, 1), "0")) {
		fprintf(stderr, "%s: files not restored: cpu0 \"%s\"", name,
			fake_cpu_value(root, 0));
		fprintf(stderr, " cpu1 \"%s\"\n", fake_cpu_value(root, 1));
		check_exit_fail();
	}
}

int main(void)
{
	check_cleanup = cleanup;
	/*
	 * GCC 12's ThreadSanitizer sets a thread's signal state up at the
	 * thread's first blocking call, and loses a signal that comes
	 * meanwhile: its handler arms the signal in state of its own, which
	 * the interrupted setup then replaces (SigCtx() stores without a
	 * compare-and-swap). The SIGTERM from outside comes just as its
	 * child makes its first blocking call, pause(). One blocking call
	 * here, before any fork(), and every child inherits the state.
	 */
	usleep(1);
	root = fake_root(2, "0");
	/* The real backend's logic on a fake tree. */
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), 0);
	run(RAISE_TERM, "raise SIGTERM");
	run(RAISE_INT, "raise SIGINT");
	run(KILL_TERM, "SIGTERM from outside");
	run(EXIT, "exit()");
	run(CHAIN, "handler of the application");
	run(IGNORED, "ignored SIGINT, then exit()");
	cleanup();
	return 0;
}
