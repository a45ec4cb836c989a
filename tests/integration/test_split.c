// SPDX-License-Identifier: MIT
/*
 * Splitting at MDTS: a request of k * MDTS + 1 block becomes k + 1
 * commands (queue stats), completes once, and moves the right data; a
 * request needing more commands than the queue has slots is chained (its
 * commands reuse the slots as they complete) and moves the right data in
 * every mode, with shared and exclusive queues - except an exclusive
 * queue in thread mode, which refuses it with -E2BIG; one needing more
 * than are free is -EAGAIN with nothing submitted.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "check.h"
#include "testutil.h"

static void test_counts(const char *uri, uint32_t mdts_bytes)
{
	struct nvq_ctrl *c = open_or_die(uri, NULL);
	struct nvq_queue *q = nvq_ctrl_queue(c, 0);
	struct nvq_ns_info info;
	struct nvq_queue_stats a, b;
	struct cb_count cnt = { 0 };
	char *w, *rd;
	uint32_t k, per, lbsz;
	int calls = 0;

	CHECK_OK(nvq_ns_info(c, 1, &info));
	CHECK_EQ(nvq_ctrl_max_transfer(c), mdts_bytes);
	CHECK_EQ(info.max_transfer, mdts_bytes);
	lbsz = info.lba_size;
	per = mdts_bytes / lbsz;
	w = nvq_dma_alloc(c, 8 * mdts_bytes, -1);
	rd = nvq_dma_alloc(c, 8 * mdts_bytes, -1);
	CHECK(w && rd);

	for (k = 0; k <= 5; k++) {
		uint32_t nlb = k * per + 1;
		size_t len = (size_t)nlb * lbsz;

		/* Write: k + 1 commands, one callback. */
		fill_pattern(w, len, k + 100);
		nvq_queue_stats(q, &a);
		CHECK_OK(nvq_write(q, 1, w, 7, nlb, 0, count_cb, &cnt));
		nvq_queue_stats(q, &b);
		CHECK_EQ(b.submitted - a.submitted, k + 1);
		reap_until(q, &cnt, ++calls);
		CHECK_EQ(cnt.err, 0);
		nvq_queue_stats(q, &b);
		CHECK_EQ(b.completed - a.completed, k + 1);
		CHECK_EQ(cnt.calls, calls);

		/* Exactly k * MDTS: k commands (1 for k = 0 is nlb 1). */
		if (k) {
			nvq_queue_stats(q, &a);
			CHECK_OK(nvq_read(q, 1, rd, 7, k * per, 0, count_cb,
					  &cnt));
			nvq_queue_stats(q, &b);
			CHECK_EQ(b.submitted - a.submitted, k);
			reap_until(q, &cnt, ++calls);
		}

		/* Read back through a buffer with a PRP1 offset. */
		memset(rd, 0, len + 8);
		nvq_queue_stats(q, &a);
		CHECK_OK(nvq_read(q, 1, rd + 8, 7, nlb, 0, count_cb, &cnt));
		nvq_queue_stats(q, &b);
		CHECK_EQ(b.submitted - a.submitted, k + 1);
		reap_until(q, &cnt, ++calls);
		CHECK_EQ(cnt.err, 0);
		CHECK(!memcmp(rd + 8, w, len));
	}
	CHECK_EQ(cnt.calls, calls);
	nvq_dma_free(c, w);
	nvq_dma_free(c, rd);
	nvq_close(c);
}

static void test_slots(void)
{
	struct nvq_opts o;
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_queue_stats a, b;
	struct cb_count cnt = { 0 }, held = { 0 };
	char *buf;

	/* Depth 4: three command slots. MDTS 1: 8 KiB = 2 blocks. */
	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 4;
	c = open_or_die("emu:size=4M,mdts=1,lat=50ms", &o);
	q = nvq_ctrl_queue(c, 0);
	buf = nvq_dma_alloc(c, 65536, -1);
	CHECK(buf);

	/* Four commands never fit at once: chained, one slot at a time. */
	nvq_queue_stats(q, &a);
	CHECK_OK(nvq_read(q, 1, buf, 0, 7, 0, count_cb, &cnt));
	reap_until(q, &cnt, 1);
	CHECK_EQ(cnt.err, 0);
	nvq_queue_stats(q, &b);
	CHECK_EQ(b.submitted - a.submitted, 4);
	/* Three fit. */
	CHECK_OK(nvq_read(q, 1, buf, 0, 6, 0, count_cb, &cnt));
	reap_until(q, &cnt, 2);

	/* Two slots busy (50 ms device latency keeps them so), then a
	 * request for two more: -EAGAIN and nothing submitted. */
	CHECK_OK(nvq_read(q, 1, buf, 0, 1, 0, count_cb, &held));
	CHECK_OK(nvq_read(q, 1, buf, 1, 1, 0, count_cb, &held));
	nvq_queue_stats(q, &a);
	CHECK_EQ(nvq_read(q, 1, buf, 0, 3, 0, count_cb, &cnt), -EAGAIN);
	nvq_queue_stats(q, &b);
	CHECK_EQ(b.submitted, a.submitted);
	CHECK_EQ(nvq_queue_inflight(q), 2);
	/* One slot is still free for a one-command request. */
	CHECK_OK(nvq_read(q, 1, buf, 2, 2, 0, count_cb, &cnt));
	CHECK_EQ(nvq_read(q, 1, buf, 2, 1, 0, count_cb, &cnt), -EAGAIN);
	reap_until(q, &held, 2);
	reap_until(q, &cnt, 3);
	/* After reaping, the split fits. */
	CHECK_OK(nvq_read(q, 1, buf, 0, 3, 0, count_cb, &cnt));
	reap_until(q, &cnt, 4);
	CHECK_EQ(cnt.err, 0);
	CHECK_EQ(held.err, 0);
	nvq_dma_free(c, buf);
	nvq_close(c);
}

/*
 * 4 MiB at MDTS 4 KiB is 1024 commands on a queue of 31 slots: written,
 * read back, zeroed and read again, each one request, while a second
 * request keeps the queue shared. Verified block by block.
 */
static void test_chained(enum nvq_mode mode, bool excl)
{
	const size_t len = 4u << 20;
	const uint32_t nlb = (uint32_t)(len / 4096);
	struct cb_count w = { 0 }, r = { 0 }, z = { 0 }, small = { 0 };
	struct nvq_ctrl *c;
	struct nvq_queue *q;
	struct nvq_opts o;
	uint8_t *wb, *rb;
	size_t i;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 32;
	o.mode = mode;
	o.exclusive = excl;
	c = open_or_die("emu:size=16M,lbads=12,mdts=1", &o);
	q = nvq_ctrl_queue(c, 0);
	wb = nvq_dma_alloc(c, len, -1);
	rb = nvq_dma_alloc(c, len + 4096, -1);
	CHECK(wb && rb);
	fill_pattern(wb, len, 42 + mode);
	if (excl && mode == NVQ_MODE_THREAD) {
		CHECK_EQ(nvq_write(q, 1, wb, 0, nlb, 0, count_cb, &w), -E2BIG);
		CHECK_MSG("cannot chain");
		goto out;
	}
	CHECK_OK(nvq_write(q, 1, wb, 0, nlb, NVQ_IO_FUA, count_cb, &w));
	CHECK_OK(nvq_read(q, 1, rb + len, nlb, 1, 0, count_cb, &small));
	if (mode == NVQ_MODE_THREAD) {
		while (calls_of(&w) < 1 || calls_of(&small) < 1)
			sched_yield();
	} else {
		reap_until(q, &w, 1);
		reap_until(q, &small, 1);
	}
	CHECK_EQ(w.err, 0);
	CHECK_EQ(small.err, 0);
	CHECK_OK(nvq_read(q, 1, rb, 0, nlb, 0, count_cb, &r));
	if (mode == NVQ_MODE_THREAD)
		while (calls_of(&r) < 1)
			sched_yield();
	else
		reap_until(q, &r, 1);
	CHECK_EQ(r.err, 0);
	CHECK(!memcmp(wb, rb, len));
	CHECK_EQ(calls_of(&w), 1);
	CHECK_EQ(calls_of(&r), 1);

	/* Write Zeroes is sized by MDTS here (no WZSL): chained too. */
	CHECK_OK(nvq_write_zeroes(q, 1, 0, nlb, 0, count_cb, &z));
	if (mode == NVQ_MODE_THREAD)
		while (calls_of(&z) < 1)
			sched_yield();
	else
		reap_until(q, &z, 1);
	CHECK_EQ(z.err, 0);
	CHECK_OK(nvq_read(q, 1, rb, 0, nlb, 0, count_cb, &r));
	if (mode == NVQ_MODE_THREAD)
		while (calls_of(&r) < 2)
			sched_yield();
	else
		reap_until(q, &r, 2);
	for (i = 0; i < len; i++)
		if (rb[i])
			break;
	CHECK_EQ(i, len);
out:
	nvq_dma_free(c, wb);
	nvq_dma_free(c, rb);
	nvq_close(c);
}

/* A chained write that fails part-way fails once, with the status. */
static void test_chained_error(void)
{
	struct cb_count w = { 0 };
	struct nvq_ctrl *c;
	struct nvq_opts o;
	uint8_t *wb;

	nvq_opts_init(&o);
	o.nr_queues = 1;
	o.queue_depth = 8;
	c = open_or_die("emu:size=4M,lbads=12,mdts=1,"
			"fault=status:2/0x80@on=write@nth=40@dnr=1",
			&o);
	wb = nvq_dma_alloc(c, 1u << 20, -1);
	CHECK(wb);
	CHECK_OK(nvq_write(nvq_ctrl_queue(c, 0), 1, wb, 0, 256, 0, count_cb,
			   &w));
	reap_until(nvq_ctrl_queue(c, 0), &w, 1);
	CHECK_EQ(w.err, -EIO);
	CHECK_EQ(w.status & NVQ_STATUS_CODE_MASK,
		 NVQ_SCT_MEDIA << 8 | NVQ_SC_WRITE_FAULT);
	/* Nothing is left behind: every slot is free again. */
	CHECK_EQ(nvq_queue_inflight(nvq_ctrl_queue(c, 0)), 0);
	CHECK_EQ(calls_of(&w), 1);
	nvq_dma_free(c, wb);
	nvq_close(c);
}

int main(void)
{
	test_counts("emu:size=8M,mdts=1", 8192);
	test_counts("emu:size=8M,mdts=2", 16384);
	test_counts("emu:size=8M,mdts=2,lbads=9", 16384);
	test_slots();
	test_chained(NVQ_MODE_POLL, false);
	test_chained(NVQ_MODE_POLL, true);
	test_chained(NVQ_MODE_WAIT, false);
	test_chained(NVQ_MODE_WAIT, true);
	test_chained(NVQ_MODE_THREAD, false);
	test_chained(NVQ_MODE_THREAD, true);
	test_chained_error();
	printf("split: ok\n");
	return 0;
}
