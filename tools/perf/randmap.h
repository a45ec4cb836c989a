/* SPDX-License-Identifier: MIT */
/*
 * fio's random map without its memory: a keyed permutation of [0, n), so
 * that random offsets visit each block exactly once per pass. --verify
 * needs it: a block written twice in one pass is ambiguous to read back
 * (which write landed last?) and a block never written is not checked.
 *
 * A balanced Feistel network on the smallest even number of bits that
 * holds n - 1 (a bijection whatever its round function), with cycle
 * walking to stay below n: the domain is less than 4n, so a draw takes
 * fewer than 4 rounds of the network on average. No state but the key:
 * index i of pass p is perf_randmap_at(m, p, i), at any time, in any
 * thread, and the read-back replays it exactly.
 */
#ifndef NVQ_PERF_RANDMAP_H
#define NVQ_PERF_RANDMAP_H

#include <stdint.h>

struct perf_randmap {
	uint64_t n; /* size of the permuted range, >= 1 */
	uint64_t key; /* the seed's */
	unsigned int half; /* bits in each half of the network's word */
};

/* A permutation of [0, @n) (@n >= 1) drawn from @seed. */
void perf_randmap_init(struct perf_randmap *m, uint64_t n, uint64_t seed);

/*
 * Element @i (< m->n) of pass @pass: for each pass a different order,
 * each element of [0, n) once.
 */
uint64_t perf_randmap_at(const struct perf_randmap *m, uint64_t pass,
			 uint64_t i);

#endif /* NVQ_PERF_RANDMAP_H */
