// SPDX-License-Identifier: MIT
/*
 * Throughput of the emulated controller alone (not a test): one host
 * thread keeps @qd 4 KiB reads in flight on one queue through the raw
 * harness and reports completions per second. lat=0, RAM media.
 *   bench-emu [seconds] [qd] [params]
 */
#include <sched.h>
#include <string.h>

#include "harness.h"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	unsigned int qd = argc > 2 ? (unsigned int)atoi(argv[2]) : 32;
	const char *params = argc > 3 ? argv[3] : "size=64M,idle_spin=1ms";
	struct h *h = h_open(params);
	struct hq *q;
	uint8_t *buf;
	uint64_t t0, done = 0, end;
	unsigned int i, inflight = 0, loops = 0;

	if (qd < 1 || qd > 255)
		qd = 32;
	h_enable(h);
	q = h_ioq(h, 1, 256, false, 0);
	buf = h_alloc(h, 4096 * qd, NULL);
	t0 = h_now();
	end = t0 + (uint64_t)(secs * 1e9);
	for (;;) {
		struct nvq_cqe c;
		unsigned int got = 0;

		while (inflight < qd) {
			struct nvq_sqe s = h_sqe(nvq_cmd_read);

			s.nsid = 1;
			s.cdw10 = (uint32_t)(done + inflight) % 16384;
			s.cid = (uint16_t)(q->sq_tail);
			s.prp1 = h_iova(h, buf + 4096 * (q->sq_tail % qd));
			h_push(h, q, &s);
			inflight++;
		}
		h_ring(h, q);
		while (got < inflight && h_cqe_ready(q)) {
			if (h_reap_noring(q, &c, 1000))
				break;
			got++;
		}
		if (got) {
			h_ring_cq(h, q);
			inflight -= got;
			done += got;
		} else {
			sched_yield(); /* the device may share this CPU */
		}
		if (!(++loops & 0xff) && h_now() >= end)
			break;
	}
	/* Drain. */
	for (i = 0; i < inflight; i++) {
		struct nvq_cqe c;

		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
	}
	printf("%.0f reads/s (qd %u, %s)\n",
	       (double)done * 1e9 / (double)(h_now() - t0), qd, params);
	h_close(h);
	return 0;
}
