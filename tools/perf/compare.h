/* SPDX-License-Identifier: MIT */
/*
 * --compare: one table row per run and a median row per configuration,
 * in the shape of the source documents' tables (max slat / clat / lat,
 * bandwidth min-avg-max, idle residency).
 */
#ifndef NVQ_PERF_COMPARE_H
#define NVQ_PERF_COMPARE_H

#include <stdio.h>

#include "cpustat.h"
#include "options.h"
#include "result.h"

#define PERF_ROW_MAX_IDLE 8

/* The numbers of one table row (one run, or a median). */
struct perf_row {
	double iops;
	double bw_min, bw_avg, bw_max; /* MiB/s */
	double slat_max, clat_max, lat_max; /* ns */
	double clat_p50, clat_p99, clat_p999; /* ns */
	/* host overhead (CQE posted -> callback, emulator stamps) p50 and
	 * p99, ns; -1: no stamps (a median takes the stamped runs only) */
	double host_p50, host_p99;
	double usr, sys; /* % of one CPU */
	/* CPU ns per I/O, the process's and the machine's; -1: not
	 * measured (a median takes the measured runs only) */
	double cpu_io_proc, cpu_io_mach;
	unsigned int nr_idle;
	double idle[PERF_ROW_MAX_IDLE]; /* % per state, mean over CPUs */
	/* % per state on the completion CPU (see perf_result.cpl_cpu) */
	double cpl_idle[PERF_ROW_MAX_IDLE];
	/* CPU latency QoS, summed over the job queues; held: % of the run
	 * a queue held its limit, mean over the queues */
	double qos_applies, qos_releases, qos_held;
	double qos_polls; /* waits that polled, summed over the job queues */
};

/* Letter naming configuration @i in tables and plots ("A", "B", ...). */
char perf_config_letter(unsigned int i);

/*
 * Row of @r; idle columns follow @names (@nr_names states, matched by
 * name, 0 where @r lacks the state).
 */
void perf_row_from_result(const struct perf_result *r,
			  char (*names)[PERF_IDLE_NAME], unsigned int nr_names,
			  struct perf_row *row);

/* Field-wise median of @n rows (mean of the middle two for even @n). */
void perf_row_median(const struct perf_row *rows, unsigned int n,
		     struct perf_row *out);

/* Median double of @n values (sorts @v). */
double perf_median(double *v, unsigned int n);

/*
 * Print the comparison table of @nres results (run order: round-major,
 * configuration-minor) for the configurations in @o.
 */
void perf_compare_print(FILE *f, const struct perf_opts *o,
			const struct perf_result *res, unsigned int nres);

/*
 * Idle state names used as table columns: those of the first result that
 * has idle data. Returns how many (0 when none).
 */
unsigned int perf_compare_idle_names(const struct perf_result *res,
				     unsigned int nres,
				     char (**names)[PERF_IDLE_NAME]);

#endif /* NVQ_PERF_COMPARE_H */
