/* SPDX-License-Identifier: MIT */
/* Log-linear latency histogram; see histogram.h for the layout. */
#include <math.h>
#include <string.h>

#include "histogram.h"

const double perf_pct_list[PERF_NR_PCT] = { 1,	5,    10,   20,	   30,	 40,
					    50, 60,   70,   80,	   90,	 95,
					    99, 99.5, 99.9, 99.95, 99.99 };

/* fio's io_u_mark_lat_{nsec,usec,msec}(): value < edge, >= the previous */
const uint64_t perf_fio_lat_edge[PERF_FIO_LAT_NR] = {
	2,	    4,		10,	   20,	      50,	 100,
	250,	    500,	750,	   1000,      2000,	 4000,
	10000,	    20000,	50000,	   100000,    250000,	 500000,
	750000,	    1000000,	2000000,   4000000,   10000000,	 20000000,
	50000000,   100000000,	250000000, 500000000, 750000000, 1000000000,
	2000000000, UINT64_MAX,
};

const char *const perf_fio_lat_label[PERF_FIO_LAT_NR] = {
	"2",   "4",    "10",  "20",   "50",  "100",  "250",  "500",
	"750", "1000", "2",   "4",    "10",  "20",   "50",   "100",
	"250", "500",  "750", "1000", "2",   "4",    "10",   "20",
	"50",  "100",  "250", "500",  "750", "1000", "2000", ">=2000",
};

void perf_hist_init(struct perf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void perf_hist_bucket_range(unsigned int idx, uint64_t *lo, uint64_t *hi)
{
	unsigned int j, k, shift;
	uint64_t sub;

	if (idx < 2 * PERF_HIST_SUB) {
		*lo = *hi = idx;
		return;
	}
	j = idx - 2 * PERF_HIST_SUB;
	k = PERF_HIST_SUB_BITS + 1 + j / PERF_HIST_SUB;
	shift = k - PERF_HIST_SUB_BITS;
	sub = PERF_HIST_SUB + j % PERF_HIST_SUB;
	*lo = sub << shift;
	*hi = *lo + (1ull << shift) - 1;
}

void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src)
{
	unsigned int i;

	if (!src->n)
		return;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	for (i = 0; i < PERF_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

void perf_stat_init(struct perf_stat *s)
{
	memset(s, 0, sizeof(*s));
	s->min = UINT64_MAX;
}

void perf_stat_merge(struct perf_stat *dst, const struct perf_stat *src)
{
	/* no early return on !n: uncounted values have none yet */
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}

void perf_hist_stat(const struct perf_hist *h, struct perf_stat *s)
{
	s->n = h->n;
	s->min = h->min;
	s->max = h->max;
	s->sum = h->sum;
	s->sumsq = h->sumsq;
}

double perf_hist_mean(const struct perf_hist *h)
{
	struct perf_stat s;

	perf_hist_stat(h, &s);
	return perf_stat_mean(&s);
}

double perf_hist_stddev(const struct perf_hist *h)
{
	struct perf_stat s;

	perf_hist_stat(h, &s);
	return perf_stat_stddev(&s);
}

double perf_stat_mean(const struct perf_stat *h)
{
	if (!h->n)
		return 0;
	return (double)((long double)h->sum / h->n);
}

double perf_stat_stddev(const struct perf_stat *h)
{
	unsigned __int128 a, b;
	long double var;

	if (h->n < 2)
		return 0;
	/* n * sumsq - sum^2 is exact when it fits, which is the usual case. */
	b = (unsigned __int128)h->sum * h->sum;
	if (!__builtin_mul_overflow(h->sumsq, (unsigned __int128)h->n, &a)) {
		var = (long double)(a - b) / ((long double)h->n * (h->n - 1));
	} else {
		long double mean = (long double)h->sum / h->n;

		var = ((long double)h->sumsq - mean * (long double)h->sum) /
		      (h->n - 1);
		if (var < 0)
			var = 0;
	}
	return (double)sqrtl(var);
}

uint64_t perf_pct_rank(double pct, uint64_t n)
{
	/* Parts per million keep 99.99 exact, where 99.99 * n / 100 is not. */
	unsigned __int128 ppm, r;

	if (!n)
		return 0;
	if (pct <= 0)
		return 1;
	if (pct >= 100)
		return n;
	ppm = (unsigned __int128)llround(pct * 10000.0);
	r = (ppm * n + 999999) / 1000000;
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return (uint64_t)r;
}

static uint64_t bucket_value(const struct perf_hist *h, unsigned int idx)
{
	uint64_t lo, hi, v;

	perf_hist_bucket_range(idx, &lo, &hi);
	v = lo + (hi - lo) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

void perf_hist_percentiles(const struct perf_hist *h, const double *pcts,
			   unsigned int n, uint64_t *out)
{
	uint64_t seen = 0;
	unsigned int idx = 0, i;

	for (i = 0; i < n; i++) {
		uint64_t rank;

		if (!h->n) {
			out[i] = 0;
			continue;
		}
		rank = perf_pct_rank(pcts[i], h->n);
		while (idx < PERF_HIST_BUCKETS && seen + h->bucket[idx] < rank)
			seen += h->bucket[idx++];
		out[i] = idx < PERF_HIST_BUCKETS ? bucket_value(h, idx) :
						   h->max;
	}
}

uint64_t perf_hist_percentile(const struct perf_hist *h, double pct)
{
	uint64_t v;

	perf_hist_percentiles(h, &pct, 1, &v);
	return v;
}

void perf_hist_fio_lat(const struct perf_hist *h, double out[PERF_FIO_LAT_NR])
{
	unsigned int idx, b = 0;

	for (idx = 0; h->n && idx < PERF_HIST_BUCKETS; idx++) {
		uint64_t v;

		if (!h->bucket[idx])
			continue;
		/* Ascending buckets: b never moves back. */
		v = bucket_value(h, idx);
		while (v >= perf_fio_lat_edge[b])
			b++;
		out[b] += (double)h->bucket[idx];
	}
}
