/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

void perf_result_init(struct perf_result *r)
{
	unsigned int d;

	memset(r, 0, sizeof(*r));
	r->cpl_cpu = -1;
	r->qos.limit_us = NVQ_QOS_OFF;
	r->qos.effective_us = NVQ_QOS_OFF;
	r->method.requested = NVQ_QOS_METHOD_AUTO;
	r->method.method = NVQ_QOS_METHOD_NONE;
	for (d = 0; d < PERF_NR_DIRS; d++)
		perf_dir_stats_init(&r->dir[d]);
}

uint64_t perf_result_ios(const struct perf_result *r)
{
	uint64_t n = 0;
	unsigned int d;

	for (d = 0; d < PERF_NR_DIRS; d++)
		n += r->dir[d].ios;
	return n;
}

bool perf_result_other_cpus(const struct perf_result *r, double *cpus)
{
	if (!r->have_machine || !r->have_proc_cpu || !r->machine_total_ns ||
	    !r->machine_cpus)
		return false;
	/* The window of /proc/stat: its total over the CPUs is wall time. */
	*cpus = r->machine_busy_ns > r->proc_cpu_ns ?
			(double)(r->machine_busy_ns - r->proc_cpu_ns) *
				r->machine_cpus / (double)r->machine_total_ns :
			0;
	return true;
}

bool perf_result_busy(const struct perf_result *r, char *why, size_t len)
{
	unsigned int cpus = r->machine_cpus;
	double other;
	bool busy = false;
	int n = 0;

	if (why && len)
		why[0] = 0;
	if (perf_result_other_cpus(r, &other) && other >= 0.25 * cpus) {
		busy = true;
		if (why)
			n = snprintf(why, len,
				     "other work took %.2f of %u CPUs during "
				     "the run",
				     other, cpus);
	}
	if (r->have_loadavg && cpus && r->loadavg[0] >= (double)cpus) {
		busy = true;
		if (why && n >= 0 && (size_t)n < len)
			snprintf(why + n, len - (size_t)n,
				 "%sload average %.2f at the start on %u CPUs",
				 n ? "; " : "", r->loadavg[0], cpus);
	}
	return busy;
}

bool perf_result_populating(const struct perf_result *r)
{
	uint64_t ios = perf_result_ios(r);

	return r->minflt >= 256 || (r->minflt >= 64 && r->minflt * 100 > ios);
}

/* Time all CPUs spent in cpuidle's polling state, or -1. */
static double idle_poll_ns(const struct perf_result *r)
{
	double sum = 0;
	unsigned int c, k;

	if (!r->have_idle)
		return -1;
	for (k = 0; k < r->idle.nr_states; k++)
		if (!strcmp(r->idle.names[k], PERF_IDLE_POLL_STATE))
			break;
	if (k == r->idle.nr_states)
		return -1;
	for (c = 0; c < r->idle.nr_cpus; c++)
		sum += r->idle.pct[c * r->idle.nr_states + k] / 100.0 *
		       (double)r->wall_ns;
	return sum;
}

bool perf_result_cpu_per_io(const struct perf_result *r,
			    enum perf_cpu_kind kind, double *ns)
{
	uint64_t ios = perf_result_ios(r);
	double t = -1;

	if (!ios)
		return false;
	switch (kind) {
	case PERF_CPU_PROCESS:
		if (r->have_proc_cpu)
			t = (double)r->proc_cpu_ns;
		break;
	case PERF_CPU_MACHINE:
		if (r->have_machine)
			t = (double)r->machine_busy_ns;
		break;
	case PERF_CPU_IDLE_POLL:
		t = idle_poll_ns(r);
		break;
	}
	if (t < 0)
		return false;
	*ns = t / (double)ios;
	return true;
}

bool perf_result_poll_sum(const struct perf_result *r,
			  struct nvq_qos_poll_stats *sum)
{
	unsigned int i, nest = 0;
	uint64_t est = 0;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < r->nr_qos; i++) {
		const struct nvq_qos_poll_stats *p = &r->qosq[i].poll;

		sum->polls += p->polls;
		sum->poll_ns += p->poll_ns;
		sum->sleeps += p->sleeps;
		sum->sleep_ns += p->sleep_ns;
		sum->overslept += p->overslept;
		sum->idle_sleeps += p->idle_sleeps;
		sum->masked += p->masked;
		if (p->est_ns) {
			est += p->est_ns;
			nest++;
		}
	}
	sum->est_ns = nest ? est / nest : 0;
	return r->nr_qos > 0;
}

void perf_dir_stats_init(struct perf_dir_stats *d)
{
	memset(d, 0, sizeof(*d));
	perf_stat_init(&d->slat);
	perf_hist_init(&d->clat);
	perf_stat_init(&d->lat);
	perf_hist_init(&d->host);
	perf_hist_init(&d->dev);
}

void perf_result_free(struct perf_result *r)
{
	perf_idle_free(&r->idle);
	free(r->qosq);
	r->qosq = NULL;
}

double perf_result_cpu_idle(const struct perf_result *r, int cpu,
			    unsigned int k)
{
	unsigned int i;

	if (!r->have_idle || k >= r->idle.nr_states)
		return -1;
	for (i = 0; i < r->idle.nr_cpus; i++)
		if (r->idle.cpu[i] == cpu)
			return r->idle.pct[i * r->idle.nr_states + k];
	return -1;
}

void perf_result_merge_dirs(struct perf_dir_stats *dst,
			    const struct perf_dir_stats *src)
{
	dst->ios += src->ios;
	dst->bytes += src->bytes;
	perf_stat_merge(&dst->slat, &src->slat);
	perf_hist_merge(&dst->clat, &src->clat);
	perf_stat_merge(&dst->lat, &src->lat);
	perf_hist_merge(&dst->host, &src->host);
	perf_hist_merge(&dst->dev, &src->dev);
	dst->bad_stamps += src->bad_stamps;
}

void perf_depths_merge(struct perf_depths *dst, const struct perf_depths *src)
{
	unsigned int i;

	for (i = 0; i < PERF_DEPTH_BUCKETS; i++) {
		dst->level[i] += src->level[i];
		dst->submit[i] += src->submit[i];
		dst->complete[i] += src->complete[i];
	}
	dst->submits += src->submits;
	dst->completes += src->completes;
}
