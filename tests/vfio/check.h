/* SPDX-License-Identifier: MIT */
/*
 * Assertions of the vfio tests (host unit tests and the guest programs):
 * a failed check prints file:line, the expression, the values and
 * nvq_errmsg(), then exits 1.
 */
#ifndef NVQ_VFIO_TEST_CHECK_H
#define NVQ_VFIO_TEST_CHECK_H

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

/* Fail unless the calling thread's nvq message contains @needle. */
#define CHECK_MSG(needle)                                                    \
	do {                                                                 \
		if (!strstr(nvq_errmsg(), (needle))) {                       \
			fprintf(stderr,                                      \
				"%s:%d: message \"%s\" lacks \"%s\"\n",      \
				__FILE__, __LINE__, nvq_errmsg(), (needle)); \
			exit(1);                                             \
		}                                                            \
	} while (0)

#endif /* NVQ_VFIO_TEST_CHECK_H */
