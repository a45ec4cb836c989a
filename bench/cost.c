// SPDX-License-Identifier: MIT
/*
 * bench-cost: a fixed number of 4 KiB polled reads at QD32 on one queue,
 * resubmitted in batches (NVQ_IO_MORE on each, one nvq_queue_kick per
 * batch), through the public API only. Run under callgrind by
 * bench/cost.py, which turns two runs with different I/O counts into the
 * driver's instructions per I/O; the harness is kept this small so that
 * what it adds per I/O (loop, callback) is a handful of instructions.
 *
 * A poll that finds nothing (the device thread has not run yet, which
 * under valgrind's one-thread-at-a-time scheduling is common) yields the
 * CPU and is counted; --empty K adds K more such polls after the run, so
 * the cost of one can be measured and taken out of the figure.
 *
 *   bench-cost [--ios N] [--empty K] [--exclusive] [--uri URI]
 * Prints "ios N empty_polls E extra_empty K errors X".
 *
 * Built with COST_HARNESS (bench-cost-harness, tools/perf/meson.build) it
 * runs nvq-perf's own job engine (tools/perf/job.c) instead of the loop
 * above: the default job (4 KiB random reads, QD32, poll mode, the
 * emulator's completion stamps on, as nvq-perf opens emu:) for N I/Os in
 * this thread, so that bench/cost.py can tell the harness's instructions
 * per I/O from the driver's. Polls that find nothing yield, as nvq-perf's
 * do with more pollers than CPUs (valgrind runs one thread at a time).
 *   bench-cost-harness [--ios N | --ms T] [--stall-ms T] [--uri URI]
 * --ms: for T ms (nvq-perf's default job runs for a time, --time 5s)
 * instead of N I/Os.
 * --stall-ms: the device answers nothing (lat=1s); after the first QD
 * submissions the job only polls, for T ms, then gives up (cost.py
 * weighs one empty poll with two such runs).
 * Prints "ios N reaps R submits S".
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvq/nvq.h>

#define QD 32
#define BS 4096

#ifdef COST_HARNESS
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "job.h"

struct stall {
	struct perf_shared *sh;
	unsigned long ms;
};

/* --stall-ms: give up on the I/O in flight, as nvq-perf's monitor does. */
static void *stall_end(void *arg)
{
	struct stall *st = arg;
	struct timespec ts = { (time_t)(st->ms / 1000),
			       (long)(st->ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
	atomic_store(&st->sh->stop, true);
	atomic_store(&st->sh->abandon, true);
	return NULL;
}

static int harness(int argc, char **argv)
{
	const char *uri =
		"emu:size=64M,idle_spin=10s,stamp=1,populate=1,assist=0";
	char *pargv[] = { "nvq-perf", NULL };
	unsigned long ios = 100000, stall_ms = 0, ms = 0;
	struct perf_shared sh = { 0 };
	struct perf_target tgt = { 0 };
	struct perf_phase ph = { 0 };
	struct nvq_ns_info info;
	struct perf_result res;
	struct stall st;
	struct perf_opts po;
	struct perf_job job;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	pthread_t tid;
	char err[512];
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--ios") && a + 1 < argc)
			ios = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--ms") && a + 1 < argc)
			ms = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--stall-ms") && a + 1 < argc)
			stall_ms = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--uri") && a + 1 < argc)
			uri = argv[++a];
		else {
			fprintf(stderr, "usage: bench-cost-harness [--ios N | "
					"--ms T] [--stall-ms T] [--uri URI]\n");
			return 2;
		}
	}
	if (stall_ms)
		uri = "emu:size=64M,idle_spin=10s,stamp=1,populate=1,lat=1s,assist=0";
	/* nvq-perf's defaults: randread, 4k, QD32, one thread, poll */
	if (perf_opts_parse(&po, 1, pargv, err, sizeof(err))) {
		fprintf(stderr, "bench-cost-harness: %s\n", err);
		return 1;
	}
	po.configs[0].ios = ms ? 0 : ios;
	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.mode = po.configs[0].mode;
	if (nvq_open(uri, &o, &c) || nvq_ns_info(c, 1, &info)) {
		fprintf(stderr, "bench-cost-harness: %s: %s\n", uri,
			nvq_errmsg());
		return 1;
	}
	tgt.ctrl = c;
	tgt.nsid = 1;
	tgt.lba_size = info.lba_size;
	tgt.bs = po.configs[0].bs;
	tgt.nlb = (uint32_t)(tgt.bs / info.lba_size);
	/* no metadata: the data buffer is bs, one LBA is lba_size */
	tgt.blk = tgt.buf_blk = info.lba_size;
	tgt.buf_bytes = tgt.bs;
	tgt.region_blocks = info.nlba * info.lba_size / tgt.bs;
	tgt.run_id = 1;
	tgt.stamped = true;
	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.cond, NULL);
	sh.tgt = &tgt;
	sh.phase = &ph;
	ph.random = true;
	ph.read_pct = 100;
	ph.record = true;
	ph.ios = stall_ms || ms ? 0 : ios;
	ph.t_begin = perf_now();
	ph.ramp_end = ph.t_begin;
	/* --ms: the default job runs for a time, as --time does */
	if (ms)
		ph.deadline = ph.t_begin + ms * 1000000ull;
	if (perf_job_init(&job, &sh, &po.configs[0], nvq_ctrl_queue(c, 0), 0, 1,
			  err, sizeof(err))) {
		fprintf(stderr, "bench-cost-harness: %s\n", err);
		return 1;
	}
	job.yield_empty = true;
	perf_job_rearm(&job);
	if (stall_ms) {
		st.sh = &sh;
		st.ms = stall_ms;
		pthread_create(&tid, NULL, stall_end, &st);
	}
	perf_job_main(&job);
	if (stall_ms)
		pthread_join(tid, NULL);
	perf_result_init(&res);
	perf_job_collect(&job, &res);
	printf("ios %llu reaps %llu submits %llu errors %llu\n",
	       (unsigned long long)perf_result_ios(&res),
	       (unsigned long long)res.depths.completes,
	       (unsigned long long)res.depths.submits,
	       (unsigned long long)res.io_errors);
	/* what is still in flight (--stall-ms) goes with the controller */
	nvq_close(c);
	perf_job_release(&job, false);
	perf_opts_free(&po);
	return res.io_errors ? 1 : 0;
}
#endif

static unsigned int ready[QD], nready;
static unsigned long errors;

static void done(void *arg, const struct nvq_cpl *cpl)
{
	ready[nready++] = (unsigned int)(uintptr_t)arg;
	errors += cpl->err != 0;
}

int main(int argc, char **argv)
{
	const char *uri = "emu:size=64M,idle_spin=10s,assist=0";
	unsigned long ios = 100000, extra = 0, submitted = 0, reaped = 0;
	unsigned long empty = 0, i;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	struct nvq_opts o;
	char *buf;
	int a;

#ifdef COST_HARNESS
	return harness(argc, argv);
#endif
	nvq_opts_init(&o);
	o.nr_queues = 1;
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--ios") && a + 1 < argc)
			ios = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--empty") && a + 1 < argc)
			extra = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--exclusive"))
			o.exclusive = true;
		else if (!strcmp(argv[a], "--uri") && a + 1 < argc)
			uri = argv[++a];
		else {
			fprintf(stderr,
				"usage: bench-cost [--ios N] [--empty K] "
				"[--exclusive] [--uri URI]\n");
			return 2;
		}
	}
	if (nvq_open(uri, &o, &c)) {
		fprintf(stderr, "bench-cost: %s: %s\n", uri, nvq_errmsg());
		return 1;
	}
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, QD * BS, -1);
	if (!q || !buf) {
		fprintf(stderr, "bench-cost: %s\n", nvq_errmsg());
		nvq_close(c);
		return 1;
	}
	for (i = 0; i < QD; i++)
		ready[nready++] = (unsigned int)i;

	while (reaped < ios) {
		unsigned int n = nready;
		int rc;

		nready = 0;
		for (i = 0; i < n && submitted < ios; i++, submitted++) {
			unsigned int lane = ready[i];

			/* 4 KiB blocks of a 64 MiB namespace, in order. */
			if (nvq_read(q, 1, buf + lane * BS, submitted & 16383,
				     1, NVQ_IO_MORE, done,
				     (void *)(uintptr_t)lane)) {
				fprintf(stderr, "bench-cost: %s\n",
					nvq_errmsg());
				return 1;
			}
		}
		if (n) {
			nvq_queue_kick(q);
			/*
			 * Valgrind runs one thread at a time: let the device
			 * thread take the batch before polling, so polls reap
			 * whole batches and few come back empty. Run-to-run
			 * differences in empty polls are what makes the
			 * estimate of their cost (cost.py) noisy.
			 */
			sched_yield();
		}
		rc = nvq_poll(q, 0);
		if (rc < 0) {
			fprintf(stderr, "bench-cost: %s\n", nvq_errmsg());
			return 1;
		}
		if (!rc) {
			empty++;
			sched_yield(); /* the device thread may need the CPU */
		}
		reaped += (unsigned long)rc;
	}
	/* Empty polls alone: what one costs, for bench/cost.py. */
	for (i = 0; i < extra; i++) {
		if (nvq_poll(q, 0))
			return 1;
		sched_yield();
	}
	printf("ios %lu empty_polls %lu extra_empty %lu errors %lu\n", reaped,
	       empty, extra, errors);
	nvq_dma_free(c, buf);
	nvq_close(c);
	return errors ? 1 : 0;
}
