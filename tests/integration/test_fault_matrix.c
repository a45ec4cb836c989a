// SPDX-License-Identifier: MIT
/*
 * The driver against a misbehaving controller: every fault the emulator
 * can inject (docs/faults.md) x completion mode (poll, wait, thread) x
 * shared / exclusive queues, with verified I/O on two queues in flight
 * when the fault strikes. Each cell has a written expectation:
 *   RECOVER  every request succeeds and its data verifies (a reset, where
 *            the cell says so, took the commands back and retried them);
 *   FAIL     the faulted request fails with the cell's errno, every other
 *            request either succeeds with verified data or fails with the
 *            controller's errno, later submissions fail at once, and
 *            nvq_close() works;
 *   STATUS   the faulted request fails with the device's NVMe status, the
 *            rest succeed;
 *   CORRUPT  the device returns wrong data for one read: the request
 *            succeeds (the driver cannot know) and verification here
 *            catches exactly one bad block;
 *   EXHAUST  every read is lost, every time: each is retried by resets
 *            until its retries are used up and fails with -ETIMEDOUT;
 *            the controller still works afterwards.
 * In every cell each callback runs exactly once; no cell may hang (the
 * alarm below) or leak (ASan). Timeouts are short (200 ms); nothing here
 * asserts how long anything took.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ctrl.h" /* NVQ_MAX_RETRIES, the emulator under c */
#include "emu.h"
#include "testutil.h"

#define BLOCKS 64 /* per queue, 4 KiB each */
#define QUEUES 2

enum expect { RECOVER, FAIL, STATUS, CORRUPT, EXHAUST };

struct cell {
	const char *fault; /* emu fault= value; "" none */
	enum expect expect;
	int err; /* FAIL: the faulted request's errno */
	int ctrl_err; /* FAIL: what the rest may get */
	uint16_t status; /* STATUS: SCT << 8 | SC */
	bool reset; /* the controller must have been reset */
	const char *armed; /* a fault armed once the controller is up */
};

static const struct cell cells[] = {
	{ "", RECOVER, 0, 0, 0, false, NULL },
	/*
	 * The CQE never comes: Abort finds nothing, a second timeout, a
	 * reset, and the read is submitted again.
	 */
	{ "drop-cqe@on=read@nth=5", RECOVER, 0, 0, 0, true, NULL },
	/*
	 * Executed, but its completion held back beyond the timeout: Abort
	 * cannot take back what has run, so a second timeout and a reset,
	 * which drops the held completion. (A command the device still
	 * holds is aborted: test_timeout.c.)
	 */
	{ "delay:30s@on=read@nth=5", RECOVER, 0, 0, 0, true, NULL },
	/* A second CQE for a finished command: ignored, counted. */
	{ "dup-cqe@on=read@nth=5", RECOVER, 0, 0, 0, false, NULL },
	/* CQEs that name no command: ignored; the real one never came. */
	{ "bad-cid@on=read@nth=5", RECOVER, 0, 0, 0, true, NULL },
	{ "bad-sqid@on=read@nth=5", RECOVER, 0, 0, 0, true, NULL },
	/* Unrecovered Read Error, as the device says it. */
	{ "status:2/0x81@on=read@nth=5@dnr=1", STATUS, 0, 0,
	  NVQ_SCT_MEDIA << 8 | NVQ_SC_READ_ERROR, false, NULL },
	/* Controller fatal status: a reset brings it back. */
	{ "cfs@on=read@nth=5", RECOVER, 0, 0, 0, true, NULL },
	/* ... unless it does not become ready again: failed for good. */
	{ "cfs@on=read@nth=5", FAIL, -EIO, -EIO, 0, true,
	  "no-ready@count=inf" },
	/* Surprise removal: -ENODEV for good. */
	{ "vanish@on=read@nth=5", FAIL, -ENODEV, -ENODEV, 0, false, NULL },
	/* Every read's MSI-X lost: the watchdog stands in for them. */
	{ "no-irq@on=read@count=inf", RECOVER, 0, 0, 0, false, NULL },
	{ "corrupt@on=read@nth=5", CORRUPT, 0, 0, 0, false, NULL },
	/* Every read lost, every time: retries run out. */
	{ "drop-cqe@on=read@count=inf", EXHAUST, -ETIMEDOUT, 0, 0, true, NULL },
};

struct req {
	struct nvq_queue *q;
	uint64_t lba;
	int calls, err;
	uint16_t status;
};

static void req_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct req *r = arg;

	r->err = cpl->err;
	r->status = cpl->status & NVQ_STATUS_CODE_MASK;
	__atomic_fetch_add(&r->calls, 1, __ATOMIC_RELEASE);
}

static int calls(struct req *r)
{
	return __atomic_load_n(&r->calls, __ATOMIC_ACQUIRE);
}

static void wait_all(struct nvq_queue *q, enum nvq_mode mode, struct req *r,
		     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		while (!calls(&r[i])) {
			if (mode == NVQ_MODE_THREAD)
				usleep(1000);
			else if (mode == NVQ_MODE_WAIT)
				/* Forever: only an interrupt, or the
				 * watchdog standing in for a lost one,
				 * wakes it. */
				CHECK(nvq_wait(q, 1, -1) >= 0);
			else
				CHECK(nvq_wait(q, 1, 100) >= 0);
		}
	}
}

static void run_cell(const struct cell *cell, enum nvq_mode mode, bool excl)
{
	struct req reqs[QUEUES][BLOCKS];
	struct nvq_queue *q[QUEUES];
	struct nvq_ctrl_stats st;
	char uri[256], *buf[QUEUES];
	unsigned int i, k, bad = 0, failed = 0;
	struct nvq_opts o;
	struct nvq_ctrl *c;
	int faulted = 0;

	snprintf(uri, sizeof(uri), "emu:size=4M,lbads=12%s%s",
		 cell->fault[0] ? ",fault=" : "", cell->fault);
	nvq_opts_init(&o);
	o.mode = mode;
	o.nr_queues = QUEUES;
	o.queue_depth = 128;
	o.io_timeout_ms = 200;
	o.exclusive = excl;
	c = open_or_die(uri, &o);
	if (cell->armed)
		CHECK_OK(nvq_emu_fault_inject(nvq_emu_transport_device(c->t),
					      cell->armed));
	memset(reqs, 0, sizeof(reqs));
	for (k = 0; k < QUEUES; k++) {
		q[k] = nvq_ctrl_queue(c, k);
		buf[k] = nvq_dma_alloc(c, BLOCKS * 4096, -1);
		CHECK(buf[k] != NULL);
		/* Writes first: the faults count reads only. */
		for (i = 0; i < BLOCKS; i++) {
			uint64_t lba = k * BLOCKS + i;

			fill_pattern(buf[k] + i * 4096, 4096, lba + 1);
			reqs[k][i].lba = lba;
			CHECK_OK(nvq_write(q[k], 1, buf[k] + i * 4096, lba, 1,
					   0, req_cb, &reqs[k][i]));
		}
		wait_all(q[k], mode, reqs[k], BLOCKS);
		for (i = 0; i < BLOCKS; i++) {
			CHECK_EQ(calls(&reqs[k][i]), 1);
			CHECK_EQ(reqs[k][i].err, 0);
		}
	}
	/* Both queues' reads in flight together. */
	memset(reqs, 0, sizeof(reqs));
	for (k = 0; k < QUEUES; k++) {
		memset(buf[k], 0, BLOCKS * 4096);
		for (i = 0; i < BLOCKS; i++) {
			int rc = nvq_read(q[k], 1, buf[k] + i * 4096,
					  k * BLOCKS + i, 1, 0, req_cb,
					  &reqs[k][i]);

			if (rc) {
				/* Only a controller that already failed. */
				CHECK(cell->expect == FAIL);
				CHECK_EQ(rc, cell->ctrl_err);
				reqs[k][i].calls = 1;
				reqs[k][i].err = rc;
			}
		}
	}
	for (k = 0; k < QUEUES; k++)
		wait_all(q[k], mode, reqs[k], BLOCKS);
	for (k = 0; k < QUEUES; k++) {
		for (i = 0; i < BLOCKS; i++) {
			struct req *r = &reqs[k][i];
			char want[4096];

			CHECK_EQ(calls(r), 1);
			if (r->err) {
				failed++;
				if (cell->expect == EXHAUST) {
					CHECK_EQ(r->err, cell->err);
					faulted++;
					continue;
				}
				if (cell->expect == STATUS) {
					CHECK_EQ(r->err, -EIO);
					CHECK_EQ(r->status, cell->status);
					faulted++;
					continue;
				}
				CHECK(cell->expect == FAIL);
				if (r->err == cell->err)
					faulted++;
				CHECK(r->err == cell->err ||
				      r->err == cell->ctrl_err);
				continue;
			}
			fill_pattern(want, sizeof(want), k * BLOCKS + i + 1);
			if (memcmp(want, buf[k] + i * 4096, sizeof(want)))
				bad++;
		}
	}
	CHECK_OK(nvq_ctrl_stats(c, &st));
	switch (cell->expect) {
	case RECOVER:
		CHECK_EQ(failed, 0);
		CHECK_EQ(bad, 0);
		break;
	case STATUS:
		CHECK_EQ(faulted, 1);
		CHECK_EQ(bad, 0);
		break;
	case CORRUPT:
		CHECK_EQ(failed, 0);
		CHECK_EQ(bad, 1);
		break;
	case EXHAUST:
		CHECK_EQ(faulted, QUEUES * BLOCKS);
		CHECK(st.retries >= NVQ_MAX_RETRIES);
		CHECK_EQ(st.failed, QUEUES * BLOCKS);
		/* The controller itself is fine. */
		CHECK_OK(nvq_write_sync(c, 1, buf[0], 0, 1, NULL));
		break;
	case FAIL:
		CHECK(faulted >= 1);
		CHECK_EQ(bad, 0);
		CHECK(st.failed >= 1);
		CHECK_EQ(st.gone, cell->err == -ENODEV);
		/* Dead for good: new I/O fails at once. */
		CHECK_EQ(nvq_read(q[0], 1, buf[0], 0, 1, 0, req_cb,
				  &reqs[0][0]),
			 cell->ctrl_err);
		break;
	}
	if (strstr(cell->fault, "dup-cqe") || strstr(cell->fault, "bad-"))
		CHECK(st.bad_cqes >= 1);
	/*
	 * no-irq: that no waiter hung (the alarm) is what this cell shows.
	 * Whether the watchdog had to stand in depends on whether the reaper
	 * slept before the CQEs came, which a loaded machine decides; the
	 * counting itself is checked deterministically in test_timeout.c.
	 */
	if (strstr(cell->fault, "delay") || strstr(cell->fault, "drop"))
		CHECK(st.aborts >= 1);
	if (cell->reset) {
		CHECK(st.resets >= 1);
		/* The faulted read, at least, was taken back. */
		if (cell->expect != FAIL)
			CHECK(st.retries >= 1);
	} else {
		CHECK_EQ(st.resets, 0);
	}
	printf("  %-36s %-6s %-4s ok (timeouts %llu, aborts %llu, resets %llu,"
	       " retries %llu, lost irqs %llu, bad CQEs %llu, failed %llu)\n",
	       cell->fault[0] ? cell->fault : "(none)",
	       mode == NVQ_MODE_POLL ? "poll" :
	       mode == NVQ_MODE_WAIT ? "wait" :
				       "thread",
	       excl ? "excl" : "shrd", (unsigned long long)st.timeouts,
	       (unsigned long long)st.aborts, (unsigned long long)st.resets,
	       (unsigned long long)st.retries,
	       (unsigned long long)st.lost_interrupts,
	       (unsigned long long)st.bad_cqes, (unsigned long long)st.failed);
	for (k = 0; k < QUEUES; k++)
		nvq_dma_free(c, buf[k]);
	nvq_close(c);
}

int main(void)
{
	static const enum nvq_mode modes[] = { NVQ_MODE_POLL, NVQ_MODE_WAIT,
					       NVQ_MODE_THREAD };
	unsigned int i, m, x;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A hang is a failure: SIGALRM's default action ends the test. */
	alarm(600);
	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++)
		for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
			for (x = 0; x < 2; x++) {
				/* Six resets' worth of Aborts: two cells
				 * show it, at the ends of the matrix. */
				if (cells[i].expect == EXHAUST &&
				    !(m == 0 && !x) && !(m == 2 && x))
					continue;
				run_cell(&cells[i], modes[m], x);
			}
	printf("fault-matrix: ok\n");
	return T_EXIT_PASS;
}
