/* SPDX-License-Identifier: MIT */
/* Tiny assertion helpers for the nvq-perf tests. */
#ifndef NVQ_PERF_TEST_CHECK_H
#define NVQ_PERF_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures;

/* Report a failed expression with file:line and carry on. */
#define CHECK(expr)                                                            \
	do {                                                                   \
		if (!(expr)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #expr);                              \
			check_failures++;                                      \
		}                                                              \
	} while (0)

/* As CHECK, printing both unsigned values. */
#define CHECK_EQ_U(a, b)                                                     \
	do {                                                                 \
		unsigned long long a_ = (a), b_ = (b);                       \
		if (a_ != b_) {                                              \
			fprintf(stderr,                                      \
				"%s:%d: CHECK failed: %s == %s (%llu vs "    \
				"%llu, 0x%llx vs 0x%llx)\n",                 \
				__FILE__, __LINE__, #a, #b, a_, b_, a_, b_); \
			check_failures++;                                    \
		}                                                            \
	} while (0)

/* Exit status of the test. */
#define CHECK_DONE()                                            \
	do {                                                    \
		if (check_failures) {                           \
			fprintf(stderr, "%d check(s) failed\n", \
				check_failures);                \
			return 1;                               \
		}                                               \
		return 0;                                       \
	} while (0)

#endif /* NVQ_PERF_TEST_CHECK_H */
