/* SPDX-License-Identifier: MIT */
/*
 * Histogram accuracy: percentiles from the log-linear histogram against
 * exact percentiles of the sorted data (same nearest-rank definition), on
 * uniform, log-uniform (1 ns .. 100 s), lognormal-ish and bimodal data.
 * Every percentile must be within 1 % relative error; count, min, max,
 * mean and stddev must match the exact values.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "histogram.h"
#include "result.h"

#define N 200000

static uint64_t rng = 0x1234567;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unit(void)
{
	return ((next() >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(unit())) * cos(2 * M_PI * unit());
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t data[N];
static struct perf_hist h, h1, h2;

static void check_set(const char *name, unsigned int n)
{
	double mean = 0, var = 0, worst = 0;
	uint64_t sorted_min, sorted_max;
	unsigned int i;
	double p;

	perf_hist_init(&h);
	perf_hist_init(&h1);
	perf_hist_init(&h2);
	for (i = 0; i < n; i++) {
		perf_hist_add(&h, data[i]);
		perf_hist_add(i % 3 ? &h1 : &h2, data[i]);
		mean += (double)data[i];
	}
	mean /= n;
	for (i = 0; i < n; i++)
		var += ((double)data[i] - mean) * ((double)data[i] - mean);
	var /= n - 1;
	qsort(data, n, sizeof(data[0]), cmp_u64);
	sorted_min = data[0];
	sorted_max = data[n - 1];

	CHECK_EQ(h.n, n);
	CHECK_EQ(h.min, sorted_min);
	CHECK_EQ(h.max, sorted_max);
	CHECK(fabs(perf_hist_mean(&h) - mean) <= 1e-9 * mean);
	CHECK(fabs(perf_hist_stddev(&h) - sqrt(var)) <= 1e-6 * sqrt(var));

	/* The list the reports use, and a fine sweep. */
	for (i = 0; i < PERF_NR_PCT; i++) {
		uint64_t exact = data[perf_pct_rank(perf_pct_list[i], n) - 1];
		uint64_t est = perf_hist_percentile(&h, perf_pct_list[i]);
		double rel = fabs((double)est - (double)exact) / (double)exact;

		if (rel >= 0.01)
			fprintf(stderr, "%s: p%g exact %llu est %llu\n", name,
				perf_pct_list[i], (unsigned long long)exact,
				(unsigned long long)est);
		CHECK(rel < 0.01);
	}
	for (p = 0.5; p < 100; p += 0.5) {
		uint64_t exact = data[perf_pct_rank(p, n) - 1];
		uint64_t est = perf_hist_percentile(&h, p);
		double rel = fabs((double)est - (double)exact) / (double)exact;

		if (rel > worst)
			worst = rel;
	}
	if (worst >= 0.01)
		fprintf(stderr, "%s: worst relative error %.4f\n", name, worst);
	CHECK(worst < 0.01);

	/* Merging the two halves gives the same histogram. */
	perf_hist_merge(&h1, &h2);
	CHECK_EQ(h1.n, h.n);
	CHECK_EQ(h1.min, h.min);
	CHECK_EQ(h1.max, h.max);
	CHECK(h1.sum == h.sum && h1.sumsq == h.sumsq);
	CHECK(!memcmp(h1.bucket, h.bucket, sizeof(h.bucket)));
	printf("%-12s n=%u worst percentile error %.4f %%\n", name, n,
	       worst * 100);
}

static void test_layout(void)
{
	uint64_t lo, hi, prev_hi = 0;
	unsigned int i;

	/* Buckets tile [0, 2^38) without gaps or overlaps. */
	for (i = 0; i < PERF_HIST_BUCKETS; i++) {
		perf_hist_bucket_range(i, &lo, &hi);
		if (i)
			CHECK_EQ(lo, prev_hi + 1);
		CHECK(hi >= lo);
		/* Width at most 1/128 of the bucket's lower bound. */
		CHECK(hi - lo + 1 <= 1 || (hi - lo + 1) * 128 <= lo);
		CHECK_EQ(perf_hist_index(lo), i);
		CHECK_EQ(perf_hist_index(hi), i);
		prev_hi = hi;
	}
	CHECK_EQ(prev_hi, (1ull << PERF_HIST_MAX_BITS) - 1);
	/* Beyond the range: last bucket, but max stays exact. */
	CHECK_EQ(perf_hist_index(1ull << 40), PERF_HIST_BUCKETS - 1);
	CHECK_EQ(perf_hist_index(UINT64_MAX), PERF_HIST_BUCKETS - 1);
	perf_hist_init(&h);
	perf_hist_add(&h, 1ull << 40);
	CHECK_EQ(h.max, 1ull << 40);
	CHECK_EQ(perf_hist_percentile(&h, 50), 1ull << 40);

	/* Empty histogram. */
	perf_hist_init(&h);
	CHECK_EQ(perf_hist_percentile(&h, 99), 0);
	CHECK(perf_hist_mean(&h) == 0 && perf_hist_stddev(&h) == 0);

	/* Nearest rank: p99.99 of 10000 values is the 9999th. */
	CHECK_EQ(perf_pct_rank(99.99, 10000), 9999);
	CHECK_EQ(perf_pct_rank(50, 1), 1);
	CHECK_EQ(perf_pct_rank(1, 100), 1);
	CHECK_EQ(perf_pct_rank(1, 101), 2);
	CHECK_EQ(perf_pct_rank(100, 7), 7);
	CHECK_EQ(perf_pct_rank(0, 7), 1);
}

/* fio's io_u_mark_lat_{nsec,usec,msec}(), the bucket of @ns. */
static unsigned int fio_lat_bucket(uint64_t ns)
{
	static const uint64_t edge[] = { 2,   4,   10,	20,  50,
					 100, 250, 500, 750, 1000 };
	uint64_t v = ns < 1000 ? ns : ns < 1000000 ? ns / 1000 : ns / 1000000;
	unsigned int base = ns < 1000 ? 0 : ns < 1000000 ? 10 : 20, i;

	for (i = 0; i < 10; i++)
		if (v < edge[i])
			return base + i;
	return ns >= 2000000000ull ? 31 : 30;
}

/*
 * The fio latency buckets: at their edges (where histogram buckets are
 * exact or narrower than the edge's neighbourhood) each value lands
 * where fio's own switch puts it; counts add up.
 */
static void test_fio_lat(void)
{
	static const uint64_t v[] = {
		0,	   1,	       2,	   3,	       9,
		10,	   249,	       250,	   499,	       500,
		999,	   1000,       1999,	   2000,       3999,
		4000,	   99000,      100000,	   1500000,    2500000,
		999000000, 1000000000, 1999000000, 2000000000, 300000000000ull
	};
	double out[PERF_FIO_LAT_NR];
	unsigned int i, k;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(out, 0, sizeof(out));
		perf_hist_init(&h);
		perf_hist_add(&h, v[i]);
		perf_hist_fio_lat(&h, out);
		for (k = 0; k < PERF_FIO_LAT_NR; k++)
			CHECK(out[k] == (k == fio_lat_bucket(v[i]) ? 1 : 0));
	}
	memset(out, 0, sizeof(out));
	perf_hist_init(&h);
	for (i = 0; i < N; i++)
		perf_hist_add(&h, data[i]);
	perf_hist_fio_lat(&h, out);
	{
		double sum = 0;

		for (k = 0; k < PERF_FIO_LAT_NR; k++)
			sum += out[k];
		CHECK(sum == N);
	}
}

/* fio's io_u_mark_depth() and __io_u_mark_map() switches. */
static void test_depth_buckets(void)
{
	unsigned int d;

	for (d = 0; d < 300; d++) {
		unsigned int lvl = d >= 64 ? 6 :
				   d >= 32 ? 5 :
				   d >= 16 ? 4 :
				   d >= 8  ? 3 :
				   d >= 4  ? 2 :
				   d >= 2  ? 1 :
					     0;
		unsigned int map = d > 64 ? 6 :
				   d > 32 ? 5 :
				   d > 16 ? 4 :
				   d > 8  ? 3 :
				   d > 4  ? 2 :
				   d > 0  ? 1 :
					    0;

		CHECK_EQ(perf_depth_level_idx(d), lvl);
		CHECK_EQ(perf_depth_batch_idx(d), map);
	}
}

int main(void)
{
	unsigned int i;

	test_layout();
	test_depth_buckets();

	for (i = 0; i < N; i++)
		data[i] = 1000 + next() % 2000000;
	check_set("uniform", N);

	/* 1 ns .. 100 s, evenly per decade. */
	for (i = 0; i < N; i++)
		data[i] = (uint64_t)llround(pow(10, unit() * 11));
	check_set("log-uniform", N);
	test_fio_lat();

	for (i = 0; i < N; i++)
		data[i] = (uint64_t)llround(exp(log(50000) + normal()));
	check_set("lognormal", N);

	for (i = 0; i < N; i++) {
		double v = i % 10 ? 10000 + 1000 * normal() :
				    5000000 + 500000 * normal();

		data[i] = v < 1 ? 1 : (uint64_t)llround(v);
	}
	check_set("bimodal", N);

	/* Small exact values. */
	for (i = 0; i < 1000; i++)
		data[i] = 1 + i % 255;
	check_set("small", 1000);

	/* Identical values: stddev exactly 0. */
	for (i = 0; i < 1000; i++)
		data[i] = 123456;
	check_set("constant", 1000);
	CHECK(perf_hist_stddev(&h) == 0);
	return T_EXIT_PASS;
}
