/* SPDX-License-Identifier: MIT */
/*
 * Helpers more than one suite uses: reproducible random numbers, data
 * patterns to verify I/O with, temporary files and directories, and the
 * driver-level chores of the integration and vfio tests (open or fail,
 * counting callbacks). Header-only for the same reason as check.h: nothing
 * here is big, and a header needs no change to any test's link line.
 */
#ifndef NVQ_TESTS_TESTUTIL_H
#define NVQ_TESTS_TESTUTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/*
 * Deterministic PRNG (splitmix64): any 64-bit state works, 0 included.
 * A test that draws random numbers prints its seed (test_seed()), so that
 * a failure reproduces.
 */
static inline uint64_t test_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The seed of @name's random draws: @def, or NVQ_TEST_SEED from the
 * environment to replay another run. Printed either way.
 */
static inline uint64_t test_seed(const char *name, uint64_t def)
{
	const char *env = getenv("NVQ_TEST_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0) : def;

	printf("%s: seed %#llx (NVQ_TEST_SEED=%#llx replays it)\n", name,
	       (unsigned long long)seed, (unsigned long long)seed);
	return seed;
}

/* Fill @len bytes with the pattern of @seed: test_rand()'s stream, byte by
 * byte, so that different seeds (blocks, rounds) never look alike. */
static inline void fill_pattern(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t s = seed, v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			v = test_rand(&s);
		p[i] = (unsigned char)(v >> (8 * (i & 7)));
	}
}

/* The directory temporary files go to: $TMPDIR, else /tmp. */
static inline const char *test_tmpdir(void)
{
	const char *d = getenv("TMPDIR");

	return d && *d ? d : "/tmp";
}

/*
 * Create an empty temporary file "nvq-@tag-XXXXXX" in test_tmpdir(); its
 * path goes to @path (@len bytes). Returns the open descriptor; fails the
 * test when the file cannot be made.
 */
static inline int test_tmpfile(char *path, size_t len, const char *tag)
{
	int fd;

	snprintf(path, len, "%s/nvq-%s-XXXXXX", test_tmpdir(), tag);
	fd = mkstemp(path);
	if (fd < 0)
		check_failed(__FILE__, __LINE__, "mkstemp", "%s: %s", path,
			     strerror(errno));
	return fd;
}

/* Create a temporary directory "nvq-@tag-XXXXXX" in test_tmpdir(), path
 * to @path; fails the test when it cannot be made. */
static inline void test_mkdtemp(char *path, size_t len, const char *tag)
{
	snprintf(path, len, "%s/nvq-%s-XXXXXX", test_tmpdir(), tag);
	if (!mkdtemp(path))
		check_failed(__FILE__, __LINE__, "mkdtemp", "%s: %s", path,
			     strerror(errno));
}

/* Open @uri with @opts (NULL: defaults) or fail the test. */
static inline struct nvq_ctrl *open_or_die(const char *uri,
					   const struct nvq_opts *opts)
{
	struct nvq_ctrl *c = NULL;
	int rc = nvq_open(uri, opts, &c);

	if (rc || !c)
		check_failed(__FILE__, __LINE__, "nvq_open()", "%s: %d", uri,
			     rc);
	return c;
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

#endif /* NVQ_TESTS_TESTUTIL_H */
