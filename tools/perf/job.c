/* SPDX-License-Identifier: MIT */
/* The per-thread I/O engine; the model is described in job.h. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devtime.h"
#include "job.h"
#include "verify.h"

/*
 * Longest sleep in nvq_wait() (--mode wait) before a look at sh->abandon:
 * a device that stopped answering must not keep the run going.
 */
#define WAIT_SLICE_MS 20
#define WAIT_SLICE_NS (WAIT_SLICE_MS * 1000000ull)

/*
 * The job whose thread this is; NULL on the library's completion threads.
 * With --shared-queue a job thread's nvq_poll() / nvq_wait() also runs
 * other jobs' callbacks: it finishes those lanes itself, records into its
 * own context and resubmits them from its own ready list (a lane has one
 * owner at a time, handed over by its reference count).
 */
static __thread struct perf_job *this_job;

/* Seeds: splitmix64 spreads neighbouring seeds apart. */
static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Each lane's draws: wyrand (Wang Yi, wyhash's generator; passes
 * BigCrush and PractRand) is a Weyl sequence and one 64x64->128 multiply,
 * a third of splitmix64's instructions on the hot path.
 */
static inline uint64_t lane_rand(uint64_t *s)
{
	unsigned __int128 m;

	*s += 0xa0761d6478bd642full;
	m = (unsigned __int128)*s * (*s ^ 0xe7037ed1a0b428dbull);
	return (uint64_t)(m >> 64) ^ (uint64_t)m;
}

/* Uniform in [0, n) without division (Lemire's multiply-shift). */
static uint64_t bounded(uint64_t r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)r * n) >> 64);
}

static bool stopped(const struct perf_job *j)
{
	return atomic_load_explicit(&j->sh->stop, memory_order_relaxed);
}

static bool abandoned(const struct perf_job *j)
{
	return atomic_load_explicit(&j->sh->abandon, memory_order_relaxed);
}

static void set_stop(struct perf_job *j)
{
	atomic_store_explicit(&j->sh->stop, true, memory_order_relaxed);
}

/* --think-time or --rate-iops in this phase. */
static bool paced(const struct perf_job *j)
{
	const struct perf_phase *ph = j->sh->phase;

	return ph->think_ns || ph->rate_ns;
}

/*
 * The job's next --rate-iops slot at or after @earliest. A slot missed is
 * not made up for later: the rate is a ceiling, never a burst.
 */
static uint64_t rate_slot(struct perf_job *j, uint64_t earliest,
			  uint64_t spacing)
{
	uint_fast64_t cur =
		atomic_load_explicit(&j->rate_next, memory_order_relaxed);
	uint64_t slot;

	do {
		slot = cur > earliest ? cur : earliest;
	} while (!atomic_compare_exchange_weak_explicit(
		&j->rate_next, &cur, slot + spacing, memory_order_relaxed,
		memory_order_relaxed));
	return slot;
}

/* The delayed heap: a binary min-heap on perf_lane.due. */
static void delay_push(struct perf_job *j, struct perf_lane *l)
{
	unsigned int i = j->nr_delayed++;

	while (i) {
		unsigned int p = (i - 1) / 2;

		if (j->delayed[p]->due <= l->due)
			break;
		j->delayed[i] = j->delayed[p];
		i = p;
	}
	j->delayed[i] = l;
}

static struct perf_lane *delay_pop(struct perf_job *j)
{
	struct perf_lane *top = j->delayed[0];
	struct perf_lane *last = j->delayed[--j->nr_delayed];
	unsigned int i = 0, n = j->nr_delayed;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && j->delayed[c + 1]->due < j->delayed[c]->due)
			c++;
		if (last->due <= j->delayed[c]->due)
			break;
		j->delayed[i] = j->delayed[c];
		i = c;
	}
	if (n)
		j->delayed[i] = last;
	return top;
}

/* Sleep until monotonic time @until (ns). */
static void sleep_until(uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000ull),
			       (long)(until % 1000000000ull) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* The reference tag of an I/O at @slba: the LBA's for PI types 1 and 2
 * (type 1 requires it), none for type 3, as fio sets them. */
static inline uint32_t lane_reftag(const struct perf_target *t, uint64_t slba)
{
	return t->pi_type && t->pi_type != 3 ? (uint32_t)slba : 0;
}

/*
 * --verify's random offsets come from the job's random map (each block of
 * its slice once per pass), and its read-back replays them in the same
 * way. Other random phases draw each offset independently, as fio's
 * norandommap does, at a third of the cost.
 */
static bool mapped(const struct perf_phase *ph)
{
	return ph->random && (ph->verify_fill || ph->verify_check);
}

/* A phase that writes --verify blocks, whose I/O must not overlap. */
static bool guarded(const struct perf_phase *ph)
{
	return ph->verify_fill && ph->read_pct < 100;
}

/*
 * Claim bs block @block for lane @l unless another lane of @j has it: an
 * I/O to a block that a write in flight also goes to reads, or leaves
 * there, either write or a mix of them (QEMU writes a block's data and
 * its PI in two steps, so concurrent writes leave one's data with the
 * other's PI, and the guard check fails). The lanes may choose in
 * several threads at once (thread mode, --shared-queue): under the lock.
 */
static bool verify_claim(struct perf_job *j, struct perf_lane *l,
			 uint64_t block)
{
	unsigned int i;
	bool busy = false;

	pthread_mutex_lock(&j->vlock);
	for (i = 0; i < j->nr_lanes && !busy; i++)
		busy = &j->lanes[i] != l &&
		       atomic_load_explicit(&j->lanes[i].vblk,
					    memory_order_acquire) == block;
	if (!busy)
		atomic_store_explicit(&l->vblk, block, memory_order_relaxed);
	pthread_mutex_unlock(&j->vlock);
	return !busy;
}

/*
 * The next block of the job's slice in order (sequential), or in its
 * random map (mapped()), into *@block; false when the phase's share of
 * them is done. In a guarded() phase a block that another lane has in
 * flight is passed over: that happens only after the first pass (within a
 * pass each block comes once), where the block was written already, and
 * some block is always free since no more lanes run than the slice has
 * blocks (perf_job_main()).
 */
static bool next_block(struct perf_job *j, struct perf_lane *l,
		       const struct perf_phase *ph, uint64_t *block)
{
	for (;;) {
		uint64_t c = atomic_fetch_add_explicit(&j->cursor, 1,
						       memory_order_relaxed);
		uint64_t b;

		if (j->cursor_limited && c >= j->cursor_end)
			return false;
		if (mapped(ph))
			b = perf_randmap_at(&j->map, c / j->slice_len,
					    c % j->slice_len);
		else
			b = c % j->slice_len;
		*block = j->slice_start + b;
		if (!guarded(ph) || verify_claim(j, l, *block))
			return true;
	}
}

/*
 * Choose lane @l's next I/O, to be submitted no earlier than @now (its
 * think time included) nor the job's next rate slot; that time goes into
 * l->due. False when the phase is over for the lane.
 */
static bool lane_next_full(struct perf_job *j, struct perf_lane *l,
			   uint64_t now)
{
	const struct perf_phase *ph = j->sh->phase;
	const struct perf_target *t = j->sh->tgt;
	uint64_t block, limit;
	bool measured, write;

	/* the lane's previous I/O is over: its block is free */
	atomic_store_explicit(&l->vblk, PERF_NO_BLOCK, memory_order_release);
	if (stopped(j))
		return false;
	if (ph->rate_ns)
		now = rate_slot(j, now, ph->rate_ns);
	if (ph->deadline && now >= ph->deadline)
		return false;
	l->due = now;
	measured = ph->record && now >= ph->ramp_end;
	limit = ph->one_pass ? j->slice_len : ph->ios;
	if (limit && (measured || !ph->record) &&
	    atomic_fetch_add_explicit(&j->claimed, 1, memory_order_relaxed) >=
		    limit)
		return false;
	if (ph->random && !mapped(ph)) {
		block = bounded(lane_rand(&l->rng), t->region_blocks);
	} else if (!next_block(j, l, ph, &block)) {
		return false;
	}
	if (ph->read_pct >= 100)
		write = false;
	else if (!ph->read_pct)
		write = true;
	else
		write = lane_rand(&l->rng) % 100 >= ph->read_pct;
	l->slba = t->region_lba + block * t->nlb;
	__atomic_store_n(&l->write, write, __ATOMIC_RELAXED);
	l->measured = measured;
	if (write && ph->verify_fill) {
		uint64_t seq = ((uint64_t)j->index << 48) |
			       atomic_fetch_add_explicit(&j->wseq, 1,
							 memory_order_relaxed);

		perf_verify_fill(l->buf, t->blk, t->nlb, l->slba, seq,
				 t->run_id);
	}
	/*
	 * --pi-act 0: the PI of what is written, computed here as fio does
	 * in its prep, before the submission's clock starts. It fails only
	 * for a namespace nvq no longer drives: the submission reports it.
	 */
	if (write && t->host_pi)
		l->err = nvq_pi_generate(t->ctrl, t->nsid, l->buf, l->md,
					 t->nlb, lane_reftag(t, l->slba),
					 t->apptag);
	return true;
}

/*
 * lane_next_full() for a plain phase (j->plain: random offsets, one
 * direction, every I/O measured, no pacing, no verify, no replay): only
 * what such a phase needs. l->write and l->measured are the phase's,
 * set by perf_job_rearm().
 */
static inline __attribute__((always_inline)) bool
lane_next_plain(struct perf_job *j, struct perf_lane *l, uint64_t now,
		uint64_t limit)
{
	/* A stop (sh->stop) retires the lane in submit_ready(). */
	if (now >= j->deadline)
		return false;
	if (limit && atomic_fetch_add_explicit(&j->claimed, 1,
					       memory_order_relaxed) >= limit)
		return false;
	l->slba = j->region_lba +
		  bounded(lane_rand(&l->rng), j->region_blocks) * j->nlb;
	return true;
}

/*
 * finish_reaped()'s hot path: the reaped lanes of a plain phase on the
 * job's own queue (all @j's), their completions seen at @t2, before the
 * deadline. Per I/O: one histogram (clat), exact slat and lat, and every
 * PERF_DEVTIME_EVERY-th the emulator's stamps. @limited: --ios, a
 * constant where it is inlined. Returns the ready list, @ready behind.
 */
static inline __attribute__((always_inline)) struct perf_lane *
finish_plain(struct perf_job *j, struct perf_lane *l, struct perf_lane *ready,
	     uint64_t t2, const bool limited);

static inline __attribute__((always_inline)) bool
lane_next(struct perf_job *j, struct perf_lane *l, uint64_t now)
{
	if (__builtin_expect(!j->plain, 0))
		return lane_next_full(j, l, now);
	return lane_next_plain(j, l, now, j->limit);
}

static void retire(struct perf_job *j)
{
	if (atomic_fetch_sub_explicit(&j->active, 1, memory_order_acq_rel) ==
		    1 &&
	    j->threaded) {
		pthread_mutex_lock(&j->lock);
		pthread_cond_signal(&j->cond);
		pthread_mutex_unlock(&j->lock);
	}
}

static void record_error(struct perf_job *j, struct perf_job_ctx *ctx,
			 const char *fmt_what, const struct perf_lane *l,
			 int err, const char *why)
{
	ctx->io_errors++;
	if (!ctx->first_errno)
		ctx->first_errno = err < 0 ? -err : EIO;
	if (!ctx->errmsg[0])
		snprintf(ctx->errmsg, sizeof(ctx->errmsg),
			 "%s%s%s of %u blocks at LBA %llu (thread %u): %s",
			 fmt_what, *fmt_what ? " " : "",
			 l->write ? "write" : "read", j->sh->tgt->nlb,
			 (unsigned long long)l->slba, j->index, why);
	set_stop(j);
}

/*
 * The emulator's stamps of one I/O in PERF_DEVTIME_EVERY: device time and
 * host overhead (devtime.h).
 */
static void sample_devtime(const struct perf_job *j, const struct perf_lane *l,
			   struct perf_job_ctx *ctx, struct perf_dir_stats *d,
			   uint64_t t2)
{
	uint64_t host, dev;

	ctx->stamp_left = PERF_DEVTIME_EVERY;
	if (!j->sh->tgt->stamped)
		return;
	if (perf_devtime_split(l->t0, l->t1, t2, l->dw1, &host, &dev)) {
		perf_hist_add(&d->host, host);
		perf_hist_add(&d->dev, dev);
	} else {
		d->bad_stamps++;
	}
}

/*
 * The CPU of one completion in PERF_CPU_EVERY, counting for all of them:
 * where completions run, the CPU whose idle states matter.
 */
static void sample_cpu(struct perf_job_ctx *ctx)
{
	int cpu = sched_getcpu();

	ctx->cpu_left = PERF_CPU_EVERY;
	if ((unsigned int)cpu < PERF_CPL_CPUS)
		ctx->cpl_cpu[cpu] += PERF_CPU_EVERY;
}

/* --verify: check what lane @l read. */
static void verify_read(const struct perf_job *j, const struct perf_lane *l,
			struct perf_job_ctx *ctx)
{
	const struct perf_target *t = j->sh->tgt;
	struct perf_vfail f;
	unsigned int bad;

	bad = perf_verify_check(l->buf, t->blk, t->nlb, l->slba,
				j->sh->phase->check_run_id, &f);
	ctx->verify_blocks += t->nlb;
	if (bad) {
		ctx->verify_bad += bad;
		if (ctx->nr_vfail < PERF_MAX_VFAIL)
			ctx->vfail[ctx->nr_vfail++] = f;
	}
}

/*
 * --pi-verify: check the PI lane @l read as the controller does, for the
 * --pi-chk fields. A mismatch is an I/O error of the run (it stops).
 */
static bool pi_check_read(struct perf_job *j, const struct perf_lane *l,
			  struct perf_job_ctx *ctx)
{
	const struct perf_target *t = j->sh->tgt;
	char why[160];
	uint32_t bad = 0;
	int st;

	st = nvq_pi_verify(t->ctrl, t->nsid, l->buf, l->md, t->nlb,
			   lane_reftag(t, l->slba), t->apptag, t->appmask,
			   t->io_flags & NVQ_IO_PRCHK_ALL, &bad);
	if (!st)
		return true;
	if (st > 0)
		snprintf(why, sizeof(why), "block %u (LBA %llu): %s", bad,
			 (unsigned long long)(l->slba + bad),
			 nvq_status_str((uint16_t)st));
	else
		snprintf(why, sizeof(why), "%s", nvq_errmsg());
	record_error(j, ctx, "host PI check of a", l, st > 0 ? -EIO : st, why);
	return false;
}

/*
 * Account the finished I/O of lane @l in @ctx, its completion seen at
 * @t2, and choose its next one. Returns true when the lane has a new I/O
 * to submit. The hot path: one histogram (clat), exact slat and lat.
 */
static bool finish_io(struct perf_job *j, struct perf_lane *l,
		      struct perf_job_ctx *ctx, uint64_t t2)
{
	const struct perf_phase *ph = j->sh->phase;
	/* thread mode: the callback may run before the submitter's t1 */
	uint64_t end = t2 > l->t1 ? t2 : l->t1;

	/*
	 * Given up on: reported as stuck and not counted, whether
	 * nvq_close() cancels it or it completes late.
	 */
	if (abandoned(j))
		return false;
	if (__builtin_expect(l->err != 0, 0)) {
		record_error(j, ctx, "", l, l->err,
			     l->err == -EIO ? nvq_status_str(l->status) :
					      strerror(-l->err));
		return false;
	}
	/* measured implies ph->record */
	if (l->measured) {
		struct perf_dir_stats *d = &ctx->dir[l->write];

		perf_stat_add_uncounted(&d->slat, l->t1 - l->t0);
		perf_hist_add(&d->clat, end - l->t1);
		perf_stat_add_unsummed(&d->lat, end - l->t0);
		if (__builtin_expect(!--ctx->stamp_left, 0))
			sample_devtime(j, l, ctx, d, t2);
		/* One writer; the monitor reads it for its samples. */
		__atomic_store_n(&d->ios, d->clat.n, __ATOMIC_RELAXED);
		if (end > ctx->last_done)
			ctx->last_done = end;
	}
	if (__builtin_expect(j->sh->tgt->pi_verify, 0) && !l->write &&
	    !pi_check_read(j, l, ctx))
		return false;
	if (__builtin_expect(ph->verify_check, 0) && !l->write)
		verify_read(j, l, ctx);
	return lane_next(j, l, end + ph->think_ns);
}

static void io_done(void *arg, const struct nvq_cpl *cpl);
static void io_done_racy(void *arg, const struct nvq_cpl *cpl);
static void io_done_thread(void *arg, const struct nvq_cpl *cpl);

/*
 * fio's iodepth_level and iodepth_submit: a batch of @n submissions, @nm
 * of them measured, left @j's queue with its present depth. @in_cb: one
 * request of the count is the one whose callback is submitting (it counts
 * until the callback returns).
 */
static void note_submitted(struct perf_job *j, struct perf_job_ctx *ctx,
			   unsigned int n, unsigned int nm, bool in_cb)
{
	struct perf_depths *dp = &ctx->depths;
	unsigned int depth;

	if (!nm)
		return;
	depth = nvq_queue_inflight(j->q);
	if (in_cb && depth > 1)
		depth--;
	dp->level[perf_depth_level_idx(depth)] += nm;
	dp->submit[perf_depth_batch_idx(n)]++;
	dp->submits++;
}

/* fio's iodepth_complete: one reaping call found @n completions. */
static void note_reaped(struct perf_job *j, unsigned int n)
{
	struct perf_job_ctx *ctx = &j->ctx[0];
	struct perf_depths *dp = &ctx->depths;

	/* from the first measured I/O on, not in the verify pass */
	if (!j->sh->phase->record ||
	    !(ctx->dir[PERF_DIR_READ].ios | ctx->dir[PERF_DIR_WRITE].ios))
		return;
	dp->complete[perf_depth_batch_idx(n)]++;
	dp->completes++;
}

/*
 * lane_submit() on a namespace with metadata: the lane's metadata buffer
 * and the protection fields of the run (docs/perf.md).
 */
static int __attribute__((noinline))
lane_submit_md(struct perf_job *j, struct perf_lane *l, unsigned int flags)
{
	const struct perf_target *t = j->sh->tgt;
	struct nvq_io io;

	if (l->err) /* lane_next_full() could not generate the PI */
		return l->err;
	nvq_io_init(&io);
	io.nsid = t->nsid;
	io.slba = l->slba;
	io.nlb = t->nlb;
	io.buf = l->buf;
	io.md = l->md;
	io.flags = t->io_flags | flags;
	io.reftag = lane_reftag(t, l->slba);
	io.apptag = t->apptag;
	io.appmask = t->appmask;
	if (l->write)
		return nvq_write_io(j->q, &io, j->cb, l);
	return nvq_read_io(j->q, &io, j->cb, l);
}

/*
 * Start lane @l's prepared I/O with @t0 as its start: 0, -EAGAIN, or
 * another negative errno. On success l->t1 is when the call returned.
 */
static inline __attribute__((always_inline)) int
lane_submit(struct perf_job *j, struct perf_lane *l, unsigned int flags,
	    uint64_t t0, bool racy)
{
	const struct perf_target *t = j->sh->tgt;
	int rc;

	if (racy)
		atomic_store_explicit(&l->parts, 2, memory_order_relaxed);
	l->t0 = t0;
	atomic_store_explicit(&l->inflight_since, t0, memory_order_relaxed);
	if (__builtin_expect(t->md_io, 0))
		rc = lane_submit_md(j, l, flags);
	else if (l->write)
		rc = nvq_write(j->q, t->nsid, l->buf, l->slba, t->nlb, flags,
			       j->cb, l);
	else
		rc = nvq_read(j->q, t->nsid, l->buf, l->slba, t->nlb, flags,
			      j->cb, l);
	if (__builtin_expect(rc != 0, 0)) {
		atomic_store_explicit(&l->inflight_since, 0,
				      memory_order_relaxed);
		return rc;
	}
	l->t1 = perf_now();
	return 0;
}

/*
 * Drop the submitter's reference; true when the callback already ran
 * (another thread's, before the submitter took t1: j->racy only).
 */
static bool submitter_last(struct perf_lane *l)
{
	return atomic_fetch_sub_explicit(&l->parts, 1, memory_order_acq_rel) ==
	       1;
}

static void submit_failed(struct perf_job *j, struct perf_lane *l,
			  struct perf_job_ctx *ctx, int rc)
{
	char why[200];

	snprintf(why, sizeof(why), "%s", nvq_errmsg());
	if (!why[0])
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	record_error(j, ctx, "submitting a", l, rc, why);
	retire(j);
}

/* Thread mode: hand lane @l, not due yet, to the job thread. */
static void push_delayed(struct perf_job *j, struct perf_lane *l)
{
	pthread_mutex_lock(&j->lock);
	delay_push(j, l);
	/* The job thread sleeps until the earliest due time: a new one. */
	if (j->delayed[0] == l)
		pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

static void push_retry(struct perf_job *j, struct perf_lane *l)
{
	pthread_mutex_lock(&j->lock);
	l->next = j->retry;
	j->retry = l;
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

/*
 * Thread mode: keep lane @l busy until it is in flight, parked for a retry,
 * or retired. Runs in the callback or in the job thread (@job_thread).
 * Returns false when the lane was parked because the queue was full.
 */
static bool drive(struct perf_job *j, struct perf_lane *l,
		  struct perf_job_ctx *ctx, bool job_thread)
{
	for (;;) {
		int rc;

		if (stopped(j)) {
			retire(j);
			return true;
		}
		if (paced(j) && l->due > perf_now()) {
			push_delayed(j, l);
			return true;
		}
		rc = lane_submit(j, l, 0, perf_now(), true);
		if (rc == -EAGAIN) {
			if (job_thread && !nvq_queue_inflight(j->q)) {
				submit_failed(j, l, ctx, rc);
				return true;
			}
			push_retry(j, l);
			return false;
		}
		if (rc) {
			submit_failed(j, l, ctx, rc);
			return true;
		}
		/* l is ours until submitter_last(): l->measured holds */
		note_submitted(j, ctx, 1, l->measured, !job_thread);
		if (!submitter_last(l))
			return true;
		/* the callback ran first: its time was later than t1 */
		if (!finish_io(j, l, ctx, l->t2)) {
			retire(j);
			return true;
		}
	}
}

/* What every callback keeps of the completion (valid in the call only). */
static inline void take_cpl(struct perf_lane *l, const struct nvq_cpl *cpl)
{
	atomic_store_explicit(&l->inflight_since, 0, memory_order_relaxed);
	/* l->err is 0 while the lane is in use: a failed one retires */
	if (__builtin_expect(cpl->err != 0, 0)) {
		l->err = cpl->err;
		l->status = cpl->status;
	}
	l->dw1 = cpl->dw1;
}

/* A failed I/O: finish_reaped() takes these the long way. */
static void __attribute__((noinline, cold))
reaped_failed(struct perf_job *owner, struct perf_lane *l)
{
	l->next = owner->failed;
	owner->failed = l;
}

/* nvq_close() cancelled a lane's I/O: given up on. */
static void __attribute__((noinline, cold)) cancelled(struct perf_job *j)
{
	retire(j);
}

/*
 * Poll / wait mode: the lane goes to the list of the job thread that
 * reaped it (this_job; with --shared-queue maybe not the lane's own) and
 * is finished after the reaping call returns, all of its completions at
 * one time (finish_reaped()), as fio takes one time per batch of events.
 */
static inline void reaped(struct perf_job *j, struct perf_lane *l)
{
	struct perf_job *owner = this_job;

	if (__builtin_expect(!owner, 0)) {
		cancelled(j);
		return;
	}
	if (__builtin_expect(l->err != 0, 0)) {
		reaped_failed(owner, l);
		return;
	}
	l->next = owner->done;
	owner->done = l;
}

/* io_done()'s rare cases: a failed I/O, or nvq_close() cancelling. */
static void __attribute__((noinline, cold))
io_done_slow(struct perf_lane *l, const struct nvq_cpl *cpl)
{
	take_cpl(l, cpl);
	reaped(l->job, l);
}

/*
 * Poll / wait mode, the lanes of one thread: the callback cannot run
 * before the submitter is done with the lane. The hot path: two stores
 * and a push.
 */
static void io_done(void *arg, const struct nvq_cpl *cpl)
{
	struct perf_lane *l = arg;
	struct perf_job *owner = this_job;

	if (__builtin_expect(cpl->err != 0 || !owner, 0)) {
		io_done_slow(l, cpl);
		return;
	}
	atomic_store_explicit(&l->inflight_since, 0, memory_order_relaxed);
	l->dw1 = cpl->dw1;
	l->next = owner->done;
	owner->done = l;
}

/* Poll / wait mode with --shared-queue: another thread's callback may
 * come first; the last of the two references finishes the lane. */
static void io_done_racy(void *arg, const struct nvq_cpl *cpl)
{
	struct perf_lane *l = arg;

	take_cpl(l, cpl);
	if (atomic_fetch_sub_explicit(&l->parts, 1, memory_order_acq_rel) != 1)
		return; /* the submitter finishes it */
	reaped(l->job, l);
}

/* Thread mode: the completion thread finishes the lane and resubmits. */
static void io_done_thread(void *arg, const struct nvq_cpl *cpl)
{
	struct perf_lane *l = arg;
	struct perf_job *j = l->job;
	/* By thread, not by mode: each context has one writer. */
	struct perf_job_ctx *ctx = this_job ? &this_job->ctx[0] : &j->ctx[1];

	take_cpl(l, cpl);
	/* no batch here: the callback takes its own time */
	l->t2 = perf_now();
	if (!--ctx->cpu_left && !abandoned(j))
		sample_cpu(ctx);
	if (atomic_fetch_sub_explicit(&l->parts, 1, memory_order_acq_rel) != 1)
		return; /* the submitter finishes it */
	if (finish_io(j, l, ctx, l->t2))
		drive(j, l, ctx, false);
	else
		retire(j);
}

/*
 * Poll / wait mode: what the last nvq_poll() / nvq_wait() reaped, its
 * completions seen now (one clock read for all), goes to the ready list
 * with its next I/O. What makes an I/O take finish_io()'s long way is
 * looked at once per batch; the rest is the hot path: per I/O one
 * histogram (clat), exact slat and lat, and every PERF_DEVTIME_EVERY-th
 * the emulator's stamps. The completion CPU is sampled per batch.
 */
static inline __attribute__((always_inline)) struct perf_lane *
finish_plain(struct perf_job *j, struct perf_lane *l, struct perf_lane *ready,
	     uint64_t t2, const bool limited)
{
	struct perf_job_ctx *ctx = &j->ctx[0];
	/* a plain phase has one direction */
	struct perf_dir_stats *ds = &ctx->dir[j->plain_write];
	const uint64_t lba = j->region_lba, blocks = j->region_blocks;
	const uint64_t limit = j->limit;
	const uint32_t nlb = j->nlb;
	unsigned int stamp = ctx->stamp_left;
	struct perf_lane *next;
	uint64_t n = 0;

	for (; l; l = next, n++) {
		next = l->next;
		/* measured, and no submit call outlasted its callback */
		perf_stat_add_uncounted(&ds->slat, l->t1 - l->t0);
		perf_hist_add_uncounted(&ds->clat, t2 - l->t1);
		perf_stat_add_unsummed(&ds->lat, t2 - l->t0);
		if (__builtin_expect(!--stamp, 0)) {
			sample_devtime(j, l, ctx, ds, t2);
			stamp = PERF_DEVTIME_EVERY;
		}
		/* lane_next_plain(), the deadline looked at per batch */
		if (limited &&
		    atomic_fetch_add_explicit(&j->claimed, 1,
					      memory_order_relaxed) >= limit) {
			retire(j);
			continue;
		}
		l->slba = lba + bounded(lane_rand(&l->rng), blocks) * nlb;
		l->next = ready;
		ready = l;
	}
	ctx->stamp_left = stamp;
	ds->clat.n += n;
	return ready;
}

/*
 * Poll / wait mode: what the last nvq_poll() / nvq_wait() reaped, its
 * completions seen now (one clock read for all), goes to the ready list
 * with its next I/O. What makes an I/O take finish_io()'s long way is
 * looked at once per batch; failures were put aside by the callback. The
 * completion CPU is sampled per batch.
 */
static void finish_reaped(struct perf_job *j)
{
	struct perf_job_ctx *ctx = &j->ctx[0];
	struct perf_lane *l = j->done, *next, *ready = j->ready;
	uint64_t seen = ctx->dir[0].clat.n + ctx->dir[1].clat.n;
	unsigned int n = 0, d;
	uint64_t t2;

	if (!l && !j->failed)
		return;
	j->done = NULL;
	t2 = perf_now();
	/* failures first: errors retire their lanes (record_error()) */
	for (next = j->failed, j->failed = NULL; next; n++) {
		struct perf_lane *f = next;

		next = f->next;
		finish_io(f->job, f, ctx, t2);
		retire(f->job);
	}
	/* every job of the run has the same phase, abandon flag, deadline */
	if (__builtin_expect(!j->plain || j->racy || abandoned(j), 0) ||
	    t2 >= j->deadline) {
		for (; l; l = next, n++) {
			next = l->next;
			if (finish_io(l->job, l, ctx, t2)) {
				l->next = ready;
				ready = l;
			} else {
				retire(l->job);
			}
		}
	} else {
		struct perf_hist *h = &ctx->dir[j->plain_write].clat;
		uint64_t before = h->n;

		ready = j->limit ? finish_plain(j, l, ready, t2, true) :
				   finish_plain(j, l, ready, t2, false);
		n += (unsigned int)(h->n - before);
	}
	j->ready = ready;
	if (ctx->dir[0].clat.n + ctx->dir[1].clat.n != seen) {
		ctx->last_done = t2;
		/* one writer; the monitor reads them for its samples */
		for (d = 0; d < PERF_NR_DIRS; d++)
			__atomic_store_n(&ctx->dir[d].ios, ctx->dir[d].clat.n,
					 __ATOMIC_RELAXED);
	}
	/*
	 * The completion CPU, one look per PERF_CPU_EVERY completions: the
	 * batch's all ran here, so the look counts for the samples due in it.
	 */
	if (ctx->cpu_left > n) {
		ctx->cpu_left -= n;
	} else {
		unsigned int past = n - ctx->cpu_left;
		int cpu = sched_getcpu();

		ctx->cpu_left = PERF_CPU_EVERY - past % PERF_CPU_EVERY;
		if ((unsigned int)cpu < PERF_CPL_CPUS)
			ctx->cpl_cpu[cpu] +=
				(1 + past / PERF_CPU_EVERY) * PERF_CPU_EVERY;
	}
}

/* One submission of submit_plain_dir(), started at @t0. */
static inline __attribute__((always_inline)) int
submit_plain_one(struct nvq_queue *q, uint32_t nsid, uint32_t nlb, nvq_cb cb,
		 struct perf_lane *l, unsigned int flags, uint64_t t0,
		 const bool write)
{
	l->t0 = t0;
	atomic_store_explicit(&l->inflight_since, t0, memory_order_relaxed);
	if (write)
		return nvq_write(q, nsid, l->buf, l->slba, nlb, flags, cb, l);
	return nvq_read(q, nsid, l->buf, l->slba, nlb, flags, cb, l);
}

/*
 * submit_ready()'s hot path: a plain phase (lane_next_plain()) on the
 * job's own queue without pacing. Every lane goes, all but the last with
 * NVQ_IO_MORE; the return of one submit call is the start of the next
 * (one clock read each). @write is the phase's direction, a constant
 * where it is inlined.
 */
static inline __attribute__((always_inline)) void
submit_plain_dir(struct perf_job *j, struct perf_lane *l, uint64_t t,
		 const bool write)
{
	struct perf_job_ctx *ctx = &j->ctx[0];
	struct nvq_queue *q = j->q;
	const uint32_t nsid = j->sh->tgt->nsid, nlb = j->nlb;
	const nvq_cb cb = j->cb;
	bool unkicked = false;
	unsigned int n = 0;
	struct perf_lane *next;

	for (; l; l = next) {
		unsigned int more;
		int rc;

		next = l->next;
		more = next ? NVQ_IO_MORE : 0;
		rc = submit_plain_one(q, nsid, nlb, cb, l, more, t, write);
		if (__builtin_expect(rc != 0, 0)) {
			atomic_store_explicit(&l->inflight_since, 0,
					      memory_order_relaxed);
			if (rc == -EAGAIN &&
			    (nvq_queue_inflight(q) || unkicked)) {
				/* the rest waits for completions */
				j->ready = l;
				break;
			}
			submit_failed(j, l, ctx, rc);
			continue;
		}
		t = perf_now();
		l->t1 = t;
		/* the doorbell waits while MORE */
		unkicked = next;
		n++;
	}
	if (unkicked)
		nvq_queue_kick(q);
	note_submitted(j, ctx, n, n, false);
}

static void submit_plain(struct perf_job *j, struct perf_lane *list, uint64_t t)
{
	if (j->plain_write)
		submit_plain_dir(j, list, t, true);
	else
		submit_plain_dir(j, list, t, false);
}

static void submit_ready(struct perf_job *j)
{
	struct perf_job_ctx *ctx = &j->ctx[0];
	struct perf_lane *l, *list = j->ready;
	/* the same for every job of the run */
	const bool racy = j->racy, pace = paced(j);
	bool unkicked = false;
	uint64_t now, t;
	unsigned int n = 0, nm = 0;

	if (!list)
		return;
	j->ready = NULL;
	if (stopped(j)) { /* sh->stop: every job's */
		for (; list; list = l) {
			l = list->next;
			retire(list->job);
		}
		return;
	}
	now = perf_now();
	t = now;
	if (!pace && !racy && j->plain) {
		submit_plain(j, list, t);
		return;
	}
	while ((l = list)) {
		/* Another job's lane with --shared-queue (see this_job). */
		struct perf_job *lj = l->job;
		unsigned int flags;
		int rc;

		list = l->next;
		if (pace && l->due > now && j->nr_delayed < j->cap_delayed) {
			delay_push(j, l);
			continue;
		}
		flags = list ? NVQ_IO_MORE : 0;
		rc = lane_submit(lj, l, flags, t, racy);
		if (__builtin_expect(rc != 0, 0)) {
			if (rc == -EAGAIN &&
			    (nvq_queue_inflight(j->q) || unkicked)) {
				/* the rest waits for completions to free
				 * slots */
				l->next = list;
				j->ready = l;
				break;
			}
			submit_failed(lj, l, ctx, rc);
			continue;
		}
		t = l->t1;
		unkicked = flags;
		n++;
		nm += l->measured;
		if (racy && submitter_last(l)) {
			/* another thread's poll ran the callback already */
			if (finish_io(lj, l, ctx, perf_now())) {
				l->next = list;
				list = l;
			} else {
				retire(lj);
			}
		}
	}
	if (unkicked)
		nvq_queue_kick(j->q);
	note_submitted(j, ctx, n, nm, false);
}

/* Poll / wait mode: move the lanes that are due to the ready list. */
static void release_due(struct perf_job *j)
{
	bool stop = stopped(j);
	uint64_t now;

	if (!j->nr_delayed)
		return;
	now = perf_now();
	/* On a stop every lane goes, and submit_ready() retires it. */
	while (j->nr_delayed && (stop || j->delayed[0]->due <= now)) {
		struct perf_lane *l = delay_pop(j);

		l->next = j->ready;
		j->ready = l;
	}
}

/*
 * Wait mode: sleep on the queue's interrupt, no longer than until the
 * earliest delayed lane is due; with nothing in flight there is nothing
 * to wait for but the clock. nvq_wait() counts in milliseconds, so a
 * lane may start up to 1 ms late while other I/O is in flight and none
 * completes: pacing errs on the slow side, latencies stay exact.
 */
static int wait_step(struct perf_job *j)
{
	int timeout = WAIT_SLICE_MS;

	if (j->nr_delayed) {
		uint64_t now = perf_now(), due = j->delayed[0]->due, ms;

		if (due <= now)
			return 0;
		if (!nvq_queue_inflight(j->q)) {
			sleep_until(due - now < WAIT_SLICE_NS ?
					    due :
					    now + WAIT_SLICE_NS);
			return 0;
		}
		ms = (due - now + 999999) / 1000000;
		if (ms < (uint64_t)timeout)
			timeout = (int)ms;
	}
	return nvq_wait(j->q, 1, timeout);
}

static void run_reaping(struct perf_job *j)
{
	/* Lanes of other jobs may wait in j->ready or j->delayed
	 * (--shared-queue). */
	while ((atomic_load_explicit(&j->active, memory_order_acquire) ||
		j->ready || j->nr_delayed) &&
	       !abandoned(j)) {
		int rc;

		release_due(j);
		submit_ready(j);
		if (!atomic_load_explicit(&j->active, memory_order_acquire) &&
		    !j->ready && !j->nr_delayed)
			break;
		if (j->cfg->mode == NVQ_MODE_WAIT) {
			rc = wait_step(j);
		} else {
			rc = nvq_poll(j->q, 0);
			if (!rc && j->yield_empty)
				sched_yield();
		}
		finish_reaped(j);
		if (rc > 0)
			note_reaped(j, (unsigned int)rc);
		if (rc < 0) {
			struct perf_job_ctx *ctx = &j->ctx[0];

			ctx->io_errors++;
			if (!ctx->first_errno)
				ctx->first_errno = -rc;
			if (!ctx->errmsg[0])
				snprintf(ctx->errmsg, sizeof(ctx->errmsg),
					 "reaping completions (thread %u): %s",
					 j->index, nvq_errmsg());
			set_stop(j);
			return; /* nvq_close() cancels what is left */
		}
	}
}

static void run_threaded(struct perf_job *j)
{
	pthread_mutex_lock(&j->lock);
	while (atomic_load_explicit(&j->active, memory_order_acquire) &&
	       !abandoned(j)) {
		struct timespec ts;

		if (j->retry) {
			struct perf_lane *l = j->retry, *next;
			bool parked = false;

			j->retry = NULL;
			pthread_mutex_unlock(&j->lock);
			for (; l; l = next) {
				next = l->next;
				if (!drive(j, l, &j->ctx[0], true))
					parked = true;
			}
			if (parked) {
				/* Slots free up as completions run. */
				struct timespec nap = { 0, 20000 };

				nanosleep(&nap, NULL);
			}
			pthread_mutex_lock(&j->lock);
			continue;
		}
		if (j->nr_delayed) {
			uint64_t now = perf_now(), until;
			struct perf_lane *go = NULL, *next;

			while (j->nr_delayed &&
			       (stopped(j) || j->delayed[0]->due <= now)) {
				struct perf_lane *l = delay_pop(j);

				l->next = go;
				go = l;
			}
			if (go) {
				pthread_mutex_unlock(&j->lock);
				for (; go; go = next) {
					next = go->next;
					drive(j, go, &j->ctx[0], true);
				}
				pthread_mutex_lock(&j->lock);
				continue;
			}
			/* Short slices: a stop retires the waiting lanes. */
			until = j->delayed[0]->due;
			if (until - now > WAIT_SLICE_NS)
				until = now + WAIT_SLICE_NS;
			ts.tv_sec = (time_t)(until / 1000000000ull);
			ts.tv_nsec = (long)(until % 1000000000ull);
		} else {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1;
		}
		/* perf_job_wake(), a retiring lane or a new delayed lane
		 * ends the sleep early */
		pthread_cond_timedwait(&j->cond, &j->lock, &ts);
	}
	pthread_mutex_unlock(&j->lock);
}

/*
 * What the hot path needs to know of the phase, read when the job starts
 * it (its times are set after perf_job_rearm()).
 */
static void phase_view(struct perf_job *j)
{
	const struct perf_phase *ph = j->sh->phase;
	unsigned int i;

	j->plain = ph->record && ph->random && !ph->replay && !ph->one_pass &&
		   !ph->rate_ns && !ph->think_ns && !ph->verify_fill &&
		   !ph->verify_check && !j->sh->tgt->md_io &&
		   (ph->read_pct >= 100 || !ph->read_pct) &&
		   ph->ramp_end <= ph->t_begin; /* no --ramp: all measured */
	j->plain_write = !ph->read_pct;
	j->limit = ph->ios;
	j->deadline = ph->deadline ? ph->deadline : UINT64_MAX;
	j->ramp_end = ph->ramp_end;
	j->region_lba = j->sh->tgt->region_lba;
	j->region_blocks = j->sh->tgt->region_blocks;
	j->nlb = j->sh->tgt->nlb;
	/* what lane_next_plain() leaves as it is */
	for (i = 0; j->plain && i < j->nr_lanes; i++) {
		j->lanes[i].measured = true;
		j->lanes[i].write = j->plain_write;
	}
}

void *perf_job_main(void *arg)
{
	struct perf_job *j = arg;
	struct perf_shared *sh = j->sh;
	unsigned int i;

	j->tid = pthread_self();
	this_job = j;
	phase_view(j);
	/*
	 * --verify writes: no more lanes than blocks, so that next_block()
	 * always finds one that no other lane has.
	 */
	j->verify_lanes = j->nr_lanes;
	if (guarded(sh->phase) && j->slice_len < j->nr_lanes)
		j->verify_lanes = (unsigned int)j->slice_len;
	for (i = 0; i < j->verify_lanes; i++) {
		struct perf_lane *l = &j->lanes[i];

		if (!lane_next(j, l, perf_now()))
			continue;
		atomic_fetch_add_explicit(&j->active, 1, memory_order_relaxed);
		if (j->threaded) {
			drive(j, l, &j->ctx[0], true);
		} else {
			l->next = j->ready;
			j->ready = l;
		}
	}
	if (j->threaded)
		run_threaded(j);
	else
		run_reaping(j);
	this_job = NULL;

	pthread_mutex_lock(&sh->lock);
	sh->finished++;
	pthread_cond_broadcast(&sh->cond);
	pthread_mutex_unlock(&sh->lock);
	return NULL;
}

int perf_job_init(struct perf_job *j, struct perf_shared *sh,
		  const struct perf_config *cfg, struct nvq_queue *q,
		  unsigned int index, unsigned int nr_jobs, char *err,
		  size_t errlen)
{
	const struct perf_target *t = sh->tgt;
	uint64_t stride = (t->buf_bytes + 4095) & ~4095ull, per;
	/* each lane's metadata in its own cache lines */
	uint64_t md_stride = ((uint64_t)t->md_bytes + 63) & ~63ull;
	pthread_condattr_t ca;
	unsigned int i;

	memset(j, 0, sizeof(*j));
	j->sh = sh;
	j->cfg = cfg;
	j->q = q;
	j->index = index;
	j->threaded = cfg->mode == NVQ_MODE_THREAD;
	j->racy = j->threaded || cfg->shared_queue;
	j->cb = j->threaded ? io_done_thread : j->racy ? io_done_racy : io_done;
	per = t->region_blocks / nr_jobs;
	j->slice_start = index * per;
	j->slice_len =
		index == nr_jobs - 1 ? t->region_blocks - j->slice_start : per;
	j->nr_lanes = cfg->qd;
	for (i = 0; i < PERF_NR_DIRS; i++) {
		perf_dir_stats_init(&j->ctx[0].dir[i]);
		j->ctx[1].dir[i] = j->ctx[0].dir[i];
	}
	/* the first completion of each context is sampled */
	for (i = 0; i < 2; i++)
		j->ctx[i].stamp_left = j->ctx[i].cpu_left = 1;
	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_init(&j->vlock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cond, &ca);
	pthread_condattr_destroy(&ca);

	j->lanes = calloc(j->nr_lanes, sizeof(*j->lanes));
	if (!j->lanes) {
		snprintf(err, errlen, "out of memory for %u requests",
			 j->nr_lanes);
		return -ENOMEM;
	}
	if (cfg->think_ns || cfg->rate_iops) {
		/* With --shared-queue a thread may hold every job's lanes. */
		uint64_t cap =
			(uint64_t)cfg->qd *
			(cfg->shared_queue && cfg->mode != NVQ_MODE_THREAD ?
				 nr_jobs :
				 1);

		j->delayed = cap <= UINT32_MAX ?
				     calloc(cap, sizeof(*j->delayed)) :
				     NULL;
		if (!j->delayed) {
			snprintf(err, errlen,
				 "out of memory for %llu paced requests",
				 (unsigned long long)cap);
			return -ENOMEM;
		}
		j->cap_delayed = (unsigned int)cap;
	}
	j->bufmem = nvq_dma_alloc(t->ctrl, stride * j->nr_lanes, -1);
	if (!j->bufmem) {
		snprintf(err, errlen,
			 "cannot allocate %llu bytes of DMA memory for --qd "
			 "%u x --bs %llu: %s",
			 (unsigned long long)(stride * j->nr_lanes),
			 j->nr_lanes, (unsigned long long)t->bs, nvq_errmsg());
		return -ENOMEM;
	}
	if (md_stride) {
		j->mdmem = nvq_dma_alloc(t->ctrl, md_stride * j->nr_lanes, -1);
		if (!j->mdmem) {
			snprintf(err, errlen,
				 "cannot allocate %llu bytes of DMA memory for "
				 "--qd %u metadata buffers of %llu bytes: %s",
				 (unsigned long long)(md_stride * j->nr_lanes),
				 j->nr_lanes, (unsigned long long)t->md_bytes,
				 nvq_errmsg());
			return -ENOMEM;
		}
	}
	perf_randmap_init(&j->map, j->slice_len ? j->slice_len : 1,
			  cfg->seed ^ ((uint64_t)index << 48));
	for (i = 0; i < j->nr_lanes; i++) {
		struct perf_lane *l = &j->lanes[i];
		uint64_t s = cfg->seed ^ (((uint64_t)index << 32) | i);

		l->job = j;
		l->buf = (char *)j->bufmem + stride * i;
		l->md = md_stride ? (char *)j->mdmem + md_stride * i : NULL;
		/* Decorrelate neighbouring lanes and seeds. */
		l->rng_start = splitmix64(&s);
		l->rng = l->rng_start;
		atomic_init(&l->vblk, PERF_NO_BLOCK);
	}
	return 0;
}

void perf_job_rearm(struct perf_job *j)
{
	const struct perf_phase *ph = j->sh->phase;
	unsigned int i;

	if (ph->replay) {
		uint64_t done = atomic_load(&j->cursor);

		/* Wrapped writes overwrote their block: read each once. */
		j->cursor_limited = true;
		j->cursor_end = done < j->slice_len ? done : j->slice_len;
	} else {
		j->cursor_limited = ph->one_pass;
		j->cursor_end = j->slice_len;
	}
	atomic_store(&j->cursor, 0);
	atomic_store(&j->claimed, 0);
	atomic_store(&j->active, 0);
	atomic_store(&j->rate_next, 0);
	j->ready = NULL;
	j->done = NULL;
	j->failed = NULL;
	j->retry = NULL;
	j->nr_delayed = 0;
	for (i = 0; i < j->nr_lanes; i++) {
		struct perf_lane *l = &j->lanes[i];

		atomic_store(&l->vblk, PERF_NO_BLOCK);
		l->err = 0;
		l->rng = l->rng_start;
	}
}

void perf_job_release(struct perf_job *j, bool free_dma)
{
	if (j->bufmem && free_dma)
		nvq_dma_free(j->sh->tgt->ctrl, j->bufmem);
	j->bufmem = NULL;
	if (j->mdmem && free_dma)
		nvq_dma_free(j->sh->tgt->ctrl, j->mdmem);
	j->mdmem = NULL;
	free(j->lanes);
	j->lanes = NULL;
	free(j->delayed);
	j->delayed = NULL;
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_destroy(&j->vlock);
	pthread_cond_destroy(&j->cond);
}

bool perf_job_idle(struct perf_job *j)
{
	return !atomic_load(&j->active);
}

void perf_job_inflight(struct perf_job *j, uint64_t *n,
		       uint64_t dir[PERF_NR_DIRS], uint64_t *oldest)
{
	unsigned int i;

	for (i = 0; i < j->nr_lanes; i++) {
		uint64_t t = atomic_load_explicit(&j->lanes[i].inflight_since,
						  memory_order_relaxed);

		if (!t)
			continue;
		(*n)++;
		/* lane_next() stores it the same way, before the submission */
		dir[__atomic_load_n(&j->lanes[i].write, __ATOMIC_RELAXED)]++;
		if (t < *oldest)
			*oldest = t;
	}
}

void perf_job_wake(struct perf_job *j)
{
	pthread_mutex_lock(&j->lock);
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

void perf_job_progress(const struct perf_job *j, uint64_t ios[PERF_NR_DIRS])
{
	unsigned int c, d;

	for (c = 0; c < 2; c++)
		for (d = 0; d < PERF_NR_DIRS; d++)
			ios[d] += __atomic_load_n(&j->ctx[c].dir[d].ios,
						  __ATOMIC_RELAXED);
}

uint64_t perf_job_collect(const struct perf_job *j, struct perf_result *res)
{
	uint64_t last = 0;
	unsigned int c, d, i;

	for (c = 0; c < 2; c++) {
		const struct perf_job_ctx *x = &j->ctx[c];

		for (d = 0; d < PERF_NR_DIRS; d++) {
			perf_result_merge_dirs(&res->dir[d], &x->dir[d]);
			/* not counted per I/O: every I/O is bs long, and
			 * slat and lat have a value for every clat */
			res->dir[d].bytes = res->dir[d].ios * j->sh->tgt->bs;
			res->dir[d].slat.n = res->dir[d].clat.n;
			res->dir[d].lat.n = res->dir[d].clat.n;
			res->dir[d].lat.sum =
				res->dir[d].slat.sum + res->dir[d].clat.sum;
		}
		if (x->last_done > last)
			last = x->last_done;
		res->verify_blocks += x->verify_blocks;
		res->verify_bad += x->verify_bad;
		for (i = 0; i < x->nr_vfail && res->nr_vfail < PERF_MAX_VFAIL;
		     i++)
			res->vfail[res->nr_vfail++] = x->vfail[i];
		res->io_errors += x->io_errors;
		if (!res->first_errno)
			res->first_errno = x->first_errno;
		perf_depths_merge(&res->depths, &x->depths);
		for (i = 0; i < PERF_CPL_CPUS; i++)
			res->cpl_count[i] += x->cpl_cpu[i];
		if (!res->errmsg[0] && x->errmsg[0])
			snprintf(res->errmsg, sizeof(res->errmsg), "%s",
				 x->errmsg);
	}
	return last;
}
