/* SPDX-License-Identifier: MIT */
/*
 * --plot: latency CDF as a standalone SVG, log-scaled x axis, one curve
 * per configuration, each labelled at the curve itself.
 */
#ifndef NVQ_PERF_PLOT_H
#define NVQ_PERF_PLOT_H

#include <stddef.h>

#include "histogram.h"

struct perf_curve {
	const char *label;
	const struct perf_hist *h;
};

/*
 * Write the CDF of @n curves to @path with @title. Empty histograms are
 * skipped. Returns 0 or a negative errno with a message in @err.
 */
int perf_plot_svg(const char *path, const struct perf_curve *curves,
		  unsigned int n, const char *title, char *err, size_t errlen);

#endif /* NVQ_PERF_PLOT_H */
