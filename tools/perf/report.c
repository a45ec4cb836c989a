/* SPDX-License-Identifier: MIT */
/* Text and JSON reports. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvq/version.h>

#include "compare.h"
#include "format.h"
#include "json.h"
#include "report.h"

static const char *dir_name[PERF_NR_DIRS] = { "read", "write" };

static void lat_line(FILE *f, const char *name, const struct perf_stat *h)
{
	const char *unit;
	double div;

	perf_lat_unit(h->min, perf_stat_mean(h), &div, &unit);
	fprintf(f, "    %4s (%s): min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f\n",
		name, unit, h->min / div, h->max / div, perf_stat_mean(h) / div,
		perf_stat_stddev(h) / div);
}

/*
 * fio's show_clat_percentiles(): the unit from the smallest and largest
 * value, a field as wide as the largest, as many per line as fit in 80
 * columns.
 */
static void pct_lines(FILE *f, const struct perf_hist *h)
{
	uint64_t v[PERF_NR_PCT], minv, maxv, div = 1;
	const char *unit = "nsec";
	unsigned int i, scale = 0, per_line;
	int width;

	if (!h->n)
		return;
	perf_hist_percentiles(h, perf_pct_list, PERF_NR_PCT, v);
	minv = maxv = v[0];
	for (i = 1; i < PERF_NR_PCT; i++) {
		if (v[i] < minv)
			minv = v[i];
		if (v[i] > maxv)
			maxv = v[i];
	}
	if (minv > 2000000 && maxv > 99999999ull) {
		scale = 2;
		div = 1000000;
		unit = "msec";
	} else if (minv > 2000 && maxv > 99999) {
		scale = 1;
		div = 1000;
		unit = "usec";
	}
	width = maxv / div ? (int)log10((double)(maxv / div)) + 1 : 0;
	if (width < 5)
		width = 5;
	per_line = (80 - 7) / (2 + 10 + (unsigned int)width);
	fprintf(f, "    clat percentiles (%s):\n     |", unit);
	for (i = 0; i < PERF_NR_PCT; i++) {
		uint64_t x = v[i];
		bool last = i == PERF_NR_PCT - 1;

		if (i && i % per_line == 0)
			fprintf(f, "     |");
		/* fio rounds up at each step down */
		for (unsigned int k = 0; k < scale; k++)
			x = (x + 999) / 1000;
		fprintf(f, " %5.2fth=[%*" PRIu64 "]%c", perf_pct_list[i], width,
			x, last ? '\n' : ',');
		if (!last && i % per_line == per_line - 1)
			fputc('\n', f);
	}
}

/*
 * fio's latency buckets of clat over both directions, in percent of the
 * measured I/Os; a bucket that has any I/O shows at least 0.01 %.
 */
static void fio_lat_pct(const struct perf_result *r,
			double pct[PERF_FIO_LAT_NR])
{
	double cnt[PERF_FIO_LAT_NR] = { 0 };
	uint64_t total = perf_result_ios(r);
	unsigned int d, i;

	for (d = 0; d < PERF_NR_DIRS; d++)
		perf_hist_fio_lat(&r->dir[d].clat, cnt);
	for (i = 0; i < PERF_FIO_LAT_NR; i++) {
		pct[i] = total ? cnt[i] * 100.0 / (double)total : 0;
		if (cnt[i] > 0 && pct[i] < 0.01)
			pct[i] = 0.01;
	}
}

/* fio's show_lat(): the non-zero buckets of one unit, five a line. */
static void lat_dist_unit(FILE *f, const double *pct, const char *const *label,
			  unsigned int n, const char *unit)
{
	unsigned int i, on_line = 0;
	bool any = false;

	for (i = 0; i < n; i++) {
		if (pct[i] <= 0)
			continue;
		if (!on_line)
			fprintf(f, "%s  lat (%s)   : ", any ? "\n" : "", unit);
		else
			fprintf(f, ", ");
		fprintf(f, "%s=%3.2f%%", label[i], pct[i]);
		any = true;
		if (++on_line == 5)
			on_line = 0;
	}
	if (any)
		fputc('\n', f);
}

static void lat_dist_text(FILE *f, const struct perf_result *r)
{
	double pct[PERF_FIO_LAT_NR];

	fio_lat_pct(r, pct);
	lat_dist_unit(f, pct, perf_fio_lat_label, PERF_FIO_LAT_N, "nsec");
	lat_dist_unit(f, pct + PERF_FIO_LAT_N,
		      perf_fio_lat_label + PERF_FIO_LAT_N, PERF_FIO_LAT_U,
		      "usec");
	lat_dist_unit(f, pct + PERF_FIO_LAT_N + PERF_FIO_LAT_U,
		      perf_fio_lat_label + PERF_FIO_LAT_N + PERF_FIO_LAT_U,
		      PERF_FIO_LAT_M, "msec");
}

/* fio's stat_calc_dist(): percent of @total, non-zero at least 0.1 %. */
static void depth_pct(const uint64_t *map, uint64_t total, double *pct)
{
	unsigned int i;

	for (i = 0; i < PERF_DEPTH_BUCKETS; i++) {
		pct[i] = total ? (double)map[i] * 100.0 / (double)total : 0;
		if (map[i] && pct[i] < 0.1)
			pct[i] = 0.1;
	}
}

static uint64_t depth_level_total(const struct perf_depths *dp)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < PERF_DEPTH_BUCKETS; i++)
		n += dp->level[i];
	return n;
}

static const char *const depth_level_label[PERF_DEPTH_BUCKETS] = {
	"1", "2", "4", "8", "16", "32", ">=64"
};
static const char *const depth_batch_label[PERF_DEPTH_BUCKETS] = {
	"0", "4", "8", "16", "32", "64", ">=64"
};

static void depth_line(FILE *f, const char *head, const char *const *label,
		       const uint64_t *map, uint64_t total)
{
	double pct[PERF_DEPTH_BUCKETS];
	unsigned int i;

	depth_pct(map, total, pct);
	fprintf(f, "%s: ", head);
	for (i = 0; i < PERF_DEPTH_BUCKETS; i++)
		fprintf(f, "%s%s=%3.1f%%", i ? ", " : "", label[i], pct[i]);
	fputc('\n', f);
}

/* fio's "IO depths" block, "issued rwts" and "latency" lines. */
static void depth_text(FILE *f, const struct perf_result *r)
{
	const struct perf_depths *dp = &r->depths;

	depth_line(f, "  IO depths    ", depth_level_label, dp->level,
		   depth_level_total(dp));
	depth_line(f, "     submit    ", depth_batch_label, dp->submit,
		   dp->submits);
	if (r->have_complete)
		depth_line(f, "     complete  ", depth_batch_label,
			   dp->complete, dp->completes);
	else
		fprintf(f, "     complete  : not measured (the completion "
			   "threads reap)\n");
	fprintf(f,
		"     issued rwts: total=%" PRIu64 ",%" PRIu64
		",0,0 short=0,0,0,0 dropped=%" PRIu64 ",%" PRIu64 ",0,0\n",
		r->dir[PERF_DIR_READ].ios, r->dir[PERF_DIR_WRITE].ios,
		r->dropped[PERF_DIR_READ], r->dropped[PERF_DIR_WRITE]);
	fprintf(f,
		"     latency   : target=0, window=0, percentile=100.00%%, "
		"depth=%u\n",
		r->cfg->qd);
}

/* The PI mode of a run, as the text and JSON say it. */
static const char *pi_mode_name(const struct perf_md_info *m)
{
	if (!m->pi_type)
		return "none";
	return m->pract ? "controller" : "host";
}

/* Metadata namespaces: the format and how the run drove it. */
static void md_text(FILE *f, const struct perf_result *r)
{
	const struct perf_md_info *m = &r->md;
	char chk[32];

	if (!m->ms)
		return;
	fprintf(f, "  metadata     : %u bytes per block, %s", m->ms,
		m->extended ? "extended LBA" : "separate");
	if (m->md_per_io)
		fprintf(f, ", %" PRIu64 " bytes per I/O", m->md_per_io);
	if (!m->pi_type) {
		fprintf(f, ", no PI\n");
		return;
	}
	fprintf(f, "; PI type %u (%s 8 bytes)\n", m->pi_type,
		m->pi_first ? "first" : "last");
	fprintf(f,
		"  pi           : %s (%s), check %s, apptag 0x%04x mask "
		"0x%04x%s\n",
		pi_mode_name(m),
		m->pract ? "PRACT: the controller inserts it on writes" :
			   "--pi-act 0: the host generates it",
		perf_pi_chk_name(m->prchk, chk, sizeof(chk)), m->apptag,
		m->appmask, m->pi_verify ? ", host verifies reads" : "");
}
/*
 * One half of the emulator's clat split: median, p99, max and mean, in
 * the unit fio's lat lines pick; the histogram's values are whole
 * nanoseconds, so they print as integers (as fio's min/max), the mean
 * with two decimals.
 */
static void split_line(FILE *f, const char *name, const struct perf_hist *h)
{
	uint64_t v[2];
	static const double p[2] = { 50, 99 };
	const char *unit;
	double div;

	perf_hist_percentiles(h, p, 2, v);
	perf_lat_unit(h->min, perf_hist_mean(h), &div, &unit);
	fprintf(f, "    %6s (%s): p50=%.0f, p99=%.0f, max=%.0f, avg=%.2f\n",
		name, unit, v[0] / div, v[1] / div, h->max / div,
		perf_hist_mean(h) / div);
}

static void dir_text(FILE *f, const struct perf_result *r, unsigned int d)
{
	const struct perf_dir_stats *s = &r->dir[d];
	double secs = (double)r->runtime_ns / 1e9;
	double iops = secs > 0 ? s->ios / secs : 0;
	double bw = secs > 0 ? s->bytes / secs : 0;
	struct perf_stat clat;
	char a[32], b[32];

	fprintf(f, "  %s: IOPS=%s, BW=%.1fMiB/s (%.1fMB/s)(%s/%.0fmsec)\n",
		dir_name[d], perf_fmt_count(a, sizeof(a), iops), bw / 1048576,
		bw / 1e6, perf_fmt_bytes(b, sizeof(b), s->bytes),
		(double)r->runtime_ns / 1e6);
	perf_hist_stat(&s->clat, &clat);
	lat_line(f, "slat", &s->slat);
	lat_line(f, "clat", &clat);
	lat_line(f, "lat", &s->lat);
	pct_lines(f, &s->clat);
	if (r->stamped && s->host.n) {
		fprintf(f,
			"    clat = device + host (emulator stamps at CQE "
			"posting, %" PRIu64 " I/Os sampled, 1 in %u):\n",
			s->host.n, PERF_DEVTIME_EVERY);
		split_line(f, "device", &s->dev);
		split_line(f, "host", &s->host);
	}
	if (s->bad_stamps)
		fprintf(f,
			"    %" PRIu64 " completions without a usable "
			"posting stamp\n",
			s->bad_stamps);
	if (r->bw[d].samples)
		fprintf(f,
			"    bw (  MiB/s): min=%.1f, max=%.1f, avg=%.1f, "
			"stdev=%.1f, samples=%" PRIu64 "\n",
			r->bw[d].min / 1048576, r->bw[d].max / 1048576,
			r->bw[d].mean / 1048576, r->bw[d].dev / 1048576,
			r->bw[d].samples);
	if (r->iops[d].samples) {
		char mn[16], mx[16], av[16], sd[16];

		fprintf(f,
			"    iops        : min=%s, max=%s, avg=%s, stdev=%s, "
			"samples=%" PRIu64 "\n",
			perf_fmt_count(mn, sizeof(mn), r->iops[d].min),
			perf_fmt_count(mx, sizeof(mx), r->iops[d].max),
			perf_fmt_count(av, sizeof(av), r->iops[d].mean),
			perf_fmt_count(sd, sizeof(sd), r->iops[d].dev),
			r->iops[d].samples);
	}
}

static void idle_states(FILE *f, const struct perf_idle *id, const double *pct)
{
	unsigned int k;

	for (k = 0; k < id->nr_states; k++)
		fprintf(f, "%s%s=%.2f%%", k ? ", " : "", id->names[k], pct[k]);
}

/* The completion CPU and its idle residency: where wake-ups cost. */
static void completion_text(FILE *f, const struct perf_result *r)
{
	unsigned int k;

	if (r->cpl_cpu < 0)
		return;
	fprintf(f,
		"  completions  : cpu%d ran %.1f%% of the callbacks (1 in %u "
		"sampled)",
		r->cpl_cpu, r->cpl_share * 100, PERF_CPU_EVERY);
	for (k = 0; r->have_idle && k < r->idle.nr_states; k++) {
		double p = perf_result_cpu_idle(r, r->cpl_cpu, k);

		if (p >= 0)
			fprintf(f, "%s%s=%.2f%%", k ? ", " : "; idle ",
				r->idle.names[k], p);
	}
	fputc('\n', f);
}

/* CPU time per measured I/O: the process's and the machine's. */
static void cpu_per_io_text(FILE *f, const struct perf_result *r)
{
	char a[32];
	double ns;
	bool any = false;

	if (perf_result_cpu_per_io(r, PERF_CPU_PROCESS, &ns)) {
		fprintf(f, "  cpu/io       : process %s",
			perf_fmt_ns(a, sizeof(a), ns));
		any = true;
	}
	if (perf_result_cpu_per_io(r, PERF_CPU_MACHINE, &ns)) {
		fprintf(f, "%smachine %s", any ? ", " : "  cpu/io       : ",
			perf_fmt_ns(a, sizeof(a), ns));
		if (r->machine_total_ns)
			fprintf(f, " (%u CPUs %.1f%% busy, every process)",
				r->machine_cpus,
				(double)r->machine_busy_ns * 100.0 /
					(double)r->machine_total_ns);
		any = true;
	}
	if (perf_result_cpu_per_io(r, PERF_CPU_IDLE_POLL, &ns)) {
		fprintf(f, "%sidle-loop polling %s",
			any ? ",\n                 " : "  cpu/io       : ",
			perf_fmt_ns(a, sizeof(a), ns));
		any = true;
	}
	if (any)
		fputc('\n', f);
}

/*
 * The machine around the run, and what may have distorted it: other work
 * on the CPUs, first touches of memory.
 */
static void machine_text(FILE *f, const struct perf_result *r)
{
	char why[160];
	double other;

	if (r->have_loadavg || perf_result_other_cpus(r, &other)) {
		fprintf(f, "  machine      :");
		if (r->have_loadavg)
			fprintf(f, " load %.2f %.2f %.2f at the start",
				r->loadavg[0], r->loadavg[1], r->loadavg[2]);
		if (perf_result_other_cpus(r, &other))
			fprintf(f, "%s other work took %.2f of %u CPUs",
				r->have_loadavg ? ";" : "", other,
				r->machine_cpus);
		fputc('\n', f);
	}
	if (perf_result_busy(r, why, sizeof(why)))
		fprintf(f,
			"  warning      : a busy machine (%s): the figures are "
			"distorted;\n                 compare only runs made "
			"side by side (--compare)\n",
			why);
	if (perf_result_populating(r))
		fprintf(f,
			"  note         : %" PRIu64 " page faults during the "
			"run: memory was still being\n                 "
			"populated (the emulator's media on first writes: see "
			"emu:populate=1),\n                 and the figures "
			"include the kernel's page-fault path\n",
			r->minflt);
}

/* How the limit is honoured: method, the reason, the wake-up cost. */
static void method_text(FILE *f, const struct perf_result *r)
{
	const struct nvq_qos_method_info *mi = &r->method;
	char a[32], b[32];

	fprintf(f, "                 method %s (requested %s)%s%s\n",
		nvq_qos_method_name(mi->method),
		nvq_qos_method_name(mi->requested), mi->why[0] ? ": " : "",
		mi->why);
	if (mi->wake.samples)
		fprintf(f,
			"                 wake-up cost: p50 %s, p99 %s (%s, %u "
			"samples)\n",
			perf_fmt_ns(a, sizeof(a), (double)mi->wake.p50_ns),
			perf_fmt_ns(b, sizeof(b), (double)mi->wake.p99_ns),
			mi->wake.source[0] ? mi->wake.source : "?",
			mi->wake.samples);
}

/* What the waiters of the job queues did for the limit, summed. */
static void poll_text(FILE *f, const struct perf_result *r)
{
	struct nvq_qos_poll_stats p;
	char a[32], b[32];

	if (!perf_result_poll_sum(r, &p))
		return;
	fprintf(f,
		"                 waiters: polls=%" PRIu64
		" (%s), sleeps=%" PRIu64 " (%" PRIu64
		" overslept, est %s), idle_sleeps=%" PRIu64 ", masked=%" PRIu64
		"\n",
		p.polls, perf_fmt_ns(a, sizeof(a), (double)p.poll_ns), p.sleeps,
		p.overslept, perf_fmt_ns(b, sizeof(b), (double)p.est_ns),
		p.idle_sleeps, p.masked);
}

/* The CPU latency QoS setting and what each queue did with it. */
static void qos_text(FILE *f, const struct perf_result *r)
{
	const struct nvq_qos_info *q = &r->qos;
	double wall = (double)r->qos_span_ns;
	char lim[16];
	unsigned int i;

	if (r->cfg->cpu_lat_limit_us == NVQ_QOS_OFF) {
		fprintf(f, "  cpu-lat      : off");
		if (r->cfg->cpu_lat_method_set)
			fprintf(f, " (--cpu-lat-method %s: no limit to keep)",
				nvq_qos_method_name(r->cfg->cpu_lat_method));
		fputc('\n', f);
		return;
	}
	fprintf(f, "  cpu-lat      : limit %s",
		perf_cpu_lat_name(q->limit_us, lim, sizeof(lim)));
	if (q->effective_us == NVQ_QOS_OFF)
		fprintf(f, " (no limit in effect)");
	else if (q->limit_us == NVQ_QOS_AUTO)
		fprintf(f, " = %d us", q->effective_us);
	fprintf(f, ", timeout %u ms, backend %s\n", q->timeout_ms, q->backend);
	if (q->reason[0])
		fprintf(f, "                 auto: %s\n", q->reason);
	method_text(f, r);
	/* The PM QoS files matter to the cpuidle method only. */
	if (q->status[0] && r->method.method == NVQ_QOS_METHOD_CPUIDLE)
		fprintf(f, "                 not applied: %s\n", q->status);
	if (!r->nr_qos)
		fprintf(f, "                 poll mode: no queue needs a "
			   "limit\n");
	for (i = 0; i < r->nr_qos; i++) {
		const struct perf_qos_queue *x = &r->qosq[i];

		fprintf(f,
			"                 queue %u: applied %" PRIu64
			", released %" PRIu64 ", held %.3f s (%.1f%% of the "
			"run)\n",
			x->qid, x->applies, x->releases, x->held_ns / 1e9,
			wall > 0 ? x->held_ns * 100.0 / wall : 0);
	}
	poll_text(f, r);
}

/* The controller's failure path during the run: every counter the
 * library keeps, and the timeouts that were in force. */
static void recovery_text(FILE *f, const struct perf_result *r)
{
	const struct nvq_ctrl_stats *st = &r->recovery;

	if (!r->have_recovery)
		return;
	fprintf(f,
		"  recovery     : timeouts=%" PRIu64
		", lost_interrupts=%" PRIu64 ", aborts=%" PRIu64
		", resets=%" PRIu64 ", retries=%" PRIu64 ", failed=%" PRIu64
		", bad_cqes=%" PRIu64 "%s\n",
		st->timeouts, st->lost_interrupts, st->aborts, st->resets,
		st->retries, st->failed, st->bad_cqes,
		st->gone ? ", controller gone" : "");
	fprintf(f, "                 io timeout %u ms, admin timeout %u ms\n",
		r->io_timeout_ms, r->admin_timeout_ms);
}

/* I/O the run gave up waiting for; @prefix starts the line. */
static void stuck_line(FILE *f, const char *prefix, const struct perf_result *r)
{
	char age[32];

	fprintf(f,
		"%s%" PRIu64 " I/O%s still in flight when the run ended, the "
		"oldest submitted %s before; cancelled at close, not counted\n",
		prefix, r->stuck_ios, r->stuck_ios == 1 ? "" : "s",
		perf_fmt_ns(age, sizeof(age), (double)r->stuck_oldest_ns));
}

void perf_report_text(FILE *f, const struct perf_result *r)
{
	const struct perf_config *c = r->cfg;
	char bs[16], sz[16];
	unsigned int d, i;
	bool any = false;

	fprintf(f, "nvq-perf: rw=%s", perf_rw_name(c->rw));
	if (c->rw == PERF_RW_RANDRW || c->rw == PERF_RW_RW)
		fprintf(f, " rwmix=%u", c->rwmix);
	fprintf(f, ", bs=%s, qd=%u, threads=%u, mode=%s%s%s%s%s",
		perf_fmt_bytes(bs, sizeof(bs), c->bs), c->qd, c->threads,
		perf_mode_name(c->mode), c->exclusive ? ", exclusive" : "",
		c->shared_queue ? ", shared queue" : "",
		c->single_lock ? ", single lock" : "",
		c->verify ? ", verify" : "");
	if (c->think_ns)
		fprintf(f, ", think=%s",
			perf_fmt_ns(sz, sizeof(sz), (double)c->think_ns));
	if (c->rate_iops)
		fprintf(f, ", rate=%" PRIu64 " IOPS/thread", c->rate_iops);
	fputc('\n', f);
	fprintf(f,
		"  device: %s (%s), nsid %u: %s, %u-byte LBAs, %u I/O "
		"queue%s\n",
		c->uri, r->model[0] ? r->model : "?", r->nsid,
		perf_fmt_bytes(sz, sizeof(sz), r->ns_bytes), r->lba_size,
		r->nr_queues, r->nr_queues == 1 ? "" : "s");
	md_text(f, r);
	for (d = 0; d < PERF_NR_DIRS; d++) {
		if (!r->dir[d].ios)
			continue;
		dir_text(f, r, d);
		any = true;
	}
	if (!any)
		fprintf(f, "  no I/O was measured\n");
	else
		lat_dist_text(f, r);
	fprintf(f,
		"  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%" PRIu64
		", majf=%" PRIu64 ", minf=%" PRIu64
		" (whole process, %% of one CPU)\n",
		r->usr_pct, r->sys_pct, r->ctx_switches, r->majflt, r->minflt);
	if (any)
		depth_text(f, r);
	cpu_per_io_text(f, r);
	machine_text(f, r);
	if (r->have_idle) {
		fprintf(f, "  cpuidle      : ");
		idle_states(f, &r->idle, r->idle.avg);
		fprintf(f, " (mean of %u CPUs)\n", r->idle.nr_cpus);
		for (i = 0; i < r->idle.nr_cpus; i++) {
			fprintf(f, "                 cpu%d: ", r->idle.cpu[i]);
			idle_states(f, &r->idle,
				    &r->idle.pct[i * r->idle.nr_states]);
			fputc('\n', f);
		}
	} else {
		fprintf(f, "  cpuidle      : not available\n");
	}
	completion_text(f, r);
	qos_text(f, r);
	if (c->verify)
		fprintf(f,
			"  verify       : %" PRIu64 " blocks checked, %" PRIu64
			" bad\n",
			r->verify_blocks, r->verify_bad);
	if (r->io_errors)
		fprintf(f, "  errors       : %" PRIu64 " (first: %s)\n",
			r->io_errors, r->errmsg);
	if (r->stuck_ios)
		stuck_line(f, "  stuck        : ", r);
	recovery_text(f, r);
	if (r->interrupted)
		fprintf(f, "  interrupted  : results cover the run until the "
			   "signal\n");
}

uint64_t perf_report_problems(FILE *f, const struct perf_result *r)
{
	unsigned int i;

	if (r->io_errors)
		fprintf(f, "nvq-perf: %" PRIu64 " I/O error%s; first: %s\n",
			r->io_errors, r->io_errors == 1 ? "" : "s", r->errmsg);
	/* not an error of the run: the device's, and reported as such */
	if (r->stuck_ios)
		stuck_line(f, "nvq-perf: the device stopped answering: ", r);
	for (i = 0; i < r->nr_vfail; i++) {
		char msg[256];

		perf_vfail_str(&r->vfail[i], msg, sizeof(msg));
		fprintf(f, "nvq-perf: verify: %s\n", msg);
	}
	if (r->verify_bad)
		fprintf(f,
			"nvq-perf: verify: %" PRIu64 " of %" PRIu64
			" blocks bad%s\n",
			r->verify_bad, r->verify_blocks,
			r->verify_bad > r->nr_vfail ? " (first ones shown)" :
						      "");
	return r->io_errors + r->verify_bad;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

/* fio's latency object without percentiles (its slat_ns and lat_ns). */
static void json_stat_fields(struct json_writer *w, const struct perf_stat *h)
{
	json_uint(w, "min", h->n ? h->min : 0);
	json_uint(w, "max", h->max);
	json_fixed(w, "mean", perf_stat_mean(h), 6);
	json_fixed(w, "stddev", perf_stat_stddev(h), 6);
	json_uint(w, "N", h->n);
}

static void json_stat(struct json_writer *w, const char *key,
		      const struct perf_stat *h)
{
	json_begin_object(w, key);
	json_stat_fields(w, h);
	json_end_object(w);
}

/* ... and with fio's percentiles (its clat_ns). */
static void json_lat(struct json_writer *w, const char *key,
		     const struct perf_hist *h)
{
	uint64_t v[PERF_NR_PCT];
	struct perf_stat st;
	unsigned int i;

	perf_hist_stat(h, &st);
	json_begin_object(w, key);
	json_stat_fields(w, &st);
	if (h->n) {
		perf_hist_percentiles(h, perf_pct_list, PERF_NR_PCT, v);
		json_begin_object(w, "percentile");
		for (i = 0; i < PERF_NR_PCT; i++) {
			char k[32];

			snprintf(k, sizeof(k), "%f", perf_pct_list[i]);
			json_uint(w, k, v[i]);
		}
		json_end_object(w);
	}
	json_end_object(w);
}

static void json_dir(struct json_writer *w, const char *key,
		     const struct perf_result *r, int d)
{
	static const struct perf_dir_stats none;
	const struct perf_dir_stats *s = d >= 0 ? &r->dir[d] : &none;
	struct perf_hist empty;
	double secs = (double)r->runtime_ns / 1e9;
	double bw = secs > 0 && d >= 0 ? s->bytes / secs : 0;
	double iops = secs > 0 && d >= 0 ? s->ios / secs : 0;
	const struct perf_rate *rb = d >= 0 ? &r->bw[d] : NULL;
	const struct perf_rate *ri = d >= 0 ? &r->iops[d] : NULL;

	perf_hist_init(&empty);
	json_begin_object(w, key);
	json_uint(w, "io_bytes", s->bytes);
	json_uint(w, "io_kbytes", s->bytes / 1024);
	json_uint(w, "bw_bytes", (uint64_t)bw);
	json_uint(w, "bw", (uint64_t)(bw / 1024));
	json_fixed(w, "iops", iops, 6);
	json_uint(w, "runtime", s->ios ? r->runtime_ns / 1000000 : 0);
	json_uint(w, "total_ios", s->ios);
	/* No I/O is short: an NVMe command moves all its blocks or fails. */
	json_uint(w, "short_ios", 0);
	/* given up on when the run ended (stuck in the device) */
	json_uint(w, "drop_ios", d >= 0 ? r->dropped[d] : 0);
	json_stat(w, "slat_ns", &s->slat);
	json_lat(w, "clat_ns", d >= 0 ? &s->clat : &empty);
	json_stat(w, "lat_ns", &s->lat);
	/* nvq-perf's own: the emulator's device time / host overhead. */
	if (r->stamped && d >= 0) {
		json_lat(w, "device_ns", &s->dev);
		json_lat(w, "host_ns", &s->host);
	}
	/* fio: bandwidth samples in KiB/s */
	json_uint(w, "bw_min", rb ? (uint64_t)(rb->min / 1024) : 0);
	json_uint(w, "bw_max", rb ? (uint64_t)(rb->max / 1024) : 0);
	/* fio: the mean of the samples in percent of the group's bandwidth,
	 * and a configuration's run is its group */
	json_fixed(w, "bw_agg",
		   rb && rb->samples && bw > 0 ? rb->mean * 100.0 / bw : 0, 6);
	json_fixed(w, "bw_mean", rb ? rb->mean / 1024 : 0, 6);
	json_fixed(w, "bw_dev", rb ? rb->dev / 1024 : 0, 6);
	json_uint(w, "bw_samples", rb ? rb->samples : 0);
	json_uint(w, "iops_min", ri ? (uint64_t)ri->min : 0);
	json_uint(w, "iops_max", ri ? (uint64_t)ri->max : 0);
	json_fixed(w, "iops_mean", ri ? ri->mean : 0, 6);
	json_fixed(w, "iops_stddev", ri ? ri->dev : 0, 6);
	json_uint(w, "iops_samples", ri ? ri->samples : 0);
	json_end_object(w);
}

/* One of fio's depth maps: seven buckets in percent of @total. */
static void json_depth_map(struct json_writer *w, const char *key,
			   const char *const *label, const uint64_t *map,
			   uint64_t total)
{
	double pct[PERF_DEPTH_BUCKETS];
	unsigned int i;

	depth_pct(map, total, pct);
	json_begin_object(w, key);
	for (i = 0; i < PERF_DEPTH_BUCKETS; i++)
		json_fixed(w, label[i], pct[i], 6);
	json_end_object(w);
}

/* fio's iodepth_level, iodepth_submit, iodepth_complete. */
static void json_depths(struct json_writer *w, const struct perf_result *r)
{
	const struct perf_depths *dp = &r->depths;

	json_depth_map(w, "iodepth_level", depth_level_label, dp->level,
		       depth_level_total(dp));
	json_depth_map(w, "iodepth_submit", depth_batch_label, dp->submit,
		       dp->submits);
	/* the completion threads of --mode thread reap out of sight */
	if (r->have_complete)
		json_depth_map(w, "iodepth_complete", depth_batch_label,
			       dp->complete, dp->completes);
}

/* fio's latency_ns, latency_us, latency_ms (clat, both directions). */
static void json_fio_lat(struct json_writer *w, const struct perf_result *r)
{
	static const char *const key[3] = { "latency_ns", "latency_us",
					    "latency_ms" };
	static const unsigned int nr[3] = { PERF_FIO_LAT_N, PERF_FIO_LAT_U,
					    PERF_FIO_LAT_M };
	double pct[PERF_FIO_LAT_NR];
	unsigned int u, i, k = 0;

	fio_lat_pct(r, pct);
	for (u = 0; u < 3; u++) {
		json_begin_object(w, key[u]);
		for (i = 0; i < nr[u]; i++, k++)
			json_fixed(w, perf_fio_lat_label[k], pct[k], 6);
		json_end_object(w);
	}
}

static void json_job_options(struct json_writer *w, const struct perf_config *c,
			     const struct perf_result *r)
{
	char buf[64];

	json_begin_object(w, "job options");
	json_string(w, "ioengine", "nvq");
	json_string(w, "filename", c->uri);
	json_string(w, "rw", perf_rw_name(c->rw));
	if (c->rw == PERF_RW_RANDRW || c->rw == PERF_RW_RW) {
		snprintf(buf, sizeof(buf), "%u", c->rwmix);
		json_string(w, "rwmixread", buf);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->bs);
	json_string(w, "bs", buf);
	snprintf(buf, sizeof(buf), "%u", c->qd);
	json_string(w, "iodepth", buf);
	snprintf(buf, sizeof(buf), "%u", c->threads);
	json_string(w, "numjobs", buf);
	if (c->time_ns) {
		snprintf(buf, sizeof(buf), "%llums",
			 (unsigned long long)(c->time_ns / 1000000));
		json_string(w, "runtime", buf);
	}
	if (c->ios) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->ios);
		json_string(w, "number_ios", buf);
	}
	if (c->ramp_ns) {
		snprintf(buf, sizeof(buf), "%llums",
			 (unsigned long long)(c->ramp_ns / 1000000));
		json_string(w, "ramp_time", buf);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->offset);
	json_string(w, "offset", buf);
	if (c->size) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->size);
		json_string(w, "size", buf);
	}
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c->seed);
	json_string(w, "randseed", buf);
	json_string(w, "mode", perf_mode_name(c->mode));
	if (c->exclusive)
		json_string(w, "exclusive", "1");
	if (!c->exclusive)
		json_string(w, "lock", c->single_lock ? "single" : "split");
	if (c->shared_queue)
		json_string(w, "shared_queue", "1");
	if (c->verify)
		json_string(w, "verify", "crc32c");
	/* fio's io_uring_cmd options, on namespaces with metadata */
	if (r->md.md_per_io) {
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)r->md.md_per_io);
		json_string(w, "md_per_io_size", buf);
	}
	if (r->md.pi_type) {
		json_string(w, "pi_act", r->md.pract ? "1" : "0");
		json_string(w, "pi_chk",
			    perf_pi_chk_name(r->md.prchk, buf, sizeof(buf)));
		snprintf(buf, sizeof(buf), "0x%04x", r->md.apptag);
		json_string(w, "apptag", buf);
		snprintf(buf, sizeof(buf), "0x%04x", r->md.appmask);
		json_string(w, "apptag_mask", buf);
	}
	json_string(w, "cpu_lat_limit_us",
		    perf_cpu_lat_name(c->cpu_lat_limit_us, buf, sizeof(buf)));
	if (c->cpu_lat_timeout_ms) {
		snprintf(buf, sizeof(buf), "%u", c->cpu_lat_timeout_ms);
		json_string(w, "cpu_lat_timeout_ms", buf);
	}
	json_string(w, "cpu_lat_method",
		    nvq_qos_method_name(c->cpu_lat_method));
	/* fio's names; fio's thinktime counts in us */
	if (c->think_ns) {
		snprintf(buf, sizeof(buf), "%lluus",
			 (unsigned long long)((c->think_ns + 999) / 1000));
		json_string(w, "thinktime", buf);
	}
	if (c->rate_iops) {
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)c->rate_iops);
		json_string(w, "rate_iops", buf);
	}
	if (c->io_timeout_ms) {
		snprintf(buf, sizeof(buf), "%u", c->io_timeout_ms);
		json_string(w, "io_timeout_ms", buf);
	}
	if (c->admin_timeout_ms) {
		snprintf(buf, sizeof(buf), "%u", c->admin_timeout_ms);
		json_string(w, "admin_timeout_ms", buf);
	}
	json_end_object(w);
}

static void json_poll(struct json_writer *w, const char *key,
		      const struct nvq_qos_poll_stats *p)
{
	json_begin_object(w, key);
	json_uint(w, "polls", p->polls);
	json_uint(w, "poll_ns", p->poll_ns);
	json_uint(w, "sleeps", p->sleeps);
	json_uint(w, "sleep_ns", p->sleep_ns);
	json_uint(w, "overslept", p->overslept);
	json_uint(w, "est_ns", p->est_ns);
	json_uint(w, "idle_sleeps", p->idle_sleeps);
	json_uint(w, "masked", p->masked);
	json_end_object(w);
}

/* CPU time per measured I/O; only the figures that were measured. */
static void json_cpu_per_io(struct json_writer *w, const struct perf_result *r)
{
	static const struct {
		const char *key;
		enum perf_cpu_kind kind;
	} kinds[] = {
		{ "process", PERF_CPU_PROCESS },
		{ "machine", PERF_CPU_MACHINE },
		{ "idle_poll", PERF_CPU_IDLE_POLL },
	};
	bool open = false;
	unsigned int i;
	double ns;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!perf_result_cpu_per_io(r, kinds[i].kind, &ns))
			continue;
		if (!open)
			json_begin_object(w, "cpu_per_io_ns");
		open = true;
		json_fixed(w, kinds[i].key, ns, 3);
	}
	if (open)
		json_end_object(w);
}

/* nvq-perf's own: QoS setting and per-queue counters, completion CPU. */
static void json_qos(struct json_writer *w, const struct perf_result *r)
{
	struct nvq_qos_poll_stats sum;
	unsigned int i, k;

	json_begin_object(w, "completion_cpu");
	json_int(w, "cpu", r->cpl_cpu);
	json_fixed(w, "share", r->cpl_share, 6);
	/* the CPU is looked up for one callback in this many */
	json_uint(w, "sampled_every", PERF_CPU_EVERY);
	if (r->have_idle && r->cpl_cpu >= 0) {
		json_begin_object(w, "cpuidle");
		for (k = 0; k < r->idle.nr_states; k++)
			json_fixed(w, r->idle.names[k],
				   perf_result_cpu_idle(r, r->cpl_cpu, k), 6);
		json_end_object(w);
	}
	json_end_object(w);

	json_begin_object(w, "cpu_lat");
	json_int(w, "limit_us", r->qos.limit_us);
	json_int(w, "effective_us", r->qos.effective_us);
	json_uint(w, "timeout_ms", r->qos.timeout_ms);
	json_string(w, "backend", r->qos.backend);
	json_string(w, "reason", r->qos.reason);
	json_string(w, "status", r->qos.status);
	json_string(w, "method", nvq_qos_method_name(r->method.method));
	json_string(w, "method_requested",
		    nvq_qos_method_name(r->method.requested));
	json_string(w, "method_why", r->method.why);
	if (r->method.wake.samples) {
		const struct nvq_qos_wake *wk = &r->method.wake;

		json_begin_object(w, "wake");
		json_uint(w, "p50_ns", wk->p50_ns);
		json_uint(w, "p99_ns", wk->p99_ns);
		json_uint(w, "write_ns", wk->write_ns);
		json_uint(w, "samples", wk->samples);
		json_string(w, "source", wk->source);
		json_end_object(w);
	}
	json_uint(w, "span_ns", r->qos_span_ns);
	json_begin_array(w, "queues");
	for (i = 0; i < r->nr_qos; i++) {
		json_begin_object(w, NULL);
		json_uint(w, "qid", r->qosq[i].qid);
		json_uint(w, "applies", r->qosq[i].applies);
		json_uint(w, "releases", r->qosq[i].releases);
		json_uint(w, "held_ns", r->qosq[i].held_ns);
		json_poll(w, "poll", &r->qosq[i].poll);
		json_end_object(w);
	}
	json_end_array(w);
	if (perf_result_poll_sum(r, &sum))
		json_poll(w, "poll", &sum);
	json_end_object(w);
}

static void json_idle(struct json_writer *w, const struct perf_result *r)
{
	unsigned int i, k;

	json_begin_object(w, "cpuidle");
	json_begin_object(w, "mean");
	for (k = 0; k < r->idle.nr_states; k++)
		json_fixed(w, r->idle.names[k], r->idle.avg[k], 6);
	json_end_object(w);
	json_begin_array(w, "cpus");
	for (i = 0; i < r->idle.nr_cpus; i++) {
		json_begin_object(w, NULL);
		json_uint(w, "cpu", (uint64_t)r->idle.cpu[i]);
		for (k = 0; k < r->idle.nr_states; k++)
			json_fixed(w, r->idle.names[k],
				   r->idle.pct[i * r->idle.nr_states + k], 6);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

/*
 * nvq's own: the namespace's metadata format (struct nvq_ns_format's
 * names) and the PI mode the run used (docs/perf.md).
 */
static void json_md(struct json_writer *w, const struct perf_result *r)
{
	const struct perf_md_info *m = &r->md;
	char chk[32];

	json_begin_object(w, "metadata");
	json_uint(w, "ms", m->ms);
	json_bool(w, "extended", m->extended);
	json_uint(w, "block_bytes", m->blk);
	json_uint(w, "md_per_io", m->md_per_io);
	json_uint(w, "pi_type", m->pi_type);
	if (m->pi_type) {
		json_bool(w, "pi_first", m->pi_first);
		json_string(w, "pi_mode", pi_mode_name(m));
		json_string(w, "pi_chk",
			    perf_pi_chk_name(m->prchk, chk, sizeof(chk)));
		json_uint(w, "apptag", m->apptag);
		json_uint(w, "apptag_mask", m->appmask);
		json_bool(w, "host_verify", m->pi_verify);
	}
	json_end_object(w);
}

static void json_job(struct json_writer *w, const struct perf_opts *o,
		     const struct perf_result *r)
{
	const struct perf_config *c = r->cfg;
	struct perf_stat none;
	char name[160];
	unsigned int i;

	if (o->nr_configs > 1 || o->rounds > 1)
		snprintf(name, sizeof(name), "%c%u: %s",
			 perf_config_letter(r->config_index), r->round,
			 c->label ? c->label : perf_rw_name(c->rw));
	else
		snprintf(name, sizeof(name), "%s", perf_rw_name(c->rw));
	json_begin_object(w, NULL);
	json_string(w, "jobname", name);
	json_uint(w, "groupid", r->config_index);
	/* fio's: the first error's errno; EILSEQ for a verify mismatch */
	json_uint(w, "error",
		  r->first_errno ? (uint64_t)r->first_errno :
		  r->io_errors	 ? EIO :
		  r->verify_bad	 ? EILSEQ :
				   0);
	/* the run is over: nothing left to wait for */
	json_uint(w, "eta", 0);
	json_uint(w, "elapsed", (r->wall_ns + 500000000) / 1000000000);
	json_job_options(w, c, r);
	json_dir(w, "read", r, PERF_DIR_READ);
	json_dir(w, "write", r, PERF_DIR_WRITE);
	json_dir(w, "trim", r, -1);
	/* nvq-perf issues no flush: fio's sync object with none */
	perf_stat_init(&none);
	json_begin_object(w, "sync");
	json_uint(w, "total_ios", 0);
	json_stat(w, "lat_ns", &none);
	json_end_object(w);
	json_uint(w, "job_runtime", r->runtime_ns / 1000000);
	json_fixed(w, "usr_cpu", r->usr_pct, 6);
	json_fixed(w, "sys_cpu", r->sys_pct, 6);
	json_uint(w, "ctx", r->ctx_switches);
	json_uint(w, "majf", r->majflt);
	json_uint(w, "minf", r->minflt);
	json_depths(w, r);
	json_fio_lat(w, r);
	/*
	 * fio's latency_target search (latency_target=, latency_window=) is
	 * not in nvq-perf: these are what fio writes for a job without one,
	 * the depth it ran at and no target.
	 */
	json_uint(w, "latency_depth", c->qd);
	json_uint(w, "latency_target", 0);
	json_fixed(w, "latency_percentile", 100.0, 6);
	json_uint(w, "latency_window", 0);
	/* nvq-perf's own, next to fio's CPU fields */
	json_cpu_per_io(w, r);
	/* nvq-perf's own fields */
	json_begin_object(w, "nvq");
	json_string(w, "device", c->uri);
	json_string(w, "model", r->model);
	json_uint(w, "nsid", r->nsid);
	json_uint(w, "lba_size", r->lba_size);
	json_uint(w, "ns_bytes", r->ns_bytes);
	json_md(w, r);
	json_uint(w, "io_queues", r->nr_queues);
	json_uint(w, "round", r->round);
	json_string(w, "config", c->label ? c->label : "");
	json_bool(w, "interrupted", r->interrupted);
	/* device_ns / host_ns hold one I/O in this many */
	if (r->stamped)
		json_uint(w, "devtime_sampled_every", PERF_DEVTIME_EVERY);
	if (r->have_machine) {
		json_begin_object(w, "machine_cpu");
		json_uint(w, "cpus", r->machine_cpus);
		json_uint(w, "busy_ns", r->machine_busy_ns);
		json_uint(w, "total_ns", r->machine_total_ns);
		json_end_object(w);
	}
	if (r->have_loadavg) {
		json_begin_array(w, "loadavg_start");
		for (unsigned int k = 0; k < 3; k++)
			json_fixed(w, NULL, r->loadavg[k], 2);
		json_end_array(w);
	}
	{
		char why[160];
		double other;

		if (perf_result_other_cpus(r, &other))
			json_fixed(w, "other_cpus", other, 3);
		json_bool(w, "busy", perf_result_busy(r, why, sizeof(why)));
		if (why[0])
			json_string(w, "busy_why", why);
		json_bool(w, "populating", perf_result_populating(r));
	}
	json_begin_object(w, "stuck");
	json_uint(w, "ios", r->stuck_ios);
	json_uint(w, "oldest_age_ns", r->stuck_oldest_ns);
	json_end_object(w);
	json_end_object(w);
	if (r->have_recovery) {
		const struct nvq_ctrl_stats *st = &r->recovery;

		json_begin_object(w, "recovery");
		json_uint(w, "timeouts", st->timeouts);
		json_uint(w, "lost_interrupts", st->lost_interrupts);
		json_uint(w, "aborts", st->aborts);
		json_uint(w, "resets", st->resets);
		json_uint(w, "retries", st->retries);
		json_uint(w, "failed", st->failed);
		json_uint(w, "bad_cqes", st->bad_cqes);
		json_bool(w, "gone", st->gone);
		json_uint(w, "io_timeout_ms", r->io_timeout_ms);
		json_uint(w, "admin_timeout_ms", r->admin_timeout_ms);
		json_end_object(w);
	}
	if (r->have_idle)
		json_idle(w, r);
	json_qos(w, r);
	if (c->verify) {
		json_begin_object(w, "verify");
		json_uint(w, "blocks", r->verify_blocks);
		json_uint(w, "bad", r->verify_bad);
		json_begin_array(w, "mismatches");
		for (i = 0; i < r->nr_vfail; i++) {
			char msg[256];

			perf_vfail_str(&r->vfail[i], msg, sizeof(msg));
			json_string(w, NULL, msg);
		}
		json_end_array(w);
		json_end_object(w);
	}
	if (r->io_errors)
		json_string(w, "error_message", r->errmsg);
	json_end_object(w);
}

static void json_row(struct json_writer *w, const char *key,
		     const struct perf_row *r, char (*names)[PERF_IDLE_NAME])
{
	unsigned int k;

	json_begin_object(w, key);
	json_fixed(w, "iops", r->iops, 6);
	json_fixed(w, "bw_min_mib", r->bw_min, 6);
	json_fixed(w, "bw_avg_mib", r->bw_avg, 6);
	json_fixed(w, "bw_max_mib", r->bw_max, 6);
	json_fixed(w, "slat_max_ns", r->slat_max, 6);
	json_fixed(w, "clat_max_ns", r->clat_max, 6);
	json_fixed(w, "lat_max_ns", r->lat_max, 6);
	json_fixed(w, "clat_p50_ns", r->clat_p50, 6);
	json_fixed(w, "clat_p99_ns", r->clat_p99, 6);
	json_fixed(w, "clat_p99.9_ns", r->clat_p999, 6);
	/* only where the runs carried emulator stamps */
	if (r->host_p50 >= 0) {
		json_begin_object(w, "host_overhead_ns");
		json_fixed(w, "p50", r->host_p50, 6);
		json_fixed(w, "p99", r->host_p99, 6);
		json_end_object(w);
	}
	json_fixed(w, "usr_cpu", r->usr, 6);
	json_fixed(w, "sys_cpu", r->sys, 6);
	if (r->cpu_io_proc >= 0 || r->cpu_io_mach >= 0) {
		json_begin_object(w, "cpu_per_io_ns");
		if (r->cpu_io_proc >= 0)
			json_fixed(w, "process", r->cpu_io_proc, 3);
		if (r->cpu_io_mach >= 0)
			json_fixed(w, "machine", r->cpu_io_mach, 3);
		json_end_object(w);
	}
	if (r->nr_idle) {
		json_begin_object(w, "cpuidle");
		for (k = 0; k < r->nr_idle; k++)
			json_fixed(w, names[k], r->idle[k], 6);
		json_end_object(w);
		json_begin_object(w, "completion_cpuidle");
		for (k = 0; k < r->nr_idle; k++)
			json_fixed(w, names[k], r->cpl_idle[k], 6);
		json_end_object(w);
	}
	json_fixed(w, "cpu_lat_applies", r->qos_applies, 6);
	json_fixed(w, "cpu_lat_releases", r->qos_releases, 6);
	json_fixed(w, "cpu_lat_held_pct", r->qos_held, 6);
	json_fixed(w, "cpu_lat_polls", r->qos_polls, 6);
	json_end_object(w);
}

static void json_compare(struct json_writer *w, const struct perf_opts *o,
			 const struct perf_result *res, unsigned int nres)
{
	char(*names)[PERF_IDLE_NAME] = NULL;
	unsigned int nn = perf_compare_idle_names(res, nres, &names);
	unsigned int c, i, n;
	struct perf_row *rows = calloc(nres ? nres : 1, sizeof(*rows));
	char letter[2] = { 0 };

	if (!rows)
		return;
	json_begin_object(w, "compare");
	json_uint(w, "rounds", o->rounds);
	json_begin_array(w, "configs");
	for (c = 0; c < o->nr_configs; c++) {
		struct perf_row med;

		for (i = 0, n = 0; i < nres; i++)
			if (res[i].config_index == c)
				perf_row_from_result(&res[i], names, nn,
						     &rows[n++]);
		perf_row_median(rows, n, &med);
		letter[0] = perf_config_letter(c);
		json_begin_object(w, NULL);
		json_string(w, "name", letter);
		json_string(w, "options",
			    o->configs[c].label ? o->configs[c].label : "");
		json_uint(w, "runs", n);
		/* the method of the configuration's first run */
		for (i = 0; i < nres; i++) {
			if (res[i].config_index != c)
				continue;
			json_string(w, "cpu_lat_method",
				    nvq_qos_method_name(res[i].method.method));
			break;
		}
		json_row(w, "median", &med, names);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
	free(rows);
}

int perf_report_json(FILE *f, const struct perf_opts *o,
		     const struct perf_result *res, unsigned int nres)
{
	struct timespec ts;
	struct json_writer w;
	unsigned int i;
	char when[64] = "";
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (localtime_r(&ts.tv_sec, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	json_init(&w, f, true);
	json_begin_object(&w, NULL);
	json_string(&w, "fio version", "nvq-perf-" NVQ_VERSION_STRING);
	json_uint(&w, "timestamp", (uint64_t)ts.tv_sec);
	json_uint(&w, "timestamp_ms",
		  (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
	json_string(&w, "time", when);
	json_begin_object(&w, "global options");
	json_end_object(&w);
	json_begin_array(&w, "jobs");
	for (i = 0; i < nres; i++)
		json_job(&w, o, &res[i]);
	json_end_array(&w);
	if (o->compare || o->rounds > 1)
		json_compare(&w, o, res, nres);
	json_end_object(&w);
	return json_finish(&w);
}
