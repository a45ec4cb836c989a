// SPDX-License-Identifier: MIT
/*
 * bench-pools: what the PRP list pools cost, in the variant NVQ_PRP_POOLS
 * selects (device, node, cache; docs/numa.md). One thread per CPU, each
 * pinned and on its own queue (nr_queues = CPUs), 32 KiB random reads at
 * QD32 in poll mode on the emulated controller: every command needs a
 * PRP list block (the buffer starts 512 bytes into a page: 9 pages).
 *
 *   bench-pools [--seconds S | --ios N] [--qd N] [--bs BYTES]
 *               [--exclusive] [--prp] [--threads N] [--uri URI]
 *
 * --prp leaves the device out: each thread builds and frees PRP lists on
 * its queue's pools as the I/O path does (QD lists, then free them),
 * which isolates the pools and their lock. bench/pools.py runs the
 * variants side by side and under callgrind. Prints one line:
 *   variant V threads T ios N seconds S iops X empty_polls E
 *   locks L contended C hits H refills R drains D bypass B
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvq/nvq.h>

#include "ctrl.h"
#include "prp.h"

#define MAX_THREADS 64
#define MAX_QD 256

static unsigned long target_ios;
static double seconds = 3;
static unsigned int qd = 32, bs = 32768, nthreads;
static bool prp_only;
static volatile int stop;
static struct nvq_ctrl *ctrl;
static uint32_t lba_size;
static uint64_t nlba;

struct worker {
	pthread_t tid;
	unsigned int id;
	struct nvq_queue *q;
	char *buf;
	unsigned long ios, empty;
	unsigned int ready[MAX_QD], nready;
	int err;
} __attribute__((aligned(64)));

static struct worker workers[MAX_THREADS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void done(void *arg, const struct nvq_cpl *cpl)
{
	struct worker *w = &workers[(uintptr_t)arg >> 16];

	w->ready[w->nready++] = (unsigned int)((uintptr_t)arg & 0xffff);
	w->ios++;
	if (cpl->err)
		w->err = cpl->err;
}

static bool finished(const struct worker *w)
{
	return target_ios ? w->ios >= target_ios : stop;
}

/* The I/O loop, apart so that callgrind can collect it alone. */
static void __attribute__((noinline)) io_loop(struct worker *w)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (w->id + 1);
	unsigned long sent = 0;
	uint32_t nlb = bs / lba_size;
	unsigned int i;

	for (i = 0; i < qd; i++)
		w->ready[w->nready++] = i;
	while (!finished(w)) {
		unsigned int n = w->nready;
		int rc;

		w->nready = 0;
		for (i = 0; i < n; i++) {
			unsigned int lane = w->ready[i];

			if (target_ios && sent >= target_ios)
				continue;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			rc = nvq_read(w->q, 1, w->buf + (size_t)lane * bs + 512,
				      (x % (nlba / nlb)) * nlb, nlb,
				      NVQ_IO_MORE, done,
				      (void *)(uintptr_t)(w->id << 16 | lane));
			if (rc) {
				w->err = rc;
				return;
			}
			sent++;
		}
		if (n) {
			nvq_queue_kick(w->q);
			/* Under valgrind: let the device take the batch. */
			if (target_ios)
				sched_yield();
		}
		rc = nvq_poll(w->q, 0);
		if (rc < 0) {
			w->err = rc;
			return;
		}
		if (!rc)
			w->empty++;
	}
	/* Drain what is still in flight. */
	while (nvq_queue_inflight(w->q))
		if (nvq_poll(w->q, 0) < 0)
			return;
}

/* PRP lists alone: qd builds, then qd frees, as a queue at depth qd. */
static void __attribute__((noinline)) prp_loop(struct worker *w)
{
	struct nvq_prp_lists *mine;
	uint64_t iova = 0x10000200ull, p1, p2;
	unsigned int i;

	mine = calloc(qd, sizeof(*mine));
	if (!mine) {
		w->err = -ENOMEM;
		return;
	}
	while (!finished(w)) {
		for (i = 0; i < qd; i++)
			if (nvq_prp_build(w->q->pools, iova, bs, &p1, &p2,
					  &mine[i])) {
				w->err = -ENOMEM;
				free(mine);
				return;
			}
		for (i = 0; i < qd; i++)
			nvq_prp_free(w->q->pools, &mine[i]);
		w->ios += qd;
	}
	free(mine);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	CPU_SET((int)(w->id % (unsigned int)ncpu), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (prp_only)
		prp_loop(w);
	else
		io_loop(w);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-pools [--seconds S | --ios N] [--qd N] "
			"[--bs BYTES] [--exclusive] [--prp] [--threads N] "
			"[--uri URI]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *uri = "emu:size=256M,idle_spin=10s";
	const char *variant = getenv("NVQ_PRP_POOLS");
	unsigned long ios = 0, empty = 0;
	uint64_t t0, t1;
	struct nvq_ns_info ni;
	struct nvq_opts o;
	unsigned int i, nodes_seen = 0;
	uint64_t locks = 0, contended = 0, hits = 0, refills = 0;
	uint64_t drains = 0, bypass = 0;
	int a, rc = 0;

	nvq_opts_init(&o);
	nthreads = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seconds") && a + 1 < argc)
			seconds = atof(argv[++a]);
		else if (!strcmp(argv[a], "--ios") && a + 1 < argc)
			target_ios = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--qd") && a + 1 < argc)
			qd = (unsigned int)strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--bs") && a + 1 < argc)
			bs = (unsigned int)strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--threads") && a + 1 < argc)
			nthreads = (unsigned int)strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--exclusive"))
			o.exclusive = true;
		else if (!strcmp(argv[a], "--prp"))
			prp_only = true;
		else if (!strcmp(argv[a], "--uri") && a + 1 < argc)
			uri = argv[++a];
		else
			return usage();
	}
	if (!qd || qd > MAX_QD || !nthreads || nthreads > MAX_THREADS ||
	    bs < 4096 || bs % 4096)
		return usage();
	o.nr_queues = nthreads;
	o.mode = NVQ_MODE_POLL;
	o.queue_depth = qd + 1;
	if (nvq_open(uri, &o, &ctrl)) {
		fprintf(stderr, "bench-pools: %s: %s\n", uri, nvq_errmsg());
		return 1;
	}
	if (nvq_ctrl_queue_count(ctrl) < nthreads ||
	    nvq_ns_info(ctrl, 1, &ni)) {
		fprintf(stderr, "bench-pools: %u queues, wanted %u\n",
			nvq_ctrl_queue_count(ctrl), nthreads);
		nvq_close(ctrl);
		return 1;
	}
	lba_size = ni.lba_size;
	nlba = ni.nlba;
	for (i = 0; i < nthreads; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->q = nvq_ctrl_queue(ctrl, i);
		w->buf = nvq_dma_alloc(ctrl, (size_t)qd * bs + 4096, -1);
		if (!w->buf) {
			fprintf(stderr, "bench-pools: %s\n", nvq_errmsg());
			return 1;
		}
	}
	t0 = now_ns();
	for (i = 0; i < nthreads; i++)
		pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
	if (!target_ios) {
		struct timespec ts = { (time_t)seconds,
				       (long)((seconds - (time_t)seconds) *
					      1e9) };

		nanosleep(&ts, NULL);
		stop = 1;
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(workers[i].tid, NULL);
	t1 = now_ns();
	for (i = 0; i < nthreads; i++) {
		struct nvq_pool_stats ps;

		ios += workers[i].ios;
		empty += workers[i].empty;
		if (workers[i].err) {
			fprintf(stderr, "bench-pools: thread %u: %s\n", i,
				strerror(-workers[i].err));
			rc = 1;
		}
		nvq_queue_pool_stats(workers[i].q, &ps);
		hits += ps.cache_hits;
		refills += ps.cache_refills;
		drains += ps.cache_drains;
		bypass += ps.cache_bypass;
		/* Pool counters are per node set: count each set once. */
		if (ps.node >= 0 && ps.node < 32 &&
		    !(nodes_seen & 1u << ps.node)) {
			nodes_seen |= 1u << ps.node;
			locks += ps.pool_locks;
			contended += ps.pool_contended;
		}
		nvq_dma_free(ctrl, workers[i].buf);
	}
	printf("variant %s threads %u ios %lu seconds %.3f iops %.0f "
	       "empty_polls %lu locks %llu contended %llu hits %llu "
	       "refills %llu drains %llu bypass %llu\n",
	       variant && *variant ? variant : "default", nthreads, ios,
	       (double)(t1 - t0) / 1e9, ios / ((double)(t1 - t0) / 1e9), empty,
	       (unsigned long long)locks, (unsigned long long)contended,
	       (unsigned long long)hits, (unsigned long long)refills,
	       (unsigned long long)drains, (unsigned long long)bypass);
	nvq_close(ctrl);
	return rc;
}
