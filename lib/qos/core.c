// SPDX-License-Identifier: MIT
/*
 * CPU latency QoS: per-queue activity, per-CPU aggregation, the timer.
 *
 * The kernel attempts walked a cpumask and touched per-CPU state on every
 * doorbell. Here the hot path only tests the queue's own qos_idle byte;
 * everything else runs on the idle -> active transition (once per burst)
 * or in one timer thread per process that compares each active queue's
 * submission counter with what it saw one timeout period earlier.
 *
 * All state below is guarded by one process-wide mutex: it is taken once
 * per burst and per timer tick, never per I/O.
 *
 * After fork() the child owns none of the limits it inherited a record of
 * (fork_child()); after a SIGINT/SIGTERM that the application handles
 * itself, the limits count as released (sig_sync()).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qos.h"

struct nvq_qos_ctrl {
	struct nvq_qos_ctrl *next;
	struct nvq_qos_queue *queues;
	int limit_us; /* as set, NVQ_QOS_AUTO included */
	int eff_us; /* what queues request; NVQ_QOS_OFF for none */
	unsigned int timeout_ms;
	char reason[256];
	enum nvq_qos_method method_req; /* as set */
	struct nvq_qos_choice ch; /* what eff_us amounts to here */
	bool hysteresis; /* nvq_qos_set_hysteresis() */
};

/* One distinct value requested on a CPU and how many queues want it. */
struct val_ref {
	int32_t us;
	unsigned int refs;
};

struct cpu_req {
	struct val_ref *v;
	unsigned int nr, cap;
	int32_t want; /* strictest of v[], NVQ_QOS_NONE when empty */
	int err; /* result of placing want */
};

static pthread_mutex_t qos_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cond;
static pthread_once_t cond_once = PTHREAD_ONCE_INIT;
static int cond_err;

static struct nvq_qos_ctrl *ctrls;
static unsigned int nr_ctrls;
static struct cpu_req *reqs; /* NVQ_QOS_MAX_CPUS entries, on first use */
static unsigned int held_cpus; /* CPUs whose want is not NONE */

static pthread_t timer_thread;
static bool timer_running;
/* Bumped to stop the current timer thread; a new one gets a new value. */
static unsigned long timer_gen;

void nvq_qos_lock(void)
{
	pthread_mutex_lock(&qos_mutex);
}

void nvq_qos_unlock(void)
{
	pthread_mutex_unlock(&qos_mutex);
}

static void init_cond(void)
{
	pthread_condattr_t attr;

	cond_err = pthread_condattr_init(&attr);
	if (cond_err)
		return;
	cond_err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!cond_err)
		cond_err = pthread_cond_init(&timer_cond, &attr);
	pthread_condattr_destroy(&attr);
}

static uint64_t period_ns(const struct nvq_qos_ctrl *qc)
{
	return (uint64_t)qc->timeout_ms * 1000000ull;
}

static void set_idle(struct nvq_qos_queue *qq, uint8_t v)
{
	__atomic_store_n(qq->idle, v, __ATOMIC_SEQ_CST);
}

static void set_spin(struct nvq_qos_queue *qq, uint8_t v)
{
	if (qq->spin)
		__atomic_store_n(qq->spin, v, __ATOMIC_RELEASE);
}

/* Whether the controller's queues take part at all: a limit that some
 * method honours. */
static bool wants(const struct nvq_qos_ctrl *qc)
{
	return qc->eff_us >= 0 && qc->ch.method != NVQ_QOS_METHOD_NONE;
}

/* Whether active queues poll instead of placing PM QoS requests. */
static bool polls(const struct nvq_qos_ctrl *qc)
{
	return qc->ch.method == NVQ_QOS_METHOD_POLL ||
	       qc->ch.method == NVQ_QOS_METHOD_HYBRID;
}

static void fork_prepare(void)
{
	nvq_qos_lock();
}

static void fork_parent(void)
{
	nvq_qos_unlock();
}

/*
 * In the child, only the thread that called fork() lives on, and every
 * limit in the tables is the parent's: the child must neither release nor
 * restore them (its exit() or a signal would reset the parent's files).
 * Its queues count as released; one it goes on using takes a limit of its
 * own at its next idle -> active transition.
 */
static void fork_child(void)
{
	struct nvq_qos_ctrl *qc;
	struct nvq_qos_queue *qq;
	unsigned int i;

	for (qc = ctrls; qc; qc = qc->next) {
		for (qq = qc->queues; qq; qq = qq->next) {
			qq->active = false;
			qq->applied = false;
			CPU_ZERO(&qq->held);
			qq->held_us = NVQ_QOS_NONE;
			for (i = 0; i < NVQ_QOS_CPU_WORDS; i++)
				qq->noted[i] = 0;
			set_spin(qq, 0);
			set_idle(qq, wants(qc));
		}
	}
	if (reqs) {
		for (i = 0; i < NVQ_QOS_MAX_CPUS; i++) {
			reqs[i].nr = 0;
			reqs[i].want = NVQ_QOS_NONE;
			reqs[i].err = 0;
		}
	}
	held_cpus = 0;
	/* The timer thread did not come along; the parent's waited here. */
	timer_running = false;
	timer_gen++;
	init_cond();
	nvq_qos_be_forked();
	nvq_qos_unlock();
}

static void init_once(void)
{
	init_cond();
	if (!cond_err)
		cond_err =
			pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- per-CPU aggregation ---- */

static void recompute(int cpu, struct cpu_req *r)
{
	int32_t want = NVQ_QOS_NONE;
	unsigned int i;

	for (i = 0; i < r->nr; i++)
		if (r->v[i].us < want)
			want = r->v[i].us;
	if (want == r->want)
		return;
	if (r->want == NVQ_QOS_NONE)
		held_cpus++;
	else if (want == NVQ_QOS_NONE)
		held_cpus--;
	r->want = want;
	r->err = nvq_qos_be_set(cpu, want);
}

/*
 * Add a reference to @us on @cpu: 0 once counted (reqs[cpu].err then says
 * whether the CPU's request is in place), -ENOMEM if it could not be.
 */
static int cpu_get(int cpu, int32_t us)
{
	struct cpu_req *r;
	unsigned int i;

	if (!reqs) {
		reqs = calloc(NVQ_QOS_MAX_CPUS, sizeof(*reqs));
		if (!reqs)
			return -ENOMEM;
		for (i = 0; i < NVQ_QOS_MAX_CPUS; i++)
			reqs[i].want = NVQ_QOS_NONE;
	}
	r = &reqs[cpu];
	for (i = 0; i < r->nr; i++) {
		if (r->v[i].us == us) {
			r->v[i].refs++;
			recompute(cpu, r);
			return 0;
		}
	}
	if (r->nr == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 4;
		struct val_ref *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->nr].us = us;
	r->v[r->nr].refs = 1;
	r->nr++;
	recompute(cpu, r);
	return 0;
}

static void cpu_put(int cpu, int32_t us)
{
	struct cpu_req *r = &reqs[cpu];
	unsigned int i;

	for (i = 0; i < r->nr; i++) {
		if (r->v[i].us != us)
			continue;
		if (--r->v[i].refs == 0)
			r->v[i] = r->v[--r->nr];
		break;
	}
	recompute(cpu, r);
	if (!r->nr) {
		free(r->v);
		r->v = NULL;
		r->cap = 0;
	}
}

/* ---- queues ---- */

static void wanted_cpus(const struct nvq_qos_queue *qq, cpu_set_t *set)
{
	unsigned int i;

	*set = qq->base;
	for (i = 0; i < NVQ_QOS_MAX_CPUS; i++)
		if (READ_ONCE(qq->noted[i / 64]) & (1ull << (i % 64)))
			CPU_SET(i, set);
}

static void mark_applied(struct nvq_qos_queue *qq, bool ok, uint64_t now)
{
	if (ok && !qq->applied) {
		qq->applied = true;
		qq->applies++;
		qq->since_ns = now;
	}
}

/* Request @us on every wanted CPU; true if any request is in place. */
static bool hold(struct nvq_qos_queue *qq, int32_t us)
{
	cpu_set_t want;
	bool ok = false;
	int cpu;

	wanted_cpus(qq, &want);
	CPU_ZERO(&qq->held);
	qq->held_us = us;
	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &want))
			continue;
		if (cpu_get(cpu, us))
			continue;
		CPU_SET(cpu, &qq->held);
		if (!reqs[cpu].err)
			ok = true;
	}
	return ok;
}

static void drop(struct nvq_qos_queue *qq)
{
	int cpu;

	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &qq->held))
			cpu_put(cpu, qq->held_us);
	CPU_ZERO(&qq->held);
}

static void release(struct nvq_qos_queue *qq, uint64_t now)
{
	unsigned int i;

	drop(qq);
	if (qq->applied) {
		qq->held_ns += now - qq->since_ns;
		qq->releases++;
	}
	qq->active = false;
	qq->applied = false;
	qq->quiet = 0;
	qq->released_ns = now;
	set_spin(qq, 0);
	for (i = 0; i < NVQ_QOS_CPU_WORDS; i++)
		__atomic_store_n(&qq->noted[i], 0, __ATOMIC_RELAXED);
}

/*
 * A SIGINT/SIGTERM restore ran and the application's handler let the
 * process go on (on_signal() in lib/qos/backend.c): the files are back,
 * so the queues' limits count as released from the time of the signal,
 * and queues with a limit set take it again at their next submission.
 * Every entry point calls this first, so that no statistic claims a limit
 * the files no longer hold.
 */
static void sig_sync(void)
{
	struct nvq_qos_ctrl *qc;
	struct nvq_qos_queue *qq;
	uint64_t at;

	if (!nvq_qos_be_take_signal(&at))
		return;
	for (qc = ctrls; qc; qc = qc->next) {
		for (qq = qc->queues; qq; qq = qq->next) {
			if (qq->active)
				release(qq, MAX(at, qq->since_ns));
			if (wants(qc))
				set_idle(qq, 1);
		}
	}
}

/* Move an active queue's requests to @us without a gap in between. */
static void rehold(struct nvq_qos_queue *qq, int32_t us, uint64_t now)
{
	cpu_set_t moved;
	int32_t old = qq->held_us;
	int cpu;

	if (!qq->applied) {
		/* Nothing was in place: start over, so failures are retried. */
		drop(qq);
		mark_applied(qq, hold(qq, us), now);
		return;
	}
	CPU_ZERO(&moved);
	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &qq->held) && !cpu_get(cpu, us))
			CPU_SET(cpu, &moved);
	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &qq->held))
			cpu_put(cpu, old);
	qq->held = moved;
	qq->held_us = us;
}

/* Bring an active queue's held CPUs in line with the wanted ones. */
static void resync(struct nvq_qos_queue *qq, uint64_t now)
{
	cpu_set_t want;
	bool ok = false;
	int cpu;

	wanted_cpus(qq, &want);
	for (cpu = 0; cpu < NVQ_QOS_MAX_CPUS; cpu++) {
		bool w = CPU_ISSET(cpu, &want), h = CPU_ISSET(cpu, &qq->held);

		if (w && !h) {
			if (cpu_get(cpu, qq->held_us))
				continue;
			CPU_SET(cpu, &qq->held);
			if (!reqs[cpu].err)
				ok = true;
		} else if (!w && h) {
			cpu_put(cpu, qq->held_us);
			CPU_CLR(cpu, &qq->held);
		}
	}
	mark_applied(qq, ok, now);
}

/* ---- timer ---- */

static void check(struct nvq_qos_queue *qq, uint64_t now)
{
	uint64_t n = __atomic_load_n(qq->submitted, __ATOMIC_RELAXED);

	if (n != qq->seen)
		goto busy;
	/*
	 * Quiet for a whole period. Re-arm the hot path first, then look
	 * again: a submitter that bumped the counter meanwhile may have read
	 * qos_idle == 0 just before, and releasing under it would leave its
	 * batch without the limit. Such a queue stays active; its next
	 * submission calls nvq_qos_activate(), which only clears qos_idle.
	 */
	set_idle(qq, 1);
	n = __atomic_load_n(qq->submitted, __ATOMIC_SEQ_CST);
	if (n != qq->seen)
		goto busy;
	if (qq->quiet < qq->linger) {
		/*
		 * Hysteresis: the queue bounced back after its last release;
		 * keep the limit through more quiet periods. qos_idle stays
		 * armed: a submission meanwhile only clears it (the queue is
		 * still active) and the next check sees the counter move.
		 */
		qq->quiet++;
		qq->due_ns = now + period_ns(qq->qc);
		return;
	}
	release(qq, now);
	return;
busy:
	qq->quiet = 0;
	qq->seen = n;
	qq->due_ns = now + period_ns(qq->qc);
}

static void *timer_main(void *arg)
{
	unsigned long gen = (unsigned long)(uintptr_t)arg;
	struct nvq_qos_queue *qq;
	struct nvq_qos_ctrl *qc;
	struct timespec ts;
	uint64_t now, next;

	nvq_qos_lock();
	while (gen == timer_gen) {
		sig_sync();
		now = nvq_now_ns();
		next = UINT64_MAX;
		for (qc = ctrls; qc; qc = qc->next) {
			for (qq = qc->queues; qq; qq = qq->next) {
				if (!qq->active)
					continue;
				if (now >= qq->due_ns)
					check(qq, now);
				if (qq->active && qq->due_ns < next)
					next = qq->due_ns;
			}
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&timer_cond, &qos_mutex);
			continue;
		}
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		pthread_cond_timedwait(&timer_cond, &qos_mutex, &ts);
	}
	nvq_qos_unlock();
	return NULL;
}

static int start_timer(void)
{
	sigset_t all, old;
	int err;

	if (timer_running)
		return 0;
	/* SIGINT/SIGTERM belong to the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&timer_thread, NULL, timer_main,
			     (void *)(uintptr_t)timer_gen);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_setname_np(timer_thread, "nvq-qos");
	timer_running = true;
	return 0;
}

int nvq_qos_timer_start(void)
{
	int err;

	nvq_qos_lock();
	if (!nr_ctrls)
		err = nvq_err(-EINVAL, "QoS: no controller to run a timer for");
	else if ((err = start_timer()))
		nvq_err(err, "QoS: cannot start the timer thread: %s",
			strerror(-err));
	nvq_qos_unlock();
	return err;
}

/* ---- the driver side ---- */

int nvq_qos_ctrl_create(struct nvq_qos_ctrl **out)
{
	struct nvq_qos_ctrl *qc;
	const char *env;

	pthread_once(&cond_once, init_once);
	if (cond_err)
		return nvq_err(-cond_err, "QoS: cannot set up the timer: %s",
			       strerror(cond_err));
	qc = calloc(1, sizeof(*qc));
	if (!qc)
		return nvq_err(-ENOMEM, "QoS: out of memory");
	qc->limit_us = NVQ_QOS_OFF;
	qc->eff_us = NVQ_QOS_OFF;
	qc->timeout_ms = NVQ_QOS_TIMEOUT_MS_DEFAULT;
	qc->method_req = NVQ_QOS_METHOD_AUTO;
	env = getenv("NVQ_QOS_METHOD");
	if (env && nvq_qos_parse_method(env, &qc->method_req))
		qc->method_req = NVQ_QOS_METHOD_AUTO;
	nvq_err_clear();
	qc->ch.method = NVQ_QOS_METHOD_NONE;
	snprintf(qc->ch.why, sizeof(qc->ch.why), "no limit");
	nvq_qos_lock();
	sig_sync();
	qc->next = ctrls;
	ctrls = qc;
	nr_ctrls++;
	nvq_qos_unlock();
	*out = qc;
	return 0;
}

void nvq_qos_ctrl_destroy(struct nvq_qos_ctrl *qc)
{
	struct nvq_qos_ctrl **pp;
	struct nvq_qos_queue *qq, *next;
	pthread_t thread;
	bool join = false;
	uint64_t now;

	if (!qc)
		return;
	nvq_qos_lock();
	sig_sync();
	now = nvq_now_ns();
	for (qq = qc->queues; qq; qq = next) {
		next = qq->next;
		if (qq->active)
			release(qq, now);
		set_idle(qq, 0);
		qq->qc = NULL;
		qq->next = NULL;
	}
	for (pp = &ctrls; *pp; pp = &(*pp)->next) {
		if (*pp == qc) {
			*pp = qc->next;
			break;
		}
	}
	if (--nr_ctrls == 0 && timer_running) {
		/* A new controller may start a new thread while we join. */
		timer_gen++;
		timer_running = false;
		thread = timer_thread;
		join = true;
		pthread_cond_broadcast(&timer_cond);
	}
	nvq_qos_unlock();
	if (join)
		pthread_join(thread, NULL);
	free(qc);
}

int nvq_qos_queue_create(struct nvq_qos_ctrl *qc, const uint64_t *submitted,
			 uint8_t *idle, uint8_t *spin,
			 struct nvq_qos_queue **out)
{
	struct nvq_qos_queue *qq;

	if (!qc || !submitted || !idle || !out)
		return nvq_err(
			-EINVAL,
			"QoS: queue needs a controller, a counter and a flag");
	qq = calloc(1, sizeof(*qq));
	if (!qq)
		return nvq_err(-ENOMEM, "QoS: out of memory");
	qq->submitted = submitted;
	qq->idle = idle;
	qq->spin = spin;
	qq->held_us = NVQ_QOS_NONE;
	nvq_qos_lock();
	qq->qc = qc;
	qq->next = qc->queues;
	qc->queues = qq;
	set_spin(qq, 0);
	set_idle(qq, wants(qc));
	nvq_qos_unlock();
	*out = qq;
	return 0;
}

void nvq_qos_queue_destroy(struct nvq_qos_queue *qq)
{
	struct nvq_qos_queue **pp;

	if (!qq)
		return;
	nvq_qos_lock();
	sig_sync();
	if (qq->active)
		release(qq, nvq_now_ns());
	if (qq->qc) {
		for (pp = &qq->qc->queues; *pp; pp = &(*pp)->next) {
			if (*pp == qq) {
				*pp = qq->next;
				break;
			}
		}
	}
	set_idle(qq, 0);
	set_spin(qq, 0);
	nvq_qos_unlock();
	free(qq);
}

void nvq_qos_activate(struct nvq_qos_queue *qq)
{
	struct nvq_qos_ctrl *qc;
	uint64_t now;

	nvq_qos_lock();
	sig_sync();
	set_idle(qq, 0);
	qc = qq->qc;
	/* The other racer got here first, or the limit went off meanwhile. */
	if (!qc || !wants(qc) || qq->active)
		goto out;
	if (start_timer()) {
		/*
		 * Without the timer nothing would ever release the limit: do
		 * not take it. qos_idle stays 0 until the next knob change.
		 */
		goto out;
	}
	now = nvq_now_ns();
	/*
	 * Hysteresis: back less than 1 + linger periods after the release
	 * (a gap the lingering nearly covered) is a bounce, which doubles
	 * the linger; back later halves it.
	 */
	if (!qc->hysteresis || !qq->releases)
		qq->linger = 0;
	else if (now - qq->released_ns < (1 + qq->linger) * period_ns(qc))
		qq->linger = qq->linger ?
				     MIN(qq->linger * 2, NVQ_QOS_LINGER_MAX) :
				     1;
	else
		qq->linger /= 2;
	qq->quiet = 0;
	qq->active = true;
	qq->seen = __atomic_load_n(qq->submitted, __ATOMIC_RELAXED);
	qq->due_ns = now + period_ns(qc);
	if (polls(qc)) {
		/* Waiters keep the CPU awake themselves: no files. */
		set_spin(qq, (uint8_t)qc->ch.method);
		mark_applied(qq, true, now);
	} else {
		mark_applied(qq, hold(qq, qc->eff_us), now);
	}
	pthread_cond_broadcast(&timer_cond);
out:
	nvq_qos_unlock();
}

int nvq_qos_queue_set_cpus(struct nvq_qos_queue *qq, const cpu_set_t *cpus)
{
	if (!qq || !cpus)
		return nvq_err(-EINVAL, "QoS: no queue or CPU set");
	nvq_qos_lock();
	sig_sync();
	qq->base = *cpus;
	if (qq->active && qq->qc && !polls(qq->qc))
		resync(qq, nvq_now_ns());
	nvq_qos_unlock();
	return 0;
}

int nvq_qos_queue_add_cpu(struct nvq_qos_queue *qq, int cpu)
{
	if (!qq || cpu < 0 || cpu >= NVQ_QOS_MAX_CPUS)
		return nvq_err(-EINVAL, "QoS: CPU %d out of range", cpu);
	nvq_qos_lock();
	sig_sync();
	__atomic_fetch_or(&qq->noted[cpu / 64], 1ull << (cpu % 64),
			  __ATOMIC_RELAXED);
	if (qq->active && qq->qc && !polls(qq->qc) &&
	    !CPU_ISSET(cpu, &qq->held))
		resync(qq, nvq_now_ns());
	nvq_qos_unlock();
	return 0;
}

/* ---- knobs ---- */

int nvq_qos_parse_limit(const char *s, int *limit_us)
{
	char *end;
	long v;

	if (!s || !limit_us)
		return nvq_err(-EINVAL, "no CPU latency limit given");
	if (!strcmp(s, "off") || !strcmp(s, "-1")) {
		*limit_us = NVQ_QOS_OFF;
		return 0;
	}
	if (!strcmp(s, "auto")) {
		*limit_us = NVQ_QOS_AUTO;
		return 0;
	}
	if (!strcmp(s, "n/a")) {
		*limit_us = 0;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || *end || v > NVQ_QOS_LIMIT_MAX)
		return nvq_err(
			-EINVAL,
			"bad CPU latency limit \"%s\": use off, auto, 0 (no idle) or 1..%d us",
			s, NVQ_QOS_LIMIT_MAX);
	*limit_us = (int)v;
	return 0;
}

/* nvq_qos_choose()'s look at the backend, under the QoS lock. */
static int probe_locked(char *msg, size_t len)
{
	int err;

	nvq_qos_lock();
	nvq_qos_be_retry();
	err = nvq_qos_be_probe();
	if (err) {
		/* Just the reason: the choice's text says what follows. */
		static const char na[] = "CPU latency limit not applied: ";
		const char *st = nvq_qos_be_status();
		char *end;

		if (!strncmp(st, na, sizeof(na) - 1))
			st += sizeof(na) - 1;
		snprintf(msg, len, "%s", st);
		end = strstr(msg, "; I/O is not affected");
		if (end)
			*end = '\0';
	}
	nvq_qos_unlock();
	return err;
}

/*
 * Make (@eff, @ch) the controller's setting and bring its queues in line:
 * with the lock held. A queue that changes method starts over at its next
 * submission.
 */
static void apply(struct nvq_qos_ctrl *qc, int eff,
		  const struct nvq_qos_choice *ch, uint64_t now)
{
	enum nvq_qos_method old = qc->ch.method;
	struct nvq_qos_queue *qq;

	qc->eff_us = eff;
	qc->ch = *ch;
	for (qq = qc->queues; qq; qq = qq->next) {
		if (!wants(qc)) {
			if (qq->active)
				release(qq, now);
			set_idle(qq, 0);
		} else if (!qq->active) {
			set_idle(qq, 1);
		} else if (old != ch->method) {
			release(qq, now);
			set_idle(qq, 1);
		} else if (!polls(qc) && (eff != qq->held_us || !qq->applied)) {
			rehold(qq, eff, now);
		}
	}
}

static void root_copy(char *root, size_t len)
{
	nvq_qos_lock();
	snprintf(root, len, "%s", nvq_qos_be_root());
	nvq_qos_unlock();
}

int nvq_qos_set_limit(struct nvq_qos_ctrl *qc, int limit_us)
{
	char reason[sizeof(qc->reason)] = "", root[256], msg[256] = "";
	struct nvq_qos_choice ch;
	enum nvq_qos_method req;
	int eff = limit_us, err = 0;

	if (!qc)
		return nvq_err(-EINVAL, "QoS: no controller");
	if (limit_us != NVQ_QOS_OFF && limit_us != NVQ_QOS_AUTO &&
	    (limit_us < 0 || limit_us > NVQ_QOS_LIMIT_MAX))
		return nvq_err(
			-EINVAL,
			"CPU latency limit %d out of range (-1 off, -2 auto, 0..%d us)",
			limit_us, NVQ_QOS_LIMIT_MAX);
	root_copy(root, sizeof(root));
	nvq_qos_lock();
	req = qc->method_req;
	nvq_qos_unlock();
	if (limit_us == NVQ_QOS_AUTO) {
		nvq_qos_auto_pick(root, &eff, reason, sizeof(reason));
		/*
		 * Where no idle state is worth forbidding, the limit that
		 * still means something is "wake fast": 0, which the waiter
		 * methods honour. The cpuidle method keeps "off".
		 */
		if (eff < 0 && req != NVQ_QOS_METHOD_CPUIDLE) {
			eff = 0;
			snprintf(reason + strnlen(reason, sizeof(reason)),
				 sizeof(reason) -
					 strnlen(reason, sizeof(reason)),
				 "; 0 for the waiter methods");
		}
	}
	nvq_qos_choose(eff, req, root, probe_locked, &ch);

	nvq_qos_lock();
	sig_sync();
	nvq_qos_be_retry();
	qc->limit_us = limit_us;
	memcpy(qc->reason, reason, sizeof(reason));
	apply(qc, eff, &ch, nvq_now_ns());
	if (eff >= 0 && ch.method == NVQ_QOS_METHOD_CPUIDLE) {
		err = nvq_qos_be_probe();
		if (err)
			snprintf(msg, sizeof(msg), "%s", nvq_qos_be_status());
	}
	nvq_qos_unlock();
	/* Still a success: the setting stands and I/O works without it. */
	if (err)
		nvq_err(err, "%s", msg);
	return 0;
}

int nvq_qos_set_method(struct nvq_qos_ctrl *qc, enum nvq_qos_method method)
{
	struct nvq_qos_choice ch;
	char root[256];
	int limit;

	if (!qc)
		return nvq_err(-EINVAL, "QoS: no controller");
	if ((unsigned int)method > NVQ_QOS_METHOD_HYBRID)
		return nvq_err(-EINVAL,
			       "CPU latency method %d unknown (auto, cpuidle, "
			       "poll or hybrid)",
			       (int)method);
	nvq_qos_lock();
	qc->method_req = method;
	limit = qc->limit_us;
	nvq_qos_unlock();
	/* "auto" limits depend on the method: take the whole path. */
	if (limit == NVQ_QOS_AUTO)
		return nvq_qos_set_limit(qc, limit);
	root_copy(root, sizeof(root));
	nvq_qos_choose(limit, method, root, probe_locked, &ch);
	nvq_qos_lock();
	sig_sync();
	if (qc->limit_us == limit && qc->method_req == method)
		apply(qc, qc->eff_us, &ch, nvq_now_ns());
	nvq_qos_unlock();
	return 0;
}

void nvq_qos_method_info(const struct nvq_qos_ctrl *qc,
			 struct nvq_qos_method_info *mi)
{
	if (!mi)
		return;
	memset(mi, 0, sizeof(*mi));
	mi->requested = NVQ_QOS_METHOD_AUTO;
	mi->method = NVQ_QOS_METHOD_NONE;
	snprintf(mi->why, sizeof(mi->why), "no limit");
	if (!qc)
		return;
	nvq_qos_lock();
	mi->requested = qc->method_req;
	mi->method = qc->ch.method;
	snprintf(mi->why, sizeof(mi->why), "%s", qc->ch.why);
	mi->wake = qc->ch.wake;
	nvq_qos_unlock();
}

void nvq_qos_queue_poll_stats(const struct nvq_qos_queue *qq,
			      struct nvq_qos_poll_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!qq)
		return;
#define LD(f) __atomic_load_n(&qq->w.f, __ATOMIC_RELAXED)
	st->polls = LD(polls);
	st->poll_ns = LD(poll_ns);
	st->sleeps = LD(sleeps);
	st->sleep_ns = LD(sleep_ns);
	st->overslept = LD(overslept);
	st->est_ns = LD(est_ns);
	st->idle_sleeps = LD(idle_sleeps);
	st->masked = LD(masked);
#undef LD
}

int nvq_qos_set_timeout(struct nvq_qos_ctrl *qc, unsigned int timeout_ms)
{
	struct nvq_qos_queue *qq;
	uint64_t due;

	if (!qc || !timeout_ms || timeout_ms > NVQ_QOS_TIMEOUT_MS_MAX)
		return nvq_err(-EINVAL,
			       "CPU latency timeout %u ms out of range (1..%d)",
			       timeout_ms, NVQ_QOS_TIMEOUT_MS_MAX);
	nvq_qos_lock();
	qc->timeout_ms = timeout_ms;
	due = nvq_now_ns() + period_ns(qc);
	for (qq = qc->queues; qq; qq = qq->next)
		if (qq->active && qq->due_ns > due)
			qq->due_ns = due;
	if (timer_running)
		pthread_cond_broadcast(&timer_cond);
	nvq_qos_unlock();
	return 0;
}

int nvq_qos_set_hysteresis(struct nvq_qos_ctrl *qc, bool on)
{
	struct nvq_qos_queue *qq;

	if (!qc)
		return nvq_err(-EINVAL, "QoS: no controller");
	nvq_qos_lock();
	qc->hysteresis = on;
	if (!on)
		for (qq = qc->queues; qq; qq = qq->next)
			qq->linger = 0;
	nvq_qos_unlock();
	return 0;
}

static int config(int (*fn)(const void *), const void *arg)
{
	int err;

	nvq_qos_lock();
	if (held_cpus)
		err = nvq_err(
			-EBUSY,
			"QoS: limits are held on %u CPUs; release them first",
			held_cpus);
	else
		err = fn(arg);
	nvq_qos_unlock();
	return err;
}

static int cfg_kind(const void *arg)
{
	return nvq_qos_be_set_kind(*(const enum nvq_qos_backend *)arg);
}

static int cfg_root(const void *arg)
{
	return nvq_qos_be_set_root(arg);
}

static int cfg_dma(const void *arg)
{
	return nvq_qos_be_set_dma_path(arg);
}

int nvq_qos_set_backend(enum nvq_qos_backend backend)
{
	if (backend != NVQ_QOS_BACKEND_SYSFS &&
	    backend != NVQ_QOS_BACKEND_DMA_LATENCY)
		return nvq_err(-EINVAL, "unknown QoS backend %d", (int)backend);
	return config(cfg_kind, &backend);
}

int nvq_qos_test_set_backend(enum nvq_qos_backend backend)
{
	return config(cfg_kind, &backend);
}

int nvq_qos_set_sysfs_root(const char *root)
{
	return config(cfg_root, root);
}

int nvq_qos_set_dma_latency_path(const char *path)
{
	return config(cfg_dma, path);
}

void nvq_qos_info(const struct nvq_qos_ctrl *qc, struct nvq_qos_info *info)
{
	if (!info)
		return;
	memset(info, 0, sizeof(*info));
	info->limit_us = NVQ_QOS_OFF;
	info->effective_us = NVQ_QOS_OFF;
	info->timeout_ms = NVQ_QOS_TIMEOUT_MS_DEFAULT;
	nvq_qos_lock();
	sig_sync();
	if (qc) {
		info->limit_us = qc->limit_us;
		info->effective_us = qc->eff_us;
		info->timeout_ms = qc->timeout_ms;
		snprintf(info->reason, sizeof(info->reason), "%s", qc->reason);
	}
	snprintf(info->backend, sizeof(info->backend), "%s", nvq_qos_be_name());
	snprintf(info->status, sizeof(info->status), "%s", nvq_qos_be_status());
	nvq_qos_unlock();
}

void nvq_qos_queue_stats(const struct nvq_qos_queue *qq,
			 struct nvq_qos_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!qq)
		return;
	nvq_qos_lock();
	sig_sync();
	st->applies = qq->applies;
	st->releases = qq->releases;
	st->held_ns = qq->held_ns;
	st->active = qq->applied;
	if (qq->applied)
		st->held_ns += nvq_now_ns() - qq->since_ns;
	nvq_qos_unlock();
}

int nvq_qos_restore_dead(struct nvq_qos_holder *holders, unsigned int max,
			 char *state_path, size_t path_len)
{
	int n;

	if (max && !holders)
		return nvq_err(-EINVAL, "QoS: no room for the holders");
	nvq_qos_lock();
	sig_sync();
	n = nvq_qos_be_restore_dead(holders, max, state_path, path_len);
	nvq_qos_unlock();
	return n;
}

/* ---- which CPUs ---- */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool space(char c)
{
	return blank(c) || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int nvq_qos_parse_cpulist_cut(const char *s, cpu_set_t *set, bool *cut)
{
	unsigned long a, b, hi;
	const char *at = s;
	char *end;

	CPU_ZERO(set);
	while (space(*s))
		s++;
	if (!*s)
		return 0;
	for (;;) {
		at = s;
		if (*s < '0' || *s > '9')
			goto bad;
		errno = 0;
		a = strtoul(s, &end, 10);
		if (errno)
			goto bad;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				goto bad;
			b = strtoul(s, &end, 10);
			if (errno)
				goto bad;
			s = end;
		}
		if (b < a || (b >= NVQ_QOS_MAX_CPUS && !cut))
			goto bad;
		if (b >= NVQ_QOS_MAX_CPUS)
			*cut = true;
		hi = MIN(b, (unsigned long)NVQ_QOS_MAX_CPUS - 1);
		for (; a <= hi; a++)
			CPU_SET(a, set);
		/* blk-mq's cpu_list: "0, 1, 2" */
		while (blank(*s))
			s++;
		if (*s == ',') {
			s++;
			while (blank(*s))
				s++;
			continue;
		}
		while (space(*s))
			s++;
		if (!*s)
			return 0;
		at = s;
		goto bad;
	}
bad:
	CPU_ZERO(set);
	return nvq_err(-EINVAL, "bad CPU list near \"%.16s\"", at);
}

int nvq_qos_parse_cpulist(const char *s, cpu_set_t *set)
{
	return nvq_qos_parse_cpulist_cut(s, set, NULL);
}
