// SPDX-License-Identifier: MIT
/*
 * Limits outlive nothing, whoever dies how: a process killed with SIGKILL
 * cannot restore its files, and the next nvq process (or
 * nvq_qos_restore_dead(), "nvq qos-restore") must, taking the original
 * from the state file rather than the killed process's leftover; several
 * live processes on one CPU keep the strictest limit and the last one out
 * restores the original; a dead entry whose pid now belongs to another
 * process (wrong start time) counts as dead. All on a fake sysfs tree,
 * whose state file lives inside the tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
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

static const int cpus0[] = { 0, -1 }, cpus01[] = { 0, 1, -1 };

/* A process that holds a limit until told on its pipe what to do. */
struct holder {
	pid_t pid;
	int cmd; /* parent -> child */
	int ack; /* child -> parent */
};

enum { CMD_OFF = 'o', CMD_EXIT = 'x' };

static void send_byte(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(97);
}

static char recv_byte(int fd)
{
	char c = 0;

	if (read(fd, &c, 1) != 1)
		return 0;
	return c;
}

static void holder_main(int limit, const int *cpus, int cmd, int ack)
{
	struct nvq_qos_ctrl *qc;
	struct fake_queue q;
	char c;

	if (nvq_qos_set_sysfs_root(root) || nvq_qos_ctrl_create(&qc) ||
	    nvq_qos_set_timeout(qc, NVQ_QOS_TIMEOUT_MS_MAX) ||
	    nvq_qos_set_limit(qc, limit))
		_exit(90);
	fq_init(&q, qc, cpus);
	fq_submit(&q);
	send_byte(ack, 'a');
	for (;;) {
		c = recv_byte(cmd);
		if (c == CMD_OFF) {
			if (nvq_qos_set_limit(qc, NVQ_QOS_OFF))
				_exit(91);
			send_byte(ack, 'o');
			continue;
		}
		/* CMD_EXIT, or the parent went away. */
		fq_destroy(&q);
		nvq_qos_ctrl_destroy(qc);
		exit(0);
	}
}

static void holder_start(struct holder *h, int limit, const int *cpus)
{
	int cmd[2], ack[2];

	CHECK(!pipe(cmd) && !pipe(ack));
	fflush(NULL);
	h->pid = fork();
	CHECK(h->pid >= 0);
	if (!h->pid) {
		check_cleanup = NULL;
		close(cmd[1]);
		close(ack[0]);
		holder_main(limit, cpus, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	h->cmd = cmd[1];
	h->ack = ack[0];
	CHECK_EQ(recv_byte(h->ack), 'a');
}

static void holder_off(struct holder *h)
{
	send_byte(h->cmd, CMD_OFF);
	CHECK_EQ(recv_byte(h->ack), 'o');
}

static void holder_reap(struct holder *h, bool killed)
{
	int status;

	if (killed)
		CHECK(!kill(h->pid, SIGKILL));
	else
		send_byte(h->cmd, CMD_EXIT);
	CHECK_EQ(waitpid(h->pid, &status, 0), h->pid);
	if (killed) {
		CHECK(WIFSIGNALED(status));
		CHECK_EQ(WTERMSIG(status), SIGKILL);
	} else {
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
	}
	close(h->cmd);
	close(h->ack);
}

static void reset_files(void)
{
	fake_write(root, F0, OLD "\n");
	fake_write(root, F1, "0\n");
}

/* The state file's path, from the library. */
static const char *state_path(void)
{
	static char path[512];

	CHECK(nvq_qos_restore_dead(NULL, 0, path, sizeof(path)) >= 0);
	CHECK_CONTAINS(path, root);
	return path;
}

static bool state_empty(void)
{
	return access(state_path(), F_OK) && errno == ENOENT;
}

/* SIGKILL, then a new process places a limit: the true original returns. */
static void test_kill_then_new_process(void)
{
	struct holder a, b;

	reset_files();
	holder_start(&a, 0, cpus01);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	holder_reap(&a, true);
	/* Nobody could restore: that is what the state file is for. */
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	CHECK_STREQ(fake_cpu_value(root, 1), "n/a");

	/* The next process undoes the dead one's limits first. */
	holder_start(&b, 100, cpus0);
	CHECK_STREQ(fake_cpu_value(root, 0), "100");
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	/* And restores the original, not the leftover "n/a". */
	holder_off(&b);
	CHECK_STREQ(fake_cpu_value(root, 0), OLD);
	holder_reap(&b, false);
	CHECK_STREQ(fake_cpu_value(root, 0), OLD);
	CHECK(state_empty());
}

/* SIGKILL, then nvq_qos_restore_dead() as "nvq qos-restore" calls it. */
static void test_kill_then_restore(void)
{
	struct nvq_qos_holder h[8];
	struct holder a;
	int n, i;

	reset_files();
	holder_start(&a, 0, cpus01);
	holder_reap(&a, true);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");

	n = nvq_qos_restore_dead(h, 8, NULL, 0);
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++) {
		CHECK_EQ(h[i].pid, a.pid);
		CHECK(!h[i].live);
		CHECK_EQ(h[i].limit_us, 0);
		CHECK_STREQ(h[i].value, h[i].cpu ? "0" : OLD);
	}
	CHECK_STREQ(fake_cpu_value(root, 0), OLD);
	CHECK_STREQ(fake_cpu_value(root, 1), "0");
	CHECK(state_empty());
	/* Nothing left: a second run finds nothing. */
	CHECK_EQ(nvq_qos_restore_dead(h, 8, NULL, 0), 0);
}

/* Two live processes on one CPU: strictest wins, last one out restores. */
static void test_two_live(void)
{
	struct nvq_qos_holder h[8];
	struct holder a, b;
	int n, i;

	reset_files();
	holder_start(&a, 0, cpus0);
	holder_start(&b, 50, cpus0);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	/* Both live: a restore run changes nothing. */
	n = nvq_qos_restore_dead(h, 8, NULL, 0);
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++)
		CHECK(h[i].live);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");

	holder_off(&a);
	CHECK_STREQ(fake_cpu_value(root, 0), "50");
	holder_off(&b);
	CHECK_STREQ(fake_cpu_value(root, 0), OLD);

	/* Again, with the stricter one killed: the other one's stays. */
	holder_start(&a, 0, cpus0);
	holder_start(&b, 50, cpus0);
	holder_reap(&a, true);
	CHECK_STREQ(fake_cpu_value(root, 0), "n/a");
	n = nvq_qos_restore_dead(h, 8, NULL, 0);
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++)
		CHECK_EQ(h[i].live, h[i].pid == b.pid);
	CHECK_STREQ(fake_cpu_value(root, 0), "50");
	holder_reap(&b, false);
	CHECK_STREQ(fake_cpu_value(root, 0), OLD);
	CHECK(state_empty());
}

/* Field 22 of /proc/@pid/stat. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	int fd, field;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(n > 0);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	CHECK(p);
	p += 2;
	for (field = 3; field < 22; field++)
		p = strchr(p, ' ') + 1;
	CHECK_EQ(sscanf(p, "%llu", &v), 1);
	return v;
}

/*
 * An entry whose pid runs but started at another time is a dead
 * process's (the pid was reused); one whose pid and start time match is
 * live. Both faked by hand: this process's pid with a wrong start time,
 * the parent's with its right one.
 */
static void test_pid_reuse(void)
{
	struct nvq_qos_holder h[8];
	char text[256];
	pid_t me = getpid(), parent = getppid();
	int n, i, fd;

	reset_files();
	fake_write(root, F0, "n/a\n");
	fake_write(root, F1, "40\n");
	snprintf(text, sizeof(text),
		 "nvq-qos-state 1\norig 0 " OLD "\norig 1 0\n"
		 "hold 0 %d %llu 0\nhold 1 %d %llu 40\n",
		 (int)me, start_time(me) + 12345, (int)parent,
		 start_time(parent));
	fd = open(state_path(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);

	n = nvq_qos_restore_dead(h, 8, NULL, 0);
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++) {
		if (h[i].cpu == 0) {
			CHECK_EQ(h[i].pid, me);
			CHECK(!h[i].live);
			CHECK_STREQ(h[i].value, OLD);
		} else {
			CHECK_EQ(h[i].pid, parent);
			CHECK(h[i].live);
			CHECK_STREQ(h[i].value, "40");
		}
	}
	CHECK_STREQ(fake_cpu_value(root, 0), OLD);
	CHECK_STREQ(fake_cpu_value(root, 1), "40");
	/* The parent's entry stays until it goes: take it out by hand. */
	CHECK(!unlink(state_path()));
}

int main(void)
{
	check_cleanup = cleanup;
	root = fake_root(2, "0");
	CHECK_EQ(nvq_qos_set_backend(NVQ_QOS_BACKEND_SYSFS), 0);
	CHECK_EQ(nvq_qos_set_sysfs_root(root), 0);
	test_kill_then_new_process();
	test_kill_then_restore();
	test_two_live();
	test_pid_reuse();
	cleanup();
	return 0;
}
