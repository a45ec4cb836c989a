// SPDX-License-Identifier: MIT
/*
 * nvq_close() with requests outstanding: the controller is shut down in
 * order and every request's callback runs exactly once, with -ECANCELED
 * when the device did not finish it (aborted by SQ deletion, or never
 * even told about it).
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

#define N 12

struct rec {
	int calls[N];
	int err[N];
	uint16_t status[N];
};

static struct rec rec;

static void rec_cb(void *arg, const struct nvq_cpl *cpl)
{
	int i = (int)(intptr_t)arg;

	__atomic_fetch_add(&rec.calls[i], 1, __ATOMIC_RELAXED);
	rec.err[i] = cpl->err;
	rec.status[i] = cpl->status;
}

static void run(enum nvq_mode mode)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	char *buf;
	int i, cancelled = 0;

	memset(&rec, 0, sizeof(rec));
	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = 1;
	/* Commands take 5 s in the device: still there at close. */
	c = open_or_die("emu:size=4M,lat=5s", &o);
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, N * 4096, -1);
	CHECK(buf);
	for (i = 0; i < N; i++) {
		/* The last few are never rung: the device never sees them. */
		unsigned int flags = i >= N - 3 ? NVQ_IO_MORE : 0;

		CHECK_OK(nvq_write(q, 1, buf + i * 4096, (uint64_t)i, 1, flags,
				   rec_cb, (void *)(intptr_t)i));
	}
	CHECK_EQ(nvq_queue_inflight(q), N);
	nvq_close(c);
	for (i = 0; i < N; i++) {
		CHECK_EQ(rec.calls[i], 1);
		CHECK(rec.err[i] == 0 || rec.err[i] == -ECANCELED);
		if (rec.err[i] == -ECANCELED) {
			/* Never a status that reads as success. */
			CHECK_EQ(NVQ_SC(rec.status[i]), NVQ_SC_ABORT_QUEUE);
			CHECK(!strstr(nvq_status_str(rec.status[i]),
				      "Successful"));
		}
		cancelled += rec.err[i] == -ECANCELED;
	}
	/* At least the ones the device never saw. */
	CHECK(cancelled >= 3);
}

int main(void)
{
	run(NVQ_MODE_POLL);
	run(NVQ_MODE_WAIT);
	run(NVQ_MODE_THREAD);
	printf("close-cancel: ok\n");
	return 0;
}
