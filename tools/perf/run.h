/* SPDX-License-Identifier: MIT */
/*
 * One run of one configuration: open the device, start the job threads,
 * sample bandwidth, CPU and idle residency while they work, read back
 * --verify writes, close the device, fill a perf_result.
 */
#ifndef NVQ_PERF_RUN_H
#define NVQ_PERF_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "result.h"

/* perf_run() result: the configuration does not fit the device (exit 2). */
#define PERF_EUSAGE (-1000)

/* Bandwidth / IOPS sampling interval. */
#define PERF_SAMPLE_NS 100000000ull

struct perf_run_ctl {
	const char *tag; /* status line prefix, e.g. "B 2/3"; may be NULL */
	bool status; /* draw the live status line on stderr */
	volatile sig_atomic_t *interrupted; /* set by SIGINT/SIGTERM */
};

/*
 * Run @cfg once into @res (initialised by the caller with
 * perf_result_init()). Returns 0 when the run happened (I/O errors and
 * verify mismatches are in @res), PERF_EUSAGE when @cfg does not fit the
 * device, or a negative errno; both with a message in @err.
 */
int perf_run(const struct perf_config *cfg, const struct perf_run_ctl *ctl,
	     struct perf_result *res, char *err, size_t errlen);

#endif /* NVQ_PERF_RUN_H */
