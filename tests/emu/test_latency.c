// SPDX-License-Identifier: MIT
/* Media latency: a command's CQE never appears before its latency has
 * passed since it was submitted (a lower bound only). */
#include <string.h>

#include "harness.h"

static uint64_t timed(struct h *h, struct hq *q, uint8_t opcode, uint8_t *b)
{
	uint64_t t0 = h_now();

	CHECK_ST_OK(h_rw(h, q, opcode, 1, 0, 1, b, 4096));
	return h_now() - t0;
}

int main(void)
{
	struct h *h = h_open("lat=2ms");
	struct nvq_sqe s;
	struct nvq_cqe c;
	struct hq *q;
	uint8_t *b;
	uint64_t t0;
	int i;

	h_enable(h);
	q = h_ioq(h, 1, 32, false, 0);
	b = h_alloc(h, 16 * 4096, NULL);
	for (i = 0; i < 5; i++)
		CHECK(timed(h, q, nvq_cmd_read, b) >= 2000000);
	/* Admin commands have no media latency; the queue still works. */
	CHECK_ST_OK(h_identify(h, NVQ_ID_CNS_CTRL, 0, b));
	/* Sixteen in flight: each no earlier than 2 ms after submission. */
	t0 = h_now();
	for (i = 0; i < 16; i++) {
		s = h_sqe(i % 2 ? nvq_cmd_read : nvq_cmd_write);
		s.nsid = 1;
		s.cdw10 = (uint32_t)i;
		h_prp(h, &s, b + 4096 * i, 4096);
		h_push(h, q, &s);
	}
	h_ring(h, q);
	for (i = 0; i < 16; i++) {
		CHECK_EQ(h_reap(h, q, &c, H_TIMEOUT_MS), 0);
		CHECK_ST_OK(NVQ_STATUS(c.status));
		CHECK(h_now() - t0 >= 2000000);
	}
	h_close(h);

	/* Separate read and write latencies. */
	h = h_open("lat=1ms/3ms");
	h_enable(h);
	q = h_ioq(h, 1, 32, false, 0);
	b = h_alloc(h, 4096, NULL);
	for (i = 0; i < 3; i++) {
		CHECK(timed(h, q, nvq_cmd_write, b) >= 3000000);
		CHECK(timed(h, q, nvq_cmd_read, b) >= 1000000);
	}
	h_close(h);
	return 0;
}
