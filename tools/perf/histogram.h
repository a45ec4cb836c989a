/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram in nanoseconds (HDR style): values below
 * 256 ns have a bucket each; above, every power of two [2^k, 2^(k+1)) is
 * split into 128 equal sub-buckets. A bucket is reported by its midpoint,
 * so the relative error is at most 1/256 (0.4 %) from 1 ns up to 2^38 ns
 * (275 s); larger values share the last bucket. Memory is constant
 * (PERF_HIST_BUCKETS counters). Count, min, max, sum and sum of squares
 * are kept exactly (as in struct perf_stat), so mean and standard
 * deviation are not estimates.
 */
#ifndef NVQ_PERF_HISTOGRAM_H
#define NVQ_PERF_HISTOGRAM_H

#include <stdint.h>

#define PERF_HIST_SUB_BITS 7
#define PERF_HIST_SUB (1u << PERF_HIST_SUB_BITS)
#define PERF_HIST_MAX_BITS 38 /* values below 2^38 ns are resolved */
#define PERF_HIST_BUCKETS    \
	(2 * PERF_HIST_SUB + \
	 (PERF_HIST_MAX_BITS - PERF_HIST_SUB_BITS - 1) * PERF_HIST_SUB)

/*
 * Exact count, min, max, sum and sum of squares of latencies, without
 * buckets: what fio's JSON has for slat and lat (min, max, mean, stddev,
 * N), at a fraction of a histogram's cost per value. The sum has 64 bits
 * (exact up to 584 years of latencies added up), the sum of squares 128.
 */
struct perf_stat {
	uint64_t n;
	uint64_t min; /* UINT64_MAX while empty */
	uint64_t max;
	uint64_t sum;
	unsigned __int128 sumsq;
};

/* Empty @s. */
void perf_stat_init(struct perf_stat *s);

/*
 * Record one value (ns) but not its count: for values recorded beside a
 * histogram's, whose count is theirs too (the caller sets @n later).
 */
static inline void perf_stat_add_uncounted(struct perf_stat *s, uint64_t v)
{
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->sum += v;
	s->sumsq += (unsigned __int128)v * v;
}

/*
 * ... and not its sum either: for a value that is the sum of two others
 * recorded with theirs (lat = slat + clat), whose sums add up to its.
 */
static inline void perf_stat_add_unsummed(struct perf_stat *s, uint64_t v)
{
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->sumsq += (unsigned __int128)v * v;
}

/* Record one value (ns). */
static inline void perf_stat_add(struct perf_stat *s, uint64_t v)
{
	s->n++;
	perf_stat_add_uncounted(s, v);
}

/* Add @src into @dst. */
void perf_stat_merge(struct perf_stat *dst, const struct perf_stat *src);

/* Exact mean, and sample standard deviation (n - 1); 0 when undefined. */
double perf_stat_mean(const struct perf_stat *s);
double perf_stat_stddev(const struct perf_stat *s);

struct perf_hist {
	uint64_t n;
	uint64_t min; /* UINT64_MAX while empty */
	uint64_t max;
	uint64_t sum; /* as perf_stat's */
	unsigned __int128 sumsq;
	uint64_t bucket[PERF_HIST_BUCKETS];
};

/*
 * The percentiles the reports print, in percent: fio's 17 default clat
 * percentiles (1, 5, 10, 20, ..., 99.99), so that the JSON has fio's keys.
 */
#define PERF_NR_PCT 17
extern const double perf_pct_list[PERF_NR_PCT];

/*
 * fio's latency buckets (the JSON's latency_ns / latency_us / latency_ms,
 * the text's "lat (nsec)" lines): 10 in ns, 10 in us, 12 in ms, in this
 * order. Bucket i holds the values below perf_fio_lat_edge[i] (ns) and at
 * or above the edge before it; the last one is unbounded (">=2000" ms).
 */
#define PERF_FIO_LAT_N 10
#define PERF_FIO_LAT_U 10
#define PERF_FIO_LAT_M 12
#define PERF_FIO_LAT_NR (PERF_FIO_LAT_N + PERF_FIO_LAT_U + PERF_FIO_LAT_M)
extern const uint64_t perf_fio_lat_edge[PERF_FIO_LAT_NR];
/* The bucket labels as fio writes them ("2", ..., "1000", ">=2000"). */
extern const char *const perf_fio_lat_label[PERF_FIO_LAT_NR];

/* Empty @h. */
void perf_hist_init(struct perf_hist *h);

/*
 * Bucket index of value @v, without branches: with s = the bit length of
 * @v less 8 (0 for values below 256), the index is s * 128 + (v >> s);
 * values from 2^38 on share the last bucket.
 */
static inline unsigned int perf_hist_index(uint64_t v)
{
	int s = 64 - __builtin_clzll(v | 1) - (PERF_HIST_SUB_BITS + 1);
	uint64_t i;

	s = s < 0 ? 0 : s;
	i = ((uint64_t)s << PERF_HIST_SUB_BITS) + (v >> s);
	return i < PERF_HIST_BUCKETS ? (unsigned int)i : PERF_HIST_BUCKETS - 1;
}

/*
 * Record one value (ns) but not its count (the caller adds a batch's
 * count to @n at once). Constant time, no allocation.
 */
static inline void perf_hist_add_uncounted(struct perf_hist *h, uint64_t v)
{
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += v;
	h->sumsq += (unsigned __int128)v * v;
	h->bucket[perf_hist_index(v)]++;
}

/* Record one value (ns). */
static inline void perf_hist_add(struct perf_hist *h, uint64_t v)
{
	h->n++;
	perf_hist_add_uncounted(h, v);
}

/* Smallest and largest value bucket @idx holds. */
void perf_hist_bucket_range(unsigned int idx, uint64_t *lo, uint64_t *hi);

/* Add everything in @src to @dst. */
void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src);

/* Exact mean, and sample standard deviation (n - 1); 0 when undefined. */
double perf_hist_mean(const struct perf_hist *h);
double perf_hist_stddev(const struct perf_hist *h);

/* @h's count, min, max, sum and sum of squares as a perf_stat. */
void perf_hist_stat(const struct perf_hist *h, struct perf_stat *s);

/*
 * 1-based rank of percentile @pct among @n sorted values, as fio and the
 * nearest-rank method define it: ceil(pct / 100 * n), at least 1.
 */
uint64_t perf_pct_rank(double pct, uint64_t n);

/*
 * Estimate percentile @pct (0..100) in ns: the midpoint of the bucket
 * holding the value of rank perf_pct_rank(), clamped to [min, max].
 * Returns 0 for an empty histogram.
 */
uint64_t perf_hist_percentile(const struct perf_hist *h, double pct);

/* Several percentiles in one pass; @pcts ascending. */
void perf_hist_percentiles(const struct perf_hist *h, const double *pcts,
			   unsigned int n, uint64_t *out);

/*
 * Add @h's values per fio latency bucket into @out (counts, not reset).
 * Each histogram bucket counts where its reported value (the midpoint, as
 * for the percentiles) falls, so a value within 0.4 % of a fio edge may
 * land in the neighbouring fio bucket.
 */
void perf_hist_fio_lat(const struct perf_hist *h, double out[PERF_FIO_LAT_NR]);

#endif /* NVQ_PERF_HISTOGRAM_H */
