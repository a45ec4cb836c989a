// SPDX-License-Identifier: MIT
/*
 * qos-timeout-bench: how soon after the I/O stops does a queue drop its
 * CPU latency limit, and does the completion CPU go back to its idle
 * states? Measurement 4 of docs/qos.md; scripts/bench-qos.sh runs it.
 *
 * Each round: QD1 4 KiB reads for busy= ms, then no I/O. The delay is
 * taken from the last submission to the moment the completion CPU's
 * pm_qos_resume_latency_us file reads its previous text again (polled
 * every 100 us), and compared with the promise: timeout + one period.
 * The completion CPU's cpuidle residency is sampled before any I/O,
 * during the busy phase and for idle= ms after the release.
 *
 * Arguments are key=value: dev=emu:... mode=thread|wait limit=auto|0|N
 * timeout=MS rounds=N busy=MS idle=MS. Public API only. Needs permission
 * to write the PM QoS files (root), or NVQ_SYSFS_ROOT pointing at a tree
 * it may write.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvq/nvq.h>

#define MAX_STATES 8

struct args {
	const char *dev;
	enum nvq_mode mode;
	int limit;
	unsigned int timeout, rounds, busy_ms, idle_ms;
};

struct idle_snap {
	uint64_t t_ns;
	uint64_t us[MAX_STATES];
};

static const char *sysroot;
static unsigned int nr_states;
static char state_name[MAX_STATES][32];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static void cpu_path(char *buf, size_t len, int cpu, const char *rel)
{
	snprintf(buf, len, "%s/devices/system/cpu/cpu%d/%s", sysroot, cpu, rel);
}

static void idle_names(int cpu)
{
	char rel[64], path[256];

	for (nr_states = 0; nr_states < MAX_STATES; nr_states++) {
		snprintf(rel, sizeof(rel), "cpuidle/state%u/name", nr_states);
		cpu_path(path, sizeof(path), cpu, rel);
		if (read_text(path, state_name[nr_states],
			      sizeof(state_name[0])))
			break;
	}
}

static void idle_snap(int cpu, struct idle_snap *s)
{
	char rel[64], path[256], buf[64];
	unsigned int k;

	s->t_ns = now_ns();
	for (k = 0; k < nr_states; k++) {
		snprintf(rel, sizeof(rel), "cpuidle/state%u/time", k);
		cpu_path(path, sizeof(path), cpu, rel);
		s->us[k] = read_text(path, buf, sizeof(buf)) ?
				   0 :
				   strtoull(buf, NULL, 10);
	}
}

/* "POLL 12.3% haltpoll idle 80.1%" between @a and @b. */
static const char *residency(const struct idle_snap *a,
			     const struct idle_snap *b, char *buf, size_t len)
{
	double wall_us = (double)(b->t_ns - a->t_ns) / 1000.0;
	size_t used = 0;
	unsigned int k;

	buf[0] = '\0';
	for (k = 0; k < nr_states && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%5.1f%%",
					 k ? " / " : "",
					 wall_us > 0 ?
						 (double)(b->us[k] - a->us[k]) *
							 100.0 / wall_us :
						 0);
	return buf;
}

struct io {
	int done; /* atomic */
	int err;
	int cpu;
};

static void io_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct io *io = arg;

	io->err = cpl->err;
	io->cpu = sched_getcpu();
	__atomic_store_n(&io->done, 1, __ATOMIC_RELEASE);
}

/* One read, waited for; returns the completion's CPU or -1. */
static int one_io(struct nvq_queue *q, enum nvq_mode mode, void *buf,
		  uint64_t lba)
{
	struct io io = { 0 };

	if (nvq_read(q, 1, buf, lba, 1, 0, io_cb, &io))
		return -1;
	while (!__atomic_load_n(&io.done, __ATOMIC_ACQUIRE)) {
		if (mode == NVQ_MODE_THREAD)
			sched_yield();
		else if (nvq_wait(q, 1, 1000) < 0)
			return -1;
	}
	return io.err ? -1 : io.cpu;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int parse(int argc, char **argv, struct args *a)
{
	int i;

	a->dev = "emu:lat=80us";
	a->mode = NVQ_MODE_THREAD;
	a->limit = NVQ_QOS_AUTO;
	a->timeout = NVQ_QOS_TIMEOUT_MS_DEFAULT;
	a->rounds = 5;
	a->busy_ms = 500;
	a->idle_ms = 500;
	for (i = 1; i < argc; i++) {
		char *v = strchr(argv[i], '=');

		if (!v)
			goto bad;
		*v++ = '\0';
		if (!strcmp(argv[i], "dev"))
			a->dev = v;
		else if (!strcmp(argv[i], "mode") && !strcmp(v, "thread"))
			a->mode = NVQ_MODE_THREAD;
		else if (!strcmp(argv[i], "mode") && !strcmp(v, "wait"))
			a->mode = NVQ_MODE_WAIT;
		else if (!strcmp(argv[i], "limit")) {
			if (nvq_qos_parse_limit(v, &a->limit))
				goto bad;
		} else if (!strcmp(argv[i], "timeout"))
			a->timeout = (unsigned int)atoi(v);
		else if (!strcmp(argv[i], "rounds"))
			a->rounds = (unsigned int)atoi(v);
		else if (!strcmp(argv[i], "busy"))
			a->busy_ms = (unsigned int)atoi(v);
		else if (!strcmp(argv[i], "idle"))
			a->idle_ms = (unsigned int)atoi(v);
		else
			goto bad;
	}
	if (a->rounds && a->rounds <= 100 && a->busy_ms && a->idle_ms &&
	    a->limit != NVQ_QOS_OFF)
		return 0;
bad:
	fprintf(stderr,
		"usage: qos-timeout-bench [dev=emu:...] [mode=thread|wait] "
		"[limit=auto|0|N] [timeout=MS] [rounds=N] [busy=MS] "
		"[idle=MS]\n");
	return -1;
}

int main(int argc, char **argv)
{
	struct idle_snap base0, base1, busy0, busy1, idle0, idle1;
	uint64_t delays[100], t_last = 0, t_rel, bound_ns;
	char path[256], orig[32], cur[32], r1[96], r2[96];
	struct nvq_qos_info info;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_opts o;
	unsigned int r, within = 0;
	uint64_t lba = 0;
	int cpu, rc = 1;
	struct args a;
	void *buf;

	if (parse(argc, argv, &a))
		return 2;
	if (a.mode == NVQ_MODE_WAIT) {
		/* The waiter is the completion CPU: keep it in one place. */
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(sched_getcpu(), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	sysroot = getenv("NVQ_SYSFS_ROOT") ? getenv("NVQ_SYSFS_ROOT") : "/sys";
	nvq_opts_init(&o);
	o.mode = a.mode;
	o.nr_queues = 1;
	o.cpu_lat_limit_us = a.limit;
	o.cpu_lat_timeout_ms = a.timeout;
	if (nvq_open(a.dev, &o, &c)) {
		fprintf(stderr, "qos-timeout-bench: %s: %s\n", a.dev,
			nvq_errmsg());
		return 1;
	}
	nvq_qos_info(nvq_ctrl_qos(c), &info);
	if (info.status[0] || info.effective_us < 0) {
		fprintf(stderr, "qos-timeout-bench: no limit to measure: %s\n",
			info.status[0] ? info.status : info.reason);
		goto out;
	}
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 4096, -1);
	if (!q || !buf)
		goto out;

	/* Learn the completion CPU, then let its limit go. */
	cpu = one_io(q, a.mode, buf, 0);
	if (cpu < 0) {
		fprintf(stderr, "qos-timeout-bench: I/O failed\n");
		goto out;
	}
	cpu_path(path, sizeof(path), cpu, "power/pm_qos_resume_latency_us");
	sleep_ns(4ull * a.timeout * 1000000ull + 100000000ull);
	if (read_text(path, orig, sizeof(orig))) {
		fprintf(stderr, "qos-timeout-bench: cannot read %s\n", path);
		goto out;
	}
	idle_names(cpu);
	bound_ns = 2ull * a.timeout * 1000000ull;
	printf("qos-timeout-bench: %s, mode %s, limit %s%d us, timeout %u "
	       "ms\n",
	       a.dev, a.mode == NVQ_MODE_THREAD ? "thread" : "wait",
	       a.limit == NVQ_QOS_AUTO ? "auto = " : "", info.effective_us,
	       a.timeout);
	printf("completion CPU %d: %s holds \"%s\" when idle\n", cpu, path,
	       orig);
	printf("promise: released within timeout + one period = %u ms\n",
	       2 * a.timeout);
	printf("idle residency columns:");
	for (r = 0; r < nr_states; r++)
		printf("%s %s", r ? " /" : "", state_name[r]);
	printf("\n\n");

	idle_snap(cpu, &base0);
	sleep_ns((uint64_t)a.idle_ms * 1000000ull);
	idle_snap(cpu, &base1);
	printf("before any I/O (%u ms):        %s\n", a.idle_ms,
	       residency(&base0, &base1, r1, sizeof(r1)));
	printf("\n%5s %10s %12s %-24s %-24s\n", "round", "held", "release ms",
	       "busy residency", "idle residency after");

	for (r = 0; r < a.rounds; r++) {
		uint64_t end;

		idle_snap(cpu, &busy0);
		end = busy0.t_ns + (uint64_t)a.busy_ms * 1000000ull;
		cur[0] = '\0';
		while (now_ns() < end) {
			t_last = now_ns();
			if (one_io(q, a.mode, buf, lba++ % 256) < 0) {
				fprintf(stderr,
					"qos-timeout-bench: I/O failed\n");
				goto out;
			}
			if (!cur[0])
				read_text(path, cur, sizeof(cur));
		}
		idle_snap(cpu, &busy1);
		/* Poll the file until its text is back (10 s cap). */
		for (;;) {
			char v[32];

			t_rel = now_ns();
			if (!read_text(path, v, sizeof(v)) && !strcmp(v, orig))
				break;
			if (t_rel - t_last > 10000000000ull)
				break;
			sleep_ns(100000);
		}
		delays[r] = t_rel - t_last;
		within += delays[r] <= bound_ns;
		idle_snap(cpu, &idle0);
		sleep_ns((uint64_t)a.idle_ms * 1000000ull);
		idle_snap(cpu, &idle1);
		printf("%5u %10s %12.2f %-24s %-24s\n", r + 1, cur,
		       delays[r] / 1e6,
		       residency(&busy0, &busy1, r1, sizeof(r1)),
		       residency(&idle0, &idle1, r2, sizeof(r2)));
	}
	qsort(delays, a.rounds, sizeof(delays[0]), cmp_u64);
	printf("\nrelease after the last submission: min %.2f ms, median "
	       "%.2f ms, max %.2f ms; %u of %u rounds within %u ms\n",
	       delays[0] / 1e6, delays[a.rounds / 2] / 1e6,
	       delays[a.rounds - 1] / 1e6, within, a.rounds, 2 * a.timeout);
	rc = 0;
out:
	nvq_close(c);
	return rc;
}
