/* SPDX-License-Identifier: MIT */
/*
 * What benchmarks and tests may ask of the library beyond the public API.
 * Not installed; reachable only by linking the static archives (libnvq.a,
 * or libnvq_bench.a for the single-lock mode).
 */
#ifndef NVQ_BENCH_H
#define NVQ_BENCH_H

#include "nvq/nvq.h"

/* Internal flags for nvq_open_flags(). */
#define NVQ_OPEN_SINGLE_LOCK (1u << 0) /* one lock per queue (benchmark) */

/*
 * nvq_open() with internal flags. NVQ_OPEN_SINGLE_LOCK makes shared queues
 * use one lock for both halves, the baseline of the split-lock benchmark;
 * only the benchmark build of the library (libnvq_bench.a, built with
 * NVQ_BENCH_SINGLE_LOCK) has it, others fail with -EOPNOTSUPP.
 */
int nvq_open_flags(const char *uri, const struct nvq_opts *opts,
		   unsigned int flags, struct nvq_ctrl **ctrl);

#endif /* NVQ_BENCH_H */
