/* SPDX-License-Identifier: MIT */
/* The emulator's leaf utilities (util.c): errors and the clock. */
#ifndef NVQ_EMU_UTIL_H
#define NVQ_EMU_UTIL_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define emu_likely(x) __builtin_expect(!!(x), 1)
#define emu_unlikely(x) __builtin_expect(!!(x), 0)

/* Record a message for the calling thread (nvq_emu_errmsg()); returns
 * @err. */
int emu_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Monotonic clock in nanoseconds. */
uint64_t emu_now(void);

#pragma GCC visibility pop

#endif /* NVQ_EMU_UTIL_H */
