// SPDX-License-Identifier: MIT
/*
 * The wake-up cost (nvq_qos_wake_cost()): measured once per process, with
 * bounds that hold on any machine (no timing is asserted beyond "less than
 * a second"), the same values on every later call; $NVQ_QOS_WAKE_NS
 * replaces the measurement when it is valid and is ignored when not. The
 * value is cached per process, so each case runs in a child of its own,
 * forked before the parent touches the library.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qos_helpers.h"

#define SEC 1000000000ull

/* Values of $NVQ_QOS_WAKE_NS that must be ignored (measured instead). */
static const char *const malformed[] = {
	"abc", /* not a number */
	"5,1", /* p99 below p50 */
	"0", /* no cost at all */
	"0,100",
	"12000,", /* p99 missing */
	"12000,30000x", /* trailing junk */
	",3000", /* p50 missing */
	"-5",
	"1.5",
	"2000000000", /* over a second */
	"100,2000000000",
};

static void check_measured(const struct nvq_qos_wake *w)
{
	CHECK_STREQ(w->source, "measured");
	CHECK(w->samples > 0);
	CHECK(w->p50_ns > 0);
	CHECK(w->p50_ns <= w->p99_ns);
	CHECK(w->p99_ns < SEC);
	CHECK(w->write_ns < SEC);
}

/* Later calls, from any thread, give the first result unchanged. */
static void *again_main(void *arg)
{
	struct nvq_qos_wake *w = arg;

	memset(w, 0xa5, sizeof(*w));
	CHECK_OK(nvq_qos_wake_cost(w));
	return NULL;
}

static void check_cached(const struct nvq_qos_wake *first)
{
	struct nvq_qos_wake w;
	pthread_t t;

	memset(&w, 0xa5, sizeof(w));
	CHECK_OK(nvq_qos_wake_cost(&w));
	CHECK_MEMEQ(&w, first, sizeof(w));
	CHECK_OK(pthread_create(&t, NULL, again_main, &w));
	CHECK_OK(pthread_join(t, NULL));
	CHECK_MEMEQ(&w, first, sizeof(w));
	CHECK_OK(nvq_qos_wake_cost(NULL));
}

static int case_measured(const char *env)
{
	struct nvq_qos_wake w;

	if (env)
		CHECK_OK(setenv("NVQ_QOS_WAKE_NS", env, 1));
	else
		CHECK_OK(unsetenv("NVQ_QOS_WAKE_NS"));
	memset(&w, 0xa5, sizeof(w));
	CHECK_OK(nvq_qos_wake_cost(&w));
	check_measured(&w);
	CHECK(w.samples <= 1000);
	check_cached(&w);
	/* Read once: a later change of the variable changes nothing. */
	CHECK_OK(setenv("NVQ_QOS_WAKE_NS", "12000,30000", 1));
	check_cached(&w);
	return 0;
}

static int case_env(const char *env, uint64_t p50, uint64_t p99)
{
	struct nvq_qos_wake w;

	CHECK_OK(setenv("NVQ_QOS_WAKE_NS", env, 1));
	memset(&w, 0xa5, sizeof(w));
	CHECK_OK(nvq_qos_wake_cost(&w));
	CHECK_STREQ(w.source, "env");
	CHECK_EQ(w.p50_ns, p50);
	CHECK_EQ(w.p99_ns, p99);
	CHECK(w.samples > 0);
	CHECK(w.write_ns < SEC);
	check_cached(&w);
	CHECK_OK(unsetenv("NVQ_QOS_WAKE_NS"));
	check_cached(&w);
	return 0;
}

/* Run @call in a child process; fail unless it exits with 0. */
#define IN_CHILD(what, call)                                       \
	do {                                                       \
		int status_;                                       \
		pid_t pid_;                                        \
		fflush(NULL);                                      \
		pid_ = fork();                                     \
		CHECK(pid_ >= 0);                                  \
		if (!pid_)                                         \
			exit(call);                                \
		CHECK_EQ(waitpid(pid_, &status_, 0), pid_);        \
		if (!WIFEXITED(status_) || WEXITSTATUS(status_))   \
			fprintf(stderr, "case %s failed\n", what); \
		CHECK(WIFEXITED(status_));                         \
		CHECK_EQ(WEXITSTATUS(status_), 0);                 \
	} while (0)

int main(void)
{
	unsigned int i;

	IN_CHILD("unset", case_measured(NULL));
	IN_CHILD("empty", case_measured(""));
	for (i = 0; i < ARRAY_SIZE(malformed); i++)
		IN_CHILD(malformed[i], case_measured(malformed[i]));
	IN_CHILD("12000,30000", case_env("12000,30000", 12000, 30000));
	IN_CHILD("12000", case_env("12000", 12000, 12000));
	IN_CHILD("7,7", case_env("7,7", 7, 7));
	IN_CHILD("1 s", case_env("1000,1000000000", 1000, 1000000000));
	/* And in this process, without the variable. */
	case_measured(NULL);
	printf("qos-wake: ok\n");
	return 0;
}
