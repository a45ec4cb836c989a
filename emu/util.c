// SPDX-License-Identifier: MIT
/*
 * The emulator's small utilities: its per-thread error message and its
 * clock. A leaf: it depends on no other file of the emulator.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "emu.h"
#include "util.h"

static __thread char errbuf[512];

int emu_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

const char *nvq_emu_errmsg(void)
{
	return errbuf;
}

uint64_t emu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
