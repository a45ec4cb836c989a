// SPDX-License-Identifier: MIT
/*
 * How a CPU latency limit is honoured (enum nvq_qos_method), and the
 * platform's wake-up cost that the choice and the hybrid waiter need.
 *
 * A limit says "the CPUs that take this queue's completions must not be
 * slow to wake while it is active". The cpuidle method asks the kernel's
 * idle loop to keep them out of slow states, which works only where a
 * cpuidle governor honours PM QoS requests and nvq may write them. Where
 * it cannot (cpuidle driver "none" in most VMs, no root), the other way to
 * a CPU that is quick to take a completion is a waiter that does not sleep:
 * waiter polling and the hybrid waiter (lib/pcie/queue.c) do that while
 * the queue is active, on the same activity signal as the cpuidle method.
 *
 * The wake-up cost is measured once per process: a waker thread and a
 * sleeper thread on two CPUs, each round after ~150 us of sleep (halted
 * vCPUs wake far slower after a few hundred microseconds than after tens),
 * the time from the waker's eventfd write to the sleeper's return from
 * read().
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "qos.h"

#define WAKE_ROUNDS 160
#define WAKE_GAP_NS 150000ull

static const char *const names[] = {
	[NVQ_QOS_METHOD_AUTO] = "auto", [NVQ_QOS_METHOD_CPUIDLE] = "cpuidle",
	[NVQ_QOS_METHOD_POLL] = "poll", [NVQ_QOS_METHOD_HYBRID] = "hybrid",
	[NVQ_QOS_METHOD_NONE] = "none",
};

const char *nvq_qos_method_name(enum nvq_qos_method m)
{
	if ((unsigned int)m >= ARRAY_SIZE(names))
		return "?";
	return names[m];
}

int nvq_qos_parse_method(const char *s, enum nvq_qos_method *m)
{
	unsigned int i;

	if (!s || !m)
		return nvq_err(-EINVAL, "no CPU latency method given");
	for (i = 0; i <= NVQ_QOS_METHOD_HYBRID; i++) {
		if (!strcmp(s, names[i])) {
			*m = (enum nvq_qos_method)i;
			return 0;
		}
	}
	return nvq_err(
		-EINVAL,
		"bad CPU latency method \"%s\": use auto, cpuidle, poll or hybrid",
		s);
}

/* ---- the wake-up cost ---- */

struct wake_run {
	int ping, pong; /* eventfds: waker -> sleeper, sleeper -> waker */
	uint64_t sent[WAKE_ROUNDS], wrote[WAKE_ROUNDS], woke[WAKE_ROUNDS];
	int stop; /* atomic: a thread failed, the other one ends */
	int err;
};

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static struct nvq_qos_wake wake_res;
static int wake_err;
static char wake_msg[160];
/* The median, for the hybrid waiter's hot path (0: unknown). */
uint64_t nvq_qos_wake_p50_ns;

static bool stopped(struct wake_run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/* Give up: record @err and wake the other thread, which sees stop. */
static void fail(struct wake_run *r, int err, int fd)
{
	uint64_t v = 1;

	if (!r->err)
		r->err = err;
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	if (write(fd, &v, sizeof(v)) < 0) {
		/* the counter is non-zero already: it wakes */
	}
}

static void *sleeper_main(void *arg)
{
	struct wake_run *r = arg;
	uint64_t v;
	int i;

	for (i = 0; i < WAKE_ROUNDS; i++) {
		if (read(r->ping, &v, sizeof(v)) != sizeof(v)) {
			fail(r, -errno, r->pong);
			break;
		}
		r->woke[i] = nvq_now_ns();
		if (stopped(r))
			break;
		v = 1;
		if (write(r->pong, &v, sizeof(v)) != sizeof(v)) {
			fail(r, -errno, r->pong);
			break;
		}
	}
	return NULL;
}

static void *waker_main(void *arg)
{
	struct wake_run *r = arg;
	struct timespec ts;
	uint64_t v, due;
	int i;

	for (i = 0; i < WAKE_ROUNDS && !stopped(r); i++) {
		due = nvq_now_ns() + WAKE_GAP_NS;
		ts.tv_sec = (time_t)(due / 1000000000ull);
		ts.tv_nsec = (long)(due % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		v = 1;
		r->sent[i] = nvq_now_ns();
		if (write(r->ping, &v, sizeof(v)) != sizeof(v)) {
			fail(r, -errno, r->ping);
			break;
		}
		r->wrote[i] = nvq_now_ns();
		if (read(r->pong, &v, sizeof(v)) != sizeof(v)) {
			fail(r, -errno, r->ping);
			break;
		}
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Two CPUs of the process's affinity set, or -1 where there is one. */
static void pick_cpus(int *a, int *b)
{
	cpu_set_t set;
	int cpu, self = sched_getcpu();

	*a = *b = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	if (self >= 0 && CPU_ISSET(self, &set))
		*a = self;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (*a < 0)
			*a = cpu;
		else if (cpu != *a) {
			*b = cpu;
			return;
		}
	}
}

static int start(pthread_t *t, void *(*fn)(void *), void *arg, int cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int rc;

	pthread_attr_init(&attr);
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	rc = pthread_create(t, &attr, fn, arg);
	if (rc && cpu >= 0) /* outside our cpuset after all: unpinned */
		rc = pthread_create(t, NULL, fn, arg);
	pthread_attr_destroy(&attr);
	return -rc;
}

static int measure(struct nvq_qos_wake *w)
{
	struct wake_run *r;
	uint64_t lat[WAKE_ROUNDS], wr[WAKE_ROUNDS];
	pthread_t ts, tw;
	sigset_t all, old;
	int a, b, rc, i, n = 0;

	/* WAKE_ROUNDS round trips of ~WAKE_GAP_NS each: ~30 ms. */

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ping = eventfd(0, EFD_CLOEXEC);
	r->pong = eventfd(0, EFD_CLOEXEC);
	rc = r->ping < 0 || r->pong < 0 ? -errno : 0;
	if (rc) {
		snprintf(wake_msg, sizeof(wake_msg), "eventfd: %s",
			 strerror(-rc));
		goto out;
	}
	pick_cpus(&a, &b);
	/* The application's signals are not for these threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = start(&ts, sleeper_main, r, b);
	if (!rc) {
		rc = start(&tw, waker_main, r, a);
		if (rc)
			fail(r, rc, r->ping);
		else
			pthread_join(tw, NULL);
		pthread_join(ts, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc || r->err) {
		rc = rc ? rc : r->err;
		snprintf(wake_msg, sizeof(wake_msg),
			 "cannot measure the wake-up cost: %s", strerror(-rc));
		goto out;
	}
	/* The first rounds warm up; keep the rest. */
	for (i = WAKE_ROUNDS / 8; i < WAKE_ROUNDS; i++) {
		if (r->woke[i] < r->sent[i] || r->wrote[i] < r->sent[i])
			continue;
		lat[n] = r->woke[i] - r->sent[i];
		wr[n] = r->wrote[i] - r->sent[i];
		n++;
	}
	if (!n) {
		rc = -EIO;
		snprintf(wake_msg, sizeof(wake_msg),
			 "the wake-up cost measurement saw no valid round");
		goto out;
	}
	qsort(lat, (size_t)n, sizeof(lat[0]), cmp_u64);
	qsort(wr, (size_t)n, sizeof(wr[0]), cmp_u64);
	w->p50_ns = lat[n / 2];
	w->p99_ns = lat[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	w->write_ns = wr[n / 2];
	w->samples = (unsigned int)n;
	snprintf(w->source, sizeof(w->source), "measured");
out:
	if (r->ping >= 0)
		close(r->ping);
	if (r->pong >= 0)
		close(r->pong);
	free(r);
	return rc;
}

/* $NVQ_QOS_WAKE_NS="P50[,P99]": 0 when set and valid, else -ENOENT. */
static int from_env(struct nvq_qos_wake *w)
{
	const char *s = getenv("NVQ_QOS_WAKE_NS");
	unsigned long long p50, p99;
	char *end;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	p50 = strtoull(s, &end, 10);
	p99 = p50;
	if (*end == ',')
		p99 = strtoull(end + 1, &end, 10);
	if (errno || *end || !p50 || p99 < p50 || p99 > 1000000000ull)
		return -ENOENT;
	w->p50_ns = p50;
	w->p99_ns = p99;
	w->write_ns = 0;
	w->samples = 1;
	snprintf(w->source, sizeof(w->source), "env");
	return 0;
}

static void wake_init(void)
{
	if (!from_env(&wake_res))
		wake_err = 0;
	else
		wake_err = measure(&wake_res);
	__atomic_store_n(&nvq_qos_wake_p50_ns, wake_res.p50_ns,
			 __ATOMIC_RELEASE);
}

int nvq_qos_wake_cost(struct nvq_qos_wake *w)
{
	pthread_once(&wake_once, wake_init);
	if (w)
		*w = wake_res;
	if (wake_err)
		return nvq_err(wake_err, "%s", wake_msg);
	return 0;
}

/* ---- the choice ---- */

void nvq_qos_choose(int eff_us, enum nvq_qos_method req, const char *root,
		    int (*probe)(char *msg, size_t len),
		    struct nvq_qos_choice *out)
{
	char cpuidle[200] = "", perm[200] = "";
	bool honours;
	int err;

	memset(out, 0, sizeof(*out));
	if (eff_us < 0) {
		out->method = NVQ_QOS_METHOD_NONE;
		snprintf(out->why, sizeof(out->why), "no limit");
		return;
	}
	switch (req) {
	case NVQ_QOS_METHOD_CPUIDLE:
		out->method = NVQ_QOS_METHOD_CPUIDLE;
		snprintf(out->why, sizeof(out->why), "cpuidle: as asked");
		return;
	case NVQ_QOS_METHOD_POLL:
	case NVQ_QOS_METHOD_HYBRID:
		out->method = req;
		snprintf(out->why, sizeof(out->why), "%s: as asked",
			 nvq_qos_method_name(req));
		if (req == NVQ_QOS_METHOD_HYBRID)
			nvq_qos_wake_cost(&out->wake);
		return;
	default:
		break;
	}

	honours =
		nvq_qos_cpuidle_honours(root, eff_us, cpuidle, sizeof(cpuidle));
	err = probe(perm, sizeof(perm));
	if (honours && !err) {
		out->method = NVQ_QOS_METHOD_CPUIDLE;
		snprintf(out->why, sizeof(out->why), "cpuidle: %.200s",
			 cpuidle);
		return;
	}
	if (nvq_qos_wake_cost(&out->wake) == 0 && eff_us > 0 &&
	    out->wake.p99_ns <= (uint64_t)eff_us * 1000ull) {
		out->method = NVQ_QOS_METHOD_NONE;
		snprintf(out->why, sizeof(out->why),
			 "none: %.150s; a wake-up takes %llu us (p99), within "
			 "the %d us limit",
			 honours ? perm : cpuidle,
			 (unsigned long long)(out->wake.p99_ns / 1000), eff_us);
		return;
	}
	out->method = NVQ_QOS_METHOD_HYBRID;
	snprintf(out->why, sizeof(out->why),
		 "hybrid: %.150s; waiters poll while active, sleeping "
		 "through device time beyond the wake-up cost",
		 honours ? perm : cpuidle);
}
