/* SPDX-License-Identifier: MIT */
/* Number formatting shared by the reports and the status line. */
#ifndef NVQ_PERF_FORMAT_H
#define NVQ_PERF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* "950", "12.3k", "1.25M": three significant digits, powers of 1000. */
char *perf_fmt_count(char *buf, size_t len, double v);

/* A duration with its unit: "850ns", "12.5us", "3.20ms", "1.50s". */
char *perf_fmt_ns(char *buf, size_t len, double ns);

/* Bytes with a binary unit: "4KiB", "1.5MiB", "512B". */
char *perf_fmt_bytes(char *buf, size_t len, uint64_t bytes);

/*
 * The unit fio prints a latency line in: it converts nsec to usec to msec
 * while min and mean stay above 1000 units. Divisor and name.
 */
void perf_lat_unit(uint64_t min_ns, double mean_ns, double *div,
		   const char **name);

#endif /* NVQ_PERF_FORMAT_H */
