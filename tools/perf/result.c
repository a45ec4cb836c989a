/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "result.h"

void perf_result_init(struct perf_result *r)
{
	unsigned int d;

	memset(r, 0, sizeof(*r));
	for (d = 0; d < PERF_NR_DIRS; d++) {
		perf_hist_init(&r->dir[d].slat);
		perf_hist_init(&r->dir[d].clat);
		perf_hist_init(&r->dir[d].lat);
	}
}

void perf_result_free(struct perf_result *r)
{
	perf_idle_free(&r->idle);
}

void perf_result_merge_dirs(struct perf_dir_stats *dst,
			    const struct perf_dir_stats *src)
{
	dst->ios += src->ios;
	dst->bytes += src->bytes;
	perf_hist_merge(&dst->slat, &src->slat);
	perf_hist_merge(&dst->clat, &src->clat);
	perf_hist_merge(&dst->lat, &src->lat);
}
