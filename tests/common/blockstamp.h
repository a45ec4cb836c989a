/* SPDX-License-Identifier: MIT */
/*
 * Self-describing blocks for crash and soak checks: a block written as
 * generation @gen of logical block @lba carries both in its header, a
 * body derived from them, and a checksum over everything before it, so
 * that a reader tells which write it sees, a torn or corrupted block
 * (bad checksum), and a block that landed at the wrong LBA (good checksum,
 * another LBA) apart. Generation 0 is the all-zeroes block (never written,
 * Write Zeroes, Deallocate). Header-only, as check.h (bench/soak.c uses
 * it too).
 *
 *   0  u64 magic    BLOCKSTAMP_MAGIC
 *   8  u64 lba
 *  16  u64 gen      >= 1
 *  24  u64 salt     the run's tag: blocks of another run do not verify
 *  32  ...          body: blockstamp_word(lba, gen, salt, i) per u64
 * -8   u64 sum      blockstamp_sum() of bytes [0, len - 8)
 */
#ifndef NVQ_TESTS_BLOCKSTAMP_H
#define NVQ_TESTS_BLOCKSTAMP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BLOCKSTAMP_MAGIC 0x504d415453515676ull /* "vVQSTAMP" in memory */

enum blockstamp_kind {
	BLOCKSTAMP_ZERO = 0, /* all zeroes: generation 0 */
	BLOCKSTAMP_OK, /* a whole block of this LBA, *gen set */
	BLOCKSTAMP_TORN, /* checksum wrong: torn, corrupted or garbage */
	BLOCKSTAMP_MISPLACED, /* intact, but of another LBA or run */
};

static inline uint64_t blockstamp_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The body's @i-th 64-bit word. */
static inline uint64_t blockstamp_word(uint64_t lba, uint64_t gen,
				       uint64_t salt, uint64_t i)
{
	return blockstamp_mix(lba * 0x9e3779b97f4a7c15ull ^ gen << 20 ^ salt ^
			      i * 0xd6e8feb86659fd93ull);
}

/* Checksum of @n 64-bit words (order matters: a moved word is caught). */
static inline uint64_t blockstamp_sum(const uint64_t *w, size_t n)
{
	uint64_t h = 0x6a09e667f3bcc909ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = blockstamp_mix(h ^ w[i]) + i;
	return h;
}

/* Fill the @len-byte block @buf (8-byte aligned, @len >= 64, a multiple
 * of 8) as generation @gen (>= 1) of @lba. */
static inline void blockstamp_fill(void *buf, size_t len, uint64_t lba,
				   uint64_t gen, uint64_t salt)
{
	uint64_t *w = buf;
	size_t n = len / 8, i;

	w[0] = BLOCKSTAMP_MAGIC;
	w[1] = lba;
	w[2] = gen;
	w[3] = salt;
	for (i = 4; i < n - 1; i++)
		w[i] = blockstamp_word(lba, gen, salt, i);
	w[n - 1] = blockstamp_sum(w, n - 1);
}

/*
 * What the @len-byte block @buf read from @lba is; for BLOCKSTAMP_OK and
 * BLOCKSTAMP_ZERO *@gen is its generation. An intact block is one whose
 * checksum is right and whose body is the one its header names.
 */
static inline enum blockstamp_kind blockstamp_check(const void *buf, size_t len,
						    uint64_t lba, uint64_t salt,
						    uint64_t *gen)
{
	const uint64_t *w = buf;
	size_t n = len / 8, i;

	for (i = 0; i < n && !w[i]; i++)
		;
	if (i == n) {
		*gen = 0;
		return BLOCKSTAMP_ZERO;
	}
	if (w[0] != BLOCKSTAMP_MAGIC || !w[2] ||
	    w[n - 1] != blockstamp_sum(w, n - 1))
		return BLOCKSTAMP_TORN;
	for (i = 4; i < n - 1; i++)
		if (w[i] != blockstamp_word(w[1], w[2], w[3], i))
			return BLOCKSTAMP_TORN;
	if (w[1] != lba || w[3] != salt)
		return BLOCKSTAMP_MISPLACED;
	*gen = w[2];
	return BLOCKSTAMP_OK;
}

#endif /* NVQ_TESTS_BLOCKSTAMP_H */
