// SPDX-License-Identifier: MIT
/*
 * latd-wake: does a SCHED_IDLE busy loop on a CPU make wake-ups there
 * faster? The question nvq-latd's spinner (issue 14) has to answer before
 * it is offered.
 *
 * A sleeper thread pinned to CPU S blocks in read() on an eventfd; a waker
 * thread pinned to CPU W sleeps GAP_US (so that CPU S really goes idle),
 * reads CLOCK_MONOTONIC and writes the eventfd; the sleeper reads the clock
 * when read() returns. The difference is the wake-up latency, as a
 * completion interrupt's handler waking the submitter sees it. Rounds
 * alternate between "idle" (nothing else on CPU S) and "spin" (a
 * SCHED_IDLE thread pinned to CPU S spinning the whole round), so that
 * both see the same machine load.
 *
 * usage: latd-wake [-n SAMPLES] [-r ROUNDS] [-g GAP_US] [-s CPU] [-w CPU]
 *        latd-wake --spin CPU [SECONDS]
 * The second form only spins: a SCHED_IDLE busy loop pinned to CPU, for
 * SECONDS (default: until killed) - the spinner the fio measurements put
 * on the completion CPU.
 *
 * Prints one line per round and the medians over rounds:
 *   round R MODE: n=N p50=X p99=Y max=Z mean=M (us)
 *   median MODE: p50=X p99=Y max=Z mean=M (us)
 * Built by scripts/latd-host.sh and scripts/qemu/latd-guest.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct wake {
	int efd;
	int scpu, wcpu;
	int n;
	long gap_us;
	_Atomic uint64_t t0; /* waker's clock before the write */
	_Atomic int got; /* wake-ups the sleeper has taken */
	uint64_t *lat; /* n samples, ns */
	_Atomic int stop_spin;
	int spin_cpu;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static int sched_idle_self(void)
{
	struct sched_param p = { 0 };

	return sched_setscheduler(0, SCHED_IDLE, &p) ? -errno : 0;
}

static void *sleeper(void *arg)
{
	struct wake *w = arg;
	uint64_t v;
	int i;

	if (pin(w->scpu))
		fprintf(stderr, "latd-wake: cannot pin the sleeper to CPU %d\n",
			w->scpu);
	for (i = 0; i < w->n; i++) {
		if (read(w->efd, &v, sizeof(v)) != sizeof(v)) {
			perror("latd-wake: read");
			exit(1);
		}
		w->lat[i] = now_ns() - atomic_load(&w->t0);
		atomic_store(&w->got, i + 1);
	}
	return NULL;
}

static void *spinner(void *arg)
{
	struct wake *w = arg;

	pin(w->spin_cpu);
	if (sched_idle_self())
		fprintf(stderr, "latd-wake: SCHED_IDLE: %s\n", strerror(errno));
	while (!atomic_load_explicit(&w->stop_spin, memory_order_relaxed))
		__builtin_ia32_pause();
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double p50, p99, max, mean;
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One round: n wake-ups, with or without the spinner on the sleeper's CPU */
static int round_run(struct wake *w, int spin, struct stats *st)
{
	pthread_t s, sp;
	struct timespec gap = { w->gap_us / 1000000,
				(w->gap_us % 1000000) * 1000 };
	uint64_t one = 1, sum = 0;
	int i;

	if (spin) {
		atomic_store(&w->stop_spin, 0);
		w->spin_cpu = w->scpu;
		if (pthread_create(&sp, NULL, spinner, w))
			return -1;
	}
	if (pthread_create(&s, NULL, sleeper, w))
		return -1;
	atomic_store(&w->got, 0);
	for (i = 0; i < w->n; i++) {
		/*
		 * One wake-up in flight at a time: two writes before a read
		 * would be one read (the eventfd adds them up).
		 */
		do
			nanosleep(&gap, NULL);
		while (atomic_load(&w->got) < i);
		atomic_store(&w->t0, now_ns());
		if (write(w->efd, &one, sizeof(one)) != sizeof(one)) {
			perror("latd-wake: write");
			exit(1);
		}
	}
	pthread_join(s, NULL);
	if (spin) {
		atomic_store(&w->stop_spin, 1);
		pthread_join(sp, NULL);
	}
	for (i = 0; i < w->n; i++)
		sum += w->lat[i];
	qsort(w->lat, w->n, sizeof(*w->lat), cmp_u64);
	st->p50 = w->lat[w->n / 2] / 1e3;
	st->p99 = w->lat[(size_t)w->n * 99 / 100] / 1e3;
	st->max = w->lat[w->n - 1] / 1e3;
	st->mean = (double)sum / w->n / 1e3;
	return 0;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: latd-wake [-n SAMPLES] [-r ROUNDS] [-g GAP_US]"
		" [-s CPU] [-w CPU]\n"
		"       latd-wake --spin CPU [SECONDS]\n"
		"Wake-up latency of a thread blocked on an eventfd on CPU -s\n"
		"(default 1), woken from CPU -w (default 0) every GAP_US\n"
		"(default 1000), rounds alternating without and with a\n"
		"SCHED_IDLE busy loop on the sleeper's CPU. Defaults: 2000\n"
		"samples, 6 rounds. --spin only spins (SCHED_IDLE, pinned).\n");
}

static int parse_int(const char *s, long min, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || *end || end == s || *out < min ? -1 : 0;
}

static int spin_only(int argc, char **argv)
{
	struct wake w = { 0 };
	long cpu, secs = 0;
	pthread_t sp;

	if (argc < 3 || argc > 4 || parse_int(argv[2], 0, &cpu) ||
	    (argc == 4 && parse_int(argv[3], 1, &secs))) {
		usage(stderr);
		return 2;
	}
	w.spin_cpu = (int)cpu;
	if (pthread_create(&sp, NULL, spinner, &w))
		return 1;
	if (secs)
		sleep((unsigned int)secs);
	else
		for (;;)
			pause();
	atomic_store(&w.stop_spin, 1);
	pthread_join(sp, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct wake w = { .scpu = 1, .wcpu = 0, .n = 2000, .gap_us = 1000 };
	long v, rounds = 6;
	double res[2][4][64];
	const char *mode[2] = { "idle", "spin" };
	int opt, r, m, k;

	if (argc > 1 && !strcmp(argv[1], "--spin"))
		return spin_only(argc, argv);
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	while ((opt = getopt(argc, argv, "n:r:g:s:w:")) != -1) {
		long min = opt == 's' || opt == 'w' ? 0 : 1;

		if (opt == '?') {
			usage(stderr);
			return 2;
		}
		if (parse_int(optarg, min, &v)) {
			fprintf(stderr, "latd-wake: bad -%c value '%s'\n", opt,
				optarg);
			return 2;
		}
		switch (opt) {
		case 'n':
			w.n = (int)v;
			break;
		case 'r':
			rounds = v > 64 ? 64 : v;
			break;
		case 'g':
			w.gap_us = v;
			break;
		case 's':
			w.scpu = (int)v;
			break;
		case 'w':
			w.wcpu = (int)v;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	w.lat = calloc(w.n, sizeof(*w.lat));
	w.efd = eventfd(0, 0);
	if (!w.lat || w.efd < 0) {
		perror("latd-wake");
		return 1;
	}
	if (pin(w.wcpu)) {
		fprintf(stderr, "latd-wake: cannot pin the waker to CPU %d\n",
			w.wcpu);
		return 1;
	}
	printf("sleeper CPU %d, waker CPU %d, %d wake-ups per round", w.scpu,
	       w.wcpu, w.n);
	printf(" every %ld us\n", w.gap_us);
	for (r = 0; r < rounds; r++) {
		for (m = 0; m < 2; m++) {
			struct stats st;

			if (round_run(&w, m, &st)) {
				fprintf(stderr, "latd-wake: no threads\n");
				return 1;
			}
			res[m][0][r] = st.p50;
			res[m][1][r] = st.p99;
			res[m][2][r] = st.max;
			res[m][3][r] = st.mean;
			printf("round %d %s: n=%d p50=%.1f p99=%.1f", r + 1,
			       mode[m], w.n, st.p50, st.p99);
			printf(" max=%.1f mean=%.1f (us)\n", st.max, st.mean);
			fflush(stdout);
		}
	}
	for (m = 0; m < 2; m++) {
		double md[4];

		for (k = 0; k < 4; k++)
			md[k] = median(res[m][k], (int)rounds);
		printf("median %s: p50=%.1f p99=%.1f max=%.1f mean=%.1f (us)\n",
		       mode[m], md[0], md[1], md[2], md[3]);
	}
	close(w.efd);
	free(w.lat);
	return 0;
}
