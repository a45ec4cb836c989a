/* SPDX-License-Identifier: MIT */
/* The keyed permutation of randmap.h. */
#include "randmap.h"

#define ROUNDS 4

/* A 64-bit finaliser (splitmix64's): every input bit moves every output
 * bit, which is all a Feistel round function needs. */
static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void perf_randmap_init(struct perf_randmap *m, uint64_t n, uint64_t seed)
{
	unsigned int bits = 2;

	m->n = n ? n : 1;
	m->key = mix(seed);
	while (bits < 64 && (m->n - 1) >> bits)
		bits += 2;
	m->half = bits / 2;
}

/* One pass of the network over the 2 * half bit word @x. */
static uint64_t feistel(const struct perf_randmap *m, const uint64_t *rk,
			uint64_t x)
{
	const uint64_t mask = (1ull << m->half) - 1;
	uint64_t l = x >> m->half, r = x & mask;
	unsigned int i;

	for (i = 0; i < ROUNDS; i++) {
		uint64_t t = r;

		r = l ^ (mix(r ^ rk[i]) & mask);
		l = t;
	}
	return (l << m->half) | r;
}

uint64_t perf_randmap_at(const struct perf_randmap *m, uint64_t pass,
			 uint64_t i)
{
	uint64_t rk[ROUNDS], k = mix(m->key ^ mix(pass));
	unsigned int r;

	for (r = 0; r < ROUNDS; r++)
		rk[r] = k = mix(k + r);
	/*
	 * Cycle walking: the network permutes the whole word; following the
	 * cycle of @i to its next element below n permutes [0, n), and the
	 * walk ends because that cycle passes @i itself.
	 */
	do
		i = feistel(m, rk, i);
	while (i >= m->n);
	return i;
}
