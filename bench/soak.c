// SPDX-License-Identifier: MIT
/*
 * soak: minutes of mixed, verified I/O on the emulated controller while
 * faults (docs/faults.md) are armed at random moments; `make soak`.
 *
 * One worker thread per queue owns a slice of the namespace and keeps
 * requests in flight on its queue: reads, writes, Write Zeroes,
 * Deallocate and Flush, 1 to 16 blocks (MDTS is 32 KiB, so larger ones
 * are split). Every block written is a stamp of (lba, generation)
 * (tests/common/blockstamp.h), and a shadow table knows what each block
 * may hold: one generation (0 = zeroes) after a success, several after a
 * write that failed (old or new content, until the next success). Every
 * read is checked against it; a block that does not verify is read
 * again, and counts as expected corruption when the emulator did fire a
 * corrupt fault for it (the media keeps the right data), as a mismatch
 * otherwise. When a controller fails for good (every submission fails
 * for a while) the workers drain, it is closed and opened again
 * ("reopens"; a RAM namespace starts over as zeroes, a file keeps its
 * data). At the end faults are disarmed and every block is read and
 * checked once more.
 *
 * Exit status: 0; 1 for mismatches, a callback that ran twice or never,
 * or a controller that cannot be opened; 2 for bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvq/nvq.h>

#include "blockstamp.h"

/* The emulator behind a controller, to arm faults on it. */
#include "ctrl.h"
#include "emu.h"
#include "transport.h"

#define BS 4096u
#define MAX_NLB 16u
#define MAXC 4 /* candidate contents remembered per block */
#define MAX_QUEUES 16u
#define MAX_QD 256u
#define SUBMIT_FAILS_DEAD 10 /* consecutive failed submissions, 10 ms apart */
#define DRAIN_MS 10000
#define MAX_REPORTED 10 /* mismatches printed in detail */

enum op { OP_READ, OP_WRITE, OP_ZEROES, OP_DEALLOC, OP_FLUSH, OP_NR };
static const char *const op_name[OP_NR] = { "reads", "writes", "zeroes",
					    "deallocs", "flushes" };

struct config {
	unsigned int seconds, qd, queues, io_timeout_ms;
	uint64_t seed, size;
	enum nvq_mode mode;
	const char *file;
	bool json, faults, self_check;
};

static struct config cfg = {
	.seconds = 60,
	.qd = 16,
	.queues = 2,
	.io_timeout_ms = 200,
	.seed = 1,
	.size = 16u << 20,
	.mode = NVQ_MODE_POLL,
	.faults = true,
};

static uint64_t salt, nblocks;
static bool has_zeroes, has_dealloc;

/* ---- what each block may hold ---- */

struct blk {
	uint64_t next; /* last generation written to it */
	int n; /* candidates; 0: any generation up to @next, or zeroes */
	bool lost; /* found wrong (counted): anything, until a success */
	uint64_t cand[MAXC]; /* 0 = zeroes */
};

static struct blk *shadow;

static void blk_set(struct blk *b, uint64_t g)
{
	b->lost = false;
	b->n = 1;
	b->cand[0] = g;
}

/* A write of @g that failed: it may have landed, or not. */
static void blk_maybe(struct blk *b, uint64_t g)
{
	int i;

	if (!b->n)
		return;
	for (i = 0; i < b->n; i++)
		if (b->cand[i] == g)
			return;
	if (b->n == MAXC)
		b->n = 0;
	else
		b->cand[b->n++] = g;
}

/* May @b hold what blockstamp_check() found (@k, generation @g)? */
static bool blk_allows(const struct blk *b, enum blockstamp_kind k, uint64_t g)
{
	int i;

	if (b->lost)
		return true;
	if (k != BLOCKSTAMP_OK && k != BLOCKSTAMP_ZERO)
		return false;
	if (!b->n)
		return g <= b->next;
	for (i = 0; i < b->n; i++)
		if (b->cand[i] == g)
			return true;
	return false;
}

/* ---- counters ---- */

struct counts {
	uint64_t ios[OP_NR], failed[OP_NR];
	uint64_t verified; /* blocks read and checked */
	uint64_t final_verified; /* ... in the closing pass */
	uint64_t suspects; /* reads with a block that did not verify */
	uint64_t expected_corrupt; /* ... explained by a corrupt fault */
	uint64_t mismatches; /* blocks with content they may not have */
	uint64_t unresolved; /* suspect reads whose re-reads all failed */
};

static struct counts total;
static uint64_t double_cbs, never_cbs, reported, planted;
/* corrupt faults fired (all controllers) and those a re-read explained */
static uint64_t corrupt_fired_before, corrupt_accounted;

static void report_mismatch(uint64_t lba, enum blockstamp_kind k, uint64_t g,
			    const struct blk *b, const char *when)
{
	static const char *const kn[] = { "zeroes", "intact", "torn",
					  "misplaced" };
	char c[128] = "any";
	int i, o = 0;

	if (__atomic_fetch_add(&reported, 1, __ATOMIC_RELAXED) >= MAX_REPORTED)
		return;
	if (b->n)
		for (i = 0, c[0] = 0; i < b->n; i++)
			o += snprintf(c + o, sizeof(c) - (size_t)o,
				      "%s%" PRIu64, i ? "," : "", b->cand[i]);
	fprintf(stderr,
		"soak: MISMATCH (%s) lba %" PRIu64 ": %s generation %" PRIu64
		", expected one of {%s} (last written %" PRIu64 ")\n",
		when, lba, kn[k], g, c, b->next);
}

/* ---- one controller's life ---- */

struct epoch;

enum { R_FREE = 0, R_BUSY, R_DONE };

struct sreq {
	int state; /* R_DONE: set by the callback (release) */
	int calls;
	int err;
	enum op op;
	int rechecks; /* re-reads of a suspect read so far */
	uint64_t lba;
	uint32_t nlb;
	uint64_t gen[MAX_NLB];
	char *buf;
};

struct worker {
	struct epoch *ep;
	unsigned int idx;
	struct nvq_queue *q;
	pthread_t thread;
	uint64_t lo, hi; /* its blocks: [lo, hi) */
	uint64_t rnd;
	struct sreq *req;
	bool *busy; /* per block of [lo, hi) */
	struct counts c;
	int fails; /* consecutive failed submissions */
	uint64_t writes_ok, planted; /* --self-check */
};

struct epoch {
	struct nvq_ctrl *ctrl;
	struct nvq_emu *emu;
	struct worker w[MAX_QUEUES];
	int stop; /* atomic: workers drain and return */
	int dead; /* atomic: errno of a controller that failed for good */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	return blockstamp_mix(z);
}

static void req_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct sreq *r = arg;

	if (__atomic_fetch_add(&r->calls, 1, __ATOMIC_ACQ_REL)) {
		__atomic_fetch_add(&double_cbs, 1, __ATOMIC_RELAXED);
		return;
	}
	r->err = cpl->err;
	__atomic_store_n(&r->state, R_DONE, __ATOMIC_RELEASE);
}

static int submit_req(struct worker *w, struct sreq *r)
{
	struct nvq_queue *q = w->q;

	switch (r->op) {
	case OP_READ:
		return nvq_read(q, 1, r->buf, r->lba, r->nlb, 0, req_cb, r);
	case OP_WRITE:
		return nvq_write(q, 1, r->buf, r->lba, r->nlb, 0, req_cb, r);
	case OP_ZEROES:
		return nvq_write_zeroes(q, 1, r->lba, r->nlb, 0, req_cb, r);
	case OP_DEALLOC:
		return nvq_deallocate(q, 1, r->lba, r->nlb, 0, req_cb, r);
	default:
		return nvq_flush(q, 1, 0, req_cb, r);
	}
}

/* Hand @r (filled in) to the driver; false when it was not taken. */
static bool post(struct worker *w, struct sreq *r)
{
	int rc;

	r->calls = 0;
	r->err = 0;
	__atomic_store_n(&r->state, R_BUSY, __ATOMIC_RELAXED);
	rc = submit_req(w, r);
	if (!rc) {
		w->fails = 0;
		return true;
	}
	__atomic_store_n(&r->state, R_FREE, __ATOMIC_RELAXED);
	if (rc == -EAGAIN)
		return false;
	if (rc == -EINVAL || rc == -ERANGE || rc == -EFAULT || rc == -E2BIG) {
		fprintf(stderr, "soak: %s of %u blocks at %" PRIu64 ": %s\n",
			op_name[r->op], r->nlb, r->lba, nvq_errmsg());
		exit(1);
	}
	/* The controller refuses: resetting, or failed for good. */
	if (++w->fails >= SUBMIT_FAILS_DEAD) {
		int zero = 0;

		__atomic_compare_exchange_n(&w->ep->dead, &zero, rc ? rc : -EIO,
					    false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		usleep(10000);
	}
	return false;
}

static void unlock_range(struct worker *w, const struct sreq *r)
{
	uint32_t i;

	if (r->op == OP_FLUSH)
		return;
	for (i = 0; i < r->nlb; i++)
		w->busy[r->lba + i - w->lo] = false;
}

/* One corrupt fault the emulator fired and nobody has claimed yet? */
static bool claim_corruption(struct epoch *ep)
{
	uint64_t fired = corrupt_fired_before +
			 nvq_emu_fault_count(ep->emu, NVQ_EMU_FAULT_CORRUPT);
	uint64_t a = __atomic_load_n(&corrupt_accounted, __ATOMIC_SEQ_CST);

	do {
		if (a >= fired)
			return false;
	} while (!__atomic_compare_exchange_n(&corrupt_accounted, &a, a + 1,
					      false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	return true;
}

/*
 * Check the blocks a read returned. Returns true when the request is done
 * with (verified, or counted), false when it went out again as a re-read.
 */
static bool check_read(struct worker *w, struct sreq *r)
{
	unsigned int bad = 0;
	uint32_t i;

	for (i = 0; i < r->nlb; i++) {
		uint64_t lba = r->lba + i, g = 0;
		enum blockstamp_kind k;

		k = blockstamp_check(r->buf + (size_t)i * BS, BS, lba, salt,
				     &g);
		if (blk_allows(&shadow[lba], k, g))
			continue;
		bad++;
		if (r->rechecks < 3)
			continue;
		/* Read again and again: the media holds it. */
		w->c.mismatches++;
		report_mismatch(lba, k, g, &shadow[lba], "re-read");
		shadow[lba].lost = true; /* counted once */
	}
	if (!bad) {
		if (r->rechecks) {
			/* Bad once, right when read again. */
			if (claim_corruption(w->ep)) {
				w->c.expected_corrupt++;
			} else {
				w->c.mismatches++;
				fprintf(stderr,
					"soak: MISMATCH read of %u blocks at "
					"%" PRIu64
					" was wrong once, right when "
					"read again; no corrupt fault fired\n",
					r->nlb, r->lba);
			}
		}
		/* What the blocks hold now is known. */
		for (i = 0; i < r->nlb; i++) {
			uint64_t g = 0;

			if (!shadow[r->lba + i].lost)
				blockstamp_check(r->buf + (size_t)i * BS, BS,
						 r->lba + i, salt, &g);
			if (!shadow[r->lba + i].lost)
				blk_set(&shadow[r->lba + i], g);
		}
		w->c.verified += r->nlb;
		return true;
	}
	if (r->rechecks >= 3)
		return true;
	if (!r->rechecks)
		w->c.suspects++;
	r->rechecks++;
	if (post(w, r))
		return false;
	w->c.unresolved++;
	return true;
}

/* The callback of @r ran: update the shadow, verify, free the slot. */
static void finish(struct worker *w, struct sreq *r)
{
	uint32_t i;

	if (r->op == OP_READ && r->rechecks) {
		/* A re-read of a read that did not verify. */
		if (!r->err) {
			if (!check_read(w, r))
				return;
		} else if (r->rechecks < 3 && (r->rechecks++, post(w, r))) {
			return;
		} else {
			w->c.unresolved++;
		}
		unlock_range(w, r);
		__atomic_store_n(&r->state, R_FREE, __ATOMIC_RELAXED);
		return;
	}
	w->c.ios[r->op]++;
	if (r->err)
		w->c.failed[r->op]++;
	switch (r->op) {
	case OP_READ:
		if (!r->err && !check_read(w, r))
			return; /* out again as a re-read */
		break;
	case OP_WRITE:
		for (i = 0; i < r->nlb; i++) {
			if (r->err)
				blk_maybe(&shadow[r->lba + i], r->gen[i]);
			else if (cfg.self_check && r->gen[i] > 1 &&
				 !(++w->writes_ok % 64)) {
				/* --self-check: expect the previous one. */
				w->planted++;
				blk_set(&shadow[r->lba + i], r->gen[i] - 1);
			} else {
				blk_set(&shadow[r->lba + i], r->gen[i]);
			}
		}
		break;
	case OP_ZEROES:
	case OP_DEALLOC:
		for (i = 0; i < r->nlb; i++) {
			if (r->err)
				blk_maybe(&shadow[r->lba + i], 0);
			else
				blk_set(&shadow[r->lba + i], 0);
		}
		break;
	default:
		break;
	}
	unlock_range(w, r);
	__atomic_store_n(&r->state, R_FREE, __ATOMIC_RELAXED);
}

/* Fill @r with a random request on free blocks; false if none found. */
static bool pick(struct worker *w, struct sreq *r)
{
	uint64_t v = rnd_next(&w->rnd), span = w->hi - w->lo;
	unsigned int p = (unsigned int)(v % 100), i;
	uint32_t nlb;
	uint64_t lba;

	if (p < 45)
		r->op = OP_READ;
	else if (p < 85)
		r->op = OP_WRITE;
	else if (p < 92)
		r->op = has_zeroes ? OP_ZEROES : OP_WRITE;
	else if (p < 98)
		r->op = has_dealloc ? OP_DEALLOC : OP_READ;
	else
		r->op = OP_FLUSH;
	r->rechecks = 0;
	r->nlb = 1;
	r->lba = 0;
	if (r->op == OP_FLUSH)
		return true;
	/* Mostly small: 1-4 blocks, sometimes up to MAX_NLB. */
	nlb = (v >> 8) % 4 ? 1 + (uint32_t)((v >> 16) % 4) :
			     1 + (uint32_t)((v >> 16) % MAX_NLB);
	if (nlb > span)
		nlb = (uint32_t)span;
	lba = w->lo + (v >> 24) % (span - nlb + 1);
	for (i = 0; i < nlb; i++)
		if (w->busy[lba + i - w->lo])
			return false;
	r->lba = lba;
	r->nlb = nlb;
	for (i = 0; i < nlb; i++)
		w->busy[lba + i - w->lo] = true;
	if (r->op == OP_WRITE)
		for (i = 0; i < nlb; i++) {
			r->gen[i] = ++shadow[lba + i].next;
			blockstamp_fill(r->buf + (size_t)i * BS, BS, lba + i,
					r->gen[i], salt);
		}
	return true;
}

static unsigned int busy_slots(const struct worker *w)
{
	unsigned int i, n = 0;

	for (i = 0; i < cfg.qd; i++)
		n += __atomic_load_n(&w->req[i].state, __ATOMIC_ACQUIRE) !=
		     R_FREE;
	return n;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoch *ep = w->ep;
	uint64_t drain_until = 0;
	unsigned int i;

	for (;;) {
		bool stop = __atomic_load_n(&ep->stop, __ATOMIC_ACQUIRE) ||
			    __atomic_load_n(&ep->dead, __ATOMIC_ACQUIRE);
		bool progress = false;

		if (cfg.mode == NVQ_MODE_POLL)
			nvq_poll(w->q, 0);
		else if (cfg.mode == NVQ_MODE_WAIT)
			nvq_wait(w->q, 1, 5);
		for (i = 0; i < cfg.qd; i++) {
			struct sreq *r = &w->req[i];

			if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) ==
			    R_DONE) {
				finish(w, r);
				progress = true;
			}
		}
		if (stop) {
			if (!drain_until)
				drain_until = now_ms() + DRAIN_MS;
			if (!busy_slots(w) || now_ms() > drain_until)
				break;
		}
		for (i = 0; i < cfg.qd && !stop; i++) {
			struct sreq *r = &w->req[i];

			if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) !=
				    R_FREE ||
			    !pick(w, r))
				continue;
			if (!post(w, r)) {
				/* A write's generation is just skipped. */
				unlock_range(w, r);
				break;
			}
			progress = true;
		}
		if (!progress && (cfg.mode == NVQ_MODE_THREAD || stop))
			usleep(200);
	}
	return NULL;
}

/* ---- faults ---- */

struct fault_counts {
	uint64_t armed[NVQ_EMU_FAULT_NR], fired[NVQ_EMU_FAULT_NR];
};

static struct fault_counts fc;

/* Draw one fault in the string form of docs/faults.md. */
static enum nvq_emu_fault_kind draw_fault(uint64_t *rnd, char *s, size_t len)
{
	static const char *const on[] = { "io", "read", "write", "io" };
	static const char *const sts[] = { "0/6", "0/0x22", "2/0x80",
					   "2/0x81" };
	uint64_t v = rnd_next(rnd);
	unsigned int p = (unsigned int)(v % 1000);
	unsigned int nth = 1 + (unsigned int)((v >> 10) % 200);
	unsigned int cnt = 1 + (unsigned int)((v >> 20) % 3);
	const char *o = on[(v >> 30) % 4];
	unsigned long long seed = (unsigned long long)(rnd_next(rnd) >> 1);

	if (p < 170) {
		/* Short (a slow command) or beyond the timeout. */
		unsigned int ms =
			(v >> 40) % 3 ? 1 + (unsigned int)((v >> 44) % 50) :
					cfg.io_timeout_ms +
						(unsigned int)((v >> 44) % 400);

		snprintf(s, len, "delay:%ums@on=%s@nth=%u@count=%u", ms, o, nth,
			 cnt);
		return NVQ_EMU_FAULT_DELAY;
	}
	if (p < 360) {
		snprintf(s, len, "status:%s@on=%s@nth=%u@count=%u%s",
			 sts[(v >> 40) % 4], o, nth, cnt,
			 (v >> 50) % 3 ? "" : "@dnr=1");
		return NVQ_EMU_FAULT_STATUS;
	}
	if (p < 500) {
		snprintf(s, len, "dup-cqe@on=%s@prob=2%%@count=%u@seed=%llu", o,
			 cnt * 4, seed);
		return NVQ_EMU_FAULT_DUP_CQE;
	}
	if (p < 620) {
		snprintf(s, len, "corrupt@on=read@nth=%u@count=%u@seed=%llu",
			 nth, cnt, seed);
		return NVQ_EMU_FAULT_CORRUPT;
	}
	if (p < 730) {
		snprintf(s, len, "no-irq@on=%s@nth=%u@count=%u", o, nth,
			 cnt * 8);
		return NVQ_EMU_FAULT_NO_IRQ;
	}
	if (p < 820) {
		snprintf(s, len, "drop-cqe@on=%s@nth=%u", o, nth);
		return NVQ_EMU_FAULT_DROP_CQE;
	}
	if (p < 880) {
		snprintf(s, len, "bad-cid@on=%s@nth=%u", o, nth);
		return NVQ_EMU_FAULT_BAD_CID;
	}
	if (p < 940) {
		snprintf(s, len, "bad-sqid@on=%s@nth=%u", o, nth);
		return NVQ_EMU_FAULT_BAD_SQID;
	}
	if (p < 965) {
		/* Only a controller reset (CC.EN 0 -> 1) meets it. */
		snprintf(s, len, "no-ready");
		return NVQ_EMU_FAULT_NO_READY;
	}
	if (p < 985) {
		snprintf(s, len, "cfs@on=io@nth=%u", nth);
		return NVQ_EMU_FAULT_CFS;
	}
	snprintf(s, len, "vanish@on=io@nth=%u", nth);
	return NVQ_EMU_FAULT_VANISH;
}

static void arm_fault(struct epoch *ep, uint64_t *rnd)
{
	enum nvq_emu_fault_kind k;
	char spec[128];
	int rc;

	k = draw_fault(rnd, spec, sizeof(spec));
	rc = nvq_emu_fault_inject(ep->emu, spec);
	if (rc == -ENOSPC) {
		/* Many armed and not yet met: start afresh. */
		nvq_emu_fault_clear(ep->emu);
		rc = nvq_emu_fault_inject(ep->emu, spec);
	}
	if (rc) {
		fprintf(stderr, "soak: fault '%s': %s\n", spec,
			nvq_emu_errmsg());
		exit(1);
	}
	fc.armed[k]++;
}

/* ---- controllers ---- */

struct recov {
	uint64_t timeouts, aborts, resets, retries, lost_interrupts, bad_cqes;
	uint64_t failed;
};

static struct recov rec;
static uint64_t reopens;

static int open_ctrl(struct epoch *ep)
{
	char uri[PATH_MAX + 128];
	struct nvq_opts o;
	int rc;

	snprintf(uri, sizeof(uri),
		 "emu:size=%" PRIu64 ",lbads=12,mdts=3,to=1,qpairs=%u%s%s",
		 cfg.size, cfg.queues, cfg.file ? ",file=" : "",
		 cfg.file ? cfg.file : "");
	nvq_opts_init(&o);
	o.mode = cfg.mode;
	o.nr_queues = cfg.queues;
	o.queue_depth = 2 * cfg.qd + 8 > 64 ? 2 * cfg.qd + 8 : 64;
	o.io_timeout_ms = cfg.io_timeout_ms;
	o.admin_timeout_ms = 2000;
	memset(ep, 0, sizeof(*ep));
	rc = nvq_open(uri, &o, &ep->ctrl);
	if (rc) {
		fprintf(stderr, "soak: %s: %s\n", uri, nvq_errmsg());
		return rc;
	}
	ep->emu = nvq_emu_transport_device(ep->ctrl->t);
	if (!ep->emu || nvq_ctrl_queue_count(ep->ctrl) < cfg.queues) {
		fprintf(stderr,
			"soak: %s: not an emulated controller with %u "
			"queues\n",
			uri, cfg.queues);
		nvq_close(ep->ctrl);
		return -ENODEV;
	}
	has_zeroes = nvq_ctrl_id(ep->ctrl)->oncs & NVQ_CTRL_ONCS_WRITE_ZEROES;
	has_dealloc = nvq_ctrl_id(ep->ctrl)->oncs & NVQ_CTRL_ONCS_DSM;
	return 0;
}

static int start_workers(struct epoch *ep, uint64_t *rnd)
{
	unsigned int k, i;
	char *mem;

	mem = nvq_dma_alloc(ep->ctrl,
			    (size_t)cfg.queues * cfg.qd * MAX_NLB * BS, -1);
	if (!mem) {
		fprintf(stderr, "soak: %s\n", nvq_errmsg());
		return -ENOMEM;
	}
	for (k = 0; k < cfg.queues; k++) {
		struct worker *w = &ep->w[k];

		w->ep = ep;
		w->idx = k;
		w->q = nvq_ctrl_queue(ep->ctrl, k);
		w->lo = nblocks * k / cfg.queues;
		w->hi = nblocks * (k + 1) / cfg.queues;
		w->rnd = rnd_next(rnd);
		w->req = calloc(cfg.qd, sizeof(*w->req));
		w->busy = calloc(w->hi - w->lo, sizeof(*w->busy));
		if (!w->req || !w->busy) {
			fprintf(stderr, "soak: out of memory\n");
			exit(1);
		}
		for (i = 0; i < cfg.qd; i++)
			w->req[i].buf =
				mem + ((size_t)k * cfg.qd + i) * MAX_NLB * BS;
	}
	for (k = 0; k < cfg.queues; k++)
		if (pthread_create(&ep->w[k].thread, NULL, worker_main,
				   &ep->w[k])) {
			fprintf(stderr, "soak: cannot start a worker\n");
			exit(1);
		}
	return 0;
}

static void add_counts(struct counts *to, const struct counts *c)
{
	unsigned int i;

	for (i = 0; i < OP_NR; i++) {
		to->ios[i] += c->ios[i];
		to->failed[i] += c->failed[i];
	}
	to->verified += c->verified;
	to->final_verified += c->final_verified;
	to->suspects += c->suspects;
	to->expected_corrupt += c->expected_corrupt;
	to->mismatches += c->mismatches;
	to->unresolved += c->unresolved;
}

/*
 * Stop and join the workers. A request still out after the drain (or
 * done but not looked at) may have moved its data or not.
 */
static void stop_workers(struct epoch *ep)
{
	unsigned int k, i, j;

	__atomic_store_n(&ep->stop, 1, __ATOMIC_RELEASE);
	for (k = 0; k < cfg.queues; k++) {
		struct worker *w = &ep->w[k];

		pthread_join(w->thread, NULL);
		for (i = 0; i < cfg.qd; i++) {
			struct sreq *r = &w->req[i];

			if (r->state == R_FREE || r->op == OP_READ ||
			    r->op == OP_FLUSH)
				continue;
			for (j = 0; j < r->nlb; j++)
				blk_maybe(&shadow[r->lba + j],
					  r->op == OP_WRITE ? r->gen[j] : 0);
		}
	}
}

/*
 * Close the controller after collecting its counters; then every callback
 * must have run (nvq_close() cancels what the device did not finish).
 */
static void close_epoch(struct epoch *ep)
{
	struct nvq_ctrl_stats st;
	unsigned int k, i;

	if (!nvq_ctrl_stats(ep->ctrl, &st)) {
		rec.timeouts += st.timeouts;
		rec.aborts += st.aborts;
		rec.resets += st.resets;
		rec.retries += st.retries;
		rec.lost_interrupts += st.lost_interrupts;
		rec.bad_cqes += st.bad_cqes;
		rec.failed += st.failed;
	}
	for (k = 0; k < NVQ_EMU_FAULT_NR; k++)
		fc.fired[k] += nvq_emu_fault_count(ep->emu, k);
	corrupt_fired_before +=
		nvq_emu_fault_count(ep->emu, NVQ_EMU_FAULT_CORRUPT);
	nvq_close(ep->ctrl);
	ep->ctrl = NULL;
	for (k = 0; k < cfg.queues; k++) {
		struct worker *w = &ep->w[k];

		if (!w->req) /* no workers ran on it */
			continue;
		for (i = 0; i < cfg.qd; i++)
			if (w->req[i].state != R_FREE &&
			    !__atomic_load_n(&w->req[i].calls,
					     __ATOMIC_ACQUIRE))
				never_cbs++;
		add_counts(&total, &w->c);
		planted += w->planted;
		free(w->req);
		free(w->busy);
	}
}

/*
 * Every block, read with faults disarmed, against the shadow. Returns 0,
 * or the error of a read that failed (the controller, then, did).
 */
static int final_pass(struct nvq_ctrl *c)
{
	char *buf = malloc(64 * BS);
	uint64_t lba, i;

	if (!buf)
		exit(1);
	for (lba = 0; lba < nblocks; lba += 64) {
		uint32_t n = nblocks - lba < 64 ? (uint32_t)(nblocks - lba) :
						  64;
		int rc = nvq_read_sync(c, 1, buf, lba, n, NULL);

		if (rc) {
			free(buf);
			return rc;
		}
		for (i = 0; i < n; i++) {
			enum blockstamp_kind k;
			uint64_t g = 0;

			k = blockstamp_check(buf + i * BS, BS, lba + i, salt,
					     &g);
			if (blk_allows(&shadow[lba + i], k, g)) {
				total.final_verified++;
				continue;
			}
			total.mismatches++;
			report_mismatch(lba + i, k, g, &shadow[lba + i],
					"final pass");
		}
	}
	free(buf);
	return 0;
}

static void reset_shadow(void)
{
	uint64_t i;

	for (i = 0; i < nblocks; i++)
		blk_set(&shadow[i], 0);
}

/* Close a controller that failed for good and open it again. */
static int reopen(struct epoch *ep)
{
	if (!cfg.json)
		printf("  controller failed (%s): closed, opened again\n",
		       ep->dead ? strerror(-ep->dead) : "final pass");
	close_epoch(ep);
	reopens++;
	if (!cfg.file)
		reset_shadow(); /* new RAM */
	return open_ctrl(ep) ? -1 : 0;
}

/* ---- the report ---- */

static const char *mode_str(enum nvq_mode m)
{
	return m == NVQ_MODE_POLL ? "poll" :
	       m == NVQ_MODE_WAIT ? "wait" :
				    "thread";
}

static uint64_t sum_ops(const uint64_t *v)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < OP_NR; i++)
		s += v[i];
	return s;
}

static void print_text(double secs)
{
	unsigned int i;

	printf("soak: %.1f s, seed %" PRIu64 ", %u queues x qd %u, mode %s, "
	       "%s %" PRIu64 " MiB\n",
	       secs, cfg.seed, cfg.queues, cfg.qd, mode_str(cfg.mode),
	       cfg.file ? cfg.file : "RAM", cfg.size >> 20);
	printf("  ios                %" PRIu64 " (", sum_ops(total.ios));
	for (i = 0; i < OP_NR; i++)
		printf("%s%s %" PRIu64, i ? ", " : "", op_name[i],
		       total.ios[i]);
	printf("), failed %" PRIu64 "\n", sum_ops(total.failed));
	printf("  verified blocks    %" PRIu64 " during the run, %" PRIu64
	       " in the final pass\n",
	       total.verified, total.final_verified);
	printf("  faults armed/fired");
	for (i = 0; i < NVQ_EMU_FAULT_NR; i++)
		if (fc.armed[i] || fc.fired[i])
			printf(" %s %" PRIu64 "/%" PRIu64,
			       nvq_emu_fault_name(i), fc.armed[i], fc.fired[i]);
	printf("\n");
	printf("  recoveries         timeouts %" PRIu64 ", aborts %" PRIu64
	       ", resets %" PRIu64 ", retries %" PRIu64
	       ", lost_interrupts %" PRIu64 ", bad_cqes %" PRIu64
	       ", failed %" PRIu64 "\n",
	       rec.timeouts, rec.aborts, rec.resets, rec.retries,
	       rec.lost_interrupts, rec.bad_cqes, rec.failed);
	printf("  reopens            %" PRIu64 "\n", reopens);
	printf("  expected corruption %" PRIu64 " reads (re-read right, "
	       "corrupt fired %" PRIu64 "), unresolved %" PRIu64 "\n",
	       total.expected_corrupt, fc.fired[NVQ_EMU_FAULT_CORRUPT],
	       total.unresolved);
	printf("  callbacks          twice %" PRIu64 ", never %" PRIu64 "\n",
	       double_cbs, never_cbs);
	printf("  mismatches         %" PRIu64 "\n", total.mismatches);
}

/* @s as a JSON string (NULL: null). */
static void json_str(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_json(double secs)
{
	unsigned int i;

	printf("{\"seconds\": %.1f, \"seed\": %" PRIu64 ", \"queues\": %u, "
	       "\"qd\": %u, \"mode\": \"%s\", \"file\": ",
	       secs, cfg.seed, cfg.queues, cfg.qd, mode_str(cfg.mode));
	json_str(cfg.file);
	printf(", \"size\": %" PRIu64 ",\n", cfg.size);
	printf(" \"ios\": %" PRIu64 ", ", sum_ops(total.ios));
	for (i = 0; i < OP_NR; i++)
		printf("\"%s\": %" PRIu64 ", ", op_name[i], total.ios[i]);
	printf("\"failed\": %" PRIu64 ",\n", sum_ops(total.failed));
	printf(" \"verified_blocks\": %" PRIu64
	       ", \"final_verified_blocks\": %" PRIu64 ",\n",
	       total.verified, total.final_verified);
	printf(" \"faults_armed\": {");
	for (i = 0; i < NVQ_EMU_FAULT_NR; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "",
		       nvq_emu_fault_name(i), fc.armed[i]);
	printf("},\n \"faults_fired\": {");
	for (i = 0; i < NVQ_EMU_FAULT_NR; i++)
		printf("%s\"%s\": %" PRIu64, i ? ", " : "",
		       nvq_emu_fault_name(i), fc.fired[i]);
	printf("},\n");
	printf(" \"recoveries\": {\"timeouts\": %" PRIu64
	       ", \"aborts\": %" PRIu64 ", \"resets\": %" PRIu64
	       ", \"retries\": %" PRIu64 ", \"lost_interrupts\": %" PRIu64
	       ", \"bad_cqes\": %" PRIu64 ", \"failed\": %" PRIu64 "},\n",
	       rec.timeouts, rec.aborts, rec.resets, rec.retries,
	       rec.lost_interrupts, rec.bad_cqes, rec.failed);
	printf(" \"reopens\": %" PRIu64 ", \"expected_corruption\": %" PRIu64
	       ", \"unresolved\": %" PRIu64 ", \"callbacks_twice\": %" PRIu64
	       ", \"callbacks_never\": %" PRIu64 ", \"mismatches\": %" PRIu64
	       "}\n",
	       reopens, total.expected_corrupt, total.unresolved, double_cbs,
	       never_cbs, total.mismatches);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: soak [options]\n"
		"Mixed verified I/O (reads, writes, Write Zeroes, Deallocate, "
		"Flush) on the\n"
		"emulated controller while faults are armed at random "
		"moments (docs/faults.md).\n"
		"\n"
		"  --seconds N        run time (default 60)\n"
		"  --seed N           seed of the I/O and of the faults "
		"(default 1)\n"
		"  --qd N             requests in flight per queue, 1..%u "
		"(default 16)\n"
		"  --queues N         I/O queues, one worker thread each, "
		"1..%u (default 2)\n"
		"  --mode M           poll, wait or thread (default poll)\n"
		"  --file PATH        file-backed namespace at PATH (created; "
		"its content is\n"
		"                     overwritten); default: RAM\n"
		"  --size BYTES       namespace size, K/M/G suffix (default "
		"16M)\n"
		"  --io-timeout-ms N  I/O timeout (default 200)\n"
		"  --no-faults        arm no faults\n"
		"  --self-check       expect a stale generation for one block "
		"write in 64:\n"
		"                     succeeds only if mismatches are found\n"
		"  --json             print the result as one JSON object\n"
		"  --help             this text\n"
		"\n"
		"Prints I/Os done, blocks verified, faults armed and fired per "
		"kind, the\n"
		"recovery counters of nvq_ctrl_stats(), reopens, expected "
		"corruption and\n"
		"mismatches. Exit status 1 when a block held content it may "
		"not hold, a\n"
		"callback ran twice or never, or a controller could not be "
		"opened; 2 for\n"
		"bad usage.\n",
		MAX_QD, MAX_QUEUES);
}

static unsigned long long num(const char *opt, const char *v, bool suffix)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 0);
	if (suffix && end != v) {
		int sh = *end == 'K' || *end == 'k' ? 10 :
			 *end == 'M' || *end == 'm' ? 20 :
			 *end == 'G' || *end == 'g' ? 30 :
						      0;

		if (sh) {
			n <<= sh;
			end++;
		}
	}
	if (errno || end == v || *end || *v == '-') {
		fprintf(stderr, "soak: %s: '%s' is not a number\n", opt, v);
		exit(2);
	}
	return n;
}

static void parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "qd", required_argument, NULL, 'q' },
		{ "queues", required_argument, NULL, 'Q' },
		{ "mode", required_argument, NULL, 'm' },
		{ "file", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 'z' },
		{ "io-timeout-ms", required_argument, NULL, 't' },
		{ "no-faults", no_argument, NULL, 'n' },
		{ "self-check", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.seconds =
				(unsigned int)num("--seconds", optarg, false);
			break;
		case 'S':
			cfg.seed = num("--seed", optarg, false);
			break;
		case 'q':
			cfg.qd = (unsigned int)num("--qd", optarg, false);
			break;
		case 'Q':
			cfg.queues =
				(unsigned int)num("--queues", optarg, false);
			break;
		case 'm':
			if (!strcmp(optarg, "poll"))
				cfg.mode = NVQ_MODE_POLL;
			else if (!strcmp(optarg, "wait"))
				cfg.mode = NVQ_MODE_WAIT;
			else if (!strcmp(optarg, "thread"))
				cfg.mode = NVQ_MODE_THREAD;
			else {
				fprintf(stderr,
					"soak: --mode: '%s' is not poll, wait "
					"or thread\n",
					optarg);
				exit(2);
			}
			break;
		case 'f':
			cfg.file = optarg;
			break;
		case 'z':
			cfg.size = num("--size", optarg, true);
			break;
		case 't':
			cfg.io_timeout_ms = (unsigned int)num("--io-timeout-ms",
							      optarg, false);
			break;
		case 'n':
			cfg.faults = false;
			break;
		case 'c':
			cfg.self_check = true;
			break;
		case 'j':
			cfg.json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "soak: unexpected argument '%s'\n",
			argv[optind]);
		exit(2);
	}
	if (!cfg.qd || cfg.qd > MAX_QD || !cfg.queues ||
	    cfg.queues > MAX_QUEUES) {
		fprintf(stderr, "soak: --qd is 1..%u, --queues 1..%u\n", MAX_QD,
			MAX_QUEUES);
		exit(2);
	}
	if (cfg.size % BS || cfg.size / BS < cfg.queues * MAX_NLB) {
		fprintf(stderr,
			"soak: --size must be a multiple of 4 KiB and at least "
			"%u KiB\n",
			cfg.queues * MAX_NLB * BS / 1024);
		exit(2);
	}
	if (!cfg.io_timeout_ms || cfg.io_timeout_ms > NVQ_TIMEOUT_MS_MAX) {
		fprintf(stderr, "soak: --io-timeout-ms is 1..%u\n",
			NVQ_TIMEOUT_MS_MAX);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	uint64_t start, end, rnd, t;
	unsigned int passes = 0;
	struct epoch ep;
	bool fail;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rnd = cfg.seed;
	salt = blockstamp_mix(cfg.seed ^ 0x736f616bull);
	nblocks = cfg.size / BS;
	shadow = calloc(nblocks, sizeof(*shadow));
	if (!shadow) {
		fprintf(stderr, "soak: out of memory\n");
		return 1;
	}
	reset_shadow();
	if (open_ctrl(&ep))
		return 1;
	/* A file may hold anything: start from zeroes. */
	if (cfg.file && nvq_write_zeroes_sync(ep.ctrl, 1, 0, nblocks, NULL)) {
		fprintf(stderr, "soak: zeroing %s: %s\n", cfg.file,
			nvq_errmsg());
		return 1;
	}
	start = now_ms();
	end = start + (uint64_t)cfg.seconds * 1000;
	for (;;) {
		int dead = 0;

		if (start_workers(&ep, &rnd))
			return 1;
		while ((t = now_ms()) < end) {
			uint64_t next = t + 10 + rnd_next(&rnd) % 300;

			while ((t = now_ms()) < next && t < end &&
			       !(dead = __atomic_load_n(&ep.dead,
							__ATOMIC_ACQUIRE)))
				usleep(5000);
			if (dead || t >= end)
				break;
			if (cfg.faults)
				arm_fault(&ep, &rnd);
		}
		if (!dead)
			/* The end: nothing new fires while the rest drains. */
			nvq_emu_fault_clear(ep.emu);
		stop_workers(&ep);
		if (!dead && !ep.dead)
			break;
		if (reopen(&ep))
			return 1;
	}
	/* Every block once more; a controller that failed at the very end
	 * is opened again first (a RAM namespace then holds zeroes). */
	while (final_pass(ep.ctrl)) {
		if (passes++ == 3) {
			fprintf(stderr, "soak: final pass: %s\n", nvq_errmsg());
			return 1;
		}
		if (reopen(&ep))
			return 1;
	}
	close_epoch(&ep);
	if (cfg.json)
		print_json((double)(now_ms() - start) / 1000);
	else
		print_text((double)(now_ms() - start) / 1000);
	fail = total.mismatches || double_cbs || never_cbs;
	if (cfg.self_check) {
		/* The checker must catch what was planted, and only that. */
		printf("soak: self-check: %" PRIu64 " stale expectations "
		       "planted, %" PRIu64 " mismatches found\n",
		       planted, total.mismatches);
		fail = !total.mismatches || total.mismatches > planted ||
		       double_cbs || never_cbs;
	}
	if (!cfg.json)
		printf("soak: %s\n", fail ? "FAILED" : "ok");
	free(shadow);
	return fail ? 1 : 0;
}
