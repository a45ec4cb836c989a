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
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvq/nvq.h>

#define QD 32
#define BS 4096

static unsigned int ready[QD], nready;
static unsigned long errors;

static void done(void *arg, const struct nvq_cpl *cpl)
{
	ready[nready++] = (unsigned int)(uintptr_t)arg;
	errors += cpl->err != 0;
}

int main(int argc, char **argv)
{
	const char *uri = "emu:size=64M,idle_spin=10s";
	unsigned long ios = 100000, extra = 0, submitted = 0, reaped = 0;
	unsigned long empty = 0, i;
	struct nvq_queue *q;
	struct nvq_ctrl *c;
	struct nvq_opts o;
	char *buf;
	int a;

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
