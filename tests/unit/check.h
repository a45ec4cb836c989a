/* SPDX-License-Identifier: MIT */
/* The unit tests' assertions: print where and what, then exit non-zero. */
#ifndef NVQ_TEST_CHECK_H
#define NVQ_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* Fail the test if @cond is false. */
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* Fail the test if integers @a != @b, printing both values. */
#define CHECK_EQ(a, b)                                              \
	do {                                                        \
		unsigned long long a_ = (unsigned long long)(a);    \
		unsigned long long b_ = (unsigned long long)(b);    \
		if (a_ != b_) {                                     \
			fprintf(stderr,                             \
				"%s:%d: CHECK_EQ failed: %s == %s " \
				"(%#llx vs %#llx, %lld vs %lld)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_, \
				(long long)a_, (long long)b_);      \
			exit(1);                                    \
		}                                                   \
	} while (0)

#endif /* NVQ_TEST_CHECK_H */
