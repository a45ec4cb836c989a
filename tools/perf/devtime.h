/* SPDX-License-Identifier: MIT */
/*
 * Device time versus host overhead on the emulated controller. With the
 * emulator's stamp=1 (a measurement aid) every I/O CQE carries the low 32
 * bits of CLOCK_MONOTONIC at posting in DW1 (struct nvq_cpl.dw1). The
 * callback's own clock read then splits the completion latency:
 *   host overhead = callback time - posted time (mod 2^32): interrupt or
 *                   poll pickup, reaping, scheduling of the callback;
 *   device time   = clat - host overhead: what the media model and the
 *                   device thread took, from the submit call's return.
 * 32 bits of nanoseconds wrap every 4.3 s, far above any completion time.
 */
#ifndef NVQ_PERF_DEVTIME_H
#define NVQ_PERF_DEVTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The URI to open for @uri so that completions carry posting times:
 * "emu:..." gains ",stamp=1" unless it names stamp= itself. *@stamped says
 * whether DW1 will hold stamps (false for other transports and for an
 * explicit stamp=0). Returns @buf, or @uri when nothing changes; NULL if
 * @len is too small.
 */
const char *perf_stamp_uri(const char *uri, char *buf, size_t len,
			   bool *stamped);

/*
 * Split one I/O: @t0 submit call start, @t1 its return, @t2 callback
 * time (perf_now() ns), @dw1 the stamp. Fills *@host and *@dev (ns);
 * returns false when the stamp cannot be a posting time of this I/O
 * (before @t0 or after @t2).
 */
bool perf_devtime_split(uint64_t t0, uint64_t t1, uint64_t t2, uint32_t dw1,
			uint64_t *host, uint64_t *dev);

#endif /* NVQ_PERF_DEVTIME_H */
