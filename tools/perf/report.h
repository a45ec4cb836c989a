/* SPDX-License-Identifier: MIT */
/* fio-like text and JSON reports of perf_result. */
#ifndef NVQ_PERF_REPORT_H
#define NVQ_PERF_REPORT_H

#include <stdio.h>

#include "options.h"
#include "result.h"

/*
 * Text report of one run: per direction IOPS, bandwidth, slat / clat /
 * lat with min, max, avg, stdev, clat percentiles, bandwidth samples;
 * then CPU, cpuidle residency and --verify results.
 */
void perf_report_text(FILE *f, const struct perf_result *r);

/*
 * JSON document with fio's field names: one jobs[] entry per result (in
 * run order), and for --compare or --rounds a "compare" object with the
 * median row of each configuration. Returns 0 or a negative errno when
 * writing failed.
 */
int perf_report_json(FILE *f, const struct perf_opts *o,
		     const struct perf_result *res, unsigned int nres);

/* Print I/O errors and verify mismatches of @r to @f; returns how many
 * problems (errors + bad blocks) @r has. */
uint64_t perf_report_problems(FILE *f, const struct perf_result *r);

#endif /* NVQ_PERF_REPORT_H */
