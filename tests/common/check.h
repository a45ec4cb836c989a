/* SPDX-License-Identifier: MIT */
/*
 * The assertions of every test in tests/. A failed check prints
 * file:line, the expression, the values and nvq_errmsg() (the library's
 * last message on this thread, often the reason), then ends the test with
 * T_EXIT_FAIL. Exit statuses are the ones meson reads (as liburing's tests
 * use them): 0 pass, 1 fail, 77 skip.
 *
 * Header-only on purpose: the tests link very different things (the
 * static archive, libnvq.so, the emulator harness alone, the tools' JSON
 * writer), and the vfio guest programs are rebuilt by the QEMU harness; a
 * header asks nothing of any link line. The only symbol it needs is
 * nvq_errmsg().
 */
#ifndef NVQ_TESTS_CHECK_H
#define NVQ_TESTS_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvq/nvq.h"

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/*
 * Run once before a failed check exits: tests that change real files
 * (PM QoS) restore them here, tests with temporary trees remove them. One
 * per process: a weak definition in every object that includes this
 * header, which the linker merges into one variable.
 */
__attribute__((weak)) void (*check_cleanup)(void);

/* End the test as failed, after the cleanup hook (taken first, so that a
 * check failing inside the cleanup does not recurse). */
static inline __attribute__((noreturn)) void check_exit_fail(void)
{
	void (*fn)(void) = check_cleanup;

	check_cleanup = NULL;
	if (fn)
		fn();
	exit(T_EXIT_FAIL);
}

/* Print "@file:@line: @what failed: @expr" plus the formatted values and
 * the library's message, then fail the test. */
static inline __attribute__((noreturn, format(printf, 4, 5))) void
check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
{
	const char *msg = nvq_errmsg();
	va_list ap;

	fprintf(stderr, "%s:%d: check failed: %s", file, line, expr);
	if (fmt) {
		fputs(" (", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc(')', stderr);
	}
	fprintf(stderr, " [nvq_errmsg: \"%s\"]\n", msg ? msg : "");
	fflush(stderr);
	check_exit_fail();
}

/* Fail the test if @cond is false. */
#define CHECK(cond)                                                    \
	do {                                                           \
		if (!(cond))                                           \
			check_failed(__FILE__, __LINE__, #cond, NULL); \
	} while (0)

/* Integers @a == @b (compared as 64-bit; both printed in decimal and hex). */
#define CHECK_EQ(a, b)                                                       \
	do {                                                                 \
		long long a_ = (long long)(a);                               \
		long long b_ = (long long)(b);                               \
		if (a_ != b_)                                                \
			check_failed(__FILE__, __LINE__, #a " == " #b,       \
				     "%lld vs %lld, %#llx vs %#llx", a_, b_, \
				     (unsigned long long)a_,                 \
				     (unsigned long long)b_);                \
	} while (0)

/* The call @expr returns 0 (a negative errno is printed by name). */
#define CHECK_OK(expr)                                                         \
	do {                                                                   \
		long long r_ = (long long)(expr);                              \
		if (r_ != 0)                                                   \
			check_failed(__FILE__, __LINE__, #expr " == 0",        \
				     "returned %lld, %#llx: %s", r_,           \
				     (unsigned long long)r_,                   \
				     r_<0 && r_> - 4096 ? strerror((int)-r_) : \
							  "not an errno");     \
	} while (0)

/* String @hay contains @needle. */
#define CHECK_CONTAINS(hay, needle)                             \
	do {                                                    \
		const char *h_ = (hay), *n_ = (needle);         \
		if (!h_ || !strstr(h_, n_))                     \
			check_failed(__FILE__, __LINE__,        \
				     #hay " contains " #needle, \
				     "\"%s\" lacks \"%s\"",     \
				     h_ ? h_ : "(null)", n_);   \
	} while (0)

/* The thread's error message (nvq_errmsg()) contains @needle. */
#define CHECK_MSG(needle) CHECK_CONTAINS(nvq_errmsg(), needle)

/* The bring-up notes of controller @c (nvq_ctrl_notes()) contain @needle. */
#define CHECK_NOTES(c, needle) CHECK_CONTAINS(nvq_ctrl_notes(c), needle)

/* Strings @a and @b are equal (NULL equals only NULL). */
#define CHECK_STREQ(a, b)                                                    \
	do {                                                                 \
		const char *a_ = (a), *b_ = (b);                             \
		if (a_ != b_ && (!a_ || !b_ || strcmp(a_, b_)))              \
			check_failed(__FILE__, __LINE__, #a " == " #b,       \
				     "\"%s\" vs \"%s\"", a_ ? a_ : "(null)", \
				     b_ ? b_ : "(null)");                    \
	} while (0)

/* The first @len bytes at @a and @b are equal (the first difference is
 * printed). */
#define CHECK_MEMEQ(a, b, len)                                                 \
	do {                                                                   \
		const unsigned char *a_ = (const void *)(a);                   \
		const unsigned char *b_ = (const void *)(b);                   \
		size_t l_ = (len), i_;                                         \
		for (i_ = 0; i_ < l_ && a_[i_] == b_[i_]; i_++)                \
			;                                                      \
		if (i_ < l_)                                                   \
			check_failed(__FILE__, __LINE__,                       \
				     #a " == " #b " for " #len " bytes",       \
				     "first difference at byte %zu: %#04x vs " \
				     "%#04x",                                  \
				     i_, a_[i_], b_[i_]);                      \
	} while (0)

/* End the test as skipped (meson shows SKIP) and say why. */
#define SKIP(...)                             \
	do {                                  \
		printf("SKIP: " __VA_ARGS__); \
		putchar('\n');                \
		fflush(stdout);               \
		exit(T_EXIT_SKIP);            \
	} while (0)

#endif /* NVQ_TESTS_CHECK_H */
