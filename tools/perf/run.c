/* SPDX-License-Identifier: MIT */
/* One run of one configuration; see run.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "devtime.h"
#include "format.h"
#include "job.h"
#include "run.h"
#include "transport.h" /* the library's URI grammar: the /NSID */

/* Status line refresh, in sampling intervals. */
#define STATUS_EVERY 2

/* How often the monitor looks at the signal flag while it waits. */
#define WATCH_NS (20ull * 1000000ull)
/*
 * After a signal, how long the I/O in flight may take to finish before it
 * is abandoned to nvq_close(), which cancels it: a device that stopped
 * answering must not hold up the exit.
 */
#define SIGNAL_GRACE_NS (50ull * 1000000ull)
/* After --time ran out or an error: a tenth of --time, within these. */
#define GRACE_MIN_NS (100ull * 1000000ull)
#define GRACE_MAX_NS (1000ull * 1000000ull)

struct rate_acc {
	uint64_t n;
	double sum, sumsq, min, max;
};

struct monitor {
	const struct perf_run_ctl *ctl;
	const struct perf_config *cfg;
	struct perf_shared *sh;
	struct perf_job *jobs;
	unsigned int nr_jobs;
	struct rate_acc bw[PERF_NR_DIRS + 1], iops[PERF_NR_DIRS + 1];
	uint64_t last_bytes[PERF_NR_DIRS], last_ios;
	bool status_drawn;
	uint64_t grace_ns; /* after the deadline or an error */
	uint64_t stop_seen; /* when sh->stop was first seen; 0: not yet */
	bool abandoned; /* sh->abandon set */
};

static int usage_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int usage_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return PERF_EUSAGE;
}

static void rate_add(struct rate_acc *a, double v)
{
	if (!a->n || v < a->min)
		a->min = v;
	if (!a->n || v > a->max)
		a->max = v;
	a->n++;
	a->sum += v;
	a->sumsq += v * v;
}

static void rate_done(const struct rate_acc *a, struct perf_rate *r)
{
	r->samples = a->n;
	if (!a->n)
		return;
	r->min = a->min;
	r->max = a->max;
	r->mean = a->sum / a->n;
	r->dev = a->n > 1 ? sqrt(fmax(0, (a->sumsq - a->sum * r->mean) /
						 (a->n - 1))) :
			    0;
}

static void progress(struct monitor *m, uint64_t bytes[PERF_NR_DIRS],
		     uint64_t *ios)
{
	uint64_t n[PERF_NR_DIRS] = { 0 };
	unsigned int i, d;

	for (i = 0; i < m->nr_jobs; i++)
		perf_job_progress(&m->jobs[i], n);
	*ios = 0;
	for (d = 0; d < PERF_NR_DIRS; d++) {
		*ios += n[d];
		bytes[d] = n[d] * m->sh->tgt->bs;
	}
}

/* One bandwidth / IOPS sample over the @dt_ns since the previous one. */
static void sample(struct monitor *m, uint64_t dt_ns, bool keep,
		   double *iops_now, double *bw_now)
{
	uint64_t bytes[PERF_NR_DIRS], ios, all = 0;
	double s = (double)dt_ns / 1e9;
	unsigned int d;

	progress(m, bytes, &ios);
	for (d = 0; d < PERF_NR_DIRS; d++) {
		uint64_t delta = bytes[d] - m->last_bytes[d];

		all += delta;
		if (keep) {
			rate_add(&m->bw[d], delta / s);
			rate_add(&m->iops[d],
				 delta / s / (double)m->sh->tgt->bs);
		}
		m->last_bytes[d] = bytes[d];
	}
	if (keep) {
		rate_add(&m->bw[PERF_DIR_ALL], all / s);
		rate_add(&m->iops[PERF_DIR_ALL], (ios - m->last_ios) / s);
	}
	*iops_now = (ios - m->last_ios) / s;
	*bw_now = all / s;
	m->last_ios = ios;
}

static void status_line(struct monitor *m, const char *what, uint64_t now,
			uint64_t t0, uint64_t end, double iops, double bw)
{
	char a[32], b[32], c[32];

	if (!m->ctl || !m->ctl->status)
		return;
	perf_fmt_ns(a, sizeof(a), (double)(now - t0));
	perf_fmt_count(b, sizeof(b), iops);
	if (end > now)
		perf_fmt_ns(c, sizeof(c), (double)(end - now));
	else
		snprintf(c, sizeof(c), "-");
	fprintf(stderr, "\r\033[K%s%s%s%s %s  %s IOPS  %.1f MiB/s  ETA %s",
		m->ctl->tag ? "[" : "", m->ctl->tag ? m->ctl->tag : "",
		m->ctl->tag ? "] " : "", what, a, b, bw / 1048576.0, c);
	fflush(stderr);
	m->status_drawn = true;
}

static void status_clear(struct monitor *m)
{
	if (m->status_drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		m->status_drawn = false;
	}
}

/* Wait until @until or until every job finished; true when they did. */
static bool wait_jobs(struct perf_shared *sh, unsigned int nr_jobs,
		      uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000ull),
			       (long)(until % 1000000000ull) };
	bool done;

	pthread_mutex_lock(&sh->lock);
	while (sh->finished < nr_jobs) {
		if (pthread_cond_timedwait(&sh->cond, &sh->lock, &ts) ==
		    ETIMEDOUT)
			break;
	}
	done = sh->finished >= nr_jobs;
	pthread_mutex_unlock(&sh->lock);
	return done;
}

static void check_interrupt(struct monitor *m, struct perf_result *res)
{
	if (m->ctl && m->ctl->interrupted && *m->ctl->interrupted) {
		atomic_store(&m->sh->stop, true);
		res->interrupted = true;
	}
}

/*
 * Give up on the I/O still in flight: note how much there is and how old
 * the oldest, then let the job threads return.
 */
static void abandon(struct monitor *m, struct perf_result *res, uint64_t now)
{
	uint64_t n = 0, oldest = UINT64_MAX;
	unsigned int i;

	res->dropped[PERF_DIR_READ] = res->dropped[PERF_DIR_WRITE] = 0;
	for (i = 0; i < m->nr_jobs; i++)
		perf_job_inflight(&m->jobs[i], &n, res->dropped, &oldest);
	res->stuck_ios = n;
	res->stuck_oldest_ns = n && now > oldest ? now - oldest : 0;
	atomic_store(&m->sh->stop, true);
	atomic_store(&m->sh->abandon, true);
	m->abandoned = true;
	for (i = 0; i < m->nr_jobs; i++)
		perf_job_wake(&m->jobs[i]);
}

/*
 * The signal flag, and whether the I/O in flight has had its time: past
 * the deadline (--time) or a stop (signal, error) by its grace period.
 */
static void watch(struct monitor *m, const struct perf_phase *ph,
		  struct perf_result *res)
{
	uint64_t now, due = 0;

	check_interrupt(m, res);
	if (m->abandoned)
		return;
	now = perf_now();
	if (atomic_load(&m->sh->stop)) {
		if (!m->stop_seen)
			m->stop_seen = now;
		due = m->stop_seen +
		      (res->interrupted ? SIGNAL_GRACE_NS : m->grace_ns);
	}
	if (ph->deadline && (!due || ph->deadline + m->grace_ns < due))
		due = ph->deadline + m->grace_ns;
	if (due && now >= due)
		abandon(m, res, now);
}

/* wait_jobs() in short slices, watching for signals and stuck I/O. */
static bool wait_watch(struct monitor *m, const struct perf_phase *ph,
		       struct perf_result *res, uint64_t until)
{
	for (;;) {
		uint64_t next = perf_now() + WATCH_NS;

		if (wait_jobs(m->sh, m->nr_jobs, next < until ? next : until))
			return true;
		watch(m, ph, res);
		if (perf_now() >= until)
			return false;
	}
}

static int start_jobs(struct perf_job *jobs, unsigned int n, pthread_t *tids,
		      char *err, size_t errlen)
{
	unsigned int i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = pthread_create(&tids[i], NULL, perf_job_main, &jobs[i]);
		if (rc) {
			snprintf(err, errlen, "cannot start job thread: %s",
				 strerror(rc));
			atomic_store(&jobs[0].sh->stop, true);
			while (i--)
				pthread_join(tids[i], NULL);
			return -rc;
		}
	}
	return 0;
}

static void join_jobs(pthread_t *tids, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
}

/*
 * QoS counters of the job queues: @sign -1 when the jobs start, +1 at the
 * end of the measured window, so that res->qosq holds what happened in
 * between (the first activation included, the ramp too).
 */
static void qos_window(const struct monitor *m, struct perf_result *res,
		       int sign)
{
	struct nvq_qos_poll_stats ps;
	struct nvq_qos_stats st;
	unsigned int i;

	for (i = 0; i < res->nr_qos && i < m->nr_jobs; i++) {
		struct perf_qos_queue *x = &res->qosq[i];
		struct nvq_qos_queue *qq = nvq_queue_qos(m->jobs[i].q);
		struct nvq_qos_poll_stats *p = &x->poll;

		nvq_qos_queue_stats(qq, &st);
		x->applies += (uint64_t)sign * st.applies;
		x->releases += (uint64_t)sign * st.releases;
		x->held_ns += (uint64_t)sign * st.held_ns;
		nvq_qos_queue_poll_stats(qq, &ps);
		p->polls += (uint64_t)sign * ps.polls;
		p->poll_ns += (uint64_t)sign * ps.poll_ns;
		p->sleeps += (uint64_t)sign * ps.sleeps;
		p->sleep_ns += (uint64_t)sign * ps.sleep_ns;
		p->overslept += (uint64_t)sign * ps.overslept;
		p->idle_sleeps += (uint64_t)sign * ps.idle_sleeps;
		p->masked += (uint64_t)sign * ps.masked;
		/* an estimate, not a counter: its value at the end */
		p->est_ns = ps.est_ns;
	}
}

/*
 * The measured phase: watch the jobs, take bandwidth samples every
 * PERF_SAMPLE_NS from the end of the ramp, and CPU / idle snapshots at the
 * ends of the measured window.
 */
static void monitor_run(struct monitor *m, const struct perf_phase *ph,
			struct perf_result *res)
{
	struct perf_idle_snap idle0 = { 0 }, idle1 = { 0 };
	struct perf_cpu_snap cpu0, cpu1;
	struct perf_machine_snap mach0, mach1;
	uint64_t tick, start, end, now, eta_end;
	double iops = 0, bw = 0;
	bool have_idle0, have_cpu0, have_mach0, done = false;
	unsigned int nticks = 0;

	eta_end = ph->deadline;
	/* Ramp: no samples, only the status line. */
	while (!done && (now = perf_now()) < ph->ramp_end) {
		uint64_t next = now + STATUS_EVERY * PERF_SAMPLE_NS;

		done = wait_watch(m, ph, res,
				  next < ph->ramp_end ? next : ph->ramp_end);
		status_line(m, "ramp", perf_now(), ph->t_begin,
			    ph->deadline ? ph->deadline : ph->ramp_end, 0, 0);
	}
	start = perf_now();
	have_idle0 = !perf_idle_snapshot(&idle0, NULL);
	res->have_loadavg = !perf_loadavg(res->loadavg, NULL);
	have_mach0 = !perf_machine_snapshot(&mach0, NULL, 0);
	have_cpu0 = !perf_cpu_snapshot(&cpu0);
	progress(m, m->last_bytes, &m->last_ios);
	tick = start;
	while (!done) {
		done = wait_watch(m, ph, res, tick + PERF_SAMPLE_NS);
		now = perf_now();
		if (done)
			break;
		sample(m, now - tick, true, &iops, &bw);
		tick = now;
		if (++nticks % STATUS_EVERY == 0) {
			uint64_t e = eta_end;

			if (!e && ph->ios) {
				double frac = (double)m->last_ios /
					      ((double)ph->ios * m->nr_jobs);

				if (frac > 0.01)
					e = start +
					    (uint64_t)((now - start) / frac);
			}
			status_line(m, "run", now, ph->t_begin, e, iops, bw);
		}
	}
	end = perf_now();
	res->have_proc_cpu = !perf_cpu_snapshot(&cpu1) && have_cpu0;
	if (res->have_proc_cpu)
		res->proc_cpu_ns = (cpu1.usr_ns + cpu1.sys_ns) -
				   (cpu0.usr_ns + cpu0.sys_ns);
	/* Counters that went backwards (a CPU went offline) mean nothing. */
	if (have_mach0 && !perf_machine_snapshot(&mach1, NULL, 0) &&
	    mach1.busy_ns >= mach0.busy_ns &&
	    mach1.total_ns >= mach0.total_ns) {
		res->have_machine = true;
		res->machine_busy_ns = mach1.busy_ns - mach0.busy_ns;
		res->machine_total_ns = mach1.total_ns - mach0.total_ns;
		res->machine_cpus = mach1.nr_cpus;
	}
	qos_window(m, res, 1);
	res->qos_span_ns = end - ph->t_begin;
	/* A run shorter than one interval still gets one sample. */
	if (!m->bw[PERF_DIR_ALL].n && end > tick)
		sample(m, end - tick, true, &iops, &bw);
	if (have_idle0 && !perf_idle_snapshot(&idle1, NULL)) {
		res->have_idle = !perf_idle_diff(&idle0, &idle1, end - start,
						 &res->idle);
	}
	perf_idle_snap_free(&idle0);
	perf_idle_snap_free(&idle1);
	res->wall_ns = end - start;
	if (res->wall_ns) {
		res->usr_pct = (double)(cpu1.usr_ns - cpu0.usr_ns) * 100.0 /
			       (double)res->wall_ns;
		res->sys_pct = (double)(cpu1.sys_ns - cpu0.sys_ns) * 100.0 /
			       (double)res->wall_ns;
	}
	res->ctx_switches = (cpu1.vctx - cpu0.vctx) + (cpu1.ivctx - cpu0.ivctx);
	res->majflt = cpu1.majflt - cpu0.majflt;
	res->minflt = cpu1.minflt - cpu0.minflt;
	for (unsigned int d = 0; d <= PERF_NR_DIRS; d++) {
		rate_done(&m->bw[d], &res->bw[d]);
		rate_done(&m->iops[d], &res->iops[d]);
	}
}

/* A phase without measurements (the --verify read-back). */
static void monitor_quiet(struct monitor *m, const struct perf_phase *ph,
			  struct perf_result *res)
{
	bool done = false;

	while (!done) {
		done = wait_watch(m, ph, res,
				  perf_now() + STATUS_EVERY * PERF_SAMPLE_NS);
		if (!done && m->ctl && m->ctl->status) {
			fprintf(stderr, "\r\033[K%s%s%sverifying",
				m->ctl->tag ? "[" : "",
				m->ctl->tag ? m->ctl->tag : "",
				m->ctl->tag ? "] " : "");
			fflush(stderr);
			m->status_drawn = true;
		}
	}
}

/* What the controller's failure path did during the run (it opened for
 * this run, so its counters are this run's). */
static void recovery_read(struct nvq_ctrl *ctrl, struct perf_result *res)
{
	res->have_recovery = !nvq_ctrl_stats(ctrl, &res->recovery);
	if (nvq_ctrl_timeouts(ctrl, &res->io_timeout_ms,
			      &res->admin_timeout_ms)) {
		res->io_timeout_ms = 0;
		res->admin_timeout_ms = 0;
	}
}

static void copy_model(char *dst, size_t len, const struct nvq_ctrl *ctrl)
{
	const struct nvq_id_ctrl *id = nvq_ctrl_id(ctrl);
	size_t n;

	dst[0] = '\0';
	if (!id)
		return;
	n = sizeof(id->mn) < len - 1 ? sizeof(id->mn) : len - 1;
	memcpy(dst, id->mn, n);
	dst[n] = '\0';
	/* Identify strings are space padded ASCII; keep them printable. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)dst[i] < 0x20 ||
		    (unsigned char)dst[i] > 0x7e)
			dst[i] = '?';
	while (n && dst[n - 1] == ' ')
		dst[--n] = '\0';
}

/* The first active namespace, 0 if none (for messages). */
static uint32_t first_nsid(struct nvq_ctrl *ctrl)
{
	uint32_t nsid = 0;

	return nvq_ns_list(ctrl, &nsid, 1) > 0 ? nsid : 0;
}

static uint32_t make_run_id(void)
{
	uint64_t s = perf_now() ^ ((uint64_t)getpid() << 32);
	uint32_t id;

	s = (s ^ (s >> 31)) * 0x7fb5d329728ea185ull;
	s = (s ^ (s >> 27)) * 0x81dadef4bc2dd44dull;
	id = (uint32_t)(s ^ (s >> 33));
	return id ? id : 1;
}

/*
 * The namespace -d names with its /NSID suffix into *@nsid (0: none) and
 * the URI without it into @buf: the library's grammar (nvq_open() reads
 * it alike), so that a malformed suffix is a usage error before any open.
 */
static int uri_nsid(const struct perf_config *cfg, char *buf, size_t len,
		    uint32_t *nsid, char *err, size_t errlen)
{
	if (nvq_uri_split_nsid(cfg->uri, buf, len, nsid))
		return usage_err(err, errlen, "-d %s: %s", cfg->uri,
				 nvq_errmsg());
	if (*nsid && cfg->nsid && *nsid != cfg->nsid)
		return usage_err(err, errlen,
				 "--nsid %u: -d %s names namespace %u",
				 cfg->nsid, cfg->uri, *nsid);
	return 0;
}

/*
 * The namespace's metadata format and how this run drives it (docs/
 * perf.md, fio's io_uring_cmd rules): fills the metadata part of @t and
 * res->md. Refuses, exit 2, only what cannot work.
 */
static int md_setup(const struct perf_config *cfg, struct nvq_ctrl *ctrl,
		    uint32_t nsid, uint32_t lba_size, struct perf_target *t,
		    struct perf_result *res, char *err, size_t errlen)
{
	struct perf_md_info *m = &res->md;
	struct nvq_ns_format fmt;
	char chk[32];
	bool xfer_md;
	int rc;

	rc = nvq_ns_format(ctrl, nsid, &fmt);
	if (rc) {
		snprintf(err, errlen, "namespace %u: %s", nsid, nvq_errmsg());
		return rc;
	}
	memset(m, 0, sizeof(*m));
	t->blk = t->buf_blk = lba_size;
	t->md_blk = 0;
	if (!fmt.pi_type && cfg->pi_chk_set && cfg->pi_chk)
		return usage_err(
			err, errlen,
			"--pi-chk %s: namespace %u has no protection "
			"information",
			perf_pi_chk_name(cfg->pi_chk, chk, sizeof(chk)), nsid);
	if (!fmt.pi_type && cfg->pi_verify)
		return usage_err(err, errlen,
				 "--pi-verify: namespace %u has no protection "
				 "information",
				 nsid);
	m->blk = lba_size;
	if (!fmt.ms)
		return 0; /* the plain path, as before */
	m->ms = t->ms = fmt.ms;
	m->extended = fmt.extended;
	m->pi_type = t->pi_type = fmt.pi_type;
	m->pi_first = fmt.pi_first;
	t->md_io = true;
	if (fmt.pi_type) {
		m->pract = cfg->pi_act;
		m->host_pi = t->host_pi = !cfg->pi_act;
		m->pi_verify = t->pi_verify = cfg->pi_verify;
		m->prchk = cfg->pi_chk_set ? cfg->pi_chk :
					     NVQ_IO_PRCHK_GUARD |
						     (fmt.pi_type != 3 ?
							      NVQ_IO_PRCHK_REF :
							      0);
		t->io_flags = m->prchk | (m->pract ? NVQ_IO_PRACT : 0);
		m->apptag = t->apptag = cfg->apptag;
		m->appmask = t->appmask = cfg->apptag_mask;
	}
	/* PRACT with 8 bytes of metadata: all PI, none transferred */
	xfer_md = !(m->pract && fmt.ms == fmt.pi_size);
	if (fmt.extended) {
		t->buf_blk = lba_size + fmt.ms; /* what the library maps */
		if (xfer_md)
			t->blk = t->buf_blk;
	} else if (xfer_md) {
		t->md_blk = fmt.ms;
	}
	m->blk = t->blk;
	if (cfg->verify && fmt.extended && fmt.pi_type && xfer_md)
		return usage_err(err, errlen,
				 "--verify: namespace %u has its PI in the "
				 "data buffer (extended LBAs), where --verify "
				 "blocks would overwrite it (fio refuses it "
				 "too); use --pi-act 1 with 8 bytes of "
				 "metadata, or no --verify",
				 nsid);
	return 0;
}

/*
 * Resolve namespace and region; fills @t and the device part of @res.
 * @uri_nsid: the namespace the URI names, 0 for none.
 */
static int resolve_target(const struct perf_config *cfg, struct nvq_ctrl *ctrl,
			  uint32_t uri_nsid, struct perf_target *t,
			  struct perf_result *res, char *err, size_t errlen)
{
	struct nvq_ns_info info;
	uint64_t ns_bytes, region, end, nlb;
	uint32_t nsid = uri_nsid ? uri_nsid : cfg->nsid, blk;
	int rc;

	if (!nsid) {
		rc = nvq_ns_list(ctrl, &nsid, 1);
		if (rc < 0) {
			snprintf(err, errlen, "listing namespaces: %s",
				 nvq_errmsg());
			return rc;
		}
		if (!rc)
			return usage_err(err, errlen,
					 "-d %s: the controller has no active "
					 "namespace",
					 cfg->uri);
	}
	rc = nvq_ns_info(ctrl, nsid, &info);
	if (rc == -ENOENT && uri_nsid)
		return usage_err(err, errlen,
				 "-d %s: namespace %u is not active (the "
				 "controller's first is %u)",
				 cfg->uri, nsid, first_nsid(ctrl));
	if (rc == -ENOENT)
		return usage_err(err, errlen,
				 "--nsid %u: namespace not active on %s", nsid,
				 cfg->uri);
	if (rc) {
		snprintf(err, errlen, "namespace %u: %s", nsid, nvq_errmsg());
		return rc;
	}
	if (!info.lba_size || !info.nlba) {
		snprintf(err, errlen, "namespace %u: unusable geometry", nsid);
		return -EIO;
	}
	rc = md_setup(cfg, ctrl, nsid, info.lba_size, t, res, err, errlen);
	if (rc)
		return rc;
	blk = t->blk;
	if (info.nlba > UINT64_MAX / blk) {
		snprintf(err, errlen, "namespace %u: unusable geometry", nsid);
		return -EIO;
	}
	ns_bytes = info.nlba * blk;
	if (cfg->bs % blk)
		return usage_err(
			err, errlen,
			"--bs %llu: not a multiple of the %u-byte "
			"%s of namespace %u",
			(unsigned long long)cfg->bs, blk,
			blk == info.lba_size ?
				"LBA size" :
				"LBA size with metadata (extended LBA)",
			nsid);
	if (cfg->verify && blk < PERF_VERIFY_HDR)
		return usage_err(err, errlen,
				 "--verify: LBA size %u is too small", blk);
	if (cfg->offset % blk)
		return usage_err(err, errlen,
				 "--offset %llu: not a multiple of the "
				 "%u-byte LBA size",
				 (unsigned long long)cfg->offset, blk);
	if (cfg->offset >= ns_bytes)
		return usage_err(err, errlen,
				 "--offset %llu: beyond the end of namespace "
				 "%u (%llu bytes)",
				 (unsigned long long)cfg->offset, nsid,
				 (unsigned long long)ns_bytes);
	region = cfg->size ? cfg->size : ns_bytes - cfg->offset;
	if (__builtin_add_overflow(cfg->offset, region, &end) || end > ns_bytes)
		return usage_err(err, errlen,
				 "--size %llu: the region ends beyond "
				 "namespace %u (%llu bytes)",
				 (unsigned long long)region, nsid,
				 (unsigned long long)ns_bytes);
	if (region < cfg->bs)
		return usage_err(err, errlen,
				 "--size %llu: smaller than one --bs %llu I/O",
				 (unsigned long long)region,
				 (unsigned long long)cfg->bs);
	nlb = cfg->bs / blk;
	t->buf_bytes = nlb * t->buf_blk;
	t->md_bytes = nlb * t->md_blk;
	res->md.md_per_io = t->md_bytes;
	t->ctrl = ctrl;
	t->nsid = nsid;
	t->lba_size = info.lba_size;
	t->bs = cfg->bs;
	t->nlb = (uint32_t)nlb;
	t->region_lba = cfg->offset / blk;
	t->region_blocks = region / cfg->bs;
	/* --verify: random offsets too stay in each thread's slice */
	if ((!perf_rw_random(cfg->rw) || cfg->verify) &&
	    t->region_blocks < cfg->threads)
		return usage_err(err, errlen,
				 "--size: %llu blocks of --bs %llu cannot be "
				 "split among %u threads",
				 (unsigned long long)t->region_blocks,
				 (unsigned long long)cfg->bs, cfg->threads);
	res->nsid = nsid;
	res->lba_size = info.lba_size;
	res->ns_bytes = ns_bytes;
	return 0;
}

/*
 * --verify writes never have two I/Os to one block in flight (job.c), so
 * a thread keeps no more in flight than its slice of the region has
 * blocks: say so when that is below --qd.
 */
static void verify_depth_note(const struct perf_config *cfg,
			      const struct perf_target *t)
{
	static bool noted;
	uint64_t per = t->region_blocks / cfg->threads;

	if (!cfg->verify || perf_read_pct(cfg) >= 100 || per >= cfg->qd ||
	    noted)
		return;
	fprintf(stderr,
		"nvq-perf: --verify: at most %llu I/Os in flight per thread, "
		"not --qd %u: one per block of its share of --size\n",
		(unsigned long long)per, cfg->qd);
	noted = true;
}

/*
 * The QoS setting as the library took it, one queue entry per job queue
 * that has QoS state, and the one-time note when limits cannot be placed.
 */
static int qos_setup(const struct perf_config *cfg, struct nvq_ctrl *ctrl,
		     struct perf_result *res, char *err, size_t errlen)
{
	static bool warned;
	unsigned int i;

	nvq_qos_info(nvq_ctrl_qos(ctrl), &res->qos);
	nvq_qos_method_info(nvq_ctrl_qos(ctrl), &res->method);
	/* Waiter polling needs no permission: only cpuidle goes without. */
	if (cfg->cpu_lat_limit_us != NVQ_QOS_OFF && res->qos.status[0] &&
	    res->method.method == NVQ_QOS_METHOD_CPUIDLE && !warned) {
		fprintf(stderr,
			"nvq-perf: --cpu-lat-limit-us: %s (runs continue "
			"without the limit)\n",
			res->qos.status);
		warned = true;
	}
	res->qosq = calloc(cfg->threads, sizeof(*res->qosq));
	if (!res->qosq) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < cfg->threads; i++) {
		struct nvq_queue *q = nvq_ctrl_queue(ctrl, i);

		if (!q || !nvq_queue_qos(q))
			break;
		res->qosq[i].qid = nvq_queue_id(q);
	}
	res->nr_qos = i;
	return 0;
}

/* The CPUs this process may run on (taskset, cgroup cpusets). */
static unsigned int online_cpus(void)
{
	cpu_set_t set;
	long n;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return (unsigned int)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1;
}

/* The CPU that ran most callbacks (res->cpl_count from the jobs). */
static void completion_cpu(struct perf_result *res)
{
	uint64_t total = 0, best = 0;
	unsigned int i;

	for (i = 0; i < PERF_CPL_CPUS; i++) {
		total += res->cpl_count[i];
		if (res->cpl_count[i] > best) {
			best = res->cpl_count[i];
			res->cpl_cpu = (int)i;
		}
	}
	res->cpl_share = total ? (double)best / (double)total : 0;
}

int perf_run(const struct perf_config *cfg, const struct perf_run_ctl *ctl,
	     struct perf_result *res, char *err, size_t errlen)
{
	struct perf_phase phase = { 0 }, vphase;
	struct perf_shared sh = { 0 };
	struct perf_target tgt = { 0 };
	struct monitor mon = { 0 };
	struct perf_job *jobs = NULL;
	pthread_t *tids = NULL;
	struct nvq_ctrl *ctrl;
	struct nvq_opts opts;
	pthread_condattr_t ca;
	unsigned int i, nr_init = 0;
	/* Requests one queue must hold: every thread's with --shared-queue. */
	uint64_t per_queue =
		(uint64_t)cfg->qd * (cfg->shared_queue ? cfg->threads : 1);
	const char *open_uri, *dev_uri;
	char uribuf[PATH_MAX + 64], nsbuf[PATH_MAX + 64];
	uint32_t nsid;
	uint64_t last = 0;
	bool all_idle = true;
	int rc;

	res->cfg = cfg;
	nvq_opts_init(&opts);
	opts.nr_queues = cfg->shared_queue ? 1 : cfg->threads;
	opts.mode = cfg->mode;
	opts.exclusive = cfg->exclusive;
	opts.cpu_lat_limit_us = cfg->cpu_lat_limit_us;
	opts.cpu_lat_method = cfg->cpu_lat_method;
	if (cfg->cpu_lat_timeout_ms)
		opts.cpu_lat_timeout_ms = cfg->cpu_lat_timeout_ms;
	opts.io_timeout_ms = cfg->io_timeout_ms;
	opts.admin_timeout_ms = cfg->admin_timeout_ms;
	if (per_queue >= 256)
		opts.queue_depth = per_queue + 1 > 65536 ?
					   65536 :
					   (unsigned int)per_queue + 1;
	rc = uri_nsid(cfg, nsbuf, sizeof(nsbuf), &nsid, err, errlen);
	if (rc)
		return rc;
	dev_uri = nsbuf;
	/* On the emulator, completions carry their posting time. */
	open_uri =
		perf_stamp_uri(dev_uri, uribuf, sizeof(uribuf), &tgt.stamped);
	if (!open_uri) {
		open_uri = dev_uri;
		tgt.stamped = false;
	}
	res->stamped = tgt.stamped;
	/* the library's completion threads reap where nvq-perf cannot see */
	res->have_complete = cfg->mode != NVQ_MODE_THREAD;
	rc = nvq_open_flags(open_uri, &opts,
			    cfg->single_lock ? NVQ_OPEN_SINGLE_LOCK : 0, &ctrl);
	if (rc) {
		snprintf(err, errlen, "-d %s: %s", cfg->uri,
			 nvq_errmsg()[0] ? nvq_errmsg() : strerror(-rc));
		return rc == -EINVAL ? PERF_EUSAGE : rc;
	}
	copy_model(res->model, sizeof(res->model), ctrl);
	res->nr_queues = nvq_ctrl_queue_count(ctrl);
	rc = resolve_target(cfg, ctrl, nsid, &tgt, res, err, errlen);
	if (rc)
		goto out_close;
	if (!cfg->shared_queue && res->nr_queues < cfg->threads) {
		rc = usage_err(err, errlen,
			       "--threads %u: the controller granted only %u "
			       "I/O queues",
			       cfg->threads, res->nr_queues);
		goto out_close;
	}
	verify_depth_note(cfg, &tgt);
	tgt.run_id = make_run_id();
	res->run_id = tgt.run_id;
	rc = qos_setup(cfg, ctrl, res, err, errlen);
	if (rc)
		goto out_close;

	pthread_mutex_init(&sh.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sh.cond, &ca);
	pthread_condattr_destroy(&ca);
	sh.tgt = &tgt;
	sh.phase = &phase;

	jobs = calloc(cfg->threads, sizeof(*jobs));
	tids = calloc(cfg->threads, sizeof(*tids));
	if (!jobs || !tids) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < cfg->threads; i++) {
		struct nvq_queue *q =
			nvq_ctrl_queue(ctrl, cfg->shared_queue ? 0 : i);

		if (!q) {
			snprintf(err, errlen, "I/O queue %u missing", i);
			rc = -EIO;
			goto out_free;
		}
		rc = perf_job_init(&jobs[i], &sh, cfg, q, i, cfg->threads, err,
				   errlen);
		nr_init = i + 1;
		if (rc)
			goto out_free;
		/*
		 * More pollers than CPUs: each empty poll yields. The library
		 * itself lends an in-process device (the emulator) the CPU of
		 * a poller that finds nothing (nvq_transport_idle()).
		 */
		jobs[i].yield_empty = cfg->mode == NVQ_MODE_POLL &&
				      cfg->threads > online_cpus();
	}

	phase.random = perf_rw_random(cfg->rw);
	phase.read_pct = perf_read_pct(cfg);
	phase.record = true;
	phase.ios = cfg->ios;
	phase.one_pass = !cfg->time_ns && !cfg->ios;
	phase.verify_fill = cfg->verify;
	phase.verify_check = cfg->verify;
	phase.check_run_id = 0; /* data of an earlier run */
	phase.think_ns = cfg->think_ns;
	if (cfg->rate_iops)
		phase.rate_ns =
			(1000000000ull + cfg->rate_iops / 2) / cfg->rate_iops;
	for (i = 0; i < cfg->threads; i++)
		perf_job_rearm(&jobs[i]);

	mon.ctl = ctl;
	mon.cfg = cfg;
	mon.sh = &sh;
	mon.jobs = jobs;
	mon.nr_jobs = cfg->threads;
	mon.grace_ns = cfg->time_ns / 10;
	if (mon.grace_ns < GRACE_MIN_NS)
		mon.grace_ns = GRACE_MIN_NS;
	if (mon.grace_ns > GRACE_MAX_NS)
		mon.grace_ns = GRACE_MAX_NS;

	qos_window(&mon, res, -1);
	phase.t_begin = perf_now();
	phase.ramp_end = phase.t_begin + cfg->ramp_ns;
	phase.deadline = cfg->time_ns ? phase.ramp_end + cfg->time_ns : 0;
	rc = start_jobs(jobs, cfg->threads, tids, err, errlen);
	if (rc)
		goto out_free;
	monitor_run(&mon, &phase, res);
	join_jobs(tids, cfg->threads);
	nvq_qos_method_info(nvq_ctrl_qos(ctrl), &res->method);

	/* Read back what this run wrote, exactly where it wrote it. */
	if (cfg->verify && phase.read_pct < 100 && !atomic_load(&sh.stop)) {
		vphase = phase;
		vphase.read_pct = 100;
		vphase.record = false;
		vphase.ios = 0;
		vphase.one_pass = false;
		vphase.deadline = 0;
		vphase.ramp_end = 0;
		vphase.verify_fill = false;
		vphase.verify_check = true;
		vphase.check_run_id = tgt.run_id;
		vphase.replay = true;
		/* the check reads back as fast as it can */
		vphase.think_ns = 0;
		vphase.rate_ns = 0;
		sh.phase = &vphase;
		sh.finished = 0;
		for (i = 0; i < cfg->threads; i++)
			perf_job_rearm(&jobs[i]);
		rc = start_jobs(jobs, cfg->threads, tids, err, errlen);
		if (rc)
			goto out_free;
		monitor_quiet(&mon, &vphase, res);
		join_jobs(tids, cfg->threads);
	}
	status_clear(&mon);
	recovery_read(ctrl, res);
	/*
	 * I/O given up on: nvq_close() cancels it, and its callbacks (and
	 * the completion threads) are done before the counts are read.
	 * Lane buffers the device may still have written go with it.
	 */
	for (i = 0; i < nr_init; i++)
		if (!perf_job_idle(&jobs[i]))
			all_idle = false;
	if (!all_idle) {
		nvq_close(ctrl);
		ctrl = NULL;
	}

	for (i = 0; i < cfg->threads; i++) {
		uint64_t l = perf_job_collect(&jobs[i], res);

		if (l > last)
			last = l;
	}
	res->runtime_ns = last > phase.ramp_end ? last - phase.ramp_end : 0;
	completion_cpu(res);
	rc = 0;

out_free:
	status_clear(&mon);
	if (ctrl)
		for (i = 0; i < nr_init; i++)
			if (!perf_job_idle(&jobs[i]))
				all_idle = false;
	/* DMA memory the device may still write is freed by nvq_close(). */
	if (all_idle && ctrl)
		for (i = 0; i < nr_init; i++)
			perf_job_release(&jobs[i], true);
	if (ctrl)
		nvq_close(ctrl);
	ctrl = NULL;
	if (!all_idle)
		for (i = 0; i < nr_init; i++)
			perf_job_release(&jobs[i], false);
	free(jobs);
	free(tids);
	if (sh.tgt) {
		pthread_mutex_destroy(&sh.lock);
		pthread_cond_destroy(&sh.cond);
	}
	return rc;

out_close:
	nvq_close(ctrl);
	return rc;
}
