/* SPDX-License-Identifier: MIT */
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
	for (d = 0; d < PERF_NR_DIRS; d++)
		perf_dir_stats_init(&r->dir[d]);
}

void perf_dir_stats_init(struct perf_dir_stats *d)
{
	memset(d, 0, sizeof(*d));
	perf_hist_init(&d->slat);
	perf_hist_init(&d->clat);
	perf_hist_init(&d->lat);
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
	perf_hist_merge(&dst->slat, &src->slat);
	perf_hist_merge(&dst->clat, &src->clat);
	perf_hist_merge(&dst->lat, &src->lat);
	perf_hist_merge(&dst->host, &src->host);
	perf_hist_merge(&dst->dev, &src->dev);
	dst->bad_stamps += src->bad_stamps;
}
