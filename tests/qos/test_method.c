// SPDX-License-Identifier: MIT
/*
 * How a limit is honoured (enum nvq_qos_method), chosen on fake sysfs
 * trees: "auto" takes the cpuidle method where a governor honours the
 * limit and nvq may write the files, nothing where the wake-up cost
 * already meets the limit, the hybrid waiter otherwise; an explicit method
 * is taken as asked, and $NVQ_QOS_METHOD names the default;
 * nvq_qos_method_info() says which and why. The
 * wake-up cost comes from $NVQ_QOS_WAKE_NS (p50 50 us, p99 90 us), set
 * before anything measures it, so the choices do not depend on the
 * machine.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
};

static const struct state menu_like[] = {
	{ "POLL", "0" },
	{ "C1", "2" },
	{ "C1E", "10" },
	{ "C6", "100" },
};

static const struct state haltpoll_like[] = {
	{ "POLL", "0" },
	{ "haltpoll idle", "1" },
};

/*
 * A fresh tree with 2 CPUs under the recording backend: cpuidle driver
 * @driver and governor @gov (NULL: no such file), @n states per CPU.
 */
static void tree(const char *driver, const char *gov, const struct state *st,
		 int n)
{
	char rel[128], text[64];
	int cpu, k;

	fake_remove(root);
	root = fake_root(2, "0");
	if (driver) {
		snprintf(text, sizeof(text), "%s\n", driver);
		fake_write(root, "devices/system/cpu/cpuidle/current_driver",
			   text);
	}
	if (gov) {
		snprintf(text, sizeof(text), "%s\n", gov);
		fake_write(root, "devices/system/cpu/cpuidle/current_governor",
			   text);
	}
	for (cpu = 0; cpu < 2; cpu++) {
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
		}
	}
	CHECK_OK(nvq_qos_set_sysfs_root(root));
}

/* A machine with cpuidle states under menu. */
static void tree_cpuidle(void)
{
	tree("intel_idle", "menu", menu_like, 4);
}

/* Most VMs: cpuidle driver "none" (the state files may still be there). */
static void tree_driver_none(void)
{
	tree("none", NULL, menu_like, 4);
}

/* A KVM guest with cpuidle-haltpoll. */
static void tree_haltpoll(void)
{
	tree("haltpoll", "haltpoll", haltpoll_like, 2);
}

/* No cpuidle directory at all. */
static void tree_bare(void)
{
	tree(NULL, NULL, NULL, 0);
}

/* What a fresh controller with method @m and limit @limit_us amounts to. */
static struct nvq_qos_method_info choose(enum nvq_qos_method m, int limit_us)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_ctrl *qc;

	CHECK_OK(nvq_qos_ctrl_create(&qc));
	CHECK_OK(nvq_qos_set_method(qc, m));
	CHECK_OK(nvq_qos_set_limit(qc, limit_us));
	memset(&mi, 0xa5, sizeof(mi));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, m);
	nvq_qos_ctrl_destroy(qc);
	return mi;
}

/* The wake-up cost from the environment, as a choice reports it. */
static void check_env_wake(const struct nvq_qos_wake *w)
{
	CHECK_STREQ(w->source, "env");
	CHECK_EQ(w->p50_ns, 50000);
	CHECK_EQ(w->p99_ns, 90000);
	CHECK(w->samples > 0);
}

static void test_names(void)
{
	static const enum nvq_qos_method all[] = {
		NVQ_QOS_METHOD_AUTO,
		NVQ_QOS_METHOD_CPUIDLE,
		NVQ_QOS_METHOD_POLL,
		NVQ_QOS_METHOD_HYBRID,
	};
	static const char *const bad[] = {
		"none", /* a result, not a choice */
		"",	 "POLL", /* names are exact */
		"poll ", "polling", "cpu", "3", "hybrid,poll",
	};
	enum nvq_qos_method m;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		m = (enum nvq_qos_method)99;
		CHECK_OK(nvq_qos_parse_method(nvq_qos_method_name(all[i]), &m));
		CHECK_EQ(m, all[i]);
	}
	CHECK_STREQ(nvq_qos_method_name(NVQ_QOS_METHOD_AUTO), "auto");
	CHECK_STREQ(nvq_qos_method_name(NVQ_QOS_METHOD_CPUIDLE), "cpuidle");
	CHECK_STREQ(nvq_qos_method_name(NVQ_QOS_METHOD_POLL), "poll");
	CHECK_STREQ(nvq_qos_method_name(NVQ_QOS_METHOD_HYBRID), "hybrid");
	CHECK_STREQ(nvq_qos_method_name(NVQ_QOS_METHOD_NONE), "none");
	CHECK_STREQ(nvq_qos_method_name((enum nvq_qos_method)5), "?");
	CHECK_STREQ(nvq_qos_method_name((enum nvq_qos_method) - 1), "?");

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		m = NVQ_QOS_METHOD_POLL;
		nvq_err_clear();
		CHECK_EQ(nvq_qos_parse_method(bad[i], &m), -EINVAL);
		CHECK_EQ(m, NVQ_QOS_METHOD_POLL);
		CHECK_MSG("auto, cpuidle, poll or hybrid");
	}
	CHECK_EQ(nvq_qos_parse_method(NULL, &m), -EINVAL);
	CHECK_EQ(nvq_qos_parse_method("poll", NULL), -EINVAL);
}

static void test_auto(void)
{
	struct nvq_qos_method_info mi;

	/* cpuidle states, a governor and permission: the cpuidle method. */
	tree_cpuidle();
	mi = choose(NVQ_QOS_METHOD_AUTO, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_CONTAINS(mi.why, "cpuidle");
	CHECK_CONTAINS(mi.why, "menu");
	CHECK_EQ(mi.wake.samples, 0); /* not needed for the choice */
	mi = choose(NVQ_QOS_METHOD_AUTO, 0);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);

	/* Driver "none": a wake-up (p99 90 us) meets 100 us by itself... */
	tree_driver_none();
	mi = choose(NVQ_QOS_METHOD_AUTO, 100);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	CHECK_CONTAINS(mi.why, "none");
	CHECK_CONTAINS(mi.why, "driver none");
	CHECK_CONTAINS(mi.why, "90 us");
	check_env_wake(&mi.wake);
	/* ... but not 20 us, nor 0: the hybrid waiter. */
	mi = choose(NVQ_QOS_METHOD_AUTO, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_CONTAINS(mi.why, "hybrid");
	CHECK_CONTAINS(mi.why, "driver none");
	check_env_wake(&mi.wake);
	mi = choose(NVQ_QOS_METHOD_AUTO, 0);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	/* The boundary: p99 equal to the limit meets it. */
	mi = choose(NVQ_QOS_METHOD_AUTO, 90);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	mi = choose(NVQ_QOS_METHOD_AUTO, 89);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);

	/* No cpuidle directory at all: the same. */
	tree_bare();
	mi = choose(NVQ_QOS_METHOD_AUTO, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_CONTAINS(mi.why, "no cpuidle states");
	mi = choose(NVQ_QOS_METHOD_AUTO, 1000);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);

	/* haltpoll honours 0 only. */
	tree_haltpoll();
	mi = choose(NVQ_QOS_METHOD_AUTO, 0);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_CONTAINS(mi.why, "haltpoll");
	mi = choose(NVQ_QOS_METHOD_AUTO, 10);
	CHECK(mi.method != NVQ_QOS_METHOD_CPUIDLE);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_CONTAINS(mi.why, "haltpoll");
	mi = choose(NVQ_QOS_METHOD_AUTO, 100);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);

	/* No limit: nothing to honour, whatever the method. */
	tree_cpuidle();
	mi = choose(NVQ_QOS_METHOD_AUTO, NVQ_QOS_OFF);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	CHECK_CONTAINS(mi.why, "no limit");
	mi = choose(NVQ_QOS_METHOD_POLL, NVQ_QOS_OFF);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
}

static void test_explicit(void)
{
	struct nvq_qos_method_info mi;

	/* Where auto would not take cpuidle, cpuidle as asked... */
	tree_driver_none();
	mi = choose(NVQ_QOS_METHOD_CPUIDLE, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_CONTAINS(mi.why, "as asked");
	/* ... even where the wake-up cost meets the limit. */
	mi = choose(NVQ_QOS_METHOD_POLL, 1000);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	CHECK_CONTAINS(mi.why, "poll: as asked");
	mi = choose(NVQ_QOS_METHOD_HYBRID, 1000);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_CONTAINS(mi.why, "hybrid: as asked");
	/* The hybrid waiter needs the wake-up cost: reported. */
	check_env_wake(&mi.wake);

	/* Where auto would take cpuidle, the waiter methods as asked. */
	tree_cpuidle();
	mi = choose(NVQ_QOS_METHOD_POLL, 0);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	mi = choose(NVQ_QOS_METHOD_HYBRID, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	mi = choose(NVQ_QOS_METHOD_CPUIDLE, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
}

/* The method and the limit change at any time, in either order. */
static void test_switch(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_ctrl *qc;

	tree_cpuidle();
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	CHECK_CONTAINS(mi.why, "no limit");

	CHECK_OK(nvq_qos_set_limit(qc, 20));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_POLL));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_POLL);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_HYBRID));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_AUTO));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);

	/* Refused methods change nothing. */
	CHECK_EQ(nvq_qos_set_method(qc, NVQ_QOS_METHOD_NONE), -EINVAL);
	CHECK_MSG("method");
	CHECK_EQ(nvq_qos_set_method(qc, (enum nvq_qos_method)99), -EINVAL);
	CHECK_EQ(nvq_qos_set_method(qc, (enum nvq_qos_method) - 1), -EINVAL);
	CHECK_EQ(nvq_qos_set_method(NULL, NVQ_QOS_METHOD_POLL), -EINVAL);
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);

	CHECK_OK(nvq_qos_set_limit(qc, NVQ_QOS_OFF));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	nvq_qos_ctrl_destroy(qc);

	/* The defaults, without a controller; NULL output is a no-op. */
	memset(&mi, 0xa5, sizeof(mi));
	nvq_qos_method_info(NULL, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	CHECK_CONTAINS(mi.why, "no limit");
	CHECK_EQ(mi.wake.samples, 0);
	nvq_qos_method_info(NULL, NULL);
}

/*
 * "auto" where no idle state is worth forbidding: off for the cpuidle
 * method (a limit changes nothing there), 0 ("wake fast") for the waiter
 * methods, which can honour it.
 */
static void test_auto_limit(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_info info;
	struct nvq_qos_ctrl *qc;

	tree_bare();
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	CHECK_OK(nvq_qos_set_limit(qc, NVQ_QOS_AUTO));
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_AUTO);
	CHECK_EQ(info.effective_us, 0);
	CHECK_CONTAINS(info.reason, "no cpuidle");
	CHECK_CONTAINS(info.reason, "0 for the waiter methods");
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);

	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_CPUIDLE));
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.limit_us, NVQ_QOS_AUTO);
	CHECK_EQ(info.effective_us, NVQ_QOS_OFF);
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);

	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_POLL));
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.effective_us, 0);
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);

	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_AUTO));
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.effective_us, 0);
	nvq_qos_ctrl_destroy(qc);

	/* With states to forbid, "auto" is the table's limit either way. */
	tree_cpuidle();
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	CHECK_OK(nvq_qos_set_limit(qc, NVQ_QOS_AUTO));
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.effective_us, 3);
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_POLL));
	nvq_qos_info(qc, &info);
	CHECK_EQ(info.effective_us, 3);
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	nvq_qos_ctrl_destroy(qc);
}

/* nvq_open() validates the method like every other option. */
static void test_open(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_ctrl *c;
	struct nvq_opts o;

	tree_cpuidle();
	nvq_opts_init(&o);
	CHECK_EQ(o.cpu_lat_method, NVQ_QOS_METHOD_AUTO);
	o.nr_queues = 1;
	o.cpu_lat_method = NVQ_QOS_METHOD_NONE;
	c = (struct nvq_ctrl *)&o;
	CHECK_EQ(nvq_open("emu:size=1M", &o, &c), -EINVAL);
	CHECK(c == NULL);
	CHECK_MSG("method");
	o.cpu_lat_method = (enum nvq_qos_method)99;
	CHECK_EQ(nvq_open("emu:size=1M", &o, &c), -EINVAL);
	CHECK_MSG("method");
	o.cpu_lat_method = (enum nvq_qos_method) - 1;
	CHECK_EQ(nvq_open("emu:size=1M", &o, &c), -EINVAL);

	/* A valid one is what the controller starts with. */
	o.mode = NVQ_MODE_WAIT;
	o.cpu_lat_method = NVQ_QOS_METHOD_POLL;
	o.cpu_lat_limit_us = 0;
	CHECK_OK(nvq_open("emu:size=1M", &o, &c));
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_POLL);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	nvq_close(c);
	o.cpu_lat_method = NVQ_QOS_METHOD_AUTO;
	CHECK_OK(nvq_open("emu:size=1M", &o, &c));
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	nvq_close(c);
}

/*
 * $NVQ_QOS_METHOD names a new controller's method (read at creation);
 * a bad name is ignored; opts.cpu_lat_method other than auto and
 * nvq_qos_set_method() override it.
 */
static void test_env_default(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_ctrl *qc;
	struct nvq_ctrl *c;
	struct nvq_opts o;

	tree_cpuidle();
	CHECK_OK(setenv("NVQ_QOS_METHOD", "poll", 1));
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	CHECK_OK(nvq_qos_set_limit(qc, 20));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_POLL);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_POLL);
	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_AUTO));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	nvq_qos_ctrl_destroy(qc);

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.mode = NVQ_MODE_WAIT;
	o.cpu_lat_limit_us = 20;
	CHECK_OK(nvq_open("emu:size=1M", &o, &c));
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_POLL);
	nvq_close(c);
	o.cpu_lat_method = NVQ_QOS_METHOD_HYBRID;
	CHECK_OK(nvq_open("emu:size=1M", &o, &c));
	nvq_qos_method_info(nvq_ctrl_qos(c), &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_HYBRID);
	nvq_close(c);

	CHECK_OK(setenv("NVQ_QOS_METHOD", "hybrid", 1));
	mi = choose(NVQ_QOS_METHOD_CPUIDLE, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_HYBRID);
	nvq_qos_ctrl_destroy(qc);

	/* Not a method: auto; "none" is no choice either. */
	CHECK_OK(setenv("NVQ_QOS_METHOD", "bogus", 1));
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	nvq_qos_ctrl_destroy(qc);
	CHECK_OK(setenv("NVQ_QOS_METHOD", "none", 1));
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	nvq_qos_method_info(qc, &mi);
	CHECK_EQ(mi.requested, NVQ_QOS_METHOD_AUTO);
	nvq_qos_ctrl_destroy(qc);
	CHECK_OK(unsetenv("NVQ_QOS_METHOD"));
}

/* Without permission to write the files, "auto" does not take cpuidle. */
static int denied_body(void)
{
	struct nvq_qos_method_info mi;
	struct nvq_qos_ctrl *qc;

	mi = choose(NVQ_QOS_METHOD_AUTO, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	CHECK_CONTAINS(mi.why, "hybrid");
	CHECK_CONTAINS(mi.why, "cannot write");
	CHECK_CONTAINS(mi.why, "Permission denied");
	printf("denied, auto, 20 us: %s\n", mi.why);
	check_env_wake(&mi.wake);
	mi = choose(NVQ_QOS_METHOD_AUTO, 0);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_HYBRID);
	mi = choose(NVQ_QOS_METHOD_AUTO, 100);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_NONE);
	CHECK_CONTAINS(mi.why, "cannot write");
	printf("denied, auto, 100 us: %s\n", mi.why);
	/* Asked for, cpuidle is kept (and does nothing: the status says). */
	mi = choose(NVQ_QOS_METHOD_CPUIDLE, 20);
	CHECK_EQ(mi.method, NVQ_QOS_METHOD_CPUIDLE);
	CHECK_OK(nvq_qos_ctrl_create(&qc));
	CHECK_OK(nvq_qos_set_method(qc, NVQ_QOS_METHOD_CPUIDLE));
	nvq_err_clear();
	CHECK_OK(nvq_qos_set_limit(qc, 20));
	CHECK_MSG("Permission denied");
	nvq_qos_ctrl_destroy(qc);
	return 0;
}

static void test_denied(void)
{
	char path[512];
	int cpu, status;
	pid_t pid;

	tree_cpuidle();
	for (cpu = 0; cpu < 2; cpu++) {
		snprintf(
			path, sizeof(path),
			"%s/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us",
			root, cpu);
		CHECK(!chmod(path, 0444));
	}
	if (geteuid() != 0) {
		denied_body();
		return;
	}
	/* As root the mode means nothing: become "nobody" (test_perm.c). */
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
		exit(denied_body());
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	/* Before anything may measure it (once per process). */
	CHECK_OK(setenv("NVQ_QOS_WAKE_NS", "50000,90000", 1));
	/* The default method is what this test looks at: auto. */
	CHECK_OK(unsetenv("NVQ_QOS_METHOD"));
	check_cleanup = cleanup;
	CHECK_OK(nvq_qos_test_set_backend(NVQ_QOS_BACKEND_RECORD));

	test_names();
	test_auto();
	test_explicit();
	test_switch();
	test_auto_limit();
	test_open();
	test_env_default();
	test_denied();
	/* Nothing here placed a request. */
	CHECK_EQ(nvq_qos_record_count(), 0);
	cleanup();
	printf("qos-method: ok\n");
	return 0;
}
