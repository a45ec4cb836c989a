/* SPDX-License-Identifier: MIT */
/*
 * Assertions and small helpers of the integration tests: a failed check
 * prints file:line, the expression, the values and nvq_errmsg(), then
 * exits non-zero.
 */
#ifndef NVQ_ITEST_CHECK_H
#define NVQ_ITEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvq/nvq.h"

/* Fail the test if @cond is false. */
#define CHECK(cond)                                                           \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr,                                       \
				"%s:%d: CHECK failed: %s (nvq_errmsg: %s)\n", \
				__FILE__, __LINE__, #cond, nvq_errmsg());     \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* Fail the test if integers @a != @b, printing both values. */
#define CHECK_EQ(a, b)                                                 \
	do {                                                           \
		long long a_ = (long long)(a);                         \
		long long b_ = (long long)(b);                         \
		if (a_ != b_) {                                        \
			fprintf(stderr,                                \
				"%s:%d: CHECK_EQ failed: %s == %s "    \
				"(%lld vs %lld, %#llx vs %#llx) "      \
				"(nvq_errmsg: %s)\n",                  \
				__FILE__, __LINE__, #a, #b, a_, b_,    \
				(unsigned long long)a_,                \
				(unsigned long long)b_, nvq_errmsg()); \
			exit(1);                                       \
		}                                                      \
	} while (0)

/* Fail unless the nvq call @expr returns 0. */
#define CHECK_OK(expr) CHECK_EQ((expr), 0)

/* Fail unless the thread's error message contains @needle. */
/* The bring-up notes of a controller that opened contain @needle. */
#define CHECK_NOTES(c, needle)                                               \
	do {                                                                 \
		if (!strstr(nvq_ctrl_notes(c), (needle))) {                  \
			fprintf(stderr, "%s:%d: notes \"%s\" lack \"%s\"\n", \
				__FILE__, __LINE__, nvq_ctrl_notes(c),       \
				(needle));                                   \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define CHECK_MSG(needle)                                                    \
	do {                                                                 \
		if (!strstr(nvq_errmsg(), (needle))) {                       \
			fprintf(stderr,                                      \
				"%s:%d: message \"%s\" lacks \"%s\"\n",      \
				__FILE__, __LINE__, nvq_errmsg(), (needle)); \
			exit(1);                                             \
		}                                                            \
	} while (0)

/* Open @uri with @opts (NULL: defaults) or fail the test. */
static inline struct nvq_ctrl *open_or_die(const char *uri,
					   const struct nvq_opts *opts)
{
	struct nvq_ctrl *c = NULL;
	int rc = nvq_open(uri, opts, &c);

	if (rc || !c) {
		fprintf(stderr, "nvq_open(%s) failed: %d %s\n", uri, rc,
			nvq_errmsg());
		exit(1);
	}
	return c;
}

/* Deterministic PRNG (splitmix64) so failures reproduce. */
static inline uint64_t rnd_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill @len bytes with a pattern derived from @seed. */
static inline void fill_pattern(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t s = seed, v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			v = rnd_next(&s);
		p[i] = (unsigned char)(v >> (8 * (i & 7)));
	}
}

/* A callback that counts its calls and records the last completion. */
struct cb_count {
	int calls;
	int err;
	uint16_t status;
};

static inline void count_cb(void *arg, const struct nvq_cpl *cpl)
{
	struct cb_count *c = arg;

	c->err = cpl->err;
	c->status = cpl->status;
	/* Release: a thread that sees the count sees the rest. */
	__atomic_fetch_add(&c->calls, 1, __ATOMIC_RELEASE);
}

/* Callbacks counted so far (acquire: pairs with count_cb()). */
static inline int calls_of(struct cb_count *c)
{
	return __atomic_load_n(&c->calls, __ATOMIC_ACQUIRE);
}

/* Reap @q until @c has seen @n calls (POLL or WAIT mode queues). */
static inline void reap_until(struct nvq_queue *q, struct cb_count *c, int n)
{
	while (calls_of(c) < n)
		CHECK(nvq_wait(q, 1, 10000) >= 0);
}

#endif /* NVQ_ITEST_CHECK_H */
