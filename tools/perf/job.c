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

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
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

/*
 * Choose lane @l's next I/O, to be submitted no earlier than @now (its
 * think time included) nor the job's next rate slot; that time goes into
 * l->due. False when the phase is over for the lane.
 */
static bool lane_next(struct perf_job *j, struct perf_lane *l, uint64_t now)
{
	const struct perf_phase *ph = j->sh->phase;
	const struct perf_target *t = j->sh->tgt;
	uint64_t block, limit;
	bool measured, write;

	if (stopped(j))
		return false;
	if (ph->rate_ns)
		now = rate_slot(j, now, ph->rate_ns);
	if (ph->deadline && now >= ph->deadline)
		return false;
	l->due = now;
	measured = ph->record && now >= ph->ramp_end;
	if (ph->random && ph->replay && l->count >= l->limit)
		return false;
	limit = ph->one_pass ? j->slice_len : ph->ios;
	if (limit && (measured || !ph->record) &&
	    atomic_fetch_add_explicit(&j->claimed, 1, memory_order_relaxed) >=
		    limit)
		return false;
	if (ph->random) {
		block = bounded(splitmix64(&l->rng), t->region_blocks);
	} else {
		uint64_t c = atomic_fetch_add_explicit(&j->cursor, 1,
						       memory_order_relaxed);

		if (j->cursor_limited && c >= j->cursor_end)
			return false;
		block = j->slice_start + c % j->slice_len;
	}
	l->count++;
	if (ph->read_pct >= 100)
		write = false;
	else if (!ph->read_pct)
		write = true;
	else
		write = splitmix64(&l->rng) % 100 >= ph->read_pct;
	l->slba = t->region_lba + block * t->nlb;
	l->write = write;
	l->measured = measured;
	if (write && ph->verify_fill) {
		uint64_t seq = ((uint64_t)j->index << 48) |
			       atomic_fetch_add_explicit(&j->wseq, 1,
							 memory_order_relaxed);

		perf_verify_fill(l->buf, t->lba_size, t->nlb, l->slba, seq,
				 t->run_id);
	}
	return true;
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
			 "%s %s of %u blocks at LBA %llu (thread %u): %s",
			 fmt_what, l->write ? "write" : "read", j->sh->tgt->nlb,
			 (unsigned long long)l->slba, j->index, why);
	set_stop(j);
}

/*
 * Account the finished I/O of lane @l in @ctx and choose its next one.
 * Returns true when the lane has a new I/O to submit.
 */
static bool finish_io(struct perf_job *j, struct perf_lane *l,
		      struct perf_job_ctx *ctx)
{
	const struct perf_phase *ph = j->sh->phase;
	const struct perf_target *t = j->sh->tgt;
	uint64_t end = l->t2 > l->t1 ? l->t2 : l->t1;

	/*
	 * Given up on: reported as stuck and not counted, whether
	 * nvq_close() cancels it or it completes late.
	 */
	if (abandoned(j))
		return false;
	if (l->err) {
		record_error(j, ctx, "", l, l->err,
			     l->err == -EIO ? nvq_status_str(l->status) :
					      strerror(-l->err));
		return false;
	}
	if (ph->record && l->measured) {
		struct perf_dir_stats *d = &ctx->dir[l->write];

		perf_hist_add(&d->slat, l->t1 - l->t0);
		perf_hist_add(&d->clat, end - l->t1);
		perf_hist_add(&d->lat, end - l->t0);
		if (t->stamped) {
			uint64_t host, dev;

			if (perf_devtime_split(l->t0, l->t1, l->t2, l->dw1,
					       &host, &dev)) {
				perf_hist_add(&d->host, host);
				perf_hist_add(&d->dev, dev);
			} else {
				d->bad_stamps++;
			}
		}
		d->ios++;
		d->bytes += t->bs;
		if (end > ctx->last_done)
			ctx->last_done = end;
		atomic_fetch_add_explicit(&j->done_ios, 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&j->done_bytes[l->write], t->bs,
					  memory_order_relaxed);
	}
	if (!l->write && ph->verify_check) {
		struct perf_vfail f;
		unsigned int bad;

		bad = perf_verify_check(l->buf, t->lba_size, t->nlb, l->slba,
					ph->check_run_id, &f);
		ctx->verify_blocks += t->nlb;
		if (bad) {
			ctx->verify_bad += bad;
			if (ctx->nr_vfail < PERF_MAX_VFAIL)
				ctx->vfail[ctx->nr_vfail++] = f;
		}
	}
	return lane_next(j, l, end + ph->think_ns);
}

static void io_done(void *arg, const struct nvq_cpl *cpl);

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

/* Start lane @l's prepared I/O: 0, -EAGAIN, or another negative errno. */
static int lane_submit(struct perf_job *j, struct perf_lane *l,
		       unsigned int flags)
{
	const struct perf_target *t = j->sh->tgt;
	int rc;

	atomic_store_explicit(&l->parts, 2, memory_order_relaxed);
	l->t0 = perf_now();
	atomic_store_explicit(&l->inflight_since, (l->t0 & ~1ull) | l->write,
			      memory_order_relaxed);
	if (l->write)
		rc = nvq_write(j->q, t->nsid, l->buf, l->slba, t->nlb, flags,
			       io_done, l);
	else
		rc = nvq_read(j->q, t->nsid, l->buf, l->slba, t->nlb, flags,
			      io_done, l);
	if (rc) {
		atomic_store_explicit(&l->inflight_since, 0,
				      memory_order_relaxed);
		return rc;
	}
	l->t1 = perf_now();
	return 0;
}

/* Drop the submitter's reference; true when the callback already ran. */
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
		rc = lane_submit(j, l, 0);
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
		if (!finish_io(j, l, ctx)) {
			retire(j);
			return true;
		}
	}
}

static void io_done(void *arg, const struct nvq_cpl *cpl)
{
	struct perf_lane *l = arg;
	struct perf_job *j = l->job;
	struct perf_job_ctx *ctx;
	int cpu = sched_getcpu(); /* glibc reads it from rseq: cheap */

	l->t2 = perf_now();
	atomic_store_explicit(&l->inflight_since, 0, memory_order_relaxed);
	l->err = cpl->err;
	l->status = cpl->status;
	l->dw1 = cpl->dw1;
	/* By thread, not by mode: each context has one writer. */
	ctx = this_job ? &this_job->ctx[0] : &j->ctx[1];
	/* Where completions run: the CPU whose idle states matter (not
	 * nvq_close() cancelling what was given up on). */
	if ((unsigned int)cpu < PERF_CPL_CPUS && !abandoned(j))
		ctx->cpl_cpu[cpu]++;
	if (atomic_fetch_sub_explicit(&l->parts, 1, memory_order_acq_rel) != 1)
		return; /* the submitter finishes it */
	if (j->threaded) {
		if (finish_io(j, l, ctx))
			drive(j, l, ctx, false);
		else
			retire(j);
		return;
	}
	if (finish_io(j, l, ctx)) {
		/* nvq_close() may cancel from the main thread: j's list. */
		struct perf_job *owner = this_job ? this_job : j;

		l->next = owner->ready;
		owner->ready = l;
	} else {
		retire(j);
	}
}

/* Poll / wait mode: submit the ready lanes as one doorbell batch. */
static void submit_ready(struct perf_job *j)
{
	struct perf_job_ctx *ctx = &j->ctx[0];
	bool unkicked = false, pace = paced(j);
	uint64_t now = pace ? perf_now() : 0;
	unsigned int n = 0, nm = 0;
	struct perf_lane *l;

	while ((l = j->ready)) {
		/* Another job's lane with --shared-queue (see this_job). */
		struct perf_job *lj = l->job;
		unsigned int flags;
		int rc;

		j->ready = l->next;
		if (stopped(lj)) {
			retire(lj);
			continue;
		}
		if (pace && l->due > now && j->nr_delayed < j->cap_delayed) {
			delay_push(j, l);
			continue;
		}
		flags = j->ready ? NVQ_IO_MORE : 0;
		rc = lane_submit(lj, l, flags);
		if (rc == -EAGAIN) {
			if (!nvq_queue_inflight(j->q) && !unkicked) {
				submit_failed(lj, l, ctx, rc);
				continue;
			}
			l->next = j->ready;
			j->ready = l;
			break;
		}
		if (rc) {
			submit_failed(lj, l, ctx, rc);
			continue;
		}
		unkicked = flags & NVQ_IO_MORE;
		n++;
		nm += l->measured;
		if (submitter_last(l)) {
			if (finish_io(lj, l, ctx)) {
				l->next = j->ready;
				j->ready = l;
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

void *perf_job_main(void *arg)
{
	struct perf_job *j = arg;
	struct perf_shared *sh = j->sh;
	unsigned int i;

	j->tid = pthread_self();
	this_job = j;
	for (i = 0; i < j->nr_lanes; i++) {
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
	uint64_t stride = (t->bs + 4095) & ~4095ull, per;
	pthread_condattr_t ca;
	unsigned int i;

	memset(j, 0, sizeof(*j));
	j->sh = sh;
	j->cfg = cfg;
	j->q = q;
	j->index = index;
	j->threaded = cfg->mode == NVQ_MODE_THREAD;
	per = t->region_blocks / nr_jobs;
	j->slice_start = index * per;
	j->slice_len =
		index == nr_jobs - 1 ? t->region_blocks - j->slice_start : per;
	j->nr_lanes = cfg->qd;
	for (i = 0; i < PERF_NR_DIRS; i++) {
		perf_dir_stats_init(&j->ctx[0].dir[i]);
		j->ctx[1].dir[i] = j->ctx[0].dir[i];
	}
	pthread_mutex_init(&j->lock, NULL);
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
	for (i = 0; i < j->nr_lanes; i++) {
		struct perf_lane *l = &j->lanes[i];
		uint64_t s = cfg->seed ^ (((uint64_t)index << 32) | i);

		l->job = j;
		l->buf = (char *)j->bufmem + stride * i;
		/* Decorrelate neighbouring lanes and seeds. */
		l->rng_start = splitmix64(&s);
		l->rng = l->rng_start;
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
	j->retry = NULL;
	j->nr_delayed = 0;
	for (i = 0; i < j->nr_lanes; i++) {
		struct perf_lane *l = &j->lanes[i];

		l->limit = ph->replay ? l->count : 0;
		l->count = 0;
		l->rng = l->rng_start;
	}
}

void perf_job_release(struct perf_job *j, bool free_dma)
{
	if (j->bufmem && free_dma)
		nvq_dma_free(j->sh->tgt->ctrl, j->bufmem);
	j->bufmem = NULL;
	free(j->lanes);
	j->lanes = NULL;
	free(j->delayed);
	j->delayed = NULL;
	pthread_mutex_destroy(&j->lock);
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
		dir[t & 1]++;
		t &= ~1ull;
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

uint64_t perf_job_collect(const struct perf_job *j, struct perf_result *res)
{
	uint64_t last = 0;
	unsigned int c, d, i;

	for (c = 0; c < 2; c++) {
		const struct perf_job_ctx *x = &j->ctx[c];

		for (d = 0; d < PERF_NR_DIRS; d++)
			perf_result_merge_dirs(&res->dir[d], &x->dir[d]);
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
