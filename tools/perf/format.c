/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "format.h"

/* @v with @suffix, three significant digits. */
static char *sig3(char *buf, size_t len, double v, const char *suffix)
{
	if (v >= 100 || v == (uint64_t)v)
		snprintf(buf, len, "%.0f%s", v, suffix);
	else if (v >= 10)
		snprintf(buf, len, "%.1f%s", v, suffix);
	else
		snprintf(buf, len, "%.2f%s", v, suffix);
	return buf;
}

char *perf_fmt_count(char *buf, size_t len, double v)
{
	if (v < 10000)
		return sig3(buf, len, v < 100 ? v : (double)(uint64_t)(v + 0.5),
			    "");
	if (v < 1e6)
		return sig3(buf, len, v / 1e3, "k");
	if (v < 1e9)
		return sig3(buf, len, v / 1e6, "M");
	return sig3(buf, len, v / 1e9, "G");
}

char *perf_fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1000) {
		snprintf(buf, len, "%.0fns", ns);
		return buf;
	}
	if (ns < 1e6)
		return sig3(buf, len, ns / 1e3, "us");
	if (ns < 1e9)
		return sig3(buf, len, ns / 1e6, "ms");
	return sig3(buf, len, ns / 1e9, "s");
}

char *perf_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v == (uint64_t)v)
		snprintf(buf, len, "%.0f%s", v, units[u]);
	else
		sig3(buf, len, v, units[u]);
	return buf;
}

void perf_lat_unit(uint64_t min_ns, double mean_ns, double *div,
		   const char **name)
{
	static const char *names[] = { "nsec", "usec", "msec" };
	double m = (double)min_ns, d = 1;
	int u = 0;

	while (u < 2 && m / d > 1000 && mean_ns / d > 1000) {
		d *= 1000;
		u++;
	}
	*div = d;
	*name = names[u];
}
