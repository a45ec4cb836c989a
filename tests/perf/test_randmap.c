/* SPDX-License-Identifier: MIT */
/* --verify's random map: each pass a permutation of [0, n) (every block
 * once), another order each pass and seed, the same for the same ones. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "randmap.h"

/* Pass @pass of an @n-element map from @seed is a permutation; returns
 * how many elements sit where they were (the identity has n). */
static uint64_t check_pass(uint64_t n, uint64_t seed, uint64_t pass,
			   uint64_t *order)
{
	struct perf_randmap m;
	uint8_t *seen = calloc(n, 1);
	uint64_t i, fixed = 0;

	CHECK(seen);
	perf_randmap_init(&m, n, seed);
	for (i = 0; i < n; i++) {
		uint64_t v = perf_randmap_at(&m, pass, i);

		if (v >= n || seen[v])
			check_failed(__FILE__, __LINE__, "permutation",
				     "n %llu: element %llu is %llu%s",
				     (unsigned long long)n,
				     (unsigned long long)i,
				     (unsigned long long)v,
				     v < n ? ", seen before" : "");
		seen[v] = 1;
		fixed += v == i;
		if (order)
			order[i] = v;
		/* no state: the same index gives the same element again */
		CHECK_EQ(perf_randmap_at(&m, pass, i), v);
	}
	free(seen);
	return fixed;
}

int main(void)
{
	static const uint64_t sizes[] = {
		1, 2, 3, 4, 5, 7, 16, 17, 100, 255, 256, 1000, 4097, 65537
	};
	static uint64_t a[65537], b[65537];
	struct perf_randmap m;
	unsigned int s;
	uint64_t i, diff;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint64_t n = sizes[s];

		check_pass(n, 1, 0, a);
		check_pass(n, 1, 1, b);
		check_pass(n, 2, 0, NULL);
		check_pass(n, 1, 12345, NULL);
		if (n < 100)
			continue;
		/* shuffled, not the identity nor a rotation of it */
		CHECK(check_pass(n, 7, 3, NULL) < n / 10);
		for (i = 1, diff = 0; i < n; i++)
			diff += a[i] != (a[i - 1] + 1) % n;
		CHECK(diff > n / 2);
		/* the next pass goes another way */
		for (i = 0, diff = 0; i < n; i++)
			diff += a[i] != b[i];
		CHECK(diff > n / 2);
	}

	/* Replay: the same seed and pass give the same order. */
	check_pass(1000, 99, 4, a);
	check_pass(1000, 99, 4, b);
	CHECK(!memcmp(a, b, 1000 * sizeof(a[0])));
	check_pass(1000, 98, 4, b);
	CHECK(memcmp(a, b, 1000 * sizeof(a[0])));

	/*
	 * Huge ranges (a namespace of 2^40 or 2^64 - 1 blocks): in range and
	 * no repeats among the first elements.
	 */
	perf_randmap_init(&m, 1ull << 40, 5);
	for (i = 0; i < 4096; i++) {
		a[i] = perf_randmap_at(&m, 0, i);
		CHECK(a[i] < 1ull << 40);
	}
	perf_randmap_init(&m, UINT64_MAX, 5);
	for (i = 0; i < 4096; i++) {
		b[i] = perf_randmap_at(&m, 0, i);
		CHECK(b[i] < UINT64_MAX);
	}
	for (i = 0; i < 4096; i++) {
		uint64_t k;

		for (k = i + 1; k < 4096; k++)
			CHECK(a[i] != a[k] && b[i] != b[k]);
	}
	return T_EXIT_PASS;
}
